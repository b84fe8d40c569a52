"""spider-env: Spider Solitaire as an exact, fast, reproducible reinforcement-learning environment.

One folder per concern; imports point one way (``tests/test_layers.py`` enforces it):

* :mod:`spider_env.core`: the rules, pure Python (no gymnasium, no agents): the specification.
* :mod:`spider_env.fast`: the compiled core (numba), the rules' one mirror over arrays, held to
  the core by differential tests; optional at run time. Search code reaches it through
  :mod:`spider_env.fast.game`.
* :mod:`spider_env.search`: the perfect-information solver, over the compiled core.
* :mod:`spider_env.heuristics`: the position scorer and move tests shared by the players and the
  per-action features.
* :mod:`spider_env.observation`: what a player sees: codes, spaces, encoders, the player's view.
* the environment (this folder): :mod:`~spider_env.env` (``SpiderEnv``), :mod:`~spider_env.vector`
  (``SpiderVectorEnv``), the engines behind both, :mod:`~spider_env.rewards`,
  :mod:`~spider_env.render`, :mod:`~spider_env.wrappers`, :mod:`~spider_env.registration`.
* :mod:`spider_env.sb3`: the Stable-Baselines3 ``VecEnv`` adapter (not imported here).
* :mod:`spider_env.agents`: players that see what a player sees (observation and mask);
  :mod:`spider_env.agents.rl`: training (torch, SB3), imported by no player.
* :mod:`spider_env.apps`: evaluation, episode files, terminal play, the solver CLI,
  ``spider-env``.

This module re-exports the core's and the environment's public names and registers the
Gymnasium ids. ``spider_env.evaluate`` (the function of :mod:`spider_env.apps.evaluation`) is
loaded on first use, so ``import spider_env`` does not import the agents.
"""

from typing import Any

from spider_env.core.actions import Action, decode, describe, encode
from spider_env.core.deals import Deal, deal_from_text, deal_to_text, generate_deal
from spider_env.core.rules import (
    IllegalMoveError,
    apply,
    apply_legal,
    explain_illegal,
    is_terminal,
    legal_actions,
)
from spider_env.core.state import State
from spider_env.core.variants import VARIANTS, Variant, classic, get_variant
from spider_env.env import SpiderEnv
from spider_env.fast import FastGame
from spider_env.registration import register_envs, register_variant_env
from spider_env.vector import SpiderVectorEnv

register_envs()  # `import spider_env` registers "Spider-v0" (and every id in ENV_IDS)


def __getattr__(name: str) -> Any:
    if name == "evaluate":  # the app layer, loaded on first use (it imports the agents)
        from spider_env.apps.evaluation import evaluate

        return evaluate
    raise AttributeError(f"module 'spider_env' has no attribute {name!r}")


def new_game(variant: Variant | str = "spider-4suit", deal_number: int = 0) -> State:
    """The starting state of deal ``deal_number`` of ``variant``."""
    return State.from_deal(generate_deal(variant, deal_number))


__version__ = "0.1.0"

__all__ = [
    "VARIANTS",
    "Action",
    "Deal",
    "FastGame",
    "IllegalMoveError",
    "SpiderEnv",
    "SpiderVectorEnv",
    "State",
    "Variant",
    "apply",
    "apply_legal",
    "classic",
    "deal_from_text",
    "deal_to_text",
    "decode",
    "describe",
    "encode",
    "evaluate",
    "explain_illegal",
    "get_variant",
    "is_terminal",
    "legal_actions",
    "new_game",
    "register_envs",
    "register_variant_env",
]
