"""The per-action features (``obs_mode="actions"``), compiled: the mirror of
:class:`spider_env.observation.actions.ActionFeatureEncoder`, which stays the specification
(``tests/test_action_features_compiled.py`` holds every row, id and global to it bit for bit).

:func:`encode_rows` writes the features of any games of a batch in one call, each game one
decision: its rows ``feats[i]`` ``(K, 27)``, ids ``ids[i]`` ``(K,)`` and globals ``glob[i]``
``(11,)`` (``float32``), from its state vector and its legal ids (the compiled core's
``rules.legal_ids``, the one mirror of the rules: no legality is written here; the moves after
a move are asked of the pieces ``legal_ids`` is built from, ``target_masks``, ``movable`` and
``card_targets``), and its episode memory (below), which ``fresh`` games forget first.

What a player sees, and nothing more. Like the pure encoder, each decision works on the
*player's position* (:func:`player_position`): the game's state with every hidden slot (face-down
cards, the stock below a visible top) filled with the cards the player has not seen, sorted,
exactly as ``TableView.to_state()`` fills them; so a move's effects, its gain
(:mod:`~spider_env.fast.scorer`), the legal moves after it and the positions it leads to are
computed from visible cards only, and equal the pure encoder's.

Episode memory of game ``i`` (arrays over the games, kept by the engine):

* a table of the positions met this episode and how often (``vkeys[i]`` ``(cap, 2)`` uint64,
  ``vcounts[i]`` ``(cap,)`` int32, 0 = empty slot; ``vused[i]`` slots in use): open addressing,
  linear probing on the position's 128-bit key (:func:`position_key`). The caller keeps every
  table at most half full (:func:`grow_tables`): a call adds at most one position per game;
* ``since[i]`` decisions since the last progress, ``progress[i]`` the last ``(face-down cards,
  completed runs, deals left)`` (``progress[i, 0] == -1``: none yet), ``decisions[i]``.

The position key. The pure encoder keys a position by ``State.key()`` of the player's position
(hidden slots filled as above), and a move's child by the key of the move played on it. Here the
key is two 64-bit hashes of exactly that content (each column's length, face-down count and
cards, each pile's size and cards, the completed runs per suit), each the sum modulo 2**64 of one
well-mixed hash per column, one of the stock and one of the completed runs (so a move's child
key is the parent's with its two columns, and the completed runs, re-hashed). Equal positions
give equal keys. Two different positions differ in at least one column (or the stock, or the
runs), whose hashes enter the two sums independently: modelling the mixed hashes as random, two
different positions share a key with probability 2**-128, and a game of ``T`` decisions with at
most ``R`` rows each makes at most ``T * (R + 1)`` look-ups among at most ``T`` stored keys:
below ``T**2 * (R + 1) * 2**-128``, about 3e-32 for ``T = 1000``, ``R = 96``. A collision would
only change a visit count. Within a game the hidden fill is a function of the visible table (the
unseen cards, sorted), so keying on this content is keying on what the player sees.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from spider_env.core.cards import KING, N_CARD_IDS, N_RANKS
from spider_env.fast.access import decode_move
from spider_env.fast.jit import borrowed, jit, jit_inline, refresh_cache
from spider_env.fast.layout import (
    H_COMP,
    H_DEALS,
    H_FREE,
    H_MOVES,
    H_REVEALS,
    H_UNDOS,
    P_ANYSUIT,
    P_C,
    P_DEALT,
    P_DECK_AT,
    P_KINGS,
    P_L,
    P_LOBS,
    P_NCARDS,
    P_NDEAL,
    P_NDISC,
    P_NMOVE,
    P_NP,
    P_OCOLS,
    P_ODOWN,
    P_OLEN,
    P_OPILE,
    P_ORUN,
    P_OSTOCK,
    P_PILES_AT,
    P_PS,
    P_SIZE,
    P_TOPVIS,
)
from spider_env.fast.rules import apply_action, card_targets, is_won, movable, target_masks
from spider_env.fast.scorer import move_gain

N_ACTION_FEATURES = 27  # observation.spaces.N_ACTION_FEATURES (checked by the engine)
N_GLOBAL_FEATURES = 11  # observation.spaces.N_GLOBAL_FEATURES (checked by the engine)


class Memory(NamedTuple):
    """The episode memory of a batch's ``n`` games (:func:`new_memory`; see the module
    docstring), passed to the compiled functions by name."""

    vkeys: np.ndarray  # (n, cap, 2) uint64: the keys of the positions met
    vcounts: np.ndarray  # (n, cap) int32: how often each was met (0: an empty slot)
    vused: np.ndarray  # (n,) int64: slots in use
    since: np.ndarray  # (n,) int64: decisions since the last progress
    progress: np.ndarray  # (n, 3) int64: the last (face-down cards, runs, deals left)
    decisions: np.ndarray  # (n,) int64: decisions this episode


class Scratch(NamedTuple):
    """The scratch arrays of :func:`encode_rows` (:func:`new_scratch`), by name."""

    ps: np.ndarray  # the player's position (a clean state vector)
    ch: np.ndarray  # ps with one action played
    keys: np.ndarray  # target_masks' keys (of the position after an action)
    colh: np.ndarray  # (C, 2) uint64: each column's hashes
    rest: np.ndarray  # (6,) uint64: the stock's and the runs' hashes, and a pair of scratch
    tmp_f: np.ndarray  # (A, 27) float32: every row's features
    tmp_g: np.ndarray  # (A,) float64: every row's gain
    tmp_a: np.ndarray  # (A,) int64: every row's action id
    order: np.ndarray  # (A,) int64: the rows kept
    counts: np.ndarray  # (52,) int64: unseen copies of each card
    hidden: np.ndarray  # (cards,) int32: the unseen cards, sorted
    colv: np.ndarray  # (C,) float64: the player's position's column values (NaN: not yet)


def new_scratch(pr: np.ndarray) -> Scratch:
    """The scratch arrays of :func:`encode_rows` for variant ``pr`` (NumPy only)."""
    A = int(pr[P_NMOVE] + pr[P_NDEAL] + pr[P_NDISC]) + 1  # room for every action id (and undo)
    size, C = int(pr[P_SIZE]), int(pr[P_C])
    return Scratch(
        ps=np.full(size, -1, dtype=np.int32),
        ch=np.full(size, -1, dtype=np.int32),
        keys=np.zeros(max(64, N_CARD_IDS), dtype=np.int64),
        colh=np.zeros((C, 2), dtype=np.uint64),
        rest=np.zeros(6, dtype=np.uint64),
        tmp_f=np.zeros((A, N_ACTION_FEATURES), dtype=np.float32),
        tmp_g=np.zeros(A, dtype=np.float64),
        tmp_a=np.zeros(A, dtype=np.int64),
        order=np.zeros(A, dtype=np.int64),
        counts=np.zeros(N_CARD_IDS, dtype=np.int64),
        hidden=np.zeros(int(pr[P_NCARDS]), dtype=np.int32),
        colv=np.full(C, np.nan, dtype=np.float64),
    )


def new_memory(n: int, capacity: int) -> Memory:
    """Empty episode memory of ``n`` games, tables of ``capacity`` slots (a power of 2)."""
    if capacity < 2 or capacity & (capacity - 1):
        raise ValueError(f"a table capacity must be a power of 2 >= 2, got {capacity}")
    return Memory(
        vkeys=np.zeros((n, capacity, 2), dtype=np.uint64),
        vcounts=np.zeros((n, capacity), dtype=np.int32),
        vused=np.zeros(n, dtype=np.int64),
        since=np.zeros(n, dtype=np.int64),
        progress=np.full((n, 3), -1, dtype=np.int64),
        decisions=np.zeros(n, dtype=np.int64),
    )


# --- hashing (uint64 throughout: a plain int would turn numba's arithmetic into floats) ---------
_P1 = np.uint64(0x100000001B3)  # FNV-1a prime
_P2 = np.uint64(0x9E3779B97F4A7C15)  # an odd multiplier (2**64 / golden ratio)
_S1 = np.uint64(0xCBF29CE484222325)
_S2 = np.uint64(0x6A09E667F3BCC909)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_R30, _R27, _R31 = np.uint64(30), np.uint64(27), np.uint64(31)
_ONE = np.uint64(1)
_TAG_STOCK = 1000
_TAG_COMP = 2000


@jit_inline
def _mix(x: np.uint64) -> np.uint64:
    """SplitMix64's finaliser: every input bit reaches every output bit."""
    x = (x ^ (x >> _R30)) * _M1
    x = (x ^ (x >> _R27)) * _M2
    return x ^ (x >> _R31)


@jit_inline
def _seq_hash(
    st: np.ndarray, base: int, n: int, tag: int, extra: int, out: np.ndarray, at: int
) -> None:
    """The two mixed hashes of ``(tag, n, extra, st[base : base + n])`` into ``out[at : at+2]``."""
    h1 = _S1 ^ np.uint64(tag)
    h2 = _S2 + np.uint64(tag) * _P2
    h1 = (h1 ^ np.uint64(n)) * _P1
    h2 = (h2 + np.uint64(n) + _ONE) * _P2
    h1 = (h1 ^ np.uint64(extra)) * _P1
    h2 = (h2 + np.uint64(extra) + _ONE) * _P2
    for i in range(n):
        x = np.uint64(st[base + i])
        h1 = (h1 ^ x) * _P1
        h2 = (h2 + x + _ONE) * _P2
    out[at] = _mix(h1 ^ np.uint64(tag))
    out[at + 1] = _mix(h2 + np.uint64(tag))


@jit_inline
def _column_hash(pr: np.ndarray, st: np.ndarray, c: int, out: np.ndarray, at: int) -> None:
    base = pr[P_OCOLS] + c * pr[P_L]
    _seq_hash(st, base, st[pr[P_OLEN] + c], c, st[pr[P_ODOWN] + c], out, at)


@jit_inline
def _comp_hash(st: np.ndarray, out: np.ndarray, at: int) -> None:
    _seq_hash(st, H_COMP, 4, _TAG_COMP, 0, out, at)


@jit
def position_key(pr: np.ndarray, st: np.ndarray, colh: np.ndarray, rest: np.ndarray) -> None:
    """The key parts of ``st``: ``colh[c, 0:2]`` each column's hashes, ``rest[0:2]`` the
    stock's and ``rest[2:4]`` the completed runs' (the key: every part summed, per hash);
    ``rest`` (uint64, at least 4) is also scratch of the caller past index 3."""
    C = pr[P_C]
    for c in range(C):
        _column_hash(pr, st, c, colh[c], 0)
    o_pile = pr[P_OPILE]
    o_stock = pr[P_OSTOCK]
    PS = pr[P_PS]
    s1 = np.uint64(0)
    s2 = np.uint64(0)
    for j in range(pr[P_NP]):
        _seq_hash(st, o_stock + j * PS, st[o_pile + j], _TAG_STOCK + j, 0, rest, 0)
        s1 += rest[0]
        s2 += rest[1]
    rest[0] = s1
    rest[1] = s2
    _comp_hash(st, rest, 2)


# --- the table of visited positions ------------------------------------------------------------


@jit_inline
def _slot(vkeys: np.ndarray, vcounts: np.ndarray, i: int, k1: np.uint64, k2: np.uint64) -> int:
    """Game ``i``'s slot of key ``(k1, k2)``: where it is, or the empty slot where it would go."""
    mask = vcounts.shape[1] - 1
    j = np.int64(k1 & np.uint64(mask))
    while vcounts[i, j] != 0:
        if vkeys[i, j, 0] == k1 and vkeys[i, j, 1] == k2:
            return j
        j = (j + 1) & mask
    return j


@jit
def grow_tables(
    vkeys: np.ndarray, vcounts: np.ndarray, new_keys: np.ndarray, new_counts: np.ndarray
) -> None:
    """Every game's table copied into larger ones (``new_counts`` zero; capacities powers of 2)."""
    for i in range(vkeys.shape[0]):
        for j in range(vkeys.shape[1]):
            n = vcounts[i, j]
            if n:
                s = _slot(new_keys, new_counts, i, vkeys[i, j, 0], vkeys[i, j, 1])
                new_keys[i, s, 0] = vkeys[i, j, 0]
                new_keys[i, s, 1] = vkeys[i, j, 1]
                new_counts[i, s] = n


# --- the player's position ----------------------------------------------------------------------


@jit_inline
def player_position(
    pr: np.ndarray, st: np.ndarray, ps: np.ndarray, counts: np.ndarray, hidden: np.ndarray
) -> bool:
    """Write into ``ps`` (a clean state vector: ``-1`` past every column and pile) the position
    ``TableView.to_state()`` makes of what a player sees of ``st``: the unseen cards, sorted,
    fill the face-down slots column by column, then the undealt piles (the visible top stays);
    the undealt piles are those with a visible top, or without visible tops the last ``deals
    left`` ones; counters 0 but ``deals``. Returns False when a column is longer than the table
    observation's bound (the caller refuses, as the pure encoder's table does)."""
    C = pr[P_C]
    L = pr[P_L]
    o_len = pr[P_OLEN]
    o_down = pr[P_ODOWN]
    o_run = pr[P_ORUN]
    o_cols = pr[P_OCOLS]
    o_pile = pr[P_OPILE]
    o_stock = pr[P_OSTOCK]
    PS = pr[P_PS]
    NP = pr[P_NP]
    top_vis = pr[P_TOPVIS] != 0
    for c in range(C):
        if st[o_len + c] > pr[P_LOBS]:
            return False
    # the unseen cards: the deck, less the completed runs, the face-up cards, the visible tops
    for x in range(N_CARD_IDS):
        counts[x] = 0
    at = pr[P_DECK_AT]
    for k in range(pr[P_NCARDS]):
        counts[pr[at + k]] += 1
    for s in range(4):
        done = st[H_COMP + s]
        if done:
            for r in range(N_RANKS):
                counts[s * N_RANKS + r] -= done
    for c in range(C):
        base = o_cols + c * L
        for k in range(st[o_down + c], st[o_len + c]):
            counts[st[base + k]] -= 1
    dealt = 0
    for j in range(NP):
        if st[o_pile + j] > 0:
            dealt += 1
            if top_vis:
                counts[st[o_stock + j * PS]] -= 1
    n_hidden = 0
    for x in range(N_CARD_IDS):
        for _ in range(counts[x]):
            hidden[n_hidden] = x
            n_hidden += 1
    # the columns
    h = 0
    for c in range(C):
        base = o_cols + c * L
        for k in range(ps[o_len + c]):  # clean what the last position left
            ps[base + k] = -1
        n = st[o_len + c]
        d = st[o_down + c]
        ps[o_len + c] = n
        ps[o_down + c] = d
        ps[o_run + c] = st[o_run + c]
        for k in range(d):
            ps[base + k] = hidden[h]
            h += 1
        for k in range(d, n):
            ps[base + k] = st[base + k]
    # the stock
    left = dealt  # piles not dealt yet
    n_piles = 0
    for j in range(NP):
        pbase = o_stock + j * PS
        for k in range(ps[o_pile + j]):
            ps[pbase + k] = -1
        undealt = st[o_pile + j] > 0 if top_vis else j >= NP - left
        if undealt:
            n_piles += 1
            size = pr[pr[P_PILES_AT] + j]
            ps[o_pile + j] = size
            k0 = 0
            if top_vis:
                ps[pbase] = st[pbase]
                k0 = 1
            for k in range(k0, size):
                ps[pbase + k] = hidden[h]
                h += 1
        else:
            ps[o_pile + j] = 0
    ps[H_MOVES] = 0
    ps[H_DEALS] = NP - n_piles
    ps[H_UNDOS] = 0
    ps[H_REVEALS] = 0
    ps[H_FREE] = 0
    for s in range(4):
        ps[H_COMP + s] = st[H_COMP + s]
    return True


@jit_inline
def _restore(pr: np.ndarray, ps: np.ndarray, ch: np.ndarray, c1: int, c2: int) -> None:
    """Make ``ch`` equal ``ps`` again after an action changed columns ``c1`` and ``c2`` (``-1``:
    none) and the header."""
    for k in range(H_COMP + 4):
        ch[k] = ps[k]
    L = pr[P_L]
    o_len = pr[P_OLEN]
    for c in (c1, c2):
        if c < 0:
            continue
        base = pr[P_OCOLS] + c * L
        n = max(ps[o_len + c], ch[o_len + c])
        for k in range(n):
            ch[base + k] = ps[base + k]
        ch[o_len + c] = ps[o_len + c]
        ch[pr[P_ODOWN] + c] = ps[pr[P_ODOWN] + c]
        ch[pr[P_ORUN] + c] = ps[pr[P_ORUN] + c]


@jit_inline
def _card(pr: np.ndarray, st: np.ndarray, c: int, from_end: int) -> int:
    """``cols[c][-from_end]``."""
    return st[pr[P_OCOLS] + c * pr[P_L] + st[pr[P_OLEN] + c] - from_end]


@jit_inline
def _takes_run(
    pr: np.ndarray,
    nxt: np.ndarray,
    keys: np.ndarray,
    empty: int,
    col: int,
    skip: int,
    any_suit: bool,
    kings: bool,
) -> float:
    """``actions._takes_run``: a legal move of ``nxt`` puts onto ``col`` the card one below
    ``col``'s exposed card (same suit: its id less one) from a column other than ``col`` and
    ``skip``. The moves are the rules' (:func:`~spider_env.fast.rules.movable`,
    :func:`~spider_env.fast.rules.card_targets` by ``keys`` and ``empty``, of
    :func:`~spider_env.fast.rules.target_masks` on ``nxt``), asked of the groups headed by that
    card only: the legal ids that ``legal_ids`` would list, without listing them."""
    n = nxt[pr[P_OLEN] + col]
    if n <= nxt[pr[P_ODOWN] + col]:
        return 0.0
    want = _card(pr, nxt, col, 1) - 1
    L = pr[P_L]
    o_len = pr[P_OLEN]
    o_cols = pr[P_OCOLS]
    for s in range(pr[P_C]):
        if s in (col, skip):
            continue
        base = o_cols + s * L + nxt[o_len + s]
        for k in range(1, movable(pr, nxt, s) + 1):
            if nxt[base - k] == want:
                if card_targets(keys, empty, want, s, any_suit, kings) >> col & 1:
                    return 1.0
                break  # the targets depend on the card alone, not on k
    return 0.0


# --- one decision of one game ---------------------------------------------------------------------


@jit_inline
def _keep_rows(
    pr: np.ndarray,
    n_rows: int,
    i: int,
    feats: np.ndarray,
    ids: np.ndarray,
    tmp_f: np.ndarray,
    tmp_g: np.ndarray,
    tmp_a: np.ndarray,
    order: np.ndarray,
) -> tuple:
    """Write the ``n_rows`` rows (features ``tmp_f``, gains ``tmp_g``, ids ``tmp_a``:
    :class:`Scratch`'s) into game ``i``'s ``feats[i]``, ``ids[i]``: all of them, or the ``K``
    of highest gain (a stable sort, in ``order``: ties keep the legal order), the best moves and
    discards marked (feature 17), the rows past them cleared. Returns the rows kept, the best
    gain of a move or discard and how many of those gain."""
    n_move = pr[P_NMOVE]
    deal_end = n_move + pr[P_NDEAL]
    discard_end = deal_end + pr[P_NDISC]
    best = 0.0
    any_move = False
    improving = 0
    for r in range(n_rows):
        a = tmp_a[r]
        if a < n_move or (deal_end <= a and a < discard_end):
            g = tmp_g[r]
            if not any_move or g > best:
                best = g
            any_move = True
            if g > 0:
                improving += 1
    K = ids.shape[1]
    for r in range(n_rows):
        order[r] = r
    if n_rows > K:
        for r in range(1, n_rows):
            x = order[r]
            g = tmp_g[x]
            q = r - 1
            while q >= 0 and tmp_g[order[q]] < g:
                order[q + 1] = order[q]
                q -= 1
            order[q + 1] = x
    kept = min(n_rows, K)
    for r in range(kept):
        x = order[r]
        a = tmp_a[x]
        if (a < n_move or (deal_end <= a and a < discard_end)) and tmp_g[x] >= best - 1e-9:
            tmp_f[x, 17] = 1.0
        for y in range(N_ACTION_FEATURES):
            feats[i, r, y] = tmp_f[x, y]
        ids[i, r] = a
    for r in range(kept, K):
        if ids[i, r] == -1.0:
            break  # rows past the last write are zero already
        for y in range(N_ACTION_FEATURES):
            feats[i, r, y] = 0.0
        ids[i, r] = -1.0
    return kept, best, improving


@jit
def encode_game(
    pr: np.ndarray,
    w: np.ndarray,
    st: np.ndarray,
    legal: np.ndarray,
    i: int,
    feats: np.ndarray,
    ids: np.ndarray,
    glob: np.ndarray,
    memory: Memory,
    scratch: Scratch,
) -> bool:
    """One decision of game ``i`` (``ActionFeatureEncoder.encode``): its state ``st``, its legal
    ids ``legal`` (count first); rows into ``feats[i]``, ``ids[i]``, globals into ``glob[i]``;
    the ``memory`` (:func:`new_memory`) counts the position. In ``scratch``
    (:func:`new_scratch`), ``ps``, ``ch`` are clean state vectors, equal on entry (and on
    return). Returns False (nothing written) when a column is longer than the table
    observation's bound.

    Long (about 210 lines) for a measured reason: numba counts references to every array a
    call passes, inlined or not, at every call. Helpers for the position's count and progress
    made a 4-suit decision 3% slower, and a helper for a move's row 7%; only the rows' ranking
    (:func:`_keep_rows`, one call of few arrays) is one."""
    # the arrays by name, once
    ps, ch, keys = scratch.ps, scratch.ch, scratch.keys
    colh, rest = scratch.colh, scratch.rest
    tmp_f, tmp_g, tmp_a, order = scratch.tmp_f, scratch.tmp_g, scratch.tmp_a, scratch.order
    vkeys, vcounts, vused = memory.vkeys, memory.vcounts, memory.vused
    if not player_position(pr, st, ps, scratch.counts, scratch.hidden):
        return False
    L = pr[P_L]
    o_len = pr[P_OLEN]
    o_down = pr[P_ODOWN]
    o_run = pr[P_ORUN]
    o_cols = pr[P_OCOLS]
    dealt_cols = pr[P_DEALT]
    n_move = pr[P_NMOVE]
    deal_end = n_move + pr[P_NDEAL]
    discard_end = deal_end + pr[P_NDISC]
    any_suit = pr[P_ANYSUIT] != 0
    kings = pr[P_KINGS] != 0
    for k in range(pr[P_SIZE]):  # ch = ps (whole: the stock too)
        ch[k] = ps[k]
    colv = scratch.colv  # the columns' values, each computed once a decision (move gains)
    for c in range(pr[P_C]):
        colv[c] = np.nan
    # the position, counted as visited
    position_key(pr, ps, colh, rest)
    k1 = rest[0] + rest[2]
    k2 = rest[1] + rest[3]
    for c in range(pr[P_C]):
        k1 += colh[c, 0]
        k2 += colh[c, 1]
    s = _slot(vkeys, vcounts, i, k1, k2)
    if vcounts[i, s] == 0:
        vkeys[i, s, 0] = k1
        vkeys[i, s, 1] = k2
        vused[i] += 1
    vcounts[i, s] += 1
    here = vcounts[i, s]
    down_total = 0
    empty = 0
    for c in range(pr[P_C]):
        down_total += ps[o_down + c]
        if ps[o_len + c] == 0:
            empty += 1
    runs = ps[H_COMP] + ps[H_COMP + 1] + ps[H_COMP + 2] + ps[H_COMP + 3]
    deals_left = 0
    for j in range(pr[P_NP]):
        if st[pr[P_OPILE] + j] > 0:
            deals_left += 1
    progress, since = memory.progress, memory.since
    if progress[i, 0] == down_total and progress[i, 1] == runs and progress[i, 2] == deals_left:
        since[i] += 1
    else:
        progress[i, 0] = down_total
        progress[i, 1] = runs
        progress[i, 2] = deals_left
        since[i] = 0
    # the rows, in the order of the legal ids; of the moves of one run into empty columns, one
    # into a dealt column and one into a free column
    n_rows = 0
    cur_sk = -1  # (src, cards) of the last move into an empty column, as src * 256 + cards
    seen_dealt = False  # an empty column before / from the free columns took it already
    seen_free = False
    deal_legal = False
    src, k, dst = -1, 0, -1
    for t in range(legal[0]):
        a = legal[1 + t]
        if a < n_move:
            src, k, dst = decode_move(pr, a)
            if ps[o_len + dst] == 0:
                sk = src * 256 + k
                if sk != cur_sk:
                    cur_sk = sk
                    seen_dealt = False
                    seen_free = False
                if dst < dealt_cols:
                    if seen_dealt:
                        continue
                    seen_dealt = True
                else:
                    if seen_free:
                        continue
                    seen_free = True
        f = tmp_f[n_rows]
        for x in range(N_ACTION_FEATURES):
            f[x] = 0.0
        gain = 0.0
        if a < n_move or (deal_end <= a and a < discard_end):
            # a move or a discard: played on ch (ps's copy), read, undone; one call site each
            # (numba inlines apply_action and move_gain at every call site)
            if a < n_move:
                col1, col2 = src, dst
            else:
                col1, col2 = a - deal_end, -1
                f[2] = 1.0
            apply_action(pr, ch, a)
            gain = move_gain(pr, w, ps, colv, ch, col1, col2)
            runs_after = ch[H_COMP] + ch[H_COMP + 1] + ch[H_COMP + 2] + ch[H_COMP + 3]
            f[13] = 1.0 if runs_after > runs else 0.0
            if a < n_move:
                d_len = ps[o_len + dst]
                f[0] = 1.0
                s_len = ps[o_len + src]
                d_src = ps[o_down + src]
                d_dst = ps[o_down + dst]
                up = s_len - d_src
                sbase = o_cols + src * L
                head = ps[sbase + s_len - k]
                reveals = k == up and d_src > 0
                f[4] = k / 13.0
                f[5] = 1.0 if reveals else 0.0
                f[6] = 1.0 if k == s_len else 0.0
                f[7] = 1.0 if d_len == 0 else 0.0
                if d_len > 0:
                    top = ps[o_cols + dst * L + d_len - 1]
                    suited = top == head + 1 and head % N_RANKS != KING
                    f[8] = 1.0 if suited else 0.0
                    f[9] = 1.0 if (not suited) and top % N_RANKS == head % N_RANKS + 1 else 0.0
                if k < up:
                    below = ps[sbase + s_len - k - 1]
                    if below == head + 1 and head % N_RANKS != KING:
                        f[10] = 1.0
                    elif below % N_RANKS == head % N_RANKS + 1:
                        f[11] = 1.0
                f[12] = ch[o_run + dst] / 13.0
                f[14] = d_src / 6.0
                f[15] = d_dst / 6.0
                if not reveals:
                    # the child's key: the parent's with src, dst and the runs hashed again
                    c1 = k1 - colh[src, 0] - colh[dst, 0] - rest[2]
                    c2 = k2 - colh[src, 1] - colh[dst, 1] - rest[3]
                    _column_hash(pr, ch, src, rest, 4)
                    c1 += rest[4]
                    c2 += rest[5]
                    _column_hash(pr, ch, dst, rest, 4)
                    c1 += rest[4]
                    c2 += rest[5]
                    _comp_hash(ch, rest, 4)
                    c1 += rest[4]
                    c2 += rest[5]
                    seen = vcounts[i, _slot(vkeys, vcounts, i, c1, c2)]
                    f[18] = min(seen / 3.0, 1.0)
                if empty > 0 and d_len == 0 and s_len == k:
                    f[19] = 1.0
                f[20] = (head % N_RANKS) / 12.0
                if d_len == 0 and k < s_len and dst < dealt_cols:
                    f[21] = 1.0
                if not reveals:
                    f[22] = (up - k) / 13.0
                if reveals and d_src == 1:
                    f[23] = 1.0
                splits = not reveals and k < up
                takes_dst = ch[o_len + dst] > ch[o_down + dst]
                if (splits or takes_dst) and not is_won(pr, ch):
                    # the child's legal moves (none once won), asked only what is needed
                    empty_ch = target_masks(pr, ch, keys)
                    if splits:
                        rest_up = ch[o_len + src] - ch[o_down + src]
                        if ch[o_down + src] > 0 and 0 < rest_up <= movable(pr, ch, src):
                            head_rest = _card(pr, ch, src, rest_up)
                            if card_targets(keys, empty_ch, head_rest, src, any_suit, kings):
                                f[24] = 1.0  # the rest of src's face-up cards can move
                        f[25] = _takes_run(pr, ch, keys, empty_ch, src, src, any_suit, kings)
                    if takes_dst:
                        f[26] = _takes_run(pr, ch, keys, empty_ch, dst, src, any_suit, kings)
            _restore(pr, ps, ch, col1, col2)
        elif a < deal_end:
            f[1] = 1.0
            deal_legal = True
        else:  # undo (the compiled core plays no undo variant: never reached)
            f[3] = 1.0
            gain = -100.0
        f[16] = min(max(gain / 100.0, -20.0), 20.0)
        tmp_g[n_rows] = gain
        tmp_a[n_rows] = a
        n_rows += 1
    kept, best, improving = _keep_rows(pr, n_rows, i, feats, ids, tmp_f, tmp_g, tmp_a, order)
    g = glob[i]
    g[0] = deals_left / max(1, pr[P_NP])
    g[1] = runs / max(1, pr[P_NCARDS] // N_RANKS)
    g[2] = down_total / 44.0
    g[3] = empty / pr[P_C]
    g[4] = kept / 50.0
    g[5] = min(max(best / 100.0, -20.0), 20.0)
    g[6] = improving / 10.0
    g[7] = min(memory.since[i] / 50.0, 2.0)
    g[8] = min(here / 5.0, 1.0)
    g[9] = 1.0 if deal_legal else 0.0
    g[10] = memory.decisions[i] / 1000.0
    memory.decisions[i] += 1
    return True


@jit
def forget(i: int, memory: Memory) -> None:
    """Game ``i`` starts an episode: its memory is emptied (``ActionFeatureEncoder.reset``)."""
    if memory.vused[i]:
        for j in range(memory.vcounts.shape[1]):
            memory.vcounts[i, j] = 0
    memory.vused[i] = 0
    memory.since[i] = 0
    for x in range(3):
        memory.progress[i, x] = -1
    memory.decisions[i] = 0


@jit
def encode_rows(
    pr: np.ndarray,
    w: np.ndarray,
    states: np.ndarray,
    legal: np.ndarray,
    rows: np.ndarray,
    fresh: np.ndarray,
    feats: np.ndarray,
    ids: np.ndarray,
    glob: np.ndarray,
    memory_fields: tuple,
    scratch_fields: tuple,
) -> int:
    """One decision of each game ``rows[r]`` (:func:`encode_game`), after forgetting its episode
    where ``fresh[r] >= 0`` (a game that starts: the batched step passes its ``resets``).
    Returns -1, or the first game with a column longer than the table observation's bound.

    ``memory_fields``, ``scratch_fields``: ``tuple(memory)``, ``tuple(scratch)`` (a
    :class:`Memory`, a :class:`Scratch`), named again here: numba's dispatcher reads a plain
    tuple faster than a NamedTuple (measured: about 2 microseconds a call less, a tenth of a
    single env's step in ``obs_mode="actions"``)."""
    memory = Memory(*borrowed(memory_fields))  # (borrowed: see fast.jit.borrowed)
    scratch = Scratch(*borrowed(scratch_fields))
    pr, w, states, legal, rows, fresh = (
        borrowed(pr), borrowed(w), borrowed(states), borrowed(legal), borrowed(rows),
        borrowed(fresh),
    )  # fmt: skip
    feats, ids, glob = borrowed(feats), borrowed(ids), borrowed(glob)
    overflow = -1
    for r in range(rows.shape[0]):
        i = rows[r]
        if fresh[r] >= 0:
            forget(i, memory)
        ok = encode_game(pr, w, states[i], legal[i], i, feats, ids, glob, memory, scratch)
        if not ok and overflow < 0:
            overflow = i
    return overflow


refresh_cache(globals())
