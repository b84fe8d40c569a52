"""Speed of ``obs_mode="actions"``: ``SpiderVectorEnv`` stepping ``sample_legal_actions()`` with
the per-action features computed in the compiled core, beside the ``dict`` mode, at N = 256 and
4096 for 1, 2 and 4 suits (``copy=False``), and the pure ``ActionFeatureEncoder`` (the
specification) on one game; env-steps (decisions) per CPU-second, CartPole-v1 in the same run.
Each figure is the best of ``--repeats`` runs (3), CartPole's too: on a shared machine the best
run is the one least disturbed. Not a test; run it as ``.venv/bin/python
benchmarks/bench_actions.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reference import best, cartpole_steps_per_second
from spider_env.agents.rl.settings import ArgumentParser

from spider_env.env import SpiderEnv
from spider_env.observation.actions import ActionFeatureEncoder
from spider_env.vector import SpiderVectorEnv


def vector_rate(suits: int, n: int, mode: str) -> float:
    """Env-steps per CPU-second of the vector env (after 20 warm-up steps)."""
    envs = SpiderVectorEnv(n, suits=suits, obs_mode=mode, max_episode_steps=1000, copy=False)
    envs.reset(seed=0)
    for _ in range(20):
        envs.step(envs.sample_legal_actions())
    steps = max(20, (400_000 if mode == "actions" else 2_000_000) // n)
    t0 = time.process_time()
    for _ in range(steps):
        envs.step(envs.sample_legal_actions())
    return steps * n / (time.process_time() - t0)


def pure_rate(seconds: float = 3.0) -> float:
    """Decisions per CPU-second of the pure encoder in random 1-suit play."""
    env = SpiderEnv(suits=1)
    obs, info = env.reset(seed=0)
    enc = ActionFeatureEncoder(env.variant)
    rng = np.random.default_rng(0)
    enc.encode(obs, info["action_mask"])  # warm-up: the env's first step may compile its kernel
    obs, _, _, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    t0, k = time.process_time(), 0
    while time.process_time() - t0 < seconds:
        enc.encode(obs, info["action_mask"])
        k += 1
        obs, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term or trunc:
            obs, info = env.reset()
            enc.reset()
    return k / (time.process_time() - t0)


def main(argv: list[str] | None = None) -> None:
    p = ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=3, help="runs per figure, best shown (3)")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error(f"--repeats must be at least 1, got {args.repeats}")
    r = args.repeats
    cart = best(r, cartpole_steps_per_second)
    print(f"CartPole-v1: {cart:,.0f} steps/CPU-s (best of {args.repeats})")
    for suits in (1, 2, 4):
        for n in (256, 4096):
            for mode in ("dict", "actions"):
                rate = best(r, lambda s=suits, n=n, m=mode: vector_rate(s, n, m))
                print(f"suits {suits} N {n:>4} {mode:>7}: {rate:>10,.0f} env-steps/CPU-s  "
                      f"{rate / cart:5.2f}x CartPole")  # fmt: skip
    print(f"pure encoder, 1 suit: {best(r, pure_rate):,.0f} decisions/CPU-s")


if __name__ == "__main__":
    main()
