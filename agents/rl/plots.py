"""Learning curves as PNG files (matplotlib, no display needed).

* :func:`plot_runs`: runs of the training examples side by side (their ``eval.csv``: win rate
  and mean completed runs against training steps), random and greedy as horizontal lines;
* :func:`plot_recipe`: the RL recipe's two stages (``bc_curve.csv`` by epoch,
  ``ppo_curve.csv`` by step: validation win rate, most likely action and sampled) against
  random, greedy and lookahead (``baselines.json``).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

RUN_STYLES = (("o", "-"), ("s", "--"), ("^", "-."), ("D", ":"))  # marker, line: overlaps show
BASELINE_STYLE = {
    "random": ("tab:gray", ":"),
    "greedy": ("tab:red", "--"),
    "lookahead": ("tab:purple", "-."),
}
RECIPE_BASELINES = ("random", "greedy", "lookahead")


def read_curve(path: str | Path) -> list[dict[str, float]]:
    """The rows of a learning-curve CSV, numbers only (text columns and empty cells left out).
    ``FileNotFoundError`` / ``ValueError`` (no rows) naming the file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no learning curve {path} (was the run evaluated at all?)")
    with path.open() as fh:
        rows = [
            {k: float(v) for k, v in row.items() if k != "checkpoint" and v != ""}
            for row in csv.DictReader(fh)
        ]
    if not rows:
        raise ValueError(f"{path} has no rows")
    return rows


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, out: Path) -> Path:
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    _pyplot().close(fig)
    return out


def plot_runs(
    runs: Sequence[tuple[str, str | Path]],
    baselines: Mapping[str, Mapping[str, float]],
    out: str | Path,
    suits: int = 1,
    title: str | None = None,
) -> Path:
    """Draw ``runs`` (label, ``eval.csv`` path) and ``baselines`` (``{"random": {"win_rate":
    ..., "mean_completed_runs": ...}, "greedy": ...}``) into the PNG ``out``; returns it."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    panels = (("win_rate", "win rate"), ("mean_completed_runs", "mean completed runs (of 8)"))
    curves = [(label, read_curve(path)) for label, path in runs]
    for ax, (key, ylabel) in zip(axes, panels):
        for i, (label, rows) in enumerate(curves):
            marker, line = RUN_STYLES[i % len(RUN_STYLES)]
            xs, ys = [r["timesteps"] for r in rows], [r[key] for r in rows]
            ax.plot(xs, ys, marker=marker, ls=line, ms=4, label=label)
        for name, vals in baselines.items():
            color, style = BASELINE_STYLE.get(name, ("black", "-."))
            ax.axhline(vals[key], color=color, ls=style, label=f"{name} ({vals[key]:.2f})")
        ax.set_xlabel("training timesteps")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.set_ylim(*((-0.02, 1.02) if key == "win_rate" else (-0.1, 8.1)))
    axes[0].legend(fontsize=8, loc="best")
    fig.suptitle(title or f"Spider {suits} suit(s): held-out validation deals")
    return _save(fig, Path(out))


def plot_recipe(directory: str | Path, out: str | Path, title: str | None = None) -> Path:
    """Draw the recipe's curves in ``directory`` (``bc_curve.csv``, ``ppo_curve.csv``,
    ``baselines.json``) into the PNG ``out``; returns it."""
    d = Path(directory)
    bc = read_curve(d / "bc_curve.csv")
    ppo = read_curve(d / "ppo_curve.csv")
    base = json.loads((d / "baselines.json").read_text())
    plt = _pyplot()
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
        for name in RECIPE_BASELINES:
            if name in base:
                color, style = BASELINE_STYLE[name]
                ax.axhline(base[name]["win_rate"], color=color, linestyle=style, label=name)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"win rate, validation deals {base.get('deals', '')}")
    axes[1].legend(loc="lower right", fontsize=8)
    fig.suptitle(title or f"RL recipe on {base.get('variant', '')}")
    return _save(fig, Path(out))


__all__ = ["BASELINE_STYLE", "RECIPE_BASELINES", "plot_recipe", "plot_runs", "read_curve"]
