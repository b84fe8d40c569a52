"""The deal generator of :mod:`spider_env.core.deals` (SplitMix64, an unbiased Fisher-Yates
shuffle, then ``layout_deal``), compiled: :func:`reset_deal` lays out deal ``n`` in a state
vector, :func:`reset_rows` in rows of a batch. ``tests/test_fast_differential.py`` pins it to
``State.from_deal(generate_deal(...))``.
"""

from __future__ import annotations

import numpy as np

from spider_env.fast.jit import jit, refresh_cache
from spider_env.fast.layout import (
    H_COMP,
    P_C,
    P_DECK_AT,
    P_FACEDOWN_AT,
    P_LAYOUT_AT,
    P_NCARDS,
    P_NP,
    P_ODOWN,
    P_OLEN,
    P_OPILE,
    P_ORUN,
    P_PILES_AT,
    P_SLOTS_AT,
)
from spider_env.fast.rules import run_length


@jit
def next64(x: np.uint64) -> tuple[np.uint64, np.uint64]:
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x, z ^ (z >> np.uint64(31))


@jit
def reset_deal(pr: np.ndarray, st: np.ndarray, deal_number: np.uint64) -> None:
    """Lay out deal ``deal_number`` (``core.deals.generate_deal``: SplitMix64, Fisher-Yates,
    then ``layout_deal``) as the starting state in ``st``."""
    n = pr[P_NCARDS]
    at_deck = pr[P_DECK_AT]
    cards = np.empty(n, dtype=np.int64)
    for i in range(n):
        cards[i] = pr[at_deck + i]
    x = np.uint64(deal_number)
    for i in range(n - 1, 0, -1):
        m = np.uint64(i + 1)
        rem = (np.uint64(0) - m) % m  # 2**64 % m
        while True:
            x, r = next64(x)
            if rem == np.uint64(0) or r < np.uint64(0) - rem:
                break
        j = np.int64(r % m)
        t = cards[i]
        cards[i] = cards[j]
        cards[j] = t
    st[:] = -1
    for h in range(H_COMP + 4):
        st[h] = 0
    C = pr[P_C]
    at_layout = pr[P_LAYOUT_AT]
    at_fd = pr[P_FACEDOWN_AT]
    for c in range(C):
        st[pr[P_OLEN] + c] = pr[at_layout + c]
        st[pr[P_ODOWN] + c] = pr[at_fd + c]
    at_piles = pr[P_PILES_AT]
    for j in range(pr[P_NP]):
        st[pr[P_OPILE] + j] = pr[at_piles + j]
    at_slots = pr[P_SLOTS_AT]
    for i in range(n):
        st[pr[at_slots + i]] = cards[i]
    for c in range(C):
        st[pr[P_ORUN] + c] = run_length(pr, st, c)


refresh_cache(globals())
