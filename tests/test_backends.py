"""The compiled single env is the pure one, observably (issue 10): for every registered id, obs
mode, reward, illegal-action policy and reset option, ``SpiderEnv(backend="compiled")`` and
``SpiderEnv(backend="pure")`` with the same seed return exactly the same steps, states, masks,
texts and deal names; plus the backend choice, fresh arrays, pickling and ``check_env``."""

from __future__ import annotations

import copy
import pickle
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import mv, position, run
from gymnasium.utils.env_checker import check_env, data_equivalence
from test_fast_differential import GROWING, MOVE_0_TO_5

import spider_env as se
from spider_env.core.deals import deal_to_text, deck, generate_deal
from spider_env.core.interop import pysol_game_id, pysol_state
from spider_env.core.rules import IllegalMoveError, apply, legal_actions
from spider_env.core.state import State
from spider_env.env import SpiderEnv
from spider_env.fast import load_kernel
from spider_env.registration import ENV_IDS
from spider_env.rewards import RunsReward, ScoreReward, ShapedReward
from spider_env.vector import SpiderVectorEnv

ALL_IDS = sorted(ENV_IDS)
UNDO_IDS = [i for i in ALL_IDS if se.get_variant(ENV_IDS[i] or "spider-4suit").undo]
OBS_CONFIGS: list[dict[str, Any]] = [
    {"obs_mode": "dict"},
    {"obs_mode": "dict", "mask_in_obs": True},
    {"obs_mode": "features", "mask_in_obs": True},
    {"obs_mode": "features", "feature_slots": 0},
    {"obs_mode": "flat"},
    {"obs_mode": "flat", "feature_slots": 0},
    {"obs_mode": "actions", "action_rows": 5, "mask_in_obs": True},
]


def compiled_kwargs(env_id: str) -> dict[str, Any]:
    """The id's constructor kwargs, with undo switched off where the id has it (the compiled
    core does not play undo histories)."""
    kw = dict(gym.spec(env_id).kwargs)
    name = kw.get("variant")
    if name is not None and se.get_variant(name).undo:
        kw["variant"] = f"{name} undo=false"
    return kw


def pair(**kw: Any) -> tuple[SpiderEnv, SpiderEnv]:
    kw.setdefault("render_mode", "ansi")
    c = SpiderEnv(backend="compiled", **kw)
    p = SpiderEnv(backend="pure", **kw)
    assert (c.backend, p.backend) == ("compiled", "pure")
    return c, p


def assert_same_env(c: SpiderEnv, p: SpiderEnv) -> None:
    """Everything observable besides the step outputs."""
    assert c.state == p.state
    assert c.legal_actions() == p.legal_actions() == legal_actions(p.state)
    assert np.array_equal(c.action_masks(), p.action_masks())
    assert (c.deal_name, c.deal_number) == (p.deal_name, p.deal_number)
    assert c.last_action_text() == p.last_action_text()
    if c.render_mode == "ansi":
        assert c.render() == p.render()


def assert_same(out_c: Any, out_p: Any) -> None:
    assert data_equivalence(out_c, out_p, exact=True), (out_c, out_p)


def pick(rng: np.random.Generator, mask: np.ndarray, illegal_rate: float) -> int:
    """A random legal action, or with probability ``illegal_rate`` any action id (mostly
    illegal ones)."""
    if rng.random() < illegal_rate or not mask.any():
        return int(rng.integers(len(mask)))
    return int(rng.choice(np.flatnonzero(mask)))


def play_both(
    c: SpiderEnv,
    p: SpiderEnv,
    seed: int,
    steps: int,
    options: dict[str, Any] | None = None,
    illegal_rate: float = 0.15,
    check_every: int = 1,
) -> int:
    """Reset both with ``seed`` (and ``options``) and play the same random actions, checking
    they agree exactly at every step; ended episodes are reset (unseeded, so the RNGs are
    compared too). Also checks that the compiled env's returned arrays are never reused.
    Returns the number of steps that were legal moves."""
    rng = np.random.default_rng(seed)
    out_c, out_p = c.reset(seed=seed, options=options), p.reset(seed=seed, options=options)
    assert_same(out_c, out_p)
    assert_same_env(c, p)
    prev, prev_copy = out_c, copy.deepcopy(out_c)
    moved = 0
    for t in range(steps):
        if not p.action_masks().any():  # a terminal start (options["state"]): both refuse
            for env in (c, p):
                with pytest.raises(RuntimeError, match="ended"):
                    env.step(0)
            out_c, out_p = c.reset(), p.reset()
            assert_same(out_c, out_p)
            prev, prev_copy = out_c, copy.deepcopy(out_c)
        a = pick(rng, p.action_masks(), illegal_rate)
        if p.illegal_action == "raise" and not p.action_masks()[a]:
            before = p.state
            with pytest.raises(IllegalMoveError) as exc_c:
                c.step(a)
            with pytest.raises(IllegalMoveError) as exc_p:
                p.step(a)
            assert str(exc_c.value) == str(exc_p.value)
            assert c.state == p.state == before  # nothing moved
            continue
        out_c, out_p = c.step(a), p.step(a)
        assert_same(out_c, out_p)
        moved += not out_p[4]["illegal_action"]
        assert_same(prev, prev_copy)  # the last step's arrays are untouched by this one
        prev, prev_copy = out_c, copy.deepcopy(out_c)
        if t % check_every == 0:
            assert_same_env(c, p)
        if out_p[2] or out_p[3]:
            with pytest.raises(RuntimeError):
                c.step(a)
            with pytest.raises(RuntimeError):
                p.step(a)
            out_c, out_p = c.reset(), p.reset()
            assert_same(out_c, out_p)
            assert_same_env(c, p)
            prev, prev_copy = out_c, copy.deepcopy(out_c)
    return moved


# --- backend choice -------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_auto_backend_is_compiled_exactly_when_the_variant_has_no_undo(env_id: str) -> None:
    env = gym.make(env_id)
    undo = env.unwrapped.variant.undo
    assert env.unwrapped.backend == ("pure" if undo else "compiled")
    assert gym.make(env_id, backend="pure").unwrapped.backend == "pure"
    if undo:
        with pytest.raises(ValueError, match="undo"):
            gym.make(env_id, backend="compiled")
    else:
        assert gym.make(env_id, backend="compiled").unwrapped.backend == "compiled"
        assert gym.make(env_id, undo=True).unwrapped.backend == "pure"


def test_undo_ids_exist_and_run_compiled_without_undo() -> None:
    assert UNDO_IDS == ["SpiderTournament1Suit-v0", "SpiderTournament2Suit-v0"]
    env = SpiderEnv(variant="spider-tournament-1suit undo=false")
    assert env.backend == "compiled" and not env.variant.undo


def test_bad_backend_name_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="backend"):
        SpiderEnv(backend="numba")


def custom_reward(prev: se.State, action: int, state: se.State) -> float:
    return float(state.moves)


class SubclassedScore(ScoreReward):
    pass


@pytest.mark.parametrize("reward", [custom_reward, SubclassedScore()])
def test_custom_reward_runs_pure_under_auto_and_refuses_compiled(reward: Any) -> None:
    assert SpiderEnv(suits=1, reward_mode=reward).backend == "pure"
    with pytest.raises(ValueError, match="reward"):
        SpiderEnv(suits=1, reward_mode=reward, backend="compiled")


# --- equivalence ----------------------------------------------------------------------------
@pytest.mark.parametrize("obs", OBS_CONFIGS, ids=lambda kw: "-".join(map(str, kw.values())))
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_compiled_equals_pure_for_every_id_and_obs_mode(env_id: str, obs: dict) -> None:
    c, p = pair(**compiled_kwargs(env_id), **obs)
    moved = play_both(c, p, seed=ALL_IDS.index(env_id), steps=300, check_every=2)
    assert moved > 100


@pytest.mark.parametrize(
    "reward",
    [
        "score",
        "runs",
        "shaped",
        "win",
        ShapedReward(run=2.5, reveal=0.3, win=7.0, step_cost=0.05),
        RunsReward(win_bonus=3.5),
    ],
    ids=repr,
)
@pytest.mark.parametrize(
    "variant", ["spider-1suit", "spider-4suit", "spider-tournament-2suit undo=false", "scorpion"]
)
def test_compiled_equals_pure_for_every_reward(reward: Any, variant: str) -> None:
    c, p = pair(variant=variant, reward_mode=reward, illegal_reward=-0.25)
    play_both(c, p, seed=5, steps=300, check_every=10)


def near_win(variant: str, runs_left: int) -> se.State:
    """Spades only: ``runs_left`` columns pairs ``K..2`` + ``A`` of spades, every other run
    completed, no stock left."""
    v = se.get_variant(variant)
    copies = [sum(1 for c in deck(v) if c // 13 == s) // 13 for s in range(4)]
    copies[0] -= runs_left
    cols = []
    for _ in range(runs_left):
        cols += [run("S", 13, 2), "AS"]
    cols += ["-"] * (v.n_columns - len(cols))
    return position(cols, variant=v, completed=copies, piles=0)


@pytest.mark.parametrize(
    "reward",
    ["score", "runs", "shaped", "win", ShapedReward(2.5, 0.3, 7.0, 0.05), RunsReward(3.5)],
    ids=repr,
)
@pytest.mark.parametrize(
    "variant", ["spider-1suit", "spider-4suit", "spider-tournament-1suit undo=false"]
)
def test_compiled_equals_pure_on_completing_runs_and_winning(reward: Any, variant: str) -> None:
    c, p = pair(variant=variant, reward_mode=reward)
    start = near_win(variant, 2)
    out = (c.reset(options={"state": start}), p.reset(options={"state": start}))
    assert_same(*out)
    for src, dst in ((1, 0), (3, 2)):
        a = mv(start, 1, src, dst)
        out_c, out_p = c.step(a), p.step(a)
        assert_same(out_c, out_p)
        assert_same_env(c, p)
    assert out_p[2] and out_p[4]["is_success"]  # the second run won the game


@pytest.mark.parametrize("policy", ["penalize", "terminate", "raise"])
@pytest.mark.parametrize("variant", ["spider-2suit", "spiderette-4suit", "simple-simon"])
def test_compiled_equals_pure_for_every_illegal_action_policy(policy: str, variant: str) -> None:
    c, p = pair(variant=variant, illegal_action=policy, illegal_reward=-3)
    play_both(c, p, seed=11, steps=200, illegal_rate=0.1)


def reset_options(kw: dict[str, Any]) -> list[dict[str, Any]]:
    """Every built-in reset option the variant of ``kw`` allows."""
    env = SpiderEnv(backend="pure", **kw)
    v = env.variant
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(30):
        legal = env.legal_actions()
        if not legal:
            break
        env.step(int(rng.choice(legal)))
    opts: list[dict[str, Any]] = [
        {"deal": 7},
        {"deal_text": deal_to_text(generate_deal(v, 9))},
        {"state_text": env.state.to_text()},
        {"state": env.state},
    ]
    try:
        pysol_state(5, v)
    except ValueError:
        pass
    else:
        opts.append({"pysol_game": 5})
    return opts


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_compiled_equals_pure_from_every_reset_option(env_id: str) -> None:
    kw = compiled_kwargs(env_id)
    c, p = pair(**kw, obs_mode="features", mask_in_obs=True)
    names = {"deal": f"{c.variant.name}#7", "deal_text": "custom", "state": "state"}
    names["state_text"] = "state"
    if c.variant.suit_sets == 8 and c.variant.n_columns == 10:
        names["pysol_game"] = f"pysolfc-{pysol_game_id(c.variant)}#5"
    for opts in reset_options(kw):
        play_both(c, p, seed=2, steps=40, options=opts, check_every=5)
        c.reset(options=opts)
        (key,) = opts
        assert c.deal_name == names[key]


def test_pysol_game_option_names_the_deal_on_both_backends() -> None:
    c, p = pair(variant="pysol-spider-2suit")
    c.reset(options={"pysol_game": 5})
    p.reset(options={"pysol_game": 5})
    assert (c.deal_name, c.deal_number) == (p.deal_name, p.deal_number) == ("pysolfc-270#5", -1)


def test_unseeded_resets_continue_the_same_rng() -> None:
    c, p = pair(suits=2)
    c.reset(seed=123)
    p.reset(seed=123)
    for _ in range(5):
        assert_same(c.reset(), p.reset())
        assert (c.deal_name, c.deal_number) == (p.deal_name, p.deal_number)


# --- arrays, copies, checker ----------------------------------------------------------------
@pytest.mark.parametrize("obs", OBS_CONFIGS[:5], ids=lambda kw: "-".join(map(str, kw.values())))
def test_compiled_returns_fresh_arrays_each_step(obs: dict) -> None:
    env = SpiderEnv(suits=1, backend="compiled", **obs)
    out: Any = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(60):
        kept, kept_copy = out, copy.deepcopy(out)
        mask, mask_copy = env.action_masks(), env.action_masks().copy()
        out = env.step(pick(rng, mask, 0.2))
        assert_same(kept, kept_copy)  # step t's obs and info unchanged by step t+1
        assert np.array_equal(mask, mask_copy)
        if out[2]:
            out = env.reset()


def play_actions(env: SpiderEnv, seed: int, steps: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    outs = []
    for _ in range(steps):
        out = env.step(pick(rng, env.action_masks(), 0.1))
        outs.append(out)
        if out[2]:
            outs.append(env.reset())
    return outs


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
@pytest.mark.parametrize("obs", [{}, {"obs_mode": "features", "mask_in_obs": True}])
def test_compiled_copy_mid_episode_continues_identically(how: str, obs: dict) -> None:
    env = SpiderEnv(suits=2, backend="compiled", render_mode="ansi", **obs)
    env.reset(seed=3)
    play_actions(env, 0, 40)
    twin = pickle.loads(pickle.dumps(env)) if how == "pickle" else copy.deepcopy(env)
    assert twin.backend == "compiled"
    assert twin.state == env.state and twin.render() == env.render()
    assert np.array_equal(twin.action_masks(), env.action_masks())
    assert_same(play_actions(twin, 1, 120), play_actions(env, 1, 120))
    assert twin.state == env.state
    assert_same(twin.reset(), env.reset())  # the RNG travelled too
    assert twin.deal_name == env.deal_name
    # the copy played on the variant's one read-only parameter vector, not a writable copy of
    # it, which numba would have compiled the whole step kernel for again
    assert all(not sig[0].mutable for sig in load_kernel().step_one.signatures)


@pytest.mark.parametrize("obs", OBS_CONFIGS, ids=lambda kw: "-".join(map(str, kw.values())))
def test_check_env_passes_on_compiled_envs(obs: dict) -> None:
    env = gym.make("Spider-v0", backend="compiled", **obs).unwrapped  # with its spec
    with warnings.catch_warnings():
        if obs["obs_mode"] == "flat":
            warnings.simplefilter("error")  # flat is the mode check_env does not warn about
        else:
            warnings.simplefilter("ignore")
        check_env(env)
    assert env.backend == "compiled"


def test_a_column_outgrowing_the_table_is_refused_alike_by_both_backends() -> None:
    # simple-simon, L = 20: moving 5S..AS onto a 19-card column ending in 6H makes 24 cards.
    state = State.from_text(GROWING.format(six5="6H", six3="6S"))
    errors = []
    for backend, mode in [(b, m) for b in ("compiled", "pure") for m in ("dict", "actions")]:
        # (the per-action features read the table a player sees: bounded alike)
        env = SpiderEnv(variant="simple-simon", backend=backend, obs_mode=mode)
        env.reset(options={"state": state})
        with pytest.raises(RuntimeError, match="refusing to drop cards") as err:
            env.step(MOVE_0_TO_5)
        errors.append(str(err.value))
        assert env.state == apply(state, MOVE_0_TO_5)  # the move was played, as in the pure env
        if mode == "actions":
            continue
        flat = SpiderEnv(variant="simple-simon", backend=backend, obs_mode="flat")
        flat.reset(options={"state": state})
        flat.step(MOVE_0_TO_5)  # the feature encoding has no such bound
        envs = SpiderVectorEnv(2, variant="simple-simon", backend=backend)
        envs.reset(options={"state": [state, state]})
        legal = int(np.flatnonzero(envs.action_masks()[0])[0])
        with pytest.raises(RuntimeError, match="env 1: column 5 holds 24 cards"):
            envs.step(np.array([legal if legal != MOVE_0_TO_5 else 0, MOVE_0_TO_5]))
    assert len(set(errors)) == 1
