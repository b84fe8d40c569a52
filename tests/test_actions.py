"""The fixed action encoding and the Variant dataclass (validation, derived sizes)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from conftest import random_play

import spider_env as se
from spider_env.core.actions import (
    Action,
    check_action_id,
    deal_id,
    deal_ids,
    decode,
    describe,
    discard_id,
    encode,
    move_id,
    move_parts,
    undo_id,
)
from spider_env.core.rules import legal_actions
from spider_env.core.variants import VARIANTS, Variant, classic, get_variant, parse_options

CLASSIC = ("spider-1suit", "spider-2suit", "spider-4suit")

# --- encoding ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CLASSIC)
def test_classic_action_space(name: str) -> None:
    v = get_variant(name)
    assert (v.n_columns, v.max_run, v.n_deal_actions) == (10, 13, 1)
    assert v.n_discard_actions == 0
    assert v.n_move_actions == 1300
    assert v.n_actions == 1301
    assert decode(v, 1300) == Action("deal", pile=0)
    assert describe(v, 1300) == "deal"
    assert v.with_options(undo=True).n_actions == 1302


def test_move_formula() -> None:
    v = classic(4)
    # (src * R + k - 1) * C + dst
    assert encode(v, Action("move", 2, 3, 7)) == (2 * 13 + 2) * 10 + 7 == 287
    assert decode(v, 287) == Action("move", 2, 3, 7)
    assert describe(v, 287) == "move 3 cards 2 -> 7"
    assert describe(v, 0) == "move 1 card 0 -> 0"
    assert decode(v, 1299) == Action("move", 9, 13, 9)
    assert describe(v, 1299) == "move 13 cards 9 -> 9"


@pytest.mark.parametrize(
    "v",
    [
        classic(4),
        classic(4).with_options(undo=True),
        classic(2).with_options(auto_discard=False),
        classic(1).with_options(auto_discard=False, undo=True),
    ],
    ids=["classic", "undo", "discard", "discard+undo"],
)
def test_encode_decode_bijection_on_every_id(v: Variant) -> None:
    seen = set()
    for a in range(v.n_actions):
        m = decode(v, a)
        assert encode(v, m) == a
        seen.add(m)
        assert isinstance(describe(v, a), str)
    assert len(seen) == v.n_actions


@pytest.mark.parametrize(
    "v",
    [
        classic(4),
        classic(1).with_options(auto_discard=False, undo=True),
        get_variant("scorpion"),
        get_variant("spider-tournament-2suit"),
    ],
    ids=["classic", "discard+undo", "scorpion", "chosen-piles"],
)
def test_id_helpers_agree_with_encode_and_decode(v: Variant) -> None:
    for a in range(v.n_move_actions):
        m = decode(v, a)
        assert move_parts(v, a) == (m.src, m.cards, m.dst)
        assert move_id(v, m.src, m.cards, m.dst) == a
    for j in range(v.n_deal_actions):
        assert decode(v, deal_id(v, j)) == Action("deal", pile=j)
    assert list(deal_ids(v)) == [a for a in range(v.n_actions) if decode(v, a).kind == "deal"]
    for c in range(v.n_discard_actions):
        assert decode(v, discard_id(v, c)) == Action("discard", src=c)
    if v.undo:
        assert decode(v, undo_id(v)) == Action("undo")


def test_discard_and_undo_ids_come_last() -> None:
    v = classic(2).with_options(auto_discard=False, undo=True)
    assert v.n_actions == 1300 + 1 + 10 + 1
    assert decode(v, 1301) == Action("discard", src=0)
    assert describe(v, 1305) == "discard run 4"
    assert decode(v, 1311) == Action("undo")
    assert describe(v, 1311) == "undo"
    assert encode(v, Action("undo")) == 1311


@pytest.mark.parametrize("name", CLASSIC)
def test_decoded_legal_actions_encode_back_and_move_suited_runs(name: str) -> None:
    rng = random.Random(7)
    v = get_variant(name)
    for before, _a, _after in random_play(se.new_game(name, 1), rng, 200):
        legal = legal_actions(before)
        moves = [decode(v, a) for a in legal]
        assert [encode(v, m) for m in moves] == legal
        assert [decode(v, a) for a in legal] == moves
        for m in moves:
            if m.kind == "move":
                assert 1 <= m.cards <= before.run_lengths[m.src]
                assert m.src != m.dst


def test_encode_rejects_moves_without_an_id() -> None:
    v = classic(4)
    for bad in (Action("move", 10, 1, 0), Action("move", 0, 14, 1), Action("move", 0, 0, 1)):
        with pytest.raises(ValueError, match="no action id"):
            encode(v, bad)
    with pytest.raises(ValueError, match="no action id"):
        encode(v, Action("deal", pile=1))
    with pytest.raises(ValueError, match="no action id"):
        encode(v, Action("discard", src=0))
    with pytest.raises(ValueError, match="undo is off"):
        encode(v, Action("undo"))
    with pytest.raises(ValueError, match="unknown action kind"):
        encode(v, Action("jump"))


def test_check_action_id() -> None:
    v = classic(4)
    assert check_action_id(v, 5) == 5
    assert check_action_id(v, np.int32(1300)) == 1300
    assert type(check_action_id(v, np.int64(3))) is int
    for bad in (1301, -1):
        with pytest.raises(ValueError, match=r"actions 0\.\.1300"):
            check_action_id(v, bad)
    for bad_t in (1.0, "1", None, True, np.float64(1)):
        with pytest.raises(TypeError, match="action must be an int"):
            check_action_id(v, bad_t)
    with pytest.raises(ValueError):
        decode(v, 1301)


# --- variants ---------------------------------------------------------------------------------


def test_registry() -> None:
    for name in CLASSIC:
        assert name in VARIANTS and get_variant(name).name == name
    assert classic(1).suits == 1 and classic(2).suits == 2 and classic(4).suits == 4
    assert get_variant(classic(2)) is classic(2)
    for v in (classic(1), classic(2), classic(4)):
        assert v.n_cards == 104 and v.suit_sets == 8
        assert v.layout == (6, 6, 6, 6, 5, 5, 5, 5, 5, 5)
        assert v.face_down == (5, 5, 5, 5, 4, 4, 4, 4, 4, 4)
        assert v.stock == (10,) * 5
        assert v.deal_needs_no_empty and v.auto_discard and not v.undo
        assert v.runs_to_win == 8 and v.scoring == "windows"
        assert v.max_column_length == 83  # 5 face down + 6 descending builds of <= 13
    assert classic(4).suit_ids == (0, 1, 2, 3) and classic(2).suit_ids == (0, 1)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_spec_text_gives_the_variant_back(name: str) -> None:
    base = get_variant(name)
    assert base.spec_text() == name
    for v in (base.with_options(undo=True), base.with_options(runs_to_win=1, free_columns=0)):
        assert get_variant(v.spec_text()) == v


def test_registry_errors() -> None:
    with pytest.raises(ValueError, match="unknown variant 'nope'"):
        get_variant("nope")
    with pytest.raises(ValueError, match="unknown variant 'nope'"):
        get_variant("nope undo=true")
    with pytest.raises(ValueError, match="variant option 'undo=maybe'"):
        get_variant("spider-4suit undo=maybe")
    with pytest.raises(ValueError, match="not registered"):
        Variant(name="test-unregistered", suits=1).spec_text()
    with pytest.raises(TypeError):
        get_variant(4)  # type: ignore[arg-type]
    for bad in (3, 0, True):
        with pytest.raises(ValueError, match="suits must be 1, 2 or 4"):
            classic(bad)
    with pytest.raises(ValueError, match="already registered"):
        se.core.variants.register_variant(classic(4).with_options(undo=True))
    assert se.core.variants.register_variant(classic(4)) is classic(4)  # same one again is fine


def test_with_options_and_text() -> None:
    v = classic(2).with_options(undo=True, runs_to_win=4)
    assert v.undo and v.runs_to_win == 4 and v.name == "spider-2suit"
    assert v.options_text() == "runs_to_win=4 undo=true"
    assert parse_options(classic(2), v.options_text()) == v
    assert classic(2).options_text() == ""
    with pytest.raises(ValueError, match="unknown variant option"):
        classic(2).with_options(speed=3)
    for bad in ("undo=yes", "undo", "suits=x", "name=foo", "layout=a,b"):
        with pytest.raises(ValueError, match="variant option"):
            parse_options(classic(2), bad)


def base(**changes: object) -> dict[str, object]:
    fields: dict[str, object] = {"name": "test-variant"}
    fields.update(changes)
    return fields


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"name": ""}, "name must be a non-empty str"),
        ({"suits": 3}, "suits must be 1, 2 or 4"),
        ({"suits": True}, "suits must be an int"),
        ({"suits": 4, "suit_sets": 6}, "multiple of suits"),
        ({"suit_sets": 0}, "multiple of suits"),
        ({"layout": [6, 6, 6, 6, 5, 5, 5, 5, 5, 5]}, "layout must be a tuple"),
        ({"layout": (), "face_down": ()}, "at least one column"),
        ({"face_down": (5, 5, 5, 5, 4, 4, 4, 4, 4)}, "one entry per column"),
        ({"face_down": (6, 5, 5, 5, 4, 4, 4, 4, 4, 4)}, "at least one face-up card"),
        ({"face_down": (-1, 5, 5, 5, 4, 4, 4, 4, 4, 4)}, "non-negative"),
        ({"stock": (11, 10, 10, 10, 9)}, "each stock pile must hold 1..10"),
        ({"stock": (10, 10, 10, 10, 10, 0)}, "each stock pile must hold 1..10"),
        ({"stock": (10, 10, 10, 10)}, "must deal all 104 cards"),
        ({"build": "same-colour"}, "build must be one of"),
        ({"move": "any"}, "move must be one of"),
        ({"empty_accepts": "queen"}, "empty_accepts must be one of"),
        ({"scoring": "vegas"}, "scoring must be one of"),
        ({"runs_to_win": 9}, "runs_to_win must be 1..8"),
        ({"runs_to_win": 0}, "runs_to_win must be 1..8"),
        ({"free_columns": 10}, "free_columns"),
        ({"pile_top_visible": True}, "pile_top_visible needs choose_pile"),
        ({"undo": 1}, "undo must be a bool"),
        ({"auto_discard": "yes"}, "auto_discard must be a bool"),
    ],
)
def test_variant_validation(changes: dict[str, object], reason: str) -> None:
    with pytest.raises(ValueError) as err:
        Variant(**base(**changes))  # type: ignore[arg-type]
    assert reason in str(err.value)
    assert "invalid variant" in str(err.value)


def test_variant_is_frozen_and_hashable() -> None:
    v = classic(4)
    with pytest.raises(AttributeError):
        v.suits = 2  # type: ignore[misc]
    assert hash(v) == hash(classic(4).with_options())
    assert v == classic(4).with_options(description="other words")  # description not compared


def test_variant_derived_sizes_for_a_small_game() -> None:
    # One deck, seven columns (Spiderette-like data): the sizes follow from the fields.
    v = Variant(
        name="test-seven",
        suits=4,
        suit_sets=4,
        layout=(1, 2, 3, 4, 5, 6, 7),
        face_down=(0, 1, 2, 3, 4, 5, 6),
        stock=(7, 7, 7, 3),
        runs_to_win=4,
    )
    assert v.n_columns == 7 and v.n_cards == 52 and v.dealt_columns == 7
    assert v.n_actions == 7 * 13 * 7 + 1
    assert v.max_column_length == min(6 + 13 * (1 + 4), 52)
    d = se.generate_deal(v, 0)
    s = se.State.from_deal(d)
    assert [len(c) for c in s.cols] == [1, 2, 3, 4, 5, 6, 7]
    assert legal_actions(s) == sorted(set(legal_actions(s)))
