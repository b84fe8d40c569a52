"""The flags of a script that plays games (``research/planner/oracle.py``, ``values.py``),
checked before anything is played: each problem is a ``ValueError`` naming its flag, which the
script prints as its one-line error (status 2)."""

from __future__ import annotations

import os

from spider_env.apps.evaluation.deals import parse_deals
from spider_env.core.checks import ArgumentTypeError, is_int
from spider_env.core.variants import Variant, get_variant


def check_games(
    variant: str, deals: str, seed: int, max_steps: int | None, jobs: int
) -> tuple[Variant, list[int]]:
    """The variant and the deals of ``--variant``, ``--deals``, after checking ``--seed`` (0 or
    more), ``--max-steps`` (``None`` or at least 1) and ``--jobs`` (1 or 2: the machine's
    cores)."""
    for flag, value in (("--jobs", jobs), ("--seed", seed), ("--max-steps", max_steps)):
        if value is None and flag == "--max-steps":
            continue  # no limit given: the registered one
        if not is_int(value):
            raise ArgumentTypeError(f"{flag} must be an int, got {value!r}")
    if jobs not in (1, 2):
        raise ValueError(f"--jobs must be 1 or 2, got {jobs}")
    if seed < 0:
        raise ValueError(f"--seed must be 0 or more, got {seed}")
    if max_steps is not None and max_steps < 1:
        raise ValueError(f"--max-steps must be at least 1, got {max_steps}")
    try:
        v = get_variant(variant)
    except (ValueError, KeyError) as exc:
        raise ValueError(f"--variant: {exc}") from None
    try:
        return v, parse_deals(deals)
    except ValueError as exc:
        raise ValueError(f"--deals: {exc}") from None


def write_problem(path: str) -> str | None:
    """What stops ``path`` from being written as a file (its folder missing or not writable, a
    folder there, no permission), or None: checked before any work, not after hours of play."""
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        return f"cannot write {path}: directory {d} does not exist"
    if os.path.isdir(path):
        return f"cannot write {path}: it is a directory"
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return f"cannot write {path}: permission denied"
    if not os.path.exists(path) and not os.access(d, os.W_OK):
        return f"cannot write {path}: directory {d} is not writable"
    return None


def check_writable(flag: str, path: str | None) -> None:
    """Refuse an output ``path`` (given as ``flag``; None: no output) that
    :func:`write_problem` finds cannot be written."""
    if path is not None and not isinstance(path, str):
        raise TypeError(f"{flag} must be a path (a str), got {path!r}")
    problem = write_problem(path) if path else None
    if problem:
        raise ValueError(f"{flag}: {problem}")
