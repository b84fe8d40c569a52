"""The deal generator (SplitMix64 + Fisher-Yates) and the deal text form."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest

import spider_env as se
from spider_env.core.cards import card_str, rank_of, suit_of
from spider_env.core.deals import (
    Deal,
    SplitMix64,
    deal_from_text,
    deal_to_text,
    deck,
    generate_deal,
    layout_deal,
    shuffled_deck,
)
from spider_env.core.state import State

VARIANTS = ("spider-1suit", "spider-2suit", "spider-4suit")

# --- SplitMix64 against published reference values ---------------------------------------------


def test_splitmix64_seed_0_reference_outputs() -> None:
    # First outputs of Vigna's splitmix64.c (= Java's SplittableRandom(0).nextLong()) for state 0,
    # widely quoted as test vectors; recomputed here with the constants of the algorithm.
    r = SplitMix64(0)
    assert [r.next64() for _ in range(4)] == [
        0xE220A8397B1DCDAF,
        0x6E789E6AA1B965F4,
        0x06C45D188009454F,
        0xF88BB8A8724C81EC,
    ]


def test_splitmix64_seed_1234567_reference_outputs() -> None:
    # Rosetta Code "Pseudo-random numbers/Splitmix64": the first five outputs for seed 1234567.
    r = SplitMix64(1234567)
    assert [r.next64() for _ in range(5)] == [
        6457827717110365317,
        3203168211198807973,
        9817491932198370423,
        4593380528125082431,
        16408922859458223821,
    ]


def splitmix64_reference(seed: int, n: int) -> list[int]:
    """An independent transcription of the documented algorithm (test oracle)."""
    m = (1 << 64) - 1
    out = []
    x = seed
    for _ in range(n):
        x = (x + 0x9E3779B97F4A7C15) & m
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
        out.append(z ^ (z >> 31))
    return out


@pytest.mark.parametrize("seed", [1, 42, 2**32 + 7, 2**64 - 1])
def test_splitmix64_matches_the_documented_algorithm(seed: int) -> None:
    r = SplitMix64(seed)
    assert [r.next64() for _ in range(20)] == splitmix64_reference(seed, 20)


def test_splitmix64_wraps_at_2_64() -> None:
    r = SplitMix64(2**64 - 1)
    assert 0 <= r.next64() < 2**64
    assert r._x == (2**64 - 1 + 0x9E3779B97F4A7C15) % 2**64


def test_below_rejects_the_biased_tail() -> None:
    # n = 3 * 2**62: 2**64 % n == 2**62, so draws >= 3 * 2**62 are thrown away.
    n = 3 * 2**62
    first, second = splitmix64_reference(0, 2)
    assert first >= n and second < n  # 0xE220... is in the rejected tail
    assert SplitMix64(0).below(n) == second % n
    r = SplitMix64(0)
    assert r.below(10) == first % 10  # no rejection for small n: limit is 2**64 - 6
    with pytest.raises(ValueError):
        SplitMix64(0).below(0)


@pytest.mark.parametrize("seed", [-1, 2**64])
def test_splitmix64_seed_range(seed: int) -> None:
    with pytest.raises(ValueError, match="seed"):
        SplitMix64(seed)


@pytest.mark.parametrize("seed", [1.0, "1", True, None])
def test_splitmix64_seed_type(seed: object) -> None:
    with pytest.raises(TypeError, match="seed"):
        SplitMix64(seed)  # type: ignore[arg-type]


# --- the shuffle and the layout -------------------------------------------------------------


def fisher_yates_reference(cards: list[int], seed: int) -> list[int]:
    """Independent transcription of the documented shuffle (test oracle)."""
    m = 1 << 64
    x = seed
    out = list(cards)

    def nxt() -> int:
        nonlocal x
        x = (x + 0x9E3779B97F4A7C15) % m
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % m
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % m
        return z ^ (z >> 31)

    for i in range(len(out) - 1, 0, -1):
        n = i + 1
        limit = m - m % n
        while True:
            v = nxt()
            if v < limit:
                break
        j = v % n
        out[i], out[j] = out[j], out[i]
    return out


@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize("number", [0, 5, 99, 2**40 + 3])
def test_shuffle_matches_the_documented_algorithm(name: str, number: int) -> None:
    v = se.get_variant(name)
    assert shuffled_deck(v, number) == fisher_yates_reference(deck(v), number)


def test_unshuffled_deck_order() -> None:
    d4 = deck(se.classic(4))
    assert [card_str(c) for c in d4[:14]] == [
        *(["AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "KS"]),
        "AH",
    ]
    assert [suit_of(d4[13 * i]) for i in range(8)] == [0, 1, 2, 3, 0, 1, 2, 3]
    assert [suit_of(c) for c in deck(se.classic(2))[::13]] == [0, 1, 0, 1, 0, 1, 0, 1]
    assert set(deck(se.classic(1))) == set(range(13))


@pytest.mark.parametrize("name", VARIANTS)
def test_layout_row_by_row_then_piles(name: str) -> None:
    v = se.get_variant(name)
    cards = shuffled_deck(v, 17)
    d = generate_deal(v, 17)
    # row r of the tableau: one card to every column that gets more than r cards
    it = iter(cards)
    expect_cols: list[list[int]] = [[] for _ in range(10)]
    for r in range(6):
        for c in range(10):
            if r < (6 if c < 4 else 5):
                expect_cols[c].append(next(it))
    assert d.columns == tuple(tuple(c) for c in expect_cols)
    assert d.stock == tuple(tuple(cards[54 + 10 * j : 64 + 10 * j]) for j in range(5))
    assert d.columns[0] == (cards[0], cards[10], cards[20], cards[30], cards[40], cards[50])
    assert d.columns[9] == (cards[9], cards[19], cards[29], cards[39], cards[49])
    assert layout_deal(v, cards, 17) == d


@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize("number", [0, 1, 2, 3, 2**64 - 1])
def test_deals_are_whole_decks_with_the_classic_layout(name: str, number: int) -> None:
    v = se.get_variant(name)
    d = generate_deal(name, number)
    assert d.deal_number == number and d.variant == v
    assert [len(c) for c in d.columns] == [6, 6, 6, 6, 5, 5, 5, 5, 5, 5]
    assert [len(p) for p in d.stock] == [10] * 5
    allc = [c for col in d.columns for c in col] + [c for p in d.stock for c in p]
    assert len(allc) == 104
    assert Counter(allc) == Counter(deck(v))
    assert {suit_of(c) for c in allc} == set(range(v.suits))
    s = State.from_deal(d)
    assert s.down == (5, 5, 5, 5, 4, 4, 4, 4, 4, 4)
    assert s.to_text() == se.new_game(name, number).to_text()


def test_same_number_same_positions_across_suit_counts() -> None:
    for n in (0, 8, 31337):
        ranks = {
            name: [rank_of(c) for col in generate_deal(name, n).columns for c in col]
            + [rank_of(c) for p in generate_deal(name, n).stock for c in p]
            for name in VARIANTS
        }
        assert ranks["spider-1suit"] == ranks["spider-2suit"] == ranks["spider-4suit"]


def test_deals_differ_and_repeat() -> None:
    texts = {deal_to_text(generate_deal("spider-4suit", n)) for n in range(50)}
    assert len(texts) == 50
    assert generate_deal("spider-4suit", 7) == generate_deal("spider-4suit", 7)


def test_deal_is_the_same_in_a_fresh_interpreter_with_another_hash_seed() -> None:
    code = (
        "import spider_env as se, sys; "
        "sys.stdout.write(se.deal_to_text(se.generate_deal('spider-2suit', 12345)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
    ).stdout
    assert out == deal_to_text(generate_deal("spider-2suit", 12345))


@pytest.mark.parametrize("number", [-1, 2**64])
def test_deal_number_range(number: int) -> None:
    with pytest.raises(ValueError, match="deal number"):
        generate_deal("spider-4suit", number)


@pytest.mark.parametrize("number", [1.0, "3", True, None])
def test_deal_number_type(number: object) -> None:
    with pytest.raises(TypeError, match="deal number"):
        generate_deal("spider-4suit", number)  # type: ignore[arg-type]


def test_deal_unknown_variant() -> None:
    with pytest.raises(ValueError, match="unknown variant"):
        generate_deal("spider-3suit", 0)


# --- deal text ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize("number", [0, 4, 77])
def test_deal_text_roundtrip(name: str, number: int) -> None:
    d = generate_deal(name, number)
    text = deal_to_text(d)
    back = deal_from_text(text)
    assert back.variant == d.variant
    assert back.columns == d.columns and back.stock == d.stock
    assert back.deal_number is None and back.name == "custom"
    assert d.name == f"{name}#{number}"
    # without the variant line, given by the caller
    bare = deal_to_text(d, with_variant=False)
    assert not bare.startswith("variant")
    assert deal_from_text(bare, name).columns == d.columns
    assert deal_from_text(bare, se.get_variant(name)).stock == d.stock


def test_deal_text_format() -> None:
    text = deal_to_text(generate_deal("spider-4suit", 0))
    lines = text.splitlines()
    assert lines[0] == "variant: spider-4suit"
    assert [ln.split(":")[0] for ln in lines[1:]] == [f"Play{c}" for c in range(10)] + [
        f"Deal{j}" for j in range(5)
    ]
    assert lines[1].count("|") == 5 and lines[5].count("|") == 4
    assert "|" not in "".join(lines[11:])


def kpat_text(d: Deal, marks: bool, tens: str, upper: bool = True) -> str:
    """A deal written the way a user might type it from another program."""

    def show(c: int) -> str:
        s = card_str(c)
        if s[0] == "T":
            s = tens + s[1]
        return s if upper else s.lower()

    lines = []
    for c, col in enumerate(d.columns):
        fd = d.variant.face_down[c] if marks else 0
        toks = ["|" + show(x) for x in col[:fd]] + [show(x) for x in col[fd:]]
        lines.append(f"Play{c}: " + " ".join(toks))
    for j, pile in enumerate(d.stock):
        lines.append(f"Deal{j}: " + " ".join(show(x) for x in pile))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("marks", [True, False])
@pytest.mark.parametrize("tens", ["T", "10"])
@pytest.mark.parametrize("upper", [True, False])
def test_kpatience_style_input(marks: bool, tens: str, upper: bool) -> None:
    d = generate_deal("spider-4suit", 2024)
    text = kpat_text(d, marks, tens, upper)
    got = deal_from_text(text, "spider-4suit")
    assert got.columns == d.columns and got.stock == d.stock


def test_deal_text_with_unicode_suits_comments_and_blank_lines() -> None:
    d = generate_deal("spider-2suit", 3)
    body = deal_to_text(d, with_variant=False)
    body = body.replace("S", "♠").replace("H", "♥").replace("T", "10")
    text = "# typed in from another program\n\n  variant: spider-2suit\n" + body + "\n\n"
    assert "♠" in text and "10" in text
    got = deal_from_text(text)
    assert got.columns == d.columns and got.stock == d.stock


def test_typed_deal_plays() -> None:
    d = generate_deal("spider-1suit", 9)
    s = State.from_deal(deal_from_text(deal_to_text(d)))
    assert s == se.new_game("spider-1suit", 9)
    assert se.legal_actions(s) == se.legal_actions(se.new_game("spider-1suit", 9))


# --- bad deal text --------------------------------------------------------------------------

BASE = deal_to_text(generate_deal("spider-4suit", 0))


def edit(line_prefix: str, new: str | None) -> str:
    out = []
    for ln in BASE.splitlines():
        if ln.startswith(line_prefix):
            if new is not None:
                out.append(new)
        else:
            out.append(ln)
    return "\n".join(out) + "\n"


def line_of(prefix: str) -> int:
    return next(i for i, ln in enumerate(BASE.splitlines(), 1) if ln.startswith(prefix))


def test_bad_deal_text_missing_column() -> None:
    with pytest.raises(ValueError, match=r"Play0\.\.Play9"):
        deal_from_text(edit("Play3:", None))


def test_bad_deal_text_missing_pile() -> None:
    with pytest.raises(ValueError, match=r"Deal0\.\.Deal4"):
        deal_from_text(edit("Deal4:", None))


def test_bad_deal_text_duplicate_line() -> None:
    with pytest.raises(ValueError, match="Play2 given twice"):
        deal_from_text(BASE + BASE.splitlines()[3] + "\n")


def test_bad_deal_text_unknown_line() -> None:
    with pytest.raises(ValueError, match=r"line 2: unknown line 'Column0'"):
        deal_from_text(BASE.replace("Play0:", "Column0:"))
    with pytest.raises(ValueError, match="line 2: expected"):
        deal_from_text(BASE.replace("Play0:", "Play0"))


def test_bad_deal_text_bad_card() -> None:
    n = line_of("Play1:")
    with pytest.raises(ValueError, match=f"line {n}: not a card: 'XQ'"):
        deal_from_text(edit("Play1:", "Play1: |XQ |6S |QS |9S |6S 3S"))


def test_bad_deal_text_wrong_face_down_marks() -> None:
    n = line_of("Play1:")
    line = BASE.splitlines()[n - 1]
    with pytest.raises(ValueError, match=f"line {n}: column 1 starts with 5 face-down"):
        i = line.rindex("|")
        deal_from_text(edit("Play1:", line[:i] + line[i + 1 :]))
    toks = line.split()
    toks[2] = toks[2].lstrip("|")  # face-down on face-up
    with pytest.raises(ValueError, match=f"line {n}: face-down"):
        deal_from_text(edit("Play1:", " ".join(toks)))


def test_bad_deal_text_wrong_column_length() -> None:
    lines = BASE.splitlines()
    n1, n2 = line_of("Play1:") - 1, line_of("Play2:") - 1
    head, moved = lines[n1].rsplit(" ", 1)
    lines[n1] = head.replace("|", "")  # 5 cards, no marks
    lines[n2] = lines[n2] + " " + moved  # 7 cards
    text = "\n".join(lines)
    with pytest.raises(ValueError, match="column 1 must start with 6 cards"):
        deal_from_text(text)


def test_bad_deal_text_wrong_deck() -> None:
    line = BASE.splitlines()[line_of("Deal0:") - 1]
    toks = line.split()
    toks[1] = "KS" if toks[1] != "KS" else "QS"
    with pytest.raises(ValueError, match="not the 104-card deck"):
        deal_from_text(edit("Deal0:", " ".join(toks)))


def test_bad_deal_text_unused_suit() -> None:
    text = deal_to_text(generate_deal("spider-1suit", 0))
    text = text.replace("Deal0: 5S", "Deal0: 5H")
    with pytest.raises(ValueError, match="too many: 5H"):
        deal_from_text(text)


def test_bad_deal_text_variant() -> None:
    with pytest.raises(ValueError, match="names no variant"):
        deal_from_text(deal_to_text(generate_deal("spider-4suit", 0), with_variant=False))
    with pytest.raises(ValueError, match="deal is for spider-4suit, expected spider-2suit"):
        deal_from_text(BASE, "spider-2suit")
    with pytest.raises(ValueError, match="unknown variant"):
        deal_from_text(BASE.replace("spider-4suit", "spider-5suit"))
    with pytest.raises(TypeError):
        deal_from_text(b"Play0: AS")  # type: ignore[arg-type]


def test_deal_dataclass_validates() -> None:
    d = generate_deal("spider-4suit", 0)
    with pytest.raises(ValueError, match="10 columns"):
        Deal(d.variant, d.columns[:9], d.stock)
    with pytest.raises(ValueError, match="5 stock piles"):
        Deal(d.variant, d.columns, d.stock[:4])


def test_deal_text_line_index_needs_ascii_digits() -> None:
    with pytest.raises(ValueError, match="line 2: unknown line 'Play²'"):
        deal_from_text(BASE.replace("Play0:", "Play²:"))


def test_deal_text_crlf() -> None:
    d = generate_deal("spider-4suit", 0)
    got = deal_from_text(BASE.replace("\n", "\r\n"))
    assert got.columns == d.columns and got.stock == d.stock
