"""The observation's codes, sizes and Gymnasium spaces: the one home of every number the
observation layouts are made of.

* the tableau codes :data:`NO_CARD`, :data:`FACE_DOWN`, :data:`CARD_OFFSET`;
* the feature layout's sizes: :func:`card_slot_width`, :func:`feature_width` (``F``),
  :func:`globals_width` (``G``), :func:`flat_width` and their inverses
  :func:`slots_for_feature_width` / :func:`slots_for_flat_width`, where the card slots start
  (:data:`N_COLUMN_SCALARS`, :data:`N_GLOBAL_SCALARS`) and :func:`face_down_scale`; the
  compiled encoder receives these numbers from here (``spider_env.engine``), it computes none;
* the per-action features' names and sizes (:data:`ACTION_FEATURES`, :data:`GLOBAL_FEATURES`,
  :data:`DEFAULT_ACTION_ROWS`, :func:`check_action_rows`, :func:`action_feature_space`; what
  they mean: :mod:`spider_env.observation.actions`);
* :func:`observation_space`, the space of every ``obs_mode``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from spider_env.core.cards import N_CARD_IDS, N_RANKS, N_SUITS
from spider_env.core.checks import check_int
from spider_env.core.variants import Variant, get_variant

# The codes of the "tableau" array (and of "pile_tops"): the one definition, agents decode with it.
NO_CARD = 0  # past the end of a column (or a dealt pile)
FACE_DOWN = 1  # a face-down card
CARD_OFFSET = 2  # a face-up card is CARD_OFFSET + card_id
DEFAULT_FEATURE_SLOTS = 6
OBS_MODES = ("dict", "features", "flat", "actions")
N_COLUMN_SCALARS = 4  # face-down count, face-up count, empty flag, run length; then card slots
N_GLOBAL_SCALARS = 6  # deals left, completed runs, completed runs per suit (4); then pile tops

# The per-action features (obs_mode="actions"): one row per legal action, then the globals.
ACTION_FEATURES = (
    "is_move",
    "is_deal",
    "is_discard",
    "is_undo",
    "cards_moved",  # / 13
    "turns_up_card",
    "empties_column",
    "into_empty",
    "joins_suit",
    "joins_rank_only",
    "breaks_suited_link",
    "leaves_offsuit_link",
    "target_run_after",  # suited run at the target after the move / 13
    "completes_run",
    "source_face_down",  # / 6
    "target_face_down",  # / 6
    "gain",  # greedy one-step gain / 100, clipped to [-20, 20]
    "best_gain",
    "seen_before",  # visits of the position it leads to / 3, at most 1 (0 if it turns up a card)
    "pointless",
    "rank_moved",  # / 12
    "fills_empty",
    "source_face_up_after",  # / 13
    "turns_up_last_card",
    "prepares_turn_up",  # after it, the rest of the source could move away and turn up a card
    "makes_suited_target",  # the card it uncovers can take a suited run from another column
    "target_takes_more",  # the moved cards' bottom card can then take a run from elsewhere
)
GLOBAL_FEATURES = (
    "deals_left",  # / piles
    "runs_completed",  # / runs in the deck
    "face_down",  # / 44
    "empty_columns",  # / columns
    "legal_actions",  # / 50
    "best_gain",  # / 100, clipped to [-20, 20]
    "improving_moves",  # / 10
    "since_progress",  # decisions since a card turned up, a run or a deal / 50, at most 2
    "visits_here",  # / 5, at most 1
    "deal_legal",
    "decisions",  # / 1000
)
N_ACTION_FEATURES = len(ACTION_FEATURES)
N_GLOBAL_FEATURES = len(GLOBAL_FEATURES)
DEFAULT_ACTION_ROWS = 96


def card_slot_width(variant: Variant) -> int:
    """Values per card slot of the feature encoding: 13 (one-hot rank), plus a one-hot suit of
    ``variant.suits`` values when the variant has more than one suit."""
    return N_RANKS + (variant.suits if variant.suits > 1 else 0)


def feature_width(variant: Variant, slots: int) -> int:
    """``F``, the features per column: ``4 + (slots + 1) * card_slot_width(variant)``."""
    return N_COLUMN_SCALARS + (check_slots(slots) + 1) * card_slot_width(variant)


def globals_width(variant: Variant) -> int:
    """``G``, the length of ``"globals"``: 6, plus a card slot per stock pile for variants whose
    stock piles show their top card."""
    piles = len(variant.stock) if variant.pile_top_visible else 0
    return N_GLOBAL_SCALARS + piles * card_slot_width(variant)


def face_down_scale(variant: Variant) -> int:
    """What a column's face-down count is divided by in the features: the most face-down cards
    dealt to a column (at least 1)."""
    return max(max(variant.face_down), 1)


def flat_width(variant: Variant, slots: int) -> int:
    """Length of the ``"flat"`` observation: ``C * F + G``."""
    return variant.n_columns * feature_width(variant, slots) + globals_width(variant)


def slots_for_feature_width(variant: Variant, width: int) -> int:
    """The ``feature_slots`` whose ``F`` is ``width`` (inverse of :func:`feature_width`);
    ``ValueError`` if no slot count gives it."""
    slots, rest = divmod(width - N_COLUMN_SCALARS, card_slot_width(variant))
    if width < N_COLUMN_SCALARS or rest or slots < 1:
        raise ValueError(
            f"{width} features per column is no feature layout of {variant.name} "
            f"(F = {N_COLUMN_SCALARS} + (slots + 1) * {card_slot_width(variant)})"
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


def check_slots(slots: object) -> int:
    """``feature_slots`` checked: an int in ``0..MAX_FEATURE_SLOTS``."""
    return check_int("feature_slots", slots, 0, MAX_FEATURE_SLOTS)


def check_action_rows(rows: object, variant: Variant | None = None) -> int:
    """``action_rows`` checked: an int >= 1, and at most the variant's action count when
    ``variant`` is given (no position has more legal actions)."""
    top = variant.n_actions if variant is not None else None
    name = "action_rows" if variant is None else f"action_rows (of {variant.name})"
    return check_int(name, rows, 1, top)


def action_feature_space(
    variant: Variant | str, action_rows: int = DEFAULT_ACTION_ROWS
) -> spaces.Dict:
    """The observation space of ``obs_mode="actions"``: ``"actions"`` ``(action_rows, 27)``,
    ``"action_ids"`` ``(action_rows,)`` and ``"globals"`` ``(11,)``, all ``float32``."""
    v = get_variant(variant)
    return spaces.Dict(
        {
            "actions": spaces.Box(-20.0, 20.0, (action_rows, N_ACTION_FEATURES), np.float32),
            "action_ids": spaces.Box(-1.0, float(v.n_actions - 1), (action_rows,), np.float32),
            "globals": spaces.Box(-20.0, 20.0, (N_GLOBAL_FEATURES,), np.float32),
        }
    )


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
    action_rows: int | None = None,
) -> spaces.Space[Any]:
    """The observation space of a :class:`~spider_env.env.SpiderEnv` with these arguments.

    ``"dict"``: ``Dict(tableau, deals_left, completed[, pile_tops])``; ``"features"``:
    ``Dict(columns, globals)``; ``"flat"``: one ``Box`` of :func:`flat_width` values;
    ``"actions"``: :func:`action_feature_space` with ``action_rows`` rows (``None``:
    :data:`DEFAULT_ACTION_ROWS`; given with another mode it is a ``ValueError``).
    ``mask_in_obs`` adds ``"action_mask"`` to a ``Dict`` (``ValueError`` with ``"flat"``).
    """
    if obs_mode not in OBS_MODES:
        raise ValueError(f"obs_mode must be one of {OBS_MODES}, got {obs_mode!r}")
    check_slots(feature_slots)  # checked in every mode: a bad value is an error, not ignored
    if obs_mode != "actions" and action_rows is not None:
        raise ValueError(
            f"action_rows is only for obs_mode='actions' (got action_rows={action_rows!r} with "
            f"obs_mode={obs_mode!r})"
        )
    if obs_mode == "actions":
        rows = DEFAULT_ACTION_ROWS if action_rows is None else action_rows
        space = action_feature_space(variant, check_action_rows(rows, variant))
        if mask_in_obs:
            space.spaces["action_mask"] = spaces.Box(0, 1, (variant.n_actions,), np.int8)
        return space
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


__all__ = [
    "ACTION_FEATURES",
    "CARD_OFFSET",
    "DEFAULT_ACTION_ROWS",
    "DEFAULT_FEATURE_SLOTS",
    "FACE_DOWN",
    "GLOBAL_FEATURES",
    "MAX_FEATURE_SLOTS",
    "NO_CARD",
    "N_ACTION_FEATURES",
    "N_COLUMN_SCALARS",
    "N_GLOBAL_FEATURES",
    "N_GLOBAL_SCALARS",
    "OBS_MODES",
    "action_feature_space",
    "card_slot_width",
    "check_action_rows",
    "check_slots",
    "face_down_scale",
    "feature_width",
    "flat_width",
    "globals_width",
    "observation_space",
    "slots_for_feature_width",
    "slots_for_flat_width",
]
