"""The solvers side by side on the same deals, in one process: the beam (``method="beam"``,
the default) and best-first search (``method="best-first"``, the first solver), each at its
default budget unless ``--nodes`` is given.

For each method: deals won / proven lost / unknown (with a 95% Wilson interval on the wins), CPU
seconds per deal (``time.process_time``, one core: mean, median, max), positions per deal and
per CPU-second (the beam's positions are the ones it generates and hashes, best-first's the
ones it stores, so the two rates do not measure the same unit), and the deals one method won
that the other did not. Numba compiles before the clock starts. Not a test; run it as

    .venv/bin/python benchmarks/bench_solver.py --variant spider-4suit --deals 0:100
    .venv/bin/python benchmarks/bench_solver.py --variant spider-2suit --deals 0:100 --json F
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from spider_env.agents.rl.settings import ArgumentParser

from spider_env.apps.evaluation.deals import parse_deals
from spider_env.apps.evaluation.stats import wilson_interval
from spider_env.core.deals import generate_deal
from spider_env.core.state import State
from spider_env.core.variants import get_variant
from spider_env.search.budget import check_budget
from spider_env.search.solver import default_nodes, solve

METHODS = ("beam", "best-first")


def run_method(variant: str, deals: list[int], method: str, nodes: int | None) -> dict[str, Any]:
    """Solve every deal with ``method``; the per-deal verdicts, CPU seconds and positions."""
    solve(State.from_deal(generate_deal(variant, 0)), 10, method=method)  # compile first
    rows = []
    for d in deals:
        s = State.from_deal(generate_deal(variant, d))
        t0 = time.process_time()
        r = solve(s, nodes, method=method)
        cpu = time.process_time() - t0
        rows.append({"deal": d, "verdict": r.verdict, "cpu_s": cpu, "nodes": r.nodes})
    return {"method": method, "nodes_budget": nodes or default_nodes(method), "deals": rows}


def summary(res: dict[str, Any]) -> dict[str, Any]:
    rows = res["deals"]
    n = len(rows)
    won = sum(r["verdict"] == "won" for r in rows)
    lost = sum(r["verdict"] == "lost" for r in rows)
    cpu = [r["cpu_s"] for r in rows]
    nodes = sum(r["nodes"] for r in rows)
    lo, hi = wilson_interval(won, n)
    return {
        "method": res["method"],
        "budget": res["nodes_budget"],
        "deals": n,
        "won": won,
        "lost": lost,
        "unknown": n - won - lost,
        "won_ci": [lo, hi],
        "cpu_s_mean": sum(cpu) / n,
        "cpu_s_median": statistics.median(cpu),
        "cpu_s_max": max(cpu),
        "nodes_per_deal": nodes / n,
        "nodes_per_cpu_s": nodes / max(sum(cpu), 1e-9),
    }


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", default="spider-4suit")
    p.add_argument("--deals", default="0:50", help="deal numbers: 0:100, 7, 1,5,9")
    p.add_argument("--nodes", type=int, default=None, help="one budget for both methods")
    p.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    p.add_argument("--json", help="write every figure and per-deal row here")
    a = p.parse_args(argv)
    try:
        variant = get_variant(a.variant).name
        deals = list(parse_deals(a.deals))
        if a.nodes is not None:
            check_budget(a.nodes, None)
    except (ValueError, TypeError) as exc:
        p.exit(2, f"bench_solver.py: error: {exc}\n")
    results = [run_method(variant, deals, m, a.nodes) for m in a.methods]
    sums = [summary(r) for r in results]
    print(f"{variant}, deals {a.deals} ({len(deals)}), CPU seconds of this process, one core")
    print(
        "| method | budget (positions) | won (95% CI) | lost | unknown | CPU s/deal mean "
        "| median | max | positions/deal | positions/CPU-s |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for s in sums:
        lo, hi = s["won_ci"]
        print(
            f"| {s['method']} | {s['budget']:,} | {s['won']} ({100 * s['won'] / s['deals']:.1f}%; "
            f"{100 * lo:.1f}-{100 * hi:.1f}) | {s['lost']} | {s['unknown']} "
            f"| {s['cpu_s_mean']:.2f} | {s['cpu_s_median']:.2f} | {s['cpu_s_max']:.2f} "
            f"| {s['nodes_per_deal']:,.0f} | {s['nodes_per_cpu_s']:,.0f} |"
        )
    if len(results) == 2:
        won = [{r["deal"] for r in res["deals"] if r["verdict"] == "won"} for res in results]
        print(
            f"won by {results[0]['method']} only: {len(won[0] - won[1])}; by "
            f"{results[1]['method']} only: {len(won[1] - won[0])}; by both: {len(won[0] & won[1])}"
        )
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        out = {"variant": variant, "deals": a.deals, "summaries": sums, "results": results}
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
