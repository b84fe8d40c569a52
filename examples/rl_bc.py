"""Stage 2 of the RL recipe: behaviour cloning of the demonstrations into a MaskablePPO policy.

    python examples/rl_bc.py                       # runs/rl_1suit/demos.npz -> runs/rl_1suit/bc.zip
    spider-env evaluate --agent runs/rl_1suit/bc.zip --suits 1 --deals 0:1000 --jobs 2

The demonstrations (``examples/rl_demos.py``) are replayed into the per-action features of
``spider_env.observation.actions``; the policy (``spider_env.agents.rl.policy.ActionSetPolicy``:
one shared network scores every legal action, the value comes from a pooled summary) learns to
pick the teacher's action in the won games (cross-entropy over the legal actions) and the
discounted return of every decision (the value, so that PPO fine-tuning starts with a critic).
A tenth of the games (by deal) is held out to measure how often the policy agrees with the
teacher. Every ``--eval-every`` epochs and after the last one the policy plays the validation
deals 1000.. (``--eval-deals`` of them), most likely action and sampled: ``bc_curve.csv`` is
the learning curve. The model
is a ``MaskablePPO`` ``.zip`` with its sidecar, evaluable with ``spider-env evaluate``; it
plays the choice (most likely or sampled) that won more validation deals after the last epoch.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--demos", default="runs/rl_1suit/demos.npz")
    p.add_argument("--out", default="runs/rl_1suit/bc.zip")
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--eval-deals", type=int, default=200, help="validation deals per evaluation")
    p.add_argument("--eval-every", type=int, default=2, help="epochs between evaluations")
    p.add_argument("--jobs", type=int, default=2, help="processes for the evaluations")
    p.add_argument("--cache", default=None, help="keep the replayed data set in this .npz")
    p.add_argument(
        "--imitate-lost",
        action="store_true",
        help="also clone the first 400 decisions of lost games (where the teacher rarely wins)",
    )
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    for name in ("epochs", "batch_size", "hidden", "eval_every", "jobs"):
        if getattr(args, name) < 1:
            print(f"rl_bc.py: error: --{name.replace('_', '-')} must be >= 1", file=sys.stderr)
            return 2
    if not args.lr > 0 or args.eval_deals < 0:
        print("rl_bc.py: error: --lr must be > 0 and --eval-deals >= 0", file=sys.stderr)
        return 2
    import torch
    from rl_common import win_rate
    from spider_env.agents.rl.imitation import BCDataset, build_bc_dataset, load_demonstrations
    from spider_env.agents.rl.policy import behaviour_clone
    from spider_env.agents.rl.recipe import VALIDATION_START, new_model, save_model

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    try:
        demos, meta = load_demonstrations(args.demos)
    except (OSError, ValueError) as exc:
        print(f"rl_bc.py: error: {exc}", file=sys.stderr)
        return 2
    variant = meta["variant"]
    t0 = time.perf_counter()
    if args.cache and Path(args.cache).exists():
        data = BCDataset(**dict(np.load(args.cache)))
    else:
        data = build_bc_dataset(demos, variant, imitate_lost=args.imitate_lost)
        if args.cache:
            np.savez(args.cache, **{f: getattr(data, f) for f in data.__dataclass_fields__})
    deals = np.unique(data.deal)
    held = set(deals[np.random.default_rng(args.seed).permutation(len(deals))[: len(deals) // 10]])
    is_valid = np.array([d in held for d in data.deal])
    train, valid = data.subset(np.flatnonzero(~is_valid)), data.subset(np.flatnonzero(is_valid))
    print(
        f"{len(demos)} {meta['teacher']} games ({sum(d.won for d in demos)} won): "
        f"{len(train)} training and {len(valid)} held-out decisions, "
        f"{time.perf_counter() - t0:.0f} s to build"
    )
    model = new_model(variant, n_envs=1, hidden=args.hidden, seed=args.seed)
    eval_deals = range(VALIDATION_START, VALIDATION_START + args.eval_deals)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    curve_path = out.with_name(out.stem + "_curve.csv")
    rows: list[dict[str, float]] = []

    def log(row: dict[str, float]) -> None:
        epoch = int(row["epoch"])
        if args.eval_deals and (epoch % args.eval_every == 0 or epoch == args.epochs):
            for det in (True, False):
                r = win_rate(model, variant, eval_deals, deterministic=det, jobs=args.jobs)
                row[f"win_rate_{'argmax' if det else 'sampled'}"] = r["win_rate"]
        row["seconds"] = time.perf_counter() - t0
        rows.append(dict(row))
        print(json.dumps({k: round(v, 4) for k, v in row.items()}), flush=True)

    behaviour_clone(
        model.policy,
        train,
        valid,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        seed=args.seed,
        log=log,
    )
    with curve_path.open("w", newline="") as fh:
        keys = sorted({k for r in rows for k in r}, key=lambda k: (k != "epoch", k))
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    last = rows[-1]
    deterministic = last.get("win_rate_argmax", 1.0) >= last.get("win_rate_sampled", 0.0)
    wall = time.perf_counter() - t0
    save_model(
        model,
        out,
        variant,
        deterministic=deterministic,
        extra={
            "stage": "behaviour cloning",
            "demonstrations": args.demos,
            "teacher": meta["teacher"],
            "epochs": args.epochs,
            "imitate_lost": args.imitate_lost,
            "wall_time_s": round(wall, 1),
            "validation_deals": f"{eval_deals.start}:{eval_deals.stop}",
        },
    )
    print(
        f"saved {out} ({'most likely' if deterministic else 'sampled'} actions), "
        f"curve {curve_path}, {wall:.0f} s wall"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
