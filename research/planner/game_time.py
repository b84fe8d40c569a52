"""CPU time of the planner's games, and how much of it a lost game spends after it is shown lost.

    python research/planner/game_time.py spider-4suit --deals 700001,700002 --agent planner

Each deal is played from the start by ``--agent`` (a planner spec) with the seed ``spider-env
evaluate`` gives it (``--seed``, default 0), to the step limit (``--max-steps``, 1000). One JSON
line per deal: won, completed runs, steps, planned decisions, the step at which the game was
shown lost (``lost_at``, ``null`` if never), CPU seconds of the whole game and of its actions
from that step on (``cpu_after_lost``); then the totals. To compare two versions of the planner
on the same deals, run this from both checkouts at once (one core each), as the lab record did.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from spider_env.agents import PlannerAgent, make_agent
from spider_env.agents.rl.settings import ArgumentParser

from spider_env.apps.evaluation.deals import parse_deals
from spider_env.apps.evaluation.episode import agent_seed
from spider_env.core.variants import get_variant
from spider_env.env import SpiderEnv


def game_time(variant: str, spec: str, deal: int, seed: int, max_steps: int) -> dict[str, Any]:
    """One game of ``spec`` on ``deal``: its outcome and CPU seconds (see the module)."""
    env = SpiderEnv(variant=variant)
    agent = make_agent(spec, variant, seed=0)
    if not isinstance(agent, PlannerAgent):
        raise ValueError(f"--agent must be a planner spec, got {spec!r}")
    agent.reset(seed=agent_seed(seed, deal))
    obs, info = env.reset(options={"deal": deal})
    lost_at, after, steps = None, 0.0, 0
    start = time.process_time()
    while steps < max_steps and info["action_mask"].any():
        t = time.process_time()
        action = agent.act(obs, info["action_mask"], info)
        if agent.lost and lost_at is None:
            lost_at = steps
        obs, _, terminated, _, info = env.step(action)
        if lost_at is not None:
            after += time.process_time() - t
        steps += 1
        if terminated:
            break
    return {
        "deal": deal,
        "won": bool(info["is_success"]),
        "runs": int(info["completed_runs"]),
        "steps": steps,
        "decisions": agent.decisions,
        "lost_at": lost_at,
        "cpu": round(time.process_time() - start, 3),
        "cpu_after_lost": round(after, 3),
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = ArgumentParser(prog="game_time.py", description=(__doc__ or "").splitlines()[0])
    p.add_argument("variant", help="a variant name (spider-env variants)")
    p.add_argument("--deals", default="0:3", help="deal numbers (as evaluate's --deals)")
    p.add_argument("--agent", default="planner", help="a planner spec (default planner)")
    p.add_argument("--seed", type=int, default=0, help="base of the agent seeds (as evaluate's)")
    p.add_argument("--max-steps", type=int, default=1000, help="actions per deal at most")
    a = p.parse_args(argv)
    try:
        get_variant(a.variant)
        deals = parse_deals(a.deals)
        if not isinstance(make_agent(a.agent, a.variant, seed=0), PlannerAgent):
            raise ValueError(f"--agent must be a planner spec, got {a.agent!r}")
    except ValueError as exc:
        p.error(str(exc))
    if a.max_steps < 1:
        p.error(f"--max-steps must be at least 1, got {a.max_steps}")
    games = []
    for deal in deals:
        games.append(game_time(a.variant, a.agent, deal, a.seed, a.max_steps))
        print(json.dumps(games[-1]), flush=True)
    lost = [g for g in games if g["lost_at"] is not None]
    total = {
        "games": len(games),
        "won": sum(g["won"] for g in games),
        "runs": sum(g["runs"] for g in games),
        "shown_lost": len(lost),
        "cpu": round(sum(g["cpu"] for g in games), 2),
        "cpu_after_lost": round(sum(g["cpu_after_lost"] for g in lost), 2),
    }
    print(json.dumps(total))
    return {"games": games, "total": total}


if __name__ == "__main__":
    main()
