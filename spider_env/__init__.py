"""spider-env: Spider Solitaire as an exact, fast, reproducible reinforcement-learning environment.

The rules core (:mod:`spider_env.rules`, :mod:`spider_env.state`, :mod:`spider_env.deals`,
:mod:`spider_env.variants`) is pure Python; the Gymnasium environment sits on top of it.
"""

from spider_env.actions import Move, decode, describe, encode
from spider_env.deals import Deal, deal, deal_from_text, deal_to_text
from spider_env.env import SpiderEnv
from spider_env.evaluate import evaluate  # the function (module: spider_env.evaluate)
from spider_env.registration import register_envs, register_variant_env
from spider_env.rules import (
    IllegalMoveError,
    apply,
    explain_illegal,
    is_terminal,
    legal_actions,
    legal_moves,
)
from spider_env.state import State
from spider_env.variants import VARIANTS, Variant, classic, get_variant

register_envs()  # `import spider_env` registers "Spider-v0" (and every id in ENV_IDS)


def new_game(variant: Variant | str = "spider-4suit", deal_number: int = 0) -> State:
    """The starting state of deal ``deal_number`` of ``variant``."""
    return State.from_deal(deal(variant, deal_number))


__version__ = "0.1.0"

__all__ = [
    "VARIANTS",
    "Deal",
    "IllegalMoveError",
    "Move",
    "SpiderEnv",
    "State",
    "Variant",
    "apply",
    "classic",
    "deal",
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
    "legal_moves",
    "new_game",
    "register_envs",
    "register_variant_env",
]
