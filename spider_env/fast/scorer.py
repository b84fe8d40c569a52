"""The position scorer of :mod:`spider_env.heuristics` (``PositionScorer``), compiled: a column's
value and a move's one-step gain over state vectors, the same float64 operations in the same order
(so the same bits). The pure scorer is the specification: ``tests/test_action_features_compiled.py``
holds each row's gain (feature 16) to it bit for bit.

The weights are not written here: :func:`scorer_vector` packs the numbers of a
``heuristics.Weights`` and the scorer's two switches (any-suit building, open game) into the
``float64`` vector the compiled functions read; the engine makes it from ``PositionScorer``
(``spider_env.engine``), so the weights keep their one home.
"""

from __future__ import annotations

import numpy as np

from spider_env.core.cards import KING, N_RANKS
from spider_env.fast.jit import jit_inline, refresh_cache
from spider_env.fast.layout import H_COMP, P_L, P_OCOLS, P_ODOWN, P_OLEN

# The positions in the scorer vector (float64).
(
    W_RUN,
    W_DOWN,
    W_LAST_DOWN,
    W_EMPTY,
    W_SUITED,
    W_RANK,
    W_BRK,
    W_KING_ROOT,
    W_UNKNOWN,
    W_RUN_SQ,
    W_HOME,
    W_COVER,
    W_ANY_SUIT,  # 1.0: any-suit building (rank links count), else 0.0
    W_OPEN,  # 1.0: open game (the shape of the runs counts), else 0.0
) = range(14)
W_SIZE = 14
#: The ``Weights`` fields in the order of the vector.
WEIGHT_FIELDS = (
    "run", "down", "last_down", "empty", "suited", "rank", "brk", "king_root", "unknown",
    "run_sq", "home", "cover",
)  # fmt: skip


def scorer_vector(weights: dict[str, float], any_suit: bool, open_game: bool) -> np.ndarray:
    """The scorer vector of :func:`column_value` / :func:`move_gain`: ``weights`` (every field of
    ``heuristics.Weights`` by name) and ``PositionScorer``'s ``any_suit`` and ``open``."""
    missing = [name for name in WEIGHT_FIELDS if name not in weights]
    if missing:
        raise ValueError(f"the scorer weights lack {missing}")
    out = np.zeros(W_SIZE, dtype=np.float64)
    for i, name in enumerate(WEIGHT_FIELDS):
        out[i] = float(weights[name])
    out[W_ANY_SUIT] = 1.0 if any_suit else 0.0
    out[W_OPEN] = 1.0 if open_game else 0.0
    return out


@jit_inline
def _shape(w: np.ndarray, st: np.ndarray, base: int, n: int, start: int) -> float:
    """``PositionScorer._shape`` of the column whose cards start at ``st[base]``."""
    v = 0.0
    i = start
    while i < n:
        j = i + 1
        while j < n and st[base + j - 1] == st[base + j] + 1 and st[base + j] % N_RANKS != KING:
            j += 1
        links = j - i - 1
        v += w[W_RUN_SQ] * links * links
        if i == 0 and st[base] % N_RANKS == KING:
            v += w[W_HOME] * (j - i)
        elif j < n and links:
            v -= w[W_COVER] * links
        i = j
    return v


@jit_inline
def column_value(pr: np.ndarray, w: np.ndarray, st: np.ndarray, c: int, unknown: bool) -> float:
    """``PositionScorer.column`` of column ``c`` of ``st`` (``unknown``: its deepest face-up
    card was just turned up)."""
    n = st[pr[P_OLEN] + c]
    if n == 0:
        return w[W_EMPTY]
    down = st[pr[P_ODOWN] + c]
    base = pr[P_OCOLS] + c * pr[P_L]
    v = -w[W_DOWN] * down - (w[W_LAST_DOWN] if down else 0.0)
    start = down + 1 if unknown else down
    suited = 0
    rank = 0
    brk = 0
    for i in range(start + 1, n):
        hi = st[base + i - 1]
        lo = st[base + i]
        if hi == lo + 1 and lo % N_RANKS != KING:
            suited += 1
        elif hi % N_RANKS == lo % N_RANKS + 1:
            rank += 1
        else:
            brk += 1
    v += w[W_SUITED] * suited - w[W_BRK] * brk
    if w[W_ANY_SUIT] != 0.0:
        v += w[W_RANK] * rank
    else:
        v -= w[W_BRK] * rank
    if down == 0 and not unknown and st[base] % N_RANKS == KING:
        v += w[W_KING_ROOT]
    if w[W_OPEN] != 0.0:
        v += _shape(w, st, base, n, start)
    if unknown:
        v += w[W_UNKNOWN]
    return v


@jit_inline
def move_gain(
    pr: np.ndarray,
    w: np.ndarray,
    before: np.ndarray,
    values: np.ndarray,
    after: np.ndarray,
    c1: int,
    c2: int,
) -> float:
    """``PositionScorer.gain(before, after)`` where the action changed columns ``c1`` and ``c2``
    only (``c2 = -1``: only ``c1``, a discard), as the pure engine's new column tuples say:
    completed runs, then each changed column in increasing order (a card turned up is
    unknown). ``values`` keeps the columns' values of ``before`` (NaN: not computed yet; filled
    here), for a caller that scores many actions of one position: the same operations on the
    same numbers either way, so the same bits."""
    g = w[W_RUN] * (
        (after[H_COMP] + after[H_COMP + 1] + after[H_COMP + 2] + after[H_COMP + 3])
        - (before[H_COMP] + before[H_COMP + 1] + before[H_COMP + 2] + before[H_COMP + 3])
    )
    lo = c1
    hi = c2
    if c2 >= 0 and c2 < c1:
        lo = c2
        hi = c1
    o_down = pr[P_ODOWN]
    for c in (lo, hi):
        if c < 0:
            continue
        if values[c] != values[c]:
            values[c] = column_value(pr, w, before, c, False)
        da = after[o_down + c]
        db = before[o_down + c]
        g += column_value(pr, w, after, c, da < db) - values[c]
    return g


refresh_cache(globals())
