"""Heuristics shared by the players (:mod:`spider_env.agents`) and the per-action features
(:mod:`spider_env.observation.actions`): below both, above the rules (:mod:`spider_env.core`)."""

from spider_env.heuristics.position import (
    DEFAULT_WEIGHTS,
    PositionScorer,
    Weights,
    pointless,
    visible_key,
)

__all__ = ["DEFAULT_WEIGHTS", "PositionScorer", "Weights", "pointless", "visible_key"]
