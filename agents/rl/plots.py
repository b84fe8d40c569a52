"""Learning curves as PNG files (matplotlib, no display needed): :func:`plot_runs` draws runs
of the trainers side by side (their ``eval.csv``: win rate and mean completed runs against
training steps), random and greedy as horizontal lines."""

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
#: The panels of :func:`plot_runs`: a run's ``eval.csv`` column (and a baseline's key), label.
RUN_PANELS = (("win_rate", "win rate"), ("mean_completed_runs", "mean completed runs (of 8)"))


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


def read_baselines(path: str | Path, key: str | None = None) -> dict[str, dict[str, float]]:
    """Entry ``key`` (default: the first) of a training run's ``baselines.json``: each player's
    ``win_rate`` and ``mean_completed_runs``. ``ValueError`` if the file is not one,
    ``LookupError`` if it has no entry ``key``."""
    try:
        data = json.loads(Path(path).read_text())
    except ValueError:  # not JSON (or not text)
        data = None
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{path} is not the baselines.json of a training run")
    key = key or next(iter(data))
    if key not in data:
        raise LookupError(f"{path} has no entry {key!r}; it has {', '.join(map(repr, data))}")
    entry = data[key]
    keys = {key for key, _ in RUN_PANELS}
    if not isinstance(entry, dict) or not all(
        isinstance(v, dict) and keys <= set(v) for v in entry.values()
    ):
        raise ValueError(f"{path}: entry {key!r} is not the baselines of a training run")
    return entry


def pyplot() -> Any:
    """matplotlib's ``pyplot`` on the Agg backend (files, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, out: Path) -> Path:
    """Lay out ``fig``, write it to the PNG ``out`` (its folder made if need be), close it."""
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    pyplot().close(fig)
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
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    curves = [(label, read_curve(path)) for label, path in runs]
    for ax, (key, ylabel) in zip(axes, RUN_PANELS):
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
    return save_figure(fig, Path(out))


__all__ = [
    "BASELINE_STYLE",
    "RUN_PANELS",
    "RUN_STYLES",
    "plot_runs",
    "pyplot",
    "read_baselines",
    "read_curve",
    "save_figure",
]
