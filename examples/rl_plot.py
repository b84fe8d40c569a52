"""The RL recipe's learning curves: behaviour cloning by epoch, then PPO fine-tuning by step.

    python examples/rl_plot.py --dir runs/rl_1suit --out docs/rl/learning_curves_1suit.png

Reads ``bc_curve.csv`` and ``ppo_curve.csv`` (written by ``rl_bc.py`` and ``rl_finetune.py``)
and ``baselines.json`` (random, greedy and lookahead on the same validation deals, written by
``rl_recipe.py`` or computed here with ``--compute-baselines``) from ``--dir``, and draws the
validation win rate of both stages (most likely action and sampled) with the baselines as
horizontal lines.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BASELINES = ("random", "greedy", "lookahead")
BASELINE_STYLE = {
    "random": ("tab:gray", ":"),
    "greedy": ("tab:red", "--"),
    "lookahead": ("tab:purple", "-."),
}


def read_curve(path: Path) -> list[dict[str, float]]:
    """Rows of a curve CSV (numbers only)."""
    with path.open() as fh:
        rows = []
        for row in csv.DictReader(fh):
            rows.append({k: float(v) for k, v in row.items() if k != "checkpoint" and v != ""})
    if not rows:
        raise ValueError(f"{path} has no rows")
    return rows


def compute_baselines(variant: str, deals: range, jobs: int = 1) -> dict[str, Any]:
    """Win rates of random, greedy and lookahead on ``deals`` (``spider_env`` evaluation)."""
    from spider_env.apps.evaluation import evaluate

    res = evaluate(list(BASELINES), deals, variant=variant, jobs=jobs)
    return {
        "variant": variant,
        "deals": f"{deals.start}:{deals.stop}",
        **{s.agent: {"win_rate": s.win_rate, "runs": s.mean_runs} for s in res.summaries},
    }


def plot(directory: Path, out: Path, title: str | None = None) -> Path:
    """Draw the curves of ``directory`` into the PNG ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bc = read_curve(directory / "bc_curve.csv")
    ppo = read_curve(directory / "ppo_curve.csv")
    base = json.loads((directory / "baselines.json").read_text())
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    panels = ((axes[0], bc, "epoch", "behaviour cloning (epochs)"),
              (axes[1], ppo, "timesteps", "MaskablePPO fine-tuning (env steps)"))  # fmt: skip
    for ax, rows, x, xlabel in panels:
        for key, label, marker in (("argmax", "most likely action", "o"),
                                   ("sampled", "sampled", "s")):  # fmt: skip
            pts = [(r[x], r[f"win_rate_{key}"]) for r in rows if f"win_rate_{key}" in r]
            ax.plot(
                [p[0] for p in pts], [p[1] for p in pts], marker=marker, label=f"model, {label}"
            )
        for name in BASELINES:
            if name in base:
                color, style = BASELINE_STYLE[name]
                ax.axhline(base[name]["win_rate"], color=color, linestyle=style, label=name)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"win rate, validation deals {base.get('deals', '')}")
    axes[1].legend(loc="lower right", fontsize=8)
    fig.suptitle(title or f"RL recipe on {base.get('variant', '')}")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", default="runs/rl_1suit", help="the recipe's output folder")
    p.add_argument("--out", default=None, help="PNG (default DIR/learning_curves.png)")
    p.add_argument("--compute-baselines", metavar="VARIANT:START:STOP", default=None)
    p.add_argument("--title", default=None)
    args = p.parse_args(argv)
    d = Path(args.dir)
    try:
        if args.compute_baselines:
            parts = args.compute_baselines.rsplit(":", 2)
            if len(parts) != 3 or not (parts[1].isdigit() and parts[2].isdigit()):
                raise ValueError(
                    f"--compute-baselines wants VARIANT:START:STOP, got {args.compute_baselines!r}"
                )
            data = compute_baselines(parts[0], range(int(parts[1]), int(parts[2])))
            (d / "baselines.json").write_text(json.dumps(data, indent=2) + "\n")
        out = plot(d, Path(args.out) if args.out else d / "learning_curves.png", args.title)
    except (OSError, ValueError, KeyError) as exc:
        print(f"rl_plot.py: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
