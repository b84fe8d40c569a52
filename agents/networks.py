"""The networks of the model files, in NumPy: what plays a trained model without torch.

:func:`network` builds the policy of a :class:`~spider_env.agents.model_file.SavedModel` (one
class per architecture of the allow-list). Its :meth:`logits` maps a batch of observations (the
env's own, in the model's ``obs_mode``) to one score per action id, ``float32`` ``(B, A)``:
the same computation as the PyTorch module the model was trained as (``x @ W.T + b`` per layer),
so its choices are the torch policy's (``tests/test_model_file.py`` checks them over many
positions). Only the actor is computed; a critic stored in the file is not needed to play.

Every layer is summed in a fixed order per row (:func:`dense_sum`, compiled by
:mod:`spider_env.fast.dense` where numba is), not by a BLAS product, whose last bits depend a
little on the other rows of the batch: a game's scores are the same bits alone or in any batch,
so the model plays the same moves alone and in a batch of games (``tests/test_model_batch.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np

from spider_env.fast import dense_kernel

from .model_file import ActionSetArchitecture, MLPArchitecture, SavedModel

#: The score of a legal action without a row in the ``"actions"`` observation (more legal
#: actions than ``action_rows``): the one value, for training (``agents/rl/action_set_net.py``)
#: and play.
NO_ROW_LOGIT = -1e8


class Network(Protocol):
    """A policy: a batch of observations -> a score per action id ``(B, A)``."""

    n_actions: int

    def logits(self, obs: Any) -> np.ndarray: ...


def _layer(weights: Mapping[str, np.ndarray], name: str) -> tuple[np.ndarray, np.ndarray]:
    """A linear layer as ``(W.T, b)``: ``x @ W.T + b`` (C-contiguous, ``float32``)."""
    w = np.ascontiguousarray(np.asarray(weights[f"{name}.weight"], dtype=np.float32).T)
    return w, np.ascontiguousarray(np.asarray(weights[f"{name}.bias"], dtype=np.float32))


def dense_sum(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``x @ w + b`` (``float32``), each output summed as ``b[j] + x[r, 0] * w[0, j] + x[r, 1] *
    w[1, j] + ...`` in that order, every product and sum rounded: a row's outputs do not depend
    on the other rows. :func:`spider_env.fast.dense.dense` is its compiled mirror."""
    out = np.empty((x.shape[0], w.shape[1]), dtype=np.float32)
    out[:] = b
    for k in range(x.shape[1]):
        out += x[:, k : k + 1] * w[k]
    return out


Dense = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def dense_layer() -> Dense:
    """:func:`dense_sum`, compiled (:func:`spider_env.fast.dense_kernel`) where numba is
    available."""
    try:
        dense = dense_kernel()
    except ImportError:  # the NumPy sum gives the same bits
        return dense_sum

    def compiled(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = np.empty((x.shape[0], w.shape[1]), dtype=np.float32)
        dense(np.ascontiguousarray(x, dtype=np.float32), w, b, out)
        return out

    return compiled


class ActionSetNetwork:
    """The action-set policy (:class:`~spider_env.agents.model_file.ActionSetArchitecture`):
    each row that stands for an action (``action_ids >= 0``) is scored by two ReLU layers
    and a linear score, over its features and the position's globals; every other id gets
    :data:`NO_ROW_LOGIT`."""

    def __init__(self, arch: ActionSetArchitecture, weights: Mapping[str, np.ndarray]) -> None:
        self.n_actions = arch.n_actions
        self.w1, self.b1 = _layer(weights, "embed.0")
        self.w2, self.b2 = _layer(weights, "embed.2")
        self.w3, self.b3 = _layer(weights, "score")
        self.dense = dense_layer()

    def row_scores(self, rows: np.ndarray) -> np.ndarray:
        """The score of each row of ``rows`` ``(M, features + globals)``: ``(M,)``."""
        h = self.dense(rows, self.w1, self.b1)
        np.maximum(h, 0, out=h)
        h = self.dense(h, self.w2, self.b2)
        np.maximum(h, 0, out=h)
        out: np.ndarray = self.dense(h, self.w3, self.b3)[:, 0]
        return out

    def logits(self, obs: Any) -> np.ndarray:
        """The scores of every action id for a batch of ``obs_mode="actions"`` observations
        (``"actions"`` ``(B, K, F)``, ``"action_ids"`` ``(B, K)``, ``"globals"`` ``(B, G)``;
        one observation without the batch axis also works)."""
        feats = np.asarray(obs["actions"], dtype=np.float32)
        ids = np.asarray(obs["action_ids"])
        glob = np.asarray(obs["globals"], dtype=np.float32)
        if feats.ndim == 2:
            feats, ids, glob = feats[None], ids[None], glob[None]
        b_of, k_of = np.nonzero(ids >= 0)
        rows = np.concatenate((feats[b_of, k_of], glob[b_of]), axis=1)
        out = np.full((feats.shape[0], self.n_actions), NO_ROW_LOGIT, dtype=np.float32)
        out[b_of, ids[b_of, k_of].astype(np.int64)] = self.row_scores(rows)
        return out


class MLPNetwork:
    """The MLP policy (:class:`~spider_env.agents.model_file.MLPArchitecture`) over the
    ``"flat"`` observation ``(B, inputs)``."""

    def __init__(self, arch: MLPArchitecture, weights: Mapping[str, np.ndarray]) -> None:
        self.n_actions = arch.n_actions
        self.layers = [_layer(weights, f"policy_net.{2 * i}") for i in range(len(arch.layers))]
        self.out = _layer(weights, "action_net")
        self.activation = np.tanh if arch.activation == "tanh" else _relu
        self.dense = dense_layer()

    def logits(self, obs: Any) -> np.ndarray:
        """The scores of every action id for a batch of flat observations (one observation
        without the batch axis also works)."""
        x = np.asarray(obs, dtype=np.float32)
        if x.ndim == 1:
            x = x[None]
        for w, b in self.layers:
            x = self.activation(self.dense(x, w, b))
        w, b = self.out
        out: np.ndarray = self.dense(x, w, b)
        return out


def _relu(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.maximum(x, 0)
    return out


def network(model: SavedModel) -> ActionSetNetwork | MLPNetwork:
    """The NumPy policy of ``model``'s architecture."""
    arch = model.architecture
    if isinstance(arch, ActionSetArchitecture):
        return ActionSetNetwork(arch, model.weights)
    return MLPNetwork(arch, model.weights)


__all__ = [
    "NO_ROW_LOGIT",
    "ActionSetNetwork",
    "MLPNetwork",
    "Network",
    "dense_layer",
    "dense_sum",
    "network",
]
