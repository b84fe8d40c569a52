"""The action spaces of the envs: Gymnasium's ``Discrete`` / ``MultiDiscrete`` whose ``sample``
also takes the envs' ``bool`` action masks.

Gymnasium's own idiom, ``env.action_space.sample(mask=info["action_mask"])``, asks for an
``int8`` mask (as Taxi's ``info["action_mask"]`` is); the Spider envs' masks are ``bool`` (their
documented contract, and what sb3-contrib reads from ``action_masks()``). These subclasses take
either, and are otherwise the Gymnasium spaces: equal to ``Discrete(n)`` /
``MultiDiscrete(nvec)``, ``isinstance`` of them, picklable, with the same ``repr``.
:func:`gymnasium.vector.utils.batch_space` of a :class:`MaskableDiscrete` is a
:class:`MaskableMultiDiscrete` (for ``SpiderVectorEnv`` and Gymnasium's ``SyncVectorEnv`` /
``AsyncVectorEnv`` of Spider envs alike), whose ``sample`` takes the batched ``(num_envs, A)``
mask.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space


def _int8(mask: Any) -> Any:
    """A ``bool`` array as the ``int8`` 0/1 array Gymnasium's ``sample`` asks for (a view, no
    copy); anything else unchanged, for Gymnasium to check."""
    if isinstance(mask, np.ndarray) and mask.dtype == np.bool_:
        return mask.view(np.int8)
    return mask


class MaskableDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``sample(mask=...)`` also takes a ``bool`` mask of shape ``(n,)``
    (the env's ``info["action_mask"]`` / ``action_masks()``)."""

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        return super().sample(mask=_int8(mask), probability=probability)


class MaskableMultiDiscrete(spaces.MultiDiscrete):
    """``MultiDiscrete(nvec)`` whose ``sample`` also takes, for a 1-D ``nvec``, one array of
    shape ``(len(nvec), n)``: ``mask=`` ``bool`` or ``int8`` (the vector env's
    ``info["action_mask"]`` / ``action_masks()``), ``probability=`` ``float64``, row ``i`` for
    entry ``i``; and Gymnasium's tuple of per-entry arrays, each ``bool`` or ``int8``."""

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        if isinstance(mask, (np.ndarray, tuple)):
            mask = tuple(_int8(m) for m in mask)
        if isinstance(probability, np.ndarray):
            probability = tuple(probability)
        return super().sample(mask=mask, probability=probability)


@batch_space.register(MaskableDiscrete)
def _batch_maskable_discrete(space: MaskableDiscrete, n: int = 1) -> MaskableMultiDiscrete:
    batched = batch_space.dispatch(spaces.Discrete)(space, n)  # Gymnasium's own, then ours
    assert isinstance(batched, spaces.MultiDiscrete)
    return MaskableMultiDiscrete(
        batched.nvec, dtype=batched.dtype, seed=batched.np_random, start=batched.start
    )


__all__ = ["MaskableDiscrete", "MaskableMultiDiscrete"]
