"""``obs_mode="actions"`` on the compiled core (issue 21, item 1): the compiled per-action
features (:mod:`spider_env.fast.action_features`) equal the pure
:class:`~spider_env.observation.actions.ActionFeatureEncoder`, the specification, bit for bit:
rows, ids and globals, decision after decision, episode memory included.

The pure side is the encoder fed what the wrapper feeds it: the ``dict`` observation of the
game's state and its mask, reset when the game starts. Every registered variant is compared on
the compiled engine (variants with undo as ``undo=false``: the compiled core plays no undo
history; with undo they run on the pure engine, whose envs call the encoder itself, compared
with the ``ActionFeatures`` wrapper in ``test_actions_mode_equals_the_wrapper``). Random play
crosses episode boundaries (the batched step's autoresets, a step limit) and refused actions;
planted positions reach what random play seldom does (empty columns and their aliases, rows
past ``action_rows``, completed runs, a last card turned up, optional discards).
"""

from __future__ import annotations

import contextlib
import copy
import random
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import permute_hidden, position
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_properties import plant_kinds, planted_position

import spider_env  # noqa: F401  (registers Spider-v0)
from spider_env.core.state import State
from spider_env.core.variants import VARIANTS, Variant, get_variant
from spider_env.engine import CompiledEngine, Engine, PureEngine, make_engine
from spider_env.env import SpiderEnv
from spider_env.fast import action_features as af
from spider_env.fast.layout import to_array
from spider_env.observation import ColumnOverflowError, TableEncoder
from spider_env.observation.actions import ActionFeatureEncoder
from spider_env.rewards import get_reward_fn
from spider_env.vector import SpiderVectorEnv
from spider_env.wrappers import ActionFeatures

NAMES = sorted(VARIANTS)
KEYS = (("actions", "actions"), ("action_ids", "action_ids"), ("globals", "action_globals"))


def playable(name: str) -> Variant:
    v = get_variant(name)
    return v.with_options(undo=False) if v.undo else v


def engine(
    backend: str, v: Variant, n: int, rows: int, steps: int | None = None, **kw: Any
) -> Engine:
    return make_engine(
        backend, v, n, obs_mode="actions", feature_slots=6, reward_fn=get_reward_fn("score"),
        illegal_reward=-1.0, terminate_illegal=False, action_rows=rows, episode_steps=steps,
        **kw,
    )  # fmt: skip


class Twin:
    """The pure encoders of an engine's games, fed as the wrapper feeds one."""

    def __init__(self, eng: Engine) -> None:
        self.eng = eng
        self.encoders = [ActionFeatureEncoder(eng.variant, eng.action_rows) for _ in range(eng.n)]

    def check(self, fresh: np.ndarray | None = None, games: Any = None) -> None:
        """One decision of each game of ``games`` (all): the engine's rows equal the pure
        encoder's, bit for bit (``fresh[i]``: game ``i`` started, its encoder is reset)."""
        eng = self.eng
        for i in range(eng.n) if games is None else games:
            enc = self.encoders[i]
            if fresh is not None and fresh[i]:
                enc.reset()
            state = eng.state(i)
            want = enc.encode(TableEncoder(eng.variant).encode(state), eng.masks[i])
            for key, buf in KEYS:
                got = getattr(eng.obs, buf)[i]
                assert want[key].dtype == got.dtype == np.float32
                same = np.array_equal(want[key].view(np.uint32), got.view(np.uint32))
                assert same, (key, i, np.argwhere(want[key] != got)[:5], state.to_text())


def play(eng: Engine, twin: Twin, seed: int, steps: int, limit: int, illegal: float) -> int:
    """Random play of every game with the batched step (autoreset of ended games, a step limit,
    some refused actions), each decision checked. Returns how many games restarted."""
    rng = np.random.default_rng(seed)
    restarts = 0
    next_deal = 1000 * seed
    for t in range(steps):
        actions = eng.sample_legal(seed * 7919 + t)
        wild = rng.random(eng.n) < illegal
        actions[wild] = rng.integers(0, eng.n_actions, int(wild.sum()))
        actions[actions < 0] = 0
        resets = np.full(eng.n, -1, dtype=np.int64)
        for i in np.flatnonzero(eng.ended).tolist():
            resets[i] = next_deal
            next_deal += 1
        restarts += int((resets >= 0).sum())
        eng.step(actions, resets, limit)
        twin.check(resets >= 0)
    return restarts


@pytest.mark.parametrize("name", NAMES)
def test_compiled_rows_equal_the_pure_encoder_in_random_play(name: str) -> None:
    v = playable(name)
    for rows, limit in ((96, 40), (5, 25)):  # 5 rows: most decisions overflow
        eng = engine("compiled", v, 6, rows, limit)
        twin = Twin(eng)
        eng.start_deals(np.arange(6), list(range(6)))
        twin.check(np.ones(6, bool))
        assert play(eng, twin, seed=rows, steps=60, limit=limit, illegal=0.05) >= 6


def test_unlimited_episodes_grow_the_tables_and_stay_exact() -> None:
    """Without a step limit the tables of visited positions grow (from 2 slots here, so they
    double again and again) and every visit count stays the pure encoder's."""
    v = get_variant("spider-1suit")
    eng = engine("compiled", v, 3, 96, None)
    assert isinstance(eng, CompiledEngine)
    eng._memory = af.new_memory(3, 2)  # the smallest table: growth from the first decisions
    twin = Twin(eng)
    eng.start_deals(np.arange(3), [5, 6, 7])
    twin.check(np.ones(3, bool))
    assert play(eng, twin, seed=3, steps=150, limit=0, illegal=0.0) == 0
    assert eng._memory[1].shape[1] >= 256  # grew
    assert int(eng._memory[2].max()) * 2 <= eng._memory[1].shape[1]  # at most half full


# --- planted positions ------------------------------------------------------------------------


def _long(v: Variant, s: State) -> bool:
    return max(len(c) for c in s.cols) > v.max_column_length


def check_from(states: list[State], rows: int, steps: int, seed: int = 0) -> None:
    """Start each position in a compiled engine and play a few random steps, every decision
    checked against the pure encoder."""
    v = states[0].variant
    eng = engine("compiled", v, len(states), rows, steps)
    twin = Twin(eng)
    eng.start_states(np.arange(len(states)), states)
    twin.check(np.ones(len(states), bool))
    # a planted column may grow past the observation's bound L: refused alike by both engines
    # (tests/test_backends.py)
    with contextlib.suppress(ColumnOverflowError):
        play(eng, twin, seed, steps, steps, 0.0)


EMPTY_AND_ALIASES = position(
    ["* 9H", "-", "-", "-", "5S 4S 3S", "8D 7D", "KC", "QH JS TD", "6C 5H", "7S"], piles=5
)
LAST_CARD = position(
    ["|2S 9H 8H 7H", "* 6C", "TS", "-", "-", "5S", "4D", "JS", "QH", "KC"], piles=5
)


def test_planted_empty_columns_aliases_and_a_last_card_turned_up() -> None:
    enc = ActionFeatureEncoder(EMPTY_AND_ALIASES.variant)
    mask = np.zeros(EMPTY_AND_ALIASES.variant.n_actions, bool)
    from spider_env.core.rules import legal_actions

    mask[legal_actions(EMPTY_AND_ALIASES)] = True
    enc.encode(TableEncoder(EMPTY_AND_ALIASES.variant).encode(EMPTY_AND_ALIASES), mask)
    assert len(enc.row_of) > len(set(enc.row_of.values())) + 10  # many aliases
    for rows in (96, 8, 3):  # 3 and 8: more actions than rows, ties in gain
        check_from([EMPTY_AND_ALIASES, LAST_CARD], rows, steps=12)


def test_a_winning_move_leaves_no_moves_after_it_in_its_row() -> None:
    # One run wins: AS onto 2S completes it. After it a move would take 3S (left on column 1)
    # onto 4S, 2S onto 3S and 6S onto column 0's 7S, but a won game has no legal moves, so
    # the row's features of the moves after it (24-26) stay 0, as the pure encoder says.
    v = get_variant("spider-1suit").with_options(runs_to_win=1)
    won_next = position(
        ["* 7S KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S", "|9S 3S AS", "4S", "6S", "2S", "5S",
         "8S", "9S", "TS", "JS"], variant=v, piles=5,
    )  # fmt: skip
    check_from([won_next], 96, steps=1)


@pytest.mark.parametrize("name", NAMES)
def test_planted_runs_completed_uncovered_and_discarded(name: str) -> None:
    v = playable(name)
    rng = random.Random(NAMES.index(name))
    states: list[State] = []
    for _ in range(40):
        kinds = rng.sample(plant_kinds(v), k=min(2, len(plant_kinds(v))))
        s = planted_position(v, kinds, rng, gaps=rng.random() < 0.5)
        if s is not None and not _long(v, s):
            states.append(s)
        if len(states) == 4:
            break
    assert states
    check_from(states, 96, steps=8)
    check_from(states, 4, steps=4)


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(st.sampled_from(NAMES), st.integers(0, 2**32), st.integers(1, 12), st.booleans())
def test_any_planted_position_and_rows_give_the_pure_rows(
    name: str, seed: int, rows: int, gaps: bool
) -> None:
    v = playable(name)
    rng = random.Random(seed)
    kinds = [rng.choice(plant_kinds(v)) for _ in range(rng.randint(1, 3))]
    s = planted_position(v, kinds, rng, gaps)
    if s is None or _long(v, s):
        return
    check_from([s], rows, steps=5, seed=seed % 1000)


# --- no hidden card reaches the features ------------------------------------------------------


@pytest.mark.parametrize(
    ("backend", "name"),
    [("compiled", "spider-2suit"), ("compiled", "spider-tournament-2suit undo=false"),
     ("pure", "spider-4suit"), ("pure", "spider-tournament-2suit")],
)  # fmt: skip
def test_hidden_cards_never_change_the_features_with_the_same_memory(
    backend: str, name: str
) -> None:
    """The permutation test on the engines: at each position of a game, a copy of the engine
    (the same episode memory) whose game has its face-down and stock cards shuffled writes the
    same rows, ids and globals for its next decision."""
    v = get_variant(name)
    eng = engine(backend, v, 1, 96)
    eng.start_deals(np.zeros(1, np.int64), [4])
    rng = np.random.default_rng(0)
    moved = 0
    for t in range(80):
        state = eng.state(0)
        other = permute_hidden(state, rng)
        moved += other.key() != state.key()
        twin = copy.deepcopy(eng)
        if isinstance(twin, CompiledEngine):
            to_array(other, out=twin._states[0])
            twin._cache.clear()
        else:
            assert isinstance(twin, PureEngine)
            twin._states[0] = other
        eng.decide_again(0)
        twin.decide_again(0)
        for _key, buf in KEYS:
            assert np.array_equal(getattr(eng.obs, buf), getattr(twin.obs, buf)), (t, buf)
        a = eng.sample_legal(t)
        if a[0] < 0:
            break
        eng.play(0, int(a[0]))
    assert moved > 40


# --- the envs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["compiled", "pure"])
def test_actions_mode_passes_both_checkers_and_stays_in_its_space(backend: str) -> None:
    from gymnasium.utils.env_checker import check_env

    sb3 = pytest.importorskip("stable_baselines3.common.env_checker")
    for kw in ({}, {"action_rows": 7, "mask_in_obs": True}):
        env = SpiderEnv(suits=2, obs_mode="actions", backend=backend, **kw)
        check_env(env, skip_render_check=True)
        with pytest.warns(UserWarning, match="unconventional shape"):  # the (K, 27) rows
            sb3.check_env(SpiderEnv(suits=1, obs_mode="actions", backend=backend, **kw))
        obs, info = env.reset(seed=1)
        for _ in range(30):
            assert env.observation_space.contains(obs)
            legal = np.flatnonzero(info["action_mask"])
            obs, *_, info = env.step(int(legal[0]))
    made = gym.make("Spider-v0", obs_mode="actions", action_rows=12)
    assert made.observation_space == SpiderEnv(obs_mode="actions", action_rows=12).observation_space
    check_env(made.unwrapped, skip_render_check=True)
    envs = gym.make_vec(
        "Spider-v0", num_envs=3, vectorization_mode="vector_entry_point", obs_mode="actions"
    )
    obs, _ = envs.reset(seed=0)
    assert envs.observation_space.contains(obs) and obs["actions"].shape == (3, 96, 27)


@pytest.mark.parametrize("name", ["spider-2suit", "spider-tournament-2suit"])
def test_actions_mode_equals_the_wrapper(name: str) -> None:
    """``obs_mode="actions"`` is the ``ActionFeatures`` wrapper over the ``dict`` mode, step by
    step (refused actions are decisions too), on the compiled core and on the pure engine
    (the tournament variant has undo: pure)."""
    mode = gym.make("Spider-v0", variant=name, obs_mode="actions", max_episode_steps=60)
    wrapped = ActionFeatures(gym.make("Spider-v0", variant=name, max_episode_steps=60))
    rng = np.random.default_rng(2)
    a_out, b_out = mode.reset(seed=9), wrapped.reset(seed=9)
    for _ in range(150):
        for key in ("actions", "action_ids", "globals"):
            assert np.array_equal(a_out[0][key], b_out[0][key]), key
        info = a_out[-1]
        if len(a_out) > 2 and (a_out[2] or a_out[3]):
            a_out, b_out = mode.reset(), wrapped.reset()
            continue
        m = info["action_mask"]
        a = int(rng.integers(len(m))) if rng.random() < 0.1 else int(rng.choice(np.flatnonzero(m)))
        a_out, b_out = mode.step(a), wrapped.step(a)
        assert a_out[1:4] == b_out[1:4]


BAD_ROWS = [(0, "action_rows"), (-3, "action_rows"), (True, "action_rows"),
            (2.0, "action_rows"), ("8", "action_rows"), (10**6, "action_rows")]  # fmt: skip


@pytest.mark.parametrize(("rows", "match"), BAD_ROWS)
def test_bad_action_rows_are_refused_naming_them(rows: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        SpiderEnv(obs_mode="actions", action_rows=rows)
    with pytest.raises(ValueError, match=match):
        SpiderVectorEnv(2, obs_mode="actions", action_rows=rows)
    with pytest.raises(ValueError, match=match):
        gym.make("Spider-v0", obs_mode="actions", action_rows=rows)


@pytest.mark.parametrize("mode", ["dict", "features", "flat"])
def test_action_rows_with_another_obs_mode_is_refused(mode: str) -> None:
    with pytest.raises(ValueError, match="action_rows is only for obs_mode='actions'"):
        SpiderEnv(obs_mode=mode, action_rows=8)
    with pytest.raises(ValueError, match="action_rows"):
        SpiderVectorEnv(2, obs_mode=mode, action_rows=8)
