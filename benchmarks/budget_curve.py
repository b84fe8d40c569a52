"""The planner's strength against its budget: win rate at each setting of the dial
``planner:budget=N`` (scores per planned decision, every other setting derived from it; see
``PlannerAgent``), on the same deals, with intervals and time per game, as a table and a plot.

    python benchmarks/budget_curve.py --suits 2 --budgets 12,48,192,768,1536 \\
        --deals 700000:700050 --jobs 2

plays, one budget after the other, ``spider-env evaluate --agent planner:budget=N --suits S
--deals D --jobs 2 --json OUT/spider-Ssuit-budget-N.json`` (``--ray ADDRESS`` plays on Ray
instead: ``local`` starts a private cluster on this machine), skipping a budget whose file
already holds those deals and seed (so an interrupted run resumes), then writes ``OUT/curve.csv``
(every game and budget in ``OUT``: wins, 95% Wilson interval, seconds per game, and the paired
McNemar test against the game's default budget on the deals both played) and
``OUT/budget_curve.png`` (win rate against the cost of a game, one line per game). ``--plot-only``
only rewrites those two from the files in ``OUT``; ``--markdown`` also prints the table of the
players guide. Seconds are measured inside the worker
playing the game, one game per core, so they are about its CPU time.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any

from spider_env.agents.planner import DIAL, default_budget
from spider_env.agents.rl.settings import ArgumentParser, UsageError

from spider_env.apps.evaluation.flags import check_games, check_writable
from spider_env.apps.evaluation.stats import format_p, wilson_interval

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder import mcnemar
from reference import cartpole_steps_per_second

OUT_DIR = "docs/budget"
FIELDS = (
    "variant",
    "budget",
    "default",
    "deals",
    "first_deal",
    "wins",
    "win_rate",
    "ci_low",
    "ci_high",
    "seconds_per_game",
    "cartpole_steps_per_second",
    "mcartpole_per_game",
    "vs_default_only_this",
    "vs_default_only_default",
    "vs_default_p",
)


def parse_budgets(text: str) -> list[int]:
    """The budgets of ``--budgets`` (comma-separated ints in the dial's range, none twice);
    ``ValueError`` naming the flag."""
    low, high = DIAL
    out: list[int] = []
    for item in text.split(","):
        try:
            n = int(item)
        except ValueError:
            raise ValueError(f"--budgets: {item.strip()!r} is not an integer") from None
        if not low <= n <= high:
            raise ValueError(f"--budgets: {n} is not in {low}..{high}")
        if n in out:
            raise ValueError(f"--budgets: {n} given twice")
        out.append(n)
    return out


def point_path(out: Path, variant: str, budget: int) -> Path:
    """The evaluation file of one point of the curve."""
    return out / f"{variant}-budget-{budget}.json"


def done(path: Path, deals: list[int], seed: int, max_steps: int) -> bool:
    """Whether ``path`` holds an evaluation on exactly ``deals`` with ``seed`` and
    ``max_steps``."""
    if not path.exists():
        return False
    data = json.loads(path.read_text(encoding="utf-8"))
    same = (data.get("deals"), data.get("seed"), data.get("max_steps")) == (deals, seed, max_steps)
    return bool(same)


def play_point(
    variant: str,
    budget: int,
    deals: list[int],
    *,
    spelled: str,
    seed: int = 0,
    max_steps: int | None = None,
    jobs: int = 1,
    ray: str | None = None,
    out: Path,
) -> None:
    """Evaluate ``planner:budget=N`` on ``deals`` (``spelled``: as ``--deals`` gave them) and
    write its file (unless it is there)."""
    from spider_env.apps.evaluation import evaluate
    from spider_env.apps.evaluation.episode import step_limit

    path = point_path(out, variant, budget)
    if done(path, deals, seed, step_limit(max_steps)):
        print(f"{path}: already played", flush=True)
        return
    where = f"--ray {ray}" if ray else f"--jobs {jobs}"
    print(
        f"$ spider-env evaluate --agent planner:budget={budget} --variant {variant} --deals "
        f"{spelled} --seed {seed} --max-steps {step_limit(max_steps)} {where} "
        f"--json {path}",
        flush=True,
    )
    before = cartpole_steps_per_second()
    result = evaluate(
        f"planner:budget={budget}",
        deals,
        variant=variant,
        jobs=jobs,
        seed=seed,
        ray=ray,
        max_steps=max_steps,
    )
    data = result.to_dict()
    # the machine's speed around the games: CartPole-v1's steps per CPU-second, before and after
    data["cartpole_steps_per_second"] = round((before + cartpole_steps_per_second()) / 2)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    s = result.summaries[0]
    print(
        f"budget {budget}: {s.wins} of {s.deals} ({100 * s.win_rate:.1f}%), "
        f"{s.seconds / max(1, s.deals):.2f} s/game, backend {result.backend}",
        flush=True,
    )


def load_points(out: Path) -> list[dict[str, Any]]:
    """Every point in ``out``: variant, budget, deals and per-deal wins and seconds."""
    points = []
    for path in sorted(out.glob("*-budget-*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        budget = int(path.stem.rsplit("-", 1)[1])
        recs = data["records"]
        points.append(
            {
                "variant": data["variant"],
                "budget": budget,
                "wins": {r["deal"]: bool(r["won"]) for r in recs},
                "seconds": sum(r["seconds"] for r in recs) / max(1, len(recs)),
                "cartpole": data.get("cartpole_steps_per_second"),
            }
        )
    return sorted(points, key=lambda p: (p["variant"], p["budget"]))


def curve_rows(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of ``curve.csv`` (see the module docstring)."""
    rows = []
    for p in points:
        default = default_budget(p["variant"])["evals"]
        ref = next(
            (q for q in points if q["variant"] == p["variant"] and q["budget"] == default), None
        )
        wins = p["wins"]
        n, k = len(wins), sum(wins.values())
        lo, hi = wilson_interval(k, n)
        row: dict[str, Any] = {
            "variant": p["variant"],
            "budget": p["budget"],
            "default": default,
            "deals": n,
            "first_deal": min(wins),
            "wins": k,
            "win_rate": round(k / n, 4),
            "ci_low": round(lo, 4),
            "ci_high": round(hi, 4),
            "seconds_per_game": round(p["seconds"], 3),
            "cartpole_steps_per_second": p["cartpole"] or "",
            "mcartpole_per_game": round(p["seconds"] * p["cartpole"] / 1e6, 3)
            if p["cartpole"]
            else "",
            "vs_default_only_this": "",
            "vs_default_only_default": "",
            "vs_default_p": "",
        }
        if ref is not None and ref is not p:
            _, a, b, p_value = mcnemar(wins, ref["wins"])
            row["vs_default_only_this"] = a
            row["vs_default_only_default"] = b
            row["vs_default_p"] = format_p(p_value)
        rows.append(row)
    return rows


def write_curve(out: Path) -> list[dict[str, Any]]:
    """Write ``curve.csv`` and ``budget_curve.png`` from the points in ``out``; the rows."""
    rows = curve_rows(load_points(out))
    with open(out / "curve.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, FIELDS)
        w.writeheader()
        w.writerows(rows)
    if rows:
        plot(rows, out / "budget_curve.png")
    return rows


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """The rows as the markdown table of docs/guide/players.md (``--markdown`` prints it)."""
    lines = [
        "| game | budget | deals | won | 95% interval | s/game | M CartPole steps/game "
        "| vs the default (only this / only default, p) |",
        "|---|---:|---:|---:|---|---:|---:|---|",
    ]
    for r in rows:
        budget = f"**{r['budget']}** (default)" if r["budget"] == r["default"] else str(r["budget"])
        paired = (
            f"{r['vs_default_only_this']} / {r['vs_default_only_default']}, p {r['vs_default_p']}"
            if r["vs_default_p"] != ""
            else "-"
        )
        cost = f"{r['mcartpole_per_game']:.2f}" if r["mcartpole_per_game"] != "" else "-"
        lines.append(
            f"| `{r['variant']}` | {budget} | {r['deals']} | {100 * r['win_rate']:.1f}% "
            f"| {100 * r['ci_low']:.1f}-{100 * r['ci_high']:.1f}% "
            f"| {r['seconds_per_game']:.2f} | {cost} | {paired} |"
        )
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Win rate (95% intervals) against the cost of a game, log scale, one line per game; each
    point labelled with its budget, the default's circled. The cost is the game's seconds times
    CartPole-v1's steps per second measured in the same run (so machines of different speed
    agree), or seconds where a point lacks that measurement."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    scaled = all(r["mcartpole_per_game"] != "" for r in rows)
    xkey = "mcartpole_per_game" if scaled else "seconds_per_game"
    for variant in dict.fromkeys(r["variant"] for r in rows):
        rs = [r for r in rows if r["variant"] == variant]
        x = [max(r[xkey], 1e-4) for r in rs]
        y = [100 * r["win_rate"] for r in rs]
        err = [
            [100 * (r["win_rate"] - r["ci_low"]) for r in rs],
            [100 * (r["ci_high"] - r["win_rate"]) for r in rs],
        ]
        line = ax.errorbar(
            x, y, yerr=err, marker="o", capsize=3, label=f"{variant} ({rs[0]['deals']} deals)"
        )
        for r, xi, yi in zip(rs, x, y):
            ax.annotate(
                str(r["budget"]), (xi, yi), textcoords="offset points", xytext=(4, -11), fontsize=7
            )
            if r["budget"] == r["default"]:
                ax.plot([xi], [yi], marker="o", ms=12, mfc="none", color=line[0].get_color())
    ax.set_xscale("log")
    ax.set_xlabel(
        "cost of a game: millions of CartPole-v1 steps in the same CPU time (log scale)"
        if scaled
        else "seconds per game (one core; log scale)"
    )
    ax.set_ylabel("deals won (%), 95% interval")
    ax.set_title("The planner's win rate against its budget (planner:budget=N; circled: default)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def build_parser() -> ArgumentParser:
    ap = ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--suits", type=int, choices=(1, 2, 4), help="Spider with 1, 2 or 4 suits")
    ap.add_argument("--variant", help="another game by name (instead of --suits)")
    ap.add_argument("--budgets", help="comma-separated dial settings, e.g. 12,48,192,768,1536")
    ap.add_argument("--deals", default="700000:700050", help="deals (default 700000:700050)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-steps", type=int, help="the step limit of a game (default the env's)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (1 or 2)")
    ap.add_argument("--ray", help="play on Ray instead: local, auto or an address")
    ap.add_argument("--out-dir", default=OUT_DIR, help=f"where the files go (default {OUT_DIR})")
    ap.add_argument("--plot-only", action="store_true", help="only rewrite curve.csv and the plot")
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    try:
        args = ap.parse_args(argv)
    except UsageError:
        return 2
    out = Path(args.out_dir)
    problem = None
    try:
        if not out.is_dir() and not out.parent.is_dir():
            raise ValueError(f"--out-dir: {out.parent} is not a folder")
        if out.is_dir():
            check_writable("--out-dir", str(out / "curve.csv"))
        if not args.plot_only:
            if (args.suits is None) == (args.variant is None):
                raise ValueError("give one of --suits or --variant")
            if args.budgets is None:
                raise ValueError("--budgets: give the dial settings, e.g. 12,48,192,768,1536")
            variant = args.variant or f"spider-{args.suits}suit"
            jobs = 1 if args.ray else args.jobs
            v, deals = check_games(variant, args.deals, args.seed, args.max_steps, args.jobs)
            budgets = parse_budgets(args.budgets)
            if args.ray is not None:
                from spider_env.apps.evaluation.ray_backend import check_address, require_ray

                check_address(args.ray)
                require_ray()
    except (ValueError, TypeError, ImportError, OSError) as exc:
        problem = str(exc).splitlines()[0]
    if problem is not None:
        try:
            ap.error(problem)
        except UsageError:
            return 2
    out.mkdir(exist_ok=True)
    if not args.plot_only:
        for budget in budgets:
            play_point(
                v.name,
                budget,
                deals,
                spelled=args.deals,
                seed=args.seed,
                max_steps=args.max_steps,
                jobs=jobs,
                ray=args.ray,
                out=out,
            )
    rows = write_curve(out)
    for r in rows:
        paired = (
            f", vs default {r['vs_default_only_this']} / {r['vs_default_only_default']} "
            f"(p {r['vs_default_p']})"
            if r["vs_default_p"] != ""
            else ""
        )
        print(
            f"{r['variant']} budget {r['budget']}: {r['wins']} of {r['deals']} "
            f"({100 * r['win_rate']:.1f}%, {100 * r['ci_low']:.1f}-{100 * r['ci_high']:.1f}), "
            f"{r['seconds_per_game']:.2f} s/game{paired}"
        )
    print(f"wrote {out / 'curve.csv'} and {out / 'budget_curve.png'}")
    if args.markdown:
        print(markdown_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
