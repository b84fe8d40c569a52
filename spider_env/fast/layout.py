"""The array form of a position: one ``int32`` vector per game, and the variant as one ``int64``
parameter vector. Pure NumPy (no numba): the conversions both ways are exact.

State vector ``st`` (length ``params(variant)[P_SIZE]``), with ``C`` columns, ``L`` the column
capacity (the deck size: any valid position fits; the observation's bound is ``max_column_length``),
``P`` stock piles of at most ``PS`` cards:

=================  ===========================================================================
``st[0:5]``        counters ``moves, deals, undos, reveals, free_used`` (``H_MOVES`` ...)
``st[5:9]``        completed runs per suit (``H_COMP``)
``st[OLEN + c]``   length of column ``c``
``st[ODOWN + c]``  face-down cards of column ``c``
``st[ORUN + c]``   suited run at the end of column ``c`` (``State.run_lengths``)
``st[OPILE + j]``  cards left in stock pile ``j`` (its full size, or 0 once dealt)
``st[OCOLS + c * L + i]``   card ``i`` of column ``c`` (deepest first), card ids 0..51
``st[OSTOCK + j * PS + i]`` card ``i`` of pile ``j`` (the card dealt onto column ``i``)
=================  ===========================================================================

Slots past a column's length or of a dealt pile are ``-1``, so two arrays of the same position
are equal element by element (:func:`state_key` is their hashable form).

Parameter vector ``pr``: the rule switches of :class:`~spider_env.core.variants.Variant` as
plain ints (indices ``P_*`` below), read by the kernel in one place, followed by the layout,
face-down counts, stock pile sizes, the unshuffled deck and where each card of a shuffled deck
lands, and each move id's (source, cards, target) packed in one int (``P_*_AT`` give the
offsets).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from spider_env.core.actions import move_parts
from spider_env.core.deals import deck
from spider_env.core.state import State
from spider_env.core.variants import Variant

# --- state header -------------------------------------------------------------------------------
H_MOVES, H_DEALS, H_UNDOS, H_REVEALS, H_FREE = 0, 1, 2, 3, 4
H_COMP = 5  # 4 values
HEADER = 9
#: The dtype of state vectors. 16 bits would halve a state (and measured 10-20% faster at
#: N = 4096, where a batch no longer fits the L2 cache) but 5% slower at N = 256, and the moves
#: counter would need two slots; 32 bits it is.
STATE_DTYPE = np.int32

# --- parameter indices --------------------------------------------------------------------------
(
    P_C,  # columns
    P_R,  # longest movable group (action encoding)
    P_L,  # column capacity of the state vector: the deck size (no column can hold more)
    P_NP,  # stock piles
    P_PS,  # largest pile
    P_NMOVE,
    P_NDEAL,
    P_NDISC,
    P_NACT,
    P_CHOOSE,  # choose_pile
    P_TOPVIS,  # pile_top_visible
    P_NOEMPTY,  # deal_needs_no_empty
    P_DEALT,  # dealt columns (columns before the free ones)
    P_ANYSUIT,  # build == "any-suit"
    P_SUITED,  # move == "suited-run"
    P_KINGS,  # empty_accepts == "king"
    P_AUTO,  # auto_discard
    P_TOWIN,  # runs_to_win
    P_SCORING,  # 0 windows, 1 tournament
    P_COPIES,  # copies_per_suit
    P_OLEN,
    P_ODOWN,
    P_ORUN,
    P_OPILE,
    P_OCOLS,
    P_OSTOCK,
    P_SIZE,  # state vector length
    P_NCARDS,
    P_LAYOUT_AT,
    P_FACEDOWN_AT,
    P_PILES_AT,
    P_DECK_AT,
    P_SLOTS_AT,
    P_DECODE_AT,  # move id -> pack_move(src, cards, dst)
    P_LOBS,  # L of the observation (Variant.max_column_length): columns of the "tableau"
) = range(35)
N_SCALARS = 40


# Reward modes of the kernel: the built-in reward classes of spider_env.rewards (custom callables
# need State objects and run on the pure engine). The kernel's weights vector is
# (illegal_reward, w1, w2, w3, w4): RUNS uses w1 = win_bonus; SHAPED w1..w4 = run, reveal, win,
# step_cost.
R_SCORE, R_RUNS, R_SHAPED, R_WIN = 0, 1, 2, 3


class CompiledCoreRefused(ValueError):
    """A variant or position the compiled core does not play (undo histories); use the pure
    engine (:mod:`spider_env.core`) for it."""


def check_supported(variant: Variant) -> None:
    """``CompiledCoreRefused`` unless the compiled core plays ``variant``.

    Undo is refused: an undo history (``State.prev``) can grow without bound, which no
    fixed-shape array holds exactly; envs of such variants run on the pure engine.
    """
    if variant.undo:
        raise CompiledCoreRefused(
            f"the compiled core does not play undo histories ({variant.spec_text()} has "
            "undo=true): this variant runs on the pure-Python engine"
        )


def pack_move(src: int, cards: int, dst: int) -> int:
    """A move's ``(src, cards, dst)`` as the one int the parameter vector's decode table holds
    (``P_DECODE_AT``: no division on the hot path); :func:`unpack_move` is its inverse."""
    return src | cards << 8 | dst << 16


def unpack_move(parts: int) -> tuple[int, int, int]:
    """``(src, cards, dst)`` of :func:`pack_move`'s int (compiled by the fast modules)."""
    return parts & 0xFF, (parts >> 8) & 0xFF, parts >> 16


@cache
def params(variant: Variant) -> np.ndarray:
    """The ``int64`` parameter vector of ``variant`` (cached; do not modify it)."""
    check_supported(variant)
    v = variant
    # Columns are stored with room for the whole deck: the observation's bound
    # L = max_column_length holds only for positions reached from a deal, and a position given
    # as a State may grow past it (the table observation then refuses, as the pure env's does).
    C, L, P = v.n_columns, v.n_cards, len(v.stock)
    PS = max(v.stock, default=0)
    o_len = HEADER
    o_down = o_len + C
    o_run = o_down + C
    o_pile = o_run + C
    o_cols = o_pile + P
    o_stock = o_cols + C * L
    size = o_stock + P * PS
    n = v.n_cards
    at_layout = N_SCALARS
    at_fd = at_layout + C
    at_piles = at_fd + C
    at_deck = at_piles + P
    at_slots = at_deck + n
    at_decode = at_slots + n
    pr = np.zeros(at_decode + v.n_move_actions, dtype=np.int64)
    pr[:N_SCALARS] = 0
    scalars = {
        P_C: C,
        P_R: v.max_run,
        P_L: L,
        P_NP: P,
        P_PS: PS,
        P_NMOVE: v.n_move_actions,
        P_NDEAL: v.n_deal_actions,
        P_NDISC: v.n_discard_actions,
        P_NACT: v.n_actions,
        P_CHOOSE: int(v.choose_pile),
        P_TOPVIS: int(v.pile_top_visible),
        P_NOEMPTY: int(v.deal_needs_no_empty),
        P_DEALT: v.dealt_columns,
        P_ANYSUIT: int(v.build == "any-suit"),
        P_SUITED: int(v.move == "suited-run"),
        P_KINGS: int(v.empty_accepts == "king"),
        P_AUTO: int(v.auto_discard),
        P_TOWIN: v.runs_to_win,
        P_SCORING: 0 if v.scoring == "windows" else 1,
        P_COPIES: v.copies_per_suit,
        P_OLEN: o_len,
        P_ODOWN: o_down,
        P_ORUN: o_run,
        P_OPILE: o_pile,
        P_OCOLS: o_cols,
        P_OSTOCK: o_stock,
        P_SIZE: size,
        P_NCARDS: n,
        P_LAYOUT_AT: at_layout,
        P_FACEDOWN_AT: at_fd,
        P_PILES_AT: at_piles,
        P_DECK_AT: at_deck,
        P_SLOTS_AT: at_slots,
        P_DECODE_AT: at_decode,
        P_LOBS: v.max_column_length,
    }
    for k, val in scalars.items():
        pr[k] = val
    pr[at_layout : at_layout + C] = v.layout
    pr[at_fd : at_fd + C] = v.face_down
    pr[at_piles : at_piles + P] = v.stock
    pr[at_deck : at_deck + n] = deck(v)
    # Where card i of a shuffled deck goes (core.deals.layout_deal): the tableau row by row,
    # then the piles in order.
    slots: list[int] = []
    for r in range(max(v.layout)):
        for c, k in enumerate(v.layout):
            if r < k:
                slots.append(o_cols + c * L + r)
    for j, k in enumerate(v.stock):
        slots.extend(o_stock + j * PS + i for i in range(k))
    pr[at_slots : at_slots + n] = slots
    for a in range(v.n_move_actions):
        pr[at_decode + a] = pack_move(*move_parts(v, a))
    pr.setflags(write=False)
    return pr


def to_array(state: State, out: np.ndarray | None = None) -> np.ndarray:
    """The state vector of ``state`` (exact; ``CompiledCoreRefused`` for an undo history)."""
    v = state.variant
    pr = params(v)  # refuses undo variants, the only ones with an undo history
    L, PS = int(pr[P_L]), int(pr[P_PS])
    if out is None:
        out = np.empty(int(pr[P_SIZE]), dtype=STATE_DTYPE)
    out.fill(-1)
    out[H_MOVES] = state.moves
    out[H_DEALS] = state.deals
    out[H_UNDOS] = state.undos
    out[H_REVEALS] = state.reveals
    out[H_FREE] = int(state.free_used)
    out[H_COMP : H_COMP + 4] = state.completed
    o_len, o_down, o_run = int(pr[P_OLEN]), int(pr[P_ODOWN]), int(pr[P_ORUN])
    o_pile, o_cols, o_stock = int(pr[P_OPILE]), int(pr[P_OCOLS]), int(pr[P_OSTOCK])
    for c, col in enumerate(state.cols):
        n = len(col)
        if n > L:
            raise ValueError(f"column {c} holds {n} cards, more than the bound L={L}")
        out[o_len + c] = n
        out[o_down + c] = state.down[c]
        out[o_run + c] = state.run_lengths[c]
        out[o_cols + c * L : o_cols + c * L + n] = col
    for j, pile in enumerate(state.stock):
        out[o_pile + j] = len(pile)
        out[o_stock + j * PS : o_stock + j * PS + len(pile)] = pile
    return out


def from_array(variant: Variant, st: np.ndarray) -> State:
    """The :class:`State` of a state vector (exact inverse of :func:`to_array`; validated)."""
    pr = params(variant)
    C, L, P, PS = (int(pr[i]) for i in (P_C, P_L, P_NP, P_PS))
    o_len, o_down = int(pr[P_OLEN]), int(pr[P_ODOWN])
    o_pile, o_cols, o_stock = int(pr[P_OPILE]), int(pr[P_OCOLS]), int(pr[P_OSTOCK])
    if st.shape != (int(pr[P_SIZE]),):
        raise ValueError(f"a {variant.name} state vector has shape ({int(pr[P_SIZE])},)")
    a = st.tolist()
    cols = tuple(tuple(a[o_cols + c * L : o_cols + c * L + a[o_len + c]]) for c in range(C))
    down = tuple(a[o_down : o_down + C])
    stock = tuple(tuple(a[o_stock + j * PS : o_stock + j * PS + a[o_pile + j]]) for j in range(P))
    completed = (a[H_COMP], a[H_COMP + 1], a[H_COMP + 2], a[H_COMP + 3])
    return State(
        variant,
        cols,
        down,
        stock,
        completed,
        a[H_MOVES],
        a[H_DEALS],
        a[H_UNDOS],
        a[H_REVEALS],
        bool(a[H_FREE]),
    )


def state_key(st: np.ndarray) -> bytes:
    """The position of a state vector as bytes (cards only, like ``State.key()``: counters are
    left out), hashable: equal keys mean the same table."""
    return st[H_COMP:].tobytes()
