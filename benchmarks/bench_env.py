"""Throughput of the Gymnasium env on random legal play: ``env.step`` + mask per second.

For 1, 2 and 4 suits it measures, on one core:

* ``engine``: the bare rules core (``legal_actions`` + ``apply``), for scale;
* ``make``: one env from ``gymnasium.make("Spider-v0")`` (with its ``TimeLimit``,
  ``OrderEnforcing``, passive env checker and ``SpiderMethods`` wrappers), one
  ``env.action_masks()`` call and one ``env.step`` per step;
* ``make, no checker``: the same with ``disable_env_checker=True`` (the user's choice);
* ``sync x8``: an 8-env ``gymnasium.vector.SyncVectorEnv``, masks fetched with
  ``envs.call("action_masks")``; env-steps per second.

and, as the reference the docs quote ratios to, CartPole-v1 through ``gymnasium.make`` with
random actions, measured in the same run (``reference.py``).

Every policy picks a uniformly random legal action (its cost, a ``flatnonzero`` and one RNG draw
per step, is included). Each figure is the best of ``--repeats`` runs, since the machine is
shared; ``--cpu-time`` counts this process's CPU time instead of wall-clock time. Not a test;
run it as

    .venv/bin/python benchmarks/bench_env.py [--steps N] [--suits 1 2 4] [--obs-mode dict]
                                             [--cpu-time]
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
from reference import best, cartpole_steps_per_second
from spider_env.agents.rl.settings import ArgumentParser

import spider_env  # noqa: F401  (registers Spider-v0)
from spider_env import new_game
from spider_env.core.rules import apply, legal_actions

# Wall-clock time by default; --cpu-time switches to this process's CPU time, a fairer figure
# for "one core" on a machine shared with other jobs (time spent waiting for a core is left out).
CLOCK = time.perf_counter


def bench_engine(suits: int, steps: int, max_episode_steps: int = 1000) -> float:
    rng = np.random.default_rng(0)
    name = f"spider-{suits}suit"
    deal = 0
    state = new_game(name, deal)
    t0 = CLOCK()
    n = 0
    while n < steps:
        legal = legal_actions(state)
        if not legal or state.moves + state.deals >= max_episode_steps:
            deal += 1
            state = new_game(name, deal)
            continue
        state = apply(state, legal[rng.integers(len(legal))])
        n += 1
    return steps / (CLOCK() - t0)


def bench_single(suits: int, steps: int, disable_env_checker: bool, **kwargs: Any) -> float:
    env = gym.make("Spider-v0", suits=suits, disable_env_checker=disable_env_checker, **kwargs)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    t0 = CLOCK()
    for _ in range(steps):
        legal = np.flatnonzero(env.action_masks())  # type: ignore[attr-defined]
        _obs, _r, term, trunc, _info = env.step(legal[rng.integers(len(legal))])
        if term or trunc:
            env.reset()
    dt = CLOCK() - t0
    env.close()
    return steps / dt


def bench_vector(suits: int, steps: int, n_envs: int, **kwargs: Any) -> float:
    envs = gym.vector.SyncVectorEnv(
        [lambda: gym.make("Spider-v0", suits=suits, **kwargs) for _ in range(n_envs)]
    )
    rng = np.random.default_rng(0)
    envs.reset(seed=0)
    n_calls = steps // n_envs
    actions = np.zeros(n_envs, dtype=np.int64)
    t0 = CLOCK()
    for _ in range(n_calls):
        for i, mask in enumerate(envs.call("action_masks")):
            legal = np.flatnonzero(mask)
            # after an episode ends the next step is an autoreset: the action is ignored
            actions[i] = legal[rng.integers(len(legal))] if len(legal) else 0
        envs.step(actions)
    dt = CLOCK() - t0
    envs.close()
    return n_calls * n_envs / dt


def main() -> None:
    p = ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--steps", type=int, default=50_000, help="steps per run")
    p.add_argument("--repeats", type=int, default=3, help="runs per figure (best is shown)")
    p.add_argument("--suits", type=int, nargs="*", choices=(1, 2, 4), default=[1, 2, 4])
    p.add_argument("--obs-mode", default="dict", choices=["dict", "features", "flat"])
    p.add_argument("--vector-envs", type=int, default=8)
    p.add_argument("--cpu-time", action="store_true", help="steps per CPU second, not wall")
    args = p.parse_args()
    for flag in ("steps", "repeats", "vector_envs"):
        if getattr(args, flag) < 1:
            p.error(f"--{flag.replace('_', '-')} must be at least 1, got {getattr(args, flag)}")
    global CLOCK
    if args.cpu_time:
        CLOCK = time.process_time
    print(
        f"random legal play, obs_mode={args.obs_mode}, {args.steps} steps per run, "
        f"best of {args.repeats}; steps per {'CPU' if args.cpu_time else 'wall-clock'} second"
    )
    ref = best(args.repeats, partial(cartpole_steps_per_second, args.steps, CLOCK))
    print(f"reference: CartPole-v1 through gymnasium.make: {ref:,.0f} steps/s")
    print(f"{'suits':>5} {'engine':>10} {'make':>10} {'make, no checker':>17} {'sync x8':>10}")
    for suits in args.suits:
        r, n, mode = args.repeats, args.steps, args.obs_mode
        engine = best(r, partial(bench_engine, suits, n))
        single = best(r, partial(bench_single, suits, n, False, obs_mode=mode))
        nocheck = best(r, partial(bench_single, suits, n, True, obs_mode=mode))
        vec = best(r, partial(bench_vector, suits, n, args.vector_envs, obs_mode=mode))
        print(f"{suits:>5} {engine:>10,.0f} {single:>10,.0f} {nocheck:>17,.0f} {vec:>10,.0f}")
        ratios = [x / ref for x in (engine, single, nocheck, vec)]
        print(f"{'':>5} " + " ".join(f"{x:>{w}.2f}x" for x, w in zip(ratios, (9, 9, 16, 9))))


if __name__ == "__main__":
    main()
