"""Playing one agent on one deal: the env every evaluation uses and the game loop.

The deal is identified by the number the env is reset with (``options={"deal": n}``);
nothing here reads the deal's identity back from ``info``.
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium
import numpy as np

import spider_env  # noqa: F401  (registers Spider-v0)
from spider_env.apps.evaluation.results import DealRecord
from spider_env.core.checks import check_int
from spider_env.core.variants import Variant

ENV_ID = "Spider-v0"


class AgentError(RuntimeError):
    """An agent broke the protocol (chose an illegal action)."""


def step_limit(max_steps: int | None) -> int:
    """The step limit a game is played with: ``max_steps``, or for ``None`` the limit
    ``gymnasium.make("Spider-v0")`` applies by default (``max_episode_steps`` of its spec).

    There is no "no limit": a lost game of Spider can go on forever.
    """
    if max_steps is None:
        limit = gymnasium.spec(ENV_ID).max_episode_steps
        if limit is None:
            raise ValueError(f"{ENV_ID} is registered without a step limit: give max_steps")
        return int(limit)
    return check_int("max_steps (None: the env's default)", max_steps, 1)


def agent_seed(seed: int, deal: int) -> int:
    """The agent's seed for one deal (independent of jobs and order)."""
    return int(np.random.SeedSequence([seed, deal]).generate_state(1, np.uint32)[0])


def make_env(variant: Variant, max_steps: int | None, **kwargs: Any) -> Any:
    """``gymnasium.make("Spider-v0", variant=..., max_episode_steps=...)`` (``None``: the
    registered default limit, see :func:`step_limit`)."""
    return gymnasium.make(
        ENV_ID,
        variant=variant,
        max_episode_steps=max_steps,
        disable_env_checker=True,
        **kwargs,
    )


def play_episode(
    env: Any, agent: Any, deal: int, seed: int = 0, name: str = "agent"
) -> tuple[DealRecord, list[int], list[float]]:
    """Play deal number ``deal`` to its end; returns the record, the actions and the rewards.
    ``AgentError`` if the agent chooses an illegal action."""
    t0 = time.perf_counter()
    if hasattr(agent, "reset"):
        agent.reset(seed=agent_seed(seed, deal))
    obs, info = env.reset(options={"deal": deal})
    actions: list[int] = []
    rewards: list[float] = []
    terminated = truncated = not info["action_mask"].any()
    while not (terminated or truncated):
        mask = info["action_mask"]
        a = int(agent.act(obs, mask, info))
        if not (0 <= a < mask.size and mask[a]):
            raise AgentError(
                f"agent {name!r} chose illegal action {a} on deal {deal} at step {len(actions)}"
            )
        obs, r, terminated, truncated, info = env.step(a)
        actions.append(a)
        rewards.append(float(r))
    end = (info["is_success"], info["completed_runs"], info["score"], info["moves"])
    truncated = bool(truncated and not terminated)
    rec = deal_record(
        name, deal, end, len(actions), sum(rewards), truncated, time.perf_counter() - t0
    )
    return rec, actions, rewards


def deal_record(
    name: str,
    deal: int,
    end: tuple[Any, Any, Any, Any],
    steps: int,
    reward: float,
    truncated: bool,
    seconds: float,
) -> DealRecord:
    """The record of a game that ended with ``end`` = the last ``info``'s ``is_success``,
    ``completed_runs``, ``score`` and ``moves`` (of one game)."""
    won, runs, score, moves = end
    return DealRecord(
        agent=name,
        deal=int(deal),
        won=bool(won),
        completed_runs=int(runs),
        score=int(score),
        moves=int(moves),
        steps=int(steps),
        reward=round(float(reward), 6),
        truncated=truncated,
        seconds=round(float(seconds), 6),
    )


__all__ = ["AgentError", "agent_seed", "deal_record", "make_env", "play_episode", "step_limit"]
