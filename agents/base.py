"""The one protocol every agent follows.

An agent is given what a player sees after each ``reset``/``step`` of the env:

* ``obs``: the observation (the ``dict`` form for the baseline agents: ``tableau``,
  ``deals_left``, ``completed`` [, ``pile_tops``]);
* ``mask``: the boolean legal-action mask (``info["action_mask"]`` / ``env.action_masks()``),
  the only source of legality an agent uses;
* ``info``: the env's ``info`` dict (optional; agents must not rely on anything hidden in it),

and returns one legal action id. ``reset(seed)`` starts a new episode (clears per-game memory,
reseeds the agent's RNG). Agents decode actions with :mod:`spider_env.core.actions` and parse
the table with :class:`spider_env.observation.view.TableView` (once per observation); none of them
reads face-down cards or the stock order, and none recomputes the legality the mask gives.
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


def parse_budget_spec(spec: str, name: str, keys: tuple[str, ...]) -> dict[str, int]:
    """The budget of an agent spec ``NAME`` or ``NAME:KEY=N,...`` (each ``KEY`` one of ``keys``,
    at most once, ``N`` an integer): ``ValueError`` naming what is wrong. The expert's and the
    planner's specs."""
    head, sep, rest = spec.partition(":")
    if head.lower() != name:
        raise ValueError(f"not the spec of the {name} agent: {spec!r}")
    out: dict[str, int] = {}
    if not sep:
        return out
    for item in rest.split(","):
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        if not eq or key not in keys:
            raise ValueError(
                f"bad {name} budget {item!r} in {spec!r}: use {name}:KEY=N,... with KEY one of "
                f"{', '.join(keys)}"
            )
        if key in out:
            raise ValueError(f"{name} budget {key!r} given twice in {spec!r}")
        try:
            out[key] = int(value)
        except ValueError:
            raise ValueError(f"{name} budget {key}={value!r} is not an integer") from None
    return out


class BaseAgent:
    """Shared plumbing: the variant, a seeded RNG, ``reset``.

    ``variant`` may be left ``None``; it is then read from ``info["variant"]`` (the env's name of
    its variant, see :func:`spider_env.core.variants.get_variant`) on the first :meth:`act`.
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

    def _variant(self, info: Mapping[str, Any] | None) -> Variant:
        """The agent's variant, from its constructor or else from ``info["variant"]``."""
        if self.variant is None:
            name = info.get("variant") if info else None
            if name is None:
                raise ValueError(
                    f"{type(self).__name__} needs its variant: pass variant=... or an info dict "
                    "with a 'variant' entry"
                )
            self.variant = get_variant(name)
        return self.variant

    def _legal(self, mask: Any, variant: Variant) -> list[int]:
        """The legal action ids of ``mask`` (``ValueError`` if it is empty or does not fit)."""
        legal = legal_from_mask(mask)
        n = np.asarray(mask).size
        if n != variant.n_actions:
            raise ValueError(
                f"the action mask has {n} entries but {variant.name} has "
                f"{variant.n_actions} actions: the agent plays another variant than the env"
            )
        return legal.tolist()

    def act(self, obs: Any, mask: np.ndarray, info: Mapping[str, Any] | None = None) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        v = self.variant.name if self.variant is not None else None
        return f"{type(self).__name__}(variant={v!r}, seed={self.seed!r})"


__all__ = ["Agent", "BaseAgent", "legal_from_mask", "parse_budget_spec"]
