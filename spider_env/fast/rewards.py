"""The built-in reward functions of :mod:`spider_env.rewards`, compiled, with the same
arithmetic in the same order (bit-for-bit equal rewards, checked by
``tests/test_fast_differential.py``). The mode and weights come from
``spider_env.rewards.kernel_reward``.
"""

from __future__ import annotations

import numpy as np

from spider_env.fast.jit import jit, jit_inline, refresh_cache
from spider_env.fast.layout import (
    H_REVEALS,
    P_TOWIN,
    R_RUNS,
    R_SCORE,
    R_SHAPED,
)
from spider_env.fast.rules import completed_runs, score


@jit
def reward(
    pr: np.ndarray,
    mode: int,
    w: np.ndarray,
    score0: int,
    runs0: int,
    reveals0: int,
    st: np.ndarray,
) -> float:
    """The built-in reward functions of :mod:`spider_env.rewards`, same arithmetic order."""
    return reward_of(pr, mode, w, score0, runs0, reveals0, score(pr, st), st)


@jit_inline
def reward_of(
    pr: np.ndarray,
    mode: int,
    w: np.ndarray,
    score0: int,
    runs0: int,
    reveals0: int,
    score1: int,
    st: np.ndarray,
) -> float:
    """:func:`reward` given the new score ``score1`` (computed once per step)."""
    runs = completed_runs(st)
    won = runs >= pr[P_TOWIN]
    if mode == R_SCORE:
        return float(score1 - score0)
    if mode == R_RUNS:
        r = float(runs - runs0)
        if r != 0.0 and won:
            r += w[1]
        return r
    if mode == R_SHAPED:
        d = runs - runs0
        r = w[1] * d + w[2] * (st[H_REVEALS] - reveals0) - w[4]
        if d != 0 and won:
            r += w[3]
        return r
    # R_WIN
    return 1.0 if won and runs0 < pr[P_TOWIN] else 0.0


refresh_cache(globals())
