"""Stage 3 of the RL recipe: MaskablePPO fine-tuning of the behaviour-cloned policy.

    python examples/rl_finetune.py                 # runs/rl_1suit/bc.zip -> runs/rl_1suit/ppo.zip
    spider-env evaluate --agent runs/rl_1suit/ppo.zip --suits 1 --deals 0:1000 --jobs 2

The cloned policy and value (``examples/rl_bc.py``) are trained further by sb3-contrib's
``MaskablePPO`` on random training deals >= 10000 (``--n-envs`` envs with per-action
features, the ``"runs"`` reward: +1 per completed run, +10 on the win; 1,000-step limit), with
a small learning rate and clip range so that the first updates do not undo the cloning. Every
``--eval-freq`` steps the policy plays the validation deals 1000.. (``--eval-deals`` of them),
most likely action and sampled: ``ppo_curve.csv`` is the learning curve. The model saved is the
one (checkpoint and choice of action) that won the most validation deals, the cloned policy
included, so fine-tuning never ships a worse policy than it started from; the sidecar says
which checkpoint it is.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bc", default="runs/rl_1suit/bc.zip", help="the cloned model")
    p.add_argument("--out", default="runs/rl_1suit/ppo.zip")
    p.add_argument("--timesteps", type=int, default=500_000)
    p.add_argument("--n-envs", type=int, default=8)
    p.add_argument("--n-steps", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--n-epochs", type=int, default=4)
    p.add_argument("--learning-rate", type=float, default=5e-5)
    p.add_argument("--clip-range", type=float, default=0.1)
    p.add_argument("--ent-coef", type=float, default=0.0)
    p.add_argument("--gamma", type=float, default=0.995)
    p.add_argument("--eval-freq", type=int, default=100_000, help="steps between evaluations")
    p.add_argument("--eval-deals", type=int, default=200, help="validation deals per evaluation")
    p.add_argument("--jobs", type=int, default=2, help="processes for the evaluations")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    for name in ("timesteps", "n_envs", "n_steps", "batch_size", "n_epochs", "eval_freq", "jobs"):
        if getattr(args, name) < 1:
            print(
                f"rl_finetune.py: error: --{name.replace('_', '-')} must be >= 1", file=sys.stderr
            )
            return 2
    if not (args.learning_rate > 0 and args.clip_range > 0 and 0 < args.gamma <= 1) or (
        args.eval_deals < 1
    ):
        print(
            "rl_finetune.py: error: --learning-rate and --clip-range must be > 0, --gamma in "
            "(0, 1] and --eval-deals >= 1",
            file=sys.stderr,
        )
        return 2
    if not Path(args.bc).is_file():
        print(f"rl_finetune.py: error: no model file {args.bc}", file=sys.stderr)
        return 2
    import torch
    from rl_common import win_rate
    from sb3_contrib import MaskablePPO
    from spider_env.agents.model import read_sidecar, sidecar_variant
    from spider_env.agents.rl.recipe import VALIDATION_START, new_model, save_model
    from stable_baselines3.common.callbacks import BaseCallback

    torch.set_num_threads(1)
    try:
        variant = sidecar_variant(args.bc)
        bc = MaskablePPO.load(args.bc, device="cpu")
    except (OSError, ValueError) as exc:
        print(f"rl_finetune.py: error: cannot load {args.bc}: {exc}", file=sys.stderr)
        return 2
    if variant is None:
        print(f"rl_finetune.py: error: {args.bc} has no sidecar naming its game", file=sys.stderr)
        return 2
    bc_meta = read_sidecar(args.bc)
    slots = int(bc.observation_space["action_ids"].shape[0])
    model = new_model(
        variant,
        n_envs=args.n_envs,
        slots=slots,
        hidden=int(bc.policy.hidden),
        seed=args.seed,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        learning_rate=args.learning_rate,
        clip_range=args.clip_range,
        ent_coef=args.ent_coef,
        gamma=args.gamma,
    )
    model.policy.load_state_dict(bc.policy.state_dict())
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    ckpt_dir = out.with_name(out.stem + "_checkpoints")
    ckpt_dir.mkdir(exist_ok=True)
    curve_path = out.with_name(out.stem + "_curve.csv")
    eval_deals = range(VALIDATION_START, VALIDATION_START + args.eval_deals)
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    train_seconds = [0.0]

    def evaluate_now(steps: int) -> None:
        t = time.perf_counter()
        row: dict[str, Any] = {"timesteps": steps}
        for det in (True, False):
            r = win_rate(model, variant, eval_deals, deterministic=det, jobs=args.jobs)
            row[f"win_rate_{'argmax' if det else 'sampled'}"] = r["win_rate"]
            row[f"runs_{'argmax' if det else 'sampled'}"] = r["runs"]
        path = ckpt_dir / f"step_{steps}.zip"
        save_model(model, path, variant, deterministic=True, slots=slots)
        row["checkpoint"] = str(path)
        row["train_seconds"] = round(train_seconds[0], 1)
        row["eval_seconds"] = round(time.perf_counter() - t, 1)
        rows.append(row)
        print(json.dumps(row), flush=True)

    class Every(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.next = args.eval_freq
            self.t = time.perf_counter()

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next:
                train_seconds[0] += time.perf_counter() - self.t
                evaluate_now(self.num_timesteps)
                self.next += args.eval_freq
                self.t = time.perf_counter()
            return True

        def _on_training_end(self) -> None:
            train_seconds[0] += time.perf_counter() - self.t

    evaluate_now(0)
    model.learn(args.timesteps, callback=Every())
    if model.num_timesteps - rows[-1]["timesteps"] >= args.n_steps * args.n_envs:
        evaluate_now(model.num_timesteps)  # (not again for the end of the last rollout)
    with curve_path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    # The best checkpoint and way of choosing actions on the validation deals (ties: later).
    best = max(
        (
            (r[f"win_rate_{m}"], r["timesteps"], m == "argmax", r)
            for r in rows
            for m in ("argmax", "sampled")
        ),
        key=lambda t: (t[0], t[1]),
    )
    rate, steps, deterministic, row = best
    chosen = MaskablePPO.load(row["checkpoint"], device="cpu")
    wall = time.perf_counter() - t0
    save_model(
        chosen,
        out,
        variant,
        deterministic=deterministic,
        slots=slots,
        extra={
            "stage": "MaskablePPO fine-tuning",
            "from": args.bc,
            "bc": {k: bc_meta.get(k) for k in ("teacher", "demonstrations", "epochs")},
            "timesteps": model.num_timesteps,
            "chosen_timesteps": steps,
            "validation_deals": f"{eval_deals.start}:{eval_deals.stop}",
            "validation_win_rate": rate,
            "wall_time_s": round(wall, 1),
            "train_time_s": round(train_seconds[0], 1),
            "hyperparameters": {
                k: getattr(args, k)
                for k in (
                    "n_envs",
                    "n_steps",
                    "batch_size",
                    "n_epochs",
                    "learning_rate",
                    "clip_range",
                    "ent_coef",
                    "gamma",
                )
            },
            "seed": args.seed,
        },
    )
    print(
        f"saved {out}: checkpoint at {steps} steps, {'most likely' if deterministic else 'sampled'}"
        f" actions, validation win rate {rate:.1%}; curve {curve_path}; {wall:.0f} s wall"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
