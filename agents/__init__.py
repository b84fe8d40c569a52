"""Agents for spider-env: one protocol (:class:`agents.base.Agent`), baselines, a loader for
trained Stable-Baselines3 models.

* :class:`RandomAgent` (``"random"``): uniform over the legal actions, seeded.
* :class:`GreedyAgent` (``"greedy"``): a one-step heuristic player.
* :class:`LookaheadAgent` (``"lookahead"``): greedy scoring plus a search over move sequences
  (a line stops where a card would turn up, so it never depends on unseen cards).
* :class:`ExpertAgent` (``"expert"``, ``"expert:samples=8,nodes=60000"``): samples layouts of
  the unseen cards and plays the move the perfect-information solver's lines agree on (needs
  numba).
* :func:`load_sb3_agent` (``"path/to/model.zip"``): a trained SB3 / sb3-contrib model, its
  choices restricted to the mask's legal actions, sampled or most likely (needs the ``train``
  extra).

:func:`make_agent` builds any of them from a name or a path, as the CLI does.

The RL recipe (README, "The RL recipe") lives in :mod:`agents.action_features` (per-action
features, the ``ActionFeatures`` wrapper; numpy only), :mod:`agents.imitation` (demonstrations
and behaviour-cloning data), :mod:`agents.rl_policy` (``ActionSetPolicy`` for MaskablePPO and
behaviour cloning) and :mod:`agents.rl_recipe` (envs, model, sidecar); the last two need the
``train`` extra and are not imported here.
"""

from __future__ import annotations

import os

from spider_env.core.variants import Variant, get_variant

from .base import Agent, BaseAgent, legal_from_mask
from .expert import ExpertAgent, parse_expert_spec
from .greedy import GreedyAgent, Weights
from .lookahead import LookaheadAgent
from .random_agent import RandomAgent
from .sb3 import load_sb3_agent
from .view import TableView

AGENT_NAMES = ("random", "greedy", "lookahead", "expert")


def make_agent(
    spec: str,
    variant: Variant | str | None = None,
    seed: int | None = None,
    *,
    deterministic: bool | None = None,
) -> Agent:
    """An agent from a name (``random``, ``greedy``, ``lookahead``, ``expert`` or
    ``expert:samples=S,nodes=N[,stage_nodes=M]``) or a ``.zip`` model path.

    ``deterministic`` is for trained models (see :func:`agents.sb3.load_sb3_agent`): ``True``
    plays the most likely action, ``False`` samples, ``None`` follows the model's sidecar
    (sampled without one); the agent's ``name`` says which. The baseline agents have no policy
    to sample from and play the same either way.

    Raises ``ValueError`` for an unknown name and ``FileNotFoundError`` for a missing model.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"agent must be a name or a model path, got {spec!r}")
    if deterministic is not None and not isinstance(deterministic, bool):
        raise TypeError(f"deterministic must be True, False or None, got {deterministic!r}")
    v = get_variant(variant) if variant is not None else None
    key = spec.lower()
    if key == "random":
        return RandomAgent(v, seed)
    if key == "greedy":
        return GreedyAgent(v, seed)
    if key == "lookahead":
        return LookaheadAgent(v, seed)
    if key == "expert" or key.startswith("expert:"):
        return ExpertAgent(v, seed, **parse_expert_spec(spec))
    if spec.endswith(".zip") or os.sep in spec or os.path.exists(spec):
        return load_sb3_agent(spec, v, seed=seed, deterministic=deterministic)
    raise ValueError(
        f"unknown agent {spec!r}: use one of {', '.join(AGENT_NAMES)} or the path of a "
        "trained model (.zip)"
    )


__all__ = [
    "AGENT_NAMES",
    "Agent",
    "BaseAgent",
    "ExpertAgent",
    "GreedyAgent",
    "LookaheadAgent",
    "RandomAgent",
    "TableView",
    "Weights",
    "legal_from_mask",
    "load_sb3_agent",
    "make_agent",
]
