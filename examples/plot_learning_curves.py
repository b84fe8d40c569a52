"""Plot learning curves of training runs side by side (matplotlib, no display needed).

Each run folder holds the ``eval.csv`` written by the training examples (one row per
evaluation on the validation deals). Two panels: win rate and mean completed runs against
training timesteps, with the random and greedy agents on the same deals as horizontal lines.

    python examples/plot_learning_curves.py \\
        --run "MaskablePPO=/work/runs/maskable" --run "PPO, no masks=/work/runs/ppo" \\
        --baselines /work/runs/maskable/baselines.json --out docs/learning_curve.png
"""

from __future__ import annotations

import argparse
import csv
import json
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

RUN_STYLES = (
    ("o", "-"),
    ("s", "--"),
    ("^", "-."),
    ("D", ":"),
)  # marker, line: overlaps stay visible
BASELINE_STYLE = {"random": ("tab:gray", ":"), "greedy": ("tab:red", "--")}


def _read(path: Path) -> dict[str, list[float]]:
    if not path.exists():
        raise FileNotFoundError(f"no evaluation log {path} (was the run evaluated at all?)")
    cols: dict[str, list[float]] = {}
    with path.open() as f:
        for row in csv.DictReader(f):
            for k, v in row.items():
                cols.setdefault(k, []).append(float(v))
    if not cols:
        raise ValueError(f"{path} has no evaluation rows")
    return cols


def plot_curves(
    runs: Sequence[tuple[str, Path]],
    baselines: dict[str, dict[str, float]],
    out: Path,
    suits: int = 1,
    title: str | None = None,
) -> Path:
    """Draw ``runs`` (label, eval.csv path) and ``baselines`` ({"random": {...}, "greedy": ...})
    into the PNG ``out``; returns ``out``."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    panels = (("win_rate", "win rate"), ("mean_completed_runs", "mean completed runs (of 8)"))
    for ax, (key, ylabel) in zip(axes, panels):
        for i, (label, path) in enumerate(runs):
            data = _read(Path(path))
            marker, line = RUN_STYLES[i % len(RUN_STYLES)]
            ax.plot(data["timesteps"], data[key], marker=marker, ls=line, ms=4, label=label)
        for name, vals in baselines.items():
            color, style = BASELINE_STYLE.get(name, ("black", "-."))
            ax.axhline(vals[key], color=color, ls=style, label=f"{name} ({vals[key]:.2f})")
        ax.set_xlabel("training timesteps")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if key == "win_rate":
            ax.set_ylim(-0.02, 1.02)
        else:
            ax.set_ylim(-0.1, 8.1)
    axes[0].legend(fontsize=8, loc="best")
    fig.suptitle(title or f"Spider {suits} suit(s): held-out validation deals")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--run",
        action="append",
        required=True,
        help="LABEL=FOLDER (a training output folder with eval.csv); repeat for several runs",
    )
    p.add_argument("--baselines", help="baselines.json written by a training run")
    p.add_argument("--key", help="which entry of baselines.json (default: the only/first one)")
    p.add_argument("--suits", type=int, default=1)
    p.add_argument("--title")
    p.add_argument("--out", default="learning_curve.png")
    args = p.parse_args(argv)
    runs = []
    for spec in args.run:
        if "=" not in spec:
            p.error(f"--run must be LABEL=FOLDER, got {spec!r}")
        label, folder = spec.split("=", 1)
        runs.append((label, Path(folder) / "eval.csv"))
    base: dict[str, dict[str, float]] = {}
    if args.baselines:
        data = json.loads(Path(args.baselines).read_text())
        if not data:
            p.error(f"{args.baselines} is empty")
        key = args.key or next(iter(data))
        if key not in data:
            p.error(f"{args.baselines} has no entry {key!r}; it has {sorted(data)}")
        base = data[key]
    out = plot_curves(runs, base, Path(args.out), suits=args.suits, title=args.title)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
