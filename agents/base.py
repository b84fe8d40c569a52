"""The one protocol every agent follows.

An agent is given what a player sees after each ``reset``/``step`` of the env:

* ``obs``: the observation (the ``dict`` form for the baseline agents: ``tableau``,
  ``deals_left``, ``completed`` [, ``pile_tops``]);
* ``mask``: the boolean legal-action mask (``info["action_mask"]`` / ``env.action_masks()``),
  the only source of legality an agent uses;
* ``info``: the env's ``info`` dict (optional; agents must not rely on anything hidden in it),

and returns one legal action id. ``reset(seed)`` starts a new episode (clears per-game memory,
reseeds the agent's RNG). Agents decode actions with the public helpers
(:func:`spider_env.core.actions.decode`, :func:`spider_env.core.actions.describe`) and
parse the table with :class:`spider_env.agents.view.TableView`; none of them reads face-down
cards or the stock order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

from spider_env.core.variants import Variant, get_variant


@runtime_checkable
class Agent(Protocol):
    """``act(obs, mask, info=None) -> action``; ``reset(seed=None)`` before each episode."""

    name: str

    def reset(self, seed: int | None = None) -> None: ...

    def act(self, obs: Any, mask: np.ndarray, info: Mapping[str, Any] | None = None) -> int: ...


def legal_from_mask(mask: Any) -> np.ndarray:
    """Indices of the legal actions (``ValueError`` for an empty or malformed mask)."""
    m = np.asarray(mask)
    if m.ndim != 1:
        raise ValueError(f"action mask must be one-dimensional, got shape {m.shape}")
    legal = np.flatnonzero(m)
    if legal.size == 0:
        raise ValueError("no legal action in the mask: the episode is over")
    return legal


def infer_variant(obs: Any, mask: Any) -> Variant | None:
    """The registered variant that fits an observation and mask (the fewest suits that cover
    the visible cards), for agents used without a variant; ``None`` if nothing fits."""
    from spider_env.core.variants import VARIANTS

    try:
        tab = np.asarray(obs["tableau"])
        n = int(np.asarray(mask).size)
    except (TypeError, KeyError, IndexError):
        return None
    if tab.ndim != 2:
        return None
    suits = {(int(x) - 2) // 13 for x in np.unique(tab) if x >= 2}
    fits = [
        v
        for v in VARIANTS.values()
        if v.n_actions == n
        and v.n_columns == tab.shape[0]
        and v.max_column_length == tab.shape[1]
        and suits <= set(v.suit_ids)
    ]
    return min(fits, key=lambda v: v.suits) if fits else None


class BaseAgent:
    """Shared plumbing: the variant, a seeded RNG, ``reset``.

    ``variant`` may be left ``None``; it is then taken from ``info["variant"]`` (the env puts
    the variant's name there) on the first :meth:`act`, or, without it, guessed from the shapes
    of the observation and mask (:func:`infer_variant`).
    """

    name = "base"

    def __init__(self, variant: Variant | str | None = None, seed: int | None = None) -> None:
        self.variant: Variant | None = get_variant(variant) if variant is not None else None
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.seed = seed
        self.rng = np.random.default_rng(self.seed)

    def _variant(
        self, info: Mapping[str, Any] | None, obs: Any = None, mask: Any = None
    ) -> Variant:
        if self.variant is not None:
            return self.variant
        name = info.get("variant") if info else None
        if name is not None:
            v = get_variant(name)
            if mask is not None and np.asarray(mask).size == v.n_actions + 1 and not v.undo:
                v = v.with_options(undo=True)  # info names the variant, not its options
            self.variant = v
            return v
        guess = infer_variant(obs, mask) if obs is not None and mask is not None else None
        if guess is None:
            raise ValueError(
                f"{type(self).__name__} needs its variant: pass variant=... or an info dict "
                "with a 'variant' entry"
            )
        return guess  # not kept: a later observation may show more suits

    def act(self, obs: Any, mask: np.ndarray, info: Mapping[str, Any] | None = None) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        v = self.variant.name if self.variant is not None else None
        return f"{type(self).__name__}(variant={v!r}, seed={self.seed!r})"


__all__ = ["Agent", "BaseAgent", "infer_variant", "legal_from_mask"]
