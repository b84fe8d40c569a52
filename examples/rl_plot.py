"""The RL recipe's learning curves: behaviour cloning by epoch, then PPO fine-tuning by step.

    python examples/rl_plot.py --dir runs/rl_1suit --out docs/rl/learning_curves_1suit.png

Reads ``bc_curve.csv`` and ``ppo_curve.csv`` (written by ``rl_bc.py`` and ``rl_finetune.py``)
and ``baselines.json`` (random, greedy and lookahead on the same validation deals, written by
``rl_recipe.py`` or computed here with ``--compute-baselines``) from ``--dir``, and draws the
validation win rate of both stages (most likely action and sampled) with the baselines as
horizontal lines.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from spider_env.agents.rl.plots import plot_recipe
from spider_env.agents.rl.recipe import recipe_baselines
from spider_env.agents.rl.settings import ArgumentParser, InputDir, OutputFile, Text

from spider_env.apps.evaluation import evaluate


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--dir", type=InputDir, default="runs/rl_1suit", help="the recipe's output folder"
    )
    p.add_argument("--out", type=OutputFile, help="PNG (default DIR/learning_curves.png)")
    p.add_argument(
        "--compute-baselines",
        metavar="VARIANT:START:STOP",
        default=None,
        help="first play random, greedy and lookahead on these deals (baselines.json)",
    )
    p.add_argument("--title", type=Text)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    d = Path(args.dir)
    try:
        if args.compute_baselines:
            parts = args.compute_baselines.rsplit(":", 2)
            if len(parts) != 3 or not (parts[1].isdigit() and parts[2].isdigit()):
                raise ValueError(
                    f"--compute-baselines wants VARIANT:START:STOP, got {args.compute_baselines!r}"
                )
            deals = range(int(parts[1]), int(parts[2]))
            data = recipe_baselines(evaluate, parts[0], deals)
            (d / "baselines.json").write_text(json.dumps(data, indent=2) + "\n")
        out = plot_recipe(d, Path(args.out) if args.out else d / "learning_curves.png", args.title)
    except (OSError, ValueError, KeyError) as exc:
        p.error(str(exc))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
