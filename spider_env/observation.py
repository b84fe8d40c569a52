"""What a player sees, as NumPy arrays (no Gymnasium here; :mod:`spider_env.env` builds spaces).

Two encodings of the same player's view, both generic over
:class:`~spider_env.core.variants.Variant` (``C`` columns, column bound ``L``, ``P`` stock piles,
``S`` suits):

**Table** (``obs_mode="dict"``, the default):

* ``"tableau"``: ``int8 (C, L)``; row ``c`` is column ``c`` from its deepest card (index 0) to
  the exposed card, then zeros. ``0`` = no card, ``1`` = face-down card, ``2 + card_id`` =
  face-up card (``card_id = suit * 13 + rank - 1``, suits S H D C, rank 1 = Ace .. 13 = King).
* ``"deals_left"``: deals remaining (an int, ``Discrete(P + 1)``).
* ``"completed"``: ``int8 (4,)`` completed runs per suit (S, H, D, C).
* ``"pile_tops"`` (only variants whose stock piles show their top card): ``int8 (P,)``,
  ``2 + card_id`` of each undealt pile's face-up card, ``0`` for a dealt pile.

**Features** (``obs_mode="features"`` / ``"flat"``), made for neural networks (all ``float32``):

* ``"columns"``: ``(C, F)``, per column: face-down count / (most face-down cards dealt to a
  column), face-up count / 13, empty flag, suited run length / 13, then ``N + 1`` card slots of
  ``13 + S'`` values each (one-hot rank A..K, then one-hot suit when ``S' = S > 1``, else no suit
  part): slot 0 is the base (deepest card) of the suited run at the end of the column (the card
  that decides where the run can go), slots 1..N the last ``N`` face-up cards, exposed card
  first. Slots without a face-up card are all zero. ``F = 4 + (N + 1) * (13 + S')``.
* ``"globals"``: ``(G,)``: deals left / P (0 without stock), completed runs / runs to win,
  completed runs per suit / copies of that suit (4 values), then for variants with visible pile
  tops ``P`` one-hot card slots like the column slots. ``G = 6 (+ P * (13 + S'))``.
* ``"flat"`` concatenates ``columns.ravel()`` and ``globals`` into one vector ``(C*F + G,)``.

Both builders are incremental: the engine shares unchanged column tuples between a state and
the next, so only the columns whose tuple object changed are re-encoded. The arrays a builder
returns are fresh copies that it never touches again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spider_env.core.cards import N_RANKS
from spider_env.core.state import State
from spider_env.core.variants import Variant

# The codes of the "tableau" array (and of "pile_tops"): the one definition, agents decode with it.
NO_CARD = 0  # past the end of a column (or a dealt pile)
FACE_DOWN = 1  # a face-down card
CARD_OFFSET = 2  # a face-up card is CARD_OFFSET + card_id
DEFAULT_FEATURE_SLOTS = 6


# bytes.translate table: card id -> 2 + card id (ids are 0..51, so a byte each)
_PLUS_OFFSET = bytes((i + CARD_OFFSET) & 0xFF for i in range(256))
_DOWN_BYTE = bytes([FACE_DOWN])


class TableEncoder:
    """Builds the ``dict`` observation (tableau, deals_left, completed[, pile_tops])."""

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

    def spec(self) -> dict[str, tuple[tuple[int, ...], int, int, Any]]:
        """``name -> (shape, low, high, dtype)``; ``deals_left`` is a ``Discrete(high + 1)``."""
        v = self.variant
        out: dict[str, tuple[tuple[int, ...], int, int, Any]] = {
            "tableau": ((self.n_columns, self.length), 0, CARD_OFFSET + 51, np.int8),
            "deals_left": ((), 0, len(v.stock), np.int64),
            "completed": ((4,), 0, v.suit_sets, np.int8),
        }
        if self.has_pile_tops:
            out["pile_tops"] = ((len(v.stock),), 0, CARD_OFFSET + 51, np.int8)
        return out

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
    """Builds the learning encoding (``obs_mode="features"`` or ``"flat"``)."""

    def __init__(self, variant: Variant, slots: int = DEFAULT_FEATURE_SLOTS) -> None:
        if isinstance(slots, bool) or not isinstance(slots, int) or slots < 0:
            raise ValueError(f"feature_slots must be an int >= 0, got {slots!r}")
        self.variant = variant
        self.slots = slots
        self.n_columns = variant.n_columns
        self.suit_width = variant.suits if variant.suits > 1 else 0
        self.card_width = N_RANKS + self.suit_width
        self.n_features = 4 + (slots + 1) * self.card_width
        self.n_piles = len(variant.stock)
        self.has_pile_tops = variant.pile_top_visible
        self.n_globals = 6 + (self.n_piles * self.card_width if self.has_pile_tops else 0)
        self._down_norm = float(max(max(variant.face_down), 1))
        self._up_high = variant.max_column_length / N_RANKS
        self._cols = np.zeros((self.n_columns, self.n_features), dtype=np.float32)
        self._seen: list[Any] = [None] * self.n_columns

    def spec(self) -> dict[str, tuple[tuple[int, ...], float, float]]:
        """``name -> (shape, low, high)`` of the float32 arrays (the column array's high is the
        largest feature bound: the face-up count / 13 can exceed 1)."""
        high = max(1.0, self._up_high)
        return {
            "columns": ((self.n_columns, self.n_features), 0.0, high),
            "globals": ((self.n_globals,), 0.0, 1.0),
        }

    def column_high(self) -> np.ndarray:
        high = np.ones((self.n_columns, self.n_features), dtype=np.float32)
        high[:, 1] = self._up_high
        return high

    def _card_slot(self, row: np.ndarray, off: int, card: int) -> None:
        row[off + card % N_RANKS] = 1.0
        if self.suit_width:
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
        for s in range(4):
            g[2 + s] = comp[s] / per
        if self.has_pile_tops:
            for j, pile in enumerate(state.stock):
                if pile:
                    self._card_slot(g, 6 + j * self.card_width, pile[0])
        return self._cols.copy(), g


__all__ = [
    "CARD_OFFSET",
    "DEFAULT_FEATURE_SLOTS",
    "FACE_DOWN",
    "NO_CARD",
    "FeatureEncoder",
    "TableEncoder",
]
