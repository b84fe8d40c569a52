"""The pure encoders of the observation: the specification the compiled core's observations
(:mod:`spider_env.fast.observe`) are held to.

* :class:`TableEncoder`: ``obs_mode="dict"`` (tableau, deals_left, completed[, pile_tops]);
* :class:`FeatureEncoder`: ``obs_mode="features"`` / ``"flat"``, the learning encoding.

Each writes one game's :class:`~spider_env.observation.assemble.ObservationBuffers` (its own, or
a row of an engine's, given as ``out``): :meth:`write` is what an engine calls, :meth:`encode`
also returns the observation (fresh arrays). Both are incremental: the engine shares unchanged
column tuples between a state and the next, so only the columns whose tuple object changed are
re-encoded.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from spider_env.core.cards import N_RANKS, N_SUITS
from spider_env.core.state import State
from spider_env.core.variants import Variant
from spider_env.observation.assemble import ObservationBuffers, assemble_observation
from spider_env.observation.spaces import (
    CARD_OFFSET,
    DEFAULT_FEATURE_SLOTS,
    FACE_DOWN,
    N_COLUMN_SCALARS,
    N_GLOBAL_SCALARS,
    card_slot_width,
    check_slots,
    face_down_scale,
    feature_width,
    globals_width,
)

# bytes.translate table: card id -> 2 + card id (ids are 0..51, so a byte each)
_PLUS_OFFSET = bytes((i + CARD_OFFSET) & 0xFF for i in range(256))
_DOWN_BYTE = bytes([FACE_DOWN])


@cache
def _zeros(length: int) -> list[bytes]:
    """``_zeros(L)[k]``: ``k`` zero bytes, for every ``k <= L`` (shared by the encoders)."""
    return [bytes(k) for k in range(length + 1)]


class ColumnOverflowError(RuntimeError):
    """A column longer than the table observation's bound ``L`` (only a position given as a
    ``State`` gets there): refused rather than dropping cards. ``game``: which game of an
    engine's batch (``None`` for a lone encoder)."""

    def __init__(self, variant: Variant, column: int, n_cards: int, game: int | None = None):
        super().__init__(
            f"column {column} holds {n_cards} cards, more than the bound "
            f"L={variant.max_column_length} of {variant.name}; refusing to drop cards from the "
            "observation"
        )
        self.game = game

    @classmethod
    def of(cls, state: State, game: int | None = None) -> ColumnOverflowError:
        """The error for ``state``'s first column longer than ``L``."""
        v = state.variant
        c, n = next(
            (c, len(col)) for c, col in enumerate(state.cols) if len(col) > v.max_column_length
        )
        return cls(v, c, n, game)


def _own_or(out: ObservationBuffers | None, variant: Variant, mode: str, slots: int) -> Any:
    """``out`` checked to be one game's buffers of ``mode`` for ``variant``, or new ones."""
    if out is None:
        return ObservationBuffers(variant, mode, slots)
    modes = ("dict",) if mode == "dict" else ("features", "flat")
    if out.variant != variant or out.obs_mode not in modes or out.table.ndim != 2:
        raise ValueError(
            f"out must be one game's {' or '.join(map(repr, modes))} buffers of {variant.name}, "
            f"got {out.obs_mode!r} buffers of {out.variant.name} with table {out.table.shape}"
        )
    if mode != "dict" and out.feature_slots != slots:
        raise ValueError(f"out has {out.feature_slots} feature slots, the encoder {slots}")
    return out


class TableEncoder:
    """Writes the ``dict`` observation (tableau, completed[, pile_tops]; layout in
    :class:`~spider_env.env.SpiderEnv`, "Observation Space") to ``out`` (one game's ``"dict"``
    buffers; by default its own)."""

    def __init__(self, variant: Variant, out: ObservationBuffers | None = None) -> None:
        self.variant = variant
        self.n_columns = variant.n_columns
        self.length = variant.max_column_length
        self.has_pile_tops = variant.pile_top_visible
        self.out = _own_or(out, variant, "dict", DEFAULT_FEATURE_SLOTS)
        # A byte view of the persistent tableau: a changed column is rewritten with one memcpy.
        self._bytes = self.out.table.data.cast("B")
        self._zeros = _zeros(self.length)
        self._seen: list[Any] = [None] * self.n_columns
        self._completed_key: Any = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_bytes"]  # a memoryview; rebuilt from the array on unpickling
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bytes = self.out.table.data.cast("B")

    def reset(self, state: State) -> dict[str, Any]:
        """Forget the previous game and encode ``state``."""
        self.write(state, fresh=True)
        return assemble_observation(self.out, state.deals_left)

    def encode(self, state: State) -> dict[str, Any]:
        """The observation of ``state``: fresh arrays the encoder never touches again."""
        self.write(state)
        return assemble_observation(self.out, state.deals_left)

    def write(self, state: State, fresh: bool = False) -> None:
        """Write ``state``'s table to :attr:`out` (``fresh``: forget the previous game first);
        :class:`ColumnOverflowError` for a column longer than ``L``."""
        if fresh:
            self._seen = [None] * self.n_columns
            self._completed_key = None
        seen = self._seen
        cols = state.cols
        L = self.length
        for c in range(self.n_columns):
            col = cols[c]
            if col is not seen[c]:
                n = len(col)
                if n > L:
                    raise ColumnOverflowError(self.variant, c, n)
                seen[c] = col
                d = state.down[c]
                self._bytes[c * L : c * L + L] = (
                    _DOWN_BYTE * d + bytes(col[d:]).translate(_PLUS_OFFSET) + self._zeros[L - n]
                )
        if state.completed is not self._completed_key:
            self._completed_key = state.completed
            self.out.completed[:] = state.completed
        if self.has_pile_tops:
            self.out.pile_tops[:] = [CARD_OFFSET + p[0] if p else 0 for p in state.stock]


class FeatureEncoder:
    """Writes ``(columns, globals)`` of the learning encoding (``obs_mode="features"`` or
    ``"flat"``; layout in :class:`~spider_env.env.SpiderEnv`, "Observation Space") to ``out``
    (one game's ``"features"`` or ``"flat"`` buffers; by default its own)."""

    def __init__(
        self,
        variant: Variant,
        slots: int = DEFAULT_FEATURE_SLOTS,
        out: ObservationBuffers | None = None,
    ) -> None:
        self.variant = variant
        self.slots = check_slots(slots)
        self.n_columns = variant.n_columns
        self.card_width = card_slot_width(variant)
        self.n_features = feature_width(variant, slots)
        self.n_globals = globals_width(variant)
        self.n_piles = len(variant.stock)
        self.has_pile_tops = variant.pile_top_visible
        self.out = _own_or(out, variant, "features", self.slots)
        self._has_suit = self.card_width > N_RANKS
        self._down_norm = float(face_down_scale(variant))
        self._seen: list[Any] = [None] * self.n_columns

    def _card_slot(self, row: np.ndarray, off: int, card: int) -> None:
        row[off + card % N_RANKS] = 1.0
        if self._has_suit:
            row[off + N_RANKS + card // N_RANKS] = 1.0

    def reset(self, state: State) -> None:
        """Forget the previous game."""
        self._seen = [None] * self.n_columns
        self.out.columns.fill(0.0)

    def _column(self, c: int, col: tuple[int, ...], down: int, run: int) -> None:
        row = self.out.columns[c]
        row.fill(0.0)
        n = len(col)
        up = n - down
        row[0] = down / self._down_norm
        row[1] = up / N_RANKS
        row[2] = 1.0 if n == 0 else 0.0
        row[3] = run / N_RANKS
        if run:
            self._card_slot(row, N_COLUMN_SCALARS, col[n - run])
        off = N_COLUMN_SCALARS + self.card_width
        for i in range(min(self.slots, up)):
            self._card_slot(row, off + i * self.card_width, col[n - 1 - i])

    def encode(self, state: State) -> tuple[np.ndarray, np.ndarray]:
        """``(columns, globals)`` of ``state``, fresh arrays."""
        self.write(state)
        return self.out.columns.copy(), self.out.globals.copy()

    def write(self, state: State, fresh: bool = False) -> None:
        """Write ``state``'s features to :attr:`out` (``fresh``: forget the previous game
        first)."""
        if fresh:
            self._seen = [None] * self.n_columns
        seen = self._seen
        cols, down, runs = state.cols, state.down, state.run_lengths
        for c in range(self.n_columns):
            col = cols[c]
            if col is not seen[c]:
                seen[c] = col
                self._column(c, col, down[c], runs[c])
        v = self.variant
        g = self.out.globals
        g.fill(0.0)
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


__all__ = ["ColumnOverflowError", "FeatureEncoder", "TableEncoder"]
