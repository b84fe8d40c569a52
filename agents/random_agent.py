"""Uniformly random legal play (seeded)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .base import BaseAgent, legal_from_mask


class RandomAgent(BaseAgent):
    """Picks uniformly among the legal actions of the mask; same seed, same choices."""

    name = "random"

    def act(self, obs: Any, mask: np.ndarray, info: Mapping[str, Any] | None = None) -> int:
        legal = legal_from_mask(mask)
        return int(legal[self.rng.integers(legal.size)])


__all__ = ["RandomAgent"]
