"""The search interface of the compiled core (:mod:`spider_env.fast.game`) held to the pure engine.

Along random play of every registered variant (undo variants with ``undo=false``), at positions a
few steps apart:

* :class:`FastGame`'s reads of a position (completed runs, columns, face-down counts, piles, the
  slots of cards, the hidden ones) equal the :class:`State`'s, and the hidden cards are the ones
  the player's view (:class:`TableView`) has not seen;
* :meth:`FastGame.swap` of two cards gives the state vector of the :class:`State` built with those
  two cards exchanged (run lengths recomputed by the pure engine);
* the compiled functions search code calls (reads, move decoding, buffers, packing) agree with
  the :class:`State` and with :mod:`spider_env.core.actions`.
"""

from __future__ import annotations

import copy
import pickle
import random
from collections.abc import Iterator

import numpy as np
import pytest
from test_fast_differential import NAMES, PLAYABLE

from spider_env.core import rules
from spider_env.core.actions import DEAL, MOVE, decode, move_parts
from spider_env.core.deals import generate_deal
from spider_env.core.state import State
from spider_env.core.variants import Variant
from spider_env.fast import game as G
from spider_env.fast.game import FastGame
from spider_env.fast.layout import to_array
from spider_env.observation.view import TableView

Place = tuple[str, int, int]  # ("col", column, index) or ("pile", pile, index)


def positions(v: Variant, deals: tuple[int, ...] = (0, 1), steps: int = 150) -> Iterator[State]:
    """Positions every 10 steps of random legal play from ``deals`` (and the last one)."""
    for deal in deals:
        s = State.from_deal(generate_deal(v, deal))
        rng = random.Random(deal)
        for step in range(steps):
            legal = rules.legal_actions(s)
            if step % 10 == 0 or not legal:
                yield s
            if not legal:
                break
            s = rules.apply_legal(s, rng.choice(legal))


def hidden_places(s: State) -> list[Place]:
    """Where the cards a player does not see lie, in :meth:`FastGame.hidden_slots`' order."""
    out: list[Place] = [("col", c, i) for c, d in enumerate(s.down) for i in range(d)]
    first = 1 if s.variant.pile_top_visible else 0
    for j, pile in enumerate(s.stock):
        if pile:
            out += [("pile", j, i) for i in range(first, len(pile))]
    return out


def card_places(s: State) -> list[Place]:
    """Every card of the position: the columns', then the piles'."""
    out: list[Place] = [("col", c, i) for c, col in enumerate(s.cols) for i in range(len(col))]
    return out + [("pile", j, i) for j, pile in enumerate(s.stock) for i in range(len(pile))]


def card_of(s: State, place: Place) -> int:
    kind, x, i = place
    return (s.cols if kind == "col" else s.stock)[x][i]


def slot_of(g: FastGame, place: Place) -> int:
    kind, x, i = place
    return g.column_slot(x, i) if kind == "col" else g.pile_slot(x, i)


def swapped(s: State, a: Place, b: Place) -> State:
    """``s`` with the cards at ``a`` and ``b`` exchanged, built (and validated) by the State."""
    lines = {"col": [list(c) for c in s.cols], "pile": [list(p) for p in s.stock]}
    (ka, xa, ia), (kb, xb, ib) = a, b
    lines[ka][xa][ia], lines[kb][xb][ib] = lines[kb][xb][ib], lines[ka][xa][ia]
    cols = tuple(tuple(c) for c in lines["col"])
    stock = tuple(tuple(p) for p in lines["pile"])
    return State(
        s.variant, cols, s.down, stock, s.completed, s.moves, s.deals, s.undos, s.reveals,
        s.free_used,
    )  # fmt: skip


# --- FastGame: reading a position -----------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_reads_of_a_position_equal_the_states(name: str) -> None:
    v = PLAYABLE[name]
    g = FastGame(v)
    for s in positions(v):
        st = g.from_state(s)
        assert g.completed(st) == s.completed
        assert g.won(st) == s.won
        for c, col in enumerate(s.cols):
            assert g.column(st, c).tolist() == list(col)
            assert g.face_down(st, c) == s.down[c]
        for j, pile in enumerate(s.stock):
            assert g.pile(st, j).tolist() == list(pile)
        for place in card_places(s):
            assert st[slot_of(g, place)] == card_of(s, place)


@pytest.mark.parametrize("name", NAMES)
def test_hidden_slots_hold_the_cards_the_player_has_not_seen(name: str) -> None:
    v = PLAYABLE[name]
    g = FastGame(v)
    for s in positions(v):
        st = g.from_state(s)
        slots = g.hidden_slots(st)
        assert slots == [slot_of(g, p) for p in hidden_places(s)]
        cards = [card_of(s, p) for p in hidden_places(s)]
        assert st[slots].tolist() == cards
        assert sorted(cards) == TableView.from_state(s).unseen_cards()


def test_column_returns_a_copy() -> None:
    g = FastGame("spider-1suit")
    st = g.initial(0)
    before = st.copy()
    g.column(st, 0)[:] = 0
    g.pile(st, 0)[:] = 0
    assert np.array_equal(st, before)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda g, st: g.column(st, 10), IndexError, "column 10 out of range 0..9"),
        (lambda g, st: g.face_down(st, -1), IndexError, "column -1 out of range"),
        (lambda g, st: g.pile(st, 5), IndexError, "pile 5 out of range 0..4"),
        (lambda g, st: g.column_slot(0, 104), IndexError, "card 104 out of range 0..103"),
        (lambda g, st: g.pile_slot(0, 10), IndexError, "card 10 out of range 0..9"),
        (lambda g, st: g.column_slot(True, 0), TypeError, "column must be an int"),
        (lambda g, st: FastGame("simple-simon").pile_slot(0, 0), IndexError, r"pile 0 .* \(none\)"),
        (lambda g, st: g.column(st, 1.0), TypeError, "column must be an int"),
    ],
)
def test_bad_column_pile_or_card_index_is_refused_by_name(
    call: object, error: type[Exception], match: str
) -> None:
    g = FastGame("spider-1suit")
    with pytest.raises(error, match=match):
        call(g, g.initial(0))  # type: ignore[operator]


# --- FastGame: swapping two cards -----------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_swapping_two_cards_gives_the_state_the_pure_engine_builds(name: str) -> None:
    """Pairs of hidden cards (the expert's repairs), a hidden and a face-up card, two face-up
    cards, a face-up card and a pile's: the state vector after :meth:`FastGame.swap` (run
    lengths refreshed) is ``to_array`` of the State with the two cards exchanged."""
    v = PLAYABLE[name]
    g = FastGame(v)
    rng = random.Random(name)
    checked = 0
    for s in positions(v):
        hidden = hidden_places(s)
        shown = [p for p in card_places(s) if p not in set(hidden)]
        pairs = [(hidden, hidden), (hidden, shown), (shown, shown)]
        for first, second in pairs:
            if len(first) < 1 or len(second) < 1:
                continue
            a, b = rng.choice(first), rng.choice(second)
            if a == b:
                continue
            try:
                want = swapped(s, a, b)
            except ValueError:  # e.g. a complete run left on the table where runs go at once
                continue
            st = g.from_state(s)
            g.swap(st, slot_of(g, a), slot_of(g, b))
            assert np.array_equal(st, to_array(want)), (name, a, b)
            g.swap(st, slot_of(g, b), slot_of(g, a))
            assert np.array_equal(st, to_array(s))
            checked += 1
    assert checked >= 10


def test_swap_changes_the_suited_run_of_the_columns_it_touches() -> None:
    # spider-1suit deal 0 played until a column ends in a run of two or more: swapping the
    # card under its top card with a hidden card breaks that run (unless it brings the same card)
    g = FastGame("spider-1suit")
    s = next(
        s for s in positions(g.variant, deals=(0, 1, 2)) if max(s.run_lengths) >= 2 and s.stock
    )
    st = g.from_state(s)
    c = s.run_lengths.index(max(s.run_lengths))
    under = ("col", c, len(s.cols[c]) - 2)
    other = next(p for p in hidden_places(s) if card_of(s, p) != card_of(s, under))
    g.swap(st, slot_of(g, under), slot_of(g, other))
    assert g.to_state(st).run_lengths[c] == 1 == swapped(s, under, other).run_lengths[c]


def test_swap_refuses_a_slot_without_a_card() -> None:
    g = FastGame("spider-1suit")
    st = g.initial(0)
    before = st.copy()
    past_end = g.column_slot(0, len(g.column(st, 0)))
    for bad in (0, past_end, g.size):
        with pytest.raises((ValueError, IndexError), match=f"slot {bad}"):
            g.swap(st, g.column_slot(0, 0), bad)
    with pytest.raises(TypeError, match="slot must be an int"):
        g.swap(st, g.column_slot(0, 0), 1.5)  # type: ignore[arg-type]
    assert np.array_equal(st, before)


# --- the compiled functions search code calls -----------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_compiled_reads_equal_the_states(name: str) -> None:
    v = PLAYABLE[name]
    g = FastGame(v)
    pr = g.params
    assert G.n_columns(pr) == v.n_columns
    assert G.n_piles(pr) == len(v.stock)
    assert G.builds_any_suit(pr) == (v.build == "any-suit")
    for s in positions(v):
        st = g.from_state(s)
        assert G.is_won(pr, st) == s.won
        assert G.completed_runs(st) == s.completed_runs
        assert G.deals_left(pr, st) == s.deals_left
        assert (G.moves_made(st), G.deals_made(st)) == (s.moves, s.deals)
        for c, col in enumerate(s.cols):
            assert G.column_length(pr, st, c) == len(col)
            assert G.face_down(pr, st, c) == s.down[c]
            assert [G.card_at(pr, st, c, i) for i in range(len(col))] == list(col)
        for j, pile in enumerate(s.stock):
            assert G.pile_size(pr, st, j) == len(pile)
            assert [G.pile_card(pr, st, j, i) for i in range(len(pile))] == list(pile)


@pytest.mark.parametrize("name", NAMES)
def test_move_ids_decode_as_the_core_decodes_them(name: str) -> None:
    v = PLAYABLE[name]
    pr = FastGame(v).params
    for a in range(v.n_actions):
        kind = decode(v, a).kind
        assert G.is_move(pr, a) == (kind == MOVE)
        assert G.is_deal(pr, a) == (kind == DEAL)
        if kind == MOVE:
            assert G.decode_move(pr, a) == move_parts(v, a)


@pytest.mark.parametrize("name", NAMES)
def test_packed_positions_and_copies_give_back_the_state(name: str) -> None:
    v = PLAYABLE[name]
    g = FastGame(v)
    pr = g.params
    ps = list(positions(v, deals=(0,)))
    records = G.new_records(pr, len(ps))
    for s, rec in zip(ps, records):
        G.pack(pr, to_array(s), rec)
    for s, rec in zip(ps, records):
        st = np.full(g.size, -1, dtype=np.int32)  # unpack writes the slots in use only
        G.unpack(pr, rec, st)
        assert np.array_equal(st, to_array(s))
        copy = np.full(g.size, -1, dtype=np.int32)
        G.copy_state(pr, st, copy)
        assert np.array_equal(copy, st)
        assert G.position_hash(pr, copy) == g.hash(to_array(s))


@pytest.mark.parametrize("name", NAMES)
def test_children_played_on_one_copy_hash_and_rank_as_their_own_positions(name: str) -> None:
    """The searches' children (``spider_env.search.beam``): each legal action played on one
    copy of the parent, made the parent again from the columns the last one changed
    (``play_child``), gives the position the pure engine plays; its hash from the parent's parts
    (``child_hash``) and its rank from the parent's columns (``ranked``) equal its own."""
    from spider_env.search.beam import (
        chaos_key,
        child_hash,
        column_disorder,
        play_child,
        ranked,
        ready_children,
    )

    v = PLAYABLE[name]
    g = FastGame(v)
    pr = g.params
    records = G.new_records(pr, 2)
    parts = np.empty(v.n_columns + len(v.stock), dtype=np.uint64)
    children = 0
    for s in positions(v, deals=(0, 1)):
        st = to_array(s)
        child = np.full_like(st, -1)
        # (as uint64 again: returned to Python they are ints, which numba would type as int64)
        head = tuple(np.uint64(x) for x in ready_children(pr, st, child, parts))
        assert head[0] == G.position_hash(pr, st)
        disorder = [column_disorder(pr, st, c) for c in range(v.n_columns)]
        dirty = 0
        for a in rules.legal_actions(s):
            dirty = play_child(pr, st, child, a, dirty)
            want = to_array(rules.apply_legal(s, a))
            G.pack(pr, child, records[0])
            G.pack(pr, want, records[1])
            assert np.array_equal(records[0], records[1]), (name, a)
            assert child_hash(pr, child, dirty, head, parts) == G.position_hash(pr, want)
            if dirty >= 0:
                changed = [c for c in range(v.n_columns) if (dirty >> c) & 1]
                total = sum(disorder) + sum(
                    column_disorder(pr, child, c) - disorder[c] for c in changed
                )
                assert ranked(pr, child, total) == chaos_key(pr, want)
            children += 1
    assert children > 0


@pytest.mark.parametrize("name", NAMES)
def test_buffers_fit_the_variant(name: str) -> None:
    v = PLAYABLE[name]
    g = FastGame(v)
    pr = g.params
    st = G.new_state(pr)
    assert st.shape == (g.size,) and st.dtype == np.int32
    s = State.from_deal(generate_deal(v, 3))
    ids, keys = G.legal_buffers(pr)
    assert ids.shape == (v.n_actions + 1,)
    n = G.legal_ids(pr, to_array(s), ids, keys)
    assert ids[:n].tolist() == rules.legal_actions(s)
    a = rules.legal_actions(s)[0]
    st = to_array(s)
    G.apply_action(pr, st, a)
    assert np.array_equal(st, to_array(rules.apply_legal(s, a)))


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'run_length'"):
        G.run_length  # noqa: B018 - not part of the interface
    assert set(G.__all__) >= {"FastGame", "legal_ids", "apply_action", "position_hash"}


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_copies_of_a_game_and_of_its_searches_keep_the_read_only_parameter_vector(
    how: str,
) -> None:
    """A writable copy of the parameter vector is a numba signature of its own: every compiled
    function the copy reaches would be compiled a second time."""
    from spider_env.core.variants import get_variant
    from spider_env.fast.layout import params
    from spider_env.search.beam import BeamSolver
    from spider_env.search.dfs import DepthFirstSolver
    from spider_env.search.plan import PlanSearch
    from spider_env.search.solver import Solver

    v = get_variant("spider-2suit")
    pr = params(v)
    assert not pr.flags.writeable
    for obj in (FastGame(v), BeamSolver(v), Solver(v), DepthFirstSolver(v), PlanSearch(v)):
        twin = pickle.loads(pickle.dumps(obj)) if how == "pickle" else copy.deepcopy(obj)
        got = twin.params if isinstance(twin, FastGame) else twin.pr
        assert got is pr, type(obj).__name__
