"""The whole RL recipe in one command: demonstrations, behaviour cloning, PPO fine-tuning.

    python examples/rl_recipe.py                          # 1 suit, into runs/rl_1suit
    python examples/rl_recipe.py --suits 2 --dir runs/rl_2suit
    spider-env evaluate --agent runs/rl_1suit/model.zip --agent greedy --deals 0:1000 --jobs 2

1. ``rl_demos.py``: the teacher (lookahead) plays ``--demo-deals`` training deals;
2. ``rl_bc.py``: the ``ActionSetPolicy`` clones its choices in the won games;
3. ``rl_finetune.py``: MaskablePPO trains it further; the best validation checkpoint is kept;
4. random, greedy and lookahead play the validation deals (``baselines.json``) and
   ``learning_curves.png`` draws both stages against them.

``model.zip`` (+ ``model.json``) in ``--dir`` is the result: the fine-tuned model, which is the
cloned one if no fine-tuning checkpoint won more validation deals. ``recipe.json`` records each
stage's wall time. Deals 0..999 (the test set) are used by none of the stages.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import rl_bc
import rl_demos
import rl_finetune
import rl_plot


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suits", type=int, choices=(1, 2, 4), default=1)
    p.add_argument("--dir", default=None, help="output folder (default runs/rl_<suits>suit)")
    p.add_argument("--teacher", default="lookahead")
    p.add_argument("--demo-deals", default="100000:103000")
    p.add_argument("--jobs", type=int, default=2, help="processes for the demonstrations")
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--timesteps", type=int, default=500_000)
    p.add_argument("--n-envs", type=int, default=8)
    p.add_argument("--eval-freq", type=int, default=100_000)
    p.add_argument("--eval-deals", type=int, default=200)
    p.add_argument("--imitate-lost", action="store_true", help="see rl_bc.py")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--tiny", action="store_true", help="a smoke run (seconds): tiny budgets everywhere"
    )
    args = p.parse_args(argv)
    for name in ("jobs", "epochs", "timesteps", "n_envs", "eval_freq", "eval_deals"):
        if getattr(args, name) < 1:
            print(f"rl_recipe.py: error: --{name.replace('_', '-')} must be >= 1", file=sys.stderr)
            return 2
    d = Path(args.dir or f"runs/rl_{args.suits}suit")
    d.mkdir(parents=True, exist_ok=True)
    demos, bc, ppo = d / "demos.npz", d / "bc.zip", d / "ppo.zip"
    small = ["--eval-deals", "2"] if args.tiny else ["--eval-deals", str(args.eval_deals)]
    small += ["--jobs", str(args.jobs)]
    stages = [
        (
            "demonstrations",
            rl_demos.main,
            ["--suits", str(args.suits), "--teacher", args.teacher, "--out", str(demos),
             "--deals", "100000:100003" if args.tiny else args.demo_deals,
             "--jobs", str(args.jobs), "--no-progress"]
            + (["--max-steps", "200"] if args.tiny else []),
        ),
        (
            "behaviour cloning",
            rl_bc.main,
            ["--demos", str(demos), "--out", str(bc), "--seed", str(args.seed),
             "--epochs", "1" if args.tiny else str(args.epochs), *small]
            + (["--imitate-lost"] if args.imitate_lost else []),
        ),
        (
            "fine-tuning",
            rl_finetune.main,
            ["--bc", str(bc), "--out", str(ppo), "--seed", str(args.seed),
             "--timesteps", "128" if args.tiny else str(args.timesteps),
             "--n-envs", "2" if args.tiny else str(args.n_envs),
             "--n-steps", "64" if args.tiny else "256",
             "--batch-size", "64" if args.tiny else "256",
             "--eval-freq", "128" if args.tiny else str(args.eval_freq), *small],
        ),
    ]  # fmt: skip
    walls: dict[str, float] = {}
    for name, fn, stage_args in stages:
        print(f"== {name}: {' '.join(stage_args)}", flush=True)
        t = time.perf_counter()
        status = fn(stage_args)
        walls[name] = round(time.perf_counter() - t, 1)
        if status:
            print(f"rl_recipe.py: error: the {name} stage failed", file=sys.stderr)
            return status
    shutil.copyfile(ppo, d / "model.zip")
    shutil.copyfile(ppo.with_suffix(".json"), d / "model.json")
    n = 2 if args.tiny else args.eval_deals
    variant = f"spider-{args.suits}suit"
    t = time.perf_counter()
    base = rl_plot.compute_baselines(variant, range(1000, 1000 + n), jobs=args.jobs)
    (d / "baselines.json").write_text(json.dumps(base, indent=2) + "\n")
    walls["baselines"] = round(time.perf_counter() - t, 1)
    rl_plot.plot(d, d / "learning_curves.png")
    training = ("demonstrations", "behaviour cloning", "fine-tuning")
    summary = {
        "suits": args.suits,
        "wall_time_s": walls,
        "training_wall_time_s": round(sum(walls[k] for k in training), 1),
        "model": str(d / "model.zip"),
        "curves": str(d / "learning_curves.png"),
    }
    (d / "recipe.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
