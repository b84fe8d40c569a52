"""Steps of whole env transitions, compiled, over the buffers of ``N`` games (the compiled
engine of :mod:`spider_env.engine`): one legal action of one game (:func:`step_one`, the single
env's step), every game in one call (:func:`step_batch`, with next-step autoreset), games set from
outside (:func:`reset_rows` + :func:`observe_rows`) and :func:`sample_legal`: apply, legal ids and
mask, observation, reward and step bookkeeping, each from its own module
(:mod:`~spider_env.fast.rules`, :mod:`~spider_env.fast.deals`, :mod:`~spider_env.fast.observe`,
:mod:`~spider_env.fast.rewards`).

The buffers of a batch are one :class:`Batch` (game ``i``'s are the rows ``i``), what a step
computes and writes one :class:`StepConfig`; the batched functions take them by name.
"""

from __future__ import annotations

import numpy as np

from spider_env.fast.access import decode_move
from spider_env.fast.buffers import Batch, StepConfig
from spider_env.fast.deals import next64, reset_deal
from spider_env.fast.jit import borrowed, jit, jit_inline, prefetch, refresh_cache
from spider_env.fast.layout import (
    H_MOVES,
    H_REVEALS,
    P_C,
    P_L,
    P_LOBS,
    P_NACT,
    P_NMOVE,
    P_OCOLS,
    P_ODOWN,
    P_OLEN,
)
from spider_env.fast.observe import write_features, write_table
from spider_env.fast.rewards import reward_of
from spider_env.fast.rules import apply_action, completed_runs, deals_left, legal_ids, score

# --- pieces of a step ---------------------------------------------------------------------------


@jit_inline
def _write_obs(
    pr: np.ndarray,
    st: np.ndarray,
    dirty: int,
    full: bool,
    obs_kind: int,
    flay: np.ndarray,
    tab: np.ndarray,
    comp: np.ndarray,
    tops: np.ndarray,
    feat: np.ndarray,
    before: np.ndarray,
) -> int:
    """The observation of the ``dirty`` columns (``obs_kind`` 0: the table, 1: the features
    row, 2: none here: the per-action features are written by
    :mod:`~spider_env.fast.action_features`); returns deals left, or -1 when the table cannot
    hold a column. ``before``: the columns' lengths before the step (``write_table``'s)."""
    if obs_kind == 0:
        return write_table(pr, st, dirty, full, tab, comp, tops, before)
    if obs_kind == 1:
        write_features(pr, st, dirty, flay, feat)
    return deals_left(pr, st)


@jit_inline
def _new_mask(pr: np.ndarray, mask: np.ndarray, legal: np.ndarray, n: int) -> None:
    """``mask`` True exactly at the ``n`` ids of ``legal``."""
    for i in range(pr[P_NACT]):
        mask[i] = False
    for i in range(n):
        mask[legal[i]] = True


@jit_inline
def _listed(lg: np.ndarray, a: int) -> bool:
    """Whether ``a`` is one of the ``lg[0]`` legal ids ``lg[1:]`` (increasing: a binary
    search). The mask says the same; the batched step reads the ids, which it writes anyway,
    so that it need not keep the mask (``keep_masks=False``)."""
    lo = 1
    hi = lg[0] + 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if lg[mid] < a:
            lo = mid + 1
        else:
            hi = mid
    return lo <= lg[0] and lg[lo] == a


@jit
def masks_from_legal(legal: np.ndarray, out: np.ndarray) -> None:
    """Set ``out[i, a]`` for each of game ``i``'s legal ids (``legal[i, 0]`` ids in
    ``legal[i, 1:]``); ``out`` comes all False (the masks of a batch stepped with
    ``keep_masks=False``, built fresh)."""
    for i in range(legal.shape[0]):
        for j in range(legal[i, 0]):
            out[i, legal[i, 1 + j]] = True


@jit_inline
def _prefetch_game(
    pr: np.ndarray,
    states: np.ndarray,
    legal: np.ndarray,
    masks: np.ndarray,
    tab: np.ndarray,
    actions: np.ndarray,
    resets: np.ndarray,
    obs_kind: int,
    i: int,
    ahead: int,
    keep_masks: bool,
) -> None:
    """Cache hints for the games after game ``i``: the state header and first legal ids of
    game ``i + 2 * ahead``; for game ``i + ahead``, whose header was asked for ``ahead`` games
    ago, the top card of each column, the mask bytes of its legal ids (``keep_masks``) and,
    when its action is a move, the face-up cards of the two columns it changes (in the state
    and, for the table observation, in the observation's row). The hardware cannot foresee
    these rows, so without the hints a batch too large for the CPU's caches waits on memory at
    every game (:data:`spider_env.engine.PREFETCH_FROM`)."""
    N = states.shape[0]
    j = i + 2 * ahead
    if j < N:
        prefetch(states, j, 0)
        prefetch(states, j, 16)
        prefetch(states, j, 32)
        prefetch(legal, j, 0)
        prefetch(legal, j, 16)
    j = i + ahead
    if j >= N:
        return
    o_len, o_down, o_cols, L = pr[P_OLEN], pr[P_ODOWN], pr[P_OCOLS], pr[P_L]
    for c in range(pr[P_C]):
        ln = states[j, o_len + c]
        if ln > 0:
            prefetch(states, j, o_cols + c * L + ln - 1)
    if keep_masks:
        for k in range(legal[j, 0]):
            prefetch(masks, j, legal[j, 1 + k])
    a = actions[j]
    if resets[j] >= 0 or a < 0 or a >= pr[P_NMOVE]:
        return
    src, k, dst = decode_move(pr, a)
    Lo = pr[P_LOBS]
    for c in (src, dst):
        d = states[j, o_down + c]
        end = states[j, o_len + c] + (k if c == dst else 0)
        for x in range(o_cols + c * L + d, o_cols + c * L + end, 16):  # 16 int32 a line
            prefetch(states, j, x)
        if obs_kind == 0:
            for x in range(c * Lo + d, c * Lo + end + 1, 64):  # 64 int8 a line
                prefetch(tab, j, x)


@jit_inline
def _set_info(st: np.ndarray, n: int, dl: int, score1: int, info: np.ndarray) -> None:
    """``info = [n_legal, deals_left, score, moves, completed_runs]``."""
    info[0] = n
    info[1] = dl
    info[2] = score1
    info[3] = st[H_MOVES]
    info[4] = completed_runs(st)


# --- one step of one game -----------------------------------------------------------------------


@jit
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
    flay: np.ndarray,
    tab: np.ndarray,
    comp: np.ndarray,
    tops: np.ndarray,
    feat: np.ndarray,
    info: np.ndarray,
) -> float:
    """Legal action ``a`` of one game (the rows of its buffers, see the module docstring):
    apply, legal ids + mask, observation, ``info``. Returns the reward."""
    pr, st, mask, legal, keys, w = (
        borrowed(pr),
        borrowed(st),
        borrowed(mask),
        borrowed(legal),
        borrowed(keys),
        borrowed(w),
    )
    flay, tab, comp, tops = borrowed(flay), borrowed(tab), borrowed(comp), borrowed(tops)
    feat, info = borrowed(feat), borrowed(info)
    s0 = info[2]  # the score and runs of the position before (always kept)
    r0 = info[4]
    v0 = st[H_REVEALS]
    for j in range(legal[0]):
        mask[legal[1 + j]] = False
    dirty = apply_action(pr, st, a)
    n = legal_ids(pr, st, legal[1:], keys)
    legal[0] = n
    for j in range(n):
        mask[legal[1 + j]] = True
    # (every face-up card of the changed columns written again: lengths before the action
    # would spare most of that, but not the allocation they need, in a step of one game)
    dl = _write_obs(pr, st, dirty, False, obs_kind, flay, tab, comp, tops, feat, keys[:0])
    s1 = score(pr, st)
    _set_info(st, n, dl, s1, info)
    return reward_of(pr, mode, w, s0, r0, v0, s1, st)


# --- N games in one call ------------------------------------------------------------------------


@jit
def step_batch(
    pr: np.ndarray,
    batch_fields: tuple,
    config_fields: tuple,
    actions: np.ndarray,
    resets: np.ndarray,
    max_steps: int,
    keep_masks: bool,
) -> int:
    """Step every game ``i`` of a batch (``SpiderVectorEnv.step``):

    * ``resets[i] >= 0``: lay out deal ``resets[i]`` instead (the next-step autoreset: reward 0,
      not terminated, not truncated, ``elapsed[i] = 0``);
    * a game with no legal action (only a game dealt that way: ended games are reset first)
      ends: reward 0, terminated, state unchanged;
    * else play ``actions[i]`` if it is one of its legal ids, or refuse it (state unchanged,
      reward ``w[0]``, ``illegal[i]``, terminated when ``terminate_illegal``).

    Legal ids, observations, rewards, ``terminated``, ``truncated`` (``elapsed[i] >= max_steps``
    after counting the step, when ``max_steps > 0``), ``ended = terminated | truncated`` and
    ``info`` are written for every game (the fields of ``b``); the masks only with
    ``keep_masks`` (otherwise they are left as they were, for the caller to rebuild from the
    legal ids: :func:`masks_from_legal`).

    Returns how many games ended; or ``-1 - i`` (before changing anything) where game ``i``'s
    action is out of range (actions of games being reset are ignored); or ``-1 - N - i`` after
    the step when game ``i``'s table observation could not hold a column (``write_table``).

    ``batch_fields``, ``config_fields``: ``tuple(batch)``, ``tuple(config)`` (a :class:`Batch`,
    a :class:`StepConfig`), named again here (numba's dispatcher reads a plain tuple faster than
    a NamedTuple: about 5 microseconds a call less, measured at N = 1).

    Long (about 120 lines): one loop written out, as pieces taking the games' row views were
    slower while views were reference-counted. The buffers are borrowed
    (:func:`spider_env.fast.jit.borrowed`): no view of them is counted."""
    b = Batch(*borrowed(batch_fields))  # (borrowed: see fast.jit.borrowed)
    cfg = StepConfig(*borrowed(config_fields))
    pr, actions, resets = borrowed(pr), borrowed(actions), borrowed(resets)
    states, masks, legal, info = b.states, b.masks, b.legal, b.info
    tab, comp, tops, feat = b.tab, b.comp, b.tops, b.feat
    rewards, terminated, truncated, ended = b.rewards, b.terminated, b.truncated, b.ended
    elapsed, illegal = b.elapsed, b.illegal
    keys, mode, w, obs_kind, flay = cfg.keys, cfg.mode, cfg.w, cfg.obs_kind, cfg.flay
    terminate_illegal = cfg.terminate_illegal
    ahead = cfg.prefetch
    N = states.shape[0]
    n_act = pr[P_NACT]
    for i in range(N):
        if resets[i] < 0 and (actions[i] < 0 or actions[i] >= n_act):
            return -1 - i
    C = pr[P_C]
    full = (1 << C) - 1
    o_len = pr[P_OLEN]
    before = np.empty(C, np.int64)  # a game's column lengths before its action (write_table)
    n_ended = 0
    overflow = -1
    for i in range(N):
        if ahead > 0:
            _prefetch_game(
                pr, states, legal, masks, tab, actions, resets, obs_kind, i, ahead, keep_masks
            )
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
            if n_old == 0 or not (mk[a] if keep_masks else _listed(lg, a)):
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
                    info[i, 1] = write_table(pr, st, 0, False, tab[i], comp[i], tops[i], before)
                else:
                    info[i, 1] = deals_left(pr, st)
                continue
            s0 = info[i, 2]  # the score and runs of the position before (always kept)
            r0 = info[i, 4]
            v0 = st[H_REVEALS]
            if obs_kind == 0:
                for c in range(C):
                    before[c] = st[o_len + c]
            dirty = apply_action(pr, st, a)
            s1 = score(pr, st)
            info[i, 2] = s1
            rewards[i] = reward_of(pr, mode, w, s0, r0, v0, s1, st)
        if keep_masks:
            for j in range(n_old):
                mk[lg[1 + j]] = False
        n = legal_ids(pr, st, lg[1:], keys)
        lg[0] = n
        if keep_masks:
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
        # (written out, not through _write_obs / _set_info: see the docstring)
        if obs_kind == 0:
            dl = write_table(pr, st, dirty, resets[i] >= 0, tab[i], comp[i], tops[i], before)
            if dl < 0 and overflow < 0:
                overflow = i
        else:
            if obs_kind == 1:
                write_features(pr, st, dirty, flay, feat[i])
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


@jit
def observe_rows(
    pr: np.ndarray, batch_fields: tuple, config_fields: tuple, rows: np.ndarray
) -> int:
    """Rebuild legal ids, mask, the whole observation and ``info`` of the games ``rows`` (after
    their states were set from outside: a reset). Returns -1, or the first game whose table
    observation could not hold a column. ``batch_fields``, ``config_fields``: as
    :func:`step_batch`'s."""
    b = Batch(*borrowed(batch_fields))
    cfg = StepConfig(*borrowed(config_fields))
    pr, rows = borrowed(pr), borrowed(rows)
    states, masks, legal, info = b.states, b.masks, b.legal, b.info
    tab, comp, tops, feat = b.tab, b.comp, b.tops, b.feat
    keys, obs_kind, flay = cfg.keys, cfg.obs_kind, cfg.flay
    full = (1 << pr[P_C]) - 1
    overflow = -1
    for r in range(rows.shape[0]):
        i = rows[r]
        st = states[i]
        lg = legal[i]
        n = legal_ids(pr, st, lg[1:], keys)
        lg[0] = n
        _new_mask(pr, masks[i], lg[1:], n)
        dl = _write_obs(
            pr, st, full, True, obs_kind, flay, tab[i], comp[i], tops[i], feat[i], keys[:0]
        )
        if dl < 0 and overflow < 0:
            overflow = i
        _set_info(st, n, dl, score(pr, st), info[i])
    return overflow


@jit
def reset_rows(pr: np.ndarray, states: np.ndarray, rows: np.ndarray, deals: np.ndarray) -> None:
    """Lay out deal ``deals[r]`` (uint64) in game ``rows[r]`` for each ``r``."""
    for r in range(rows.shape[0]):
        reset_deal(pr, states[rows[r]], deals[r])


@jit
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
        x, r = next64(x)
        out[i] = legal[i, 1 + np.int64(r % np.uint64(n))]
    return x


refresh_cache(globals())
