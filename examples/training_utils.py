"""Shared plumbing of the training examples (train_maskable_ppo.py, train_ppo_without_masks.py,
curriculum.py): env factories, held-out deal ranges, an evaluation callback that also records
completed runs, baselines, the saved-model sidecar, and the training loop itself.

Deal numbers (all three sets are disjoint, so evaluation is on deals never trained on):

* test deals ``0 .. 999``: the default of ``spider-env evaluate --deals 0:1000``; the final
  table of the README is measured on them, after training;
* validation deals ``1000 ..``: evaluation *during* training (learning curve, best model);
* training deals ``10000 .. 2**32 - 1``, drawn at random.

Requires the ``train`` extra (stable-baselines3, sb3-contrib, torch, tensorboard, matplotlib).
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import spider_env
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS
from spider_env.observation import DEFAULT_FEATURE_SLOTS
from spider_env.wrappers import DealRange

VALIDATION_START = 1000
TRAIN_DEALS = range(10_000, 2**32)
SIDECAR_FORMAT = "spider-env-sb3-model 1"


# --- environments ----------------------------------------------------------------------------
def make_env(
    suits: int,
    deals: Sequence[int] | range,
    order: str,
    obs_mode: str = "flat",
    reward_mode: str = "shaped",
    illegal_action: str = "penalize",
    max_episode_steps: int = DEFAULT_MAX_EPISODE_STEPS,
    feature_slots: int = DEFAULT_FEATURE_SLOTS,
) -> gym.Env[Any, Any]:
    """One monitored ``Spider-v0`` env that plays only ``deals`` (picklable via partial)."""
    from stable_baselines3.common.monitor import Monitor

    env = gym.make(
        "Spider-v0",
        suits=suits,
        obs_mode=obs_mode,
        reward_mode=reward_mode,
        illegal_action=illegal_action,
        feature_slots=feature_slots,
        max_episode_steps=max_episode_steps,
    )
    return Monitor(DealRange(env, deals, order=order), info_keywords=("completed_runs",))


def split_deals(deals: Sequence[int] | range, n_envs: int) -> list[Sequence[int] | range]:
    """Split evaluation deals between ``n_envs`` envs the way SB3's ``evaluate_policy`` splits
    episodes (env ``i`` plays ``(n + i) // n_envs`` of them), so that one evaluation plays
    every deal exactly once."""
    n = len(deals)
    if n < n_envs:
        raise ValueError(f"{n} evaluation deals cannot feed {n_envs} evaluation envs")
    out: list[Sequence[int] | range] = []
    start = 0
    for i in range(n_envs):
        k = (n + i) // n_envs
        out.append(deals[start : start + k])
        start += k
    return out


def vec_env(
    fns: list[Callable[[], gym.Env[Any, Any]]], kind: str
) -> Any:  # stable_baselines3 VecEnv
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    if kind == "dummy" or len(fns) == 1:
        return DummyVecEnv(fns)
    if kind == "subproc":
        return SubprocVecEnv(fns)
    raise ValueError(f"--vec must be 'dummy', 'subproc' or 'spider', got {kind!r}")


def env_options(args: argparse.Namespace) -> dict[str, Any]:
    """The env arguments every training and evaluation env of a run shares."""
    return {
        "obs_mode": args.obs_mode,
        "reward_mode": args.reward_mode,
        "illegal_action": args.illegal_action,
        "max_episode_steps": args.max_episode_steps,
        "feature_slots": args.feature_slots,
    }


def spider_train_env(args: argparse.Namespace) -> Any:  # stable_baselines3 VecEnv
    """``--vec spider``: the ``--n-envs`` training games in one compiled
    ``spider_env.sb3.SpiderSB3VecEnv`` (the same games, rewards and step limit as the
    ``DummyVecEnv`` of :func:`train_env_fns`: deals drawn from :data:`TRAIN_DEALS`), monitored
    by ``VecMonitor`` (episode returns, lengths and completed runs)."""
    from stable_baselines3.common.vec_env import VecMonitor

    from spider_env.sb3 import SpiderSB3VecEnv

    env = SpiderSB3VecEnv(
        num_envs=args.n_envs, suits=args.suits, deal_numbers=TRAIN_DEALS, **env_options(args)
    )
    return VecMonitor(env, info_keywords=("completed_runs",))


def train_env_fns(args: argparse.Namespace) -> list[Callable[[], gym.Env[Any, Any]]]:
    return [
        functools.partial(
            make_env,
            args.suits,
            TRAIN_DEALS,
            "random",
            **env_options(args),
        )
        for _ in range(args.n_envs)
    ]


def eval_env_fns(
    args: argparse.Namespace, suits: int | None = None
) -> list[Callable[[], gym.Env[Any, Any]]]:
    deals = range(VALIDATION_START, VALIDATION_START + args.eval_episodes)
    n = min(args.eval_envs, args.eval_episodes)
    return [
        functools.partial(
            make_env,
            suits if suits is not None else args.suits,
            part,
            "cycle",
            **env_options(args),
        )
        for part in split_deals(deals, n)
    ]


# --- evaluation during training ---------------------------------------------------------------
def spider_eval_callback(csv_path: Path, **kwargs: Any) -> Any:
    """A ``MaskableEvalCallback`` (masks applied unless ``use_masking=False``) that replays the
    same validation deals at every evaluation and also records the mean number of completed
    runs and the share of illegal actions; one CSV row per evaluation in ``csv_path`` and the
    same values under ``eval/`` in TensorBoard."""
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback

    class SpiderEvalCallback(MaskableEvalCallback):
        def __init__(self, **kw: Any) -> None:
            super().__init__(**kw)
            self.csv_path = csv_path
            self.t0 = time.time()
            self._runs: list[int] = []
            self._steps = 0
            self._illegal = 0

        def _log_success_callback(self, locals_: dict[str, Any], globals_: dict[str, Any]) -> None:
            super()._log_success_callback(locals_, globals_)
            info = locals_["info"]
            self._steps += 1
            self._illegal += bool(info.get("illegal_action"))
            if locals_["done"]:
                self._runs.append(int(info.get("completed_runs", 0)))
                # recorded on every finished episode; the last value (all episodes) is dumped
                self.logger.record("eval/mean_completed_runs", float(np.mean(self._runs)))
                self.logger.record("eval/illegal_action_rate", self._illegal / self._steps)

        def _on_step(self) -> bool:
            due = self.eval_freq > 0 and self.n_calls % self.eval_freq == 0
            if due:
                self.eval_env.env_method("restart")  # the same deals at every evaluation
                self._runs, self._steps, self._illegal = [], 0, 0
            ok = super()._on_step()
            if due:
                self._write_row()
            return ok

        def _write_row(self) -> None:
            row = {
                "timesteps": self.num_timesteps,
                "wall_time_s": round(time.time() - self.t0, 1),
                "episodes": len(self._runs),
                "win_rate": float(np.mean(self._is_success_buffer)),
                "mean_completed_runs": float(np.mean(self._runs)),
                "mean_reward": self.last_mean_reward,
                "mean_length": float(np.mean(self.evaluations_length[-1]))
                if self.evaluations_length
                else float("nan"),
                "illegal_action_rate": self._illegal / max(self._steps, 1),
            }
            new = not self.csv_path.exists()
            with self.csv_path.open("a", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(row))
                if new:
                    w.writeheader()
                w.writerow(row)

    return SpiderEvalCallback(**kwargs)


# --- baselines ---------------------------------------------------------------------------------
def play_baseline(
    agent_name: str, suits: int, deals: Sequence[int] | range, max_episode_steps: int
) -> dict[str, float]:
    """Win rate and mean completed runs of the ``random`` or ``greedy`` agent on ``deals``
    (same env, same step limit as the learning curve)."""
    from spider_env.agents.greedy import GreedyAgent
    from spider_env.agents.random_agent import RandomAgent

    variant = spider_env.classic(suits)
    agent = GreedyAgent(variant) if agent_name == "greedy" else RandomAgent(variant)
    env = gym.make("Spider-v0", suits=suits, max_episode_steps=max_episode_steps)
    wins, runs = [], []
    for n in deals:
        obs, info = env.reset(options={"deal": int(n)})
        agent.reset(seed=int(n))
        done = False
        while not done:
            a = agent.act(obs, info["action_mask"], info)
            obs, _, term, trunc, info = env.step(a)
            done = term or trunc
        wins.append(bool(info["is_success"]))
        runs.append(int(info["completed_runs"]))
    return {"win_rate": float(np.mean(wins)), "mean_completed_runs": float(np.mean(runs))}


def baselines(
    suits: int, deals: Sequence[int] | range, max_episode_steps: int, cache: Path | None
) -> dict[str, dict[str, float]]:
    """Random and greedy on ``deals``; cached in the JSON file ``cache`` (keyed by settings)."""
    key = f"suits={suits} deals={deals[0]}:{deals[-1] + 1} steps={max_episode_steps}"
    data: dict[str, Any] = {}
    if cache is not None and cache.exists():
        data = json.loads(cache.read_text())
        if key in data:
            return dict(data[key])
    out = {
        name: play_baseline(name, suits, deals, max_episode_steps) for name in ("random", "greedy")
    }
    if cache is not None:
        data[key] = out
        cache.write_text(json.dumps(data, indent=2) + "\n")
    return out


# --- command line -------------------------------------------------------------------------------
def add_common_args(p: argparse.ArgumentParser, out_default: str, suits: bool = True) -> None:
    if suits:
        p.add_argument("--suits", type=int, choices=(1, 2, 4), default=1, help="suits (default 1)")
    p.add_argument("--timesteps", type=int, default=1_000_000, help="training steps")
    p.add_argument("--n-envs", type=int, default=8, help="parallel training envs (default 8)")
    p.add_argument(
        "--vec",
        choices=("dummy", "subproc", "spider"),
        default="dummy",
        help="DummyVecEnv of single envs (default), SubprocVecEnv, or 'spider': all training "
        "games in one compiled SpiderVectorEnv through spider_env.sb3.SpiderSB3VecEnv",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=out_default, help="output folder (logs, checkpoints, model)")
    p.add_argument("--reward-mode", default="shaped", help="env reward_mode (default shaped)")
    p.add_argument("--obs-mode", default="flat", choices=("flat",), help="learning encoding")
    p.add_argument(
        "--feature-slots",
        type=int,
        default=DEFAULT_FEATURE_SLOTS,
        help="face-up cards per column",
    )
    p.add_argument(
        "--max-episode-steps",
        type=int,
        default=DEFAULT_MAX_EPISODE_STEPS,
        help="step limit per game",
    )
    p.add_argument("--n-steps", type=int, default=256, help="rollout steps per env")
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--n-epochs", type=int, default=10)
    p.add_argument("--learning-rate", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.995)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--net-arch", default="256,256", help="hidden layer sizes, comma separated")
    p.add_argument("--eval-freq", type=int, default=100_000, help="evaluate every N steps")
    p.add_argument("--eval-episodes", type=int, default=100, help="validation deals per eval")
    p.add_argument("--eval-envs", type=int, default=4)
    p.add_argument(
        "--deterministic",
        action="store_true",
        help="evaluate with the most likely action (default: sample from the policy; a "
        "deterministic policy tends to shuttle cards back and forth until the step limit)",
    )
    p.add_argument("--checkpoint-freq", type=int, default=250_000, help="checkpoint every N")
    p.add_argument("--torch-threads", type=int, default=1, help="torch.set_num_threads")
    p.add_argument(
        "--baselines",
        choices=("compute", "skip"),
        default="compute",
        help="play random and greedy on the validation deals for the plot's lines",
    )
    p.add_argument(
        "--resume",
        help="continue from this checkpoint zip (same settings; --timesteps more steps)",
    )
    p.add_argument("--verbose", type=int, default=0)


def check_args(args: argparse.Namespace) -> None:
    for name in ("timesteps", "n_envs", "eval_episodes", "eval_envs", "n_steps", "batch_size"):
        if getattr(args, name) < 1:
            raise SystemExit(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.eval_freq < 0 or args.checkpoint_freq < 0:
        raise SystemExit("--eval-freq and --checkpoint-freq must be >= 0 (0 = never)")
    try:
        args.net = [int(x) for x in args.net_arch.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(
            f"--net-arch must be comma-separated ints, got {args.net_arch!r}"
        ) from None
    if not args.net or min(args.net) < 1:
        raise SystemExit(f"--net-arch needs positive layer sizes, got {args.net_arch!r}")


# --- the training loop ----------------------------------------------------------------------------
def sidecar(args: argparse.Namespace, algo: str, masked: bool, wall: float) -> dict[str, Any]:
    """What a loader needs to rebuild the model's env (written next to the model as JSON)."""
    return {
        "format": SIDECAR_FORMAT,
        "algo": algo,
        "policy": "MlpPolicy",
        "use_masking": masked,
        "deterministic": bool(args.deterministic),
        "env_id": "Spider-v0",
        "env_kwargs": {
            "suits": args.suits,
            "obs_mode": args.obs_mode,
            "feature_slots": args.feature_slots,
            "reward_mode": args.reward_mode,
            "illegal_action": args.illegal_action,
        },
        "max_episode_steps": args.max_episode_steps,
        "timesteps": args.timesteps,
        "wall_time_s": round(wall, 1),
        "seed": args.seed,
        "train_deals": f"{TRAIN_DEALS.start}:{TRAIN_DEALS.stop}",
        "validation_deals": f"{VALIDATION_START}:{VALIDATION_START + args.eval_episodes}",
        "hyperparameters": {
            k: getattr(args, k)
            for k in (
                "n_envs",
                "n_steps",
                "batch_size",
                "n_epochs",
                "learning_rate",
                "gamma",
                "gae_lambda",
                "ent_coef",
                "net_arch",
            )
        },
    }


def new_model(cls: Any, env: Any, args: argparse.Namespace) -> Any:
    """A PPO-family model (``cls``: MaskablePPO or PPO) from the common command-line options."""
    return cls(
        "MlpPolicy",
        env,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        learning_rate=args.learning_rate,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        ent_coef=args.ent_coef,
        policy_kwargs={"net_arch": args.net},
        seed=args.seed,
        device="cpu",
        verbose=args.verbose,
    )


def set_logger(model: Any, out: Path, args: argparse.Namespace) -> None:
    """CSV and TensorBoard logs in ``out`` (and stdout with ``--verbose``)."""
    from stable_baselines3.common.logger import configure

    formats = ["csv", "tensorboard"] + (["stdout"] if args.verbose else [])
    model.set_logger(configure(str(out), formats))


def train(args: argparse.Namespace, algo: str, label: str) -> dict[str, Any]:
    """Train ``algo`` ("MaskablePPO" or "PPO") as configured by ``args``; returns the summary.

    Writes to ``args.out``: ``model.zip`` (compact, see :func:`save_compact`) + ``model.json``
    (sidecar), ``best_model/``,
    ``checkpoints/``, ``tb/`` (TensorBoard), ``progress.csv`` (SB3 logger), ``eval.csv`` (one
    row per evaluation), ``baselines.json``, ``learning_curve.png``, ``summary.json``.
    """
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback

    check_args(args)
    torch.set_num_threads(args.torch_threads)
    masked = algo == "MaskablePPO"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    eval_csv = out / "eval.csv"
    if eval_csv.exists() and not args.resume:
        eval_csv.unlink()  # a resumed run appends to its learning curve

    spider = args.vec == "spider"
    env = spider_train_env(args) if spider else vec_env(train_env_fns(args), args.vec)
    eval_env = vec_env(eval_env_fns(args), "dummy")
    cls = MaskablePPO if masked else PPO
    if args.resume:  # a checkpoint (with its optimizer state); --timesteps more steps
        model = cls.load(args.resume, env=env, device="cpu")
    else:
        model = new_model(cls, env, args)
    set_logger(model, out, args)
    # tensorboard files go to out/ too (configure writes events.out.tfevents.* there)
    callbacks = []
    if args.eval_freq:
        callbacks.append(
            spider_eval_callback(
                eval_csv,
                eval_env=eval_env,
                n_eval_episodes=args.eval_episodes,
                eval_freq=max(args.eval_freq // args.n_envs, 1),
                log_path=str(out / "eval"),
                best_model_save_path=str(out / "best_model"),
                deterministic=bool(args.deterministic),
                use_masking=masked,
                verbose=args.verbose,
            )
        )
    if args.checkpoint_freq:
        callbacks.append(
            CheckpointCallback(
                save_freq=max(args.checkpoint_freq // args.n_envs, 1),
                save_path=str(out / "checkpoints"),
                name_prefix=re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_"),
            )
        )
    t0 = time.time()
    model.learn(
        total_timesteps=args.timesteps,
        callback=CallbackList(callbacks),
        reset_num_timesteps=not args.resume,
    )
    wall = time.time() - t0
    model_path = out / "model.zip"
    save_compact(model, model_path)
    meta = sidecar(args, algo, masked, wall)
    meta["trained_timesteps"] = int(model.num_timesteps)
    (out / "model.json").write_text(json.dumps(meta, indent=2) + "\n")
    env.close()
    eval_env.close()

    summary: dict[str, Any] = {
        "label": label,
        "algo": algo,
        "timesteps": int(model.num_timesteps),
        "wall_time_s": round(wall, 1),
        "fps": round(model.num_timesteps / wall, 1),
        "model": str(model_path),
    }
    rows = read_eval_csv(eval_csv)
    if rows:
        summary["last_eval"] = rows[-1]
    base: dict[str, dict[str, float]] = {}
    if args.baselines == "compute" and args.eval_freq:
        deals = range(VALIDATION_START, VALIDATION_START + args.eval_episodes)
        base = baselines(args.suits, deals, args.max_episode_steps, out / "baselines.json")
        summary["baselines"] = base
    if rows:
        from plot_learning_curves import plot_curves

        plot_curves([(label, eval_csv)], base, out / "learning_curve.png", suits=args.suits)
        summary["plot"] = str(out / "learning_curve.png")
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return summary


def save_compact(model: Any, path: Path) -> None:
    """Save ``model`` without its optimizer's running averages (see
    ``spider_env.agents.rl.recipe.save_compact``); the checkpoints keep the full state."""
    from spider_env.agents.rl.recipe import save_compact as save

    save(model, path)


def read_eval_csv(path: Path) -> list[dict[str, float]]:
    if not path.exists():
        return []
    with path.open() as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]
