"""Which deals an evaluation plays: range texts (``"0:1000"``) and lists of deal numbers,
checked before anything is allocated.

Deal numbers are ``0 .. 2**64-1`` (below :data:`spider_env.core.deals.DEAL_NUMBERS`); one
evaluation plays at most :data:`MAX_DEALS` deals (a million: days of play for the fastest
agents, and the per-deal records still fit in memory), so ``--deals 0:100000000000`` is
refused, not materialised.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Sequence

from spider_env.core.checks import is_int
from spider_env.core.deals import DEAL_NUMBERS

MAX_DEALS = 1_000_000
DEALS_HINT = "deals are given like range(100), [3, 7] or a text like '0:1000', '7', '1,5,10:20'"


def _too_many(count: int | str, what: str) -> ValueError:
    return ValueError(
        f"{what} names {count} deals; one evaluation plays at most {MAX_DEALS:,} "
        "(split the range into several evaluations)"
    )


def _range_length(r: range) -> int:
    try:
        return len(r)
    except OverflowError:  # more than sys.maxsize items
        return DEAL_NUMBERS


def parse_deals(text: str) -> list[int]:
    """``"0:1000"`` (start:stop, stop excluded), ``"0:1000:10"`` (with a step), ``"7"``, or a
    comma list of those (``"1,5,10:20"``); at most :data:`MAX_DEALS` deals, each in
    ``0 .. 2**64-1``, none twice. ``ValueError`` saying what is wrong otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("deals must be given like 0:1000 (start:stop), 7, or 1,5,10:20")
    ranges: list[range] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise ValueError(f"empty item in deal list {text!r}")
        pieces = part.split(":")
        if len(pieces) > 3:
            raise ValueError(f"bad deal range {part!r}: use start:stop or start:stop:step")
        nums: list[int] = []
        for p in pieces:
            p = p.strip()
            if not p.isdigit():
                raise ValueError(
                    f"bad deal range {part!r}: {p!r} is not a non-negative integer "
                    "(use start:stop, e.g. 0:1000)"
                )
            nums.append(int(p))
        if len(nums) == 1:
            ranges.append(range(nums[0], nums[0] + 1))
            continue
        start, stop = nums[0], nums[1]
        step = nums[2] if len(nums) == 3 else 1
        if step < 1:
            raise ValueError(f"bad deal range {part!r}: the step must be at least 1")
        if stop <= start:
            raise ValueError(
                f"bad deal range {part!r}: stop ({stop}) must be greater than start ({start}); "
                "the stop is excluded, so 0:1000 means deals 0..999"
            )
        ranges.append(range(start, stop, step))
    for r in ranges:
        if r[-1] >= DEAL_NUMBERS:
            raise ValueError(f"deal number {r[-1]} is too large (deals are 0 .. 2**64-1)")
    count = sum(_range_length(r) for r in ranges)
    if count > MAX_DEALS:
        raise _too_many(f"{count:,}", f"deal list {text!r}")
    out = [d for r in ranges for d in r]
    if len(set(out)) != len(out):
        raise ValueError(f"deal list {text!r} names a deal more than once")
    return out


def _check_number(d: object) -> int:
    if not is_int(d):
        raise TypeError(f"deal {d!r} is not an int deal number ({DEALS_HINT})")
    n = operator.index(d)
    if not 0 <= n < DEAL_NUMBERS:
        raise ValueError(f"deal number {n} is out of range (deals are 0 .. 2**64-1)")
    return n


def deal_list(deals: Iterable[int] | str) -> list[int]:
    """The deal numbers of ``deals`` (a range text, a ``range`` or an iterable of ints), checked:
    ``TypeError`` / ``ValueError`` naming the bad value, never a huge list allocated."""
    if isinstance(deals, str):
        return parse_deals(deals)
    if isinstance(deals, range):
        n = _range_length(deals)
        if n > MAX_DEALS:
            raise _too_many(f"{n:,}" if n < DEAL_NUMBERS else "more than 2**64", f"{deals!r}")
        if n:
            _check_number(min(deals[0], deals[-1]))
            _check_number(max(deals[0], deals[-1]))
        return list(deals)
    if isinstance(deals, (bytes, bytearray, dict)) or not isinstance(deals, Iterable):
        raise TypeError(f"deals must be deal numbers, got {deals!r} ({DEALS_HINT})")
    items = list(itertools.islice(deals, MAX_DEALS + 1))
    if len(items) > MAX_DEALS:
        raise _too_many(f"more than {MAX_DEALS:,}", "the deals given")
    out = [_check_number(d) for d in items]
    seen: set[int] = set()
    for d in out:
        if d in seen:
            raise ValueError(f"deal {d} is listed more than once")
        seen.add(d)
    return out


def describe_deals(deals: Sequence[int]) -> str:
    """``"0:1000"`` for a contiguous range, else the first numbers."""
    if not deals:
        return "none"
    if list(deals) == list(range(deals[0], deals[0] + len(deals))):
        return f"{deals[0]}:{deals[0] + len(deals)}"
    shown = ",".join(str(d) for d in deals[:8])
    return shown + (",..." if len(deals) > 8 else "")


__all__ = ["MAX_DEALS", "deal_list", "describe_deals", "parse_deals"]
