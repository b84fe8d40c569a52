"""A model played in batches (``spider_env.apps.evaluation.batch``) plays the games it plays alone.

The layers are summed in a fixed order per row (``spider_env.fast.dense``, NumPy spec
``networks.dense_sum``), so a game's scores are the same bits alone or in any batch; the vector
env's observations are the single env's; so ``choose_batch`` makes ``act``'s choices and an
evaluation in batches gives ``play_episode``'s records, for both architectures, most likely or
sampled.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from model_files import ARCHITECTURES, random_model
from spider_env.agents.model import load_model_agent
from spider_env.agents.networks import dense_sum, network

from spider_env.apps.evaluation import evaluate
from spider_env.apps.evaluation.batch import play_batched, plays_in_batches
from spider_env.apps.evaluation.episode import agent_seed, make_env, play_episode
from spider_env.apps.evaluation.results import DealRecord
from spider_env.core.variants import get_variant
from spider_env.fast import dense_kernel
from spider_env.vector import SpiderVectorEnv

SHIPPED = Path(__file__).resolve().parent.parent / "docs" / "models" / "rl_1suit.safetensors"


def _model_file(tmp_path: Path, architecture: str, variant: str, deterministic: bool) -> str:
    path = tmp_path / f"{architecture}-{variant}-{deterministic}.safetensors"
    random_model(variant, architecture, seed=3, deterministic=deterministic).write(path)
    return str(path)


def _same(a: DealRecord, b: DealRecord) -> bool:
    """Equal records but for the time taken."""
    return dataclasses.replace(a, seconds=0.0) == dataclasses.replace(b, seconds=0.0)


@pytest.mark.parametrize(
    ("rows", "inputs", "outputs"), [(1, 38, 16), (4, 38, 128), (7, 128, 128), (13, 5, 1), (0, 3, 2)]
)
def test_the_compiled_dense_layer_gives_the_bits_of_the_numpy_sum(
    rows: int, inputs: int, outputs: int
) -> None:
    rng = np.random.default_rng(rows * 1000 + inputs)
    x = rng.normal(size=(rows, inputs)).astype(np.float32)
    x[x < 0.2] = 0  # ReLU-like zeros, which the compiled layer skips
    w = rng.normal(size=(inputs, outputs)).astype(np.float32)
    b = rng.normal(size=outputs).astype(np.float32)
    out = np.empty((rows, outputs), dtype=np.float32)
    dense_kernel()(x, w, b, out)
    expected = dense_sum(x, w, b)
    assert np.array_equal(out, expected)
    np.testing.assert_allclose(out, x.astype(np.float64) @ w + b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_a_games_scores_are_the_same_bits_alone_or_in_a_batch(architecture: str) -> None:
    model = random_model("spider-2suit", architecture, seed=1)
    agent_kwargs = load_agent_kwargs(model)
    envs = SpiderVectorEnv(9, variant="spider-2suit", max_episode_steps=50, **agent_kwargs)
    obs, _ = envs.reset(seed=5)
    net = network(model)
    for _ in range(20):
        batch = net.logits(obs)
        for b in range(envs.num_envs):
            alone = (
                obs[b : b + 1]
                if not isinstance(obs, dict)
                else {k: v[b : b + 1] for k, v in obs.items()}
            )
            assert np.array_equal(net.logits(alone)[0], batch[b])
        obs, *_ = envs.step(envs.sample_legal_actions())
    envs.close()


def load_agent_kwargs(model: Any) -> dict[str, Any]:
    """The env arguments whose observations are ``model``'s input."""
    return {"obs_mode": model.env.obs_mode, **model.env.input_size()}


@pytest.mark.parametrize("architecture", ARCHITECTURES)
@pytest.mark.parametrize("deterministic", [True, False])
def test_choose_batch_makes_the_choices_act_makes_game_by_game(
    tmp_path: Path, architecture: str, deterministic: bool
) -> None:
    path = _model_file(tmp_path, architecture, "spider-1suit", deterministic)
    batched = load_model_agent(path)
    deals = [4, 9, 11, 20]
    envs = SpiderVectorEnv(
        len(deals), variant="spider-1suit", max_episode_steps=80,
        autoreset_mode=AutoresetMode.DISABLED, **batched.env_kwargs(),
    )  # fmt: skip
    obs, info = envs.reset(options={"deal": deals})
    rngs = [np.random.default_rng(agent_seed(0, d)) for d in deals]
    singles, envs1, obs1, infos1 = [], [], [], []
    for d in deals:
        agent = load_model_agent(path)
        agent.reset(seed=agent_seed(0, d))
        env = make_env(get_variant("spider-1suit"), 80)
        o, i = env.reset(options={"deal": d})
        singles.append(agent)
        envs1.append(env)
        obs1.append(o)
        infos1.append(i)
    for _ in range(80):
        actions = batched.choose_batch(obs, info["action_mask"], None if deterministic else rngs)
        for g, agent in enumerate(singles):
            assert agent.act(obs1[g], infos1[g]["action_mask"]) == actions[g]
            obs1[g], _, _, _, infos1[g] = envs1[g].step(int(actions[g]))
        obs, _, terminated, truncated, info = envs.step(actions)
        if (terminated | truncated).any():
            break
    envs.close()


@pytest.mark.parametrize("architecture", ARCHITECTURES)
@pytest.mark.parametrize("deterministic", [True, False])
def test_evaluate_plays_a_model_in_batches_with_the_records_of_single_games(
    tmp_path: Path, architecture: str, deterministic: bool
) -> None:
    path = _model_file(tmp_path, architecture, "spider-2suit", deterministic)
    v = get_variant("spider-2suit")
    env = make_env(v, 60)
    single = [play_episode(env, load_model_agent(path), d, 7, path)[0] for d in range(10)]
    result = evaluate([path], "0:10", suits=2, max_steps=60, seed=7)
    name = result.agents[0]
    assert plays_in_batches(load_model_agent(path))
    assert all(_same(dataclasses.replace(a, agent=name), b) for a, b in zip(single, result.records))


def test_slots_take_the_next_deal_whatever_the_batch_size(tmp_path: Path) -> None:
    path = _model_file(tmp_path, "action-set", "spider-1suit", False)
    v = get_variant("spider-1suit")
    runs: list[dict[int, DealRecord]] = []
    for batch in (1, 3, 11):
        out: list[DealRecord] = []
        play_batched(load_model_agent(path), v, range(30, 41), 70, 0, "m", out.append, batch=batch)
        assert sorted(r.deal for r in out) == list(range(30, 41))  # each deal once
        runs.append({r.deal: r for r in out})
    assert all(_same(runs[0][d], r[d]) for r in runs[1:] for d in runs[0])


def test_the_shipped_model_plays_the_same_games_in_batches_as_alone() -> None:
    v = get_variant("spider-1suit")
    env = make_env(v, 1000)
    single = [play_episode(env, load_model_agent(str(SHIPPED), v), d, 0, "m")[0] for d in range(8)]
    out: list[DealRecord] = []
    play_batched(load_model_agent(str(SHIPPED), v), v, range(8), 1000, 0, "m", out.append, batch=5)
    out.sort(key=lambda r: r.deal)
    assert sum(r.won for r in single) >= 4  # real games, won and lost
    assert all(_same(a, b) for a, b in zip(single, out))


def test_worker_processes_play_a_model_with_the_records_of_one_process(tmp_path: Path) -> None:
    path = _model_file(tmp_path, "action-set", "spider-1suit", True)
    one = evaluate([path], "0:6", suits=1, max_steps=40)
    two = evaluate([path], "0:6", suits=1, max_steps=40, jobs=2)
    assert two.jobs == 2
    assert all(_same(a, b) for a, b in zip(one.records, two.records))


def test_play_batched_refuses_a_batch_below_one_and_plays_no_deals_quietly(tmp_path: Path) -> None:
    path = _model_file(tmp_path, "action-set", "spider-1suit", True)
    v = get_variant("spider-1suit")
    out: list[DealRecord] = []
    with pytest.raises(ValueError, match="batch must be an int >= 1, got 0"):
        play_batched(load_model_agent(path), v, range(3), 50, 0, "m", out.append, batch=0)
    play_batched(load_model_agent(path), v, [], 50, 0, "m", out.append)
    assert out == []
