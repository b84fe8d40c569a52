"""Play agents on the same seeded deals and compare them.

:func:`evaluate` plays every agent on exactly the same deal numbers
(``env.reset(options={"deal": n})``) through ``gymnasium.make("Spider-v0", ...)`` and returns an
:class:`EvaluationResult`: one :class:`DealRecord` per (agent, deal), a :class:`AgentSummary` per
agent (win rate with a 95% Wilson interval, mean completed runs, score, moves, steps per second)
and a :class:`Comparison` per pair of agents (exact McNemar test on the deals only one of them
won). Agents are given as names (``"random"``, ``"greedy"``, ``"lookahead"``), paths of trained
models (``"model.safetensors"``, a Stable-Baselines3 ``"model.zip"``) or agent objects (see
:mod:`spider_env.agents`). A trained model's games are played in batches on the vector env
(:mod:`.batch`): the same games as one at a time.

Each agent is reset with a seed derived from ``(seed, deal)`` before each deal, so results do
not depend on ``jobs``, on ``ray`` or on the order in which deals are played.

The modules, one concern each: :mod:`.runner` (:func:`evaluate`), :mod:`.deals` (which deals:
:func:`parse_deals`, the bounds), :mod:`.players` (agents from names, paths, objects),
:mod:`.episode` (one game), :mod:`.batch` (a model's games side by side), :mod:`.workers`
(``jobs > 1``), :mod:`.ray_backend` (``ray=ADDRESS``: the same chunks as Ray tasks; Ray is
imported only there, when used), :mod:`.progress`,
:mod:`.results` (records, summaries, table / JSON / CSV) and :mod:`.stats` (Wilson, McNemar).
"""

from spider_env.apps.evaluation.deals import MAX_DEALS, describe_deals, parse_deals
from spider_env.apps.evaluation.episode import AgentError, make_env, play_episode
from spider_env.apps.evaluation.results import (
    AgentSummary,
    Comparison,
    DealRecord,
    EvaluationResult,
    compare,
)
from spider_env.apps.evaluation.runner import evaluate
from spider_env.apps.evaluation.stats import mcnemar_exact, wilson_interval
from spider_env.apps.evaluation.workers import WorkerError
from spider_env.core.variants import resolve_variant  # for callers that import it from here

__all__ = [
    "MAX_DEALS",
    "AgentError",
    "AgentSummary",
    "Comparison",
    "DealRecord",
    "EvaluationResult",
    "WorkerError",
    "compare",
    "describe_deals",
    "evaluate",
    "make_env",
    "mcnemar_exact",
    "parse_deals",
    "play_episode",
    "resolve_variant",
    "wilson_interval",
]
