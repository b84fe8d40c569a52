"""The pure encoders of the observation: the specification the compiled core's observations
(:mod:`spider_env.fast.observe`) are held to.

* :class:`TableEncoder`: ``obs_mode="dict"`` (tableau, deals_left, completed[, pile_tops]);
* :class:`FeatureEncoder`: ``obs_mode="features"`` / ``"flat"``, the learning encoding.

Both are incremental: the engine shares unchanged column tuples between a state and the next,
so only the columns whose tuple object changed are re-encoded. The arrays an encoder returns
are fresh copies that it never touches again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spider_env.core.cards import N_RANKS, N_SUITS
from spider_env.core.state import State
from spider_env.core.variants import Variant
from spider_env.observation.spaces import (
    CARD_OFFSET,
    DEFAULT_FEATURE_SLOTS,
    FACE_DOWN,
    N_GLOBAL_SCALARS,
    card_slot_width,
    check_slots,
    feature_width,
    globals_width,
)

# bytes.translate table: card id -> 2 + card id (ids are 0..51, so a byte each)
_PLUS_OFFSET = bytes((i + CARD_OFFSET) & 0xFF for i in range(256))
_DOWN_BYTE = bytes([FACE_DOWN])


class TableEncoder:
    """Builds the ``dict`` observation (tableau, deals_left, completed[, pile_tops]; layout in
    :class:`~spider_env.env.SpiderEnv`, "Observation Space")."""

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.n_columns = variant.n_columns
        self.length = variant.max_column_length
        self.has_pile_tops = variant.pile_top_visible
        self._tab = np.zeros((self.n_columns, self.length), dtype=np.int8)
        # A byte view of the persistent tableau: a changed column is rewritten with one memcpy.
        self._bytes = self._tab.data.cast("B")
        self._zeros = [bytes(k) for k in range(self.length + 1)]
        self._seen: list[Any] = [None] * self.n_columns
        self._completed_key: Any = None
        self._completed = np.zeros(4, dtype=np.int8)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_bytes"]  # a memoryview; rebuilt from the array on unpickling
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bytes = self._tab.data.cast("B")

    def reset(self, state: State) -> dict[str, Any]:
        """Forget the previous game and encode ``state``."""
        self._seen = [None] * self.n_columns
        self._completed_key = None
        return self.encode(state)

    def encode(self, state: State) -> dict[str, Any]:
        """The observation of ``state``: fresh arrays the encoder never touches again."""
        seen = self._seen
        cols = state.cols
        L = self.length
        for c in range(self.n_columns):
            col = cols[c]
            if col is not seen[c]:
                n = len(col)
                if n > L:
                    raise RuntimeError(
                        f"column {c} holds {n} cards, more than the bound L={L} of "
                        f"{self.variant.name}; refusing to drop cards from the observation"
                    )
                seen[c] = col
                d = state.down[c]
                self._bytes[c * L : c * L + L] = (
                    _DOWN_BYTE * d + bytes(col[d:]).translate(_PLUS_OFFSET) + self._zeros[L - n]
                )
        if state.completed is not self._completed_key:
            self._completed_key = state.completed
            self._completed = np.array(state.completed, dtype=np.int8)
        obs: dict[str, Any] = {
            "tableau": self._tab.copy(),
            "deals_left": np.int64(state.deals_left),
            "completed": self._completed.copy(),
        }
        if self.has_pile_tops:
            obs["pile_tops"] = np.array(
                [CARD_OFFSET + p[0] if p else 0 for p in state.stock], dtype=np.int8
            )
        return obs


class FeatureEncoder:
    """Builds ``(columns, globals)`` of the learning encoding (``obs_mode="features"`` or
    ``"flat"``; layout in :class:`~spider_env.env.SpiderEnv`, "Observation Space")."""

    def __init__(self, variant: Variant, slots: int = DEFAULT_FEATURE_SLOTS) -> None:
        self.variant = variant
        self.slots = check_slots(slots)
        self.n_columns = variant.n_columns
        self.card_width = card_slot_width(variant)
        self.n_features = feature_width(variant, slots)
        self.n_globals = globals_width(variant)
        self.n_piles = len(variant.stock)
        self.has_pile_tops = variant.pile_top_visible
        self._has_suit = self.card_width > N_RANKS
        self._down_norm = float(max(max(variant.face_down), 1))
        self._cols = np.zeros((self.n_columns, self.n_features), dtype=np.float32)
        self._seen: list[Any] = [None] * self.n_columns

    def _card_slot(self, row: np.ndarray, off: int, card: int) -> None:
        row[off + card % N_RANKS] = 1.0
        if self._has_suit:
            row[off + N_RANKS + card // N_RANKS] = 1.0

    def reset(self, state: State) -> None:
        self._seen = [None] * self.n_columns
        self._cols.fill(0.0)

    def _column(self, c: int, col: tuple[int, ...], down: int, run: int) -> None:
        row = self._cols[c]
        row.fill(0.0)
        n = len(col)
        up = n - down
        row[0] = down / self._down_norm
        row[1] = up / N_RANKS
        row[2] = 1.0 if n == 0 else 0.0
        row[3] = run / N_RANKS
        if run:
            self._card_slot(row, 4, col[n - run])
        off = 4 + self.card_width
        for i in range(min(self.slots, up)):
            self._card_slot(row, off + i * self.card_width, col[n - 1 - i])

    def encode(self, state: State) -> tuple[np.ndarray, np.ndarray]:
        """``(columns, globals)`` of ``state``, fresh arrays."""
        seen = self._seen
        cols, down, runs = state.cols, state.down, state.run_lengths
        for c in range(self.n_columns):
            col = cols[c]
            if col is not seen[c]:
                seen[c] = col
                self._column(c, col, down[c], runs[c])
        v = self.variant
        g = np.zeros(self.n_globals, dtype=np.float32)
        if self.n_piles:
            g[0] = state.deals_left / self.n_piles
        comp = state.completed
        g[1] = min(sum(comp) / v.runs_to_win, 1.0)
        per = v.copies_per_suit
        for s in range(N_SUITS):
            g[2 + s] = comp[s] / per
        if self.has_pile_tops:
            for j, pile in enumerate(state.stock):
                if pile:
                    self._card_slot(g, N_GLOBAL_SCALARS + j * self.card_width, pile[0])
        return self._cols.copy(), g


__all__ = ["FeatureEncoder", "TableEncoder"]
