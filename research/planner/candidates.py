"""How many candidates does a planned decision weigh, how many distinct events are among them,
and how many of those events do its scores reach?

    python research/planner/candidates.py spider-4suit --deals 5000:5010 --jobs 2

Each deal is played from the start by ``--agent`` (a planner spec) with the seed ``spider-env
evaluate --seed`` gives it, so the games are the evaluation's. Through the planner's
``observer`` every planned decision reports its candidates (each a plan: moves, then the event
that ends it); a candidate is *scored* if the successive halving gave it a score. Per decision
the script counts the candidates, the distinct events among them (the event's action id: the
move that turns a card up, or a deal) and the distinct events among the scored candidates; it
prints the medians per stage of the game (deals left) and in all, and the share of decisions
whose scores reach fewer events than the candidates hold. ``--json`` writes every decision's
counts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

import numpy as np
from spider_env.agents import PlannerAgent, make_agent
from spider_env.agents.planner import PlannedDecision
from spider_env.agents.rl.settings import ArgumentParser

from spider_env.apps.evaluation.episode import make_env, play_episode
from spider_env.apps.evaluation.flags import check_games, check_writable
from spider_env.core.variants import get_variant

#: Per decision: deal, deals left, candidates, distinct events, scored, distinct scored events.
FIELDS = ("deal", "deals_left", "candidates", "events", "scored", "scored_events")


def planner(spec: str, variant: str) -> PlannerAgent:
    """The planner of ``spec`` on ``variant``; ``ValueError`` if ``spec`` is not a planner's."""
    agent = make_agent(spec, get_variant(variant), seed=0)
    if not isinstance(agent, PlannerAgent):
        raise ValueError(f"--agent must be a planner spec, got {spec!r}")
    return agent


def decisions_of(variant: str, spec: str, deal: int, seed: int, max_steps: int) -> list[dict]:
    """The counts of :data:`FIELDS` of every planned decision of ``spec`` on ``deal``, and
    whether the game was won (``"won"`` in each row)."""
    agent = planner(spec, variant)
    rows: list[dict] = []

    def observe(d: PlannedDecision) -> None:
        scored = np.asarray(d.counts) > 0  # given a score in the halving
        events = [plan[-1] for plan in d.plans]
        rows.append(
            {
                "deal": deal,
                "deals_left": d.deals_left,
                "candidates": len(d.plans),
                "events": len(set(events)),
                "scored": int(scored.sum()),
                "scored_events": len({e for e, s in zip(events, scored) if s}),
            }
        )

    agent.observer = observe
    env = make_env(get_variant(variant), max_steps)
    rec, _, _ = play_episode(env, agent, deal, seed, name=spec)
    for row in rows:
        row["won"] = bool(rec.won)
    return rows


def _job(args: tuple[str, str, int, int, int]) -> list[dict]:
    return decisions_of(*args)


def summary(rows: list[dict]) -> dict[str, Any]:
    """Medians of the counts, per count of deals left and in all, and the share of decisions
    with more than one event whose scores reach fewer events than the candidates hold."""

    def stats(part: list[dict]) -> dict[str, Any]:
        multi = [r for r in part if r["events"] > 1 and r["scored"] > 0]
        return {
            "decisions": len(part),
            **{
                f"median_{k}": float(np.median([r[k] for r in part])) if part else None
                for k in FIELDS[2:]
            },
            "events_left_unscored": (
                sum(r["scored_events"] < r["events"] for r in multi) / len(multi) if multi else None
            ),
        }

    stages = sorted({r["deals_left"] for r in rows}, reverse=True)
    return {
        "all": stats(rows),
        "by_deals_left": {s: stats([r for r in rows if r["deals_left"] == s]) for s in stages},
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = ArgumentParser(prog="candidates.py", description=(__doc__ or "").splitlines()[0])
    p.add_argument("variant", help="a variant name (spider-env variants)")
    p.add_argument("--agent", default="planner", help="a planner spec (planner:KEY=V,...)")
    p.add_argument("--deals", default="5000:5002", help="deal numbers (as evaluate's --deals)")
    p.add_argument("--seed", type=int, default=0, help="as spider-env evaluate --seed")
    p.add_argument("--max-steps", type=int, default=1000, help="actions per deal at most")
    p.add_argument("--jobs", type=int, default=1, help="processes (1 or 2)")
    p.add_argument("--json", default=None, help="write every decision's counts here")
    a = p.parse_args(argv)
    try:
        _, deals = check_games(a.variant, a.deals, a.seed, a.max_steps, a.jobs)
        check_writable("--json", a.json)
        planner(a.agent, a.variant)  # the spec, checked before any game
    except (ValueError, TypeError) as exc:
        p.error(str(exc))
    jobs = [(a.variant, a.agent, deal, a.seed, a.max_steps) for deal in deals]
    if a.jobs == 1:
        per_deal = [_job(j) for j in jobs]
    else:
        with ProcessPoolExecutor(a.jobs, mp_context=get_context("spawn")) as pool:
            per_deal = list(pool.map(_job, jobs))
    rows = [r for part in per_deal for r in part]
    out = summary(rows)
    for label, s in [("all", out["all"]), *out["by_deals_left"].items()]:
        name = label if label == "all" else f"{label} deals left"
        if not s["decisions"]:
            continue
        share = s["events_left_unscored"]
        print(
            f"{name}: {s['decisions']} decisions; median candidates {s['median_candidates']:g}, "
            f"events {s['median_events']:g}, scored {s['median_scored']:g}, scored events "
            f"{s['median_scored_events']:g}; scores reach fewer events than there are in "
            + ("-" if share is None else f"{100 * share:.0f}%")
        )
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"summary": out, "decisions": rows}, f, indent=1)
    return out


if __name__ == "__main__":
    main()
