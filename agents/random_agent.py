"""Uniformly random legal play (seeded)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from spider_env.core.variants import Variant

from .base import BaseAgent, legal_from_mask


class RandomAgent(BaseAgent):
    """Picks uniformly among the legal actions of the mask; same seed, same choices."""

    name = "random"

    def __init__(self, variant: Variant | str | None = None, seed: int | None = None) -> None:
        super().__init__(variant, seed)

    def act(self, obs: Any, mask: np.ndarray, info: Mapping[str, Any] | None = None) -> int:
        legal = legal_from_mask(mask)
        return int(legal[self.rng.integers(legal.size)])


__all__ = ["RandomAgent"]
