"""The ladder above greedy: the solver's share of winnable deals, and greedy and the expert on
the same deals, for one variant. Produces one row of the README's table.

    python benchmarks/ladder.py --variant spider-1suit --deals 0:1000 --jobs 2

runs, one after the other (each with ``--jobs``):

1. ``spider-env solve --variant V --deals D [--nodes N] --csv ...`` (every card known; the
   solver's default method and budget unless ``--solver-nodes`` is given);
2. ``spider-env evaluate --agent greedy --agent EXPERT --variant V --deals D --csv ...``;

and prints a markdown row: deals, solver-winnable share, greedy and expert win rates (95%
Wilson intervals), the expert's share of the solver-winnable deals, McNemar p (expert vs
greedy), time per game and per decision of the expert. ``--json FILE`` keeps the numbers;
``--out-dir DIR`` keeps both CSV files.
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

from spider_env.apps.evaluation.stats import format_p, mcnemar_exact, wilson_interval
from spider_env.core.variants import get_variant
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS
from spider_env.search.solver import default_method, default_nodes


def run(cmd: list[str]) -> None:
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--variant", required=True)
    ap.add_argument("--deals", default="0:1000")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--expert", default="expert", help="the expert's spec (expert:samples=..)")
    ap.add_argument(
        "--solver-nodes", type=int, default=None, help="the solver's budget (default: its own)"
    )
    ap.add_argument("--max-steps", type=int, default=DEFAULT_MAX_EPISODE_STEPS)
    ap.add_argument("--skip-solver", action="store_true", help="only greedy and the expert")
    ap.add_argument("--json", help="write the numbers here")
    ap.add_argument("--out-dir", help="keep the per-deal CSV files here")
    a = ap.parse_args()
    exe = str(Path(sys.executable).with_name("spider-env"))
    tmp = Path(a.out_dir) if a.out_dir else Path(tempfile.mkdtemp(prefix="ladder-"))
    tmp.mkdir(parents=True, exist_ok=True)
    stem = f"{a.variant}-{a.deals.replace(':', '_')}"
    solved_csv = tmp / f"{stem}-solve.csv"
    eval_csv = tmp / f"{stem}-{a.expert.replace(':', '_').replace(',', '_')}-evaluate.csv"
    jobs = ["--jobs", str(a.jobs)]
    if not a.skip_solver:
        budget = [] if a.solver_nodes is None else ["--nodes", str(a.solver_nodes)]
        run([exe, "solve", "--variant", a.variant, "--deals", a.deals, *budget,
             "--csv", str(solved_csv), "--quiet", *jobs])  # fmt: skip
    run([exe, "evaluate", "--agent", "greedy", "--agent", a.expert, "--variant", a.variant,
         "--deals", a.deals, "--max-steps", str(a.max_steps), "--csv", str(eval_csv),
         "--no-progress", *jobs])  # fmt: skip

    with open(eval_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    names = list(dict.fromkeys(r["agent"] for r in rows))
    greedy_name, expert_name = names[0], names[1]
    won = {(r["agent"], int(r["deal"])): r["won"] in ("True", "true", "1") for r in rows}
    deals = sorted({int(r["deal"]) for r in rows})
    n = len(deals)
    g = [won[greedy_name, d] for d in deals]
    e = [won[expert_name, d] for d in deals]
    ex_rows = [r for r in rows if r["agent"] == expert_name]
    secs = sum(float(r["seconds"]) for r in ex_rows)
    steps = sum(int(r["steps"]) for r in ex_rows)
    out: dict[str, object] = {
        "variant": a.variant,
        "deals": a.deals,
        "n": n,
        "expert": expert_name,
        "greedy_wins": sum(g),
        "expert_wins": sum(e),
        "expert_ci": wilson_interval(sum(e), n),
        "greedy_ci": wilson_interval(sum(g), n),
        "mcnemar_p": mcnemar_exact(
            sum(1 for x, y in zip(g, e) if x and not y), sum(1 for x, y in zip(g, e) if y and not x)
        ),
        "seconds_per_game": secs / n,
        "ms_per_decision": 1000 * secs / max(1, steps),
        "max_steps": a.max_steps,
    }
    if not a.skip_solver:
        with open(solved_csv, newline="") as f:
            verdict = {int(r["deal"]): r["verdict"] for r in csv.DictReader(f)}
        winnable = [d for d in deals if verdict.get(d) == "won"]
        out["solver_nodes"] = a.solver_nodes or default_nodes(
            default_method(get_variant(a.variant))
        )
        out["solver_won"] = len(winnable)
        out["solver_lost"] = sum(1 for d in deals if verdict.get(d) == "lost")
        out["expert_won_of_winnable"] = sum(1 for d in winnable if won[expert_name, d])
        out["greedy_won_of_winnable"] = sum(1 for d in winnable if won[greedy_name, d])
        out["expert_won_not_found_winnable"] = sum(
            1 for d in deals if won[expert_name, d] and verdict.get(d) != "won"
        )

    def pct(k: int, m: int) -> str:
        return f"{100 * k / m:.1f}%" if m else "-"

    def ci(k: int) -> str:
        lo, hi = wilson_interval(k, n)
        return f"{pct(k, n)} ({100 * lo:.1f}-{100 * hi:.1f})"

    solver = "-"
    share = "-"
    if not a.skip_solver:
        sw = int(out["solver_won"])  # type: ignore[call-overload]
        solver = pct(sw, n)
        share = pct(int(out["expert_won_of_winnable"]), sw)  # type: ignore[call-overload]
    print(
        "| variant | deals | solver-winnable | greedy | expert | expert won of winnable "
        "| McNemar p | s/game | ms/decision |"
    )
    print(
        f"| {a.variant} | {a.deals} ({n}) | {solver} | {ci(sum(g))} | {ci(sum(e))} | {share} "
        f"| {format_p(float(out['mcnemar_p']))} | {out['seconds_per_game']:.1f} "  # type: ignore[arg-type]
        f"| {out['ms_per_decision']:.0f} |"
    )
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")
    if not a.out_dir:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
