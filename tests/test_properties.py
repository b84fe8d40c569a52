"""Hypothesis properties over random legal play (1, 2, 4 suits; classic with undo).

Besides the invariants of issue 2 (whole deck accounted for, every legal action applies, no
illegal action accepted, text round trip, cached runs, inputs untouched) the engine is compared
with a deliberately naive *test oracle* written straight from the rules text: it lists the legal
moves by brute force and plays them card by card. The oracle lives only here, to check the one
real implementation (``spider_env.core.rules``); nothing in the package uses it.
"""

from __future__ import annotations

import random
from itertools import pairwise

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spider_env as se
from spider_env.core.cards import rank_of, suit_of
from spider_env.core.rules import IllegalMoveError, apply, is_terminal, legal_actions
from spider_env.core.state import State, run_length

NAMES = ("spider-1suit", "spider-2suit", "spider-4suit")
UNDO = {name: se.get_variant(name).with_options(undo=True) for name in NAMES}

SETTINGS = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)

games = st.tuples(
    st.sampled_from(NAMES),
    st.integers(min_value=0, max_value=2**64 - 1),  # deal number
    st.integers(min_value=0, max_value=2**32),  # play seed
    st.booleans(),  # undo variant
)


def start(name: str, number: int, undo: bool) -> State:
    v = UNDO[name] if undo else se.get_variant(name)
    return State.from_deal(se.generate_deal(v, number))


def play(state: State, seed: int, steps: int):  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    for _ in range(steps):
        legal = legal_actions(state)
        if not legal:
            return
        a = rng.choice(legal)
        yield state, a
        state = apply(state, a)
    yield state, None


# --- the naive oracle --------------------------------------------------------------------------


def is_suited_descending(cards: tuple[int, ...]) -> bool:
    return all(
        suit_of(a) == suit_of(b) and rank_of(a) == rank_of(b) + 1 for a, b in pairwise(cards)
    )


def complete_run_at_end(col: list[int] | tuple[int, ...], down: int) -> bool:
    tail = tuple(col[-13:])
    return (
        len(tail) == 13
        and len(col) - down >= 13
        and rank_of(tail[0]) == 13
        and is_suited_descending(tail)
    )


def oracle_legal(s: State) -> list[int]:
    """Legal action ids by brute force over (src, k, dst), read off the Variant's switches."""
    v = s.variant
    C, R = v.n_columns, v.max_run
    n_move = C * R * C
    if sum(s.completed) >= v.runs_to_win:
        return []
    out = []
    for src in range(C):
        col = s.cols[src]
        for k in range(1, len(col) - s.down[src] + 1):
            moved = col[-k:]
            if v.move == "suited-run" and not is_suited_descending(moved):
                continue
            for dst in range(C):
                if dst == src:
                    continue
                target = s.cols[dst]
                if not target:
                    ok = v.empty_accepts == "any" or rank_of(moved[0]) == 13
                else:
                    ok = rank_of(target[-1]) == rank_of(moved[0]) + 1
                    if v.build == "same-suit":
                        ok = ok and suit_of(target[-1]) == suit_of(moved[0])
                if ok:
                    out.append((src * R + k - 1) * C + dst)
    gap = any(not s.cols[c] for c in range(v.dealt_columns))
    if not (v.deal_needs_no_empty and gap):
        if v.choose_pile:
            out += [n_move + j for j, p in enumerate(s.stock) if p]
        elif any(s.stock):
            out.append(n_move)
    if not v.auto_discard:
        base = n_move + v.n_deal_actions
        out += [base + c for c in range(C) if complete_run_at_end(s.cols[c], s.down[c])]
    if v.undo and s.prev is not None:
        out.append(v.n_actions - 1)
    return sorted(out)


def oracle_after(s: State, a: int) -> tuple:  # type: ignore[type-arg]
    """(cols, down, stock, completed, moves, deals, reveals) after legal action ``a``
    (not undo), played card by card."""
    v = s.variant
    C, R = v.n_columns, v.max_run
    n_move = C * R * C
    cols = [list(c) for c in s.cols]
    down = list(s.down)
    stock = [list(p) for p in s.stock]
    completed = list(s.completed)
    moves, deals, reveals = s.moves, s.deals, s.reveals
    touched: list[int] = []

    def flip(c: int) -> None:
        nonlocal reveals
        if down[c] and down[c] == len(cols[c]):
            down[c] -= 1
            reveals += 1

    if a < n_move:
        dst, t = a % C, a // C
        k, src = t % R + 1, t // R
        group = cols[src][-k:]
        del cols[src][-k:]
        cols[dst].extend(group)
        moves += 1
        touched = [src, dst]
    elif a < n_move + v.n_deal_actions:
        j = a - n_move if v.choose_pile else next(i for i, p in enumerate(stock) if p)
        for c, card in enumerate(stock[j]):
            cols[c].append(card)
            touched.append(c)
        stock[j] = []
        deals += 1
    else:  # discard (runs are optional to remove)
        c = a - n_move - v.n_deal_actions
        assert complete_run_at_end(cols[c], down[c])
        completed[suit_of(cols[c][-1])] += 1
        del cols[c][-13:]
        flip(c)
    for c in touched:
        flip(c)
    if v.auto_discard:
        for c in touched:
            if complete_run_at_end(cols[c], down[c]):
                completed[suit_of(cols[c][-1])] += 1
                del cols[c][-13:]
                flip(c)
    return (
        tuple(tuple(c) for c in cols),
        tuple(down),
        tuple(tuple(p) for p in stock),
        tuple(completed),
        moves,
        deals,
        reveals,
    )


def oracle_score(s: State) -> int:
    runs = sum(s.completed)
    if s.variant.scoring == "windows":
        return 500 - s.moves - s.deals - s.undos + 100 * runs
    won = runs >= s.variant.runs_to_win
    return 25 * s.reveals + 100 * runs + (100 if won and not s.free_used else 0)


# --- properties --------------------------------------------------------------------------------


@SETTINGS
@given(games)
def test_invariants_along_random_play(game: tuple[str, int, int, bool]) -> None:
    name, number, seed, undo = game
    for state, a in play(start(name, number, undo), seed, 120):
        state.validate()  # 104 cards accounted for, no face-up card under a face-down one ...
        n_cards = sum(len(c) for c in state.cols) + state.stock_cards + 13 * state.completed_runs
        assert n_cards == 104
        legal = legal_actions(state)
        assert legal == sorted(set(legal))
        assert all(isinstance(x, int) for x in legal)
        assert all(0 <= x < state.variant.n_actions for x in legal)
        assert state.run_lengths == tuple(run_length(c, d) for c, d in zip(state.cols, state.down))
        assert all(len(c) <= state.variant.max_column_length for c in state.cols)
        assert is_terminal(state) == (not legal)
        text = state.to_text()
        back = State.from_text(text)
        assert back == state and back.to_text() == text and back.key() == state.key()
        if a is None:
            break


@SETTINGS
@given(games)
def test_legal_actions_match_the_naive_oracle(game: tuple[str, int, int, bool]) -> None:
    name, number, seed, undo = game
    for state, a in play(start(name, number, undo), seed, 150):
        assert legal_actions(state) == oracle_legal(state), state.to_text()
        if a is None:
            break


@SETTINGS
@given(games)
def test_every_legal_action_applies_like_the_oracle(game: tuple[str, int, int, bool]) -> None:
    name, number, seed, undo = game
    undo_id = UNDO[name].n_actions - 1
    for state, a in play(start(name, number, undo), seed, 60):
        text, key = state.to_text(), state.key()
        for b in legal_actions(state):
            nxt = apply(state, b)
            nxt.validate()
            assert nxt.run_lengths == tuple(run_length(c, d) for c, d in zip(nxt.cols, nxt.down))
            if undo and b == undo_id:
                assert nxt.key() == state.prev.key()  # type: ignore[union-attr]
                assert nxt.undos == state.undos + 1 and nxt.moves == state.moves
                continue
            got = (nxt.cols, nxt.down, nxt.stock, nxt.completed, nxt.moves, nxt.deals)
            got += (nxt.reveals,)
            assert got == oracle_after(state, b), (se.describe(state.variant, b), text)
            assert nxt.undos == state.undos
            if undo:
                revealed = nxt.reveals > state.reveals or nxt.deals > state.deals
                assert (nxt.prev is state) == (not revealed)
        # applying never changed the state it was given
        assert state.to_text() == text and state.key() == key
        if a is None:
            break


@SETTINGS
@given(games, st.integers(min_value=0, max_value=2**32))
def test_no_illegal_action_is_accepted(game: tuple[str, int, int, bool], seed2: int) -> None:
    name, number, seed, undo = game
    rng = random.Random(seed2)
    for state, a in play(start(name, number, undo), seed, 80):
        legal = set(legal_actions(state))
        n = state.variant.n_actions
        text = state.to_text()
        tries = [rng.randrange(n) for _ in range(20)]
        # near misses too: same source and target, one card more than legal
        tries += [x + state.variant.n_columns for x in legal if x < 1300]
        for x in tries:
            if x in legal or x >= n:
                continue
            try:
                apply(state, x)
            except IllegalMoveError as err:
                assert str(x) in str(err) and se.describe(state.variant, x) in str(err)
            else:
                raise AssertionError(f"illegal action {x} was accepted")
        assert state.to_text() == text
        if a is None:
            break


@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.sampled_from(NAMES), st.integers(min_value=0, max_value=2**20))
def test_random_games_run_to_their_end(name: str, seed: int) -> None:
    """Long games keep every invariant; those that end are won or truly stuck."""
    state = se.new_game(name, seed)
    rng = random.Random(seed)
    for _ in range(1500):
        legal = legal_actions(state)
        if not legal:
            break
        state = apply(state, rng.choice(legal))
    state.validate()
    if not legal_actions(state):
        assert state.won or (state.stock_cards == 0 or not all(state.cols))
        assert oracle_legal(state) == []


def test_oracle_agrees_along_the_golden_games() -> None:
    """The golden playthroughs include run removals, empty columns, a win and a stuck end."""
    import json
    from pathlib import Path

    removals = 0
    for path in sorted((Path(__file__).parent / "golden").glob("playthrough-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines()[1:]:
            rec = json.loads(line)
            state = State.from_text(rec["state_before"])
            assert legal_actions(state) == oracle_legal(state)
            for b in legal_actions(state):
                if state.variant.undo and b == state.variant.n_actions - 1:
                    continue
                nxt = apply(state, b)
                got = (nxt.cols, nxt.down, nxt.stock, nxt.completed, nxt.moves, nxt.deals)
                assert got + (nxt.reveals,) == oracle_after(state, b)
                removals += nxt.completed_runs - state.completed_runs
    assert removals > 10


@st.composite
def arbitrary_positions(draw: st.DrawFn) -> State:
    """Valid positions that random play seldom reaches: long suited runs, runs one move or one
    deal short of complete ("planted"), many empty columns, face-down cards under long runs."""
    name = draw(st.sampled_from(NAMES))
    v = se.get_variant(name)
    rng = random.Random(draw(st.integers(0, 2**32)))
    done = [0, 0, 0, 0]
    for _ in range(draw(st.integers(0, 6))):
        s_ = rng.choice(v.suit_ids)
        if done[s_] < v.copies_per_suit - 1:
            done[s_] += 1
    pool = se.core.deals.deck(v)
    for s_, n in enumerate(done):
        for _ in range(n):
            for r in range(13):
                pool.remove(s_ * 13 + r)
    rng.shuffle(pool)
    piles = draw(st.integers(0, 5))
    first_pile = 5 - piles
    # planted runs: K..(m+1) at the end of column ch, m..A at the end of column cl (a move
    # completes it) or the Ace in the next stock pile at index ch (the deal completes it)
    plants: list[tuple[int, tuple[int, ...], int, tuple[int, ...]]] = []
    aces: dict[int, int] = {}
    for _ in range(draw(st.integers(0, 3))):
        s_ = rng.choice(v.suit_ids)
        if not all((s_ * 13 + r) in pool for r in range(13)):
            continue
        for r in range(13):
            pool.remove(s_ * 13 + r)
        ch = rng.randrange(10)
        if piles and ch not in aces and rng.random() < 0.5:
            aces[ch] = s_ * 13
            plants.append((ch, tuple(range(s_ * 13 + 12, s_ * 13, -1)), -1, ()))
        else:
            m = rng.randrange(1, 13)
            cl = rng.choice([c for c in range(10) if c != ch])
            high = tuple(range(s_ * 13 + 12, s_ * 13 + m - 1, -1))
            low = tuple(range(s_ * 13 + m - 1, s_ * 13 - 1, -1))
            plants.append((ch, high, cl, low))
    if len(pool) < 10 * piles - len(aces):
        from hypothesis import reject

        reject()
    stock: list[tuple[int, ...]] = [()] * first_pile
    for j in range(piles):
        pile = []
        for c in range(10):
            if j == 0 and c in aces:
                pile.append(aces[c])
            else:
                pile.append(pool.pop())
        stock.append(tuple(pile))
    cuts = sorted(rng.randrange(len(pool) + 1) for _ in range(9))
    parts = [pool[a:b] for a, b in zip([0, *cuts], [*cuts, len(pool)])]
    cols: list[list[int]] = []
    down = []
    for part in parts:
        n_down = rng.randrange(len(part)) if part else 0
        face_up = part[n_down:]
        if rng.random() < 0.6:  # sorted by id, descending: long suited runs
            face_up = sorted(face_up, reverse=True)
        cols.append(part[:n_down] + face_up)
        down.append(n_down)
    for ch, high, cl, low in plants:
        cols[ch].extend(high)
        if cl >= 0:
            cols[cl].extend(low)
    for c in range(10):
        if cols[c] and down[c] == len(cols[c]):
            down[c] -= 1
    try:
        return State(
            v,
            tuple(tuple(c) for c in cols),
            tuple(down),
            tuple(stock),
            tuple(done),  # type: ignore[arg-type]
            deals=first_pile,
        )
    except ValueError:  # e.g. a complete run at a column's end: not a valid position
        from hypothesis import reject

        reject()


@settings(max_examples=300, deadline=None, derandomize=True)
@given(arbitrary_positions())
def test_oracle_agrees_on_arbitrary_positions(state: State) -> None:
    assert legal_actions(state) == oracle_legal(state)
    text = state.to_text()
    assert State.from_text(text) == state
    for b in legal_actions(state):
        nxt = apply(state, b)
        nxt.validate()
        got = (nxt.cols, nxt.down, nxt.stock, nxt.completed, nxt.moves, nxt.deals, nxt.reveals)
        assert got == oracle_after(state, b), (se.describe(state.variant, b), text)
        assert nxt.run_lengths == tuple(run_length(c, d) for c, d in zip(nxt.cols, nxt.down))
        assert State.from_text(nxt.to_text()) == nxt
    assert state.to_text() == text


ALL_VARIANTS = sorted(se.VARIANTS)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.sampled_from(ALL_VARIANTS), st.integers(0, 2**32), st.integers(0, 2**32))
def test_oracle_agrees_on_every_registered_variant(name: str, number: int, seed: int) -> None:
    """Every rule switch (relaxed deals, free column, chosen piles, same-suit building,
    any-face-up moves, Kings-only gaps, optional discards, undo) checked card by card."""
    v = se.get_variant(name)
    undo_id = v.n_actions - 1
    state = State.from_deal(se.generate_deal(v, number))
    rng = random.Random(seed)
    for _ in range(80):
        state.validate()
        legal = legal_actions(state)
        assert legal == oracle_legal(state), (name, state.to_text())
        assert state.score == oracle_score(state)
        assert State.from_text(state.to_text()) == state
        for b in legal:
            nxt = apply(state, b)
            if v.undo and b == undo_id:
                assert nxt.key() == state.prev.key()  # type: ignore[union-attr]
                continue
            got = (nxt.cols, nxt.down, nxt.stock, nxt.completed, nxt.moves, nxt.deals)
            assert got + (nxt.reveals,) == oracle_after(state, b), (name, b, state.to_text())
            assert nxt.run_lengths == tuple(run_length(c, d) for c, d in zip(nxt.cols, nxt.down))
            used = any(nxt.cols[c] for c in range(v.dealt_columns, v.n_columns))
            assert nxt.free_used == (state.free_used or used)
        if not legal:
            break
        state = apply(state, rng.choice(legal))
