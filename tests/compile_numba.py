"""Compile the numba functions the tests use, before the tests, two halves side by side.

``make pytest`` runs this first. Each compiled function goes to numba's on-disk cache
(``cache=True``), and the test workers load it from there. Without this step both pytest-xdist
workers reach the same uncompiled functions at about the same time and each compiles them.

The ``env`` half plays a vector env and an env in ``obs_mode="actions"`` (the step kernel and
the per-action encoder) and the depth-first solver. The ``search`` half plays the planner (its
screen included) and its graded value, the beam and best-first solvers and the expert. The
halves take about the same CPU time (each prints its own). A
function neither reaches is compiled by the tests as before: this step only saves time. With a
warm cache it takes a few seconds. It prints the CPU seconds of each step.

    python tests/compile_numba.py [--jobs 2]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from collections.abc import Callable


def _vector_env() -> None:
    from spider_env.env import SpiderEnv
    from spider_env.vector import SpiderVectorEnv

    envs = SpiderVectorEnv(4, suits=2, obs_mode="actions", max_episode_steps=1000)
    envs.reset(seed=0)
    for _ in range(3):
        envs.step(envs.sample_legal_actions())
    env = SpiderEnv(variant="spider-2suit", obs_mode="actions")
    _, info = env.reset(seed=0)
    env.step(int(info["action_mask"].nonzero()[0][0]))


def _agent(spec: str) -> None:
    from spider_env.agents import make_agent

    from spider_env.env import SpiderEnv

    env = SpiderEnv(variant="spider-2suit", backend="pure")  # the env's kernel: the other half
    agent = make_agent(spec, "spider-2suit", 0)
    agent.reset(seed=0)
    obs, info = env.reset(options={"deal": 1})
    for _ in range(5):
        obs, *_, info = env.step(agent.act(obs, info["action_mask"], info))


def _value() -> None:
    from spider_env.core.deals import generate_deal
    from spider_env.core.state import State
    from spider_env.core.variants import get_variant
    from spider_env.search.plan import PlanSearch

    v = get_variant("spider-1suit")
    search = PlanSearch(v)
    search.value(search.game.from_state(State.from_deal(generate_deal(v, 0))))


def _solver(variant: str, method: str) -> None:
    from spider_env.core.deals import generate_deal
    from spider_env.core.state import State
    from spider_env.search.solver import solve

    solve(State.from_deal(generate_deal(variant, 0)), nodes=2000, method=method)


HALVES: dict[str, list[tuple[str, Callable[[], None]]]] = {
    "env": [
        ("vector env", _vector_env),
        ("dfs", lambda: _solver("scorpion", "dfs")),
    ],
    # the expert and best-first search both compile the best-first search's step: in one half,
    # once
    "search": [
        ("planner", lambda: _agent("planner:evals=12,candidates=6,nodes=1500,screen=20")),
        ("graded value", _value),
        ("beam", lambda: _solver("spider-1suit", "beam")),
        ("best-first", lambda: _solver("spider-2suit", "best-first")),
        ("expert", lambda: _agent("expert")),
    ],
}


def compile_half(half: str) -> str:
    """Play what compiles ``half``'s functions; a line with the CPU seconds of each step."""
    times = []
    for name, step in HALVES[half]:
        start = time.process_time()
        step()
        times.append(f"{name} {time.process_time() - start:.1f}")
    return f"compile_numba: {half} half, CPU s: {', '.join(times)}"


def main(argv: list[str] | None = None) -> int:
    from spider_env.agents.rl.settings import ArgumentParser  # errors: one line, status 2

    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, choices=(1, 2), default=2)
    parser.add_argument("--half", choices=HALVES, help=argparse.SUPPRESS)  # one worker's half
    args = parser.parse_args(argv)
    if importlib.util.find_spec("numba") is None:
        print("compile_numba: numba is not installed, nothing to compile")
        return 0
    if args.half:
        print(compile_half(args.half), flush=True)
        return 0
    start = time.perf_counter()
    if args.jobs == 1:
        for half in HALVES:
            print(compile_half(half), flush=True)
    else:
        workers = [subprocess.Popen([sys.executable, __file__, "--half", h]) for h in HALVES]
        codes = [w.wait() for w in workers]
        if any(codes):
            print(f"compile_numba: a half failed (exit statuses {codes})", file=sys.stderr)
            return 1
    print(f"compile_numba: {time.perf_counter() - start:.1f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
