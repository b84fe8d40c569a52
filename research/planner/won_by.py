"""How much of a player's outcome is its run's luck? Count, deal by deal, the runs that won it.

    python research/planner/won_by.py research/planner/results/spider-4suit-5000_5*-evaluate.csv \
        --deals 5000:5100

Reads evaluation CSVs (``spider-env evaluate --csv``; a file may hold several agents). A *run* is
one agent of one file; the runs that played every deal of ``--deals`` are kept (the others are
named and skipped), with ``--prefix P`` only those of agents whose name starts with ``P``, and
all must be of one game. It prints each run's wins, then, over the
deals: how many runs won each deal (the count of deals won by 0, 1, 2, ... runs), the deals won
by at least one run and by every run, and the mean wins of a run. A deal won by some runs and
not others is one whose outcome the player's samples decide; the deals won by at least one run
bound what a player that drew its samples well could win. ``--csv FILE`` writes per deal the
runs that won it.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from collections.abc import Sequence

from spider_env.agents.rl.settings import ArgumentParser

from spider_env.apps.evaluation.deals import parse_deals
from spider_env.apps.evaluation.flags import check_writable

NEED = {"variant", "agent", "deal", "won"}
WON = ("True", "true", "1")


def read_runs(paths: Sequence[str]) -> dict[tuple[str, str], tuple[str, dict[int, bool]]]:
    """Each run ``(file, agent)`` of the CSVs: its game and its outcome per deal; ``ValueError``
    naming the file that is not an evaluation CSV, has a line that is not a game's record, or
    plays a deal twice."""
    runs: dict[tuple[str, str], tuple[str, dict[int, bool]]] = {}
    for path in paths:
        try:
            with open(path, newline="") as f:
                reader = csv.DictReader(f)
                missing = NEED - set(reader.fieldnames or ())
                if missing:
                    cols = ", ".join(sorted(missing))
                    raise ValueError(f"{path} is not an evaluation CSV: no column {cols}")
                for row in reader:
                    try:
                        deal = int(row["deal"])
                    except (TypeError, ValueError):
                        raise ValueError(
                            f"{path}: line {reader.line_num} is not a game's record"
                        ) from None
                    variant, games = runs.setdefault((path, row["agent"]), (row["variant"], {}))
                    if row["variant"] != variant:
                        raise ValueError(f"{path}: agent {row['agent']!r} plays two games")
                    if deal in games:
                        raise ValueError(f"{path}: agent {row['agent']!r} plays deal {deal} twice")
                    games[deal] = row["won"] in WON
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read {path}: {exc}") from None
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    ap = ArgumentParser(
        prog="won_by.py", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    ap.add_argument("csv", nargs="+", help="evaluation CSVs")
    ap.add_argument("--deals", required=True, help="deal range or list, e.g. 5000:5100")
    ap.add_argument("--prefix", default="", help="only the agents whose name starts with this")
    ap.add_argument("--csv", dest="out", metavar="FILE", help="write per deal the runs that won it")
    a = ap.parse_args(argv)
    try:
        deals = parse_deals(a.deals)
        check_writable("--csv", a.out)
        runs = read_runs(a.csv)
    except ValueError as exc:
        ap.error(str(exc).replace("\n", " "))
    kept, skipped = {}, []
    for (path, agent), (variant, games) in runs.items():
        if not agent.startswith(a.prefix):
            continue
        if all(d in games for d in deals):
            kept[(path, agent)] = (variant, games)
        else:
            skipped.append(
                f"skipped {agent} in {path}: {sum(d in games for d in deals)} of the deals"
            )
    if not kept:
        ap.error(f"no run of {a.prefix or 'any agent'}* played every deal of --deals {a.deals}")
    variants = {v for v, _ in kept.values()}
    if len(variants) > 1:
        ap.error(f"the runs are of several games: {', '.join(sorted(variants))}")
    print("\n".join(skipped), end="\n" if skipped else "")
    for (path, agent), (_, games) in kept.items():
        print(f"{sum(games[d] for d in deals):5d}  {agent}  ({path})")
    won_by = {d: sum(games[d] for _, games in kept.values()) for d in deals}
    n, m = len(kept), len(deals)
    print(f"{n} runs of {variants.pop()} on {m} deals:")
    print("  runs that won a deal: deals")
    for k, count in sorted(Counter(won_by.values()).items()):
        print(f"  {k:4d}: {count}")
    print(f"  won by at least one run: {sum(1 for k in won_by.values() if k)} of {m}")
    print(f"  won by every run: {sum(1 for k in won_by.values() if k == n)} of {m}")
    print(f"  a run's wins (mean): {sum(won_by.values()) / n:.1f}")
    if a.out:
        with open(a.out, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["deal", "runs", "won_by"])
            w.writerows((d, n, won_by[d]) for d in deals)
    return 0


if __name__ == "__main__":
    sys.exit(main())
