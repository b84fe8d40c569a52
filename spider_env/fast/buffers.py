"""The buffers the compiled batched step works on, by name (NumPy only, no numba: the engine
makes them whether or not the compiled core loads).

:class:`Batch`: the arrays of ``N`` games, row ``i`` game ``i``'s; :class:`StepConfig`: what a step
computes. :func:`spider_env.fast.step.step_batch` and :func:`~spider_env.fast.step.observe_rows`
take them; the compiled engine (:class:`spider_env.engine.CompiledEngine`) makes them once, over
its own arrays.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Batch(NamedTuple):
    """The buffers of ``N`` games, row ``i`` game ``i``'s (the compiled engine's own arrays)."""

    states: np.ndarray  # (N, size) the state vectors
    masks: np.ndarray  # (N, A) bool: the legal actions
    legal: np.ndarray  # (N, A + 1) int32: the count of legal ids, then the ids
    tab: np.ndarray  # (N, ...) the table observation as one flat row (obs_kind 0)
    comp: np.ndarray  # (N, 4) completed runs per suit (obs_kind 0)
    tops: np.ndarray  # (N, piles) the visible pile tops (obs_kind 0)
    feat: np.ndarray  # (N, F) the features row, laid out by ``StepConfig.flay`` (obs_kind 1)
    info: np.ndarray  # (N, 5) n_legal, deals_left, score, moves, completed_runs (current)
    rewards: np.ndarray  # (N,) float64: what the last batched step did, per game
    terminated: np.ndarray  # (N,) bool
    truncated: np.ndarray  # (N,) bool
    ended: np.ndarray  # (N,) bool: terminated | truncated
    elapsed: np.ndarray  # (N,) int64: steps since the game started
    illegal: np.ndarray  # (N,) bool: the action was refused


class StepConfig(NamedTuple):
    """What a step computes: the reward, the answer to an illegal action, the observation."""

    keys: np.ndarray  # (64,) int64: ``legal_ids``' scratch
    mode: int  # the reward (``fast.rewards.reward_of``)
    w: np.ndarray  # float64: the illegal action's penalty, then the reward's weights
    terminate_illegal: bool  # whether a refused action ends the game
    obs_kind: int  # 0: the table, 1: the features row (``flay``), 2: none (per-action rows)
    flay: np.ndarray  # the features row's layout (``fast.observe.feature_layout``)
    prefetch: int  # step_batch: games ahead whose rows it asks the cache for (0: none)


__all__ = ["Batch", "StepConfig"]
