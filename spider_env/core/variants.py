"""Rule sets as data: one frozen :class:`Variant` per game, no subclasses.

Every game the engine plays is a ``Variant`` instance: deck, layout, stock, and a handful of rule
switches that the one engine in :mod:`spider_env.core.rules` reads. Derived quantities (number of
actions, longest movable run ``R``, bound ``L`` on a column's length) are computed here, once.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from spider_env.core.cards import N_RANKS
from spider_env.core.checks import is_int

BUILD_RULES = ("any-suit", "same-suit")
MOVE_RULES = ("suited-run", "any-face-up")
EMPTY_RULES = ("any", "king")
SCORING_RULES = ("windows", "tournament")


@dataclass(frozen=True)
class Variant:
    """Parameters of one Spider-family game.

    Attributes:
        name: registry name, used in text forms and ``info``.
        suits: 1, 2 or 4 suits in use (spades; spades+hearts; all four).
        suit_sets: number of 13-card sets (King..Ace of one suit) in the deck; 8 for 104 cards.
        layout: cards dealt to each column at the start (its length is the number of columns).
        face_down: how many of those cards are face down (the deepest ones).
        stock: sizes of the stock piles; pile ``j`` goes onto columns ``0 .. size-1``.
        choose_pile: the player picks which stock pile to deal (one deal action per pile);
            otherwise piles are dealt in order by a single deal action.
        pile_top_visible: the first card of each stock pile is face up (seen by the player).
        deal_needs_no_empty: a deal is illegal while a column (not a free column) is empty.
        free_columns: the last ``free_columns`` columns are never dealt to (tournament game).
        build: ``"any-suit"`` (Spider: on any card one rank higher) or ``"same-suit"``.
        move: ``"suited-run"`` (move the k exposed cards when they form a suited descending
            run) or ``"any-face-up"`` (any face-up card with every card on top of it).
        empty_accepts: ``"any"`` card/run or only a ``"king"`` into an empty column.
        auto_discard: complete runs are removed at once; otherwise a discard action per column.
        runs_to_win: completed runs that win the game.
        scoring: ``"windows"`` (500, -1 per action, +100 per run) or ``"tournament"``
            (+25 per revealed card, +100 per run, +100 for a win without the free column).
        undo: an undo action exists, legal when the last action revealed no card.
    """

    name: str
    suits: int = 4
    suit_sets: int = 8
    layout: tuple[int, ...] = (6, 6, 6, 6, 5, 5, 5, 5, 5, 5)
    face_down: tuple[int, ...] = (5, 5, 5, 5, 4, 4, 4, 4, 4, 4)
    stock: tuple[int, ...] = (10, 10, 10, 10, 10)
    choose_pile: bool = False
    pile_top_visible: bool = False
    deal_needs_no_empty: bool = True
    free_columns: int = 0
    build: str = "any-suit"
    move: str = "suited-run"
    empty_accepts: str = "any"
    auto_discard: bool = True
    runs_to_win: int = 8
    scoring: str = "windows"
    undo: bool = False
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        def bad(what: str) -> ValueError:
            return ValueError(f"invalid variant {self.name!r}: {what}")

        if not isinstance(self.name, str) or not self.name:
            raise bad("name must be a non-empty str")
        for name in ("suits", "suit_sets", "free_columns", "runs_to_win"):
            val = getattr(self, name)
            if type(val) is not int:  # a record's field: a Python int exactly
                raise bad(f"{name} must be an int, got {val!r}")
        for name in ("layout", "face_down", "stock"):
            val = getattr(self, name)
            if not isinstance(val, tuple) or not all(type(x) is int and x >= 0 for x in val):
                raise bad(f"{name} must be a tuple of non-negative ints, got {val!r}")
        for name in ("choose_pile", "pile_top_visible", "deal_needs_no_empty", "auto_discard"):
            if not isinstance(getattr(self, name), bool):
                raise bad(f"{name} must be a bool")
        if not isinstance(self.undo, bool):
            raise bad("undo must be a bool")
        if self.suits not in (1, 2, 4):
            raise bad(f"suits must be 1, 2 or 4, got {self.suits}")
        if self.suit_sets < 1 or self.suit_sets % self.suits:
            raise bad(f"suit_sets ({self.suit_sets}) must be a positive multiple of suits")
        if len(self.layout) < 1:
            raise bad("layout needs at least one column")
        if len(self.face_down) != len(self.layout):
            raise bad("face_down must have one entry per column")
        if any(d >= n and n > 0 for d, n in zip(self.face_down, self.layout)) or any(
            d > 0 and n == 0 for d, n in zip(self.face_down, self.layout)
        ):
            raise bad("each non-empty column needs at least one face-up card")
        if not 0 <= self.free_columns < len(self.layout):
            raise bad("free_columns must leave at least one dealt column")
        if any(n > self.dealt_columns for n in self.stock) or any(n == 0 for n in self.stock):
            raise bad(f"each stock pile must hold 1..{self.dealt_columns} cards")
        if sum(self.layout) + sum(self.stock) != self.n_cards:
            raise bad(
                f"layout ({sum(self.layout)}) + stock ({sum(self.stock)}) must deal all "
                f"{self.n_cards} cards"
            )
        if self.build not in BUILD_RULES:
            raise bad(f"build must be one of {BUILD_RULES}, got {self.build!r}")
        if self.move not in MOVE_RULES:
            raise bad(f"move must be one of {MOVE_RULES}, got {self.move!r}")
        if self.empty_accepts not in EMPTY_RULES:
            raise bad(f"empty_accepts must be one of {EMPTY_RULES}, got {self.empty_accepts!r}")
        if self.scoring not in SCORING_RULES:
            raise bad(f"scoring must be one of {SCORING_RULES}, got {self.scoring!r}")
        if not 1 <= self.runs_to_win <= self.suit_sets:
            raise bad(f"runs_to_win must be 1..{self.suit_sets}")
        if self.pile_top_visible and not self.choose_pile:
            raise bad("pile_top_visible needs choose_pile")

    # --- derived sizes -------------------------------------------------------------------
    @cached_property
    def n_cards(self) -> int:
        return N_RANKS * self.suit_sets

    @cached_property
    def n_columns(self) -> int:
        """C: number of tableau columns, free columns included."""
        return len(self.layout)

    @cached_property
    def dealt_columns(self) -> int:
        return len(self.layout) - self.free_columns

    @cached_property
    def suit_ids(self) -> tuple[int, ...]:
        """Suits in use: (0,), (0, 1) or (0, 1, 2, 3)."""
        return tuple(range(self.suits))

    @cached_property
    def copies_per_suit(self) -> int:
        return self.suit_sets // self.suits

    @cached_property
    def max_run(self) -> int:
        """R: the most cards one move can take from a column.

        A suited descending run holds at most 13 cards (King..Ace). Where any face-up card moves
        with every card on top of it, a group is bounded only by the column's length.
        """
        if self.move == "suited-run":
            return N_RANKS
        return self.max_column_length

    @cached_property
    def max_column_length(self) -> int:
        """L: an upper bound on the length of any column in any reachable position.

        With suited-run moves a column is: its dealt cards that were never moved (at most
        ``max(layout) - 1`` below the last one), then descending builds of at most 13 cards,
        one started by the last dealt card or by a move into the emptied column, and one more
        for each stock card that lands on the column (a deal breaks the sequence). So
        ``L = max(layout) - 1 + 13 * (1 + cards dealt to a column from the stock)``, capped by
        the deck size. With any-face-up moves, groups carry arbitrary cards: ``L`` = deck size.
        """
        if self.move != "suited-run":
            return self.n_cards
        per_col = [0] * self.n_columns
        for n in self.stock:
            for c in range(n):
                per_col[c] += 1
        bound = max(self.layout) - 1 + N_RANKS * (1 + max(per_col))
        return min(bound, self.n_cards)

    @cached_property
    def n_deal_actions(self) -> int:
        """D: one per pile when the player chooses the pile, else 1 (0 without a stock)."""
        if not self.stock:
            return 0
        return len(self.stock) if self.choose_pile else 1

    @cached_property
    def n_move_actions(self) -> int:
        return self.n_columns * self.max_run * self.n_columns

    @cached_property
    def n_discard_actions(self) -> int:
        return 0 if self.auto_discard else self.n_columns

    @cached_property
    def n_actions(self) -> int:
        """Size of the fixed action space: moves, deals, discards, undo (in that order)."""
        return (
            self.n_move_actions
            + self.n_deal_actions
            + self.n_discard_actions
            + (1 if self.undo else 0)
        )

    def with_options(self, **changes: Any) -> Variant:
        """A copy with some fields changed (validated like any variant)."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ValueError(f"unknown variant option(s): {', '.join(sorted(unknown))}")
        return dataclasses.replace(self, **changes)

    def options_text(self) -> str:
        """``key=value`` for each field that differs from the registered variant of this name."""
        base = VARIANTS.get(self.name)
        if base is None:
            raise ValueError(f"variant {self.name!r} is not registered; it has no text form")
        parts = []
        for f in dataclasses.fields(self):
            if f.name in ("name", "description"):
                continue
            mine, theirs = getattr(self, f.name), getattr(base, f.name)
            if mine != theirs:
                parts.append(f"{f.name}={_format_value(mine)}")
        return " ".join(parts)

    def spec_text(self) -> str:
        """The variant as one string that :func:`get_variant` turns back into an equal variant:
        the registered name, then :meth:`options_text` when options differ
        (``"spider-4suit"``, ``"spider-4suit undo=true"``); ``ValueError`` if the name is not
        registered."""
        opts = self.options_text()
        return f"{self.name} {opts}" if opts else self.name


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(str(x) for x in value)
    return str(value)


def parse_options(variant: Variant, text: str) -> Variant:
    """Apply ``key=value`` options (as written by :meth:`Variant.options_text`)."""
    changes: dict[str, Any] = {}
    types = {f.name: f.type for f in dataclasses.fields(variant)}
    for part in text.split():
        key, eq, raw = part.partition("=")
        if not eq or key not in types or key in ("name", "description"):
            raise ValueError(f"bad variant option {part!r}")
        current = getattr(variant, key)
        try:
            if isinstance(current, bool):
                if raw not in ("true", "false"):
                    raise ValueError(raw)
                changes[key] = raw == "true"
            elif isinstance(current, int):
                changes[key] = int(raw)
            elif isinstance(current, tuple):
                changes[key] = tuple(int(x) for x in raw.split(",")) if raw else ()
            else:
                changes[key] = raw
        except ValueError as exc:
            raise ValueError(f"bad value in variant option {part!r}") from exc
    return variant.with_options(**changes)


def _classic(suits: int) -> Variant:
    return Variant(
        name=f"spider-{suits}suit",
        suits=suits,
        description=f"Classic Spider, two packs (104 cards), {suits} suit(s), ten columns.",
    )


VARIANTS: dict[str, Variant] = {}


def register_variant(variant: Variant) -> Variant:
    """Add a variant to the registry (its name must be new)."""
    if variant.name in VARIANTS and VARIANTS[variant.name] != variant:
        raise ValueError(f"a different variant named {variant.name!r} is already registered")
    VARIANTS[variant.name] = variant
    return variant


register_variant(_classic(1))
register_variant(_classic(2))
register_variant(_classic(4))

# --- the other games of the rule sources: data only, same engine -------------------------------
#
# Sources (docs/guide/rules.md lists them): a "How to Play Spider Solitaire"
# rules page, publisher unknown (its common variations: Relaxed Spider, Spiderette, Simple Simon,
# Scorpion); GSN's Spider Solitaire rules for the 78-card eight-column tournament game,
# https://gsnweb.zendesk.com/hc/en-us/articles/115005208706-Spider-Solitaire; Culbertson's rules
# (Culbertson's Card Games Complete with Official Rules) as quoted at https://spiderpro.com.
# PySolFC's (https://github.com/shlomif/PySolFC) Spider layout is used by
# :mod:`spider_env.core.interop` to reproduce PySolFC game numbers.


def _relaxed(suits: int) -> Variant:
    return Variant(
        name=f"spider-relaxed-{suits}suit",
        suits=suits,
        deal_needs_no_empty=False,
        description=(
            f"Relaxed Spider (as a 'How to Play Spider Solitaire' rules page lists it), {suits} "
            "suit(s): classic Spider, but a deal is legal "
            "while columns are empty (they get a card like every other column)."
        ),
    )


def _spiderette(suits: int) -> Variant:
    return Variant(
        name=f"spiderette-{suits}suit",
        suits=suits,
        suit_sets=4,
        layout=(1, 2, 3, 4, 5, 6, 7),
        face_down=(0, 1, 2, 3, 4, 5, 6),
        stock=(7, 7, 7, 3),
        runs_to_win=4,
        description=(
            "Spiderette (as a 'How to Play Spider Solitaire' rules page lists it), one pack, "
            f"{suits} suit(s): seven columns dealt like "
            "Klondike (1..7 cards, the last face up); the 24 other cards are the stock, dealt "
            "7, 7, 7 and finally 3 (onto columns 0-2); no deal while a column is empty; "
            "four runs win."
        ),
    )


def _tournament(suits: int) -> Variant:
    return Variant(
        name=f"spider-tournament-{suits}suit",
        suits=suits,
        suit_sets=6,
        layout=(5, 5, 5, 5, 5, 5, 4, 4, 0),
        face_down=(4, 4, 4, 4, 4, 4, 3, 3, 0),
        stock=(8, 8, 8, 8, 8),
        choose_pile=True,
        pile_top_visible=True,
        deal_needs_no_empty=False,
        free_columns=1,
        runs_to_win=6,
        scoring="tournament",
        undo=True,
        description=(
            f"GSN's 78-card tournament game (rules at gsnweb.zendesk.com), {suits} suit(s): "
            "eight columns "
            "(six of 4 face-down + 1, two of 3 + 1) and a Free Column (column 8), empty at the "
            "start, never dealt to, usable at any time; five draw piles of 8 with their top card "
            "visible, the player picks the pile (its visible card goes to column 0); a deal is "
            "legal with empty columns; six runs win; tournament score (+25 per revealed card, "
            "+100 per run, +100 for a win without the Free Column; no clock, so no time bonus); "
            "undo allowed when the last action revealed no card."
        ),
    )


def _pysol(suits: int) -> Variant:
    return Variant(
        name=f"pysol-spider-{suits}suit",
        suits=suits,
        layout=(6, 5, 5, 6, 5, 5, 6, 5, 5, 6),
        face_down=(5, 4, 4, 5, 4, 4, 5, 4, 4, 5),
        description=(
            f"Classic Spider, {suits} suit(s), in PySolFC's layout (6,5,5,6,5,5,6,5,5,6: the "
            "sixth card goes to columns 0, 3, 6, 9); used to replay PySolFC game numbers."
        ),
    )


for _suits in (1, 2, 4):
    register_variant(_relaxed(_suits))

register_variant(
    Variant(
        name="spider-culbertson",
        auto_discard=False,
        description=(
            "Spider by Culbertson's rules (as quoted at spiderpro.com), two packs, four suits: "
            "discarding a "
            "complete King..Ace run is optional (one discard action per column); a complete "
            "run may stay, be split or moved; no deal while a column is empty."
        ),
    )
)

for _suits in (1, 2, 4):
    register_variant(_spiderette(_suits))

register_variant(
    Variant(
        name="simple-simon",
        suits=4,
        suit_sets=4,
        layout=(8, 8, 8, 7, 6, 5, 4, 3, 2, 1),
        face_down=(0,) * 10,
        stock=(),
        runs_to_win=4,
        description=(
            "Simple Simon (as a 'How to Play Spider Solitaire' rules page lists it), one pack: "
            "ten columns of 8, 8, 8, 7, 6, 5, 4, 3, 2, 1 "
            "cards, all face up; no stock (no deal action); Spider moves; four runs win."
        ),
    )
)

register_variant(
    Variant(
        name="scorpion",
        suits=4,
        suit_sets=4,
        layout=(7,) * 7,
        face_down=(3, 3, 3, 3, 0, 0, 0),
        stock=(3,),
        deal_needs_no_empty=False,
        build="same-suit",
        move="any-face-up",
        empty_accepts="king",
        runs_to_win=4,
        description=(
            "Scorpion (named by a 'How to Play Spider Solitaire' rules page; standard layout), "
            "one pack: seven columns of seven, the first "
            "three cards of the first four columns face down; any face-up card moves with every "
            "card on top of it onto the next higher card of its suit; only a King (with its "
            "cards) goes into an empty column; the deal action puts the three reserve cards on "
            "columns 0-2 (allowed with empty columns); four runs win."
        ),
    )
)

for _suits in (1, 2):
    register_variant(_tournament(_suits))

for _suits in (1, 2, 4):
    register_variant(_pysol(_suits))


def get_variant(name: str | Variant) -> Variant:
    """Look a variant up by its name or by a :meth:`Variant.spec_text` (the name, then
    ``key=value`` options: ``"spider-4suit undo=true"``); a ``Variant`` is returned as is."""
    if isinstance(name, Variant):
        return name
    if not isinstance(name, str):
        raise TypeError(f"variant must be a name or a Variant, got {type(name).__name__}")
    base_name, _, options = name.strip().partition(" ")
    try:
        base = VARIANTS[base_name]
    except KeyError:
        raise ValueError(
            f"unknown variant {base_name!r}; known: {', '.join(sorted(VARIANTS))}"
        ) from None
    return parse_options(base, options) if options.strip() else base


def classic(suits: int) -> Variant:
    """Classic Spider with 1, 2 or 4 suits."""
    _check_suits(suits)
    return VARIANTS[f"spider-{suits}suit"]


def _check_suits(suits: object) -> None:
    """``ValueError`` unless ``suits`` is the int 1, 2 or 4 (``1.0``, ``True``, ``"1"`` are
    refused, naming their type)."""
    if not is_int(suits):
        raise ValueError(
            f"suits must be 1, 2 or 4 (an int), got {suits!r} ({type(suits).__name__})"
        )
    if suits not in (1, 2, 4):
        raise ValueError(f"suits must be 1, 2 or 4, got {suits!r}")


def resolve_variant(
    variant: str | Variant | None = None, suits: int | None = None, undo: bool = False
) -> Variant:
    """The variant meant by a ``variant`` name/object and/or ``suits`` (and the undo option).

    ``variant=None`` means classic Spider with ``suits`` (default 4); ``suits`` other than the
    int 1, 2 or 4 (``1.0``, ``True``, ``"1"``, ``3``) or contradicting the named variant is a
    ``ValueError``; ``undo=True`` turns the undo action on.
    """
    if suits is not None:
        _check_suits(suits)
    if variant is None:
        v = classic(suits if suits is not None else 4)
    else:
        v = get_variant(variant)
        if suits is not None and suits != v.suits:
            raise ValueError(
                f"suits={suits} contradicts variant {v.name!r}, which has {v.suits} suit(s)"
            )
    if not isinstance(undo, bool):
        raise TypeError(f"undo must be a bool, got {undo!r}")
    if undo and not v.undo:
        v = v.with_options(undo=True)
    return v
