"""Card ids, ranks, suits and their text names."""

from __future__ import annotations

import pytest

from spider_env.core.cards import (
    RED_SUITS,
    SUIT_SYMBOLS,
    card_id,
    card_str,
    is_red,
    parse_card,
    rank_of,
    suit_of,
)


def test_card_id_layout() -> None:
    assert card_id(0, 1) == 0  # AS
    assert card_id(0, 13) == 12  # KS
    assert card_id(1, 1) == 13  # AH
    assert card_id(2, 10) == 35  # TD
    assert card_id(3, 13) == 51  # KC
    for c in range(52):
        assert card_id(suit_of(c), rank_of(c)) == c
        assert c == suit_of(c) * 13 + rank_of(c) - 1
        assert 1 <= rank_of(c) <= 13 and 0 <= suit_of(c) <= 3


def test_suits_order_and_colours() -> None:
    assert SUIT_SYMBOLS == "♠♥♦♣"
    assert frozenset({1, 2}) == RED_SUITS
    assert [card_str(card_id(s, 1)) for s in range(4)] == ["AS", "AH", "AD", "AC"]
    assert [is_red(card_id(s, 7)) for s in range(4)] == [False, True, True, False]


@pytest.mark.parametrize(
    ("card", "ascii_", "uni"),
    [(0, "AS", "A♠"), (9, "TS", "10♠"), (22, "TH", "10♥"), (38, "KD", "K♦"), (49, "JC", "J♣")],
)
def test_card_str(card: int, ascii_: str, uni: str) -> None:
    assert card_str(card) == ascii_
    assert card_str(card, ascii=True) == ascii_
    assert card_str(card, ascii=False) == uni


def test_parse_every_spelling() -> None:
    for c in range(52):
        assert parse_card(card_str(c)) == c
        assert parse_card(card_str(c, ascii=False)) == c
        assert parse_card(card_str(c).lower()) == c
        assert parse_card(" " + card_str(c) + " ") == c
    assert parse_card("10S") == parse_card("TS") == parse_card("ts") == parse_card("10♠") == 9
    assert parse_card("10s") == 9
    assert parse_card("1S") == 0  # Ace as 1
    assert parse_card("Q♡") == card_id(1, 12)  # white suit symbols too
    assert parse_card("2♢") == card_id(2, 2)
    assert parse_card("3♧") == card_id(3, 3)
    assert parse_card("4♤") == card_id(0, 4)


@pytest.mark.parametrize("bad", ["", "S", "1", "ZS", "AX", "11S", "0S", "TSS", "KING"])
def test_parse_rejects_non_cards(bad: str) -> None:
    with pytest.raises(ValueError, match="not a card"):
        parse_card(bad)


def test_parse_rejects_non_str() -> None:
    with pytest.raises(TypeError):
        parse_card(12)  # type: ignore[arg-type]


@pytest.mark.parametrize(("suit", "rank"), [(-1, 1), (4, 1), (0, 0), (0, 14)])
def test_card_id_range(suit: int, rank: int) -> None:
    with pytest.raises(ValueError):
        card_id(suit, rank)


def test_suited_pair_is_consecutive_ids() -> None:
    # the engine's run test: deeper == shallower + 1 and shallower not a King
    for deeper in range(52):
        for shallower in range(52):
            suited = suit_of(deeper) == suit_of(shallower) and (
                rank_of(deeper) == rank_of(shallower) + 1
            )
            assert suited == (deeper == shallower + 1 and rank_of(shallower) != 13)
