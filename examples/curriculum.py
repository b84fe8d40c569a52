"""A suit curriculum with MaskablePPO: 1 suit, then 2, then 4, moving on when the win rate of the
last ``--window`` training games of the current stage reaches ``--threshold``.

    python examples/curriculum.py --timesteps 5000000 --threshold 0.5 --window 200

The pieces are reusable and live beside this script in ``examples/curricula.py``:

* :class:`~curricula.SuitCurriculum`: an env that plays classic Spider with the
  suit count of the current stage; all stages share one observation space (the feature
  encoding is widened to the 4-suit layout), so one network learns across stages;
* :class:`~curricula.Curriculum`: the schedule (stages, threshold, window);
* :func:`~curricula.sb3_curriculum_callback`: collects the finished games of all
  training envs, and when the curriculum advances calls ``set_stage`` on every env (works with
  ``DummyVecEnv`` and ``SubprocVecEnv``).

At the end the model plays the validation deals (1000..) of every stage with masks, and the
results, the stage history and the model go to ``--out``. The saved model expects the widened
curriculum observation, so load it with ``SuitCurriculum`` (not ``spider-env evaluate``).
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

import gymnasium as gym

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from curricula import (
    Curriculum,
    SuitCurriculum,
    sb3_curriculum_callback,
)
from training_utils import (
    TRAIN_DEALS,
    VALIDATION_START,
    add_common_args,
    check_args,
    new_model,
    set_logger,
)

from spider_env.wrappers import DealRange


def curriculum_env(args: argparse.Namespace, stage: int | None = None) -> gym.Env[Any, Any]:
    """A monitored SuitCurriculum env: training deals, or (``stage`` given) validation deals."""
    from stable_baselines3.common.monitor import Monitor

    env: gym.Env[Any, Any] = SuitCurriculum(
        stages=args.stages,
        obs_mode="flat",
        train_deals=TRAIN_DEALS if stage is None else None,
        max_episode_steps=args.max_episode_steps,
        reward_mode=args.reward_mode,
        feature_slots=args.feature_slots,
    )
    if stage is not None:
        env.unwrapped.set_stage(stage)  # type: ignore[attr-defined]
        deals = range(VALIDATION_START, VALIDATION_START + args.eval_episodes)
        env = DealRange(env, deals, order="cycle")
    return Monitor(env, info_keywords=("completed_runs",))


def validate(model: Any, args: argparse.Namespace, stage: int) -> dict[str, Any]:
    """Win rate and mean completed runs of ``model`` (masks applied) on the validation deals
    of ``stage``."""
    import numpy as np
    from sb3_contrib.common.maskable.evaluation import evaluate_policy
    from stable_baselines3.common.vec_env import DummyVecEnv

    eval_env = DummyVecEnv([functools.partial(curriculum_env, args, stage)])
    successes: list[bool] = []
    runs: list[int] = []

    def on_step(locals_: dict[str, Any], _globals: dict[str, Any]) -> None:
        if locals_["done"]:
            successes.append(bool(locals_["info"].get("is_success")))
            runs.append(int(locals_["info"].get("completed_runs", 0)))

    evaluate_policy(
        model,
        eval_env,
        n_eval_episodes=args.eval_episodes,
        deterministic=bool(args.deterministic),
        callback=on_step,
        warn=False,
    )
    eval_env.close()
    return {
        "win_rate": float(np.mean(successes)),
        "mean_completed_runs": float(np.mean(runs)),
        "deals": f"{VALIDATION_START}:{VALIDATION_START + args.eval_episodes}",
    }


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_common_args(p, out_default="runs/curriculum", suits=False)
    p.add_argument("--stages", default="1,2,4", help="suit counts, in order (default 1,2,4)")
    p.add_argument("--threshold", type=float, default=0.5, help="win rate to move on")
    p.add_argument("--window", type=int, default=200, help="games the win rate is taken over")
    args = p.parse_args(argv)
    try:
        args.stages = tuple(int(s) for s in args.stages.split(","))
    except ValueError:
        p.error(f"--stages must be comma-separated suit counts, got {args.stages!r}")
    if args.vec == "spider":  # the curriculum changes each env's suits: single envs only
        p.error("--vec spider is not supported by the curriculum (use dummy or subproc)")
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    args = parse_args(argv)
    check_args(args)
    curriculum = Curriculum(args.stages, threshold=args.threshold, window=args.window)
    torch.set_num_threads(args.torch_threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    fns: list[Callable[[], gym.Env[Any, Any]]] = [
        functools.partial(curriculum_env, args) for _ in range(args.n_envs)
    ]
    env = SubprocVecEnv(fns) if args.vec == "subproc" and args.n_envs > 1 else DummyVecEnv(fns)
    model = new_model(MaskablePPO, env, args)
    set_logger(model, out, args)
    stage_log: list[dict[str, Any]] = []

    def advanced(c: Curriculum) -> None:
        stage_log.append({"timesteps": int(model.num_timesteps), "now_suits": c.suits})
        print(f"curriculum: moving on to {c.suits} suit(s) at {model.num_timesteps} steps")

    callbacks: list[Any] = [sb3_curriculum_callback(curriculum, on_advance=advanced)]
    if args.checkpoint_freq:
        callbacks.append(
            CheckpointCallback(
                save_freq=max(args.checkpoint_freq // args.n_envs, 1),
                save_path=str(out / "checkpoints"),
                name_prefix="curriculum",
            )
        )
    t0 = time.time()
    model.learn(total_timesteps=args.timesteps, callback=CallbackList(callbacks))
    wall = time.time() - t0
    model.save(str(out / "model.zip"))
    env.close()

    results = {}
    for i, suits in enumerate(args.stages):
        results[f"{suits} suit(s)"] = validate(model, args, i)
    summary = {
        "timesteps": int(model.num_timesteps),
        "wall_time_s": round(wall, 1),
        "stages": list(args.stages),
        "threshold": args.threshold,
        "window": args.window,
        "final_stage_suits": curriculum.suits,
        "stage_changes": stage_log,
        "validation": results,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
