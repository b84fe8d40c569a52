"""Card codes, ranks, suits and their text names.

A card is a small int ``card_id = suit * 13 + rank - 1`` with suits in the order spades (0),
hearts (1), diamonds (2), clubs (3) and ranks 1 (Ace) .. 13 (King). Two cards are a suited
descending pair (the deeper one exactly one rank higher, same suit) exactly when their ids are
consecutive, ``deeper == shallower + 1`` and the shallower card is not a King; the engine relies
on that.
"""

from __future__ import annotations

SUIT_LETTERS = "SHDC"
SUIT_SYMBOLS = "♠♥♦♣"
RANK_LETTERS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K")
RANK_WORDS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
N_SUITS = 4
N_RANKS = 13
N_CARD_IDS = N_SUITS * N_RANKS  # 52 distinct card ids; a deck may hold several copies of each
KING = N_RANKS - 1  # card % N_RANKS of a King (0 is an Ace): nothing suited goes on a King's id - 1
RED_SUITS = frozenset({1, 2})  # hearts, diamonds


def card_id(suit: int, rank: int) -> int:
    """The id of the card of ``suit`` (0..3) and ``rank`` (1..13)."""
    if not 0 <= suit < N_SUITS:
        raise ValueError(f"suit must be 0..3, got {suit!r}")
    if not 1 <= rank <= N_RANKS:
        raise ValueError(f"rank must be 1..13, got {rank!r}")
    return suit * N_RANKS + rank - 1


def rank_of(card: int) -> int:
    """Rank 1 (Ace) .. 13 (King)."""
    return card % N_RANKS + 1


def suit_of(card: int) -> int:
    """Suit index 0..3 (spades, hearts, diamonds, clubs)."""
    return card // N_RANKS


def is_red(card: int) -> bool:
    """True for hearts and diamonds (:data:`RED_SUITS`)."""
    return card // N_RANKS in RED_SUITS


def card_str(card: int, ascii: bool = True) -> str:
    """The card's text, the one spelling of cards everywhere: ``"TS"`` (``ascii=True``, the
    form of deal and state texts) or ``"10♠"`` (``ascii=False``, unicode suit symbols)."""
    r, s = card % N_RANKS, card // N_RANKS
    if ascii:
        return RANK_LETTERS[r] + SUIT_LETTERS[s]
    return RANK_WORDS[r] + SUIT_SYMBOLS[s]


_RANK_PARSE = {name: i + 1 for i, name in enumerate(RANK_LETTERS)}
_RANK_PARSE.update({name: i + 1 for i, name in enumerate(RANK_WORDS)})
_RANK_PARSE.update({"1": 1})
_SUIT_PARSE = {ch: i for i, ch in enumerate(SUIT_LETTERS)}
_SUIT_PARSE.update({ch: i for i, ch in enumerate(SUIT_SYMBOLS)})
_SUIT_PARSE.update({"♤": 0, "♡": 1, "♢": 2, "♧": 3})


def parse_card(text: str) -> int:
    """Parse ``"TS"``, ``"10s"``, ``"K♥"``, ``"ah"`` ... into a card id.

    Raises ``ValueError`` naming the text when it is not a card.
    """
    if not isinstance(text, str):
        raise TypeError(f"card text must be a str, got {type(text).__name__}")
    t = text.strip().upper()
    if len(t) < 2:
        raise ValueError(f"not a card: {text!r} (expected rank then suit, e.g. 'TS' or '10♠')")
    rank = _RANK_PARSE.get(t[:-1])
    suit = _SUIT_PARSE.get(t[-1])
    if rank is None or suit is None:
        raise ValueError(f"not a card: {text!r} (ranks A 2-9 T/10 J Q K, suits S H D C or ♠♥♦♣)")
    return suit * N_RANKS + rank - 1
