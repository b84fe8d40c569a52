"""Paired comparison of agents from saved evaluations, without playing them again.

    python examples/compare_records.py runs/ppo_1suit/test.json \\
        docs/ladder/spider-1suit-0_1000-expert-evaluate.csv

Reads the per-deal records of ``spider-env evaluate --json FILE`` or ``--csv FILE`` (any number
of files, of one game), and prints each agent's win rate with its Wilson 95% interval and, for
every pair of agents, the exact McNemar test on the deals both played (what ``spider-env
evaluate`` prints when it plays the agents together). An agent found in two files keeps the
first file's records.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spider_env.agents.rl.settings import ArgumentParser, InputFile, OutputFile, path_problem

from spider_env.apps.evaluation.results import DealRecord, compare, summarise
from spider_env.apps.evaluation.stats import format_p


def read_records(path: str) -> tuple[str, dict[str, list[DealRecord]]]:
    """The game and each agent's records in an evaluation's JSON or CSV file; ``ValueError``
    if it is not one."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    rows: list[dict[str, Any]]
    try:
        data = json.loads(text)
        rows = [dict(r, variant=data["variant"]) for r in data["records"]]
    except (ValueError, KeyError, TypeError):
        rows = list(csv.DictReader(text.splitlines()))
    out: dict[str, list[DealRecord]] = {}
    variants = set()
    try:
        for r in rows:
            won = r["won"] if isinstance(r["won"], bool) else r["won"] == "True"
            rec = DealRecord(str(r["agent"]), int(r["deal"]), won, int(r["completed_runs"]), 0, 0,
                             int(r.get("steps") or 0), 0.0, False, 0.0)  # fmt: skip
            out.setdefault(rec.agent, []).append(rec)
            variants.add(str(r["variant"]))
    except (KeyError, TypeError, ValueError):
        out = {}
    if not out or len(variants) != 1:
        raise ValueError(f"{path} holds no records of spider-env evaluate (--json or --csv)")
    return variants.pop(), out


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="*", type=InputFile, help="evaluation JSON or CSV files")
    p.add_argument("--json", type=OutputFile, help="also write the comparison here")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = build_parser()
    args = p.parse_args(argv)
    if args.json and (problem := path_problem(OutputFile, args.json)):
        p.error(f"--json: {problem}")
    if not args.files:
        p.error("files: give at least one evaluation file (JSON or CSV)")
    agents: dict[str, list[DealRecord]] = {}
    games = set()
    for path in args.files:
        if problem := path_problem(InputFile, path):
            p.error(f"files: {problem}")
        try:
            game, found = read_records(path)
        except (OSError, ValueError) as exc:
            p.error(f"files: {exc}")
        games.add(game)
        for name, recs in found.items():
            agents.setdefault(name, recs)
    if len(games) > 1:
        p.error(f"files: the files hold different games ({', '.join(sorted(games))})")
    out: dict[str, Any] = {"variant": games.pop(), "agents": {}, "comparisons": []}
    for name, recs in agents.items():
        s = summarise(name, recs)
        out["agents"][name] = {"deals": s.deals, "wins": s.wins, "win_rate": s.win_rate,
                               "ci95": [s.ci_low, s.ci_high]}  # fmt: skip
        print(f"{name}: {s.wins}/{s.deals} = {s.win_rate:.1%} ({s.ci_low:.1%}-{s.ci_high:.1%})")
    for a, b in itertools.combinations(agents, 2):
        common = {r.deal for r in agents[a]} & {r.deal for r in agents[b]}
        if not common:
            continue
        ra = sorted((r for r in agents[a] if r.deal in common), key=lambda r: r.deal)
        rb = sorted((r for r in agents[b] if r.deal in common), key=lambda r: r.deal)
        c = compare(ra, rb)
        row = {"a": a, "b": b, "deals": len(common), "both": c.both, "only_a": c.only_a,
               "only_b": c.only_b, "p": c.p_value}  # fmt: skip
        out["comparisons"].append(row)
        print(f"{a} vs {b} on {len(common)} deals: only {a} {c.only_a}, only {b} {c.only_b}, "
              f"McNemar exact p = {format_p(c.p_value)}")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main()
