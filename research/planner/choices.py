"""How much did the planner's choices cost? Replay lost games and play each of the planner's
contenders out, many times, as a player who cannot see the cards would.

    python research/planner/choices.py GAMES.csv --limit 6 --decisions 3 --contenders 4 \
        --layouts 10

Each lost deal of ``--agent`` in the evaluation CSV (``spider-env evaluate --csv``) is played
again exactly as the evaluation played it (same agent seed, same step limit). At
``--decisions`` of the planner's decisions that had a choice, evenly spaced over the game
(with ``--late``: over those made with the stock empty; with ``--deals-left 1,2``: over those
made with one or two deals left in the stock), the contenders are the candidates its
successive halving scored most, best mean first (at most ``--contenders``; the one it played
is always among them). Each contender is then played on ``--layouts`` layouts of the cards the
player could not see (uniform draws consistent with the observation, the same layouts for
every contender): its moves and its event first, then the ``--continue`` player (a fresh
agent, seeded by the layout) plays to the end of the game. The share of layouts won is the
contender's value *for that player*. Where another contender's share beat the chosen one's,
both are played again on as many fresh layouts (the best of noisy shares is biased up; the
second figure is not). Nothing here is a player: it reads what the planner scored (through
its public ``observer`` hook, :class:`~spider_env.agents.planner.PlannedDecision`), and the
layouts it draws are a player's guesses.

Output: per decision, each contender's mean score and scores in the planner's halving and its
share of layouts won (``*``: the one played); then a summary.
"""

from __future__ import annotations

import csv
import json
import multiprocessing as mp
import sys
from typing import Any

import numpy as np
from spider_env.agents import PlannerAgent, make_agent
from spider_env.agents.planner import PlannedDecision
from spider_env.agents.rl.settings import ArgumentParser

from spider_env.apps.evaluation.episode import agent_seed, make_env
from spider_env.core.variants import get_variant
from spider_env.observation.view import TableView


def probe(d: PlannedDecision) -> dict[str, Any]:
    """What a decision's probe keeps of it: the deals left, the candidate played (``best``),
    the candidates the halving scored, those scored most first, then by mean (``order``),
    their means and counts, and the plans of those and of the one played."""
    scored = [k for k, c in enumerate(d.counts) if c]
    order = sorted(scored, key=lambda k: (-d.counts[k], -d.means[k]))
    return {
        "left": d.deals_left,
        "best": d.chosen,
        "order": order,
        "mean": {k: d.means[k] for k in scored},
        "count": {k: d.counts[k] for k in scored},
        "plans": {k: list(d.plans[k]) for k in {*order, d.chosen}},
    }


def decisions(
    spec: str,
    variant: str,
    deal: int,
    seed: int,
    max_steps: int,
    wanted: int,
    left: set[int] | None,
) -> tuple[bool, list[dict[str, Any]]]:
    """Replay one game; ``wanted`` of its decisions that had two contenders or more (made with
    a number of deals left in ``left``, unless it is None), evenly spaced from the first to the
    last, each with the observation it was made on and its step."""
    v = get_variant(variant)
    env = make_env(v, max_steps)
    agent = make_agent(spec, v, seed=agent_seed(seed, deal))
    if not isinstance(agent, PlannerAgent):
        raise TypeError(f"choices.py probes a planner, not {spec!r}")
    agent.reset(seed=agent_seed(seed, deal))
    seen: list[dict[str, Any]] = []
    agent.observer = lambda d: seen.append(probe(d))
    obs, info = env.reset(options={"deal": deal})
    out: list[dict[str, Any]] = []
    steps = 0
    while True:
        before = len(seen)
        here = {k: np.array(x, copy=True) for k, x in obs.items()}
        a = agent.act(obs, info["action_mask"], info)
        chose = len(seen) > before and len(seen[-1]["order"]) >= 2
        if chose and (left is None or seen[-1]["left"] in left):
            out.append(seen[-1] | {"obs": here, "step": steps, "deal": deal})
        obs, _, term, trunc, info = env.step(a)
        steps += 1
        if term or trunc:
            if len(out) > wanted:
                at = np.unique(np.linspace(0, len(out) - 1, wanted).round().astype(int))
                out = [out[i] for i in at]
            return bool(info["is_success"]), out


def play_out(task: tuple[Any, ...]) -> bool:
    """One contender played out: its plan on one layout of the unseen cards (a player's guess,
    drawn with the layout's seed), then the ``--continue`` player to the end; whether it won."""
    variant, obs, plan, layout, cont, steps_left = task
    v = get_variant(variant)
    state = TableView.from_obs(v, obs).to_state(np.random.default_rng(layout))
    env = make_env(v, steps_left)
    obs, info = env.reset(options={"state": state})
    for a in plan:
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            return bool(info["is_success"])
    agent = make_agent(cont, v, seed=layout)
    agent.reset(seed=layout)
    while True:
        obs, _, term, trunc, info = env.step(agent.act(obs, info["action_mask"], info))
        if term or trunc:
            return bool(info["is_success"])


def play_all(tasks: list[tuple[Any, ...]], jobs: int) -> list[bool]:
    """:func:`play_out` of every task, in this process (``jobs`` 1) or in ``jobs`` workers."""
    if jobs == 1 or not tasks:
        return [play_out(t) for t in tasks]
    with mp.get_context("spawn").Pool(jobs) as pool:
        return pool.map(play_out, tasks, chunksize=1)


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="choices.py", description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("csv", help="an evaluation CSV (spider-env evaluate --csv)")
    p.add_argument("--agent", default="planner", help="the CSV's agent to replay")
    p.add_argument("--continue", dest="cont", default="planner", help="the player out")
    p.add_argument("--seed", type=int, default=0, help="the evaluation's --seed")
    p.add_argument("--max-steps", type=int, default=1000)
    p.add_argument("--limit", type=int, default=6, help="lost games replayed")
    p.add_argument("--decisions", type=int, default=4, help="decisions probed a game")
    p.add_argument("--late", action="store_true", help="only decisions with the stock empty")
    p.add_argument(
        "--deals-left", help="only decisions made with these deals left (a comma list: 1,2,3)"
    )
    p.add_argument("--contenders", type=int, default=6)
    p.add_argument("--layouts", type=int, default=16)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--json", help="write the decisions here")
    args = p.parse_args(argv)
    for name in ("limit", "decisions", "contenders", "layouts", "jobs", "max_steps"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    left: set[int] | None = {0} if args.late else None
    if args.deals_left is not None:
        if args.late:
            p.error("--late and --deals-left: give one of them")
        try:
            left = {int(x) for x in args.deals_left.split(",")}
        except ValueError:
            p.error(f"--deals-left must be a comma list of counts, got {args.deals_left!r}")
        if min(left) < 0:
            p.error(f"--deals-left must be counts of 0 or more, got {args.deals_left!r}")
    need = {"variant", "agent", "deal", "won"}
    try:
        with open(args.csv, newline="") as f:
            reader = csv.DictReader(f)
            missing = need - set(reader.fieldnames or ())
            if missing:
                p.error(
                    f"{args.csv} is not an evaluation CSV: no column {', '.join(sorted(missing))}"
                )
            rows = [r for r in reader if r["agent"] == args.agent]
    except (OSError, UnicodeDecodeError) as exc:
        p.error(f"cannot read {args.csv}: {exc}")
    lost = [r for r in rows if r["won"] not in ("True", "true", "1")][: args.limit]
    if not lost:
        p.error(f"no lost game of agent {args.agent!r} in {args.csv}")
    for flag, spec in (("--agent", args.agent), ("--continue", args.cont)):
        try:
            player = make_agent(spec, lost[0]["variant"], seed=0)
        except (ValueError, TypeError) as exc:
            p.error(f"{flag}: {exc}")
        if flag == "--agent" and not isinstance(player, PlannerAgent):
            p.error(f"--agent must be a planner spec (its choices are probed), got {spec!r}")
    probes: list[dict[str, Any]] = []
    for r in lost:
        won, found = decisions(
            args.agent, r["variant"], int(r["deal"]), args.seed, args.max_steps,
            args.decisions, left,
        )  # fmt: skip
        if won:
            p.error(f"deal {r['deal']} was won in the replay: not the CSV's game")
        probes += [d | {"variant": r["variant"]} for d in found]
    tasks, where = [], []
    for i, d in enumerate(probes):
        d["contenders"] = d["order"][: args.contenders]
        if d["best"] not in d["contenders"]:
            d["contenders"][-1] = d["best"]
        for k in d["contenders"]:
            for lay in range(args.layouts):
                seed = 1_000_003 * (i + 1) + lay
                left = args.max_steps - d["step"]
                tasks.append((d["variant"], d["obs"], d["plans"][k], seed, args.cont, left))
                where.append((i, k))
    print(f"{len(probes)} decisions, {len(tasks)} games to play out", flush=True)
    results = play_all(tasks, args.jobs)
    won_by: dict[tuple[int, int], list[bool]] = {}
    for key, w in zip(where, results, strict=True):
        won_by.setdefault(key, []).append(w)
    for i, d in enumerate(probes):
        d["shares"] = {k: float(np.mean(won_by[i, k])) for k in d["contenders"]}
        d["oracle"] = max(d["contenders"], key=lambda k: (d["shares"][k], k == d["best"]))
    # the oracle's pick is the best of noisy shares: played again on fresh layouts, beside the
    # planner's choice, for a gap that is not the maximum's bias
    again = [i for i, d in enumerate(probes) if d["oracle"] != d["best"]]
    tasks, where = [], []
    for i in again:
        d = probes[i]
        for k in (d["best"], d["oracle"]):
            for lay in range(args.layouts):
                seed = 1_000_003 * (i + 1) + 500_000 + lay
                left = args.max_steps - d["step"]
                tasks.append((d["variant"], d["obs"], d["plans"][k], seed, args.cont, left))
                where.append((i, k))
    print(f"{len(again)} decisions where another contender did better, {len(tasks)} games")
    results = play_all(tasks, args.jobs)
    fresh: dict[tuple[int, int], list[bool]] = {}
    for key, w in zip(where, results, strict=True):
        fresh.setdefault(key, []).append(w)
    for i, d in enumerate(probes):
        d["again"] = {k: float(np.mean(v)) for (j, k), v in fresh.items() if j == i}
        print(f"deal {d['deal']} step {d['step']}: " + ", ".join(
            f"{'*' if k == d['best'] else ''}{k}: {d['mean'][k]:.3f}/{d['count'][k]} -> "
            f"{d['shares'][k]:.2f}" for k in d["contenders"]
        ) + (f"; again: chosen {d['again'][d['best']]:.2f}, oracle {d['again'][d['oracle']]:.2f}"
             if d["again"] else ""))  # fmt: skip
    chosen = [d["shares"][d["best"]] for d in probes]
    summary = (
        f"{len(probes)} decisions: the chosen contender's share {np.mean(chosen):.3f}, the best "
        f"share {np.mean([d['shares'][d['oracle']] for d in probes]):.3f}; "
    )
    if again:
        fresh_chosen = np.mean([probes[i]["again"][probes[i]["best"]] for i in again])
        fresh_other = np.mean([probes[i]["again"][probes[i]["oracle"]] for i in again])
        summary += (
            f"where another was best ({len(again)}), on fresh layouts: chosen "
            f"{fresh_chosen:.3f}, the other {fresh_other:.3f}"
        )
    else:
        summary += "the chosen contender was never beaten"
    print(summary)
    if args.json:
        keep = ("deal", "step", "left", "best", "oracle", "contenders", "mean", "count")
        keep += ("shares", "again")
        with open(args.json, "w") as f:
            json.dump([{k: d[k] for k in keep} for d in probes], f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
