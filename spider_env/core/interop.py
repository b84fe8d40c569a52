"""Deals from the programs players already use: PySolFC game numbers and KPatience deal text.

**PySolFC** (pure Python, no PySolFC package needed).
:func:`pysol_deal` reproduces the deal PySolFC shows for a game number in its games

=========  ======================  ==================================  =====================
game id    PySolFC name            our variant                         suits (PySolFC -> us)
=========  ======================  ==================================  =====================
11         Spider                  ``pysol-spider-4suit``              C, S, H, D unchanged
269        Spider (1 Suit)         ``pysol-spider-1suit``              clubs -> spades
270        Spider (2 Suits)        ``pysol-spider-2suit``              clubs -> spades,
                                                                       hearts -> hearts
=========  ======================  ==================================  =====================

PySolFC's one-suit game is all clubs and its two-suit game clubs and hearts, while our one- and
two-suit decks are spades, and spades and hearts (as in Windows Spider and the seeds). The
mapping above is the only change: ranks, positions and face-down cards are PySolFC's.

How the deal is made (PySolFC's ``createCards``, ``shuffle`` and ``startGame``, written out here
with the standard library only): the 104 cards are created two packs one after the other, each
pack suit by suit in the order C S H D and Ace..King within a suit (in PySolFC's 1-suit game all
four suits of a pack are clubs, in its 2-suit game the first two clubs and the last two hearts).
They are shuffled by Fisher-Yates from the last position down: ``for i = 103 .. 1: swap cards
i and j``, with ``j`` from PySolFC's generator for the game number ``n``:

* ``n < 32000``, its Microsoft-style generator (``LCRandom31``): ``x = n``, then each draw
  ``x = (x * 214013 + 2531011) mod 2**33`` and ``j = ((x >> 16) & 0x7FFF) mod (i + 1)``;
* ``n >= 32000``, its Mersenne Twister (``MTRandom``, Python's ``random.Random(n)``):
  ``j = int(random() * (i + 1))``.

The shuffled list, reversed, is the order in which PySolFC deals: four face-down rows of ten,
one more face-down card on columns 0, 3, 6 and 9, a face-up row of ten, then the five stock rows
of ten, column 0 first. So PySolFC's Spider has the layout 6,5,5,6,5,5,6,5,5,6, hence the
``pysol-spider-*`` variants (classic rules, that layout). The 27 deals PySolFC printed itself
(``tests/test_interop.py``, game numbers 1 .. 123456789, on both sides of 32000) are reproduced
exactly.

**KPatience** deal text: ``Play0:`` .. ``Play9:`` (each column from its deepest card to the
exposed card, ``|`` before a face-down card), ``Deal0:`` .. ``Deal4:`` (the stock rows, dealt in
that order, column 0 first), ranks ``A 2-9 T J Q K``, suits ``C D H S``. KPatience deals the
classic 6,6,6,6,5,5,5,5,5,5 layout and uses spades (1 suit) and spades and hearts (2 suits) as we
do, so its text is our deal text (:mod:`spider_env.core.deals`) without the ``variant:`` line.
"""

from __future__ import annotations

import operator
import random
from typing import Any

from spider_env.core.cards import card_str, parse_card
from spider_env.core.checks import is_int
from spider_env.core.deals import Deal, deal_from_text, deal_to_text
from spider_env.core.state import State
from spider_env.core.variants import Variant, get_variant

#: PySolFC game id -> number of suits of its Spider game.
PYSOL_GAME_IDS: dict[int, int] = {11: 4, 269: 1, 270: 2}
#: The first game number PySolFC deals with its Mersenne Twister.
PYSOL_MT_FROM = 32000
#: Largest PySolFC game number (20 digits).
PYSOL_MAX_GAME = 10**20 - 1
_LC31_MASK = (1 << 33) - 1  # PySolFC's LCRandom31 keeps its state modulo 2**33

_PYSOL_SUIT_LETTERS = "CSHD"  # PySolFC's suit index -> letter
# Suit letter in PySolFC's game -> our suit letter, per game id.
_SUIT_MAP: dict[int, dict[str, str]] = {
    11: {"C": "C", "S": "S", "H": "H", "D": "D"},
    269: {"C": "S"},
    270: {"C": "S", "H": "H"},
}
# Which suit (PySolFC's index) PySolFC's game gives to the cards it creates as suit 0..3.
_PYSOL_GAME_SUITS: dict[int, tuple[int, int, int, int]] = {
    11: (0, 1, 2, 3),
    269: (0, 0, 0, 0),
    270: (0, 0, 2, 2),
}


def _check_game_id(game_id: object) -> int:
    if not is_int(game_id) or game_id not in PYSOL_GAME_IDS:
        raise ValueError(
            f"PySolFC game id must be one of {sorted(PYSOL_GAME_IDS)} (Spider, Spider (1 Suit), "
            f"Spider (2 Suits)), got {game_id!r}"
        )
    return operator.index(game_id)


def pysol_variant(game_id: int = 11) -> Variant:
    """Our variant for PySolFC's Spider game ``game_id`` (11, 269 or 270)."""
    return get_variant(f"pysol-spider-{PYSOL_GAME_IDS[_check_game_id(game_id)]}suit")


def pysol_game_id(variant: Variant | str) -> int:
    """The PySolFC game id whose deals fit ``variant`` (same suits; ValueError otherwise)."""
    v = get_variant(variant)
    for gid, suits in PYSOL_GAME_IDS.items():
        if suits == v.suits and v.suit_sets == 8:
            return gid
    raise ValueError(f"{v.name} is not a Spider game PySolFC has (needs 104 cards, 1/2/4 suits)")


def pysol_suit_map(game_id: int = 11) -> dict[str, str]:
    """Suit letter in PySolFC's game ``game_id`` -> our suit letter (see the module docstring)."""
    return dict(_SUIT_MAP[_check_game_id(game_id)])


def pysol_order(game_number: int) -> list[tuple[int, int]]:
    """``(rank, PySolFC suit index)`` of the 104 cards in the order PySolFC deals them for
    ``game_number`` (see the module docstring; suit index 0..3 = C S H D); ``TypeError`` /
    ``ValueError`` unless it is an int in ``1..PYSOL_MAX_GAME``."""
    if not is_int(game_number):
        raise TypeError(f"PySolFC game number must be an int, got {type(game_number).__name__}")
    game_number = operator.index(game_number)
    if not 1 <= game_number <= PYSOL_MAX_GAME:
        raise ValueError(f"PySolFC game numbers are 1..{PYSOL_MAX_GAME}, got {game_number}")
    cards = [(rank, suit) for _pack in range(2) for suit in range(4) for rank in range(1, 14)]
    if game_number < PYSOL_MT_FROM:
        x = game_number
        for i in range(len(cards) - 1, 0, -1):
            x = (x * 214013 + 2531011) & _LC31_MASK
            j = ((x >> 16) & 0x7FFF) % (i + 1)
            cards[i], cards[j] = cards[j], cards[i]
    else:
        rng = random.Random(game_number)
        for i in range(len(cards) - 1, 0, -1):
            j = int(rng.random() * (i + 1))
            cards[i], cards[j] = cards[j], cards[i]
    return cards[::-1]


def pysol_deal(game_number: int, game_id: int = 11) -> Deal:
    """The deal PySolFC shows for ``game_number`` in its Spider game ``game_id``.

    ``game_id`` is 11 (Spider, 4 suits), 269 (Spider (1 Suit)) or 270 (Spider (2 Suits)); the
    deal's variant is ``pysol-spider-{4,1,2}suit`` (PySolFC's layout, classic rules) and suits
    are mapped as the module docstring says. The returned deal has ``deal_number=None``: it is not a
    deal number of our own generator.
    """
    gid = _check_game_id(game_id)
    order = pysol_order(game_number)
    v = pysol_variant(gid)
    suits = _PYSOL_GAME_SUITS[gid]
    smap = _SUIT_MAP[gid]
    ids = [
        parse_card("A23456789TJQK"[rank - 1] + smap[_PYSOL_SUIT_LETTERS[suits[suit]]])
        for rank, suit in order
    ]
    it = iter(ids)
    n_cols = v.n_columns
    cols: list[list[int]] = [[] for _ in range(n_cols)]
    for _row in range(4):
        for c in range(n_cols):
            cols[c].append(next(it))
    for c in range(0, n_cols, 3):
        cols[c].append(next(it))
    for c in range(n_cols):
        cols[c].append(next(it))
    stock = tuple(tuple(next(it) for _ in range(n)) for n in v.stock)
    return Deal(v, tuple(tuple(c) for c in cols), stock, None)


def pysol_state(game_number: int, variant: Variant | str | None = None) -> State:
    """The starting :class:`State` of PySolFC's game ``game_number`` played as ``variant``.

    ``variant`` (default ``pysol-spider-4suit``) can be any variant with Spider's table: ten
    columns, 104 cards, five stock piles of ten, no free column, e.g. classic, relaxed or
    Culbertson Spider, with or without undo. Its suit count picks PySolFC's game (4 -> 11,
    1 -> 269, 2 -> 270). The columns are PySolFC's (6,5,5,6,5,5,6,5,5,6 with the last card face
    up) whatever the variant's own layout; the rules are the variant's.
    """
    v = get_variant(variant if variant is not None else "pysol-spider-4suit")
    if (
        v.n_columns != 10
        or v.n_cards != 104
        or v.stock != (10,) * 5
        or v.free_columns
        or v.choose_pile
    ):
        raise ValueError(
            f"PySolFC's Spider deals need Spider's table (10 columns, 104 cards, 5 stock piles "
            f"of 10); {v.name} has {v.n_columns} columns, {v.n_cards} cards, stock {v.stock}"
        )
    d = pysol_deal(game_number, pysol_game_id(v))
    face_down = d.variant.face_down
    return State(v, d.columns, face_down, d.stock)


def pysol_reset_option(variant: Variant, value: Any) -> tuple[State, str, int]:
    """``SpiderEnv.reset(options={"pysol_game": n})``: PySolFC's game ``n`` in the env's variant.

    Returns ``(state, deal name, -1)``; the name is ``"pysolfc-<game id>#<n>"`` (the deal is not
    a number of our own generator, hence ``-1``).
    """
    if not is_int(value):
        raise TypeError(f"options['pysol_game'] must be an int game number, got {value!r}")
    value = operator.index(value)
    state = pysol_state(value, variant)
    return state, f"pysolfc-{pysol_game_id(variant)}#{value}", -1


def _map_suits(text: str, smap: dict[str, str], what: str) -> str:
    """Rewrite the suit letter of every card token of KPatience-like deal lines."""
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        head, colon, rest = line.partition(":")
        low = head.strip().lower()
        if not colon or not (low.startswith("play") or low.startswith("deal")):
            out.append(line)
            continue
        toks = []
        for tok in rest.split():
            hidden = tok.startswith("|")
            try:
                name = card_str(parse_card(tok[1:] if hidden else tok))
            except ValueError as exc:
                raise ValueError(f"{what} line {lineno}: {exc}") from None
            if name[-1] not in smap:
                raise ValueError(
                    f"{what} line {lineno}: card {tok!r} has a suit this game does not use "
                    f"(expected {', '.join(sorted(smap))})"
                )
            toks.append(("|" if hidden else "") + name[:-1] + smap[name[-1]])
        out.append(f"{head}: " + " ".join(toks))
    return "\n".join(out) + "\n"


def pysol_deal_from_text(text: str, game_id: int = 11) -> Deal:
    """Read a deal printed with PySolFC's suit letters (as in ``pysolfc-spider-deals.txt``).

    KPatience-style lines (``Play0:`` .. ``Play9:``, ``Deal0:`` .. ``Deal4:``) in PySolFC's
    layout; suits are mapped to ours (clubs -> spades in the 1- and 2-suit games).
    """
    gid = _check_game_id(game_id)
    mapped = _map_suits(text, _SUIT_MAP[gid], "PySolFC deal text")
    return deal_from_text(mapped, pysol_variant(gid))


def pysol_deal_to_text(d: Deal, game_id: int | None = None) -> str:
    """A PySolFC-layout deal as PySolFC would name its cards (suits mapped back)."""
    gid = pysol_game_id(d.variant) if game_id is None else _check_game_id(game_id)
    if d.variant.name != pysol_variant(gid).name:
        raise ValueError(f"deal is of {d.variant.name}, PySolFC game {gid} is in another layout")
    back = {ours: theirs for theirs, ours in _SUIT_MAP[gid].items()}
    return _map_suits(deal_to_text(d, with_variant=False), back, "deal text")


def kpatience_to_text(d: Deal) -> str:
    """A deal in KPatience's text form (``PlayN:``/``DealN:`` lines, no ``variant:`` line)."""
    return deal_to_text(d, with_variant=False)


def kpatience_from_text(text: str, variant: Variant | str | None = None) -> Deal:
    """Read KPatience's deal text; ``variant`` defaults to classic Spider of the text's suits.

    Without ``variant`` the suits decide: spades only -> ``spider-1suit``, spades and hearts ->
    ``spider-2suit``, else ``spider-4suit`` (a ``variant:`` line, as
    :func:`spider_env.core.deals.deal_to_text` writes, is honoured). The text's ``|`` marks, if any,
    must match the variant's face-down cards; errors name the line and the problem.
    """
    if variant is None and not any(
        line.strip().lower().startswith("variant") for line in text.splitlines()
    ):
        suits = _suits_of_text(text)
        variant = (
            "spider-1suit"
            if suits <= {"S"}
            else "spider-2suit"
            if suits <= {"S", "H"}
            else "spider-4suit"
        )
    return deal_from_text(text, variant)


def _suits_of_text(text: str) -> set[str]:
    """Suit letters of the cards in KPatience-like deal lines."""
    found: set[str] = set()
    for lineno, line in enumerate(text.splitlines(), 1):
        head, colon, rest = line.partition(":")
        low = head.strip().lower()
        if colon and (low.startswith("play") or low.startswith("deal")):
            for tok in rest.split():
                try:
                    card = parse_card(tok.lstrip("|"))
                except ValueError as exc:
                    raise ValueError(f"deal text line {lineno}: {exc}") from None
                found.add(card_str(card)[-1])
    return found


__all__ = [
    "PYSOL_GAME_IDS",
    "PYSOL_MAX_GAME",
    "PYSOL_MT_FROM",
    "kpatience_from_text",
    "kpatience_to_text",
    "pysol_deal",
    "pysol_deal_from_text",
    "pysol_deal_to_text",
    "pysol_game_id",
    "pysol_order",
    "pysol_reset_option",
    "pysol_state",
    "pysol_suit_map",
    "pysol_variant",
]
