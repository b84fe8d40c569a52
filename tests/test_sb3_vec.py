"""The Stable-Baselines3 adapter: MaskablePPO trains on SpiderSB3VecEnv directly."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

from gymnasium.vector import AutoresetMode
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.vec_env import VecMonitor

from spider_env.core import rules
from spider_env.sb3 import SpiderSB3VecEnv
from spider_env.vector import SpiderVectorEnv


def test_maskable_ppo_trains_on_the_adapter_and_predicts_legal_actions() -> None:
    env = VecMonitor(SpiderSB3VecEnv(num_envs=4, suits=1, obs_mode="flat", max_episode_steps=40))
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0)
    model.learn(total_timesteps=256)
    assert model.num_timesteps == 256
    assert len(model.ep_info_buffer) >= 4  # 40-step episodes ended and were counted
    obs = env.reset()
    masks = get_action_masks(env)
    assert masks.shape == (4, env.action_space.n)
    actions, _ = model.predict(obs, action_masks=masks)
    assert masks[np.arange(4), actions].all()


def test_masks_through_env_method_are_the_rules_legal_actions() -> None:
    env = SpiderSB3VecEnv(num_envs=3, suits=2)
    env.seed(7)
    env.reset()
    masks = env.env_method("action_masks")
    for mask, state in zip(masks, env.venv.states()):
        assert np.flatnonzero(mask).tolist() == rules.legal_actions(state)
    assert env.env_method("action_masks", indices=[1])[0].tolist() == masks[1].tolist()


def test_ended_games_report_terminal_observation_and_time_limit_then_restart() -> None:
    import gymnasium as gym

    env = SpiderSB3VecEnv(num_envs=2, suits=1, obs_mode="flat", max_episode_steps=3)
    single = gym.make("Spider-v0", suits=1, obs_mode="flat", max_episode_steps=3)
    env.seed(0)
    env.reset()
    single.reset(seed=0)  # game 0 of the vector env
    for t in range(3):
        actions = env.venv.sample_legal_actions()
        obs, rewards, dones, infos = env.step(actions)
        want = single.step(int(actions[0]))
        assert rewards.dtype == np.float32
        assert dones.tolist() == [t == 2, t == 2]
    assert np.array_equal(infos[0]["terminal_observation"], want[0])  # the last step's...
    assert infos[0]["score"] == want[4]["score"]
    assert infos[0]["moves"] == want[4]["moves"]
    for i, info in enumerate(infos):
        assert info["TimeLimit.truncated"] is True
        assert not np.array_equal(info["terminal_observation"], obs[i])  # ...then a new game
    assert [s.moves + s.deals for s in env.venv.states()] == [0, 0]


def test_seed_gives_the_deals_of_single_env_seeds_and_options_choose_deals() -> None:
    env = SpiderSB3VecEnv(num_envs=2)
    env.seed(5)
    env.reset()
    assert [s for s in env.venv.call("deal_number")] == [_single_deal(5), _single_deal(6)]
    env.set_options({"deal": 12})
    env.reset()
    assert list(env.venv.call("deal_number")) == [12, 12]


def _single_deal(seed: int) -> int:
    import gymnasium as gym

    single = gym.make("Spider-v0")
    single.reset(seed=seed)
    return int(single.unwrapped.deal_number)


def test_adapter_refuses_a_vector_env_without_same_step_autoreset() -> None:
    venv = SpiderVectorEnv(2, autoreset_mode=AutoresetMode.NEXT_STEP)
    with pytest.raises(ValueError, match="SAME_STEP"):
        SpiderSB3VecEnv(venv=venv)


def test_the_adapter_passes_a_batch_beyond_memory_to_the_vector_envs_refusal() -> None:
    with pytest.raises(ValueError, match=r"num_envs=1000000000 does not fit in memory"):
        SpiderSB3VecEnv(num_envs=10**9, suits=1)


def test_the_adapters_action_space_samples_from_a_games_bool_mask() -> None:
    env = SpiderSB3VecEnv(num_envs=2, suits=1)
    env.seed(3)
    env.reset()
    env.action_space.seed(3)
    masks = env.action_masks()
    assert all(mask[env.action_space.sample(mask=mask)] for mask in masks)
