"""Hand-built positions, one or more per rule of classic Spider (issue 2).

Columns are numbered 0..9; ``position`` (tests/conftest.py) fills the cards a test does not
mention into the ``*`` column, face down, so every position holds the full 104-card deck.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from conftest import moves_of, mv, position, run, up

import spider_env as se
from spider_env.core.rules import (
    IllegalMoveError,
    apply,
    explain_illegal,
    is_terminal,
    legal_actions,
)
from spider_env.core.state import run_length

DEAL = 1300  # classic: C*R*C = 10*13*10
QUIET = ["KS", "KS", "KH", "KH", "KD", "KD", "KC", "KC"]  # exposed Kings take nothing but Queens


def kings(*first: str) -> list[str]:
    """``first`` columns as given, the rest of the ten filled with lone Kings (then Aces) that
    the given columns do not already use up (the 4-suit deck has two of each card)."""
    used = Counter(t.lstrip("|") for col in first for t in col.split())
    out = list(first)
    for card in QUIET + ["AS", "AS", "AH", "AH", "AD", "AD", "AC", "AC"]:
        if len(out) == 10:
            break
        if used[card] < 2:
            used[card] += 1
            out.append(card)
    return out


# --- moves -------------------------------------------------------------------------------


def test_single_card_moves_ignore_suit() -> None:
    s = position(kings("* 7H", "8S", "8C", "8H", "9D"))
    assert moves_of(s) == {
        (1, 0, 1),
        (1, 0, 2),
        (1, 0, 3),  # 7H on any 8
        (1, 1, 4),
        (1, 2, 4),
        (1, 3, 4),  # any 8 on the 9D
    }
    assert DEAL not in legal_actions(s)  # stock is empty
    t = apply(s, mv(s, 1, 0, 2))
    assert up(t, 2) == "8C 7H"
    assert t.run_lengths[2] == 1  # 7H on 8C is a build, not a suited run


def test_suited_run_moves_as_one_and_partial_runs() -> None:
    # Column 0 ends 9C 8H 7H 6H: its suited run is 8H 7H 6H (3 cards), 9C breaks the suit.
    s = position(kings("* 9C 8H 7H 6H", "9S", "8D", "7C", "TD"))
    assert s.run_lengths[0] == 3
    assert moves_of(s) == {
        (3, 0, 1),  # 8H 7H 6H onto 9S
        (2, 0, 2),  # 7H 6H onto 8D (partial run)
        (1, 0, 3),  # 6H onto 7C (partial run)
        (1, 1, 4),  # 9S onto TD
        (1, 2, 1),  # 8D onto 9S
        (1, 3, 2),  # 7C onto 8D
    }
    # 9C 8H 7H 6H is not of one suit: it cannot go onto the TD as a unit.
    assert mv(s, 4, 0, 4) not in legal_actions(s)
    t = apply(s, mv(s, 3, 0, 1))
    assert up(t, 1) == "9S 8H 7H 6H"
    assert up(t, 0) == "9C"
    assert t.run_lengths == tuple(run_length(c, d) for c, d in zip(t.cols, t.down))
    assert t.run_lengths[1] == 3 and t.run_lengths[0] == 1
    u = apply(s, mv(s, 2, 0, 2))
    assert up(u, 0) == "9C 8H" and up(u, 2) == "8D 7H 6H"
    assert u.run_lengths[0] == 1 and u.run_lengths[2] == 2


def test_suited_run_joins_a_same_suit_target() -> None:
    s = position(kings("* 8H 7H", "|2C 9H", "|4D TS"))
    t = apply(s, mv(s, 2, 0, 1))
    assert up(t, 1) == "9H 8H 7H"
    assert t.run_lengths[1] == 3  # the cached run grows across the join
    v = apply(t, mv(t, 3, 1, 2))  # and moves on as one
    assert up(v, 1) == "2C" and v.reveals == t.reveals + 1


def test_mixed_suit_stack_cannot_move_as_one() -> None:
    s = position(kings("* 8C 7H 6S", "9D", "8H", "7D"))
    assert s.run_lengths[0] == 1
    legal = legal_actions(s)
    for k in (2, 3):
        for dst in range(10):
            assert mv(s, k, 0, dst) not in legal
    assert mv(s, 1, 0, 3) in legal  # 6S onto 7D
    with pytest.raises(IllegalMoveError) as err:
        apply(s, mv(s, 3, 0, 1))
    msg = str(err.value)
    assert f"illegal action {mv(s, 3, 0, 1)}" in msg
    assert "move 3 cards 0 -> 1" in msg
    assert "only 1 movable" in msg


def test_mixed_suit_descending_sequence_of_13_is_not_removed() -> None:
    # K..2 of spades then an AH: descending King to Ace, but not of one suit.
    s = position(kings("* " + run("S", 13, 2), "|5C AH"))
    t = apply(s, mv(s, 1, 1, 0))
    assert t.completed == (0, 0, 0, 0)
    assert t.run_lengths[0] == 1
    assert len(t.cols[0]) == len(s.cols[0]) + 1
    assert up(t, 1) == "5C" and t.reveals == 1


def test_nothing_goes_onto_an_ace() -> None:
    s = position(kings("* AS", "AH", "2D", "KC"))
    legal = legal_actions(s)
    assert mv(s, 1, 0, 2) in legal and mv(s, 1, 1, 2) in legal  # Aces onto the 2
    for src in range(10):
        for dst in (0, 1):
            assert mv(s, 1, src, dst) not in legal
    with pytest.raises(IllegalMoveError, match="cannot go on AS"):
        apply(s, mv(s, 1, 3, 0))  # a King does not wrap round onto an Ace


def test_explain_illegal_writes_cards_in_the_style_asked_for() -> None:
    s = position(kings("* TS", "9H", "2D"))
    onto_two = mv(s, 1, 0, 2)  # TS onto 2D
    assert onto_two not in legal_actions(s)
    assert explain_illegal(s, onto_two).startswith("TS cannot go on 2D (needs a card")
    assert explain_illegal(s, onto_two, ascii=True) == explain_illegal(s, onto_two)
    assert explain_illegal(s, onto_two, ascii=False).startswith("10♠ cannot go on 2♦ (needs")


def test_kings_move_only_to_empty_columns() -> None:
    s = position(kings("* 5D", "KS QS"))  # all other columns: lone Kings
    assert not any(m[1] >= 2 for m in moves_of(s))
    s2 = position(kings("* 5D", "KS QS", "-"))
    got = moves_of(s2)
    for c in range(3, 10):
        assert (1, c, 2) in got  # every lone King may go to the empty column
    assert (2, 1, 2) in got and (1, 1, 2) in got


def test_moves_onto_empty_column_any_card_any_k_up_to_the_run() -> None:
    s = position(["* 9C 8H 7H 6H", "-", "5S 4S", "|3D JC"] + QUIET[:6])
    got = moves_of(s)
    for k in (1, 2, 3):
        assert (k, 0, 1) in got
    assert (4, 0, 1) not in got  # 9C is not part of the suited run
    assert (1, 2, 1) in got and (2, 2, 1) in got  # a whole column may move into the gap
    assert (1, 3, 1) in got
    assert DEAL not in legal_actions(s)
    t = apply(s, mv(s, 3, 0, 1))
    assert up(t, 1) == "8H 7H 6H" and t.down[1] == 0 and t.run_lengths[1] == 3
    u = apply(s, mv(s, 2, 2, 1))
    assert u.cols[2] == () and up(u, 1) == "5S 4S" and u.run_lengths[2] == 0
    assert u.reveals == 0  # nothing face down was uncovered


def test_same_column_is_never_a_target() -> None:
    s = position(kings("* 9C 8H 7H 6H", "9S"))
    for k in range(1, 14):
        assert mv(s, k, 0, 0) not in legal_actions(s)
    with pytest.raises(IllegalMoveError, match="same column"):
        apply(s, mv(s, 1, 0, 0))


def test_move_from_an_empty_column_is_illegal() -> None:
    s = position(["* 9C", "-"] + QUIET)
    with pytest.raises(IllegalMoveError, match="column 1 is empty"):
        apply(s, mv(s, 1, 1, 0))


# --- flips ---------------------------------------------------------------------------------


def test_flip_after_move() -> None:
    s = position(kings("* KD", "|3D |AH 5S", "6H", "2C", "4C"))
    assert s.down[1] == 2
    t = apply(s, mv(s, 1, 1, 2))
    assert up(t, 1) == "AH" and t.down[1] == 1
    assert t.reveals == 1 and t.moves == 1 and t.run_lengths[1] == 1
    u = apply(t, mv(t, 1, 1, 3))
    assert up(u, 1) == "3D" and u.down[1] == 0
    assert u.reveals == 2 and u.moves == 2
    w = apply(u, mv(u, 1, 1, 4))  # the last card leaves: an empty column, no flip
    assert w.cols[1] == () and w.reveals == 2


def test_no_flip_when_face_up_cards_remain() -> None:
    s = position(kings("* KD", "|3D 9S 5S", "6H"))
    t = apply(s, mv(s, 1, 1, 2))
    assert up(t, 1) == "9S" and t.down[1] == 1 and t.reveals == 0


# --- deals -----------------------------------------------------------------------------------

PILE = "AS 2H 3D 4C 5S 6H 7D 8C 9S TH"


def test_deal_one_face_up_card_per_column_left_to_right() -> None:
    s = position(kings("* JD", "|4H JH"), stock=["-", "-", "-", "-", PILE])
    assert s.deals == 4 and s.deals_left == 1
    assert legal_actions(s)[-1] == DEAL
    t = apply(s, DEAL)
    pile = PILE.split()
    for c in range(10):
        assert t.cols[c][-1] == se.core.cards.parse_card(pile[c])
        assert t.cols[c][:-1] == s.cols[c]
        assert t.down[c] == s.down[c]  # dealt cards are face up
        assert len(t.cols[c]) - t.down[c] >= 1
    assert t.stock == ((),) * 5
    assert t.deals == 5 and t.moves == 0 and t.deals_left == 0 and t.stock_cards == 0
    assert t.score == 500 - 5  # deals count like moves
    assert t.reveals == 0
    assert DEAL not in legal_actions(t)
    with pytest.raises(IllegalMoveError, match="stock is empty"):
        apply(t, DEAL)


def test_deal_continues_suited_runs_in_the_cache() -> None:
    s = position(
        kings("* 3S", "|4H 3H"), stock=["-", "-", "-", "-", "2S 2H 3D 4C 5S 6H 7D 8C 9S TH"]
    )
    t = apply(s, DEAL)
    assert t.run_lengths[0] == 2 and t.run_lengths[1] == 2  # 3S 2S, 3H 2H
    assert t.run_lengths == tuple(run_length(c, d) for c, d in zip(t.cols, t.down))


def test_deals_use_the_piles_in_order() -> None:
    p3 = "AS 2H 3D 4C 5S 6H 7D 8C 9S TH"
    p4 = "AH 2S 3C 4D 5H 6S 7C 8D 9H TS"
    s = position(kings("* JD", "JH"), stock=["-", "-", "-", p3, p4])
    t = apply(s, DEAL)
    assert t.stock[3] == () and t.stock[4] == s.stock[4]
    assert se.core.cards.card_str(t.cols[0][-1]) == "AS"
    u = apply(t, DEAL)
    assert se.core.cards.card_str(u.cols[0][-1]) == "AH"
    assert u.deals == 5 and u.stock_cards == 0


def test_deal_blocked_by_an_empty_column() -> None:
    s = position(["* JD", "JH", "-"] + QUIET[:7], piles=1)
    assert DEAL not in legal_actions(s)
    with pytest.raises(IllegalMoveError) as err:
        apply(s, DEAL)
    assert "deal" in str(err.value) and "column 2" in str(err.value)
    # Filling the gap makes the deal legal again.
    t = apply(s, mv(s, 1, 1, 2))
    assert DEAL not in legal_actions(t)  # column 1 is now empty
    s2 = position(["* JD", "|3C JH", "-"] + QUIET[:7], piles=1)
    t2 = apply(s2, mv(s2, 1, 1, 2))
    assert DEAL in legal_actions(t2)


def test_deal_with_empty_stock_is_not_legal() -> None:
    s = position(kings("* JD", "JH"))
    assert s.stock_cards == 0 and s.deals == 5
    assert DEAL not in legal_actions(s)
    assert "stock is empty" in explain_illegal(s, DEAL)


# --- run removal --------------------------------------------------------------------------


def test_run_completed_by_a_move() -> None:
    s = position(
        kings("* |5D " + run("S", 13, 7), "|2C " + run("S", 6, 1)),
    )
    assert s.run_lengths[0] == 7 and s.run_lengths[1] == 6
    t = apply(s, mv(s, 6, 1, 0))
    assert t.completed == (1, 0, 0, 0) and t.completed_runs == 1
    assert up(t, 0) == "5D"  # flip after removal
    assert up(t, 1) == "2C"  # flip after the move
    assert t.down[0] == s.down[0] - 1
    assert t.reveals == 2 and t.moves == 1
    assert t.score == s.score - 1 + 100
    assert len(t.cols[0]) == len(s.cols[0]) - 7
    t.validate()


def test_run_completed_by_a_partial_run_move() -> None:
    # Only the 2H AH of column 1's run go; the 3H stays.
    s = position(kings("* |5D " + run("H", 13, 3), "|9C 3H 2H AH"))
    t = apply(s, mv(s, 2, 1, 0))
    assert t.completed == (0, 1, 0, 0)
    assert up(t, 1) == "3H" and t.run_lengths[1] == 1
    assert up(t, 0) == "5D"


def test_run_removal_leaves_an_empty_column() -> None:
    s = position(kings("* AD", run("D", 13, 2), "JH"), piles=1)
    assert s.down[1] == 0
    t = apply(s, mv(s, 1, 0, 1))
    assert t.cols[1] == () and t.down[1] == 0 and t.run_lengths[1] == 0
    assert t.completed == (0, 0, 1, 0)
    assert t.reveals == 1  # the '*' column's top card turned up, nothing in column 1
    assert DEAL not in legal_actions(t)  # now a column is empty


def test_run_completed_by_a_deal() -> None:
    stock = ["-", "-", "-", "-", "2S 2H 3D AH 5S 6H 7D 8C 9S TH"]
    s = position(kings("* JD", "JC", "QC", "|9H " + run("H", 13, 2)), stock=stock)
    t = apply(s, DEAL)
    assert t.completed == (0, 1, 0, 0)
    assert up(t, 3) == "9H" and t.down[3] == 0
    assert t.reveals == 1 and t.deals == 1 + s.deals and t.moves == 0
    assert t.score == s.score - 1 + 100
    t.validate()


def test_two_runs_completed_by_one_deal() -> None:
    stock = ["-", "-", "-", "-", "AS 2H 3D 4D 5S 6H 7D AC 9S TH"]
    cols = [
        "* |QD " + run("S", 13, 2),
        "JC",
        "QC",
        "JD",
        "KD",
        "KD",
        "KH",
        "|8H " + run("C", 13, 2),
    ]
    s = position([*cols, "KH", "5C"], stock=stock)
    t = apply(s, DEAL)
    assert t.completed == (1, 0, 0, 1)
    assert up(t, 0) == "QD" and up(t, 7) == "8H"
    assert t.reveals == 2
    assert t.score == s.score - 1 + 200
    assert t.run_lengths == tuple(run_length(c, d) for c, d in zip(t.cols, t.down))


def test_deal_completing_a_run_in_a_column_without_face_down_cards_empties_it() -> None:
    stock = ["-", "-", "-", "-", "AS 2H 3D 4D 5S 6H 7D 8C 9S TH"]
    rest = ["KH", "KH", "KD", "KD", "KC", "KC", "AH"]
    s = position(["* JD", "QC", *rest, run("S", 13, 2)], stock=stock)
    # column 9 gets the TH, column 0 the AS (no completion there: JD, AS)
    t = apply(s, DEAL)
    assert t.completed == (0, 0, 0, 0)
    stock2 = ["-", "-", "-", "-", "2S 2H 3D 4D 5S 6H 7D 8C 9S AS"]
    s2 = position(["* JD", "QC", *rest, run("S", 13, 2)], stock=stock2)
    t2 = apply(s2, DEAL)
    assert t2.completed == (1, 0, 0, 0) and t2.cols[9] == () and t2.reveals == 0


def test_run_under_a_card_is_removed_once_uncovered() -> None:
    # Not reachable in classic play, but the rule says: whenever the last 13 cards form a run.
    s = position(kings("* " + run("S", 13) + " 5C", "6D"))
    assert s.run_lengths[0] == 1
    t = apply(s, mv(s, 1, 0, 1))
    assert t.completed == (1, 0, 0, 0)
    assert t.reveals == 1  # the '*' column's top card turned up after the removal


def test_removal_needs_one_suit_and_all_thirteen() -> None:
    # Q..A of spades on a King of hearts: 13 descending cards but not one suit -> stays.
    s = position(kings("* KH " + run("S", 12, 2), "|7C AS"))
    t = apply(s, mv(s, 1, 1, 0))
    assert t.completed == (0, 0, 0, 0) and t.run_lengths[0] == 12


# --- end of game ---------------------------------------------------------------------------


def test_win_all_eight_runs() -> None:
    s = position(
        [run("C", 13, 2), "AC"] + ["-"] * 8,
        completed=(2, 2, 2, 1),
        moves=120,
    )
    assert not s.won and not is_terminal(s)
    t = apply(s, mv(s, 1, 1, 0))
    assert t.completed == (2, 2, 2, 2) and t.completed_runs == 8
    assert t.won
    assert legal_actions(t) == []
    assert is_terminal(t)
    assert all(c == () for c in t.cols)
    assert t.score == 500 - 121 - 5 + 800
    with pytest.raises(IllegalMoveError, match="won"):
        apply(t, mv(t, 1, 0, 1))


def test_win_in_one_suit() -> None:
    s = position(
        [run("S", 13, 2), "AS"] + ["-"] * 8, variant="spider-1suit", completed=(7, 0, 0, 0)
    )
    t = apply(s, mv(s, 1, 1, 0))
    assert t.won and legal_actions(t) == [] and t.completed == (8, 0, 0, 0)


def test_stuck_end_is_terminal_but_not_won() -> None:
    exposed = ["* AS", "AH", "KS", "KS", "KH", "KH", "KD", "KD", "KC", "KC"]
    s = position(exposed)
    assert legal_actions(s) == []
    assert is_terminal(s) and not s.won
    assert se.legal_actions(s) == []
    # The same table with a pile left: dealing is the only thing to do.
    s2 = position(exposed, piles=1)
    assert legal_actions(s2) == [DEAL]
    assert not is_terminal(s2)


def test_pointless_shuffling_still_reported() -> None:
    # Only back-and-forth moves exist (two 8s and a 7): the engine lists them, not "stuck".
    s = position(kings("* 8S", "8H", "7C"))
    assert moves_of(s) == {(1, 2, 0), (1, 2, 1)}
    t = apply(s, mv(s, 1, 2, 0))
    assert (1, 0, 1) in moves_of(t)
    assert not is_terminal(t)


# --- score and counters ---------------------------------------------------------------------


def test_score_and_counters_along_a_game() -> None:
    s = se.new_game("spider-2suit", 11)
    assert (s.moves, s.deals, s.undos, s.reveals, s.score) == (0, 0, 0, 0, 500)
    state = s
    n_moves = n_deals = 0
    rng = np.random.default_rng(5)
    for _ in range(150):
        legal = legal_actions(state)
        if not legal:
            break
        a = int(legal[rng.integers(len(legal))])
        nxt = apply(state, a)
        if a == DEAL:
            n_deals += 1
        else:
            n_moves += 1
        assert nxt.reveals >= state.reveals
        # a reveal count grows only by what was actually turned face up
        flipped = sum(max(0, d0 - d1) for d0, d1 in zip(state.down, nxt.down))
        assert nxt.reveals - state.reveals == flipped
        state = nxt
        assert (state.moves, state.deals) == (n_moves, n_deals)
        assert state.score == 500 - n_moves - n_deals + 100 * state.completed_runs


def test_score_formula_with_runs() -> None:
    s = position(["* JD", "JC"] + ["-"] * 8, completed=(1, 0, 1, 0), moves=70, deals=5)
    assert s.score == 500 - 75 + 200


# --- bad actions ---------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [1301, 10**9, -1])
def test_out_of_range_action_ids(bad: int) -> None:
    s = se.new_game("spider-4suit", 0)
    with pytest.raises(ValueError, match="out of range"):
        apply(s, bad)


@pytest.mark.parametrize("bad", ["3", 3.0, None, True, [3]])
def test_non_int_actions(bad: object) -> None:
    s = se.new_game("spider-4suit", 0)
    with pytest.raises(TypeError, match="action must be an int"):
        apply(s, bad)  # type: ignore[arg-type]


def test_numpy_int_actions_are_accepted() -> None:
    s = se.new_game("spider-4suit", 0)
    a = legal_actions(s)[0]
    assert apply(s, np.int64(a)) == apply(s, a)
    assert apply(s, se.decode(s.variant, a)) == apply(s, a)  # an Action works too


def test_illegal_error_is_a_value_error_naming_action_and_reason() -> None:
    s = position(kings("* 7H", "8S", "9D"))
    a = mv(s, 1, 0, 2)  # 7H onto 9D
    assert issubclass(IllegalMoveError, ValueError)
    with pytest.raises(IllegalMoveError) as err:
        apply(s, a)
    msg = str(err.value)
    assert str(a) in msg and "move 1 card 0 -> 2" in msg
    assert "7H cannot go on 9D" in msg


def test_apply_does_not_change_its_input() -> None:
    s = position(kings("* |5D " + run("S", 13, 7), "|2C " + run("S", 6, 1)), piles=0)
    before = s.to_text()
    key = s.key()
    apply(s, mv(s, 6, 1, 0))
    assert s.to_text() == before and s.key() == key


# --- undo (optional rule switch) -------------------------------------------------------------


def test_undo_variant() -> None:
    v = se.classic(4).with_options(undo=True)
    assert v.n_actions == 1302
    undo = v.n_actions - 1
    s = position(kings("* 9C 8H", "9S", "|3D 7C", "8D"), variant=v, piles=1)
    assert undo not in legal_actions(s)  # nothing to undo yet
    t = apply(s, mv(s, 1, 0, 1))  # no reveal: undoable
    assert undo in legal_actions(t)
    back = apply(t, undo)
    assert back.key() == s.key()
    assert (back.moves, back.undos) == (1, 1)  # counters never go back
    assert back.score == s.score - 2
    assert undo not in legal_actions(back)
    r = apply(s, mv(s, 1, 2, 3))  # 7C onto 8D reveals the 3D: not undoable
    assert up(r, 2) == "3D"
    assert undo not in legal_actions(r)
    d = apply(s, DEAL)  # a deal shows new cards: not undoable
    assert undo not in legal_actions(d)
    # two steps back
    t2 = apply(t, mv(t, 1, 3, 0))  # 8D onto 9C empties column 3, reveals nothing
    assert undo in legal_actions(t2)
    assert apply(apply(t2, undo), undo).key() == s.key()
    with pytest.raises(ValueError, match="no undo action"):
        se.encode(se.classic(4), se.Action("undo"))
