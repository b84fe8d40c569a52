"""Evaluate a trained model on held-out deals, fast: many envs in one batch, the model's own
observation encoding straight from the env (no re-encoding of the table).

    python examples/evaluate_trained_model.py --model runs/maskable_ppo/model.zip --deals 0:1000

The env settings (suits, obs_mode, feature_slots, reward mode) come from the sidecar
``model.json`` the training examples write next to ``model.zip``. A MaskablePPO model plays
with masks; a model trained without them (plain PPO) plays *without* masks, illegal actions
being penalised by the env as in training, which is the honest measure of what it learned
(``spider-env evaluate --agent model.zip`` instead restricts its choice to legal actions).
Each deal is played once; the result is the same as ``spider-env evaluate`` would measure
for a masked model (same deals, same step limit, same env), only the random draws of the
sampled actions differ. Prints win rate with a 95% Wilson interval and mean completed runs;
``--json`` writes the summary and per-deal results.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from training_utils import make_env, split_deals

from spider_env.apps.evaluation import parse_deals, wilson_interval


def evaluate_model(
    model_path: Path,
    deals: Sequence[int],
    n_envs: int = 8,
    deterministic: bool | None = None,
    max_episode_steps: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Play ``model_path`` once on every deal of ``deals``; summary + per-deal records."""
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.evaluation import evaluate_policy
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    side = model_path.with_suffix(".json")
    if not side.is_file():
        raise SystemExit(f"no sidecar {side}: this script needs the model.json of the training run")
    meta = json.loads(side.read_text())
    kw = meta["env_kwargs"]
    masked = bool(meta.get("use_masking", meta.get("algo") == "MaskablePPO"))
    det = bool(meta.get("deterministic", False)) if deterministic is None else deterministic
    steps = max_episode_steps or int(meta.get("max_episode_steps", 1000))
    torch.set_num_threads(1)
    cls: Any = MaskablePPO if meta.get("algo") == "MaskablePPO" else PPO
    model = cls.load(str(model_path), device="cpu")
    model.set_random_seed(seed)
    n = min(n_envs, len(deals))
    # Env i plays the deals of parts[i] in order, as many as evaluate_policy asks of it: its
    # k-th episode is deal parts[i][k] (the deal number is not in info, on purpose).
    parts = split_deals(list(deals), n)
    fns: list[Callable[[], Any]] = [
        functools.partial(
            make_env,
            kw["suits"],
            part,
            "cycle",
            obs_mode=kw["obs_mode"],
            reward_mode=kw.get("reward_mode", "shaped"),
            illegal_action=kw.get("illegal_action", "penalize"),
            max_episode_steps=steps,
            feature_slots=kw.get("feature_slots", 6),
        )
        for part in parts
    ]
    env = DummyVecEnv(fns)
    records: list[dict[str, Any]] = []
    illegal = [0]

    def on_step(locals_: dict[str, Any], _globals: dict[str, Any]) -> None:
        info = locals_["info"]
        illegal[0] += bool(info.get("illegal_action"))
        if locals_["done"]:
            i = int(locals_["i"])  # the env; episode_counts[i] episodes of it ended before
            records.append(
                {
                    "deal": int(parts[i][int(locals_["episode_counts"][i])]),
                    "won": bool(info["is_success"]),
                    "runs": int(info["completed_runs"]),
                    "steps": int(info["episode"]["l"]),
                    "reward": float(info["episode"]["r"]),
                }
            )

    t0 = time.time()
    evaluate_policy(
        model,
        env,
        n_eval_episodes=len(deals),
        deterministic=det,
        callback=on_step,
        warn=False,
        use_masking=masked,
    )
    wall = time.time() - t0
    env.close()
    played = sorted(r["deal"] for r in records)
    if played != sorted(deals):
        raise RuntimeError("internal error: the evaluation did not play every deal exactly once")
    records.sort(key=lambda r: r["deal"])
    wins = sum(r["won"] for r in records)
    lo, hi = wilson_interval(wins, len(records))
    total_steps = sum(r["steps"] for r in records)
    return {
        "model": str(model_path),
        "algo": meta.get("algo"),
        "masked": masked,
        "deterministic": det,
        "suits": kw["suits"],
        "deals": f"{min(deals)}..{max(deals)} ({len(deals)})",
        "max_episode_steps": steps,
        "trained_timesteps": meta.get("trained_timesteps", meta.get("timesteps")),
        "training_wall_time_s": meta.get("wall_time_s"),
        "win_rate": wins / len(records),
        "wins": wins,
        "ci95": [lo, hi],
        "mean_completed_runs": float(np.mean([r["runs"] for r in records])),
        "mean_steps": total_steps / len(records),
        "illegal_action_rate": illegal[0] / max(total_steps, 1),
        "wall_time_s": round(wall, 1),
        "steps_per_s": round(total_steps / wall, 1),
        "records": records,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--model", required=True, help="model.zip with its model.json sidecar")
    p.add_argument("--deals", default="0:1000", help="deal numbers, e.g. 0:1000 (held out)")
    p.add_argument("--n-envs", type=int, default=8)
    p.add_argument("--deterministic", action="store_true", help="argmax instead of sampling")
    p.add_argument("--max-episode-steps", type=int, help="default: the training step limit")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="write summary and per-deal results here")
    args = p.parse_args(argv)
    try:
        deals = parse_deals(args.deals)
    except ValueError as exc:
        p.error(str(exc))
    path = Path(args.model)
    if not path.is_file():
        p.error(f"model file not found: {path}")
    res = evaluate_model(
        path,
        deals,
        n_envs=args.n_envs,
        deterministic=True if args.deterministic else None,
        max_episode_steps=args.max_episode_steps,
        seed=args.seed,
    )
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    brief = {k: v for k, v in res.items() if k != "records"}
    print(json.dumps(brief, indent=2))
    return res


if __name__ == "__main__":
    main()
