"""Playing a trained model on many deals at once, on the vector env.

A model player (an agent with ``env_kwargs()`` and ``choose_batch()``, as
:class:`~spider_env.agents.model.ModelAgent`) is not stepped one game at a time: its deals are
played ``BATCH`` at a time in one :class:`~spider_env.vector.SpiderVectorEnv` in the model's own
observation mode (``obs_mode="actions"``: every game's per-action features computed in one
compiled call), and one forward pass per step scores the legal rows of all the games. Each slot
of the batch plays a deal to its end, its record is made, and the slot takes the next deal
(``reset_mask``; autoreset is off, so no deal is ever drawn at random).

The games are those of :func:`~spider_env.apps.evaluation.episode.play_episode` with the same
agent, move for move (the vector env's games and observations are the single env's, and
``choose_batch`` makes ``act``'s choice, with each game's RNG seeded as ``play_episode`` seeds
the agent): ``tests/test_model_batch.py`` checks the records and the choices.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from spider_env.apps.evaluation.episode import agent_seed, deal_record
from spider_env.apps.evaluation.results import DealRecord
from spider_env.core.checks import check_int
from spider_env.core.variants import Variant
from spider_env.vector import SpiderVectorEnv

#: Games played side by side (at most): enough for the forward pass and the compiled step to
#: pay for their per-call cost, small enough that the games left at the end waste little.
BATCH = 64
#: The env settings that do not change a game's course, replaced by the model's own observation.
_OBSERVATION_KEYS = ("obs_mode", "feature_slots", "action_rows", "mask_in_obs")


def plays_in_batches(agent: Any) -> bool:
    """Whether ``agent`` can play many games at once (a model player: ``env_kwargs`` and
    ``choose_batch``)."""
    return callable(getattr(agent, "choose_batch", None)) and callable(
        getattr(agent, "env_kwargs", None)
    )


def play_batched(
    agent: Any,
    variant: Variant,
    deals: Sequence[int],
    max_steps: int,
    seed: int,
    name: str,
    done: Callable[[DealRecord], None],
    env_kwargs: dict[str, Any] | None = None,
    batch: int = BATCH,
) -> None:
    """Play ``agent`` on every deal of ``deals`` (up to ``batch`` games at a time); ``done(record)``
    as each game ends (in the order the games end). ``env_kwargs``: the evaluation's other env
    arguments (e.g. ``reward_mode``); the observation settings are the model's."""
    batch = check_int("batch", batch, 1)
    if not len(deals):
        return
    kwargs = {k: v for k, v in (env_kwargs or {}).items() if k not in _OBSERVATION_KEYS}
    n = min(batch, len(deals))
    envs = SpiderVectorEnv(
        n,
        max_episode_steps=max_steps,
        autoreset_mode=AutoresetMode.DISABLED,
        variant=variant,
        **kwargs,
        **agent.env_kwargs(),
    )
    try:
        _play(envs, agent, list(deals), seed, name, done)
    finally:
        envs.close()


def _play(
    envs: SpiderVectorEnv,
    agent: Any,
    deals: list[int],
    seed: int,
    name: str,
    done: Callable[[DealRecord], None],
) -> None:
    """The loop of :func:`play_batched` over an env of ``envs.num_envs`` slots."""
    n = envs.num_envs
    deal_of = np.full(n, -1, dtype=np.int64)  # the deal each slot plays (-1: idle)
    steps = np.zeros(n, dtype=np.int64)
    rewards = np.zeros(n, dtype=np.float64)
    seconds = np.zeros(n, dtype=np.float64)
    rngs: list[np.random.Generator] = [np.random.default_rng(0)] * n
    sampling = not agent.deterministic
    queue = iter(deals)

    def start(slots: np.ndarray, first: bool = False) -> tuple[Any, dict[str, Any]]:
        """Reset ``slots`` with the next deals (once there are none, a slot idles on the first
        deal, unrecorded and unscored)."""
        numbers = deal_of.copy()
        for i in slots.tolist():
            d = next(queue, None)
            numbers[i] = -1 if d is None else d
            if d is not None and sampling:
                rngs[i] = np.random.default_rng(agent_seed(seed, d))
        deal_of[slots] = numbers[slots]
        steps[slots], rewards[slots], seconds[slots] = 0, 0.0, 0.0
        playing = np.where(numbers >= 0, numbers, deals[0])
        mask = np.zeros(n, dtype=bool)
        mask[slots] = True
        options: dict[str, Any] = {"deal": [int(d) for d in playing]}
        if not first:
            options["reset_mask"] = mask
        return envs.reset(options=options)

    def record(i: int, info: dict[str, Any], truncated: bool) -> None:
        end = tuple(info[k][i] for k in ("is_success", "completed_runs", "score", "moves"))
        done(deal_record(name, deal_of[i], end, steps[i], rewards[i], truncated, seconds[i]))

    t0 = time.perf_counter()
    obs, info = start(np.arange(n), first=True)
    masks = info["action_mask"]
    fresh = np.arange(n)
    while True:
        # a game dealt without a legal action is over at its reset (play_episode records it so)
        dead = fresh[(deal_of[fresh] >= 0) & ~masks[fresh].any(axis=1)]
        while len(dead):
            for i in dead.tolist():
                record(i, info, False)
            obs, info = start(dead)
            masks[dead] = info["action_mask"][dead]
            dead = dead[(deal_of[dead] >= 0) & ~masks[dead].any(axis=1)]
        active = deal_of >= 0
        n_active = int(active.sum())
        if n_active == 0:
            return
        if n_active == n:
            actions = agent.choose_batch(obs, masks, rngs if sampling else None)
        else:  # the last games: the idle slots' rows are not scored
            playing = np.flatnonzero(active)
            actions = np.zeros(n, dtype=np.int64)
            actions[playing] = agent.choose_batch(
                _take(obs, playing),
                masks[playing],
                [rngs[i] for i in playing] if sampling else None,
            )
        obs, r, terminated, truncated, info = envs.step(actions)
        masks = info["action_mask"]
        t1 = time.perf_counter()
        steps[active] += 1
        rewards[active] += r[active]
        seconds[active] += (t1 - t0) / n_active
        t0 = t1
        fresh = np.flatnonzero(terminated | truncated)
        if len(fresh):
            for i in fresh.tolist():
                if deal_of[i] >= 0:
                    record(i, info, bool(truncated[i] and not terminated[i]))
            obs, info = start(fresh)
            masks[fresh] = info["action_mask"][fresh]


def _take(obs: Any, index: np.ndarray) -> Any:
    """Games ``index`` of a batch of observations (a dict of arrays, or an array)."""
    if isinstance(obs, dict):
        return {k: v[index] for k, v in obs.items()}
    return obs[index]


__all__ = ["BATCH", "play_batched", "plays_in_batches"]
