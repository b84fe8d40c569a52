"""Throughput of the Gymnasium env on random legal play: ``env.step`` + mask per second.

Single env through ``gymnasium.make("Spider-v0")`` and an 8-env ``SyncVectorEnv``, for 1, 2 and
4 suits. The policy picks a uniformly random legal action from the mask (its cost, a
``flatnonzero`` and one RNG draw per step, is included in the figures). Not a test: run it as

    .venv/bin/python benchmarks/bench_env.py [--steps N] [--suits 4] [--obs-mode dict]
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import spider_env  # noqa: F401  (registers Spider-v0)


def bench_single(suits: int, steps: int, disable_env_checker: bool, **kwargs: object) -> float:
    env = gym.make("Spider-v0", suits=suits, disable_env_checker=disable_env_checker, **kwargs)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    unwrapped = env.unwrapped
    t0 = time.perf_counter()
    for _ in range(steps):
        mask = unwrapped.action_masks()  # type: ignore[attr-defined]
        legal = np.flatnonzero(mask)
        a = legal[rng.integers(len(legal))]
        _obs, _r, term, trunc, _info = env.step(a)
        if term or trunc:
            _obs, _info = env.reset()
    dt = time.perf_counter() - t0
    env.close()
    return steps / dt


def bench_vector(suits: int, steps: int, n_envs: int, **kwargs: object) -> float:
    envs = gym.vector.SyncVectorEnv(
        [lambda: gym.make("Spider-v0", suits=suits, **kwargs) for _ in range(n_envs)]
    )
    rng = np.random.default_rng(0)
    _obs, _infos = envs.reset(seed=0)
    t0 = time.perf_counter()
    n_calls = steps // n_envs
    for _ in range(n_calls):
        masks = np.stack(envs.call("action_masks"))
        actions = np.empty(n_envs, dtype=np.int64)
        for i in range(n_envs):
            legal = np.flatnonzero(masks[i])
            # after an episode ends the next step is an autoreset: any action is ignored
            actions[i] = legal[rng.integers(len(legal))] if len(legal) else 0
        _obs, _r, _term, _trunc, _infos = envs.step(actions)
    dt = time.perf_counter() - t0
    envs.close()
    return n_calls * n_envs / dt


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=100_000, help="steps per measurement")
    p.add_argument("--suits", type=int, nargs="*", default=[1, 2, 4])
    p.add_argument("--obs-mode", default="dict", choices=["dict", "features", "flat"])
    p.add_argument("--vector-envs", type=int, default=8)
    args = p.parse_args()
    print(f"random legal play, obs_mode={args.obs_mode}, {args.steps} steps per figure")
    for suits in args.suits:
        single = bench_single(suits, args.steps, False, obs_mode=args.obs_mode)
        nocheck = bench_single(suits, args.steps, True, obs_mode=args.obs_mode)
        vec = bench_vector(suits, args.steps, args.vector_envs, obs_mode=args.obs_mode)
        print(
            f"{suits} suit(s): single env {single:9,.0f} steps/s | "
            f"disable_env_checker=True {nocheck:9,.0f} steps/s | "
            f"SyncVectorEnv x{args.vector_envs} {vec:9,.0f} env-steps/s"
        )


if __name__ == "__main__":
    main()
