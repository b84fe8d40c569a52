"""The solver table: for every variant solved by ``make solver-table`` (``spider-env solve
--variant V --deals 0:1000 --jobs 2 --csv docs/solver/V-0_1000.csv``), the share of deals that
are winnable with every card known: won / proven lost / unknown, with a 95% Wilson interval on
the wins, and the seconds per deal (wall time of the search inside its worker, one core each).

    .venv/bin/python benchmarks/solver_table.py [--dir docs/solver] [--markdown]
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

from spider_env.agents.rl.settings import ArgumentParser

from spider_env.apps.evaluation.stats import wilson_interval
from spider_env.core.variants import VARIANTS

#: The table's header and rule.
HEADER = (
    "| game | deals | won (95% CI) | proven lost | unknown (why) | s/deal mean | median | max |",
    "|---|---|---|---:|---|---:|---:|---:|",
)


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def line_of(variant: str, rows: list[dict[str, str]], deals: str) -> str:
    n = len(rows)
    won = sum(r["verdict"] == "won" for r in rows)
    lost = sum(r["verdict"] == "lost" for r in rows)
    unknown = n - won - lost
    why: dict[str, int] = {}
    for r in rows:
        if r["verdict"] == "unknown":
            why[r["budget"] or "?"] = why.get(r["budget"] or "?", 0) + 1
    lo, hi = wilson_interval(won, n)
    secs = [float(r["seconds"]) for r in rows]
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(why.items()))
    return (
        f"| `{variant}` | {deals} ({n}) | {100 * won / n:.1f}% ({100 * lo:.1f}-{100 * hi:.1f}) "
        f"| {lost} | {unknown}{f' ({reasons})' if reasons else ''} "
        f"| {sum(secs) / n:.2f} | {statistics.median(secs):.2f} | {max(secs):.1f} |"
    )


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", default="docs/solver", help="where the CSV files are")
    a = p.parse_args(argv)
    folder = Path(a.dir)
    print("\n".join(HEADER))
    found = 0
    for variant in VARIANTS:
        for path in sorted(folder.glob(f"{variant}-*.csv")):
            deals = path.stem[len(variant) + 1 :].replace("_", "..")
            start, _, stop = deals.partition("..")
            shown = f"{start}..{int(stop) - 1}" if stop.isdigit() else deals
            print(line_of(variant, rows_of(path), shown))
            found += 1
    if not found:
        p.exit(2, f"solver_table.py: error: no VARIANT-*.csv files in {folder}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
