"""``SpiderVectorEnv`` (issue 10): ``make_vec`` for every registered id, a vector-env contract
check, step-by-step equality with gymnasium's ``SyncVectorEnv`` of pure single envs in every
autoreset mode, masks, bad input, per-env reset options, and gymnasium's vector wrappers."""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers import TimeLimit

import spider_env as se
import spider_env.vector as vector_module
from spider_env.core.rules import IllegalMoveError, legal_actions
from spider_env.engine import CompiledEngine
from spider_env.env import SpiderEnv
from spider_env.registration import ENV_IDS
from spider_env.rewards import RunsReward, ShapedReward
from spider_env.vector import SpiderVectorEnv

ALL_IDS = sorted(ENV_IDS)
MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED]


def id_kwargs(env_id: str) -> dict[str, Any]:
    return dict(gym.spec(env_id).kwargs)


def assert_same(a: Any, b: Any) -> None:
    assert data_equivalence(a, b, exact=True), (a, b)


def pick(rng: np.random.Generator, masks: np.ndarray, illegal_rate: float) -> np.ndarray:
    """One action per row: a random legal one, or with probability ``illegal_rate`` (or when the
    row has none) any id."""
    out = np.empty(len(masks), dtype=np.int64)
    for i, m in enumerate(masks):
        if rng.random() < illegal_rate or not m.any():
            out[i] = rng.integers(len(m))
        else:
            out[i] = rng.choice(np.flatnonzero(m))
    return out


def reference(n: int, max_steps: int | None, mode: AutoresetMode, **kw: Any) -> SyncVectorEnv:
    """Gymnasium's own vector env of pure single envs: what ``SpiderVectorEnv`` must equal."""

    def make() -> gym.Env:
        env: gym.Env = SpiderEnv(backend="pure", **kw)
        return env if max_steps is None else TimeLimit(env, max_steps)

    return SyncVectorEnv([make for _ in range(n)], autoreset_mode=mode)


def run_equivalence(
    envs: Any, ref: SyncVectorEnv, seed: int, steps: int, illegal_rate: float = 0.1
) -> int:
    """Same seed, same actions: exactly the same results every step; ended games are reset
    through ``reset_mask`` in DISABLED mode. Returns how many games ended."""
    mode = ref.metadata["autoreset_mode"]
    assert envs.metadata["autoreset_mode"] == mode
    rng = np.random.default_rng(seed)
    assert_same(envs.reset(seed=seed), ref.reset(seed=seed))
    ended = 0
    for _ in range(steps):
        masks = np.stack(ref.call("action_masks"))
        assert np.array_equal(envs.action_masks(), masks)
        actions = pick(rng, masks, illegal_rate)
        out, out_ref = envs.step(actions), ref.step(actions)
        assert_same(out, out_ref)
        done = out_ref[2] | out_ref[3]
        ended += int(done.sum())
        if mode == AutoresetMode.DISABLED and done.any():
            with pytest.raises(RuntimeError):
                envs.step(actions)
            opts = {"reset_mask": done}
            assert_same(envs.reset(options=opts), ref.reset(options=opts))
    assert [s.to_text() for s in envs.states()] == [s.to_text() for s in ref.get_attr("state")]
    assert list(envs.call("deal_name")) == list(ref.get_attr("deal_name"))
    return ended


# --- make_vec ---------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_make_vec_gives_spider_vector_env_for_every_id(env_id: str) -> None:
    n = 3
    envs = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")
    assert isinstance(envs, SpiderVectorEnv)
    single = gym.make(env_id)
    A = single.action_space.n
    assert envs.num_envs == n
    assert envs.max_episode_steps == 1000
    assert envs.single_action_space == spaces.Discrete(A)
    assert envs.action_space == spaces.MultiDiscrete([A] * n)
    assert envs.single_observation_space == single.observation_space
    assert envs.observation_space == gym.vector.utils.batch_space(single.observation_space, n)
    assert isinstance(envs.metadata["autoreset_mode"], AutoresetMode)
    assert envs.variant is single.unwrapped.variant
    assert envs.backend == single.unwrapped.backend
    single.reset(seed=0)
    assert single.action_masks().shape == (A,)  # gymnasium.make's env keeps its forwarding
    default = gym.make_vec(env_id, num_envs=2)
    assert isinstance(default, SpiderVectorEnv)
    envs.close()
    default.close()


def test_make_vec_sync_mode_still_gives_a_sync_vector_env_with_masks() -> None:
    envs = gym.make_vec("Spider-v0", num_envs=2, vectorization_mode="sync", suits=1)
    assert isinstance(envs, SyncVectorEnv)
    _, info = envs.reset(seed=0)
    masks = np.stack(envs.call("action_masks"))
    assert masks.shape == (2, 1301) and np.array_equal(masks, info["action_mask"])
    envs.close()


def test_make_vec_passes_kwargs_and_step_limit() -> None:
    envs = gym.make_vec(
        "Spider-v0", num_envs=2, suits=2, obs_mode="flat", max_episode_steps=7,
        autoreset_mode=AutoresetMode.SAME_STEP,
    )  # fmt: skip
    assert envs.variant.name == "spider-2suit" and envs.max_episode_steps == 7
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert envs.observation_space.shape[0] == 2


# --- equivalence with SyncVectorEnv -----------------------------------------------------------
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_every_id_equals_sync_vector_env_of_pure_envs(env_id: str) -> None:
    obs_modes = [{}, {"obs_mode": "features", "mask_in_obs": True}, {"obs_mode": "flat"}]
    for i, mode in enumerate(MODES):
        kw = {**id_kwargs(env_id), **obs_modes[i]}
        envs = SpiderVectorEnv(3, max_episode_steps=12, autoreset_mode=mode, **kw)
        ended = run_equivalence(envs, reference(3, 12, mode, **kw), seed=10 + i, steps=30)
        assert ended >= 3


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize(
    "kw",
    [
        {"suits": 1, "obs_mode": "features", "mask_in_obs": True},
        {"suits": 4, "obs_mode": "flat", "feature_slots": 0},
        {"suits": 2, "mask_in_obs": True, "illegal_action": "terminate"},
        {"variant": "spider-tournament-2suit undo=false", "reward_mode": "shaped"},
        {"variant": "scorpion", "reward_mode": RunsReward(win_bonus=2.0), "obs_mode": "flat"},
        {"variant": "spiderette-1suit", "reward_mode": "runs", "illegal_reward": -0.5},
        {"suits": 1, "reward_mode": ShapedReward(run=3.0, reveal=0.2, win=1.0, step_cost=0.1)},
        {"suits": 1, "reward_mode": "win", "illegal_action": "terminate", "obs_mode": "features"},
        {"suits": 2, "obs_mode": "actions", "action_rows": 6},
        {"variant": "scorpion", "obs_mode": "actions", "mask_in_obs": True},
    ],
    ids=lambda kw: "-".join(str(v) for v in kw.values()),
)
def test_compiled_vector_env_equals_sync_vector_env(mode: AutoresetMode, kw: dict) -> None:
    envs = SpiderVectorEnv(4, max_episode_steps=30, autoreset_mode=mode, **kw)
    assert envs.backend == "compiled"
    ended = run_equivalence(
        envs, reference(4, 30, mode, **kw), seed=7, steps=100, illegal_rate=0.05
    )
    assert ended >= 4


def keep_masks_calls(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The ``keep_masks`` of every ``CompiledEngine.step`` from now on, as they are made."""
    kept: list[bool] = []
    step = CompiledEngine.step

    def spy(self: CompiledEngine, *args: Any) -> int:
        kept.append(args[-1])
        return step(self, *args)

    monkeypatch.setattr(CompiledEngine, "step", spy)
    return kept


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize(
    "kw",
    [
        {"suits": 2, "mask_in_obs": True},
        {"suits": 1, "obs_mode": "actions", "action_rows": 6, "mask_in_obs": True},
        {"variant": "scorpion", "illegal_action": "terminate", "obs_mode": "flat"},
    ],
    ids=lambda kw: "-".join(str(v) for v in kw.values()),
)
def test_a_batch_making_its_masks_from_the_legal_ids_equals_sync_vector_env(
    mode: AutoresetMode, kw: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of ``FRESH_MASKS_FROM`` games or more with ``copy=True`` steps its engine
    without keeping the masks (here 4 games, the threshold lowered): the same results as
    Gymnasium's ``SyncVectorEnv`` of pure envs, illegal actions and resets included."""
    monkeypatch.setattr(vector_module, "FRESH_MASKS_FROM", 4)
    kept = keep_masks_calls(monkeypatch)
    envs = SpiderVectorEnv(4, max_episode_steps=30, autoreset_mode=mode, **kw)
    ended = run_equivalence(
        envs, reference(4, 30, mode, **kw), seed=11, steps=100, illegal_rate=0.05
    )
    assert ended >= 4
    assert kept and not any(kept)


def test_a_small_batch_or_copy_false_or_raise_keeps_the_engines_masks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kept = keep_masks_calls(monkeypatch)
    n = vector_module.FRESH_MASKS_FROM
    for kw, keep in (
        ({"num_envs": n - 1}, True),
        ({"num_envs": n}, False),
        ({"num_envs": n, "copy": False}, True),
        ({"num_envs": n, "illegal_action": "raise"}, True),
    ):
        envs = SpiderVectorEnv(suits=1, **kw)
        envs.reset(seed=0)
        kept.clear()
        envs.step(envs.sample_legal_actions())
        assert kept == [keep], kw


def custom_reward(prev: se.State, action: int, state: se.State) -> float:
    return float(len(legal_actions(state))) / 10


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize(
    "kw",
    [
        {"variant": "spider-tournament-1suit"},
        {"suits": 2, "undo": True, "obs_mode": "flat"},
        {"suits": 1, "reward_mode": custom_reward, "illegal_action": "terminate"},
        {"suits": 4, "backend": "pure", "mask_in_obs": True},
        {"suits": 2, "undo": True, "obs_mode": "actions", "action_rows": 7},
    ],
    ids=["tournament", "undo", "custom-reward", "forced-pure", "undo-actions"],
)
def test_pure_vector_env_equals_sync_vector_env(mode: AutoresetMode, kw: dict) -> None:
    envs = SpiderVectorEnv(3, max_episode_steps=20, autoreset_mode=mode, **kw)
    assert envs.backend == "pure"
    ref_kw = {k: v for k, v in kw.items() if k != "backend"}
    ended = run_equivalence(envs, reference(3, 20, mode, **ref_kw), seed=3, steps=60)
    assert ended >= 3


def test_without_step_limit_games_run_until_they_end() -> None:
    kw = {"suits": 1, "illegal_action": "terminate"}
    envs = SpiderVectorEnv(3, **kw)
    assert envs.max_episode_steps is None
    run_equivalence(envs, reference(3, None, AutoresetMode.NEXT_STEP, **kw), seed=1, steps=80)


def test_per_env_seed_list_equals_sync_vector_env() -> None:
    envs = SpiderVectorEnv(3, suits=2)
    ref = reference(3, None, AutoresetMode.NEXT_STEP, suits=2)
    assert_same(envs.reset(seed=[5, 9, 5]), ref.reset(seed=[5, 9, 5]))
    names = envs.call("deal_name")
    assert names[0] == names[2] != names[1]
    envs.reset(seed=10)
    assert list(envs.call("deal_number")) == [_deal_number(10 + i) for i in range(3)]


def _deal_number(seed: int) -> int:
    env = SpiderEnv(suits=2)
    env.reset(seed=seed)
    return env.deal_number


DEAD_SIMPLE_SIMON_DEAL = 4050395131  # dealt with no legal action at all


def test_single_env_refuses_a_step_in_a_game_dealt_without_legal_actions() -> None:
    single = SpiderEnv(variant="simple-simon")
    _, info = single.reset(options={"deal": DEAD_SIMPLE_SIMON_DEAL})
    assert info["legal_action_count"] == 0
    with pytest.raises(RuntimeError, match="ended"):
        single.step(0)


@pytest.mark.parametrize("backend", ["compiled", "pure"])
@pytest.mark.parametrize("illegal_action", ["penalize", "raise"])
def test_vector_game_dealt_without_legal_actions_ends_at_its_first_step(
    backend: str, illegal_action: str
) -> None:
    # The documented vector rule: the action is ignored, reward 0, terminated, then reset.
    envs = SpiderVectorEnv(
        2, variant="simple-simon", backend=backend, illegal_action=illegal_action
    )
    _, info = envs.reset(options={"deal": [DEAD_SIMPLE_SIMON_DEAL, 0]})
    assert info["legal_action_count"][0] == 0 and info["legal_action_count"][1] > 0
    before = texts(envs)[0]
    actions = np.array([5, int(np.flatnonzero(envs.action_masks()[1])[0])])
    _, rewards, terminated, truncated, info = envs.step(actions)
    assert rewards[0] == 0.0 and terminated[0] and not truncated[0]
    assert not info["illegal_action"][0] and texts(envs)[0] == before
    legal1 = int(np.flatnonzero(envs.action_masks()[1])[0])
    _, rewards, terminated, _, info = envs.step(np.array([0, legal1]))
    assert rewards[0] == 0.0 and not terminated[0]  # the autoreset step: a new deal
    assert envs.call("deal_number")[0] != DEAD_SIMPLE_SIMON_DEAL


def test_disabled_mode_stepping_an_ended_game_is_a_runtime_error_on_the_pure_backend() -> None:
    envs = SpiderVectorEnv(
        2, suits=1, backend="pure", max_episode_steps=1, autoreset_mode=AutoresetMode.DISABLED
    )
    envs.reset(seed=0)
    _, _, _, truncated, _ = envs.step(envs.sample_legal_actions())
    assert truncated.all()
    with pytest.raises(RuntimeError):
        envs.step(envs.sample_legal_actions())


def test_disabled_mode_stepping_an_ended_game_is_a_runtime_error_on_the_compiled_backend() -> None:
    envs = SpiderVectorEnv(2, suits=1, max_episode_steps=2, autoreset_mode=AutoresetMode.DISABLED)
    envs.reset(seed=0)
    envs.step(envs.sample_legal_actions())
    *_, info = envs.step(envs.sample_legal_actions())
    before = texts(envs)
    with pytest.raises(RuntimeError, match="reset_mask"):
        envs.step(envs.sample_legal_actions())
    assert texts(envs) == before and info["moves"].tolist() == [2, 2]


@pytest.mark.parametrize("backend", ["compiled", "pure"])
def test_autoreset_step_into_a_dead_deal_returns_terminated_false(backend: str) -> None:
    # Simple Simon seeded 4: the first deal is playable, the second is DEAD_SIMPLE_SIMON_DEAL.
    envs = SpiderVectorEnv(1, variant="simple-simon", max_episode_steps=1, backend=backend)
    envs.reset(seed=4)
    *_, truncated, _ = envs.step(envs.sample_legal_actions())
    assert truncated.all()
    _, rewards, terminated, truncated, info = envs.step(np.array([0]))
    assert envs.call("deal_number") == (DEAD_SIMPLE_SIMON_DEAL,)
    assert info["legal_action_count"].tolist() == [0] and rewards.tolist() == [0.0]
    assert not terminated[0] and not truncated[0]
    _, rewards, terminated, truncated, _ = envs.step(np.array([0]))  # then it ends
    assert rewards.tolist() == [0.0] and terminated[0] and truncated[0]  # (limit 1 step)


# --- the vector-env contract ----------------------------------------------------------------
def check_info(info: dict[str, Any], n: int, given: np.ndarray | None = None) -> None:
    """SyncVectorEnv's info layout: every key an array over the games plus a ``_key`` mask."""
    for key, value in info.items():
        if key.startswith("_"):
            assert key[1:] in info
            continue
        if isinstance(value, dict):  # final_info: the same layout inside
            check_info(value, n)
        else:
            assert isinstance(value, np.ndarray) and value.shape[0] == n, key
        mask = info["_" + key]
        assert mask.dtype == np.bool_ and mask.shape == (n,), key
        if given is not None and key not in ("final_obs", "final_info"):
            assert np.array_equal(mask, given), key


def rollout(envs: Any, seed: int, steps: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    outs: list[Any] = [envs.reset(seed=seed)]
    for _ in range(steps):
        actions = pick(rng, envs.action_masks(), 0.1)
        outs.append((actions, envs.step(actions)))
        done = outs[-1][1][2] | outs[-1][1][3]
        if envs.metadata["autoreset_mode"] == AutoresetMode.DISABLED and done.any():
            outs.append(envs.reset(options={"reset_mask": done}))
    return outs


def check_vector_env(envs: Any, steps: int = 40) -> None:
    """Gymnasium's vector-env contract (Gymnasium has no checker for vector envs): spaces hold
    everything returned, seeding and stepping are deterministic, results are fresh arrays of the
    right shapes and dtypes, info has SyncVectorEnv's layout, the declared autoreset mode is
    honoured, and ``close()`` closes. Needs a short step limit so that games end."""
    n = envs.num_envs
    mode = envs.metadata["autoreset_mode"]
    assert isinstance(mode, AutoresetMode)
    assert isinstance(envs.single_action_space, spaces.Discrete)
    A = int(envs.single_action_space.n)
    assert envs.action_space == spaces.MultiDiscrete([A] * n)
    assert envs.observation_space == gym.vector.utils.batch_space(envs.single_observation_space, n)

    # reset(seed): deterministic, and seed-dependent
    obs, info = envs.reset(seed=123)
    assert obs in envs.observation_space
    check_info(info, n, np.ones(n, dtype=bool))
    assert_same((obs, info), envs.reset(seed=123))
    other, _ = envs.reset(seed=124)
    assert not data_equivalence(obs, other, exact=True)

    # step determinism (actions, results, later resets)
    first, again = rollout(envs, 5, steps), rollout(envs, 5, steps)
    assert_same(first, again)

    # shapes, dtypes, fresh arrays, autoreset
    rng = np.random.default_rng(9)
    out: Any = envs.reset(seed=77)
    ended_before = np.zeros(n, dtype=bool)
    saw_end = saw_reset = False
    for _ in range(steps):
        kept, kept_copy = out, copy.deepcopy(out)
        masks = envs.action_masks()
        assert masks.shape == (n, A) and masks.dtype == np.bool_
        actions = pick(rng, masks, 0.1)
        assert actions in envs.action_space
        out = envs.step(actions)
        obs, rewards, terminated, truncated, info = out
        assert_same(kept, kept_copy)  # copy=True: the previous results are untouched
        assert obs in envs.observation_space
        assert rewards.dtype == np.float64 and rewards.shape == (n,)
        assert terminated.dtype == np.bool_ and terminated.shape == (n,)
        assert truncated.dtype == np.bool_ and truncated.shape == (n,)
        check_info(info, n, np.ones(n, dtype=bool))
        assert np.array_equal(info["action_mask"], envs.action_masks())
        done = terminated | truncated
        if mode == AutoresetMode.NEXT_STEP:
            for i in np.flatnonzero(ended_before):  # the step after an end: a fresh game
                saw_reset = True
                assert rewards[i] == 0 and not terminated[i] and not truncated[i]
                assert info["moves"][i] == 0 and not info["illegal_action"][i]
                assert envs.states()[i].moves == 0
        elif mode == AutoresetMode.SAME_STEP:
            assert np.array_equal(info.get("_final_obs", np.zeros(n, bool)), done)
            for i in np.flatnonzero(done):
                saw_reset = True
                assert info["final_obs"][i] in envs.single_observation_space
                assert info["moves"][i] == 0 and envs.states()[i].moves == 0
                assert info["final_info"]["_moves"][i]
        else:
            if done.any():
                with pytest.raises(RuntimeError):
                    envs.step(actions)
                obs, info = envs.reset(options={"reset_mask": done})
                check_info(info, n, done)
                saw_reset = True
                assert all(envs.states()[i].moves == 0 for i in np.flatnonzero(done))
                out = (obs, info)
        saw_end |= bool(done.any())
        ended_before = done
    assert saw_end and saw_reset  # the step limit ended games and they were reset
    envs.close()
    assert envs.closed


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_check_vector_env_passes_for_every_id(env_id: str) -> None:
    for mode in MODES:
        envs = gym.make_vec(env_id, num_envs=3, max_episode_steps=10, autoreset_mode=mode)
        check_vector_env(envs, steps=25)


@pytest.mark.parametrize(
    "kw",
    [
        {"obs_mode": "features", "mask_in_obs": True},
        {"obs_mode": "flat"},
        {"illegal_action": "terminate", "reward_mode": "shaped"},
        {"undo": True},
        {"backend": "pure", "obs_mode": "flat"},
        {"obs_mode": "actions", "action_rows": 8},
        {"backend": "pure", "obs_mode": "actions", "mask_in_obs": True},
    ],
    ids=lambda kw: "-".join(str(v) for v in kw.values()),
)
def test_check_vector_env_passes_for_obs_modes_and_backends(kw: dict) -> None:
    check_vector_env(SpiderVectorEnv(4, suits=1, max_episode_steps=8, **kw))


def test_copy_false_returns_the_envs_own_buffers() -> None:
    envs = SpiderVectorEnv(2, suits=1, obs_mode="flat", copy=False)
    obs, _ = envs.reset(seed=0)
    kept = obs.copy()
    out = envs.step(envs.sample_legal_actions())
    assert out[0] is obs and not np.array_equal(obs, kept)  # overwritten in place
    fresh = SpiderVectorEnv(2, suits=1, obs_mode="flat")
    obs2, _ = fresh.reset(seed=0)
    assert fresh.step(fresh.sample_legal_actions())[0] is not obs2


def test_gymnasium_vector_wrappers_run_on_it() -> None:
    from gymnasium.wrappers.vector import (
        DictInfoToList,
        NormalizeObservation,
        RecordEpisodeStatistics,
    )

    envs = RecordEpisodeStatistics(SpiderVectorEnv(3, suits=1, max_episode_steps=10))
    envs.reset(seed=0)
    episodes = 0
    for _ in range(25):
        *_, info = envs.step(envs.unwrapped.sample_legal_actions())
        if "episode" in info:
            episodes += int(info["_episode"].sum())
            assert np.all(info["episode"]["l"][info["_episode"]] == 10)
    assert episodes >= 3 and len(envs.length_queue) == episodes

    listed = DictInfoToList(SpiderVectorEnv(3, suits=2, max_episode_steps=5))
    _, infos = listed.reset(seed=1)
    assert isinstance(infos, list) and len(infos) == 3 and infos[0]["moves"] == 0
    for _ in range(6):
        *_, infos = listed.step(listed.unwrapped.sample_legal_actions())
    assert all(set(i) >= {"action_mask", "score", "legal_action_count"} for i in infos)

    norm = NormalizeObservation(SpiderVectorEnv(3, suits=4, obs_mode="flat"))
    obs, _ = norm.reset(seed=2)
    for _ in range(5):
        obs, *_ = norm.step(norm.unwrapped.sample_legal_actions())
    assert obs.shape == norm.observation_space.shape and np.isfinite(obs).all()
    assert norm.obs_rms.count > 5


# --- masks ------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{"suits": 2}, {"variant": "spider-tournament-1suit"}])
def test_masks_are_the_rules_legal_actions(kw: dict) -> None:
    envs = SpiderVectorEnv(4, max_episode_steps=15, **kw)
    _, info = envs.reset(seed=4)
    for _ in range(30):
        masks = envs.action_masks()
        assert masks.shape == (4, envs.n_actions) and masks.dtype == np.bool_
        for i, st in enumerate(envs.states()):
            assert np.flatnonzero(masks[i]).tolist() == legal_actions(st)
        assert np.array_equal(info["action_mask"], masks)
        assert [list(x) for x in envs.call("legal_actions")] == [
            np.flatnonzero(m).tolist() for m in masks
        ]
        actions = envs.sample_legal_actions()
        assert actions.dtype == np.int64 and actions.shape == (4,)
        assert masks[np.arange(4), actions].all()
        *_, info = envs.step(actions)
        assert not info["illegal_action"].any()


def test_sample_legal_actions_follows_the_seed() -> None:
    a, b = SpiderVectorEnv(3, suits=4), SpiderVectorEnv(3, suits=4)
    a.reset(seed=8)
    b.reset(seed=8)
    assert all(np.array_equal(a.sample_legal_actions(), b.sample_legal_actions()) for _ in range(5))


# --- bad input --------------------------------------------------------------------------
def texts(envs: SpiderVectorEnv) -> list[str]:
    return [s.to_text() for s in envs.states()]


@pytest.mark.parametrize("backend", ["compiled", "pure"])
def test_bad_actions_are_refused_before_any_game_moves(backend: str) -> None:
    envs = SpiderVectorEnv(3, suits=1, backend=backend)
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.zeros(3, dtype=np.int64))
    envs.reset(seed=0)
    before = texts(envs)
    good = envs.sample_legal_actions()
    with pytest.raises(ValueError, match="shape"):
        envs.step(good[:2])
    with pytest.raises(ValueError, match="shape"):
        envs.step(np.stack([good, good]))
    with pytest.raises(TypeError, match="dtype"):
        envs.step(good.astype(np.float64))
    for bad in (-1, envs.n_actions):
        actions = good.copy()
        actions[2] = bad
        with pytest.raises(ValueError, match="env 2"):
            envs.step(actions)
    assert texts(envs) == before
    envs.step(good)  # still usable


@pytest.mark.parametrize("backend", ["compiled", "pure"])
def test_illegal_action_raise_names_the_env_and_moves_nothing(backend: str) -> None:
    envs = SpiderVectorEnv(3, suits=1, illegal_action="raise", backend=backend)
    envs.reset(seed=0)
    before = texts(envs)
    actions = envs.sample_legal_actions()
    actions[1] = int(np.flatnonzero(~envs.action_masks()[1])[0])
    with pytest.raises(IllegalMoveError, match="env 1"):
        envs.step(actions)
    assert texts(envs) == before
    *_, info = envs.step(envs.sample_legal_actions())
    assert not info["illegal_action"].any() and texts(envs) != before


def test_bad_construction_arguments() -> None:
    with pytest.raises(ValueError, match="num_envs"):
        SpiderVectorEnv(0)
    with pytest.raises(TypeError, match="num_envs"):
        SpiderVectorEnv(2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="autoreset_mode"):
        SpiderVectorEnv(2, autoreset_mode="sometimes")
    with pytest.raises(ValueError, match="max_episode_steps"):
        SpiderVectorEnv(2, max_episode_steps=0)
    with pytest.raises(ValueError, match="render_mode"):
        SpiderVectorEnv(2, render_mode="human")
    with pytest.raises(ValueError, match="undo"):
        SpiderVectorEnv(2, undo=True, backend="compiled")
    with pytest.raises(ValueError, match="reward"):
        SpiderVectorEnv(2, reward_mode=custom_reward, backend="compiled")
    assert SpiderVectorEnv(2, autoreset_mode="SameStep").autoreset_mode == AutoresetMode.SAME_STEP


@pytest.mark.parametrize("backend", ["compiled", "pure"])
def test_bad_reset_options(backend: str) -> None:
    envs = SpiderVectorEnv(3, suits=2, backend=backend)
    with pytest.raises(RuntimeError, match="reset"):
        envs.action_masks()
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="one per env"):
        envs.reset(options={"deal": [1, 2]})
    with pytest.raises(ValueError, match="shape"):
        envs.reset(options={"reset_mask": np.ones(2, dtype=bool)})
    with pytest.raises(TypeError, match="bool"):
        envs.reset(options={"reset_mask": np.ones(3, dtype=np.int64)})
    with pytest.raises(ValueError, match="at least one"):
        envs.reset(options={"reset_mask": np.zeros(3, dtype=bool)})
    with pytest.raises(ValueError, match="at most one"):
        envs.reset(options={"deal": [1, 2, 3], "pysol_game": 4})
    with pytest.raises(ValueError, match="seed"):
        envs.reset(seed=[1, 2])


# --- per-env reset options ----------------------------------------------------------------
@pytest.mark.parametrize(
    "backend",
    [
        "compiled",
        "pure",
    ],
)
def test_first_reset_may_give_per_env_options(backend: str) -> None:
    envs = SpiderVectorEnv(2, suits=1, backend=backend)
    envs.reset(options={"deal": [1, 2]})
    assert list(envs.call("deal_number")) == [1, 2]


def single_reset(kw: dict, options: dict) -> tuple[Any, dict, str]:
    env = SpiderEnv(backend="pure", **kw)
    obs, info = env.reset(options=options)
    return obs, info, env.deal_name


@pytest.mark.parametrize("backend", ["compiled", "pure"])
def test_per_env_deals_play_those_deals(backend: str) -> None:
    kw = {"suits": 4, "obs_mode": "features"}
    envs = SpiderVectorEnv(3, backend=backend, **kw)
    deals = [11, 0, 11]
    obs, info = envs.reset(options={"deal": deals})
    for i, d in enumerate(deals):
        o, inf, name = single_reset(kw, {"deal": d})
        assert_same({k: v[i] for k, v in obs.items()}, o)
        assert np.array_equal(info["action_mask"][i], inf["action_mask"])
        assert envs.call("deal_name")[i] == name and envs.call("deal_number")[i] == d
    # the same deals go on the same way as single envs given the same actions
    singles = [SpiderEnv(backend="pure", **kw) for _ in deals]
    for env, d in zip(singles, deals):
        env.reset(options={"deal": d})
    rng = np.random.default_rng(0)
    for _ in range(20):
        actions = pick(rng, envs.action_masks(), 0.1)
        obs, rewards, *_ = envs.step(actions)
        for i, env in enumerate(singles):
            o, r, *_ = env.step(int(actions[i]))
            assert_same({k: v[i] for k, v in obs.items()}, o) and rewards[i] == r
    obs, _ = envs.reset(options={"deal": 5})
    assert len(set(envs.call("deal_name"))) == 1
    assert np.array_equal(obs["columns"][0], obs["columns"][2])


@pytest.mark.parametrize("backend", ["compiled", "pure"])
def test_per_env_text_and_state_options(backend: str) -> None:
    kw = {"suits": 1}
    envs = SpiderVectorEnv(2, backend=backend, **kw)
    envs.reset(seed=3)
    envs.step(envs.sample_legal_actions())
    states = envs.states()
    envs.reset(seed=4)
    envs.reset(options={"state": states[::-1]})
    assert envs.states() == states[::-1]
    assert list(envs.call("deal_name")) == ["state", "state"]
    envs.reset(options={"state_text": [s.to_text() for s in states]})
    assert envs.states() == states
    text = se.deal_to_text(se.generate_deal("spider-1suit", 42))
    envs.reset(options={"deal_text": text})
    assert list(envs.call("deal_name")) == ["custom", "custom"]
    assert envs.states()[0] == envs.states()[1] == single_env_state(kw, {"deal_text": text})


def single_env_state(kw: dict, options: dict) -> se.State:
    env = SpiderEnv(**kw)
    env.reset(options=options)
    return env.state


@pytest.mark.parametrize("backend", ["compiled", "pure"])
def test_reset_mask_resets_only_those_games(backend: str) -> None:
    envs = SpiderVectorEnv(4, suits=2, backend=backend)
    envs.reset(seed=0)
    for _ in range(3):
        envs.step(envs.sample_legal_actions())
    before = envs.states()
    mask = np.array([False, True, False, True])
    obs, info = envs.reset(options={"reset_mask": mask, "deal": [0, 7, 0, 8]})
    after = envs.states()
    assert after[0] == before[0] and after[2] == before[2]
    assert after[1] == single_env_state({"suits": 2}, {"deal": 7})
    assert after[3] == single_env_state({"suits": 2}, {"deal": 8})
    assert info["_moves"].tolist() == mask.tolist()
    assert info["moves"][1] == info["moves"][3] == 0
    assert obs["tableau"].shape[0] == 4
    assert list(envs.call("deal_number"))[1::2] == [7, 8]


@pytest.mark.parametrize("backend", ["compiled", "pure"])
def test_render_ansi_gives_one_text_per_game(backend: str) -> None:
    envs = SpiderVectorEnv(2, suits=1, render_mode="ansi", backend=backend)
    envs.reset(options={"deal": [1, 2]})
    frames = envs.render()
    assert isinstance(frames, tuple) and len(frames) == 2
    for i, d in enumerate((1, 2)):
        env = SpiderEnv(suits=1, render_mode="ansi")
        env.reset(options={"deal": d})
        assert frames[i] == env.render()


def test_call_and_get_attr_reach_the_sub_envs() -> None:
    envs = SpiderVectorEnv(2, suits=4)
    envs.reset(seed=0)
    assert envs.get_attr("n_actions") == (1301, 1301)
    assert envs.call("describe_action", 1300) == ("deal", "deal")
    assert envs.call("state") == tuple(envs.states())
    with pytest.raises(AttributeError):
        envs.call("no_such_method")


@pytest.mark.parametrize("backend", ["compiled", "pure"])
def test_illegal_action_raise_ignores_the_action_of_a_game_being_reset(backend: str) -> None:
    envs = SpiderVectorEnv(2, suits=1, illegal_action="raise", max_episode_steps=1, backend=backend)
    envs.reset(seed=0)
    *_, truncated, _ = envs.step(envs.sample_legal_actions())
    assert truncated.all()
    illegal = np.array([int(np.flatnonzero(~m)[0]) for m in envs.action_masks()])
    _, rewards, terminated, truncated, info = envs.step(illegal)  # both games are reset instead
    assert rewards.tolist() == [0.0, 0.0] and not (terminated | truncated).any()
    assert info["moves"].tolist() == [0, 0]


# --- deal_numbers: new games drawn from a set of deals, as DealRange draws ----------------------
@pytest.mark.parametrize("backend", ["compiled", "pure"])
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_deal_numbers_draw_new_games_as_deal_range_does(backend: str, mode: AutoresetMode) -> None:
    from spider_env.wrappers import DealRange

    deals = range(1000, 1010)

    def make() -> gym.Env:
        return TimeLimit(DealRange(SpiderEnv(suits=1, backend="pure"), deals), 6)

    envs = SpiderVectorEnv(
        3, suits=1, max_episode_steps=6, autoreset_mode=mode, backend=backend, deal_numbers=deals
    )
    ref = SyncVectorEnv([make for _ in range(3)], autoreset_mode=mode)
    ended = run_equivalence(envs, ref, seed=4, steps=20)
    assert ended >= 6  # new games were drawn after the 6-step limit
    assert all(n in deals for n in envs.call("deal_number"))


def test_deal_numbers_are_checked() -> None:
    for bad, error in (
        (range(0), ValueError),
        ([-1, 2], ValueError),
        ([2**63], ValueError),
        ([1.5], TypeError),
    ):
        with pytest.raises(error):
            SpiderVectorEnv(2, deal_numbers=bad)
    envs = SpiderVectorEnv(2, deal_numbers=[7])
    envs.reset(seed=0)
    assert envs.call("deal_number") == (7, 7)


# --- reset arguments: checked, each error naming what is wrong, before anything changes ---------
def next_deals(envs: SpiderVectorEnv) -> list[list[int]]:
    """Two more unseeded resets' deal numbers and one ``sample_legal_actions`` draw: what the
    games' generators and ``np_random`` give next."""
    out = []
    for _ in range(2):
        envs.reset()
        out.append(list(envs.call("deal_number")))
    out.append(envs.sample_legal_actions().tolist())
    return out


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"seed": 1.5}, TypeError, r"seed must be an int, None, or a list of 3 seeds .* float"),
        ({"seed": "a"}, TypeError, r"seed must be an int, None, or a list of 3 seeds .* str 'a'"),
        ({"seed": True}, TypeError, "seed must be .* got bool True"),
        ({"seed": np.bool_(False)}, TypeError, r"seed must be .* got bool (np\.)?False"),
        ({"seed": -1}, ValueError, "seed must be >= 0, got -1"),
        ({"seed": [1, "x", 3]}, TypeError, r"seed\[1\] must be an int or None, got str 'x'"),
        ({"seed": [1.0, 2, 3]}, TypeError, r"seed\[0\] must be an int or None, got float"),
        ({"seed": (4, None, False)}, TypeError, r"seed\[2\] must be .* bool False"),
        ({"seed": [1, 2, -3]}, ValueError, r"seed\[2\] must be >= 0, got -3"),
        ({"seed": [1, 2]}, ValueError, r"give one seed per env \(3\), got 2"),
        ({"seed": np.zeros((3, 1), dtype=int)}, ValueError, r"1-D .* shape \(3, 1\)"),
        ({"options": [1, 2]}, TypeError, "options must be a dict or None, got list"),
        ({"options": "deal"}, TypeError, "options must be a dict or None, got str"),
        ({"seed": 5, "options": {"deal": [1, "x", 3]}}, TypeError, "options\\['deal'\\]"),
        ({"seed": 5, "options": {"deal": [1, 2, -3]}}, ValueError, "deal number"),
        ({"seed": 5, "options": {"state_text": ["garbage"] * 3}}, ValueError, "line"),
        ({"seed": 5, "options": {"deel": 3}}, ValueError, "unknown reset option"),
    ],
    ids=lambda v: repr(v)[:40] if isinstance(v, dict) else "",
)
@pytest.mark.parametrize("backend", ["compiled", "pure"])
def test_bad_reset_arguments_are_refused_naming_them_and_change_nothing(
    backend: str, kwargs: dict, error: type, message: str
) -> None:
    envs, twin = SpiderVectorEnv(3, suits=1, backend=backend), SpiderVectorEnv(3, suits=1)
    with pytest.raises(error, match=message):  # before the first reset too
        envs.reset(**kwargs)
    with pytest.raises(RuntimeError, match="reset"):  # still not started
        envs.action_masks()
    envs.reset(seed=2)
    twin.reset(seed=2)
    envs.step(envs.sample_legal_actions())
    twin.step(twin.sample_legal_actions())
    before = texts(envs)
    with pytest.raises(error, match=message):
        envs.reset(**kwargs)
    assert texts(envs) == before == texts(twin)
    assert next_deals(envs) == next_deals(twin)  # no generator was reseeded or drawn from


def test_numpy_int_seeds_are_those_ints() -> None:
    a, b, c = (SpiderVectorEnv(3, suits=2) for _ in range(3))
    assert_same(a.reset(seed=np.int64(7)), b.reset(seed=7))
    assert next_deals(a) == next_deals(b)
    assert_same(c.reset(seed=np.array([5, 9, 5])), b.reset(seed=[5, 9, 5]))
    c.reset(seed=(5, None, 5))
    b.reset(seed=5)
    assert c.call("deal_number")[0] == c.call("deal_number")[2] == b.call("deal_number")[0]


# --- constructor arguments and the batch's size ---------------------------------------------
def test_constructor_arguments_of_a_wrong_type_are_type_errors() -> None:
    with pytest.raises(TypeError, match="copy must be a bool, got 'yes'"):
        SpiderVectorEnv(2, copy="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="max_episode_steps must be an int >= 1, got '5'"):
        SpiderVectorEnv(2, max_episode_steps="5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="num_envs must be an int >= 1, got True"):
        SpiderVectorEnv(True)


def test_a_batch_beyond_memory_is_refused_before_anything_is_allocated() -> None:
    import tracemalloc

    SpiderVectorEnv(1)  # the compiled core loaded: what is measured is the refusal alone
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"num_envs=1000000000 does not fit in memory"):
            SpiderVectorEnv(10**9)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**25  # 32 MiB; the games alone would need 11 TiB


@pytest.mark.parametrize(
    "kw",
    [{}, {"obs_mode": "features", "suits": 1}, {"backend": "pure", "variant": "scorpion"}],
    ids=["dict", "features", "pure-scorpion"],
)
def test_num_envs_is_bounded_by_the_memory_the_engines_buffers_need(
    monkeypatch: pytest.MonkeyPatch, kw: dict
) -> None:
    from spider_env.engine import game_nbytes

    one = SpiderVectorEnv(1, **kw)
    settings = {"obs_mode": one._proto.obs_mode, "feature_slots": one._proto.feature_slots}
    settings |= {"reward_fn": one._proto.reward_fn, "illegal_reward": -1.0}
    per_game = game_nbytes(one.backend, one.variant, terminate_illegal=False, **settings)
    built = SpiderVectorEnv(40, **kw)._engine.nbytes - one._engine.nbytes
    assert built == 39 * per_game  # what the check counts is what the engine allocates
    monkeypatch.setattr("spider_env.vector.available_memory", lambda: 40 * per_game)
    assert SpiderVectorEnv(40, **kw).num_envs == 40
    with pytest.raises(ValueError, match=rf"num_envs=41 does not fit .* \({per_game:,} bytes per"):
        SpiderVectorEnv(41, **kw)
    monkeypatch.setattr("spider_env.vector.available_memory", lambda: None)  # unknown: no bound
    assert SpiderVectorEnv(41, **kw).num_envs == 41


def test_available_memory_is_known_and_below_the_physical_memory_here() -> None:
    import os

    from spider_env.vector import available_memory

    free = available_memory()
    assert free is not None and 0 < free <= os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


# --- Gymnasium's sampling idiom with the batched bool mask -----------------------------------
@pytest.mark.parametrize("mode", ["vector_entry_point", "sync"])
def test_action_space_sample_takes_the_batched_bool_mask(mode: str) -> None:
    from spider_env.action_space import MaskableDiscrete, MaskableMultiDiscrete

    envs = gym.make_vec("Spider-v0", num_envs=4, vectorization_mode=mode, suits=1)
    assert isinstance(envs.single_action_space, MaskableDiscrete)
    assert isinstance(envs.action_space, MaskableMultiDiscrete)
    assert envs.action_space == spaces.MultiDiscrete([1301] * 4)
    envs.action_space.seed(0)
    _, info = envs.reset(seed=0)
    for _ in range(30):
        mask = info["action_mask"]
        assert mask.dtype == np.bool_
        actions = envs.action_space.sample(mask=mask)
        assert mask[np.arange(4), actions].all()
        row = envs.single_action_space.sample(mask=mask[0])
        assert mask[0, row]
        *_, info = envs.step(actions)
        assert not info["illegal_action"].any()
    envs.close()
