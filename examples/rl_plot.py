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

from spider_env.agents.rl.plots import plot_recipe, recipe_curves
from spider_env.agents.rl.recipe import recipe_baselines, validation_spec
from spider_env.agents.rl.settings import (
    ArgumentParser,
    InputDir,
    OutputFile,
    Text,
    flag_type,
    path_problem,
)

from spider_env.apps.evaluation import evaluate
from spider_env.core.variants import get_variant


def variant_deals(text: str) -> tuple[str, range]:
    """``"spider-1suit:1000:1200"`` -> ``("spider-1suit", range(1000, 1200))``."""
    parts = text.rsplit(":", 2)
    if len(parts) != 3 or not (parts[1].isdigit() and parts[2].isdigit()):
        raise ValueError(f"wants VARIANT:START:STOP (e.g. spider-1suit:1000:1200), got {text!r}")
    deals = range(int(parts[1]), int(parts[2]))
    if not deals:
        raise ValueError(f"{text!r}: STOP must be greater than START (STOP is excluded)")
    get_variant(parts[0])  # ValueError naming the known variants
    return parts[0], deals


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--dir", type=InputDir, default="runs/rl_1suit", help="the recipe's output folder"
    )
    p.add_argument("--out", type=OutputFile, help="PNG (default DIR/learning_curves.png)")
    p.add_argument(
        "--compute-baselines",
        type=flag_type(variant_deals),
        metavar="VARIANT:START:STOP",
        help="first play random, greedy and lookahead on these deals (baselines.json; "
        "rl_recipe.py writes it, the stages run one by one do not)",
    )
    p.add_argument("--title", type=Text)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if args.out is not None and (problem := path_problem(OutputFile, args.out)):
        p.error(f"--out: {problem}")
    d = Path(args.dir)
    out = Path(args.out) if args.out else d / "learning_curves.png"
    baselines = d / "baselines.json"
    checks = [(InputDir, d), (OutputFile, out)]
    if args.compute_baselines:
        checks.append((OutputFile, baselines))
    for kind, path in checks:
        if problem := path_problem(kind, path):
            p.error(f"--dir: {problem}")
    try:
        recipe_curves(d)  # before the baselines' minutes
    except (OSError, ValueError) as exc:
        p.error(f"--dir: {exc}")
    if not args.compute_baselines and not baselines.exists():
        spec = validation_spec(d) or "VARIANT:START:STOP"
        p.error(
            f"--dir: {d} has no baselines.json (rl_recipe.py writes it, the stages run one by "
            f"one do not): add --compute-baselines {spec} to play random, greedy and lookahead "
            "on the curves' validation deals first"
        )
    if args.compute_baselines:
        variant, deals = args.compute_baselines
        data = recipe_baselines(evaluate, variant, deals)
        baselines.write_text(json.dumps(data, indent=2) + "\n")
    try:
        plot_recipe(d, out, args.title)
    except (OSError, ValueError) as exc:
        p.error(f"--dir: {exc}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
