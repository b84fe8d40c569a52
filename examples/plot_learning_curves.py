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
import json
from collections.abc import Sequence
from pathlib import Path

from spider_env.agents.rl.plots import plot_runs
from spider_env.agents.rl.settings import ArgumentParser, InputFile, Name, OutputFile, Text


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--run",
        action="append",
        required=True,
        help="LABEL=FOLDER (a training output folder with eval.csv); repeat for several runs",
    )
    p.add_argument("--baselines", type=InputFile, help="baselines.json written by a training run")
    p.add_argument(
        "--key", type=Name, help="which entry of baselines.json (default: the only/first one)"
    )
    p.add_argument("--suits", type=int, default=1)
    p.add_argument("--title", type=Text)
    p.add_argument("--out", type=OutputFile, default="learning_curve.png")
    return p


def main(argv: Sequence[str] | None = None) -> None:
    p = build_parser()
    args = p.parse_args(argv)
    runs = []
    for spec in args.run:
        if "=" not in spec:
            p.error(f"--run must be LABEL=FOLDER, got {spec!r}")
        label, folder = spec.split("=", 1)
        runs.append((label, Path(folder) / "eval.csv"))
    base: dict[str, dict[str, float]] = {}
    try:
        if args.baselines:
            data = json.loads(Path(args.baselines).read_text())
            if not data:
                p.error(f"{args.baselines} is empty")
            key = args.key or next(iter(data))
            if key not in data:
                p.error(f"{args.baselines} has no entry {key!r}; it has {sorted(data)}")
            base = data[key]
        out = plot_runs(runs, base, args.out, suits=args.suits, title=args.title)
    except (OSError, ValueError) as exc:
        p.error(str(exc))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
