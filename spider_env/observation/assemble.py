"""Where observations are written, and the one function that makes an observation of them.

Every observation of every ``obs_mode`` is built in two steps: an encoder (the pure ones of
:mod:`~spider_env.observation.encoders`, or the compiled core) writes the arrays of
:class:`ObservationBuffers`, then :func:`assemble_observation` turns those arrays into what
``reset`` / ``step`` return (``SpiderEnv``, ``SpiderVectorEnv``, the ``FeatureObservation``
wrapper, the encoders' own ``encode``). The layout of each mode is the "Observation Space" section
of :class:`spider_env.env.SpiderEnv`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spider_env.core.cards import N_SUITS
from spider_env.core.variants import Variant
from spider_env.observation.spaces import (
    DEFAULT_ACTION_ROWS,
    DEFAULT_FEATURE_SLOTS,
    N_ACTION_FEATURES,
    N_GLOBAL_FEATURES,
    OBS_MODES,
    feature_width,
    flat_width,
)

# one game's "deals_left" scalars, made once (numpy scalars are immutable)
_INT64 = tuple(np.int64(i) for i in range(64))


class ObservationBuffers:
    """The arrays the observations of one ``obs_mode`` are written to: of ``n`` games (a
    leading axis of ``n``), or of one game (``n=None``: no leading axis).

    * ``obs_mode="dict"``: :attr:`table` ``(..., C, L)``, :attr:`completed` ``(..., 4)`` and
      :attr:`pile_tops` ``(..., P)``, ``int8`` (``"deals_left"`` is not kept here: an engine
      counts it, an encoder reads it off the state);
    * ``"features"`` / ``"flat"``: :attr:`features` ``(..., C * F + G)`` ``float32``, the flat
      observation: ``"columns"`` row by row, then ``"globals"``; :attr:`columns`
      ``(..., C, F)`` and :attr:`globals` ``(..., G)`` are views of it;
    * ``"actions"``: :attr:`actions` ``(..., K, 27)``, :attr:`action_ids` ``(..., K)`` and
      :attr:`action_globals` ``(..., 11)``, ``float32``, with ``K = action_rows``.

    The arrays of the other modes are empty. :meth:`row` gives one game's buffers as views.
    """

    def __init__(
        self,
        variant: Variant,
        obs_mode: str = "dict",
        feature_slots: int = DEFAULT_FEATURE_SLOTS,
        n: int | None = None,
        action_rows: int = DEFAULT_ACTION_ROWS,
    ) -> None:
        if obs_mode not in OBS_MODES:
            raise ValueError(f"obs_mode must be one of {OBS_MODES}, got {obs_mode!r}")
        self.variant = variant
        self.obs_mode = obs_mode
        self.feature_slots = feature_slots
        self.action_rows = action_rows
        lead = () if n is None else (int(n),)
        table = obs_mode == "dict"
        C, L, P = variant.n_columns, variant.max_column_length, len(variant.stock)
        self.table = np.zeros((*lead, C if table else 0, L if table else 0), dtype=np.int8)
        self.completed = np.zeros((*lead, N_SUITS if table else 0), dtype=np.int8)
        self.pile_tops = np.zeros((*lead, P if table else 0), dtype=np.int8)
        width = flat_width(variant, feature_slots) if obs_mode in ("features", "flat") else 0
        self.features = np.zeros((*lead, width), dtype=np.float32)
        K = action_rows if obs_mode == "actions" else 0
        self.actions = np.zeros((*lead, K, N_ACTION_FEATURES), dtype=np.float32)
        self.action_ids = np.full((*lead, K), -1.0, dtype=np.float32)
        self.action_globals = np.zeros((*lead, N_GLOBAL_FEATURES if K else 0), dtype=np.float32)
        self._views()

    def _views(self) -> None:
        v = self.variant
        F = feature_width(v, self.feature_slots) if self.features.shape[-1] else 0
        CF = v.n_columns * F
        lead = self.features.shape[:-1]
        self.columns = self.features[..., :CF].reshape((*lead, v.n_columns, F))
        self.globals = self.features[..., CF:]

    def row(self, i: int) -> ObservationBuffers:
        """Game ``i``'s buffers: views into these (writing them writes these)."""
        out = object.__new__(ObservationBuffers)
        out.variant, out.obs_mode = self.variant, self.obs_mode
        out.feature_slots, out.action_rows = self.feature_slots, self.action_rows
        out.table, out.completed = self.table[i], self.completed[i]
        out.pile_tops, out.features = self.pile_tops[i], self.features[i]
        out.actions, out.action_ids = self.actions[i], self.action_ids[i]
        out.action_globals = self.action_globals[i]
        out._views()
        return out

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["columns"], state["globals"]  # views: rebuilt on unpickling
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._views()


def assemble_observation(
    buffers: ObservationBuffers,
    deals_left: int | np.ndarray | None = None,
    action_mask: np.ndarray | None = None,
    copy: bool = True,
) -> Any:
    """The observation of ``buffers.obs_mode`` made of ``buffers`` (one game's, or a batch's).

    ``"dict"``: ``{"tableau", "deals_left", "completed"[, "pile_tops"]}``, with ``deals_left``
    (an int, or an array over the games; required in this mode); ``"features"``:
    ``{"columns", "globals"}``; ``"flat"``: the features array; ``"actions"``:
    ``{"actions", "action_ids", "globals"}``. ``action_mask`` (bool, of one
    game or of the batch) adds ``"action_mask"`` as ``int8`` to a ``Dict`` mode (``"flat"``
    has no room for it: ``ValueError``). ``copy=False`` returns the buffers themselves (views
    in ``"features"``), overwritten by the next write; ``"deals_left"`` and the mask are
    always fresh.
    """
    mode = buffers.obs_mode
    obs: dict[str, Any]
    if mode == "dict":
        if deals_left is None:
            raise ValueError("the 'dict' observation needs deals_left")
        obs = {
            "tableau": buffers.table.copy() if copy else buffers.table,
            "deals_left": (
                np.array(deals_left, dtype=np.int64)
                if isinstance(deals_left, np.ndarray)
                else _INT64[deals_left]
                if 0 <= deals_left < len(_INT64)
                else np.int64(deals_left)
            ),
            "completed": buffers.completed.copy() if copy else buffers.completed,
        }
        if buffers.variant.pile_top_visible:
            obs["pile_tops"] = buffers.pile_tops.copy() if copy else buffers.pile_tops
    elif mode == "actions":
        obs = {
            "actions": buffers.actions.copy() if copy else buffers.actions,
            "action_ids": buffers.action_ids.copy() if copy else buffers.action_ids,
            "globals": buffers.action_globals.copy() if copy else buffers.action_globals,
        }
    elif mode == "features":
        obs = {
            "columns": buffers.columns.copy() if copy else buffers.columns,
            "globals": buffers.globals.copy() if copy else buffers.globals,
        }
    else:  # "flat"
        if action_mask is not None:
            raise ValueError("the 'flat' observation cannot carry the action mask")
        return buffers.features.copy() if copy else buffers.features
    if action_mask is not None:
        obs["action_mask"] = np.asarray(action_mask).astype(np.int8)
    return obs


__all__ = ["ObservationBuffers", "assemble_observation"]
