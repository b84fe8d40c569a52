"""Measuring players during and after training.

:func:`win_rate` plays a model in training as ``spider-env evaluate --agent PATH`` plays it
once saved; :func:`baselines` plays the named players (both through
:func:`spider_env.apps.evaluation.evaluate`); :func:`evaluate_batched` plays a saved model in
SB3's batched ``evaluate_policy`` (several envs per forward pass, the model's own encoding
straight from the env), and :func:`evaluate_model` is that as a script's work
(:class:`EvaluationSettings`, ``examples/evaluate_trained_model.py``).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from spider_env.agents.model_format import Sidecar

from spider_env.core.variants import get_variant

from .envs import make_env, split_deals
from .settings import InputFile, OutputFile, at_least, check_fields, check_paths, setting_up

if TYPE_CHECKING:
    from spider_env.apps.evaluation import AgentSummary


def win_rate(
    model: Any, side: Sidecar, deals: Sequence[int] | range, jobs: int = 1
) -> dict[str, float]:
    """``model`` (in memory, playing as ``side`` says) on ``deals`` as ``spider-env evaluate``
    plays it once saved with ``side`` (``jobs`` worker processes): win rate, wins, mean
    completed runs, seconds."""
    from spider_env.apps.evaluation import evaluate

    from .models import model_agent, model_file_path, save_model

    t0 = time.perf_counter()
    variant = side.env.game()
    if jobs == 1:
        res = evaluate(model_agent(model, side), deals, variant=variant)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            path = save_model(model, Path(tmp) / "model.zip", side)
            res = evaluate(str(model_file_path(path)), deals, variant=variant, jobs=jobs)
    s = res.summaries[0]
    return {
        "win_rate": s.win_rate,
        "wins": s.wins,
        "runs": s.mean_runs,
        "seconds": time.perf_counter() - t0,
    }


def baselines(
    names: Sequence[str],
    variant: Any,
    deals: Sequence[int] | range,
    *,
    jobs: int = 1,
    max_steps: int | None = None,
) -> dict[str, AgentSummary]:
    """Each of the players ``names`` (``"random"``, ``"greedy"``, ``"lookahead"``...) on
    ``deals``: its summary (``win_rate``, ``mean_runs``...)."""
    from spider_env.apps.evaluation import evaluate

    res = evaluate(list(names), deals, variant=variant, jobs=jobs, max_steps=max_steps)
    return dict(zip(names, res.summaries))


@dataclass
class BatchedEvaluation:
    """A saved model's games in :func:`evaluate_batched`."""

    side: Sidecar
    """the model's sidecar"""
    masked: bool
    """whether it chose among legal actions only (MaskablePPO)"""
    deterministic: bool
    """most likely action (True) or sampled"""
    records: list[dict[str, Any]] = field(default_factory=list)
    """one per deal, in deal order: deal, won, runs, steps, reward"""
    illegal_steps: int = 0
    """steps whose action was illegal (a model without masks)"""
    seconds: float = 0.0
    """wall time of the games"""

    def summary(self, model_path: str | Path) -> dict[str, Any]:
        """The summary and the records (the win rate's 95% interval: Wilson's)."""
        from spider_env.apps.evaluation import wilson_interval

        records, env = self.records, self.side.env
        deals = [r["deal"] for r in records]
        wins = sum(r["won"] for r in records)
        steps = sum(r["steps"] for r in records)
        training = self.side.training
        return {
            "model": str(model_path),
            "algo": self.side.algo,
            "masked": self.masked,
            "deterministic": self.deterministic,
            "variant": env.variant,
            "suits": get_variant(str(env.variant)).suits,
            "deals": f"{min(deals)}..{max(deals)} ({len(deals)})",
            "max_episode_steps": env.max_episode_steps,
            "trained_timesteps": training.get("trained_timesteps", training.get("timesteps")),
            "training_wall_time_s": training.get("wall_time_s"),
            "win_rate": wins / len(records),
            "wins": wins,
            "ci95": list(wilson_interval(wins, len(records))),
            "mean_completed_runs": sum(r["runs"] for r in records) / len(records),
            "mean_steps": steps / len(records),
            "illegal_action_rate": self.illegal_steps / max(steps, 1),
            "wall_time_s": round(self.seconds, 1),
            "steps_per_s": round(steps / self.seconds, 1),
            "records": records,
        }


def evaluate_batched(
    model_path: str | Path,
    deals: Sequence[int],
    n_envs: int = 8,
    deterministic: bool | None = None,
    max_episode_steps: int | None = None,
    seed: int = 0,
) -> BatchedEvaluation:
    """Play the saved model once on every deal of ``deals`` with SB3's ``evaluate_policy``
    (``n_envs`` envs in one batch), in the env its sidecar describes. A MaskablePPO model plays
    with masks, any other without (illegal actions answered by the env, as in training).
    ``deterministic``/``max_episode_steps``: ``None`` for the sidecar's."""
    from sb3_contrib.common.maskable.evaluation import evaluate_policy
    from stable_baselines3.common.vec_env import DummyVecEnv

    from .models import load_model

    side = Sidecar.read(model_path)
    if side is None or side.env.game() is None or side.env.obs_mode is None:
        raise FileNotFoundError(
            f"no sidecar naming the game and the observation next to {model_path}: this needs "
            "the model.json of the training run"
        )
    if max_episode_steps is not None:
        side = side.replace(max_episode_steps=max_episode_steps)
    det = bool(side.deterministic) if deterministic is None else deterministic
    model = load_model(model_path, side)
    model.set_random_seed(seed)
    # Env i plays the deals of parts[i] in order, as many as evaluate_policy asks of it: its
    # k-th episode is deal parts[i][k] (the deal number is not in info, on purpose).
    parts = split_deals(list(deals), min(n_envs, len(deals)))
    env = DummyVecEnv([_factory(side, part) for part in parts])
    out = BatchedEvaluation(side, side.use_masking, det)

    def on_step(locals_: dict[str, Any], _globals: dict[str, Any]) -> None:
        info = locals_["info"]
        out.illegal_steps += bool(info.get("illegal_action"))
        if locals_["done"]:
            i = int(locals_["i"])  # the env; episode_counts[i] episodes of it ended before
            out.records.append(
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
        use_masking=out.masked,
    )
    out.seconds = time.time() - t0
    env.close()
    if sorted(r["deal"] for r in out.records) != sorted(deals):
        raise RuntimeError("internal error: the evaluation did not play every deal exactly once")
    out.records.sort(key=lambda r: r["deal"])
    return out


def _factory(side: Sidecar, deals: Sequence[int]) -> Any:
    return lambda: make_env(side.env, deals, "cycle")


@dataclass(frozen=True)
class EvaluationSettings:
    """A saved model played on held-out deals by :func:`evaluate_batched` (one flag each)."""

    model: Annotated[str, InputFile] = "runs/maskable_ppo/model.zip"
    """model.zip with its model.json sidecar"""
    deals: Sequence[int] = range(0, 1000)
    """deal numbers, e.g. 0:1000 (held out)"""
    n_envs: int = 8
    """envs played in one batch"""
    deterministic: bool = False
    """the most likely action (default: as the sidecar says)"""
    max_episode_steps: int | None = None
    """step limit of a game (default: the training step limit)"""
    seed: int = 0
    """seed of the sampled actions"""
    json: Annotated[str, OutputFile] | None = None
    """write the summary and per-deal results here"""

    def __post_init__(self) -> None:
        check_fields(self)
        at_least(self, 1, "n_envs")
        if self.max_episode_steps is not None:
            at_least(self, 1, "max_episode_steps")


def evaluate_model(s: EvaluationSettings) -> dict[str, Any]:
    """:func:`evaluate_batched` as ``s`` says: the summary with the records (also written to
    ``s.json``). A model without a sidecar naming its game, or one that does not load, is a
    :class:`~.settings.SettingsError` naming ``model``."""
    check_paths(s)
    with setting_up("model"):
        played = evaluate_batched(
            s.model,
            s.deals,
            n_envs=s.n_envs,
            deterministic=True if s.deterministic else None,
            max_episode_steps=s.max_episode_steps,
            seed=s.seed,
        )
    res = played.summary(s.model)
    if s.json:
        Path(s.json).write_text(json.dumps(res, indent=1) + "\n")
    return res


__all__ = [
    "BatchedEvaluation",
    "EvaluationSettings",
    "baselines",
    "evaluate_batched",
    "evaluate_model",
    "win_rate",
]
