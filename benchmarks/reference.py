"""The speed reference every benchmark here reports against: CartPole-v1 through
``gymnasium.make``, random actions, measured in the same run (the machine is shared and noisy,
so figures are quoted as ratios to this one, taken under the same load)."""

from __future__ import annotations

import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np


def best(repeats: int, fn: Callable[[], float]) -> float:
    """The most of ``repeats`` measurements ``fn()``: on a shared machine the least disturbed
    run is the one that tells the code's speed."""
    return max(fn() for _ in range(repeats))


def cartpole_steps_per_second(
    steps: int = 50_000, clock: Callable[[], float] = time.process_time
) -> float:
    """Steps per second (of ``clock``) of ``gym.make("CartPole-v1")`` with random actions."""
    env = gym.make("CartPole-v1")
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    actions = rng.integers(0, 2, size=steps)
    t0 = clock()
    for a in actions:
        _obs, _r, term, trunc, _info = env.step(int(a))
        if term or trunc:
            env.reset()
    dt = clock() - t0
    env.close()
    return steps / dt
