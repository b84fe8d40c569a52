"""Compiled accessors of the state vector and the parameter vector, for search code.

What a search reads of a position and of its variant without indexing the layout of
:mod:`spider_env.fast.layout` itself: sizes and action ranges (``pr`` only), columns, piles and
counters of a state vector ``st``, fresh buffers, and a packed form of a position that stores
only the slots in use. Search code imports them from :mod:`spider_env.fast.game` (the one
interface); the compiled ones are inlined into their callers (``jit_inline``), so reading
through them costs what indexing the vector would.
"""

from __future__ import annotations

import numpy as np

from spider_env.core.cards import KING, N_CARD_IDS, N_RANKS
from spider_env.fast.jit import jit_inline, refresh_cache
from spider_env.fast.layout import (
    H_DEALS,
    H_MOVES,
    HEADER,
    P_ANYSUIT,
    P_C,
    P_DEALT,
    P_DECODE_AT,
    P_L,
    P_NACT,
    P_NCARDS,
    P_NDEAL,
    P_NMOVE,
    P_NOEMPTY,
    P_NP,
    P_OCOLS,
    P_ODOWN,
    P_OLEN,
    P_OPILE,
    P_ORUN,
    P_OSTOCK,
    P_PS,
    P_SIZE,
    STATE_DTYPE,
    unpack_move,
)

_unpack_move = jit_inline(unpack_move)

# --- the variant ----------------------------------------------------------------------------------


@jit_inline
def n_columns(pr: np.ndarray) -> int:
    return pr[P_C]


@jit_inline
def n_piles(pr: np.ndarray) -> int:
    """Stock piles of the variant (0: no stock)."""
    return pr[P_NP]


@jit_inline
def builds_any_suit(pr: np.ndarray) -> bool:
    """Whether a card goes on the next rank of any suit (``Variant.build == "any-suit"``)."""
    return pr[P_ANYSUIT] != 0


@jit_inline
def is_move(pr: np.ndarray, a: int) -> bool:
    """Whether action id ``a`` (``>= 0``) moves cards between columns."""
    return a < pr[P_NMOVE]


@jit_inline
def is_deal(pr: np.ndarray, a: int) -> bool:
    """Whether action id ``a`` deals a stock pile."""
    return pr[P_NMOVE] <= a < pr[P_NMOVE] + pr[P_NDEAL]


@jit_inline
def decode_move(pr: np.ndarray, a: int) -> tuple[int, int, int]:
    """``(src, cards, dst)`` of move id ``a`` (``core.actions.move_parts``; unchecked:
    :func:`is_move` must hold)."""
    return _unpack_move(pr[pr[P_DECODE_AT] + a])


@jit_inline
def new_state(pr: np.ndarray) -> np.ndarray:
    """An uninitialised state vector of the variant."""
    return np.empty(pr[P_SIZE], dtype=STATE_DTYPE)


@jit_inline
def legal_buffers(pr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, keys)`` for ``legal_ids``: room for every action id, and its scratch space."""
    return np.empty(pr[P_NACT] + 1, dtype=np.int32), np.empty(N_CARD_IDS, dtype=np.int64)


# --- a position -----------------------------------------------------------------------------------


@jit_inline
def dealt_columns(pr: np.ndarray) -> int:
    """Columns the stock deals to (the first ones; the rest are free columns)."""
    return pr[P_DEALT]


@jit_inline
def deal_needs_no_empty(pr: np.ndarray) -> bool:
    """Whether a deal is illegal while a dealt column is empty
    (``Variant.deal_needs_no_empty``)."""
    return pr[P_NOEMPTY] != 0


@jit_inline
def column_length(pr: np.ndarray, st: np.ndarray, c: int) -> int:
    """Cards in column ``c`` (face down and face up)."""
    return st[pr[P_OLEN] + c]


@jit_inline
def face_down(pr: np.ndarray, st: np.ndarray, c: int) -> int:
    """Face-down cards of column ``c`` (its deepest ones)."""
    return st[pr[P_ODOWN] + c]


@jit_inline
def on_own_suit(card: int, under: int) -> bool:
    """Whether ``card`` lying on ``under`` continues a suited run (``under`` is the same suit,
    one rank higher: ``State.run_lengths``' rule)."""
    return under == card + 1 and card % N_RANKS != KING


@jit_inline
def top_run(pr: np.ndarray, st: np.ndarray, c: int) -> int:
    """Cards in the suited run at the end of column ``c`` (``State.run_lengths``; 0 when
    empty), kept up to date by the moves."""
    return st[pr[P_ORUN] + c]


@jit_inline
def card_at(pr: np.ndarray, st: np.ndarray, c: int, i: int) -> int:
    """Card ``i`` of column ``c``, deepest first (unchecked: ``i < column_length``)."""
    return st[pr[P_OCOLS] + c * pr[P_L] + i]


@jit_inline
def pile_size(pr: np.ndarray, st: np.ndarray, j: int) -> int:
    """Cards left in stock pile ``j`` (0 once dealt)."""
    return st[pr[P_OPILE] + j]


@jit_inline
def pile_card(pr: np.ndarray, st: np.ndarray, j: int, i: int) -> int:
    """Card ``i`` of stock pile ``j``: the one it deals onto column ``i`` (unchecked)."""
    return st[pr[P_OSTOCK] + j * pr[P_PS] + i]


@jit_inline
def moves_made(st: np.ndarray) -> int:
    return st[H_MOVES]


@jit_inline
def deals_made(st: np.ndarray) -> int:
    return st[H_DEALS]


# --- packed positions -----------------------------------------------------------------------------
# A record: the header (counters, completed runs), then column lengths, face-down counts, run
# lengths and pile sizes (contiguous in the state vector too), then the cards of each column and
# of each pile in order; int16 (card ids, counts and counters all fit).


def new_records(pr: np.ndarray, n: int) -> np.ndarray:
    """Room for ``n`` packed positions of the variant (rows for :func:`pack`). Called from
    Python: NumPy's allocator gives large arrays huge pages (measured: searches 2% faster than
    with numba's)."""
    width = HEADER + 3 * int(pr[P_C]) + int(pr[P_NP]) + int(pr[P_NCARDS])
    return np.empty((n, width), dtype=np.int16)


@jit_inline
def pack(pr: np.ndarray, st: np.ndarray, rec: np.ndarray) -> None:
    """Write the position ``st`` into the record ``rec`` (a row of :func:`new_records`)."""
    C = pr[P_C]
    L = pr[P_L]
    for i in range(HEADER):
        rec[i] = st[i]
    o_len = pr[P_OLEN]
    for i in range(3 * C + pr[P_NP]):  # lengths, face-down, runs, piles: contiguous
        rec[HEADER + i] = st[o_len + i]
    k = HEADER + 3 * C + pr[P_NP]
    o_cols = pr[P_OCOLS]
    for c in range(C):
        base = o_cols + c * L
        for i in range(st[o_len + c]):
            rec[k] = st[base + i]
            k += 1
    o_pile = pr[P_OPILE]
    o_stock = pr[P_OSTOCK]
    PS = pr[P_PS]
    for j in range(pr[P_NP]):
        for i in range(st[o_pile + j]):
            rec[k] = st[o_stock + j * PS + i]
            k += 1


@jit_inline
def unpack(pr: np.ndarray, rec: np.ndarray, st: np.ndarray) -> None:
    """Inverse of :func:`pack` (slots past a column's length are left as they were: no compiled
    function reads them)."""
    C = pr[P_C]
    L = pr[P_L]
    for i in range(HEADER):
        st[i] = rec[i]
    o_len = pr[P_OLEN]
    for i in range(3 * C + pr[P_NP]):
        st[o_len + i] = rec[HEADER + i]
    k = HEADER + 3 * C + pr[P_NP]
    o_cols = pr[P_OCOLS]
    for c in range(C):
        base = o_cols + c * L
        for i in range(st[o_len + c]):
            st[base + i] = rec[k]
            k += 1
    o_pile = pr[P_OPILE]
    o_stock = pr[P_OSTOCK]
    PS = pr[P_PS]
    for j in range(pr[P_NP]):
        for i in range(st[o_pile + j]):
            st[o_stock + j * PS + i] = rec[k]
            k += 1


@jit_inline
def copy_columns(pr: np.ndarray, src: np.ndarray, dst: np.ndarray, columns: int) -> None:
    """Copy into ``dst`` the counters and lengths of state vector ``src`` and the cards of the
    columns in the bit mask ``columns``."""
    C = pr[P_C]
    L = pr[P_L]
    o_len = pr[P_OLEN]
    for i in range(o_len + 3 * C + pr[P_NP]):
        dst[i] = src[i]
    o_cols = pr[P_OCOLS]
    for c in range(C):
        if (columns >> c) & 1:
            base = o_cols + c * L
            for i in range(base, base + src[o_len + c]):
                dst[i] = src[i]


@jit_inline
def copy_state(pr: np.ndarray, src: np.ndarray, dst: np.ndarray) -> None:
    """Copy the used part of state vector ``src`` into ``dst`` (what :func:`unpack` writes)."""
    copy_columns(pr, src, dst, (1 << pr[P_C]) - 1)
    o_pile = pr[P_OPILE]
    o_stock = pr[P_OSTOCK]
    PS = pr[P_PS]
    for j in range(pr[P_NP]):
        base = o_stock + j * PS
        for i in range(base, base + src[o_pile + j]):
            dst[i] = src[i]


@jit_inline
def restore_state(pr: np.ndarray, src: np.ndarray, dst: np.ndarray, dirty: int) -> None:
    """Make ``dst``, a copy of ``src`` (:func:`copy_state`) on which one move or discard was
    then played, a copy of ``src`` again, given the columns that play changed (``dirty``, the
    bit mask :func:`~spider_env.fast.rules.apply_action` returns): the counters and every
    column's lengths, and the cards of the changed columns only. Not for a deal (it changes
    the stock's cards too): :func:`copy_state` then."""
    copy_columns(pr, src, dst, dirty)


refresh_cache(globals())
