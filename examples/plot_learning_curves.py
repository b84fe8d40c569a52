"""Plot learning curves of training runs side by side (matplotlib, no display needed).

Each run folder holds the ``eval.csv`` written by the training examples (one row per
evaluation on the validation deals). Two panels: win rate and mean completed runs against
training timesteps, with the random and greedy agents on the same deals as horizontal lines.

    python examples/plot_learning_curves.py \\
        --run "MaskablePPO=runs/maskable" --run "PPO, no masks=runs/ppo_no_masks" \\
        --baselines runs/maskable/baselines.json --out learning_curve.png
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from spider_env.agents.rl.plots import plot_runs, read_baselines
from spider_env.agents.rl.settings import (
    ArgumentParser,
    InputFile,
    Name,
    OutputFile,
    Text,
    flag_type,
    path_problem,
)


def label_folder(text: str) -> tuple[str, Path]:
    """``"PPO=runs/ppo"`` -> ``("PPO", Path("runs/ppo"))``."""
    label, eq, folder = text.partition("=")
    if not (label and eq and folder):
        raise ValueError(f"must be LABEL=FOLDER, got {text!r}")
    return label, Path(folder)


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--run",
        action="append",
        type=flag_type(label_folder),
        help="LABEL=FOLDER (a training output folder with eval.csv); repeat for several runs "
        "(at least one)",
    )
    p.add_argument("--baselines", type=InputFile, help="baselines.json written by a training run")
    p.add_argument(
        "--key", type=Name, help="which entry of baselines.json (default: the only/first one)"
    )
    p.add_argument("--suits", type=int, choices=(1, 2, 4), default=1)
    p.add_argument("--title", type=Text)
    p.add_argument("--out", type=OutputFile, default="learning_curve.png")
    return p


def main(argv: Sequence[str] | None = None) -> None:
    p = build_parser()
    args = p.parse_args(argv)
    if problem := path_problem(OutputFile, args.out):
        p.error(f"--out: {problem}")
    base: dict[str, dict[str, float]] = {}
    if args.baselines is None and args.key is not None:
        p.error("--key: needs --baselines")
    if args.baselines is not None:
        if problem := path_problem(InputFile, args.baselines):
            p.error(f"--baselines: {problem}")
        try:
            base = read_baselines(args.baselines, args.key)
        except LookupError as exc:
            p.error(f"--key: {exc}")
        except (OSError, ValueError) as exc:
            p.error(f"--baselines: {exc}")
    if not args.run:
        p.error("--run: give at least one LABEL=FOLDER")
    runs = [(label, folder / "eval.csv") for label, folder in args.run]
    for _, curve in runs:
        if problem := path_problem(InputFile, curve):
            p.error(f"--run: {problem} (the eval.csv of a training run)")
    try:
        out = plot_runs(runs, base, args.out, suits=args.suits, title=args.title)
    except (OSError, ValueError) as exc:
        p.error(f"--run: {exc}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
