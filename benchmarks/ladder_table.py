"""The planner's ladder table of docs/results.md from the rows ``make ladder`` wrote
(docs/ladder/V.json).

    python benchmarks/ladder_table.py [--dir docs/ladder]

One line per variant that has a row: deals, the solver's winnable share, greedy and the planner
(95% Wilson intervals), the planner's share of the winnable deals, the paired tests against
greedy and against the expert at its default budget (on the deals both played), and the
planner's time per game and per action.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from spider_env.agents.rl.settings import ArgumentParser

from spider_env.apps.evaluation.stats import format_p

ROWS = (
    "spider-1suit",
    "spider-2suit",
    "spider-4suit",
    "simple-simon",
    "spiderette-1suit",
    "spiderette-2suit",
    "spiderette-4suit",
    "scorpion",
    "spider-tournament-1suit",
    "spider-tournament-2suit",
)


def pct(k: int, n: int) -> str:
    return f"{100 * k / n:.1f}%" if n else "-"


def cell(entry: dict[str, object], n: int) -> str:
    """A win rate and its 95% interval."""
    lo, hi = entry["ci"]  # type: ignore[misc]
    return f"{pct(int(entry['wins']), n)} ({100 * lo:.1f}-{100 * hi:.1f})"  # type: ignore[call-overload]


def table(rows: dict[str, dict[str, Any]]) -> list[str]:
    """The table's lines from the rows (``{variant: row}``, as in docs/ladder/V.json): header,
    rule and one line per variant of :data:`ROWS` that has a planner row."""
    lines = [
        "| game | deals | solver: winnable | greedy | planner | planner won of winnable "
        "| planner vs greedy (McNemar p, b / c) | the expert on the same deals "
        "| planner vs expert (McNemar p, b / c) | planner s/game | ms/action |",
        "|---|---|---:|---|---|---:|---:|---|---:|---:|---:|",
    ]
    for name in ROWS:
        row = rows.get(name)
        if row is None:
            continue
        n = row["n"]
        players = row.get("players", {})  # rows of the round-four ladder have none
        if "planner" not in players:
            continue
        g, p = players["greedy"], players["planner"]

        vs = p["vs_greedy"]
        lo, _, hi = row["deals"].partition(":")
        deals = f"{lo}..{int(hi) - 1} ({n})"
        expert = versus = "-"
        for c in row.get("compare", []):
            if c["other"] == "expert":
                expert = f"{c['other_wins']} of {c['deals']} (planner {c['player_wins']})"
                versus = f"{format_p(c['p'])} ({c['only_player']} / {c['only_other']})"
        lines.append(
            f"| `{name}` | {deals} | {pct(row['solver_won'], n)} | {cell(g, n)} | **{cell(p, n)}** "
            f"| {pct(row['won_of_winnable']['planner'], row['solver_won'])} "
            f"| {format_p(vs['p'])} ({vs['only_player']} / {vs['only_greedy']}) | {expert} "
            f"| {versus} | {p['seconds_per_game']:.1f} | {p['ms_per_decision']:.0f} |"
        )
    return lines


def load(folder: Path) -> dict[str, dict[str, Any]]:
    """The rows of :data:`ROWS` stored in ``folder`` (``V.json``)."""
    paths = {name: folder / f"{name}.json" for name in ROWS}
    return {name: json.loads(path.read_text()) for name, path in paths.items() if path.exists()}


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dir", default="docs/ladder")
    a = ap.parse_args(argv)
    print("\n".join(table(load(Path(a.dir)))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
