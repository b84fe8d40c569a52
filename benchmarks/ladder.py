"""The ladder above greedy: the solver's share of winnable deals, and greedy and the strongest
player on the same deals, for one variant. Produces one row of the ladder's table
(docs/results.md).

    python benchmarks/ladder.py --variant spider-1suit --deals 0:1000 --jobs 2

runs, one after the other (each with ``--jobs``):

1. ``spider-env solve --variant V --deals D --csv ...`` (every card known; the solver's default
   method and budget), unless ``--solver-csv FILE`` gives the verdicts of an earlier run
   (``make solver-table`` keeps them for deals 0..999 of every variant in docs/solver/);
2. ``spider-env evaluate --agent greedy --agent PLAYER [--agent ...] --variant V --deals D
   --csv ...`` (``--player``, repeatable; default ``planner``);

and prints a markdown row: deals, solver-winnable share, greedy and each player's win rate (95%
Wilson intervals), the first player's share of the solver-winnable deals, McNemar p against
greedy, time per game and per decision. ``--compare CSV:AGENT`` adds a McNemar test against
another agent's games in an earlier evaluation CSV on the deals both played (the earlier expert
rows in docs/ladder/). ``--json FILE`` keeps the numbers; ``--out-dir DIR`` keeps the CSV files.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from spider_env.agents.rl.settings import ArgumentParser

from spider_env.apps.evaluation.stats import format_p, mcnemar_exact, wilson_interval
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS


def run(cmd: list[str]) -> None:
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def read_wins(path: str | Path, agent: str | None = None) -> dict[str, dict[int, bool]]:
    """``{agent: {deal: won}}`` of an evaluation CSV (only ``agent`` if given)."""
    out: dict[str, dict[int, bool]] = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if agent is None or r["agent"] == agent:
                out.setdefault(r["agent"], {})[int(r["deal"])] = r["won"] in ("True", "true", "1")
    return out


def mcnemar(a: dict[int, bool], b: dict[int, bool]) -> tuple[int, int, int, float]:
    """On the deals both played: ``(deals, only a won, only b won, exact p)``."""
    common = sorted(set(a) & set(b))
    only_a = sum(1 for d in common if a[d] and not b[d])
    only_b = sum(1 for d in common if b[d] and not a[d])
    return len(common), only_a, only_b, mcnemar_exact(only_a, only_b)


def main() -> int:
    ap = ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--variant", required=True)
    ap.add_argument("--deals", default="0:1000")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--player", action="append", help="a player spec (repeat; default planner)")
    ap.add_argument("--solver-csv", help="the solver's verdicts from an earlier run")
    ap.add_argument("--compare", action="append", default=[], help="CSV:AGENT of an earlier run")
    ap.add_argument("--max-steps", type=int, default=DEFAULT_MAX_EPISODE_STEPS)
    ap.add_argument("--skip-solver", action="store_true", help="only the players")
    ap.add_argument("--json", help="write the numbers here")
    ap.add_argument("--out-dir", help="keep the per-deal CSV files here")
    a = ap.parse_args()
    players = a.player or ["planner"]
    for spec in a.compare:
        path, colon, agent = spec.partition(":")
        if not colon or not agent or not Path(path).is_file():
            print(f"ladder.py: --compare wants CSV:AGENT with an existing CSV, got {spec!r}",
                  file=sys.stderr)  # fmt: skip
            return 2
    exe = str(Path(sys.executable).with_name("spider-env"))
    tmp = Path(a.out_dir) if a.out_dir else Path(tempfile.mkdtemp(prefix="ladder-"))
    tmp.mkdir(parents=True, exist_ok=True)
    stem = f"{a.variant}-{a.deals.replace(':', '_')}"
    tag = "-".join(p.replace(":", "_").replace(",", "_") for p in players)
    eval_csv = tmp / f"{stem}-{tag}-evaluate.csv"
    jobs = ["--jobs", str(a.jobs)]
    solved_csv: Path | None = None
    if a.solver_csv:
        solved_csv = Path(a.solver_csv)
    elif not a.skip_solver:
        solved_csv = tmp / f"{stem}-solve.csv"
        run([exe, "solve", "--variant", a.variant, "--deals", a.deals, "--csv",
             str(solved_csv), "--quiet", *jobs])  # fmt: skip
    agents = [x for p in ["greedy", *players] for x in ("--agent", p)]
    run([exe, "evaluate", *agents, "--variant", a.variant, "--deals", a.deals,
         "--max-steps", str(a.max_steps), "--csv", str(eval_csv), "--no-progress",
         *jobs])  # fmt: skip

    wins = read_wins(eval_csv)
    names = list(wins)
    greedy, first = names[0], names[1]
    deals = sorted(wins[greedy])
    n = len(deals)
    with open(eval_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    out: dict[str, object] = {"variant": a.variant, "deals": a.deals, "n": n}
    out["max_steps"] = a.max_steps
    out["players"] = {}
    for name in names:
        mine = [r for r in rows if r["agent"] == name]
        secs = sum(float(r["seconds"]) for r in mine)
        steps = sum(int(r["steps"]) for r in mine)
        k = sum(wins[name].values())
        entry: dict[str, object] = {
            "wins": k,
            "ci": wilson_interval(k, n),
            "seconds_per_game": secs / n,
            "ms_per_decision": 1000 * secs / max(1, steps),
        }
        if name != greedy:
            _, only_g, only_p, p = mcnemar(wins[greedy], wins[name])
            entry["vs_greedy"] = {"only_greedy": only_g, "only_player": only_p, "p": p}
        out["players"][name] = entry  # type: ignore[index]
    comparisons = []
    for spec in a.compare:
        path, _, agent = spec.partition(":")
        earlier = read_wins(path, agent).get(agent) if Path(path).is_file() else None
        if not earlier:
            print(
                f"ladder.py: --compare {spec!r}: no games of {agent!r} in {path}", file=sys.stderr
            )
            return 2
        common, only_first, only_other, p = mcnemar(wins[first], earlier)
        comparisons.append(
            {
                "player": first,
                "other": agent,
                "file": path,
                "deals": common,
                "player_wins": sum(wins[first][d] for d in earlier if d in wins[first]),
                "other_wins": sum(earlier[d] for d in earlier if d in wins[first]),
                "only_player": only_first,
                "only_other": only_other,
                "p": p,
            }
        )
    out["compare"] = comparisons
    if solved_csv is not None:
        with open(solved_csv, newline="") as f:
            verdict = {int(r["deal"]): r["verdict"] for r in csv.DictReader(f)}
        winnable = [d for d in deals if verdict.get(d) == "won"]
        out["solver_csv"] = str(solved_csv)
        out["solver_won"] = len(winnable)
        out["solver_lost"] = sum(1 for d in deals if verdict.get(d) == "lost")
        out["won_of_winnable"] = {name: sum(1 for d in winnable if wins[name][d]) for name in names}

    def pct(k: int, m: int) -> str:
        return f"{100 * k / m:.1f}%" if m else "-"

    def ci(k: int) -> str:
        lo, hi = wilson_interval(k, n)
        return f"{pct(k, n)} ({100 * lo:.1f}-{100 * hi:.1f})"

    solver = share = "-"
    if solved_csv is not None:
        sw = int(out["solver_won"])  # type: ignore[call-overload]
        solver = pct(sw, n)
        share = pct(out["won_of_winnable"][first], sw)  # type: ignore[index]
    info = out["players"][first]  # type: ignore[index]
    cells = " | ".join(ci(sum(wins[name].values())) for name in names)
    print(
        f"| variant | deals | solver-winnable | {' | '.join(names)} | {first} won of winnable "
        "| McNemar p vs greedy | s/game | ms/decision |"
    )
    print(
        f"| {a.variant} | {a.deals} ({n}) | {solver} | {cells} | {share} "
        f"| {format_p(float(info['vs_greedy']['p']))} | {info['seconds_per_game']:.1f} "
        f"| {info['ms_per_decision']:.0f} |"
    )
    for c in comparisons:
        print(
            f"{first} vs {c['other']} ({c['file']}), {c['deals']} deals: {c['player_wins']} "
            f"against {c['other_wins']} wins, McNemar p = {format_p(float(c['p']))}"
        )
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")
    if not a.out_dir:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
