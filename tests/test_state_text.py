"""State text form: exact round trip, validation of corrupt text, keys/hashes, pickling."""

from __future__ import annotations

import copy
import pickle
import random

import pytest
from conftest import mv, position, random_play, run

import spider_env as se
from spider_env.core.actions import undo_id
from spider_env.core.rules import apply, legal_actions
from spider_env.core.state import TEXT_HEADER, State, run_length

VARIANTS = ("spider-1suit", "spider-2suit", "spider-4suit")


def roundtrip(s: State) -> State:
    text = s.to_text()
    t = State.from_text(text)
    assert t == s
    assert t.to_text() == text
    assert t.key() == s.key() and hash(t) == hash(s)
    assert t.run_lengths == s.run_lengths
    assert t.run_lengths == tuple(run_length(c, d) for c, d in zip(t.cols, t.down))
    assert legal_actions(t) == legal_actions(s)
    assert (t.moves, t.deals, t.undos, t.reveals, t.free_used) == (
        s.moves,
        s.deals,
        s.undos,
        s.reveals,
        s.free_used,
    )
    return t


# --- round trips -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize("number", [0, 1, 7, 12345, 2**64 - 1])
def test_roundtrip_fresh_deals(name: str, number: int) -> None:
    roundtrip(se.new_game(name, number))


def test_text_layout_of_a_fresh_deal() -> None:
    s = se.new_game("spider-4suit", 0)
    lines = s.to_text().splitlines()
    assert lines[0] == TEXT_HEADER == "spider-env state 1"
    assert lines[1] == "variant: spider-4suit"
    assert lines[2] == "counters: moves=0 deals=0 undos=0 reveals=0 free_used=false"
    assert lines[3] == "completed: S=0 H=0 D=0 C=0"
    for c in range(10):
        assert lines[4 + c].startswith(f"col{c}: ")
        toks = lines[4 + c].split()[1:]
        assert len(toks) == (6 if c < 4 else 5)
        assert all(t.startswith("|") for t in toks[:-1]) and not toks[-1].startswith("|")
    for j in range(5):
        assert lines[14 + j].startswith(f"pile{j}: ")
        assert len(lines[14 + j].split()) == 11
    assert len(lines) == 19
    assert s.to_text().endswith("\n")


@pytest.mark.parametrize("name", VARIANTS)
def test_roundtrip_along_random_games(name: str) -> None:
    rng = random.Random(name)
    for number in range(3):
        for before, _a, after in random_play(se.new_game(name, number), rng, 300):
            roundtrip(before)
            roundtrip(after)


def test_roundtrip_with_completed_runs_and_empty_columns() -> None:
    s = position(
        ["* |5D " + run("S", 13, 7), "|2C " + run("S", 6, 1), "-", "KH"] + ["-"] * 6,
        completed=(1, 0, 1, 1),
        moves=33,
        reveals=12,
    )
    roundtrip(s)
    t = apply(s, mv(s, 6, 1, 0))
    assert t.completed == (2, 0, 1, 1)
    text = t.to_text()
    assert "completed: S=2 H=0 D=1 C=1" in text
    assert "col2: -" in text
    assert "pile0: -" in text
    roundtrip(t)


def test_roundtrip_undo_histories() -> None:
    v = se.classic(2).with_options(undo=True)
    rng = random.Random(3)
    s = State.from_deal(se.generate_deal(v, 4))
    assert "options: undo=true" in s.to_text()
    deepest = 0
    for _before, _a, after in random_play(s, rng, 80):  # undo chains make texts grow
        t = roundtrip(after)
        depth, p = 0, t.prev
        while p is not None:
            depth += 1
            p = p.prev
        deepest = max(deepest, depth)
        if depth:
            assert f"undo {depth}:" in after.to_text()
            # undoing the reloaded state gives the same as undoing the original
            undo = v.n_actions - 1
            assert apply(t, undo) == apply(after, undo)
    assert deepest >= 2


def test_state_equality_covers_counters_and_history() -> None:
    s = se.new_game("spider-4suit", 5)
    assert s.replace(moves=3) != s
    assert s.replace(moves=3).key() == s.key()
    assert s != "not a state"


def test_replace_rejects_unknown_fields() -> None:
    s = se.new_game("spider-4suit", 5)
    with pytest.raises(ValueError, match="unknown state field"):
        s.replace(score=3)


def test_state_constructor_validates() -> None:
    s = se.new_game("spider-4suit", 5)
    cols = list(s.cols)
    cols[0] = cols[0][1:]
    with pytest.raises(ValueError, match="missing"):
        State(s.variant, tuple(cols), (4,) + s.down[1:], s.stock)
    with pytest.raises(ValueError, match="face down"):
        State(s.variant, s.cols, (6,) * 4 + (4,) * 6, s.stock)
    with pytest.raises(ValueError, match="10 columns"):
        State(s.variant, s.cols[:9], s.down[:9], s.stock)


# --- corrupt text ---------------------------------------------------------------------------


def lines_of(name: str = "spider-4suit", number: int = 0) -> list[str]:
    return se.new_game(name, number).to_text().splitlines()


def corrupt(lines: list[str], lineno: int, new: str | None) -> str:
    out = list(lines)
    if new is None:
        del out[lineno - 1]
    else:
        out[lineno - 1] = new
    return "\n".join(out) + "\n"


def expect_error(text: str, lineno: int, *reason: str) -> str:
    with pytest.raises(ValueError) as err:
        State.from_text(text)
    msg = str(err.value)
    assert f"line {lineno}" in msg, msg
    for r in reason:
        assert r in msg, msg
    return msg


def test_missing_card_is_named_without_blaming_a_line() -> None:
    ls = lines_of()
    toks = ls[4].split()  # col0: |a |b ...
    dropped = toks[1].lstrip("|")
    text = corrupt(ls, 5, " ".join([toks[0], *toks[2:]]))  # the deepest card of column 0 gone
    with pytest.raises(ValueError) as err:
        State.from_text(text)
    msg = str(err.value)
    assert "the position on lines 4-19" in msg and f"missing {dropped}" in msg, msg
    assert "line 4 (" not in msg and "line 5 (" not in msg, msg


def test_extra_card_names_the_line_of_its_first_surplus_copy() -> None:
    ls = lines_of()  # spider-4suit: two copies of each card
    toks = ls[18].split()  # pile4, the last line
    replaced, extra = toks[-1], ls[4].split()[1].lstrip("|")
    assert extra not in toks and replaced != extra
    toks[-1] = extra
    msg = expect_error(corrupt(ls, 19, " ".join(toks)), 19, f"one {extra} too many")
    assert f"missing {replaced}" in msg and "this is number 3" in msg, msg


def test_extra_stock_card_names_its_pile_line() -> None:
    t = se.new_game("spider-1suit", 0).to_text()
    with pytest.raises(ValueError) as err:
        State.from_text(t.replace("pile0: ", "pile0: AS ", 1))
    msg = str(err.value)
    assert msg.startswith("corrupt state text, line 15 ('pile0: AS "), msg
    assert "stock pile 0 holds 11 cards, expected 10" in msg, msg


def test_completed_runs_still_on_the_table_blame_the_completed_line() -> None:
    ls = lines_of("spider-1suit", 0)
    msg = expect_error(corrupt(ls, 4, "completed: S=1 H=0 D=0 C=0"), 4, "S=1")
    assert "makes 9 of every S card, the deck has 8" in msg, msg


def test_card_of_an_unused_suit() -> None:
    ls = lines_of("spider-1suit", 0)
    toks = ls[4].split()
    toks[-1] = toks[-1][0] + "H"  # a heart in the 1-suit game
    msg = expect_error(corrupt(ls, 5, " ".join(toks)), 5, "does not use")
    assert f"{toks[-1]} is of a suit" in msg, msg


def test_completed_runs_of_an_unused_suit() -> None:
    s = position(["* JS", "JH"] + ["-"] * 8, variant="spider-2suit", completed=(1, 0, 0, 0))
    ls = s.to_text().splitlines()
    i = ls.index("completed: S=1 H=0 D=0 C=0")
    text = corrupt(ls, i + 1, "completed: S=0 H=0 D=1 C=0")
    expect_error(text, i + 1, "does not use")


def test_face_up_card_under_a_face_down_one() -> None:
    ls = lines_of()
    toks = ls[4].split()  # col0: |a |b |c |d |e f
    toks[2] = toks[2].lstrip("|")
    expect_error(corrupt(ls, 5, " ".join(toks)), 5, "face-down", "face-up")


def test_exposed_card_face_down() -> None:
    ls = lines_of()
    toks = ls[4].split()
    toks[-1] = "|" + toks[-1]
    expect_error(corrupt(ls, 5, " ".join(toks)), 4, "exposed card is face down")


@pytest.mark.parametrize(
    ("lineno", "new", "reason"),
    [
        (1, "spider-env state 2", "version"),
        (1, "hello", "expected a line starting 'spider-env state '"),
        (2, "variant: spider-3suit", "unknown variant"),
        (2, "variants: spider-4suit", "expected a line starting 'variant:'"),
        (3, "counters: moves=-1 deals=0 undos=0 reveals=0 free_used=false", "moves"),
        (3, "counters: moves=x deals=0 undos=0 reveals=0 free_used=false", "moves"),
        (3, "counters: moves=0 deals=0 undos=0 reveals=0", "expected moves=N"),
        (3, "counters: moves=0 deals=0 undos=0 reveals=0 free_used=maybe", "free_used"),
        (3, "counters: moves=0 moves=0 deals=0 undos=0 reveals=0 free_used=false", "expected"),
        (4, "completed: S=0 H=0 D=0", "expected S=N H=N D=N C=N"),
        (4, "completed: S=x H=0 D=0 C=0", "expected S=N H=N D=N C=N"),
        (5, "col0 |8S |AS", "expected a line starting 'col0:'"),
        (5, "col0: |ZZ |AS", "not a card"),
        (6, "col0: |8S", "expected a line starting 'col1:'"),
        (15, "pile0: 2S 8S XX", "not a card"),
        (15, "stock: -", "expected a line starting 'pile0:'"),
    ],
)
def test_malformed_lines(lineno: int, new: str, reason: str) -> None:
    expect_error(corrupt(lines_of(), lineno, new), lineno, reason)


def test_unknown_variant_option() -> None:
    ls = lines_of()
    ls.insert(2, "options: undo=maybe")
    expect_error("\n".join(ls), 3, "undo=maybe")
    ls[2] = "options: speed=9"
    expect_error("\n".join(ls), 3, "speed=9")


def test_truncated_and_trailing_text() -> None:
    ls = lines_of()
    expect_error("\n".join(ls[:10]), 11, "text ended")
    expect_error("", 1, "text ended")
    expect_error("\n".join([*ls, "", "junk"]), 21, "unexpected text after the state")
    expect_error("\n".join([*ls, "junk"]), 20, "expected a line starting 'undo '")
    expect_error("\n".join([*ls, "undo 2:"]), 20, "undo 1:")


def test_non_str_text() -> None:
    with pytest.raises(TypeError):
        State.from_text(b"spider-env state 1")  # type: ignore[arg-type]


def test_bad_counter_values() -> None:
    s = position(["* JD", "JC"] + ["-"] * 8, piles=2)  # 3 piles dealt
    ls = s.to_text().splitlines()
    ls[2] = ls[2].replace("deals=3", "deals=4")
    expect_error("\n".join(ls), 4, "4 deals made but 3 stock piles are empty")


def test_empty_pile_order() -> None:
    s = position(["* JD", "JC"] + ["-"] * 8, piles=1)
    ls = s.to_text().splitlines()
    i = next(i for i, line in enumerate(ls) if line.startswith("pile4:"))
    ls[i - 4], ls[i] = "pile0: " + ls[i].split(": ")[1], "pile4: -"
    expect_error("\n".join(ls), 4, "dealt (empty) piles must come first")


def test_short_stock_pile() -> None:
    ls = lines_of()
    toks = ls[14].split()
    moved = toks.pop()
    ls[14] = " ".join(toks)
    ls[4] = ls[4] + " " + moved
    expect_error("\n".join(ls), 15, "stock pile 0 holds 9 cards")


def test_complete_run_left_in_a_column() -> None:
    s = position(["* JD", run("H", 13, 2), "AH"] + ["-"] * 7)
    ls = s.to_text().splitlines()
    ls[5] = ls[5] + " AH"
    ls[6] = "col2: -"
    expect_error("\n".join(ls), 4, "complete run", "should have been removed")


def test_too_many_completed_runs() -> None:
    s = position(["-"] * 10, completed=(2, 2, 2, 2))
    assert s.won and legal_actions(s) == []
    roundtrip(s)


def test_undo_history_in_a_variant_without_undo() -> None:
    v = se.classic(4).with_options(undo=True)
    s = State.from_deal(se.generate_deal(v, 2))
    t = next(after for _b, _a, after in random_play(s, random.Random(0)) if after.prev)
    text = t.to_text().replace("options: undo=true\n", "")
    expect_error(text, 4, "undo history in a variant without undo")


# --- keys, hashing, pickling ---------------------------------------------------------------


def test_key_detects_repeated_positions() -> None:
    s = position(["* KD", "8S", "8H", "7C", "|4D JH"] + ["KS", "KS", "KH", "KC", "KC"])
    a = apply(s, mv(s, 1, 3, 1))  # 7C onto 8S
    b = apply(a, mv(a, 1, 1, 2))  # ... onto 8H
    c = apply(b, mv(b, 1, 2, 1))  # ... back onto 8S
    assert c.key() == a.key() and hash(c.key()) == hash(a.key())
    assert c != a  # different move counters
    assert hash(c) == hash(a)  # hash is of the position
    seen = {a.key(), b.key(), c.key()}
    assert len(seen) == 2
    assert a.key() != s.key()


def test_key_is_hashable_and_ignores_counters() -> None:
    s = se.new_game("spider-2suit", 9)
    d = {s.key(): 1}
    assert d[s.replace(moves=10, reveals=0).key()] == 1


@pytest.mark.parametrize("name", VARIANTS)
def test_pickle_roundtrip(name: str) -> None:
    rng = random.Random(1)
    states = [se.new_game(name, 3)]
    for _b, _a, after in random_play(states[0], rng, 120):
        states.append(after)
    for s in states[:: max(1, len(states) // 10)] + [states[-1]]:
        for proto in range(2, pickle.HIGHEST_PROTOCOL + 1):
            t = pickle.loads(pickle.dumps(s, protocol=proto))
            assert t == s and t.to_text() == s.to_text()
            assert legal_actions(t) == legal_actions(s)
        assert copy.deepcopy(s) == s and copy.copy(s) == s


def test_pickle_keeps_the_undo_history() -> None:
    v = se.classic(1).with_options(undo=True)
    undo = undo_id(v)
    s = State.from_deal(se.generate_deal(v, 0))
    with_history = 0
    for _b, _a, after in random_play(s, random.Random(2), 50):
        t = pickle.loads(pickle.dumps(after))
        assert t == after and (t.prev is None) == (after.prev is None)
        if after.prev is not None and t.prev is not None:
            with_history += 1  # the history's positions survive (its counters are the top's)
            assert t.prev.key() == after.prev.key() and undo in legal_actions(t)
            assert apply(t, undo) == apply(after, undo)
    assert with_history >= 10, with_history


@pytest.mark.parametrize("digit", ["²", "١", "+1", "1.0", " "])
def test_counters_and_completed_need_ascii_digits(digit: str) -> None:
    text = se.new_game("spider-4suit", 0).to_text()
    expect_error(text.replace("moves=0", f"moves={digit}"), 3, "moves")
    expect_error(text.replace("S=0", f"S={digit}"), 4, "S=N")


def test_crlf_and_trailing_spaces_are_read() -> None:
    s = se.new_game("spider-2suit", 8)
    text = s.to_text()
    assert State.from_text(text.replace("\n", "\r\n")) == s
    assert State.from_text(text.replace("\n", "  \n")) == s
    assert State.from_text(text + "\n\n") == s
