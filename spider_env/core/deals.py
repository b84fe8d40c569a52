"""The deal generator (the only source of randomness) and the deal text form.

Deal number ``N`` (an int in ``[0, DEAL_NUMBERS)``, :data:`DEAL_NUMBERS` ``= 2**64``) of a
variant is made the same way on every platform and Python/NumPy version, using only integer
arithmetic written here:

1. PRNG: SplitMix64 seeded with ``N`` (Steele, Lea & Flood 2014; the generator used to seed
   xoshiro). Each draw: ``x += 0x9E3779B97F4A7C15``; ``z = x``;
   ``z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9``; ``z = (z ^ z >> 27) * 0x94D049BB133111EB``;
   output ``z ^ z >> 31``, all modulo ``2**64``.
2. Bounded draws without bias: ``below(n)`` draws until ``x < 2**64 - 2**64 % n`` and returns
   ``x % n``.
3. Deck before shuffling: ``suit_sets`` sets of Ace..King, set ``i`` of suit ``suits[i % n]``.
4. Fisher-Yates: for ``i`` from ``n-1`` down to ``1``, swap ``deck[i]`` and
   ``deck[below(i + 1)]``.
5. Dealing: the tableau row by row (round ``r`` gives one card to every column that gets more
   than ``r`` cards, left to right), then the stock piles in order, each pile's card ``i``
   being the one dealt onto column ``i``.

Because the shuffle depends only on ``N`` and the deck size, deal ``N`` of the 1-, 2- and 4-suit
games put the same positions of the deck in the same places.

Text form (``deal_to_text`` / ``deal_from_text``), compatible with KPatience's deal files::

    variant: spider-4suit
    Play0: |3D |AS |KD |7D |3S 8H     <- column 0, deepest card first, | = face down
    ...
    Deal0: QH 9S 2S QH 3C AS 4S KS 6D TD   <- stock pile 0 (dealt first), column 0 first

The ``variant:`` line is optional when the variant is given to the reader. Cards may be written
``TS``, ``10S``, ``10♠``; ``|`` marks are optional but, if present, must match the variant.
"""

from __future__ import annotations

import operator
from collections import Counter
from dataclasses import dataclass

from spider_env.core.cards import N_RANKS, card_str, parse_card
from spider_env.core.checks import is_int
from spider_env.core.variants import Variant, get_variant

_MASK64 = (1 << 64) - 1
#: How many deal numbers there are: every game has deals ``0 .. DEAL_NUMBERS - 1`` (the
#: seeds of the 64-bit generator). The one definition of the bound; apps import it.
DEAL_NUMBERS = 2**64


class SplitMix64:
    """The SplitMix64 generator (see the module docstring), seeded with an int."""

    __slots__ = ("_x",)

    def __init__(self, seed: int) -> None:
        if not is_int(seed):
            raise TypeError(f"seed must be an int, got {type(seed).__name__}")
        seed = operator.index(seed)
        if not 0 <= seed <= _MASK64:
            raise ValueError(f"seed must be in [0, 2**64), got {seed}")
        self._x = seed

    def next64(self) -> int:
        self._x = (self._x + 0x9E3779B97F4A7C15) & _MASK64
        z = self._x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform int in ``[0, n)``."""
        if n <= 0:
            raise ValueError("below(n) needs n >= 1")
        limit = (1 << 64) - (1 << 64) % n
        while True:
            x = self.next64()
            if x < limit:
                return x % n


@dataclass(frozen=True)
class Deal:
    """A starting layout: the cards of each column (deepest first) and of each stock pile.

    ``deal_number`` is the generator's deal number, or ``None`` for a deal typed in by hand.
    """

    variant: Variant
    columns: tuple[tuple[int, ...], ...]
    stock: tuple[tuple[int, ...], ...]
    deal_number: int | None = None

    def __post_init__(self) -> None:
        v = self.variant
        if len(self.columns) != v.n_columns:
            raise ValueError(f"{v.name} has {v.n_columns} columns, deal has {len(self.columns)}")
        for c, (col, n) in enumerate(zip(self.columns, v.layout)):
            if len(col) != n:
                raise ValueError(f"column {c} must start with {n} cards, deal has {len(col)}")
        if len(self.stock) != len(v.stock):
            raise ValueError(f"{v.name} has {len(v.stock)} stock piles, deal has {len(self.stock)}")
        for j, (pile, n) in enumerate(zip(self.stock, v.stock)):
            if len(pile) != n:
                raise ValueError(f"stock pile {j} must hold {n} cards, deal has {len(pile)}")
        got = Counter(c for col in self.columns for c in col)
        got.update(c for pile in self.stock for c in pile)
        want = Counter(deck(v))
        if got != want:
            extra = " ".join(card_str(c) for c in sorted((got - want).elements())[:8])
            missing = " ".join(card_str(c) for c in sorted((want - got).elements())[:8])
            raise ValueError(
                f"the deal's cards are not the {v.n_cards}-card deck of {v.name}"
                + (f"; too many: {extra}" if extra else "")
                + (f"; missing: {missing}" if missing else "")
            )

    @property
    def name(self) -> str:
        """``"spider-4suit#123"`` for a generated deal, ``"custom"`` for one typed in."""
        if self.deal_number is None:
            return "custom"
        return deal_name(self.variant, self.deal_number)


def deal_name(variant: Variant, deal_number: int) -> str:
    """The name of deal ``deal_number`` of the generator: ``"spider-4suit#123"``."""
    return f"{variant.name}#{deal_number}"


def deck(variant: Variant) -> list[int]:
    """The unshuffled deck: ``suit_sets`` sets of Ace..King, cycling through the suits."""
    suits = variant.suit_ids
    out: list[int] = []
    for i in range(variant.suit_sets):
        s = suits[i % len(suits)]
        out.extend(s * N_RANKS + r for r in range(N_RANKS))
    return out


def shuffled_deck(variant: Variant, deal_number: int) -> list[int]:
    """The deck after the documented Fisher-Yates shuffle seeded with ``deal_number``."""
    if not is_int(deal_number):
        raise TypeError(f"deal number must be an int, got {type(deal_number).__name__}")
    deal_number = operator.index(deal_number)
    if not 0 <= deal_number < DEAL_NUMBERS:
        raise ValueError(f"deal number must be in [0, 2**64), got {deal_number}")
    cards = deck(variant)
    rng = SplitMix64(deal_number)
    for i in range(len(cards) - 1, 0, -1):
        j = rng.below(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def generate_deal(variant: Variant | str, deal_number: int) -> Deal:
    """Deal number ``deal_number`` of ``variant`` (same result everywhere, forever)."""
    v = get_variant(variant)
    cards = shuffled_deck(v, deal_number)
    return layout_deal(v, cards, deal_number)


def layout_deal(variant: Variant, cards: list[int], deal_number: int | None = None) -> Deal:
    """Lay ``cards`` out: tableau row by row, then the stock piles in order."""
    cols: list[list[int]] = [[] for _ in variant.layout]
    it = iter(cards)
    for r in range(max(variant.layout)):
        for c, n in enumerate(variant.layout):
            if r < n:
                cols[c].append(next(it))
    stock = tuple(tuple(next(it) for _ in range(n)) for n in variant.stock)
    return Deal(variant, tuple(tuple(c) for c in cols), stock, deal_number)


def deal_to_text(d: Deal, with_variant: bool = True) -> str:
    """The deal as text (KPatience-compatible lines, see the module docstring)."""
    v = d.variant
    lines = [f"variant: {v.name}"] if with_variant else []
    for c, col in enumerate(d.columns):
        fd = v.face_down[c]
        cards = ["|" + card_str(x) for x in col[:fd]] + [card_str(x) for x in col[fd:]]
        lines.append(f"Play{c}: " + " ".join(cards))
    for j, pile in enumerate(d.stock):
        lines.append(f"Deal{j}: " + " ".join(card_str(x) for x in pile))
    return "\n".join(lines) + "\n"


def deal_from_text(text: str, variant: Variant | str | None = None) -> Deal:
    """Read a deal typed by a user or written by :func:`deal_to_text` / KPatience.

    Raises ``ValueError`` naming the line and the problem.
    """
    if not isinstance(text, str):
        raise TypeError(f"deal text must be a str, got {type(text).__name__}")
    v = get_variant(variant) if variant is not None else None
    cols: dict[int, tuple[tuple[int, ...], int | None, int]] = {}
    piles: dict[int, tuple[tuple[int, ...], int]] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        head, colon, rest = line.partition(":")
        head = head.strip()
        if not colon:
            raise ValueError(f"deal text line {lineno}: expected 'PlayN: cards' or 'DealN: cards'")
        if head.lower() == "variant":
            named = get_variant(rest.strip())
            if v is not None and named.name != v.name:
                raise ValueError(
                    f"deal text line {lineno}: deal is for {named.name}, expected {v.name}"
                )
            v = v or named
            continue
        low = head.lower()
        kind = "play" if low.startswith("play") else "deal" if low.startswith("deal") else ""
        idx_text = head[4:]
        if not kind or not (idx_text.isascii() and idx_text.isdigit()):
            raise ValueError(f"deal text line {lineno}: unknown line {head!r}")
        idx = int(idx_text)
        cards: list[int] = []
        hidden = 0
        saw_up = False
        for tok in rest.split():
            is_hidden = tok.startswith("|")
            try:
                cards.append(parse_card(tok[1:] if is_hidden else tok))
            except ValueError as exc:
                raise ValueError(f"deal text line {lineno}: {exc}") from None
            if is_hidden:
                if saw_up:
                    raise ValueError(f"deal text line {lineno}: face-down {tok} on a face-up card")
                hidden += 1
            else:
                saw_up = True
        if kind == "deal" and hidden:
            raise ValueError(
                f"deal text line {lineno}: stock cards take no '|' mark (only PlayN columns do)"
            )
        table = cols if kind == "play" else piles
        if idx in table:
            raise ValueError(f"deal text line {lineno}: {head} given twice")
        if kind == "play":
            cols[idx] = (tuple(cards), hidden if "|" in rest else None, lineno)
        else:
            piles[idx] = (tuple(cards), lineno)
    if v is None:
        raise ValueError("deal text names no variant and none was given")
    if sorted(cols) != list(range(v.n_columns)):
        raise ValueError(f"deal text must have Play0..Play{v.n_columns - 1}, got {sorted(cols)}")
    if sorted(piles) != list(range(len(v.stock))):
        raise ValueError(f"deal text must have Deal0..Deal{len(v.stock) - 1}, got {sorted(piles)}")
    for c, (_cards, marked, lineno) in cols.items():
        if marked is not None and marked != v.face_down[c]:
            raise ValueError(
                f"deal text line {lineno}: column {c} starts with {v.face_down[c]} face-down "
                f"cards in {v.name}, the text marks {marked}"
            )
    try:
        return Deal(
            v,
            tuple(cols[c][0] for c in range(v.n_columns)),
            tuple(piles[j][0] for j in range(len(v.stock))),
        )
    except ValueError as exc:
        raise ValueError(f"deal text: {exc}") from None
