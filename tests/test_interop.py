"""Interop (issue 6, item 9): PySolFC game numbers, KPatience deal text.

``tests/golden/variants/pysolfc-spider-deals.txt`` holds 27 deals printed by the code of PySolFC
(https://github.com/shlomif/PySolFC): game ids 11, 269, 270; game numbers 1 .. 123456789
including the 32000 quirk. Every one must be reproduced.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import spider_env as se
from spider_env.core.cards import card_str
from spider_env.core.deals import deal_to_text, generate_deal
from spider_env.core.interop import (
    PYSOL_GAME_IDS,
    kpatience_from_text,
    kpatience_to_text,
    pysol_deal,
    pysol_deal_from_text,
    pysol_deal_to_text,
    pysol_game_id,
    pysol_order,
    pysol_state,
    pysol_suit_map,
    pysol_variant,
)
from spider_env.core.rules import legal_actions
from spider_env.core.state import State

DEALS_FILE = Path(__file__).parent / "golden" / "variants" / "pysolfc-spider-deals.txt"
_BLOCK = re.compile(
    r"^\[PySolFC game id (\d+) \(.*\), game number (\d+)\]\n((?:(?:Play|Deal)\d+:.*\n?)+)", re.M
)


def pysolfc_blocks() -> list[tuple[int, int, str]]:
    text = DEALS_FILE.read_text(encoding="utf-8")
    return [(int(g), int(n), body) for g, n, body in _BLOCK.findall(text)]


BLOCKS = pysolfc_blocks()


def test_the_file_holds_27_deals_of_the_three_games() -> None:
    assert len(BLOCKS) == 27
    assert {g for g, _, _ in BLOCKS} == {11, 269, 270}
    assert {n for _, n, _ in BLOCKS} >= {1, 31999, 32000, 32001, 123456789}


@pytest.mark.parametrize(
    ("game_id", "number", "body"), BLOCKS, ids=[f"{g}-{n}" for g, n, _ in BLOCKS]
)
def test_every_pysolfc_deal_is_reproduced(game_id: int, number: int, body: str) -> None:
    d = pysol_deal(number, game_id)
    assert d.variant is pysol_variant(game_id)
    # Exactly PySolFC's text (PySolFC's suit letters), line by line ...
    assert pysol_deal_to_text(d) == body.rstrip("\n") + "\n"
    # ... and the same deal when the text is read (suits mapped to ours).
    assert pysol_deal_from_text(body, game_id) == d


def test_pysol_layout_and_suit_mapping() -> None:
    v = pysol_variant(11)
    assert v.name == "pysol-spider-4suit"
    assert v.layout == (6, 5, 5, 6, 5, 5, 6, 5, 5, 6)
    assert v.face_down == (5, 4, 4, 5, 4, 4, 5, 4, 4, 5)
    assert (v.stock, v.n_actions, v.deal_needs_no_empty) == ((10,) * 5, 1301, True)
    assert pysol_variant(269).suits == 1 and pysol_variant(270).suits == 2
    assert pysol_suit_map(269) == {"C": "S"}
    assert pysol_suit_map(270) == {"C": "S", "H": "H"}
    assert pysol_suit_map(11) == {s: s for s in "CSHD"}
    assert {pysol_game_id(f"pysol-spider-{s}suit") for s in (1, 2, 4)} == {11, 269, 270}
    assert pysol_game_id("spider-2suit") == 270
    assert PYSOL_GAME_IDS == {11: 4, 269: 1, 270: 2}

    def suits(d: se.Deal) -> set[str]:
        cards = [c for col in d.columns for c in col] + [c for p in d.stock for c in p]
        return {card_str(c)[-1] for c in cards}

    assert suits(pysol_deal(5, 269)) == {"S"}
    assert suits(pysol_deal(5, 270)) == {"S", "H"}
    assert suits(pysol_deal(5, 11)) == {"S", "H", "D", "C"}


@pytest.mark.parametrize(
    "numbers",
    [range(1, 200), range(31_990, 32_010), [10**6, 123_456_789, 10**20 - 1]],
    ids=["small", "around-32000", "large"],
)
def test_shuffle_matches_pysol_cards(numbers: range | list[int]) -> None:
    # The generator is written out in interop; pysol-cards (when installed) is a second
    # oracle next to the 27 deals PySolFC printed. PySolFC itself uses the Mersenne Twister
    # from 32000 on (pysol-cards' shuffle() only above 32000).
    pytest.importorskip("pysol_cards")
    from pysol_cards.cards import createCards
    from pysol_cards.random import MTRandom, shuffle
    from pysol_cards.random_base import RandomBase

    for n in numbers:
        if n < 32_000:
            order = shuffle(createCards(2), n, RandomBase.DEALS_PYSOLFC)
        else:
            rng = MTRandom()
            rng.setSeed(n)
            order = rng.shuffle(createCards(2))
        assert pysol_order(n) == [(c.rank, c.suit) for c in reversed(order)], n


def test_pysol_deal_plays_in_the_engine() -> None:
    s = State.from_deal(pysol_deal(617, 270))
    assert s.variant.name == "pysol-spider-2suit"
    assert legal_actions(s)
    assert State.from_text(s.to_text()) == s


@pytest.mark.parametrize("bad", [0, -1, 10**20])
def test_pysol_game_number_out_of_range(bad: int) -> None:
    with pytest.raises(ValueError, match="PySolFC game numbers"):
        pysol_deal(bad)


@pytest.mark.parametrize("bad", ["1", 1.0, True, None])
def test_pysol_game_number_must_be_int(bad: object) -> None:
    with pytest.raises(TypeError, match="game number must be an int"):
        pysol_deal(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [12, 0, "11", True])
def test_pysol_game_id_checked(bad: object) -> None:
    with pytest.raises(ValueError, match="PySolFC game id must be one of"):
        pysol_deal(1, bad)  # type: ignore[arg-type]


def test_pysol_text_with_a_suit_the_game_does_not_use() -> None:
    (body,) = [b for g, n, b in BLOCKS if (g, n) == (269, 1)]
    bad = body.splitlines()
    bad[2] = bad[2].replace("C", "D", 1)
    with pytest.raises(ValueError, match=r"line 3: card .* has a suit this game does not use"):
        pysol_deal_from_text("\n".join(bad), 269)


# --- KPatience ---------------------------------------------------------------------------


@pytest.mark.parametrize("suits", [1, 2, 4])
def test_kpatience_round_trip(suits: int) -> None:
    d = generate_deal(se.classic(suits), 42)
    text = kpatience_to_text(d)
    lines = text.splitlines()
    assert [ln.split(":")[0] for ln in lines] == [f"Play{c}" for c in range(10)] + [
        f"Deal{j}" for j in range(5)
    ]
    assert lines[0].count("|") == 5 and lines[9].count("|") == 4
    assert all(len(tok) == 2 for ln in lines for tok in ln.split(":")[1].replace("|", "").split())
    back = kpatience_from_text(text)  # suits guessed from the cards
    assert back.variant is se.classic(suits)
    assert back.columns == d.columns and back.stock == d.stock
    assert kpatience_from_text(text, se.classic(suits)) == back
    assert kpatience_to_text(back) == text
    assert deal_to_text(d).endswith(text)


def test_kpatience_exact_text() -> None:
    text = (
        "Play0: |3D |AS |KD |7D |3S 8H\n"
        "Play1: |5H |8C |2H |9S |TH QC\n"
        "Play2: |JC |6C |TD |8H |AH 3S\n"
        "Play3: |KH |6H |8S |JH |9C JC\n"
        "Play4: |5S |TC |AC |4D 4H\n"
        "Play5: |5H |8D |7C |2D 7H\n"
        "Play6: |KC |4C |2H |6H QS\n"
        "Play7: |KC |JS |AD |TH 7D\n"
        "Play8: |8D |QC |9H |8C 7C\n"
        "Play9: |JD |4H |8S |2S 4S\n"
        "Deal0: QH 9S 2S QH 3C AS 4S KS 6D TD\n"
        "Deal1: 9C 9D JS 4D 5C 6C AD JH 6S 3C\n"
        "Deal2: JD TC AH QS 2C 9H 3H 7S 5C 9D\n"
        "Deal3: KS 5D TS QD 7S 6D TS KD QD 7H\n"
        "Deal4: 3D 2C KH 5D 3H 2D 4C 5S 6S AC\n"
    )
    # The same 104 cards as PySolFC's game 1, typed into KPatience's classic layout.
    d = kpatience_from_text(text)
    assert d.variant.name == "spider-4suit" and d.deal_number is None
    assert card_str(d.columns[0][0]) == "3D" and card_str(d.columns[9][-1]) == "4S"
    assert card_str(d.stock[0][0]) == "QH"  # Deal0 is dealt first, its first card to column 0
    assert kpatience_to_text(d) == text
    s = State.from_deal(d)
    assert s.down == (5, 5, 5, 5, 4, 4, 4, 4, 4, 4)


def test_kpatience_errors_name_the_line() -> None:
    text = kpatience_to_text(generate_deal("spider-4suit", 3))
    lines = text.splitlines()
    bad_card = "\n".join([*lines[:4], lines[4].replace(lines[4].split()[1], "ZZ"), *lines[5:]])
    with pytest.raises(ValueError, match="line 5"):
        kpatience_from_text(bad_card)
    with pytest.raises(ValueError, match=r"Play0\.\.Play9"):
        kpatience_from_text("\n".join(lines[1:]), "spider-4suit")
    marks = "\n".join([lines[0].replace("|", "", 1), *lines[1:]])
    with pytest.raises(ValueError, match="face-down"):
        kpatience_from_text(marks, "spider-4suit")
    with pytest.raises(ValueError, match="deck"):
        kpatience_from_text(text, "spider-1suit")


def test_pysol_state_in_other_variants_with_spider_table() -> None:
    d = pysol_deal(11982, 11)
    for name in ("pysol-spider-4suit", "spider-4suit", "spider-relaxed-4suit", "spider-culbertson"):
        s = pysol_state(11982, name)
        assert s.variant is se.get_variant(name)
        assert s.cols == d.columns and s.stock == d.stock
        assert s.down == (5, 4, 4, 5, 4, 4, 5, 4, 4, 5)
        assert State.from_text(s.to_text()) == s
    undo = se.classic(1).with_options(undo=True)
    assert pysol_state(5, undo).variant == undo
    assert pysol_state(5, undo).cols == pysol_deal(5, 269).columns
    with pytest.raises(ValueError, match="Spider's table"):
        pysol_state(1, "spider-tournament-2suit")
    with pytest.raises(ValueError, match="Spider's table"):
        pysol_state(1, "scorpion")
