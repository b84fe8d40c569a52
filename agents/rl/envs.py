"""The deals training uses and the environments it plays them in.

Deal numbers, three disjoint sets, so that a result is measured on deals never trained on:

* :data:`TEST_DEALS` ``0 .. 999``: the tables of docs/results.md (``spider-env evaluate --deals
  0:1000``), after training; no training stage plays them;
* validation deals ``1000 ..`` (:func:`validation_deals`): evaluation *during* training
  (learning curves, choosing the model);
* :data:`TRAIN_DEALS` ``10000 .. 2**32 - 1``: training games (drawn at random) and
  demonstrations.

:func:`make_env` is the one env factory: ``Spider-v0`` with a model's :class:`EnvSettings` on
some deals, monitored for SB3 (episode returns, lengths and completed runs), with per-action
features for ``obs_mode="actions"``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import gymnasium as gym
from spider_env.agents.model_format import ACTIONS_MODE, EnvSettings

import spider_env  # noqa: F401  (registers Spider-v0)
from spider_env.wrappers import ActionFeatures, DealRange

TEST_DEALS = range(0, 1000)
VALIDATION_START = 1000
TRAIN_DEALS = range(10_000, 2**32)
ENV_ID = "Spider-v0"
MONITORED = ("completed_runs",)  # info keys SB3's monitors record per episode


def validation_deals(n: int) -> range:
    """The first ``n`` validation deals."""
    return range(VALIDATION_START, VALIDATION_START + n)


def overlaps_test_deals(deals: Iterable[int]) -> bool:
    """Whether any of ``deals`` is a test deal."""
    return any(d in TEST_DEALS for d in deals)


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


def monitored(
    env: gym.Env[Any, Any], deals: Sequence[int] | range | None = None, order: str = "random"
) -> gym.Env[Any, Any]:
    """``env`` playing only ``deals`` (all deals: ``None``), in SB3's ``Monitor``."""
    from stable_baselines3.common.monitor import Monitor

    if deals is not None:
        env = DealRange(env, deals, order=order)
    return Monitor(env, info_keywords=MONITORED)


def spider_kwargs(env: EnvSettings) -> dict[str, Any]:
    """The ``Spider-v0`` arguments of ``env`` (the ``dict`` observation under per-action
    features)."""
    if env.variant is None or env.obs_mode is None:
        raise ValueError(f"the env settings name no game or no obs_mode: {env}")
    kwargs: dict[str, Any] = {
        "variant": env.variant,
        "obs_mode": "dict" if env.obs_mode == ACTIONS_MODE else env.obs_mode,
        "illegal_action": env.illegal_action,
    }
    if env.obs_mode in ("features", "flat"):
        kwargs["feature_slots"] = env.feature_slots
    if env.reward_mode is not None:
        kwargs["reward_mode"] = env.reward_mode
    return kwargs


def make_env(
    env: EnvSettings, deals: Sequence[int] | range = TRAIN_DEALS, order: str = "random"
) -> gym.Env[Any, Any]:
    """One monitored ``Spider-v0`` as ``env`` says, playing only ``deals`` (``order``
    ``"random"`` or ``"cycle"``, see :class:`~spider_env.wrappers.DealRange`)."""
    base = gym.make(ENV_ID, max_episode_steps=env.max_episode_steps, **spider_kwargs(env))
    out = monitored(base, deals, order)
    return ActionFeatures(out, env.action_rows) if env.obs_mode == ACTIONS_MODE else out


def env_factories(
    env: EnvSettings,
    n_envs: int,
    deals: Sequence[int] | range = TRAIN_DEALS,
    order: str = "random",
    seed: int | None = None,
) -> list[Callable[[], gym.Env[Any, Any]]]:
    """``n_envs`` picklable factories of :func:`make_env` (with ``seed``: env ``i`` is reset
    with ``seed + i`` when made)."""
    if seed is None:
        return [functools.partial(make_env, env, deals, order) for _ in range(n_envs)]
    return [functools.partial(_seeded, env, deals, order, seed + i) for i in range(n_envs)]


def _seeded(
    env: EnvSettings, deals: Sequence[int] | range, order: str, seed: int
) -> gym.Env[Any, Any]:
    out = make_env(env, deals, order)
    out.reset(seed=seed)
    return out


VEC_KINDS = ("dummy", "subproc", "spider")


def train_vec_env(
    env: EnvSettings, n_envs: int, kind: str = "dummy", seed: int | None = None
) -> Any:
    """The ``n_envs`` training games on random :data:`TRAIN_DEALS` as an SB3 ``VecEnv``: a
    ``DummyVecEnv`` or ``SubprocVecEnv`` of :func:`make_env`, or (``"spider"``) one compiled
    :class:`~spider_env.sb3.SpiderSB3VecEnv` in ``VecMonitor`` (same games, rewards and step
    limit; not for ``obs_mode="actions"``)."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    if kind not in VEC_KINDS:
        raise ValueError(f"the vector env must be one of {', '.join(VEC_KINDS)}, got {kind!r}")
    if kind == "spider":
        from spider_env.sb3 import SpiderSB3VecEnv

        if env.obs_mode == ACTIONS_MODE:
            raise ValueError("the compiled vector env has no per-action features")
        venv = SpiderSB3VecEnv(
            num_envs=n_envs,
            deal_numbers=TRAIN_DEALS,
            max_episode_steps=env.max_episode_steps,
            **spider_kwargs(env),
        )
        return VecMonitor(venv, info_keywords=MONITORED)
    fns = env_factories(env, n_envs, seed=seed)
    return SubprocVecEnv(fns) if kind == "subproc" and n_envs > 1 else DummyVecEnv(fns)


def eval_vec_env(env: EnvSettings, deals: Sequence[int] | range, n_envs: int) -> Any:
    """A ``DummyVecEnv`` of ``n_envs`` envs that together play each of ``deals`` once per
    ``evaluate_policy`` call of ``len(deals)`` episodes (in order; ``restart`` them to replay)."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    return DummyVecEnv(
        [functools.partial(make_env, env, part, "cycle") for part in split_deals(deals, n_envs)]
    )


__all__ = [
    "ENV_ID",
    "TEST_DEALS",
    "TRAIN_DEALS",
    "VALIDATION_START",
    "VEC_KINDS",
    "env_factories",
    "eval_vec_env",
    "make_env",
    "monitored",
    "overlaps_test_deals",
    "spider_kwargs",
    "split_deals",
    "train_vec_env",
    "validation_deals",
]
