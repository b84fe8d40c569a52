"""The players of spider-env: one protocol (:class:`~spider_env.agents.base.Agent`), the
players we ship, and the player of a trained model.

* :class:`RandomAgent` (``"random"``): uniform over the legal actions, seeded.
* :class:`GreedyAgent` (``"greedy"``): a one-step heuristic player.
* :class:`LookaheadAgent` (``"lookahead"``): greedy scoring plus a search over move sequences
  (a line stops where a card would turn up, so it never depends on unseen cards).
* :class:`ExpertAgent` (``"expert"``, ``"expert:samples=8,nodes=60000"``): samples layouts of
  the unseen cards and plays the move the perfect-information solver's lines agree on (needs
  numba).
* :class:`PlannerAgent` (``"planner"``, ``"planner:budget=3072"``, ``"planner:evals=96,width=4"``):
  the strongest player, its strength set by one dial (``budget``, scores per decision);
  chooses among the positions it can reach before the next card turns up, each scored over
  sampled layouts of the unseen cards (needs numba; its class docstring describes it).
* :class:`ModelAgent` (``"path/to/model.safetensors"``, :func:`load_model_agent`): a trained
  model, its network run in NumPy, its choices restricted to the mask's legal actions, sampled
  or most likely; a model file is data only (:mod:`.model_file`). A Stable-Baselines3 ``.zip``
  is read as data too, which needs torch (the ``train`` extra).

:func:`make_agent` builds any of them from a name or a path, as the CLI does; :data:`PLAYERS`
names the ones built by name. Players see the observation and the mask only, and never import
torch or Stable-Baselines3: training lives in :mod:`spider_env.agents.rl`, which the model
player reaches only to read a ``.zip``.
"""

from __future__ import annotations

import os

from spider_env.core.variants import Variant, get_variant
from spider_env.heuristics import Weights
from spider_env.observation.view import TableView

from .base import Agent, BaseAgent, legal_from_mask
from .expert import ExpertAgent, parse_expert_spec
from .greedy import GreedyAgent
from .lookahead import LookaheadAgent
from .model import ModelAgent, load_model_agent, load_sb3_agent
from .model_file import SUFFIX
from .planner import PlannerAgent, parse_planner_spec
from .random_agent import RandomAgent

#: The players built by name (their ``name``), in the order help texts list them.
PLAYERS: dict[str, type[BaseAgent]] = {
    cls.name: cls for cls in (RandomAgent, GreedyAgent, LookaheadAgent, ExpertAgent, PlannerAgent)
}
AGENT_NAMES = tuple(PLAYERS)


def make_agent(
    spec: str,
    variant: Variant | str | None = None,
    seed: int | None = None,
    *,
    deterministic: bool | None = None,
    allow_other_game: bool = False,
) -> Agent:
    """An agent from a name (one of :data:`AGENT_NAMES`, or a budget spec
    ``expert:KEY=N,...`` / ``planner:KEY=N,...``) or a model path (``.safetensors``, ``.zip``).

    ``deterministic`` and ``allow_other_game`` are for trained models (see
    :class:`.model.ModelAgent`): ``True`` plays the most likely action, ``False`` samples,
    ``None`` does what the model says; the agent's ``name`` says which. The baseline agents
    have no policy to sample from and play the same either way.

    Raises ``ValueError`` for an unknown name, ``FileNotFoundError`` for a missing model and
    :class:`~.model_format.ModelLoadError` (a ``ValueError``) for a model it cannot play.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"agent must be a name or a model path, got {spec!r}")
    if deterministic is not None and not isinstance(deterministic, bool):
        raise TypeError(f"deterministic must be True, False or None, got {deterministic!r}")
    v = get_variant(variant) if variant is not None else None
    key = spec.lower()
    if key.startswith(f"{ExpertAgent.name}:"):
        return ExpertAgent(v, seed, **parse_expert_spec(spec))
    if key.startswith(f"{PlannerAgent.name}:"):
        return PlannerAgent(v, seed, **parse_planner_spec(spec))
    if key in PLAYERS:
        return PLAYERS[key](v, seed)
    if spec.endswith((".zip", SUFFIX)) or os.sep in spec or os.path.exists(spec):
        return load_model_agent(
            spec, v, seed=seed, deterministic=deterministic, allow_other_game=allow_other_game
        )
    raise ValueError(
        f"unknown agent {spec!r}: use one of {', '.join(AGENT_NAMES)} or the path of a "
        f"trained model ({SUFFIX} or .zip)"
    )


__all__ = [
    "AGENT_NAMES",
    "PLAYERS",
    "Agent",
    "BaseAgent",
    "ExpertAgent",
    "GreedyAgent",
    "LookaheadAgent",
    "ModelAgent",
    "PlannerAgent",
    "RandomAgent",
    "TableView",
    "Weights",
    "legal_from_mask",
    "load_model_agent",
    "load_sb3_agent",
    "make_agent",
]
