"""What is each hidden part of the table worth to the planner? Play it told part of the truth.

    python research/planner/oracle.py --deals 5038,5039,5062 --seed 1 --know none --know down

A diagnostic, never a player: it reads the env's true state (the face-down cards and the stock),
which no agent may. With ``--know K`` the planner's layouts of what it cannot see (its public
``layouts`` hook, :class:`Told`) keep the true cards of part K and draw only the rest,
uniformly, as the planner always does:

* ``none``: nothing told; the same games as ``spider-env evaluate --agent planner`` (same agent
  seeds, same step limit);
* ``next``: the card under each column's face-up cards (the next a move there turns up); the
  deeper face-down cards and the stock still drawn;
* ``stock``: the stock's cards in their true order; the face-down cards still drawn;
* ``down``: the face-down cards where they truly lie; the stock still drawn;
* ``full``: every card (all layouts the truth).

``--when late`` tells it only at the decisions made with the stock empty (after the last deal),
``--when early`` only at those made before; at the others it draws everything, as told nothing
(default ``all``: every decision). So the runs say when the part is worth most.

Each ``--know`` plays the same deals with the same seeds; the output has one line per mode
(wins, Wilson interval, CPU seconds of the games) and its pairing with the first mode (deals
only it won / only the first won, exact McNemar p). ``--csv`` writes every game (mode, ``--when``,
deal, won, steps, seconds).
"""

from __future__ import annotations

import csv
import multiprocessing as mp
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from spider_env.agents import PlannerAgent, make_agent
from spider_env.agents.planner import true_layout, uniform_layouts
from spider_env.agents.rl.settings import ArgumentParser

from spider_env.apps.evaluation.episode import make_env, play_episode
from spider_env.apps.evaluation.flags import check_games, check_writable
from spider_env.apps.evaluation.stats import format_p, mcnemar_exact, wilson_interval
from spider_env.core.state import State
from spider_env.core.variants import get_variant
from spider_env.observation.view import TableView

KNOWS = ("none", "next", "stock", "down", "full")
WHENS = ("all", "early", "late")


class Told:
    """The planner's ``layouts`` hook that tells it part ``know`` of the truth (``truth()``: the
    env's state at the decision) at the decisions ``when`` says (``all``, ``early``: a deal
    still to come, ``late``: none), and draws the rest as the planner does. ``told`` records,
    per decision, the deals left and whether it was told."""

    def __init__(self, know: str, when: str, truth: Callable[[], State]) -> None:
        self.know, self.when, self.truth = know, when, truth
        self.told: list[tuple[int, bool]] = []

    def redrawn(self, view: TableView) -> np.ndarray:
        """Which cards of a layout (:func:`~spider_env.agents.planner.uniform_layouts`'s
        order: face-down cards column by column, deepest first, then the stock) are drawn."""
        down = np.asarray(view.down)
        n_down = int(down.sum())
        redraw = np.zeros(len(view.unseen_cards()), dtype=bool)
        if self.know == "stock":
            redraw[:n_down] = True
        elif self.know == "down":
            redraw[n_down:] = True
        elif self.know == "next":
            redraw[:] = True
            redraw[np.cumsum(down)[down > 0] - 1] = False  # each column's next card
        return redraw

    def __call__(self, view: TableView, rng: np.random.Generator) -> Iterator[np.ndarray]:
        late = view.deals_left == 0
        told = self.know != "none" and (self.when == "all" or late == (self.when == "late"))
        self.told.append((view.deals_left, told))
        if not told:
            return uniform_layouts(view, rng)
        return self._told(true_layout(self.truth()), self.redrawn(view), rng)

    @staticmethod
    def _told(
        truth: np.ndarray, redraw: np.ndarray, rng: np.random.Generator
    ) -> Iterator[np.ndarray]:
        first = truth.copy()
        first[redraw] = rng.permutation(first[redraw])
        yield first
        while True:
            out = first.copy()
            out[redraw] = rng.permutation(out[redraw])
            yield out


def told_planner(spec: str, variant: Any, know: str, when: str, env: Any) -> PlannerAgent:
    """The planner of ``spec`` (seed 0), told part ``know`` of ``env``'s true state."""
    agent = make_agent(spec, variant, seed=0)
    if not isinstance(agent, PlannerAgent):
        raise TypeError(f"oracle.py tells a planner, not {spec!r}")
    agent.layouts = Told(know, when, lambda: env.unwrapped.state)
    return agent


def play(
    task: tuple[str, str, str, str, int, int, int | None],
) -> tuple[str, int, bool, int, float]:
    """One game: ``(know, deal, won, steps, CPU seconds)``."""
    spec, variant, know, when, deal, seed, max_steps = task
    v = get_variant(variant)
    env = make_env(v, max_steps)
    agent = told_planner(spec, v, know, when, env)
    t0 = time.process_time()
    rec, _, _ = play_episode(env, agent, deal, seed, name=spec)
    env.close()
    return know, deal, rec.won, rec.steps, time.process_time() - t0


def report(
    games: list[tuple[str, int, bool, int, float]], knows: list[str], when: str = "all"
) -> str:
    """One line per mode: wins, interval, CPU seconds, pairing with the first mode (``when``:
    named after each told mode unless ``all``)."""
    won = {k: {d: w for kk, d, w, _, _ in games if kk == k} for k in knows}
    cpu = {k: sum(s for kk, *_, s in games if kk == k) for k in knows}
    lines = []
    first = knows[0]
    for k in knows:
        n, w = len(won[k]), sum(won[k].values())
        lo, hi = wilson_interval(w, n)
        told = f" ({when})" if when != "all" and k != "none" else ""
        line = (
            f"know={k}{told}: won {w} of {n} ({100 * w / n:.1f}%, {100 * lo:.1f}-{100 * hi:.1f}%)"
        )
        line += f", {cpu[k]:.0f} CPU s"
        if k != first:
            b = sum(won[k][d] and not won[first][d] for d in won[k])
            c = sum(won[first][d] and not won[k][d] for d in won[k])
            line += f"; against know={first}: {b} / {c} (McNemar p {format_p(mcnemar_exact(b, c))})"
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="oracle.py", description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--agent", default="planner", help="a planner spec (planner:KEY=V,...)")
    p.add_argument("--variant", default="spider-1suit")
    p.add_argument("--deals", default="5000:5010", help="deal range or list, e.g. 5000:5200")
    p.add_argument("--seed", type=int, default=0, help="as spider-env evaluate --seed")
    p.add_argument("--max-steps", type=int, default=None, help="the registered limit if unset")
    p.add_argument("--know", action="append", help=f"repeatable; one of {', '.join(KNOWS)}")
    p.add_argument(
        "--when", default="all", help="the decisions told: all, early (before the last deal), late"
    )
    p.add_argument("--jobs", type=int, default=1, help="processes (1 or 2)")
    p.add_argument("--csv", help="write every game here")
    args = p.parse_args(argv)
    knows = args.know or ["none", "down"]
    for k in knows:
        if k not in KNOWS:
            p.error(f"--know must be one of {', '.join(KNOWS)}, got {k!r}")
    if len(set(knows)) != len(knows):
        p.error(f"--know repeats a mode: {', '.join(knows)}")
    if args.when not in WHENS:
        p.error(f"--when must be one of {', '.join(WHENS)}, got {args.when!r}")
    try:
        v, deals = check_games(args.variant, args.deals, args.seed, args.max_steps, args.jobs)
        check_writable("--csv", args.csv)
    except ValueError as exc:
        p.error(str(exc))
    try:
        agent = make_agent(args.agent, v, seed=0)
    except (ValueError, TypeError) as exc:
        p.error(f"--agent: {exc}")
    if not isinstance(agent, PlannerAgent):
        p.error(f"--agent must be a planner spec, got {args.agent!r}")
    tasks = [
        (args.agent, v.name, k, args.when, d, args.seed, args.max_steps)
        for k in knows
        for d in deals
    ]
    if args.jobs == 1:
        games = [play(t) for t in tasks]
    else:
        with mp.get_context("spawn").Pool(args.jobs) as pool:
            games = pool.map(play, tasks, chunksize=1)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["know", "when", "deal", "won", "steps", "cpu_seconds"])
            for k, d, w, s, t in games:
                out.writerow([k, args.when, d, int(w), s, f"{t:.3f}"])
    print(report(games, knows, args.when))
    return 0


if __name__ == "__main__":
    sys.exit(main())
