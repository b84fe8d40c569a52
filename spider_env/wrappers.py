"""Wrappers and helpers for using :class:`~spider_env.env.SpiderEnv` with RL libraries.

* :class:`FeatureObservation`: turn the default table observation of any Spider env (e.g. one
  made by ``gymnasium.make("Spider-v0")``) into the learning encoding of
  :class:`~spider_env.observation.FeatureEncoder` (the same arrays as ``obs_mode="features"`` /
  ``"flat"``; prefer those arguments when you build the env yourself: they skip the table).
* :class:`SpiderMethods`: registered ids wrap the env in it (outermost) so that
  ``gymnasium.make("Spider-v0").action_masks()``, ``.state``, ``.describe_action(a)``... work.
* :class:`DealRange`: play only deal numbers from a given range, in random order (training) or
  in a fixed cycle (evaluation); disjoint ranges keep training and evaluation deals apart.
* :class:`ActionFeatures`: the per-action features of
  :class:`~spider_env.observation.actions.ActionFeatureEncoder` (the RL recipe's observation).
* :func:`mask_fn`: the action-mask function ``sb3_contrib.common.wrappers.ActionMasker`` expects
  (not needed for ``MaskablePPO`` on a plain ``SpiderEnv``, which has ``action_masks()``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from spider_env.core.checks import is_int
from spider_env.env import SpiderEnv
from spider_env.observation import (
    DEFAULT_FEATURE_SLOTS,
    FeatureEncoder,
    ObservationBuffers,
    assemble_observation,
    observation_space,
)
from spider_env.observation.actions import DEFAULT_ACTION_ROWS, ActionFeatureEncoder


def _spider(env: gym.Env[Any, Any]) -> SpiderEnv:
    base = env.unwrapped
    if not isinstance(base, SpiderEnv):
        raise TypeError(f"expected a SpiderEnv (possibly wrapped), got {type(base).__name__}")
    return base


class FeatureObservation(gym.ObservationWrapper[Any, np.int64, Any]):
    """Observations in the learning encoding (layout: :class:`~spider_env.env.SpiderEnv`).

    ``flat=False``: a ``Dict`` with ``"columns"`` ``(C, F)`` and ``"globals"`` ``(G,)`` (and the
    wrapped env's ``"action_mask"`` if it has one) for SB3's ``MultiInputPolicy``;
    ``flat=True``: one ``float32`` vector ``(C*F + G,)`` for ``MlpPolicy``.
    """

    def __init__(
        self, env: gym.Env[Any, Any], slots: int = DEFAULT_FEATURE_SLOTS, flat: bool = False
    ) -> None:
        super().__init__(env)
        base = _spider(env)
        mode = "flat" if flat else "features"
        self._buffers = ObservationBuffers(base.variant, mode, slots)
        self._encoder = FeatureEncoder(base.variant, slots, out=self._buffers)
        self._with_mask = bool(base.mask_in_obs)
        if flat and self._with_mask:
            raise ValueError("flat=True cannot carry the action mask; use flat=False")
        self.observation_space = observation_space(base.variant, mode, slots, self._with_mask)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._encoder.reset(_spider(self.env).state)
        return self.observation(obs), info

    def observation(self, observation: Any) -> Any:
        self._encoder.write(_spider(self.env).state)
        mask = observation["action_mask"] if self._with_mask else None
        return assemble_observation(self._buffers, action_mask=mask)


class SpiderMethods(gym.Wrapper[Any, np.int64, Any, np.int64], gym.utils.RecordConstructorArgs):
    """Makes the Spider helpers callable on the env that ``gymnasium.make`` returns.

    Gymnasium 1.x wrappers (``TimeLimit``...) no longer forward attributes, so
    ``gymnasium.make("Spider-v0").action_masks()`` would fail. Registered ids put this thin
    wrapper outermost; it forwards exactly :data:`FORWARDED` to the ``SpiderEnv`` inside, and
    refuses (``RuntimeError``) a step after the step limit truncated the episode, as the env
    itself does after termination. It changes nothing else.
    """

    FORWARDED = (
        "action_masks",
        "backend",
        "deal_name",
        "deal_number",
        "decode_action",
        "describe_action",
        "encode_action",
        "last_action_text",
        "legal_actions",
        "n_actions",
        "state",
        "variant",
    )

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        self._spider = _spider(env)
        self._ended = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        self._ended = False
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        if self._ended:  # the SpiderEnv inside only knows termination, not the step limit
            raise RuntimeError(
                "the episode has ended (truncated by the step limit): call env.reset() first"
            )
        out = self.env.step(action)
        self._ended = out[3]
        return out

    def action_masks(self) -> np.ndarray:
        """The wrapped env's :meth:`~spider_env.env.SpiderEnv.action_masks` (called per step, so
        defined here rather than found through ``__getattr__``)."""
        mask: np.ndarray = self._spider.action_masks()
        return mask

    def __getattr__(self, name: str) -> Any:
        spider = self.__dict__.get("_spider")
        if spider is not None and name in SpiderMethods.FORWARDED:
            return getattr(spider, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def mask_fn(env: gym.Env[Any, Any]) -> np.ndarray:
    """The current action mask of a (wrapped) Spider env, for ``ActionMasker(env, mask_fn)``."""
    mask: np.ndarray = _spider(env).action_masks()
    return mask


DEAL_ORDERS = ("random", "cycle")


def deal_sequence(deal_numbers: Sequence[int] | range) -> Sequence[int] | range:
    """``deal_numbers`` checked (ints, not empty, none negative): a ``range`` as it is, any other
    sequence as a list. ``TypeError`` / ``ValueError`` naming the problem."""
    if isinstance(deal_numbers, range):
        seq: Sequence[int] | range = deal_numbers
    else:
        seq = list(deal_numbers)
        for n in seq:
            if not is_int(n):
                raise TypeError(f"deal numbers must be ints, got {n!r}")
    if len(seq) == 0:
        raise ValueError("the deal range is empty")
    # min() of a range is O(1) this way (the builtin would walk billions of numbers)
    low = min(seq[0], seq[-1]) if isinstance(seq, range) else min(seq)
    if low < 0:
        raise ValueError(f"deal numbers must be >= 0, got {low}")
    return seq


class DealRange(gym.Wrapper[Any, Any, Any, Any]):
    """Play only the deals whose numbers are in ``deal_numbers`` (a ``range`` or a sequence of
    ints).

    ``order="random"``: every ``reset`` draws a deal uniformly from ``deal_numbers`` with the
    wrapper's own RNG (seeded by ``reset(seed=...)``, like the env's). ``order="cycle"``: deals
    in order, wrapping around; ``restart()`` goes back to the first one. An explicit
    ``reset(options={...})`` (a deal, a deal text, a state) is passed through untouched.
    :attr:`chosen_deal_number` is the deal number this wrapper chose at the last reset (the
    env's ``deal_number`` names the deal played in every case); neither is in ``info``.
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        deal_numbers: Sequence[int] | range,
        order: str = "random",
    ) -> None:
        super().__init__(env)
        if order not in DEAL_ORDERS:
            raise ValueError(f"order must be one of {DEAL_ORDERS}, got {order!r}")
        self.deal_numbers = deal_sequence(deal_numbers)
        self.order = order
        self._next = 0
        self._rng = np.random.default_rng()
        self._chosen: int | None = None

    @property
    def chosen_deal_number(self) -> int | None:
        """The deal number chosen at the last reset; ``None`` before the first reset or when
        that reset's ``options`` chose the start."""
        return self._chosen

    def restart(self) -> None:
        """Cycle order: the next ``reset`` plays the first deal again."""
        self._next = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        if options:
            self._chosen = None
            return self.env.reset(seed=seed, options=options)
        if self.order == "random":
            pool = self.deal_numbers
            deal_number = int(pool[int(self._rng.integers(0, len(pool)))])
        else:
            deal_number = int(self.deal_numbers[self._next % len(self.deal_numbers)])
            self._next += 1
        self._chosen = deal_number
        return self.env.reset(seed=seed, options={"deal": deal_number})

    def action_masks(self) -> np.ndarray:
        """The mask of the wrapped env (sb3-contrib looks it up by this name)."""
        return np.asarray(self.env.get_wrapper_attr("action_masks")())


class ActionFeatures(
    gym.Wrapper[dict[str, np.ndarray], Any, Any, Any], gym.utils.RecordConstructorArgs
):
    """``obs_mode="actions"`` as a wrapper: the env's ``dict`` observation and mask become the
    per-action features of :class:`ActionFeatureEncoder`. ``action_masks()`` is the env's mask
    (for sb3-contrib's ``MaskablePPO``); rewards, ``info`` and episode ends are unchanged."""

    def __init__(self, env: gym.Env[Any, Any], action_rows: int = DEFAULT_ACTION_ROWS) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, action_rows=action_rows)
        gym.Wrapper.__init__(self, env)
        variant = getattr(env.unwrapped, "variant", None)
        if variant is None:
            raise ValueError(
                f"ActionFeatures wraps a Spider env, not {type(env.unwrapped).__name__}"
            )
        if getattr(env.unwrapped, "obs_mode", "dict") != "dict":
            raise ValueError("ActionFeatures needs the env's dict observation (obs_mode='dict')")
        self.encoder = ActionFeatureEncoder(variant, action_rows)
        self.observation_space = self.encoder.space  # type: ignore[assignment]
        self._mask = np.zeros(self.encoder.variant.n_actions, dtype=bool)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self.encoder.reset()
        self._mask = np.asarray(info["action_mask"], dtype=bool)
        return self.encoder.encode(obs, self._mask), info

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._mask = np.asarray(info["action_mask"], dtype=bool)
        return self.encoder.encode(obs, self._mask), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The legal actions of the current position (the env's mask)."""
        return self._mask.copy()


__all__ = [
    "DEAL_ORDERS",
    "ActionFeatures",
    "DealRange",
    "FeatureObservation",
    "SpiderMethods",
    "deal_sequence",
    "mask_fn",
]
