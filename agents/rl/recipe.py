"""The RL recipe's plumbing: environments, the model, its sidecar, the model as an agent.

The stages (``examples/rl_demos.py``, ``rl_bc.py``, ``rl_finetune.py``; ``rl_recipe.py`` runs
them all) share these (and ``examples/rl_common.py`` for win rates on validation deals). Deal
sets are disjoint: test deals ``0..999`` (``spider-env evaluate``), validation deals
``1000..`` (model selection and learning curves), training deals ``10000..`` (demonstrations
and PPO). Needs the ``train`` extra.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from spider_env.core.variants import Variant, get_variant
from spider_env.observation.actions import DEFAULT_ACTION_ROWS
from spider_env.wrappers import ActionFeatures

from .policy import ActionSetPolicy

SIDECAR_FORMAT = "spider-env-sb3-model 1"
TEST_DEALS = range(0, 1000)
VALIDATION_START = 1000
TRAIN_DEALS = range(10_000, 2**32)
REWARD_MODE = "runs"  # +1 per completed run, +10 on the win


def make_env(
    variant: Variant | str,
    deals: Sequence[int] | range = TRAIN_DEALS,
    *,
    order: str = "random",
    slots: int = DEFAULT_ACTION_ROWS,
    max_episode_steps: int = 1000,
    reward_mode: str = REWARD_MODE,
) -> gym.Env[Any, Any]:
    """One training env: ``Spider-v0`` on ``deals``, monitored, with per-action features."""
    from stable_baselines3.common.monitor import Monitor

    import spider_env  # noqa: F401  (registers Spider-v0)
    from spider_env.wrappers import DealRange

    v = get_variant(variant)
    env = gym.make(
        "Spider-v0",
        variant=v.name,
        reward_mode=reward_mode,
        max_episode_steps=max_episode_steps,
    )
    env = Monitor(DealRange(env, deals, order=order), info_keywords=("completed_runs",))
    return ActionFeatures(env, slots)


def env_factories(
    variant: Variant | str, n_envs: int, slots: int = DEFAULT_ACTION_ROWS, seed: int = 0
) -> list[Callable[[], gym.Env[Any, Any]]]:
    """``n_envs`` factories of training envs (each seeded ``seed + i`` at its first reset)."""
    v = get_variant(variant).name

    def factory(i: int) -> Callable[[], gym.Env[Any, Any]]:
        def make() -> gym.Env[Any, Any]:
            env = make_env(v, slots=slots)
            env.reset(seed=seed + i)
            return env

        return make

    return [factory(i) for i in range(n_envs)]


def new_model(
    variant: Variant | str,
    *,
    n_envs: int = 8,
    slots: int = DEFAULT_ACTION_ROWS,
    hidden: int = 128,
    seed: int = 0,
    **ppo_kwargs: Any,
) -> Any:
    """A ``MaskablePPO`` with :class:`ActionSetPolicy` on ``n_envs`` training envs."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv(env_factories(variant, n_envs, slots, seed))
    kwargs: dict[str, Any] = {
        "n_steps": 256,
        "batch_size": 256,
        "n_epochs": 4,
        "learning_rate": 5e-5,
        "gamma": 0.995,
        "gae_lambda": 0.95,
        "clip_range": 0.1,
        "ent_coef": 0.0,
        "target_kl": 0.02,
    }
    kwargs.update(ppo_kwargs)
    return MaskablePPO(
        ActionSetPolicy,
        venv,
        policy_kwargs={"hidden": hidden, "value_hidden": hidden},
        seed=seed,
        device="cpu",
        verbose=0,
        **kwargs,
    )


def save_compact(model: Any, path: str | Path) -> None:
    """Save ``model`` without its optimizer's running averages (Adam keeps two per weight,
    which would triple the file): the policy is exactly the same and loads with the usual
    ``MaskablePPO.load`` / ``PPO.load``; further training starts the optimizer afresh."""
    opt = model.policy.optimizer
    model.policy.optimizer = type(opt)(model.policy.parameters(), **opt.defaults)
    try:
        model.save(str(path))
    finally:
        model.policy.optimizer = opt


def save_model(
    model: Any,
    path: str | Path,
    variant: Variant | str,
    *,
    deterministic: bool,
    slots: int = DEFAULT_ACTION_ROWS,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Save ``model`` (without the optimizer's running averages) and its JSON sidecar, which
    tells ``spider-env evaluate --agent PATH`` the observation and how to choose actions."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_compact(model, path)
    meta = {
        "format": SIDECAR_FORMAT,
        "algo": "MaskablePPO",
        "policy": "spider_env.agents.rl.policy.ActionSetPolicy",
        "use_masking": True,
        "deterministic": bool(deterministic),
        "env_id": "Spider-v0",
        "env_kwargs": {
            "variant": get_variant(variant).name,
            "obs_mode": "actions",
            "feature_slots": slots,
            "reward_mode": REWARD_MODE,
        },
        "max_episode_steps": 1000,
        **(extra or {}),
    }
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    return path


def model_agent(model: Any, variant: Variant | str, deterministic: bool, seed: int = 0) -> Any:
    """``model`` as an agent of the evaluation protocol (what ``--agent PATH`` plays)."""
    from spider_env.agents.model import ACTIONS_MODE, SB3Agent

    slots = int(model.observation_space["action_ids"].shape[0])
    return SB3Agent(model, variant, ACTIONS_MODE, slots, deterministic, seed, name="model")


__all__ = [
    "REWARD_MODE",
    "TEST_DEALS",
    "TRAIN_DEALS",
    "VALIDATION_START",
    "env_factories",
    "make_env",
    "model_agent",
    "new_model",
    "save_compact",
    "save_model",
]
