"""The games of the rule sources beyond classic Spider (issue 6): data, layouts, special rules.

Their golden starting layouts (``tests/golden/variants/<variant>.txt``) and playthroughs
(``tests/golden/playthrough-<variant>-*.jsonl``) are written by ``tests/golden/regenerate.py``
and checked by ``tests/test_golden.py``.

Hand-built positions use ``position`` from ``tests/conftest.py``: the ``*`` column receives every
card a test does not mention, face down, so each position holds the variant's whole deck.
"""

from __future__ import annotations

import random

import pytest
from conftest import moves_of, mv, position, random_play, run, up

import spider_env as se
from spider_env.core.deals import deal_from_text, deal_to_text, generate_deal
from spider_env.core.rules import IllegalMoveError, apply, is_terminal, legal_actions
from spider_env.core.state import State, run_length
from spider_env.core.variants import VARIANTS, get_variant

NEW_VARIANTS = (
    "spider-relaxed-1suit",
    "spider-relaxed-2suit",
    "spider-relaxed-4suit",
    "spider-culbertson",
    "spiderette-1suit",
    "spiderette-2suit",
    "spiderette-4suit",
    "simple-simon",
    "scorpion",
    "spider-tournament-1suit",
    "spider-tournament-2suit",
    "pysol-spider-1suit",
    "pysol-spider-2suit",
    "pysol-spider-4suit",
)


# --- registry and data ---------------------------------------------------------------------


def test_every_variant_is_registered_and_classic_unchanged() -> None:
    for name in NEW_VARIANTS:
        v = get_variant(name)
        assert v.name == name and VARIANTS[name] is v
        assert v.description
    for suits in (1, 2, 4):
        c = se.classic(suits)
        assert c.name == f"spider-{suits}suit"
        assert (c.n_actions, c.layout, c.stock, c.deal_needs_no_empty) == (
            1301,
            (6, 6, 6, 6, 5, 5, 5, 5, 5, 5),
            (10,) * 5,
            True,
        )


@pytest.mark.parametrize(
    ("name", "cards", "columns", "deals", "runs", "n_actions"),
    [
        ("spider-relaxed-4suit", 104, 10, 5, 8, 1301),
        ("spider-culbertson", 104, 10, 5, 8, 1301 + 10),
        ("spiderette-4suit", 52, 7, 4, 4, 7 * 13 * 7 + 1),
        ("simple-simon", 52, 10, 0, 4, 10 * 13 * 10),
        ("scorpion", 52, 7, 1, 4, 7 * 52 * 7 + 1),
        ("spider-tournament-1suit", 78, 9, 5, 6, 9 * 13 * 9 + 5 + 1),
        ("pysol-spider-4suit", 104, 10, 5, 8, 1301),
    ],
)
def test_sizes(name: str, cards: int, columns: int, deals: int, runs: int, n_actions: int) -> None:
    v = get_variant(name)
    assert (v.n_cards, v.n_columns, len(v.stock), v.runs_to_win, v.n_actions) == (
        cards,
        columns,
        deals,
        runs,
        n_actions,
    )


def test_decks_by_suit_count() -> None:
    def suits(name: str) -> dict[str, int]:
        d = generate_deal(name, 5)
        out: dict[str, int] = {}
        for c in [x for col in d.columns for x in col] + [x for p in d.stock for x in p]:
            letter = se.core.cards.card_str(c)[-1]
            out[letter] = out.get(letter, 0) + 1
        return out

    assert suits("spiderette-1suit") == {"S": 52}
    assert suits("spiderette-2suit") == {"S": 26, "H": 26}
    assert suits("spiderette-4suit") == {"S": 13, "H": 13, "D": 13, "C": 13}
    assert suits("spider-tournament-1suit") == {"S": 78}
    assert suits("spider-tournament-2suit") == {"S": 39, "H": 39}
    assert suits("scorpion") == suits("simple-simon") == suits("spiderette-4suit")


@pytest.mark.parametrize("name", NEW_VARIANTS)
def test_starting_state_matches_layout_and_text_round_trips(name: str) -> None:
    v = get_variant(name)
    d = generate_deal(v, 11)
    assert deal_from_text(deal_to_text(d)) == without_number(d)
    s = State.from_deal(d)
    assert tuple(len(c) for c in s.cols) == v.layout
    assert s.down == v.face_down
    assert tuple(len(p) for p in s.stock) == v.stock
    assert State.from_text(s.to_text()) == s
    assert s.score == (500 if v.scoring == "windows" else 0)


def without_number(d: se.Deal) -> se.Deal:
    return se.Deal(d.variant, d.columns, d.stock, None)


@pytest.mark.parametrize("name", NEW_VARIANTS)
def test_random_play_keeps_every_card_and_the_bound(name: str) -> None:
    v = get_variant(name)
    rng = random.Random(name)
    for number in range(3):
        s = se.new_game(v, number)
        for before, a, after in random_play(s, rng, max_steps=250):
            after.validate()
            assert after.run_lengths == tuple(
                run_length(c, d) for c, d in zip(after.cols, after.down)
            )
            assert max(len(c) for c in after.cols) <= v.max_column_length
            assert a in legal_actions(before)
            if v.n_deal_actions == 0:
                assert before.stock == ()


# --- 1. relaxed Spider ---------------------------------------------------------------------


def test_relaxed_deal_onto_an_empty_column() -> None:
    cols = ["* 9C", "-", "KS", "KH", "KD", "KC", "KS", "KH", "KD", "KC"]
    strict = position(cols, variant="spider-4suit", piles=1)
    relaxed = position(cols, variant="spider-relaxed-4suit", piles=1)
    assert 1300 not in legal_actions(strict)
    assert 1300 in legal_actions(relaxed)
    with pytest.raises(IllegalMoveError, match="column is empty"):
        apply(strict, 1300)
    t = apply(relaxed, 1300)
    assert len(t.cols[1]) == 1 and t.down[1] == 0 and t.run_lengths[1] == 1
    assert t.stock_cards == 0 and t.deals == 5


# --- 2. Culbertson: optional discard ------------------------------------------------------

CULB = "spider-culbertson"
CULB_DISCARD0 = 10 * 13 * 10 + 1  # C*R*C + D: discard column 0


def test_culbertson_complete_run_stays_and_discard_is_an_action() -> None:
    v = get_variant(CULB)
    assert se.describe(v, CULB_DISCARD0 + 3) == "discard run 3"
    assert se.decode(v, CULB_DISCARD0 + 3) == se.Action("discard", src=3)
    assert se.encode(v, se.Action("discard", src=3)) == CULB_DISCARD0 + 3
    s = position(
        ["* " + run("S", 13, 2), "AS", "KH", "KH", "KD", "KD", "KC", "KC", "-", "-"], variant=CULB
    )
    t = apply(s, mv(s, 1, 1, 0))  # the Ace completes K..A of spades in column 0
    assert t.run_lengths[0] == 13 and t.completed == (0, 0, 0, 0)  # not removed
    assert CULB_DISCARD0 in legal_actions(t)
    assert [a for a in legal_actions(t) if a > 1300] == [CULB_DISCARD0]
    # The run may be split (any part moved) or moved whole.
    assert {(k, 0, 8) for k in range(1, 14)} <= moves_of(t)
    whole = apply(t, mv(t, 13, 0, 8))
    assert whole.run_lengths[8] == 13 and CULB_DISCARD0 + 8 in legal_actions(whole)
    split = apply(t, mv(t, 5, 0, 9))
    assert up(split, 0) == run("S", 13, 6) and up(split, 9) == run("S", 5)
    assert not any(a > 1300 for a in legal_actions(split))
    # Discarding removes the run and turns up the card under it.
    d = apply(t, CULB_DISCARD0)
    assert d.completed == (1, 0, 0, 0) and d.reveals == 1
    assert d.down[0] == len(d.cols[0]) - 1
    assert (d.moves, d.deals) == (t.moves, t.deals)  # a discard is not a move
    with pytest.raises(IllegalMoveError, match=r"complete King\.\.Ace run"):
        apply(s, CULB_DISCARD0 + 2)


def test_culbertson_deal_covers_a_run_that_can_be_discarded_later() -> None:
    s = position(
        ["* " + run("H", 13), "QS", "KD", "KD", "KC", "KC", "KS", "JS", "QH", "JD"],
        variant=CULB,
        piles=1,
    )
    assert s.run_lengths[0] == 13
    t = apply(s, 1300)  # deal on top of the complete run
    assert t.run_lengths[0] == 1 and CULB_DISCARD0 not in legal_actions(t)


def test_culbertson_win_needs_the_discards() -> None:
    s = position(
        ["-", run("C", 13), "-", "-", "-", "-", "-", "-", "-", "-"],
        variant=CULB,
        completed=(2, 2, 2, 1),
        deals=5,
    )
    assert not s.won and not is_terminal(s)
    w = apply(s, CULB_DISCARD0 + 1)
    assert w.won and is_terminal(w) and w.completed == (2, 2, 2, 2)


# --- 3. Spiderette ------------------------------------------------------------------------


def test_spiderette_layout_and_short_last_deal() -> None:
    v = get_variant("spiderette-4suit")
    assert v.layout == (1, 2, 3, 4, 5, 6, 7) and v.face_down == (0, 1, 2, 3, 4, 5, 6)
    assert v.stock == (7, 7, 7, 3)
    s = position(["* 9C", "KS", "KH", "KD", "QC", "5H", "7S"], variant=v, piles=1, deals=3)
    assert s.stock[:3] == ((), (), ()) and len(s.stock[3]) == 3
    before = s.cols
    t = apply(s, 7 * 13 * 7)
    assert [len(t.cols[c]) - len(before[c]) for c in range(7)] == [1, 1, 1, 0, 0, 0, 0]
    assert t.cols[3:] == before[3:] and t.stock_cards == 0 and t.deals_left == 0
    assert t.cols[0][-1] == s.stock[3][0] and t.cols[2][-1] == s.stock[3][2]
    # No deal while a column is empty, even the short one.
    e = position(["* 9C", "-", "KH", "KD", "QC", "5H", "7S"], variant=v, piles=1, deals=3)
    assert 7 * 13 * 7 not in legal_actions(e)


def test_spiderette_wins_with_four_runs() -> None:
    s = position(
        ["-", run("C", 13, 2), "AC", "-", "-", "-", "-"],
        variant="spiderette-4suit",
        completed=(1, 1, 1, 0),
        deals=4,
    )
    w = apply(s, mv(s, 1, 2, 1))
    assert w.won and w.completed == (1, 1, 1, 1) and is_terminal(w)


# --- 4. Simple Simon ----------------------------------------------------------------------


def test_simple_simon_all_face_up_no_deal() -> None:
    v = get_variant("simple-simon")
    s = se.new_game(v, 4)
    assert s.down == (0,) * 10 and s.stock == () and s.deals_left == 0
    assert v.n_deal_actions == 0 and v.n_actions == 1300
    assert all(se.decode(v, a).kind == "move" for a in legal_actions(s))
    with pytest.raises(ValueError, match="no action id"):
        se.encode(v, se.Action("deal"))


def test_simple_simon_moves_are_spider_moves() -> None:
    # 9C 8H 7H: the suited run 8H 7H moves as one onto any 9; the mixed 9C 8H 7H does not.
    cols = ["9C 8H 7H", "9S", "TD", "-", "KS", "KH", "KD", "QS", "QH", "QD"]
    rest = "JS JH JD JC TS TH TC 9H 9D 8S 8D 8C 7S 7D 7C 6S 6H 6D 6C 5S 5H 5D 5C 4S 4H 4D 4C"
    rest += " 3S 3H 3D 3C 2S 2H 2D 2C AS AH AD AC KC QC"
    cols[3] = rest
    s = position(cols, variant="simple-simon")
    assert s.down == (0,) * 10
    m = moves_of(s)
    assert (2, 0, 1) in m and (3, 0, 2) not in m and (1, 1, 2) in m


def test_simple_simon_wins_with_four_runs() -> None:
    s = position(
        ["-", run("D", 13, 2), "AD", "-", "-", "-", "-", "-", "-", "-"],
        variant="simple-simon",
        completed=(1, 1, 0, 1),
    )
    w = apply(s, mv(s, 1, 2, 1))
    assert w.won and is_terminal(w)


# --- 5. Scorpion --------------------------------------------------------------------------

SC = "scorpion"
SC_DEAL = 7 * 52 * 7


def test_scorpion_group_moves_same_suit_only() -> None:
    v = get_variant(SC)
    assert v.max_run == 52 and v.n_actions == SC_DEAL + 1
    # Column 0: 6H 2C 9D (face up) on face-down cards. Any face-up card moves with the cards on
    # top of it, but only onto the next higher card of its own suit.
    s = position(["* 6H 2C 9D", "7H", "7S", "3C", "TD", "KS", "-"], variant=SC, piles=1)
    m = moves_of(s)
    assert (3, 0, 1) in m  # 6H (with 2C 9D) onto 7H
    assert (3, 0, 2) not in m  # not onto 7S: same suit only
    assert (2, 0, 3) in m  # 2C 9D onto 3C
    assert (1, 0, 4) in m  # 9D onto TD
    assert (1, 5, 6) in m  # a King into the empty column
    assert not any(dst == 6 and k < 4 and src == 0 for k, src, dst in m)  # not a 6H/2C/9D
    t = apply(s, mv(s, 3, 0, 1))
    assert up(t, 1) == "7H 6H 2C 9D"
    assert t.run_lengths[1] == 1 and t.reveals == 1  # the card under 6H turned up
    assert t.down[0] == len(t.cols[0]) - 1


def test_scorpion_group_never_moves_onto_its_own_column() -> None:
    # 5C 9D 6C: the group from 5C fits the 6C, which is its own column's exposed card.
    s = position(["* 5C 9D 6C", "7H", "7S", "3C", "TD", "KS", "-"], variant=SC, piles=1)
    assert not any(src == dst for _, src, dst in moves_of(s))
    assert moves_of(s) == {(2, 0, 4), (1, 5, 6)}
    with pytest.raises(IllegalMoveError, match="same column"):
        apply(s, mv(s, 3, 0, 0))


def test_scorpion_only_kings_into_empty_columns() -> None:
    s = position(["* 5S", "KH QH 4D", "QC", "3C", "-", "JD", "8S"], variant=SC, piles=1)
    m = moves_of(s)
    assert (3, 1, 4) in m  # the King with its cards
    assert {(k, src, 4) for k, src, dst in m if dst == 4} == {(3, 1, 4)}
    with pytest.raises(IllegalMoveError, match="only a King"):
        apply(s, mv(s, 1, 0, 4))


def test_scorpion_reserve_deal_onto_first_three_columns_even_with_an_empty_one() -> None:
    s = position(["* 5S", "-", "QC", "3C", "KD", "JD", "8S"], variant=SC, piles=1)
    assert SC_DEAL in legal_actions(s)
    t = apply(s, SC_DEAL)
    assert [len(t.cols[c]) - len(s.cols[c]) for c in range(7)] == [1, 1, 1, 0, 0, 0, 0]
    assert t.cols[1] == (s.stock[0][1],) and t.stock_cards == 0
    assert SC_DEAL not in legal_actions(t)


def test_scorpion_group_move_uncovers_a_complete_run() -> None:
    # Column 1 holds K..A of clubs under a 5H; moving the 5H away removes the run.
    s = position(["* 6H", run("C", 13) + " 5H", "KS", "KD", "-", "JD", "8S"], variant=SC, piles=1)
    assert s.run_lengths[1] == 1
    t = apply(s, mv(s, 1, 1, 0))
    assert t.completed == (0, 0, 0, 1) and t.cols[1] == ()
    # A group from inside the run cannot go to the empty column: 2C is not a King.
    assert (2, 1, 4) not in moves_of(s)


def test_scorpion_removing_a_run_also_removes_a_complete_run_it_uncovers() -> None:
    # Column 1: K..A of clubs buried under K..2 of hearts; the AH completes the hearts, whose
    # removal uncovers the clubs run at the column's end: both go at once.
    s = position(
        ["* 6S", run("C", 13) + " " + run("H", 13, 2), "KS", "AH", "-", "JD", "8S"],
        variant=SC,
        piles=1,
    )
    t = apply(s, mv(s, 1, 3, 1))
    assert t.completed == (0, 1, 0, 1)
    assert t.cols[1] == () and t.cols[3] == ()
    t.validate()


# --- 6. the 78-card tournament game -------------------------------------------------------

T1 = "spider-tournament-1suit"
T2 = "spider-tournament-2suit"
T_DEAL = 9 * 13 * 9  # deal pile j = T_DEAL + j
T_UNDO = T_DEAL + 5


def test_tournament_layout() -> None:
    for name in (T1, T2):
        v = get_variant(name)
        s = se.new_game(v, 3)
        assert tuple(len(c) for c in s.cols) == (5, 5, 5, 5, 5, 5, 4, 4, 0)
        assert s.down == (4, 4, 4, 4, 4, 4, 3, 3, 0)
        assert tuple(len(p) for p in s.stock) == (8,) * 5
        assert v.free_columns == 1 and v.dealt_columns == 8
        assert v.choose_pile and v.pile_top_visible and v.undo
        assert v.runs_to_win == 6 and v.n_cards == 78
        assert se.describe(v, T_DEAL + 2) == "deal pile 2"
        assert se.describe(v, T_UNDO) == "undo"


def test_tournament_pile_choice_and_free_column() -> None:
    s = se.new_game(T2, 3)
    legal = legal_actions(s)
    assert [T_DEAL + j for j in range(5)] == [a for a in legal if a >= T_DEAL]
    t = apply(s, T_DEAL + 3)
    pile = s.stock[3]
    assert t.stock[3] == () and t.stock[:3] == s.stock[:3] and t.stock[4] == s.stock[4]
    assert [t.cols[c][-1] for c in range(8)] == list(pile)
    assert t.cols[0][-1] == pile[0]  # the pile's visible card goes to the first column
    assert t.cols[8] == () and t.deals_left == 4
    assert T_DEAL + 3 not in legal_actions(t)
    # The free column takes any card at any time, and a deal is legal while it is empty.
    assert all((1, c, 8) in moves_of(s) for c in range(8))
    f = apply(s, mv(s, 1, 0, 8))
    assert f.free_used and not s.free_used
    assert T_DEAL in legal_actions(f)
    # Once used, always used (for the bonus): emptying the free column again changes nothing.
    p = position(["* 9S", "|5S 8S", "KS", "KS", "KS", "KS", "KS", "KS", "-"], variant=T1, piles=5)
    used = apply(p, mv(p, 1, 1, 8))
    back = apply(used, mv(used, 1, 8, 0))
    assert used.free_used and back.cols[8] == () and back.free_used
    # The free column is never dealt to, even when it holds cards.
    h = apply(f, T_DEAL)
    assert h.cols[8] == f.cols[8]


def test_tournament_deal_with_an_empty_column_is_legal() -> None:
    cols = ["* 9S", "-", "KS", "KS", "KS", "KS", "KS", "KS", "-"]
    s = position(cols, variant=T1, piles=2)
    assert T_DEAL + 3 in legal_actions(s) and T_DEAL + 4 in legal_actions(s)
    assert T_DEAL not in legal_actions(s)  # pile 0 is dealt already
    with pytest.raises(IllegalMoveError, match="dealt already"):
        apply(s, T_DEAL)


def test_tournament_scoring() -> None:
    v = get_variant(T1)
    assert v.scoring == "tournament"
    s = position(
        ["* " + run("S", 13, 2), "AS", "-", "-", "-", "-", "-", "-", "-"],
        variant=T1,
        completed=(4, 0, 0, 0),
        reveals=7,
    )
    assert s.score == 25 * 7 + 100 * 4
    w = apply(s, mv(s, 1, 1, 0))
    assert w.completed == (5, 0, 0, 0) and w.reveals == 8
    assert w.score == 25 * 8 + 100 * 5  # the removal turned up a card: +25
    s6 = position(
        ["-", run("S", 13, 2), "AS", "-", "-", "-", "-", "-", "-"],
        variant=T1,
        completed=(5, 0, 0, 0),
        deals=5,
    )
    won = apply(s6, mv(s6, 1, 2, 1))
    assert won.won and won.score == 600 + 100  # win without the free column: +100
    used = s6.replace(free_used=True)
    assert apply(used, mv(used, 1, 2, 1)).score == 600  # no bonus: the free column was used
    # No clock: the time bonus counts as 0; the score has no move penalty.
    assert apply(s, mv(s, 1, 0, 2)).score == s.score


def test_tournament_undo_only_after_an_action_that_revealed_nothing() -> None:
    s = position(
        ["* 9S", "|5S 8S 3S", "KS", "KS", "KS", "KS", "KS", "KS", "-"], variant=T1, piles=5
    )
    assert T_UNDO not in legal_actions(s)  # nothing to undo at the start
    t = apply(s, mv(s, 1, 1, 8))  # 3S to the free column reveals nothing: undoable
    assert T_UNDO in legal_actions(t)
    back = apply(t, T_UNDO)
    assert back.key() == s.key() and back.undos == 1 and back.moves == 1
    assert back.free_used  # counters never go back
    assert T_UNDO not in legal_actions(back)
    r = apply(t, mv(t, 1, 1, 0))  # 8S onto 9S turns the 5S up: no undo
    assert r.reveals == 1 and up(r, 1) == "5S" and T_UNDO not in legal_actions(r)
    with pytest.raises(IllegalMoveError, match="nothing to undo"):
        apply(r, T_UNDO)
    d = apply(t, T_DEAL + 1)  # a draw pile shows new cards: no undo
    assert T_UNDO not in legal_actions(d)


# --- 7. undo as an option for any variant -------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["spider-relaxed-2suit", "spiderette-1suit", "scorpion", "simple-simon", "spider-culbertson"],
)
def test_undo_option_on_any_variant(name: str) -> None:
    base = get_variant(name)
    v = base.with_options(undo=True)
    assert v.n_actions == base.n_actions + 1 and v.undo
    undo = v.n_actions - 1
    assert se.describe(v, undo) == "undo"
    s = se.new_game(v, 2)
    assert undo not in legal_actions(s)
    rng = random.Random(7)
    seen_undo = False
    for before, a, after in random_play(s, rng, max_steps=200):
        if a == undo:
            seen_undo = True
            assert after.key() == before.prev.key()  # type: ignore[union-attr]
            assert after.undos == before.undos + 1 and after.moves == before.moves
        else:
            revealed = after.reveals > before.reveals or after.deals > before.deals
            assert (undo in legal_actions(after)) == (not revealed and not after.won)
    assert seen_undo
    t = State.from_text(s.to_text())
    assert t.variant == v


def test_undo_windows_score_subtracts_one_per_undo() -> None:
    v = get_variant("spider-relaxed-4suit").with_options(undo=True)
    s = position(
        ["* 9C 8H", "9S", "KS", "KS", "KH", "KH", "KD", "KD", "KC", "KC"], variant=v, piles=1
    )
    t = apply(s, mv(s, 1, 0, 1))  # 8H onto 9S: the 9C stays up, nothing revealed
    b = apply(t, v.n_actions - 1)
    assert (t.score, b.score) == (s.score - 1, s.score - 2)  # -1 for the move, -1 for the undo
    assert "undo 1:" in t.to_text() and State.from_text(t.to_text()) == t
    assert "undo 1:" not in b.to_text()


def test_undo_is_not_legal_after_the_game_is_won() -> None:
    v = get_variant("simple-simon").with_options(undo=True)
    s = position(
        ["-", run("D", 13, 2), "AD", "-", "-", "-", "-", "-", "-", "-"],
        variant=v,
        completed=(1, 1, 0, 1),
    )
    w = apply(s, mv(s, 1, 2, 1))
    assert w.won and legal_actions(w) == []


# --- helpers -------------------------------------------------------------------------------


def test_variant_options_round_trip_through_state_text() -> None:
    v = get_variant("spiderette-2suit").with_options(undo=True)
    s = se.new_game(v, 9)
    assert "options: undo=true" in s.to_text()
    assert State.from_text(s.to_text()).variant == v
