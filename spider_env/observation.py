"""What a player sees, as NumPy arrays, and the Gymnasium spaces that hold them.

The observation contract (what each array means) is the "Observation Space" section of
:class:`spider_env.env.SpiderEnv`. This module is the one home of its sizes and spaces:

* the tableau codes :data:`NO_CARD`, :data:`FACE_DOWN`, :data:`CARD_OFFSET`;
* the feature layout's sizes: :func:`card_slot_width`, :func:`feature_width` (``F``),
  :func:`globals_width` (``G``), :func:`flat_width` and their inverses
  :func:`slots_for_feature_width` / :func:`slots_for_flat_width`;
* :func:`observation_space`, the space of every ``obs_mode`` (the env and
  :class:`~spider_env.wrappers.FeatureObservation` both call it);
* :class:`TableEncoder` (``obs_mode="dict"``) and :class:`FeatureEncoder` (``"features"`` /
  ``"flat"``), which build the arrays.

Both encoders are incremental: the engine shares unchanged column tuples between a state and
the next, so only the columns whose tuple object changed are re-encoded. The arrays an encoder
returns are fresh copies that it never touches again.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from spider_env.core.cards import N_CARD_IDS, N_RANKS, N_SUITS
from spider_env.core.state import State
from spider_env.core.variants import Variant

# The codes of the "tableau" array (and of "pile_tops"): the one definition, agents decode with it.
NO_CARD = 0  # past the end of a column (or a dealt pile)
FACE_DOWN = 1  # a face-down card
CARD_OFFSET = 2  # a face-up card is CARD_OFFSET + card_id
DEFAULT_FEATURE_SLOTS = 6
OBS_MODES = ("dict", "features", "flat")
_N_GLOBAL_SCALARS = 6  # deals left, completed runs, completed runs per suit (4)


def card_slot_width(variant: Variant) -> int:
    """Values per card slot of the feature encoding: 13 (one-hot rank), plus a one-hot suit of
    ``variant.suits`` values when the variant has more than one suit."""
    return N_RANKS + (variant.suits if variant.suits > 1 else 0)


def feature_width(variant: Variant, slots: int) -> int:
    """``F``, the features per column: ``4 + (slots + 1) * card_slot_width(variant)``."""
    return 4 + (_check_slots(slots) + 1) * card_slot_width(variant)


def globals_width(variant: Variant) -> int:
    """``G``, the length of ``"globals"``: 6, plus a card slot per stock pile for variants whose
    stock piles show their top card."""
    piles = len(variant.stock) if variant.pile_top_visible else 0
    return _N_GLOBAL_SCALARS + piles * card_slot_width(variant)


def flat_width(variant: Variant, slots: int) -> int:
    """Length of the ``"flat"`` observation: ``C * F + G``."""
    return variant.n_columns * feature_width(variant, slots) + globals_width(variant)


def slots_for_feature_width(variant: Variant, width: int) -> int:
    """The ``feature_slots`` whose ``F`` is ``width`` (inverse of :func:`feature_width`);
    ``ValueError`` if no slot count gives it."""
    slots, rest = divmod(width - 4, card_slot_width(variant))
    if width < 4 or rest or slots < 1:
        raise ValueError(
            f"{width} features per column is no feature layout of {variant.name} "
            f"(F = 4 + (slots + 1) * {card_slot_width(variant)})"
        )
    return slots - 1


def slots_for_flat_width(variant: Variant, width: int) -> int:
    """The ``feature_slots`` whose ``"flat"`` length is ``width`` (inverse of
    :func:`flat_width`); ``ValueError`` if no slot count gives it."""
    cols, rest = divmod(width - globals_width(variant), variant.n_columns)
    if rest or cols < 0:
        raise ValueError(
            f"a flat observation of {width} values is no feature layout of {variant.name} "
            f"(C * F + G with C = {variant.n_columns}, G = {globals_width(variant)})"
        )
    return slots_for_feature_width(variant, cols)


MAX_FEATURE_SLOTS = 104  # no column ever shows more face-up cards than the largest deck has


def _check_slots(slots: object) -> int:
    if (
        isinstance(slots, bool)
        or not isinstance(slots, (int, np.integer))
        or not 0 <= slots <= MAX_FEATURE_SLOTS
    ):
        raise ValueError(f"feature_slots must be an int in 0..{MAX_FEATURE_SLOTS}, got {slots!r}")
    return int(slots)


def _column_high(variant: Variant, slots: int) -> np.ndarray:
    # every feature is in [0, 1] except the face-up count / 13, bounded by L / 13
    high = np.ones((variant.n_columns, feature_width(variant, slots)), dtype=np.float32)
    high[:, 1] = variant.max_column_length / N_RANKS
    return high


def observation_space(
    variant: Variant,
    obs_mode: str = "dict",
    feature_slots: int = DEFAULT_FEATURE_SLOTS,
    mask_in_obs: bool = False,
) -> spaces.Space[Any]:
    """The observation space of a :class:`~spider_env.env.SpiderEnv` with these arguments.

    ``"dict"``: ``Dict(tableau, deals_left, completed[, pile_tops])``; ``"features"``:
    ``Dict(columns, globals)``; ``"flat"``: one ``Box`` of :func:`flat_width` values.
    ``mask_in_obs`` adds ``"action_mask"`` to a ``Dict`` (``ValueError`` with ``"flat"``).
    """
    if obs_mode not in OBS_MODES:
        raise ValueError(f"obs_mode must be one of {OBS_MODES}, got {obs_mode!r}")
    _check_slots(feature_slots)  # checked in every mode: a bad value is an error, not ignored
    if obs_mode == "flat":
        if mask_in_obs:
            raise ValueError(
                "mask_in_obs=True needs a Dict observation (obs_mode 'dict' or 'features')"
            )
        high = np.concatenate(
            [_column_high(variant, feature_slots).ravel(), np.ones(globals_width(variant))]
        ).astype(np.float32)
        return spaces.Box(np.zeros_like(high), high, dtype=np.float32)
    d: dict[str, spaces.Space[Any]] = {}
    if obs_mode == "dict":
        top = CARD_OFFSET + N_CARD_IDS - 1
        n_piles = len(variant.stock)
        d["tableau"] = spaces.Box(0, top, (variant.n_columns, variant.max_column_length), np.int8)
        d["deals_left"] = spaces.Discrete(n_piles + 1)
        d["completed"] = spaces.Box(0, variant.suit_sets, (N_SUITS,), np.int8)
        if variant.pile_top_visible:
            d["pile_tops"] = spaces.Box(0, top, (n_piles,), np.int8)
    else:
        col_high = _column_high(variant, feature_slots)
        d["columns"] = spaces.Box(0.0, col_high, col_high.shape, np.float32)
        d["globals"] = spaces.Box(0.0, 1.0, (globals_width(variant),), np.float32)
    if mask_in_obs:
        d["action_mask"] = spaces.Box(0, 1, (variant.n_actions,), np.int8)
    return spaces.Dict(d)


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
        self.slots = _check_slots(slots)
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
                    self._card_slot(g, _N_GLOBAL_SCALARS + j * self.card_width, pile[0])
        return self._cols.copy(), g


__all__ = [
    "CARD_OFFSET",
    "DEFAULT_FEATURE_SLOTS",
    "FACE_DOWN",
    "NO_CARD",
    "OBS_MODES",
    "FeatureEncoder",
    "TableEncoder",
    "card_slot_width",
    "feature_width",
    "flat_width",
    "globals_width",
    "observation_space",
    "slots_for_feature_width",
    "slots_for_flat_width",
]
