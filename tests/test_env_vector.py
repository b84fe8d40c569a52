"""The env across process and library boundaries: pickling, cross-process seeding, Gymnasium and
Stable-Baselines3 vector envs with masks. Subprocess tests are few and short."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import spider_env  # noqa: F401  (registers Spider-v0)
from spider_env.env import SpiderEnv

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FINGERPRINT = """
import hashlib, json, gymnasium as gym, numpy as np, spider_env
env = gym.make("Spider-v0", suits=4)
obs, info = env.reset(seed=2024)
names = [env.unwrapped.deal_name]
for _ in range(2):
    env.reset()
    names.append(env.unwrapped.deal_name)
obs, info = env.reset(seed=7)
rng = np.random.default_rng(0)
for _ in range(50):
    legal = np.flatnonzero(info["action_mask"])
    obs, r, te, tr, info = env.step(int(legal[rng.integers(len(legal))]))
print(json.dumps({"names": names, "tab": hashlib.sha256(obs["tableau"].tobytes()).hexdigest(),
                  "score": info["score"]}))
"""


def fingerprint_here() -> dict:
    import hashlib

    env = gym.make("Spider-v0", suits=4)
    _obs, info = env.reset(seed=2024)
    names = [env.unwrapped.deal_name]
    for _ in range(2):
        env.reset()
        names.append(env.unwrapped.deal_name)
    _obs, info = env.reset(seed=7)
    rng = np.random.default_rng(0)
    for _ in range(50):
        legal = np.flatnonzero(info["action_mask"])
        obs, _r, _te, _tr, info = env.step(int(legal[rng.integers(len(legal))]))
    return {
        "names": names,
        "tab": hashlib.sha256(obs["tableau"].tobytes()).hexdigest(),
        "score": info["score"],
    }


def test_seeding_is_the_same_in_every_process():
    here = fingerprint_here()
    for hashseed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hashseed, PYTHONPATH=ROOT)
        out = subprocess.run(
            [sys.executable, "-c", FINGERPRINT],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        assert json.loads(out.stdout.strip().splitlines()[-1]) == here


def play(env, actions_seed: int, steps: int, info):
    rng = np.random.default_rng(actions_seed)
    outs = []
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        out = env.step(int(legal[rng.integers(len(legal))]))
        info = out[4]
        outs.append(out)
        if out[2] or out[3]:
            break
    return outs


@pytest.mark.parametrize("kwargs", [{}, {"obs_mode": "features", "mask_in_obs": True}])
def test_pickle_mid_episode_continues_identically(kwargs):
    env = gym.make("Spider-v0", suits=2, render_mode="ansi", **kwargs)
    _obs, info = env.reset(seed=3)
    play(env, 0, 30, info)
    copy = pickle.loads(pickle.dumps(env))
    assert copy.unwrapped.state == env.unwrapped.state
    assert np.array_equal(copy.unwrapped.action_masks(), env.unwrapped.action_masks())
    assert copy.render() == env.render()
    info = {"action_mask": env.unwrapped.action_masks()}
    a, b = play(env, 1, 40, info), play(copy, 1, 40, info)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x[1:4] == y[1:4] and x[4]["score"] == y[4]["score"]
    # the RNG travels too: the next unseeded deals agree
    env.reset()
    copy.reset()
    assert env.unwrapped.deal_name == copy.unwrapped.deal_name


def check_vector(envs, n: int, steps: int) -> None:
    obs, infos = envs.reset(seed=11)
    assert obs["tableau"].shape == (n, 10, 83)
    assert infos["action_mask"].shape == (n, 1301)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        masks = np.stack(envs.call("action_masks"))
        assert np.array_equal(masks, infos["action_mask"])
        assert masks.any(axis=1).all()
        actions = [int(rng.choice(np.flatnonzero(m))) for m in masks]
        obs, _r, _te, _tr, infos = envs.step(np.array(actions))
        assert np.array_equal(obs["action_mask"].astype(bool), infos["action_mask"])


def test_gymnasium_sync_vector_env():
    envs = gym.vector.SyncVectorEnv(
        [lambda: gym.make("Spider-v0", suits=1, mask_in_obs=True) for _ in range(3)]
    )
    check_vector(envs, 3, 60)
    envs.close()


def test_gymnasium_async_vector_env():
    envs = gym.vector.AsyncVectorEnv(
        [lambda: gym.make("Spider-v0", suits=4, mask_in_obs=True) for _ in range(2)]
    )
    check_vector(envs, 2, 20)
    envs.close()


def make_sb3(suits: int = 1):
    def thunk():
        # "module:id" makes gymnasium import spider_env in the (forkserver) worker first
        return gym.make("spider_env:Spider-v0", suits=suits, max_episode_steps=30)

    return thunk


def check_sb3(venv, steps: int) -> None:
    from sb3_contrib.common.maskable.utils import get_action_masks

    venv.seed(5)
    venv.reset()
    rng = np.random.default_rng(0)
    dones = 0
    for _ in range(steps):
        masks = get_action_masks(venv)
        assert masks.shape == (venv.num_envs, 1301) and masks.any(axis=1).all()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _obs, _r, done, infos = venv.step(actions)
        for d, info in zip(done, infos):
            if d:
                dones += 1
                assert "terminal_observation" in info
            assert info["illegal_action"] is False
    assert dones  # the 30-step limit ended episodes, and the vec env reset them


def test_sb3_dummy_vec_env_with_masks():
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([make_sb3(1), make_sb3(2)])
    check_sb3(venv, 70)
    venv.close()


def test_sb3_subproc_vec_env_with_masks():
    from stable_baselines3.common.vec_env import SubprocVecEnv

    venv = SubprocVecEnv([make_sb3(4), make_sb3(4)])
    check_sb3(venv, 35)
    venv.close()


def test_maskable_ppo_runs_a_few_steps():
    # make_vec_env makes the envs with render_mode="rgb_array", which the env offers (with the
    # render extra), so it warns of nothing.
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(
        "Spider-v0",
        n_envs=2,
        seed=0,
        env_kwargs={"suits": 1, "obs_mode": "features", "reward_mode": "shaped"},
    )
    model = MaskablePPO("MultiInputPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0)
    model.learn(64)
    obs = venv.reset()
    from sb3_contrib.common.maskable.utils import get_action_masks

    masks = get_action_masks(venv)
    actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert all(m[a] for m, a in zip(masks, actions))
    flat = SpiderEnv(suits=1, obs_mode="flat")
    MaskablePPO("MlpPolicy", flat, n_steps=16, batch_size=16, n_epochs=1).learn(16)
