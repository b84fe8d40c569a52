"""The fixed action encoding, shared by the engine, the env and the agents.

For a variant with ``C`` columns, longest movable run ``R`` and ``D`` deal actions the action
space is ``Discrete(C*R*C + D [+ C discards] [+ 1 undo])``:

* moving the ``k`` exposed cards of column ``src`` onto column ``dst``:
  ``action = (src * R + (k - 1)) * C + dst``;
* deal number ``j`` (classic Spider: the single deal, ``j = 0``; a game whose player picks the
  stock pile: pile ``j``): ``action = C*R*C + j``;
* only where discarding a complete run is optional: discard the run at the end of column ``c``:
  ``action = C*R*C + D + c``;
* only where undo is on: ``action = C*R*C + D + (C discards) + 0`` (the last id).

Classic Spider: C=10, R=13, D=1, 1301 actions, the deal is 1300.
"""

from __future__ import annotations

from typing import NamedTuple

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


def check_action_id(variant: Variant, action: object) -> int:
    """``action`` as an int in ``[0, n_actions)``, or a ``TypeError``/``ValueError`` saying why."""
    if isinstance(action, bool) or not hasattr(action, "__index__"):
        raise TypeError(
            f"action must be an int in [0, {variant.n_actions}), got {type(action).__name__} "
            f"{action!r}"
        )
    a = int(action.__index__())
    if not 0 <= a < variant.n_actions:
        raise ValueError(
            f"action {a} is out of range: {variant.name} has actions 0..{variant.n_actions - 1}"
        )
    return a


def decode(variant: Variant, action: int) -> Action:
    """The :class:`Action` behind an action id (checked to be in range)."""
    a = check_action_id(variant, action)
    C, R = variant.n_columns, variant.max_run
    n_move = C * R * C
    if a < n_move:
        dst = a % C
        t = a // C
        return Action(MOVE, t // R, t % R + 1, dst)
    a -= n_move
    if a < variant.n_deal_actions:
        return Action(DEAL, pile=a)
    a -= variant.n_deal_actions
    if a < variant.n_discard_actions:
        return Action(DISCARD, src=a)
    return Action(UNDO)


def encode(variant: Variant, move: Action) -> int:
    """The action id of a :class:`Action`; ``ValueError`` if it has no id in this variant."""
    C, R = variant.n_columns, variant.max_run
    n_move = C * R * C
    kind = move.kind
    if kind == MOVE:
        if not (0 <= move.src < C and 0 <= move.dst < C and 1 <= move.cards <= R):
            raise ValueError(f"{move} has no action id in {variant.name} (C={C}, R={R})")
        return (move.src * R + move.cards - 1) * C + move.dst
    if kind == DEAL:
        pile = max(move.pile, 0)
        if pile >= variant.n_deal_actions:
            raise ValueError(f"{move} has no action id in {variant.name}")
        return n_move + pile
    if kind == DISCARD:
        if variant.auto_discard or not 0 <= move.src < C:
            raise ValueError(f"{move} has no action id in {variant.name} (runs discard at once)")
        return n_move + variant.n_deal_actions + move.src
    if kind == UNDO:
        if not variant.undo:
            raise ValueError(f"{variant.name} has no undo action (undo is off)")
        return variant.n_actions - 1
    raise ValueError(f"unknown move kind {kind!r}")


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
