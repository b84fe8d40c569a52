"""The fixed action encoding: action ids <-> :class:`Action`, shared by the engine, the env and
the agents.

The id layout (moves, then deals, then discards, then undo) is part of the env's contract and
is specified in :class:`spider_env.env.SpiderEnv` ("Action Space"); the arithmetic lives here
only: :func:`move_id` / :func:`move_parts` for moves, :func:`deal_id`, :func:`discard_id` and
:func:`undo_id` for the rest, :func:`encode` / :func:`decode` for :class:`Action` values.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

from spider_env.core.checks import is_int
from spider_env.core.variants import Variant

MOVE, DEAL, DISCARD, UNDO = "move", "deal", "discard", "undo"


class Action(NamedTuple):
    """A decoded action. ``kind`` is ``"move"``, ``"deal"``, ``"discard"`` or ``"undo"``.

    ``src``/``cards``/``dst`` describe a move; ``pile`` the deal; ``src`` the discard column.
    """

    kind: str
    src: int = -1
    cards: int = 0
    dst: int = -1
    pile: int = -1


def move_index(n_columns: int, max_run: int, src: int, cards: int, dst: int) -> int:
    """The move-id arithmetic on plain ints: ``(src * max_run + cards - 1) * n_columns + dst``.

    The one home of the formula: :func:`move_id` calls it, and the compiled core compiles this
    same function (``spider_env.fast.rules``). The ids of one source and group size are
    consecutive in ``dst``.
    """
    return (src * max_run + cards - 1) * n_columns + dst


def move_id(variant: Variant, src: int, cards: int, dst: int) -> int:
    """The id of moving the ``cards`` exposed cards of column ``src`` onto column ``dst``.

    Unchecked (for hot paths): the caller keeps ``0 <= src, dst < n_columns`` and
    ``1 <= cards <= max_run``; :func:`encode` is the checked form.
    """
    return move_index(variant.n_columns, variant.max_run, src, cards, dst)


def move_parts(variant: Variant, action: int) -> tuple[int, int, int]:
    """``(src, cards, dst)`` of a move id (the inverse of :func:`move_index`); unchecked:
    ``action < variant.n_move_actions``."""
    C = variant.n_columns
    R = variant.max_run
    t = action // C  # (// and % are faster than divmod here: this runs on every step)
    return t // R, t % R + 1, action % C


def deal_id(variant: Variant, pile: int = 0) -> int:
    """The id of dealing stock pile ``pile`` (``0``, the only deal id, unless the player picks
    the pile); unchecked: ``0 <= pile < variant.n_deal_actions``."""
    return variant.n_move_actions + pile


def deal_ids(variant: Variant) -> range:
    """Every deal id of the variant (one, unless the player picks the pile)."""
    return range(deal_id(variant), deal_id(variant) + variant.n_deal_actions)


def discard_id(variant: Variant, column: int) -> int:
    """The id of discarding the complete run ending ``column``; unchecked: only variants with
    ``auto_discard=False`` have discard ids."""
    return variant.n_move_actions + variant.n_deal_actions + column


def undo_id(variant: Variant) -> int:
    """The id of undo (the last id); unchecked: only variants with ``undo=True`` have it."""
    return variant.n_actions - 1


def check_action_id(variant: Variant, action: object) -> int:
    """``action`` as an int in ``[0, n_actions)``, or a ``TypeError``/``ValueError`` saying why."""
    if not is_int(action):
        raise TypeError(
            f"action must be an int in [0, {variant.n_actions}), got {type(action).__name__} "
            f"{action!r}"
        )
    a = operator.index(action)
    if not 0 <= a < variant.n_actions:
        raise ValueError(
            f"action {a} is out of range: {variant.name} has actions 0..{variant.n_actions - 1}"
        )
    return a


def decode(variant: Variant, action: int) -> Action:
    """The :class:`Action` behind an action id (checked to be in range)."""
    a = check_action_id(variant, action)
    if a < variant.n_move_actions:
        src, cards, dst = move_parts(variant, a)
        return Action(MOVE, src, cards, dst)
    a -= variant.n_move_actions
    if a < variant.n_deal_actions:
        return Action(DEAL, pile=a)
    a -= variant.n_deal_actions
    if a < variant.n_discard_actions:
        return Action(DISCARD, src=a)
    return Action(UNDO)


def encode(variant: Variant, action: Action) -> int:
    """The action id of an :class:`Action`; ``ValueError`` if it has no id in this variant."""
    C, R = variant.n_columns, variant.max_run
    kind = action.kind
    if kind == MOVE:
        if not (0 <= action.src < C and 0 <= action.dst < C and 1 <= action.cards <= R):
            raise ValueError(f"{action} has no action id in {variant.name} (C={C}, R={R})")
        return move_id(variant, action.src, action.cards, action.dst)
    if kind == DEAL:
        pile = max(action.pile, 0)
        if pile >= variant.n_deal_actions:
            raise ValueError(f"{action} has no action id in {variant.name}")
        return deal_id(variant, pile)
    if kind == DISCARD:
        if variant.auto_discard or not 0 <= action.src < C:
            raise ValueError(f"{action} has no action id in {variant.name} (runs discard at once)")
        return discard_id(variant, action.src)
    if kind == UNDO:
        if not variant.undo:
            raise ValueError(f"{variant.name} has no undo action (undo is off)")
        return undo_id(variant)
    raise ValueError(f"unknown action kind {kind!r}")


def describe(variant: Variant, action: int | Action) -> str:
    """An action in words: ``"move 3 cards 2 -> 7"``, ``"deal"``, ``"deal pile 3"``..."""
    m = action if isinstance(action, Action) else decode(variant, action)
    if m.kind == MOVE:
        return f"move {m.cards} card{'s' if m.cards != 1 else ''} {m.src} -> {m.dst}"
    if m.kind == DEAL:
        return f"deal pile {m.pile}" if variant.choose_pile else "deal"
    if m.kind == DISCARD:
        return f"discard run {m.src}"
    return "undo"
