"""A check the trainers' tests share: the model file a trainer wrote beside its native checkpoint
reads back and plays as the native model does.

:func:`assert_plays_as_native` plays a few games with the native (torch) model's most likely
action, in a vector env giving the model file's input, and at every position compares it with
the action the model file's player (NumPy) chooses (or one it scores the same to
:data:`NEAR_TIE`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from spider_env.agents.model import ModelAgent
from spider_env.agents.model_file import SavedModel

from spider_env.vector import SpiderVectorEnv

#: Two scores closer than this are a tie (float32 arithmetic in another order).
NEAR_TIE = 1e-5
#: The native model's most likely action for a batch of observations and masks.
NativeChoice = Callable[[Any, np.ndarray], np.ndarray]


def sb3_choice(model: Any) -> NativeChoice:
    """The most likely legal action of a Stable-Baselines3 (masked) model."""

    def choose(obs: Any, masks: np.ndarray) -> np.ndarray:
        actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
        return np.asarray(actions, dtype=np.int64)

    return choose


def assert_plays_as_native(
    path: str | Path,
    native: NativeChoice,
    deals: Sequence[int] = range(1000, 1004),
    steps: int = 25,
) -> SavedModel:
    """The model file ``path`` reads back (:meth:`SavedModel.read`) and its player chooses the
    ``native`` model's action at every position of ``steps`` moves on each of ``deals`` (games
    that end start again). Returns the model."""
    saved = SavedModel.read(path)
    agent = ModelAgent(saved, deterministic=True)
    envs = SpiderVectorEnv(
        len(deals), variant=saved.env.game(), deal_numbers=deals, **agent.env_kwargs()
    )
    try:
        obs, _ = envs.reset(seed=0)
        for step in range(steps):
            masks = np.asarray(envs.action_masks(), dtype=bool)
            theirs = native(obs, masks)
            mine = agent.choose_batch(obs, masks, None)
            playing = masks.any(axis=1)
            assert playing.any(), "no game has a legal action"
            # float32 in NumPy and in torch: two actions scored equal to 1e-5 may swap
            logits = agent.network.logits(obs)
            rows = np.arange(len(mine))
            gap = np.abs(logits[rows, mine] - logits[rows, theirs])
            differ = playing & (mine != theirs) & (gap > NEAR_TIE)
            assert not differ.any(), (
                f"step {step}: the model file plays {mine[differ].tolist()}, the native model "
                f"{theirs[differ].tolist()}"
            )
            obs, *_ = envs.step(theirs)
    finally:
        envs.close()
    return saved
