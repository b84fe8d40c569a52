"""The flags of a script that plays games (``benchmarks/oracle.py``, ``benchmarks/values.py``),
checked before anything is played: each problem is a ``ValueError`` naming its flag, which the
script prints as its one-line error (status 2)."""

from __future__ import annotations

import os
from pathlib import Path

from spider_env.apps.evaluation.deals import parse_deals
from spider_env.core.variants import Variant, get_variant


def check_games(
    variant: str, deals: str, seed: int, max_steps: int | None, jobs: int
) -> tuple[Variant, list[int]]:
    """The variant and the deals of ``--variant``, ``--deals``, after checking ``--seed`` (0 or
    more), ``--max-steps`` (``None`` or at least 1) and ``--jobs`` (1 or 2: the machine's
    cores)."""
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


def check_writable(flag: str, path: str | None) -> None:
    """Refuse an output ``path`` whose folder cannot be written (before hours of play)."""
    if path and not os.access(Path(path).resolve().parent, os.W_OK):
        raise ValueError(f"{flag}: cannot write {path}: no writable folder there")
