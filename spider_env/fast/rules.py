"""The rules of :mod:`spider_env.core.rules` over the state vectors of
:mod:`spider_env.fast.layout`, compiled with numba: the one permitted mirror of the pure engine.

:func:`legal_ids` (``rules.legal_actions``) writes the sorted legal action ids;
:func:`apply_action` (``rules.apply_legal``) plays a legal one in place and returns the columns
it changed (a bit mask); :func:`score` is ``State.score``, :func:`is_won` ``State.won``;
:func:`position_hash` is the one hash of a position (``State.key()``: no counters).
``tests/test_fast_differential.py`` and ``make differential`` hold them to the pure engine.
"""

from __future__ import annotations

import numpy as np

from spider_env.core.actions import move_index
from spider_env.core.cards import KING, N_CARD_IDS, N_RANKS
from spider_env.fast.access import decode_move
from spider_env.fast.jit import jit, jit_inline, refresh_cache, trailing_zeros
from spider_env.fast.layout import (
    H_COMP,
    H_DEALS,
    H_FREE,
    H_MOVES,
    H_REVEALS,
    H_UNDOS,
    P_ANYSUIT,
    P_AUTO,
    P_C,
    P_CHOOSE,
    P_DEALT,
    P_KINGS,
    P_L,
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
    P_R,
    P_SCORING,
    P_SUITED,
    P_TOWIN,
)

# card id -> rank - 1 (0 = Ace .. KING): a table lookup instead of Python-semantics modulo
_RANK = np.array([c % N_RANKS for c in range(N_CARD_IDS)], dtype=np.int64)
_move_index = jit_inline(move_index)  # core.actions' arithmetic, compiled


@jit_inline
def run_length(pr: np.ndarray, st: np.ndarray, c: int) -> int:
    """``core.state.run_length`` of column ``c``."""
    n = st[pr[P_OLEN] + c]
    d = st[pr[P_ODOWN] + c]
    if n <= d:
        return 0
    base = pr[P_OCOLS] + c * pr[P_L]
    i = n - 1
    prev = st[base + i]
    i -= 1
    while i >= d:
        x = st[base + i]
        if x != prev + 1 or prev % N_RANKS == KING:
            break
        prev = x
        i -= 1
    return n - 1 - i


@jit
def completed_runs(st: np.ndarray) -> int:
    return st[H_COMP] + st[H_COMP + 1] + st[H_COMP + 2] + st[H_COMP + 3]


@jit_inline
def is_won(pr: np.ndarray, st: np.ndarray) -> bool:
    """``State.won``: the runs to win are completed."""
    return completed_runs(st) >= pr[P_TOWIN]


@jit
def deals_left(pr: np.ndarray, st: np.ndarray) -> int:
    o = pr[P_OPILE]
    n = 0
    for j in range(pr[P_NP]):
        if st[o + j] > 0:
            n += 1
    return n


@jit
def score(pr: np.ndarray, st: np.ndarray) -> int:
    """``State.score``."""
    runs = completed_runs(st)
    if pr[P_SCORING] == 0:
        return 500 - st[H_MOVES] - st[H_DEALS] - st[H_UNDOS] + 100 * runs
    bonus = 100 if runs >= pr[P_TOWIN] and st[H_FREE] == 0 else 0
    return 25 * st[H_REVEALS] + 100 * runs + bonus


@jit_inline
def target_masks(pr: np.ndarray, st: np.ndarray, keys: np.ndarray) -> int:
    """Fill ``keys`` (at least 52 int64) for :func:`card_targets`: ``keys[x]`` the bit mask of
    the columns a card of key ``x`` may go on, where ``x`` is the card's rank (any-suit
    building) or its id (same-suit); nothing goes on an Ace. Returns the mask of empty columns.
    """
    C = pr[P_C]
    L = pr[P_L]
    o_len = pr[P_OLEN]
    o_cols = pr[P_OCOLS]
    any_suit = pr[P_ANYSUIT] != 0
    for x in range(N_RANKS if any_suit else N_CARD_IDS):
        keys[x] = 0
    empty = 0
    for d in range(C):
        ln = st[o_len + d]
        if ln == 0:
            empty |= 1 << d
        else:
            top = st[o_cols + d * L + ln - 1]
            r = _RANK[top]
            if r != 0:
                keys[r - 1 if any_suit else top - 1] |= 1 << d
    return empty


@jit_inline
def movable(pr: np.ndarray, st: np.ndarray, src: int) -> int:
    """How many cards of column ``src`` may move together: its suited run, or every face-up
    card where the variant moves any face-up group."""
    if pr[P_SUITED] != 0:
        return st[pr[P_ORUN] + src]
    return st[pr[P_OLEN] + src] - st[pr[P_ODOWN] + src]


@jit_inline
def card_targets(
    keys: np.ndarray, empty: int, moved: int, src: int, any_suit: bool, kings: bool
) -> int:
    """The bit mask of the columns that a group headed by card ``moved`` may go to from column
    ``src`` (within :func:`movable`), by :func:`target_masks`' ``keys`` and ``empty`` mask."""
    bits = keys[_RANK[moved] if any_suit else moved]
    if empty and (not kings or _RANK[moved] == KING):
        bits |= empty
    return bits & ~(1 << src)


@jit_inline
def legal_ids(pr: np.ndarray, st: np.ndarray, out: np.ndarray, keys: np.ndarray) -> int:
    """Write the legal action ids of ``st`` in increasing order into ``out``; return how many.

    ``keys`` is scratch space of at least 52 int64. Mirrors ``rules._compute_legal``: the
    moves by :func:`target_masks`, :func:`movable` and :func:`card_targets`.
    """
    if is_won(pr, st):
        return 0
    C = pr[P_C]
    R = pr[P_R]
    L = pr[P_L]
    o_len = pr[P_OLEN]
    o_cols = pr[P_OCOLS]
    any_suit = pr[P_ANYSUIT] != 0
    kings = pr[P_KINGS] != 0
    empty = target_masks(pr, st, keys)
    n = 0
    for src in range(C):
        ln = st[o_len + src]
        if ln == 0:
            continue
        kmax = movable(pr, st, src)
        base = o_cols + src * L + ln
        for k in range(1, kmax + 1):
            bits = card_targets(keys, empty, st[base - k], src, any_suit, kings)
            if bits:
                a0 = _move_index(C, R, src, k, 0)
                while bits:  # the target columns, lowest first
                    out[n] = a0 + trailing_zeros(bits)
                    n += 1
                    bits &= bits - 1
    n_piles = pr[P_NP]
    if n_piles > 0:
        can_deal = True
        if pr[P_NOEMPTY] != 0:
            for d in range(pr[P_DEALT]):
                if st[o_len + d] == 0:
                    can_deal = False
                    break
        if can_deal:
            o_pile = pr[P_OPILE]
            n_move = pr[P_NMOVE]
            if pr[P_CHOOSE] != 0:
                for j in range(n_piles):
                    if st[o_pile + j] > 0:
                        out[n] = n_move + j
                        n += 1
            elif st[o_pile + n_piles - 1] > 0:
                out[n] = n_move
                n += 1
    if pr[P_AUTO] == 0:
        o_run = pr[P_ORUN]
        first = pr[P_NMOVE] + pr[P_NDEAL]
        for c in range(C):
            if st[o_run + c] >= N_RANKS:
                out[n] = first + c
                n += 1
    return n


@jit_inline
def _discard(pr: np.ndarray, st: np.ndarray, c: int) -> int:
    """Remove the complete run ending column ``c``; return 1 if a card turned face up."""
    o_len = pr[P_OLEN]
    base = pr[P_OCOLS] + c * pr[P_L]
    ln = st[o_len + c]
    suit = st[base + ln - 1] // N_RANKS
    for i in range(ln - N_RANKS, ln):
        st[base + i] = -1
    ln -= N_RANKS
    st[o_len + c] = ln
    st[H_COMP + suit] += 1
    o_down = pr[P_ODOWN]
    d = st[o_down + c]
    rev = 0
    if d > 0 and d == ln:
        st[o_down + c] = d - 1
        st[H_REVEALS] += 1
        rev = 1
    st[pr[P_ORUN] + c] = run_length(pr, st, c)
    return rev


@jit_inline
def apply_action(pr: np.ndarray, st: np.ndarray, a: int) -> int:
    """Play the legal action ``a`` on ``st`` in place (mirrors ``rules.apply_legal``); return the
    bit mask of the columns it changed. An illegal ``a`` gives a meaningless state."""
    L = pr[P_L]
    o_len = pr[P_OLEN]
    o_run = pr[P_ORUN]
    o_cols = pr[P_OCOLS]
    n_move = pr[P_NMOVE]
    auto = pr[P_AUTO] != 0
    if a < n_move:
        src, k, dst = decode_move(pr, a)
        slen = st[o_len + src]
        dlen = st[o_len + dst]
        sbase = o_cols + src * L
        dbase = o_cols + dst * L
        first = st[sbase + slen - k]
        rs = st[o_run + src]
        if k <= rs:
            if dlen > 0 and st[dbase + dlen - 1] == first + 1 and first % N_RANKS != KING:
                st[o_run + dst] += k
            else:
                st[o_run + dst] = k
            if k < rs:
                st[o_run + src] = rs - k
            else:
                st[o_run + src] = -1
        else:
            st[o_run + dst] = rs
            st[o_run + src] = -1
        for i in range(k):
            st[dbase + dlen + i] = st[sbase + slen - k + i]
            st[sbase + slen - k + i] = -1
        rest = slen - k
        st[o_len + src] = rest
        st[o_len + dst] = dlen + k
        st[H_MOVES] += 1
        if dst >= pr[P_DEALT]:
            st[H_FREE] = 1
        if st[o_run + src] < 0:
            o_down = pr[P_ODOWN]
            d = st[o_down + src]
            if d > 0 and d == rest:
                st[o_down + src] = d - 1
                st[H_REVEALS] += 1
                st[o_run + src] = 1
            else:
                st[o_run + src] = run_length(pr, st, src)
        if auto:
            while st[o_run + dst] >= N_RANKS:
                _discard(pr, st, dst)
            while st[o_run + src] >= N_RANKS:
                _discard(pr, st, src)
        return (1 << src) | (1 << dst)
    if a < n_move + pr[P_NDEAL]:
        o_pile = pr[P_OPILE]
        if pr[P_CHOOSE] != 0:
            j = a - n_move
        else:
            j = 0
            while st[o_pile + j] == 0:
                j += 1
        size = st[o_pile + j]
        st[o_pile + j] = 0
        st[H_DEALS] += 1
        pbase = pr[P_OSTOCK] + j * pr[P_PS]
        for c in range(size):
            card = st[pbase + c]
            st[pbase + c] = -1
            ln = st[o_len + c]
            base = o_cols + c * L
            if ln > 0 and st[base + ln - 1] == card + 1 and card % N_RANKS != KING:
                st[o_run + c] += 1
            else:
                st[o_run + c] = 1
            st[base + ln] = card
            st[o_len + c] = ln + 1
        if auto:
            for c in range(size):
                while st[o_run + c] >= N_RANKS:
                    _discard(pr, st, c)
        return (1 << size) - 1
    c = a - n_move - pr[P_NDEAL]
    _discard(pr, st, c)
    return 1 << c


@jit
def play_action(pr: np.ndarray, st: np.ndarray, a: int) -> int:
    """:func:`apply_action` as a compiled call of its own, not inlined into its caller: numba
    inlines ``apply_action`` at every call site, and each copy costs compile time; for callers
    that play an action now and then (and for Python)."""
    return apply_action(pr, st, a)


#: The hash's constants: FNV-1a's offset and prime, and a tag for the completed runs' part.
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_RUNS_TAG = np.uint64(0x9E3779B97F4A7C15)


@jit_inline
def _mix(x: np.uint64) -> np.uint64:
    """SplitMix64's finaliser: every bit of ``x`` spread over the 64."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@jit_inline
def runs_hash(st: np.ndarray) -> np.uint64:
    """The completed runs' part of :func:`position_hash`."""
    h = _FNV_OFFSET ^ _RUNS_TAG
    for i in range(H_COMP, H_COMP + 4):
        h = (h ^ np.uint64(st[i])) * _FNV_PRIME
    return _mix(h)


@jit_inline
def segment_hash(pr: np.ndarray, st: np.ndarray, s: int) -> np.uint64:
    """Column ``s``'s part of :func:`position_hash` (its length, face-down count and cards), or
    for ``s >= C`` stock pile ``s - C``'s (its size and cards); the place ``s`` is hashed too."""
    C = pr[P_C]
    h = (_FNV_OFFSET ^ np.uint64(s)) * _FNV_PRIME
    if s < C:
        n = st[pr[P_OLEN] + s]
        h = (h ^ np.uint64(200 + n)) * _FNV_PRIME
        h = (h ^ np.uint64(400 + st[pr[P_ODOWN] + s])) * _FNV_PRIME
        base = pr[P_OCOLS] + s * pr[P_L]
    else:
        n = st[pr[P_OPILE] + s - C]
        h = (h ^ np.uint64(600 + n)) * _FNV_PRIME
        base = pr[P_OSTOCK] + (s - C) * pr[P_PS]
    # the cards in two interleaved lanes (even and odd places), each its own chain of
    # multiplications, so that the CPU works on both at once (n is hashed above)
    even = np.uint64(0)
    odd = np.uint64(0)
    i = 0
    while i + 1 < n:
        even = (even ^ np.uint64(st[base + i])) * _FNV_PRIME
        odd = (odd ^ np.uint64(st[base + i + 1])) * _FNV_PRIME
        i += 2
    if i < n:
        even = (even ^ np.uint64(st[base + i])) * _FNV_PRIME
    h = (h ^ even) * _FNV_PRIME
    h = (h ^ odd) * _FNV_PRIME
    return _mix(h)


@jit
def position_hash(pr: np.ndarray, st: np.ndarray) -> np.uint64:
    """64-bit hash of the position (completed runs, each column's face-down count and cards,
    the piles; no counters): equal positions hash equal. The sum (modulo 2**64) of
    :func:`runs_hash` and each column's and pile's :func:`segment_hash`, so a search can hash a
    child from its parent's parts and the parts its move changed
    (:func:`spider_env.search.beam.expand`)."""
    h = runs_hash(st)
    for s in range(pr[P_C] + pr[P_NP]):
        h += segment_hash(pr, st, s)
    return h


refresh_cache(globals())
