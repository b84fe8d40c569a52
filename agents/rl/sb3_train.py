"""sb3-contrib's MaskablePPO (or, with ``no_masks``, Stable-Baselines3's plain PPO) over the
``flat`` observation (``examples/train_maskable_ppo.py``): :class:`PPOSettings` and
:func:`train` (importing this module imports neither torch nor SB3; training does).

``--n-envs`` training games on random :data:`~.envs.TRAIN_DEALS`; every ``eval_freq`` steps
and at the end the policy plays validation deals (:func:`eval_callback`: win rate, completed
runs, share of illegal actions; ``eval.csv`` and TensorBoard); a line saying what the run will
do (:func:`plan`), a line per evaluation and, on a terminal, a progress bar (:func:`progress_bar`)
unless ``no_progress``; checkpoints; at the end the model with its
sidecar, random and greedy on the validation deals (``baselines.json``), the learning curve and
a summary. The pieces (:func:`new_model`, :func:`set_logger`, :func:`eval_callback`) are
SB3's idiom, for a training loop of your own.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import json
import re
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from spider_env.agents.model_format import EnvSettings, Sidecar

from spider_env.core.variants import classic
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS, ILLEGAL_ACTION_POLICIES
from spider_env.observation import DEFAULT_FEATURE_SLOTS, MAX_FEATURE_SLOTS
from spider_env.rewards import REWARD_MODES

from .envs import TRAIN_DEALS, VEC_KINDS, eval_vec_env, train_vec_env, validation_deals
from .plots import plot_runs, read_curve
from .settings import (
    InputFile,
    OutputDir,
    above,
    at_least,
    check,
    check_discounts,
    check_fields,
    check_paths,
    setting_up,
)


@dataclass(frozen=True)
class PPOSettings:
    """A MaskablePPO (or plain PPO) run over the ``flat`` observation (one flag each)."""

    suits: int = field(default=1, metadata={"choices": (1, 2, 4)})
    """suits of classic Spider"""
    timesteps: int = 1_000_000
    """training steps"""
    n_envs: int = 8
    """parallel training games"""
    vec: str = field(default="dummy", metadata={"choices": VEC_KINDS})
    """DummyVecEnv of single envs, SubprocVecEnv, or 'spider': all training games in one
    compiled SpiderVectorEnv through spider_env.sb3.SpiderSB3VecEnv"""
    seed: int = 0
    """seed of the model and of the training games"""
    out: Annotated[str, OutputDir] = "runs/maskable_ppo"
    """output folder (logs, checkpoints, model)"""
    reward_mode: str = field(default="shaped", metadata={"choices": tuple(sorted(REWARD_MODES))})
    """the env's reward_mode"""
    obs_mode: str = field(default="flat", metadata={"choices": ("flat",)})
    """the learning encoding"""
    feature_slots: int = DEFAULT_FEATURE_SLOTS
    """face-up card slots per column"""
    max_episode_steps: int = DEFAULT_MAX_EPISODE_STEPS
    """step limit per game"""
    no_masks: bool = False
    """plain PPO without action masks: the policy chooses among all action ids and the env
    answers an illegal one (--illegal-action); to measure what masking buys"""
    illegal_action: str = field(default="penalize", metadata={"choices": ILLEGAL_ACTION_POLICIES})
    """the env's answer to an illegal action (only plain PPO, --no-masks, takes one)"""
    n_steps: int = 256
    """rollout steps per env between updates"""
    batch_size: int = 512
    """minibatch size"""
    n_epochs: int = 10
    """passes over each rollout"""
    learning_rate: float = 3e-4
    """Adam's learning rate"""
    gamma: float = 0.995
    """discount factor"""
    gae_lambda: float = 0.95
    """GAE's lambda"""
    ent_coef: float = 0.01
    """entropy bonus"""
    net_arch: tuple[int, ...] = (256, 256)
    """hidden layer sizes, comma separated"""
    eval_freq: int = 100_000
    """evaluate every N steps (0: never)"""
    eval_episodes: int = 100
    """validation deals per evaluation"""
    eval_envs: int = 4
    """envs of an evaluation"""
    deterministic: bool = False
    """evaluate (and play, per the sidecar) the most likely action; default: sample from the
    policy (a deterministic policy tends to shuttle cards back and forth until the step limit)"""
    checkpoint_freq: int = 250_000
    """checkpoint every N steps (0: never)"""
    torch_threads: int = 1
    """torch.set_num_threads"""
    baselines: str = field(default="compute", metadata={"choices": ("compute", "skip")})
    """play random and greedy on the validation deals for the plot's lines"""
    resume: Annotated[str, InputFile] | None = None
    """continue from this checkpoint zip (same settings; --timesteps more steps)"""
    verbose: int = field(default=0, metadata={"choices": (0, 1, 2)})
    """SB3's verbosity (1: log to stdout too)"""
    no_progress: bool = False
    """print nothing while training (no plan line, no line per evaluation, no progress bar)"""

    def __post_init__(self) -> None:
        check_fields(self)
        at_least(self, 1, "timesteps", "n_envs", "eval_episodes", "eval_envs", "n_steps")
        at_least(self, 1, "n_epochs", "batch_size", "torch_threads", "max_episode_steps")
        at_least(self, 0, "eval_freq", "checkpoint_freq", "feature_slots", "ent_coef")
        check(self.feature_slots <= MAX_FEATURE_SLOTS, "feature_slots",
              f"must be <= {MAX_FEATURE_SLOTS}, got {self.feature_slots}")  # fmt: skip
        check(bool(self.net_arch), "net_arch", "needs at least one layer")
        check(min(self.net_arch, default=1) >= 1, "net_arch", "needs positive layer sizes")
        check_discounts(self)
        above(self, 0, "learning_rate")

    def env(self) -> EnvSettings:
        """The env of the run's training, validation and saved model."""
        return EnvSettings(
            variant=classic(self.suits).spec_text(),
            obs_mode=self.obs_mode,
            feature_slots=self.feature_slots,
            reward_mode=self.reward_mode,
            illegal_action=self.illegal_action,
            max_episode_steps=self.max_episode_steps,
        )

    @property
    def algo(self) -> str:
        """The algorithm's name: ``"MaskablePPO"``, or ``"PPO"`` with ``no_masks``."""
        return "PPO" if self.no_masks else "MaskablePPO"

    @property
    def label(self) -> str:
        """The run's name in its summary and plot."""
        return "PPO, no masks" if self.no_masks else "MaskablePPO"

    def hyperparameters(self) -> dict[str, Any]:
        """The PPO arguments (as recorded in the sidecar)."""
        keys = ("n_envs", "n_steps", "batch_size", "n_epochs", "learning_rate", "gamma",
                "gae_lambda", "ent_coef", "net_arch")  # fmt: skip
        return {k: v for k, v in asdict(self).items() if k in keys}


def new_model(cls: Any, venv: Any, s: PPOSettings) -> Any:
    """A PPO-family model (``cls``: MaskablePPO or PPO) with an MLP policy."""
    return cls(
        "MlpPolicy",
        venv,
        n_steps=s.n_steps,
        batch_size=s.batch_size,
        n_epochs=s.n_epochs,
        learning_rate=s.learning_rate,
        gamma=s.gamma,
        gae_lambda=s.gae_lambda,
        ent_coef=s.ent_coef,
        policy_kwargs={"net_arch": list(s.net_arch)},
        seed=s.seed,
        device="cpu",
        verbose=s.verbose,
    )


def set_logger(model: Any, out: Path, verbose: int) -> None:
    """CSV (``progress.csv``) and TensorBoard logs in ``out`` (and stdout with ``verbose``)."""
    from stable_baselines3.common.logger import configure

    model.set_logger(configure(str(out), ["csv", "tensorboard"] + (["stdout"] if verbose else [])))


def eval_callback(
    csv_path: Path, *, say: Callable[[str], object] | None = None, **kwargs: Any
) -> Any:
    """A ``MaskableEvalCallback`` (masks applied unless ``use_masking=False``) that replays the
    same validation deals at every evaluation and also records the mean number of completed
    runs and the share of illegal actions; one CSV row per evaluation in ``csv_path`` and the
    same values under ``eval/`` in TensorBoard, and one line through ``say`` (if given).

    It also evaluates when training ends, unless its last evaluation was at the last step: a
    run shorter than ``eval_freq`` still writes its learning curve (one point), and a longer
    one ends its curve at the model it saves."""
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

        def _on_training_end(self) -> None:
            super()._on_training_end()
            if self.eval_freq > 0 and self.n_calls > 0 and self.n_calls % self.eval_freq:
                every, self.eval_freq = self.eval_freq, self.n_calls  # due now, once
                try:
                    self._on_step()
                finally:
                    self.eval_freq = every

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
            if say is not None:
                say(f"step {row['timesteps']:>10,}  validation win rate {row['win_rate']:.3f}  "
                    f"runs {row['mean_completed_runs']:.2f}  "
                    f"{row['wall_time_s']:.0f} s")  # fmt: skip

    return SpiderEvalCallback(**kwargs)


def progress_bar(total: int) -> Any:
    """A callback drawing a tqdm bar of the run's training steps (``total``) on stderr."""
    from stable_baselines3.common.callbacks import BaseCallback
    from tqdm import tqdm

    class StepBar(BaseCallback):
        def _on_training_start(self) -> None:
            self.start = self.model.num_timesteps  # a resumed run counts from its checkpoint
            self.bar = tqdm(total=total, unit="step", file=sys.stderr, dynamic_ncols=True)

        def _on_step(self) -> bool:
            self.bar.update(self.num_timesteps - self.start - self.bar.n)
            return True

        def _on_training_end(self) -> None:
            self.bar.close()

    return StepBar()


def _quiet(line: str) -> None:
    """Prints nothing (``--no-progress``)."""


def run_steps(s: PPOSettings) -> int:
    """The steps a run of ``s`` trains: ``timesteps`` rounded up to whole rollouts (SB3's
    ``learn`` collects ``n_steps`` in each of the ``n_envs`` games before it stops)."""
    rollout = s.n_steps * s.n_envs
    return -(-s.timesteps // rollout) * rollout


def eval_every(s: PPOSettings) -> int:
    """The evaluation callback's calls between evaluations (one call steps all ``n_envs``)."""
    return max(s.eval_freq // s.n_envs, 1)


def plan(s: PPOSettings) -> str:
    """One line saying what a run of ``s`` does: its steps and when it evaluates (a run shorter
    than ``eval_freq`` evaluates once, at the end; ``eval_freq`` 0 never, so no learning
    curve)."""
    steps = run_steps(s)
    head = f"{s.label}: {steps:,} steps in {s.n_envs} envs ({s.suits} suit{'s' * (s.suits > 1)})"
    if not s.eval_freq:
        return f"{head}; --eval-freq 0: no evaluation, so no eval.csv and no learning curve"
    every = eval_every(s)
    periodic = steps // s.n_envs // every
    deals = f"{s.eval_episodes} validation deals"
    if not periodic:
        return (f"{head}; fewer than --eval-freq {s.eval_freq:,}: one evaluation on {deals}, "
                "at the end")  # fmt: skip
    return f"{head}; evaluation on {deals} every {every * s.n_envs:,} steps and at the end"


def cached_baselines(s: PPOSettings, cache: Path) -> dict[str, dict[str, float]]:
    """Random and greedy on the run's validation deals (the learning curve's env and step
    limit); kept in the JSON file ``cache``, keyed by those settings (a cache that cannot be read
    is made again)."""
    from .measure import baselines

    deals = validation_deals(s.eval_episodes)
    key = f"suits={s.suits} deals={deals.start}:{deals.stop} steps={s.max_episode_steps}"
    try:
        data = json.loads(cache.read_text()) if cache.exists() else {}
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    if key not in data:
        played = baselines(
            ("random", "greedy"), s.env().variant, deals, max_steps=s.max_episode_steps
        )
        data[key] = {
            name: {"win_rate": r.win_rate, "mean_completed_runs": r.mean_runs}
            for name, r in played.items()
        }
        cache.write_text(json.dumps(data, indent=2) + "\n")
    return dict(data[key])


def _set_up(s: PPOSettings, env: EnvSettings, deals: range) -> tuple[Any, Any, Any]:
    """The training envs, the validation envs and the model of a run (``--resume``: the
    checkpoint, with its optimizer state); :class:`SettingsError` if they cannot be made (the
    envs made so far closed)."""
    from .models import algo_class, load_model

    with ExitStack() as on_error:
        with setting_up():
            venv = train_vec_env(env, s.n_envs, s.vec)
            on_error.callback(venv.close)
            eval_env = eval_vec_env(env, deals, min(s.eval_envs, s.eval_episodes))
            on_error.callback(eval_env.close)
        with setting_up("resume" if s.resume else None):
            if s.resume:
                model = load_model(s.resume, algo=s.algo, env=venv)
            else:
                model = new_model(algo_class(s.algo), venv, s)
        on_error.pop_all()
    return venv, eval_env, model


def train(s: PPOSettings) -> dict[str, Any]:
    """Train as ``s`` says (MaskablePPO, or plain PPO with ``s.no_masks``); returns the summary.

    Before anything is trained or written, a setting that cannot be used (a path, the resumed
    checkpoint, what the envs or the model refuse) is a :class:`SettingsError`. Writes to
    ``s.out``: ``model.safetensors`` (the model file to share and play) beside ``model.zip``
    (compact, see :func:`~.models.save_compact`) + ``model.json`` (sidecar), ``best_model/``,
    ``checkpoints/``, TensorBoard events, ``progress.csv`` (SB3 logger), ``eval.csv`` (one row
    per evaluation), ``baselines.json`` (random and greedy), ``learning_curve.png``,
    ``summary.json``.
    """
    check_paths(s)  # first: no import of torch for a path that cannot be used
    import torch
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback

    from .models import model_file_path, save_model

    algo, label = s.algo, s.label
    env = s.env()
    deals = validation_deals(s.eval_episodes)
    venv, eval_env, model = _set_up(s, env, deals)
    torch.set_num_threads(s.torch_threads)
    out = Path(s.out)
    with setting_up("out"):
        out.mkdir(parents=True, exist_ok=True)
    eval_csv = out / "eval.csv"
    if eval_csv.exists() and not s.resume:
        eval_csv.unlink()  # a resumed run appends to its learning curve
    set_logger(model, out, s.verbose)
    bar = None
    if not s.no_progress and sys.stderr.isatty():
        with contextlib.suppress(ImportError):  # tqdm: the train extra has it
            bar = progress_bar(run_steps(s))
    say: Callable[[str], object]
    if s.no_progress:
        say = _quiet
    elif bar is not None:
        from tqdm import tqdm

        say = tqdm.write  # above the bar
    else:
        say = functools.partial(print, flush=True)  # a line as it comes, also into a pipe
    say(f"{plan(s)}; output {out}")
    callbacks = []
    if s.eval_freq:
        callbacks.append(
            eval_callback(
                eval_csv,
                say=say,
                eval_env=eval_env,
                n_eval_episodes=s.eval_episodes,
                eval_freq=eval_every(s),
                log_path=str(out / "eval"),
                best_model_save_path=str(out / "best_model"),
                deterministic=s.deterministic,
                use_masking=not s.no_masks,
                verbose=s.verbose,
            )
        )
    if s.checkpoint_freq:
        callbacks.append(
            CheckpointCallback(
                save_freq=max(s.checkpoint_freq // s.n_envs, 1),
                save_path=str(out / "checkpoints"),
                name_prefix=re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_"),
            )
        )
    if bar is not None:
        callbacks.append(bar)  # last: closed after the evaluation at the end
    t0 = time.time()
    model.learn(
        total_timesteps=s.timesteps,
        callback=CallbackList(callbacks),
        reset_num_timesteps=not s.resume,
    )
    wall = time.time() - t0
    model_path = out / "model.zip"
    side = Sidecar(
        env=env,
        algo=algo,
        policy="MlpPolicy",
        deterministic=s.deterministic,
        training={
            "timesteps": s.timesteps,
            "trained_timesteps": int(model.num_timesteps),
            "wall_time_s": round(wall, 1),
            "seed": s.seed,
            "train_deals": f"{TRAIN_DEALS.start}:{TRAIN_DEALS.stop}",
            "validation_deals": f"{deals.start}:{deals.stop}",
            "hyperparameters": s.hyperparameters(),
        },
    )
    save_model(model, model_path, side)
    venv.close()
    eval_env.close()

    summary: dict[str, Any] = {
        "label": label,
        "algo": algo,
        "timesteps": int(model.num_timesteps),
        "wall_time_s": round(wall, 1),
        "fps": round(model.num_timesteps / wall, 1),
        "model": str(model_file_path(model_path)),
        "checkpoint": str(model_path),
    }
    rows = read_curve(eval_csv) if eval_csv.exists() else []
    if rows:
        summary["last_eval"] = rows[-1]
    base: dict[str, dict[str, float]] = {}
    if s.baselines == "compute" and s.eval_freq:
        base = cached_baselines(s, out / "baselines.json")
        summary["baselines"] = base
    if rows:
        plot_runs([(label, eval_csv)], base, out / "learning_curve.png", suits=s.suits)
        summary["plot"] = str(out / "learning_curve.png")
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


__all__ = [
    "PPOSettings",
    "cached_baselines",
    "eval_callback",
    "new_model",
    "plan",
    "progress_bar",
    "run_steps",
    "set_logger",
    "train",
]
