"""The compiled core: the rules of :mod:`spider_env.core.rules` over the state vectors of
:mod:`spider_env.fast.layout`, compiled with numba (``njit``, ``cache=True``).

This module is the one permitted mirror of the pure engine: the same legality, the same next
state, checked against it by ``tests/test_fast_differential.py`` and ``make differential``.
Importing it needs numba; :mod:`spider_env.fast` decides whether it is available.

Functions work in place on ``int32`` state vectors (a row of a ``(N, S)`` batch is one):

* :func:`legal_ids` writes the sorted legal action ids, :func:`apply_action` plays a legal one
  and returns the columns it changed (a bit mask);
* :func:`reset_deal` lays out deal ``n`` of the generator (SplitMix64 + Fisher-Yates, as
  :mod:`spider_env.core.deals`);
* :func:`write_table` / :func:`write_features` fill observation rows;
* :func:`step_batch` steps ``N`` games in one call (mask, observation, reward, autoreset).
"""

from __future__ import annotations

import numpy as np
from numba import njit

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
    P_COPIES,
    P_DEALT,
    P_DECK_AT,
    P_DECODE_AT,
    P_DOWNNORM,
    P_FACEDOWN_AT,
    P_KINGS,
    P_L,
    P_LAYOUT_AT,
    P_LOBS,
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
    P_PILES_AT,
    P_PS,
    P_R,
    P_SCORING,
    P_SIZE,
    P_SLOTS_AT,
    P_SUITED,
    P_SUITS,
    P_TOPVIS,
    P_TOWIN,
    R_RUNS,
    R_SCORE,
    R_SHAPED,
    R_WIN,
)

_jit = njit(cache=True, nogil=True, boundscheck=False)
# The per-game functions of the batched step take row views of the batch; numba inlines them
# into their callers (its own IR inlining), so the views never cross a call and cost nothing
# (passed to a real call, each view is reference-counted: measured ~90 ns per game and step).
_jit_inline = njit(cache=True, nogil=True, boundscheck=False, inline="always")
N_RANKS = 13
KING = 12
# card id -> rank - 1 (0 = Ace .. 12 = King): a table lookup instead of Python-semantics modulo
_RANK = np.array([c % N_RANKS for c in range(52)], dtype=np.int64)


@_jit_inline
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


@_jit
def completed_runs(st: np.ndarray) -> int:
    return st[H_COMP] + st[H_COMP + 1] + st[H_COMP + 2] + st[H_COMP + 3]


@_jit
def deals_left(pr: np.ndarray, st: np.ndarray) -> int:
    o = pr[P_OPILE]
    n = 0
    for j in range(pr[P_NP]):
        if st[o + j] > 0:
            n += 1
    return n


@_jit
def score(pr: np.ndarray, st: np.ndarray) -> int:
    """``State.score``."""
    runs = completed_runs(st)
    if pr[P_SCORING] == 0:
        return 500 - st[H_MOVES] - st[H_DEALS] - st[H_UNDOS] + 100 * runs
    bonus = 100 if runs >= pr[P_TOWIN] and st[H_FREE] == 0 else 0
    return 25 * st[H_REVEALS] + 100 * runs + bonus


@_jit_inline
def legal_ids(pr: np.ndarray, st: np.ndarray, out: np.ndarray, keys: np.ndarray) -> int:
    """Write the legal action ids of ``st`` in increasing order into ``out``; return how many.

    ``keys`` is scratch space of at least 52 int64. Mirrors ``rules._compute_legal``.
    """
    if completed_runs(st) >= pr[P_TOWIN]:
        return 0
    C = pr[P_C]
    R = pr[P_R]
    L = pr[P_L]
    o_len = pr[P_OLEN]
    o_cols = pr[P_OCOLS]
    any_suit = pr[P_ANYSUIT] != 0
    kings = pr[P_KINGS] != 0
    # keys[x]: bit mask of the columns a card of key x may go on, where x is the card's rank
    # (any-suit building) or its id (same-suit); nothing goes on an Ace.
    for x in range(N_RANKS if any_suit else 52):
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
    n = 0
    suited = pr[P_SUITED] != 0
    o_run = pr[P_ORUN]
    o_down = pr[P_ODOWN]
    for src in range(C):
        ln = st[o_len + src]
        if ln == 0:
            continue
        kmax = st[o_run + src] if suited else ln - st[o_down + src]
        base = o_cols + src * L + ln
        others = ~(1 << src)
        for k in range(1, kmax + 1):
            moved = st[base - k]
            bits = keys[_RANK[moved] if any_suit else moved]
            if empty and (not kings or _RANK[moved] == KING):
                bits |= empty
            bits &= others
            if bits:
                a0 = (src * R + k - 1) * C
                d = 0
                while bits:
                    if bits & 1:
                        out[n] = a0 + d
                        n += 1
                    bits >>= 1
                    d += 1
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


@_jit_inline
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


@_jit_inline
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
        parts = pr[pr[P_DECODE_AT] + a]
        src = parts & 0xFF
        k = (parts >> 8) & 0xFF
        dst = parts >> 16
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


@_jit
def _next64(x: np.uint64) -> tuple[np.uint64, np.uint64]:
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x, z ^ (z >> np.uint64(31))


@_jit
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
            x, r = _next64(x)
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


# --- observations -------------------------------------------------------------------------------


@_jit_inline
def write_table(
    pr: np.ndarray,
    st: np.ndarray,
    dirty: int,
    full: bool,
    tab: np.ndarray,
    comp: np.ndarray,
    tops: np.ndarray,
) -> int:
    """The ``dict`` observation (``observation.TableEncoder``) of the columns in bit mask
    ``dirty``: ``tab`` is the ``"tableau"`` as one flat ``int8`` row (``C * L``, column ``c`` at
    ``c * L``, ``L = max_column_length``), then ``comp`` (4) and ``tops`` (P, filled only where
    pile tops are visible). Returns deals left, or -1 when a column holds more than ``L`` cards
    (only positions given as a ``State`` get there): the caller raises, as ``TableEncoder``
    does. ``tab`` must hold the previous observation (or zeros): past a column's cards only its
    nonzero tail is cleared, and with ``full=False`` (a step, not a reset) the face-down
    prefix, which a step never changes, is not rewritten."""
    C = pr[P_C]
    L = pr[P_L]
    Lo = pr[P_LOBS]
    o_cols = pr[P_OCOLS]
    o_len = pr[P_OLEN]
    o_down = pr[P_ODOWN]
    for c in range(C):
        if dirty & (1 << c):
            ln = st[o_len + c]
            if ln > Lo:
                return -1
            d = st[o_down + c]
            base = o_cols + c * L
            row = c * Lo
            if full:
                for i in range(d):
                    tab[row + i] = 1
            for i in range(d, ln):
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


@_jit
def _card_slot(row: np.ndarray, off: int, card: int, has_suit: bool) -> None:
    row[off + card % N_RANKS] = 1.0
    if has_suit:
        row[off + N_RANKS + card // N_RANKS] = 1.0


@_jit_inline
def write_features(pr: np.ndarray, st: np.ndarray, dirty: int, slots: int, row: np.ndarray) -> None:
    """The learning encoding (``observation.FeatureEncoder``) into one flat ``float32`` row:
    column ``c`` at ``c * F`` (only the columns in bit mask ``dirty``), then the globals at
    ``C * F``."""
    C = pr[P_C]
    L = pr[P_L]
    suits = pr[P_SUITS]
    has_suit = suits > 1
    width = N_RANKS + (suits if has_suit else 0)
    F = 4 + (slots + 1) * width
    down_norm = float(pr[P_DOWNNORM])
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
            row[off] = down / down_norm
            row[off + 1] = up / N_RANKS
            row[off + 2] = 1.0 if n == 0 else 0.0
            row[off + 3] = run / N_RANKS
            if run:
                _card_slot(row, off + 4, st[base + n - run], has_suit)
            first = off + 4 + width
            for i in range(min(slots, up)):
                _card_slot(row, first + i * width, st[base + n - 1 - i], has_suit)
    g = C * F
    n_piles = pr[P_NP]
    topvis = pr[P_TOPVIS] != 0
    n_glob = 6 + (n_piles * width if topvis else 0)
    for i in range(n_glob):
        row[g + i] = 0.0
    if n_piles:
        row[g] = deals_left(pr, st) / n_piles
    runs = completed_runs(st)
    row[g + 1] = min(runs / pr[P_TOWIN], 1.0)
    per = pr[P_COPIES]
    for s in range(4):
        row[g + 2 + s] = st[H_COMP + s] / per
    if topvis:
        o_pile = pr[P_OPILE]
        for j in range(n_piles):
            if st[o_pile + j] > 0:
                _card_slot(row, g + 6 + j * width, st[pr[P_OSTOCK] + j * pr[P_PS]], has_suit)


# --- rewards ------------------------------------------------------------------------------------


@_jit
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


@_jit_inline
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


# --- pieces of a step ---------------------------------------------------------------------------


@_jit_inline
def _write_obs(
    pr: np.ndarray,
    st: np.ndarray,
    dirty: int,
    full: bool,
    obs_kind: int,
    slots: int,
    tab: np.ndarray,
    comp: np.ndarray,
    tops: np.ndarray,
    feat: np.ndarray,
) -> int:
    """The observation of the ``dirty`` columns (``obs_kind`` 0: the table, 1: the features
    row); returns deals left, or -1 when the table cannot hold a column."""
    if obs_kind == 0:
        return write_table(pr, st, dirty, full, tab, comp, tops)
    write_features(pr, st, dirty, slots, feat)
    return deals_left(pr, st)


@_jit_inline
def _new_mask(pr: np.ndarray, mask: np.ndarray, legal: np.ndarray, n: int) -> None:
    """``mask`` True exactly at the ``n`` ids of ``legal``."""
    for i in range(pr[P_NACT]):
        mask[i] = False
    for i in range(n):
        mask[legal[i]] = True


@_jit_inline
def _set_info(st: np.ndarray, n: int, dl: int, score1: int, info: np.ndarray) -> None:
    """``info = [n_legal, deals_left, score, moves, completed_runs]``."""
    info[0] = n
    info[1] = dl
    info[2] = score1
    info[3] = st[H_MOVES]
    info[4] = completed_runs(st)


# --- one step of one game -----------------------------------------------------------------------


@_jit
def step_one(
    pr: np.ndarray,
    st: np.ndarray,
    a: int,
    mask: np.ndarray,
    legal: np.ndarray,
    keys: np.ndarray,
    mode: int,
    w: np.ndarray,
    obs_kind: int,
    slots: int,
    tab: np.ndarray,
    comp: np.ndarray,
    tops: np.ndarray,
    feat: np.ndarray,
    info: np.ndarray,
) -> float:
    """One legal action of a single env: apply, legal ids + mask, observation, reward.

    ``obs_kind`` 0 writes the table observation, 1 the features row. ``info`` receives
    ``[n_legal, deals_left, score, moves, completed_runs]``. Returns the reward.
    """
    s0 = score(pr, st)
    r0 = completed_runs(st)
    v0 = st[H_REVEALS]
    dirty = apply_action(pr, st, a)
    n = legal_ids(pr, st, legal, keys)
    _new_mask(pr, mask, legal, n)
    dl = _write_obs(pr, st, dirty, False, obs_kind, slots, tab, comp, tops, feat)
    s1 = score(pr, st)
    _set_info(st, n, dl, s1, info)
    return reward_of(pr, mode, w, s0, r0, v0, s1, st)


@_jit
def observe_one(
    pr: np.ndarray,
    st: np.ndarray,
    mask: np.ndarray,
    legal: np.ndarray,
    keys: np.ndarray,
    obs_kind: int,
    slots: int,
    tab: np.ndarray,
    comp: np.ndarray,
    tops: np.ndarray,
    feat: np.ndarray,
    info: np.ndarray,
) -> None:
    """Legal ids, mask, the whole observation and ``info`` of ``st`` (after a reset)."""
    n = legal_ids(pr, st, legal, keys)
    _new_mask(pr, mask, legal, n)
    full = (1 << pr[P_C]) - 1
    dl = _write_obs(pr, st, full, True, obs_kind, slots, tab, comp, tops, feat)
    _set_info(st, n, dl, score(pr, st), info)


# --- N games in one call ------------------------------------------------------------------------


@_jit
def step_batch(
    pr: np.ndarray,
    states: np.ndarray,
    actions: np.ndarray,
    resets: np.ndarray,
    masks: np.ndarray,
    legal: np.ndarray,
    keys: np.ndarray,
    mode: int,
    w: np.ndarray,
    terminate_illegal: bool,
    obs_kind: int,
    slots: int,
    tab: np.ndarray,
    comp: np.ndarray,
    tops: np.ndarray,
    feat: np.ndarray,
    rewards: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    ended: np.ndarray,
    elapsed: np.ndarray,
    max_steps: int,
    illegal: np.ndarray,
    info: np.ndarray,
) -> int:
    """Step every game ``i`` of a batch (``SpiderVectorEnv.step``):

    * ``resets[i] >= 0``: lay out deal ``resets[i]`` instead (the next-step autoreset: reward 0,
      not terminated, not truncated, ``elapsed[i] = 0``);
    * a game with no legal action (only a game dealt that way: ended games are reset first)
      ends: reward 0, terminated, state unchanged;
    * else play ``actions[i]`` if ``masks[i]`` allows it, or refuse it (state unchanged, reward
      ``w[0]``, ``illegal[i]``, terminated when ``terminate_illegal``).

    Masks, legal ids (``legal[i, 0]`` holds the count, ids follow), observations, rewards,
    ``terminated``, ``truncated`` (``elapsed[i] >= max_steps`` after counting the step, when
    ``max_steps > 0``), ``ended = terminated | truncated`` and ``info[i] = [n_legal, deals_left,
    score, moves, completed_runs]`` are written for every game.

    Returns how many games ended; or ``-1 - i`` (before changing anything) where game ``i``'s
    action is out of range (actions of games being reset are ignored); or ``-1 - N - i`` after
    the step when game ``i``'s table observation could not hold a column (``write_table``)."""
    N = states.shape[0]
    n_act = pr[P_NACT]
    for i in range(N):
        if resets[i] < 0 and (actions[i] < 0 or actions[i] >= n_act):
            return -1 - i
    full = (1 << pr[P_C]) - 1
    n_ended = 0
    overflow = -1
    for i in range(N):
        st = states[i]
        lg = legal[i]
        mk = masks[i]
        n_old = lg[0]
        illegal[i] = False
        if resets[i] >= 0:
            reset_deal(pr, st, np.uint64(resets[i]))
            dirty = full
            rewards[i] = 0.0
            elapsed[i] = 0
        else:
            elapsed[i] += 1
            a = actions[i]
            if n_old == 0 or not mk[a]:
                if n_old == 0:  # dealt with no legal action: the game ends here
                    rewards[i] = 0.0
                    terminated[i] = True
                else:
                    illegal[i] = True
                    rewards[i] = w[0]
                    terminated[i] = terminate_illegal
                truncated[i] = max_steps > 0 and elapsed[i] >= max_steps
                ended[i] = terminated[i] or truncated[i]
                if ended[i]:
                    n_ended += 1
                info[i, 0] = n_old
                if obs_kind == 0:
                    info[i, 1] = write_table(pr, st, 0, False, tab[i], comp[i], tops[i])
                else:
                    info[i, 1] = deals_left(pr, st)
                continue
            s0 = info[i, 2]  # the score and runs of the position before (always kept)
            r0 = info[i, 4]
            v0 = st[H_REVEALS]
            dirty = apply_action(pr, st, a)
            s1 = score(pr, st)
            info[i, 2] = s1
            rewards[i] = reward_of(pr, mode, w, s0, r0, v0, s1, st)
        for j in range(n_old):
            mk[lg[1 + j]] = False
        n = legal_ids(pr, st, lg[1:], keys)
        lg[0] = n
        for j in range(n):
            mk[lg[1 + j]] = True
        if resets[i] >= 0:
            terminated[i] = False
            truncated[i] = False
        else:
            terminated[i] = n == 0
            truncated[i] = max_steps > 0 and elapsed[i] >= max_steps
        ended[i] = terminated[i] or truncated[i]
        if ended[i]:
            n_ended += 1
        # (written out, not through _write_obs / _set_info: their extra row views measured 8%
        # slower here)
        if obs_kind == 0:
            dl = write_table(pr, st, dirty, resets[i] >= 0, tab[i], comp[i], tops[i])
            if dl < 0 and overflow < 0:
                overflow = i
        else:
            write_features(pr, st, dirty, slots, feat[i])
            dl = deals_left(pr, st)
        info[i, 0] = n
        info[i, 1] = dl
        if resets[i] >= 0:  # a step stored the new score already
            info[i, 2] = score(pr, st)
        info[i, 3] = st[H_MOVES]
        info[i, 4] = completed_runs(st)
    if overflow >= 0:
        return -1 - N - overflow
    return n_ended


@_jit
def observe_rows(
    pr: np.ndarray,
    states: np.ndarray,
    rows: np.ndarray,
    masks: np.ndarray,
    legal: np.ndarray,
    keys: np.ndarray,
    obs_kind: int,
    slots: int,
    tab: np.ndarray,
    comp: np.ndarray,
    tops: np.ndarray,
    feat: np.ndarray,
    info: np.ndarray,
) -> int:
    """Rebuild legal ids, mask, the whole observation and ``info`` of the games ``rows`` (after
    their states were set from outside: a reset). Returns -1, or the first game whose table
    observation could not hold a column."""
    full = (1 << pr[P_C]) - 1
    overflow = -1
    for r in range(rows.shape[0]):
        i = rows[r]
        st = states[i]
        lg = legal[i]
        n = legal_ids(pr, st, lg[1:], keys)
        lg[0] = n
        _new_mask(pr, masks[i], lg[1:], n)
        dl = _write_obs(pr, st, full, True, obs_kind, slots, tab[i], comp[i], tops[i], feat[i])
        if dl < 0 and overflow < 0:
            overflow = i
        _set_info(st, n, dl, score(pr, st), info[i])
    return overflow


@_jit
def reset_rows(pr: np.ndarray, states: np.ndarray, rows: np.ndarray, deals: np.ndarray) -> None:
    """Lay out deal ``deals[r]`` (uint64) in game ``rows[r]`` for each ``r``."""
    for r in range(rows.shape[0]):
        reset_deal(pr, states[rows[r]], deals[r])


@_jit
def sample_legal(legal: np.ndarray, out: np.ndarray, seed: np.uint64) -> np.uint64:
    """A uniformly random legal id per game (``legal[i, 0]`` ids in ``legal[i, 1:]``), or
    ``-1`` where none; for benchmarks and random baselines. Returns the next seed (a uint64:
    from Python, pass it back as ``np.uint64(seed)``, since a plain int of 2**63 or more does
    not convert)."""
    x = np.uint64(seed)
    for i in range(legal.shape[0]):
        n = legal[i, 0]
        if n == 0:
            out[i] = -1
            continue
        x, r = _next64(x)
        out[i] = legal[i, 1 + np.int64(r % np.uint64(n))]
    return x


@_jit
def state_hash(pr: np.ndarray, st: np.ndarray) -> np.uint64:
    """64-bit FNV-1a of the position (cards, face-down counts, stock, completed runs; no
    counters), equal for equal positions."""
    h = np.uint64(0xCBF29CE484222325)
    prime = np.uint64(0x100000001B3)
    size = pr[P_SIZE]
    for i in range(H_COMP, size):
        h = (h ^ np.uint64(st[i] & 0xFF)) * prime
    return h


__all__ = [
    "H_DEALS",
    "H_FREE",
    "H_MOVES",
    "H_REVEALS",
    "H_UNDOS",
    "R_RUNS",
    "R_SCORE",
    "R_SHAPED",
    "R_WIN",
    "apply_action",
    "legal_ids",
    "observe_rows",
    "reset_deal",
    "reset_rows",
    "run_length",
    "sample_legal",
    "score",
    "state_hash",
    "step_batch",
    "step_one",
    "write_features",
    "write_table",
]
