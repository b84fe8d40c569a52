"""CPU time of the planner's planned decisions: its default budget for a game, and the budget of
``spider-env play``'s hint.

    python research/planner/decision_time.py spider-4suit --deals 0:3

Each deal is played by the planner from the start (at most ``--max-steps`` actions); an action
that planned (the agent's ``decisions`` grew) is one decision, timed in CPU seconds. Actions
that follow a plan cost nothing and are not counted.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from spider_env.agents.planner import PlannerAgent
from spider_env.agents.rl.settings import ArgumentParser

from spider_env.apps.evaluation.deals import parse_deals
from spider_env.apps.play import HINT_BUDGET
from spider_env.core.variants import get_variant
from spider_env.env import SpiderEnv


def decision_times(variant: str, deals: Sequence[int], max_steps: int, **budget: int) -> np.ndarray:
    """CPU seconds of each planned decision of the planner (``budget``) on ``deals``."""
    times = []
    for deal in deals:
        env = SpiderEnv(variant=variant)
        obs, info = env.reset(options={"deal": deal})
        agent = PlannerAgent(variant, seed=0, **budget)
        for _ in range(max_steps):
            before = agent.decisions
            start = time.process_time()
            action = agent.act(obs, info["action_mask"], info)
            if agent.decisions > before:
                times.append(time.process_time() - start)
            obs, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
    return np.asarray(times)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = ArgumentParser(prog="decision_time.py", description=(__doc__ or "").splitlines()[0])
    p.add_argument("variant", help="a variant name (spider-env variants)")
    p.add_argument("--deals", default="0:3", help="deal numbers (as evaluate's --deals)")
    p.add_argument("--max-steps", type=int, default=300, help="actions per deal at most")
    a = p.parse_args(argv)
    try:
        get_variant(a.variant)
        deals = parse_deals(a.deals)
    except ValueError as exc:
        p.error(str(exc))
    if a.max_steps < 1:
        p.error(f"--max-steps must be at least 1, got {a.max_steps}")
    out: dict[str, Any] = {}
    for label, budget in (("default", {}), ("hint", HINT_BUDGET)):
        t = decision_times(a.variant, deals, a.max_steps, **budget)
        out[label] = {"decisions": int(t.size), "mean": float(t.mean()) if t.size else None}
        if t.size:
            print(
                f"{label}: {t.size} decisions, CPU s mean {t.mean():.3f}, median "
                f"{np.median(t):.3f}, max {t.max():.3f}"
            )
        else:
            print(f"{label}: no planned decision")
    return out


if __name__ == "__main__":
    main()
