"""The observations of :mod:`spider_env.observation`, compiled: :func:`write_table` (the
``dict`` observation of ``TableEncoder``) and :func:`write_features` (the learning encoding of
``FeatureEncoder``), both rewriting only the columns a step changed. The pure encoders are the
specification; ``tests/test_fast_differential.py`` compares the buffers with them.

The sizes of the learning encoding are not computed here: :func:`feature_layout` packs the
numbers :mod:`spider_env.observation` computes (``F``, ``G``...) into the vector
:func:`write_features` reads (the engine of ``spider_env.engine`` makes it).
"""

from __future__ import annotations

import numpy as np

from spider_env.core.cards import N_RANKS
from spider_env.fast.jit import jit, jit_inline, refresh_cache
from spider_env.fast.layout import (
    H_COMP,
    P_C,
    P_COPIES,
    P_L,
    P_LOBS,
    P_NP,
    P_OCOLS,
    P_ODOWN,
    P_OLEN,
    P_OPILE,
    P_ORUN,
    P_OSTOCK,
    P_PS,
    P_TOPVIS,
    P_TOWIN,
)
from spider_env.fast.rules import completed_runs, deals_left

# The positions in the feature layout vector (int64) that write_features reads.
FL_F = 0  # F, the features per column
FL_SLOT_WIDTH = 1  # values per card slot
FL_G = 2  # G, the length of the globals
FL_SLOTS = 3  # face-up card slots per column (feature_slots)
FL_DOWN_SCALE = 4  # what the face-down count is divided by
FL_SLOT0 = 5  # where a column's first card slot starts
FL_TOPS0 = 6  # where the globals' first pile-top slot starts
FL_SIZE = 7


def feature_layout(
    *, F: int, slot_width: int, G: int, slots: int, down_scale: int, slot0: int, tops0: int
) -> np.ndarray:
    """The feature layout vector of :func:`write_features`, from sizes computed elsewhere."""
    out = np.zeros(FL_SIZE, dtype=np.int64)
    out[FL_F], out[FL_SLOT_WIDTH], out[FL_G], out[FL_SLOTS] = F, slot_width, G, slots
    out[FL_DOWN_SCALE], out[FL_SLOT0], out[FL_TOPS0] = down_scale, slot0, tops0
    return out


@jit_inline
def write_table(
    pr: np.ndarray,
    st: np.ndarray,
    dirty: int,
    full: bool,
    tab: np.ndarray,
    comp: np.ndarray,
    tops: np.ndarray,
    before: np.ndarray,
) -> int:
    """The ``dict`` observation (``observation.TableEncoder``) of the columns in bit mask
    ``dirty``: ``tab`` is the ``"tableau"`` as one flat ``int8`` row (``C * L``, column ``c`` at
    ``c * L``, ``L = max_column_length``), then ``comp`` (4) and ``tops`` (P, filled only where
    pile tops are visible). Returns deals left, or -1 when a column holds more than ``L`` cards
    (only positions given as a ``State`` get there): the caller raises, as ``TableEncoder``
    does. ``tab`` must hold the previous observation (or zeros): past a column's cards only its
    nonzero tail is cleared, and with ``full=False`` (a step, not a reset) the face-down
    prefix, which a step never changes, is not rewritten.

    ``before`` (with ``full=False``): each column's length when ``tab`` was last written, or an
    empty array (not known). An action only changes a column's end: it takes cards off it,
    puts cards on it, and turns up at most the card it leaves on top. So of a column that had
    ``m`` cards and has ``n``, the cells below ``min(m, n) - 1`` are as written, and only the
    cells from there on are written again."""
    C = pr[P_C]
    L = pr[P_L]
    Lo = pr[P_LOBS]
    o_cols = pr[P_OCOLS]
    o_len = pr[P_OLEN]
    o_down = pr[P_ODOWN]
    known = before.shape[0] > 0
    for c in range(C):
        if dirty & (1 << c):
            ln = st[o_len + c]
            if ln > Lo:
                return -1
            d = st[o_down + c]
            base = o_cols + c * L
            row = c * Lo
            start = d
            if full:
                for i in range(d):
                    tab[row + i] = 1
            elif known:
                start = max(d, min(before[c], ln) - 1)
            for i in range(start, ln):
                tab[row + i] = st[base + i] + 2
            i = ln  # past the column: zeros, up to where the last write ended
            while i < Lo and tab[row + i] != 0:
                tab[row + i] = 0
                i += 1
    for s in range(4):
        comp[s] = st[H_COMP + s]
    if pr[P_TOPVIS] != 0:
        o_pile = pr[P_OPILE]
        o_stock = pr[P_OSTOCK]
        for j in range(pr[P_NP]):
            if st[o_pile + j] > 0:
                tops[j] = st[o_stock + j * pr[P_PS]] + 2
            else:
                tops[j] = 0
    return deals_left(pr, st)


@jit
def _card_slot(row: np.ndarray, off: int, card: int, has_suit: bool) -> None:
    row[off + card % N_RANKS] = 1.0
    if has_suit:
        row[off + N_RANKS + card // N_RANKS] = 1.0


@jit_inline
def write_features(
    pr: np.ndarray, st: np.ndarray, dirty: int, lay: np.ndarray, row: np.ndarray
) -> None:
    """The learning encoding (``observation.FeatureEncoder``) into one flat ``float32`` row:
    column ``c`` at ``c * F`` (only the columns in bit mask ``dirty``), then the globals at
    ``C * F``; the sizes come from ``lay`` (:func:`feature_layout`)."""
    C = pr[P_C]
    L = pr[P_L]
    F = lay[FL_F]
    width = lay[FL_SLOT_WIDTH]
    slots = lay[FL_SLOTS]
    slot0 = lay[FL_SLOT0]
    has_suit = width > N_RANKS
    down_scale = float(lay[FL_DOWN_SCALE])
    for c in range(C):
        if dirty & (1 << c):
            off = c * F
            for i in range(F):
                row[off + i] = 0.0
            n = st[pr[P_OLEN] + c]
            down = st[pr[P_ODOWN] + c]
            run = st[pr[P_ORUN] + c]
            up = n - down
            base = pr[P_OCOLS] + c * L
            row[off] = down / down_scale
            row[off + 1] = up / N_RANKS
            row[off + 2] = 1.0 if n == 0 else 0.0
            row[off + 3] = run / N_RANKS
            if run:
                _card_slot(row, off + slot0, st[base + n - run], has_suit)
            first = off + slot0 + width
            for i in range(min(slots, up)):
                _card_slot(row, first + i * width, st[base + n - 1 - i], has_suit)
    g = C * F
    for i in range(lay[FL_G]):
        row[g + i] = 0.0
    n_piles = pr[P_NP]
    if n_piles:
        row[g] = deals_left(pr, st) / n_piles
    runs = completed_runs(st)
    row[g + 1] = min(runs / pr[P_TOWIN], 1.0)
    per = pr[P_COPIES]
    for s in range(4):
        row[g + 2 + s] = st[H_COMP + s] / per
    if pr[P_TOPVIS] != 0:
        o_pile = pr[P_OPILE]
        tops0 = g + lay[FL_TOPS0]
        for j in range(n_piles):
            if st[o_pile + j] > 0:
                _card_slot(row, tops0 + j * width, st[pr[P_OSTOCK] + j * pr[P_PS]], has_suit)


refresh_cache(globals())
