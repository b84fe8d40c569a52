"""Differential tests: the compiled core (:mod:`spider_env.fast`) held to the pure engine.

The pure engine (:mod:`spider_env.core`) is the specification. At every step of random legal play
from several deals of every registered variant (undo variants with ``undo=false``: the compiled
core refuses undo histories), and for every legal action of planted positions that random play
seldom reaches, both engines play the same action and must agree exactly:

* legal ids (``kernel.legal_ids`` == ``rules.legal_actions``), terminal iff none;
* the next state vector == ``to_array`` of the pure next state (removals, reveals, counters,
  runs, stock and the end of the game follow from exact equality), ``from_array`` gives back an
  equal ``State``, ``kernel.score`` == ``State.score``;
* observations: the kernel's table / feature buffers, kept incrementally with the dirty mask
  ``apply_action`` returns, equal a fresh ``TableEncoder`` / ``FeatureEncoder`` encoding;
* rewards: ``kernel.reward`` equals the built-in reward classes bit for bit (default and other
  parameters);
* ``reset_deal`` == ``State.from_deal(generate_deal(...))``; ``state_hash`` / ``state_key``
  ignore counters and agree for equal positions reached in different orders.

``tests/differential.py`` runs the same comparison (without observations and rewards) for
millions of steps.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from conftest import position, run
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_properties import (
    COMPLETE,
    DEAL,
    MOVE,
    STACKED_DEAL,
    STACKED_MOVE,
    UNCOVER,
    plant_kinds,
    planted_position,
)

from spider_env.core import rules
from spider_env.core.deals import deck, generate_deal
from spider_env.core.rules import IllegalMoveError
from spider_env.core.state import State
from spider_env.core.variants import VARIANTS, Variant, get_variant
from spider_env.engine import compiled_feature_layout
from spider_env.fast import FastGame, available, layout, load_kernel
from spider_env.fast.layout import (
    CompiledCoreRefused,
    from_array,
    params,
    state_key,
    to_array,
)
from spider_env.observation import FeatureEncoder, TableEncoder, flat_width
from spider_env.rewards import RunsReward, ScoreReward, ShapedReward, WinReward

K = load_kernel()

NAMES = sorted(VARIANTS)


def playable(name: str) -> Variant:
    """The registered variant, with ``undo=false`` where it has undo."""
    v = get_variant(name)
    return v.with_options(undo=False) if v.undo else v


PLAYABLE = {name: playable(name) for name in NAMES}
SLOTS = (0, 1, 6, 60)  # feature_slots compared (60: more than any column shows face up here)

# (pure reward function, kernel mode, weights w): w[0] is the illegal-action penalty, never read
# for a legal action; w[1..4] as kernel.reward reads them.
RewardCase = tuple[Callable[[State, int, State], float], int, np.ndarray]


def _w(*ws: float) -> np.ndarray:
    out = np.zeros(5, dtype=np.float64)
    out[0] = -1.0
    out[1 : 1 + len(ws)] = ws
    return out


def reward_cases() -> list[RewardCase]:
    runs = [RunsReward(), RunsReward(win_bonus=-2.75), RunsReward(win_bonus=1 / 3)]
    shaped = [
        ShapedReward(),
        ShapedReward(run=0.3, reveal=1 / 3, win=123.456, step_cost=-0.07),
        ShapedReward(run=-1e-3, reveal=0.7, win=0.1, step_cost=0.2),
    ]
    cases: list[RewardCase] = [
        (ScoreReward(), layout.R_SCORE, _w()),
        (WinReward(), layout.R_WIN, _w()),
    ]
    cases += [(f, layout.R_RUNS, _w(f.win_bonus)) for f in runs]
    cases += [(f, layout.R_SHAPED, _w(f.run, f.reveal, f.win, f.step_cost)) for f in shaped]
    return cases


REWARDS = reward_cases()


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


def over_bound(state: State) -> bool:
    """A column longer than the observation's bound ``L`` (only positions given as a State get
    there): the state vector holds it (its columns have room for the deck), the table
    observation refuses it in both engines."""
    return max(map(len, state.cols)) > state.variant.max_column_length


class Mirror:
    """One position held by both engines, with the kernel's observation buffers kept
    incrementally (only the columns in the dirty mask of each action are rewritten)."""

    def __init__(self, state: State, slots: tuple[int, ...] = SLOTS, obs: bool = True) -> None:
        v = state.variant
        self.v = v
        self.pr = params(v)
        self.s = state
        self.st = to_array(state)
        self.ids = np.empty(v.n_actions + 1, dtype=np.int32)
        self.keys = np.empty(64, dtype=np.int64)
        self.obs = obs
        C, L = v.n_columns, v.max_column_length
        self.tab = np.full((C, L), 99, dtype=np.int8)
        self.comp = np.full(4, 99, dtype=np.int8)
        self.tops = np.full(len(v.stock), 99, dtype=np.int8)
        self.rows = {k: np.full(flat_width(v, k), 9.0, dtype=np.float32) for k in slots}
        self.layouts = {k: compiled_feature_layout(v, k) for k in slots}
        self.deals_left = -1
        self.table_ok = True  # False once a column outgrew L: the table is no longer kept
        if obs:
            self.write((1 << C) - 1, full=True)

    def copy(self) -> Mirror:
        m = object.__new__(Mirror)
        m.__dict__.update(self.__dict__)
        m.st = self.st.copy()
        m.tab, m.comp, m.tops = self.tab.copy(), self.comp.copy(), self.tops.copy()
        m.rows = {k: r.copy() for k, r in self.rows.items()}
        return m

    def write(self, dirty: int, full: bool = False, before: np.ndarray | None = None) -> None:
        """The kernel's observations of the ``dirty`` columns; ``before``: the columns'
        lengths at the last write (the table then rewrites only their ends)."""
        lengths = np.empty(0, dtype=np.int64) if before is None else before
        self.deals_left = K.write_table(
            self.pr, self.st, dirty, full, self.tab.reshape(-1), self.comp, self.tops, lengths
        )
        for k, row in self.rows.items():
            K.write_features(self.pr, self.st, dirty, self.layouts[k], row)

    def legal(self) -> list[int]:
        n = K.legal_ids(self.pr, self.st, self.ids, self.keys)
        return [int(x) for x in self.ids[:n]]

    def check(self, where: object) -> list[int]:
        """Everything the kernel says about the current position equals the pure engine's;
        returns the legal ids."""
        s, st = self.s, self.st
        legal = rules.legal_actions(s)
        got = self.legal()
        assert got == legal, (where, "legal ids", got, legal, s.to_text())
        ref = to_array(s)
        if not np.array_equal(st, ref):
            diff = np.flatnonzero(st != ref).tolist()
            raise AssertionError((where, "state vector differs at", diff, s.to_text()))
        assert from_array(self.v, st) == s, where
        assert int(K.score(self.pr, st)) == s.score, where
        assert (not got) == rules.is_terminal(s), where
        if self.obs:
            self.check_observations(where)
        return got

    def check_observations(self, where: object) -> None:
        s = self.s
        if self.table_ok and over_bound(s):  # a column outgrew L: both engines refuse it
            assert self.deals_left == -1, (where, "write_table accepted a column longer than L")
            with pytest.raises(RuntimeError, match="refusing to drop cards"):
                TableEncoder(self.v).encode(s)
            self.table_ok = False
        if not self.table_ok:
            self.check_features(where)
            return
        o = TableEncoder(self.v).encode(s)
        assert np.array_equal(self.tab, o["tableau"]), (where, "tableau", s.to_text())
        assert np.array_equal(self.comp, o["completed"]), (where, "completed")
        assert self.deals_left == int(o["deals_left"]), (where, "deals_left")
        if "pile_tops" in o:
            assert np.array_equal(self.tops, o["pile_tops"]), (where, "pile_tops")
        self.check_features(where)

    def check_features(self, where: object) -> None:
        s = self.s
        for k, row in self.rows.items():
            cols, g = FeatureEncoder(self.v, k).encode(s)
            flat = np.concatenate([cols.ravel(), g])
            assert row.dtype == flat.dtype and row.shape == flat.shape, (where, k)
            if not np.array_equal(row, flat):
                diff = np.flatnonzero(row != flat).tolist()
                raise AssertionError((where, f"features (slots={k}) differ at", diff))

    def step(self, a: int, where: object) -> list[int]:
        """Play legal ``a`` in both engines, compare rewards and everything after it."""
        s0, pr = self.s, self.pr
        s = rules.apply_legal(s0, a)
        score0 = int(K.score(pr, self.st))
        runs0 = int(K.completed_runs(self.st))
        reveals0 = int(self.st[layout.H_REVEALS])
        lengths = np.array([len(col) for col in s0.cols], dtype=np.int64)
        dirty = int(K.apply_action(pr, self.st, a))
        self.s = s
        changed = {
            c for c in range(self.v.n_columns) if s.cols[c] != s0.cols[c] or s.down[c] != s0.down[c]
        }
        marked = {c for c in range(self.v.n_columns) if dirty >> c & 1}
        assert dirty >> self.v.n_columns == 0, (where, a, "dirty bits past the columns")
        assert changed <= marked, (where, a, "changed columns not in the dirty mask", changed)
        if self.obs:
            self.write(dirty, before=lengths)
            for fn, mode, w in REWARDS:
                got = K.reward(pr, mode, w, score0, runs0, reveals0, self.st)
                want = fn(s0, a, s)
                assert bits(got) == bits(want), (where, a, repr(fn), got, want)
        return self.check((where, a))


def random_game(v: Variant, deal: int, seed: int, steps: int, obs: bool = True) -> Iterator[Mirror]:
    """Random legal play from ``deal`` in both engines, checked at every step."""
    m = Mirror(State.from_deal(generate_deal(v, deal)), obs=obs)
    st0 = np.empty_like(m.st)
    K.reset_deal(m.pr, st0, np.uint64(deal))
    assert np.array_equal(st0, m.st), (v.name, deal, "reset_deal")
    rng = random.Random(seed)
    legal = m.check((v.name, deal, 0))
    yield m
    for t in range(1, steps + 1):
        if not legal:
            return
        legal = m.step(rng.choice(legal), (v.name, deal, t))
        yield m


def check_every_action(state: State, where: object) -> int:
    """Each legal action of ``state``, from a copy, checked in both engines; returns how many."""
    m = Mirror(state)
    legal = m.check(where)
    done = 0
    for a in legal:
        m.copy().step(a, where)
        done += 1
    return done


# --- refusals ----------------------------------------------------------------------------------


def test_compiled_core_is_available() -> None:
    assert available()


@pytest.mark.parametrize("name", NAMES)
def test_undo_variants_are_refused(name: str) -> None:
    v = get_variant(name).with_options(undo=True)
    with pytest.raises(CompiledCoreRefused, match="undo"):
        params(v)
    with pytest.raises(CompiledCoreRefused):
        FastGame(v)
    s = State.from_deal(generate_deal(v, 0))
    with pytest.raises(CompiledCoreRefused):
        to_array(s)


def test_tournament_without_undo_is_playable() -> None:
    for suits in (1, 2):
        g = FastGame(f"spider-tournament-{suits}suit undo=false")
        st = g.initial(3)
        assert g.to_state(st) == State.from_deal(generate_deal(g.variant, 3))


# --- deals ---------------------------------------------------------------------------------------

DEAL_NUMBERS = [0, 1, 2, 3, 7, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**63 - 1, 2**63, 2**64 - 1]
_r = random.Random(10)
DEAL_NUMBERS += [_r.getrandbits(64) for _ in range(8)] + [_r.randrange(10**6) for _ in range(6)]


@pytest.mark.parametrize("name", NAMES)
def test_reset_deal_lays_out_the_pure_deal(name: str) -> None:
    v = PLAYABLE[name]
    pr = params(v)
    st = np.full(int(pr[layout.P_SIZE]), 77, dtype=np.int32)
    g = FastGame(v)
    for n in DEAL_NUMBERS:
        K.reset_deal(pr, st, np.uint64(n))
        want = to_array(State.from_deal(generate_deal(v, n)))
        assert np.array_equal(st, want), (name, n)
        assert np.array_equal(g.initial(n), want), (name, n)


def test_fastgame_initial_refuses_bad_deal_numbers() -> None:
    g = FastGame("spider-4suit")
    for bad in (-1, 2**64):
        with pytest.raises(ValueError):
            g.initial(bad)
    for wrong in (True, 1.0, "3"):
        with pytest.raises(TypeError):
            g.initial(wrong)  # type: ignore[arg-type]


# --- random play ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_random_play_agrees_step_by_step(name: str) -> None:
    """Legal ids, next state, score, observations and rewards at every step of random games."""
    v = PLAYABLE[name]
    steps = 0
    for deal in (0, 1, 2**63 + 5):
        for _m in random_game(v, deal, seed=deal % 1000 + 17, steps=90):
            steps += 1
    # lighter check (no observations) further into more games: ends of games, late deals
    for deal in (3, 4, 5, 6):
        for _m in random_game(v, deal, seed=deal, steps=400, obs=False):
            steps += 1
    assert steps > 300


# --- planted positions -------------------------------------------------------------------------


def _filler_plants(v: Variant) -> Iterator[tuple[list[str], bool]]:
    kinds = plant_kinds(v)
    for k in kinds:
        yield [k], False
        yield [k, k], True
    if DEAL in kinds:
        yield [DEAL, DEAL, DEAL], False
        yield [STACKED_DEAL, DEAL], True
    yield [STACKED_MOVE, UNCOVER], False
    yield [MOVE, UNCOVER, MOVE], True
    if COMPLETE in kinds:
        yield [COMPLETE, COMPLETE, STACKED_MOVE], False


@pytest.mark.parametrize("name", NAMES)
def test_planted_positions_agree_on_every_action(name: str) -> None:
    """Runs one move or one deal short of complete, stacked complete runs, runs under a movable
    card, optional discards (``test_properties.planted_position``), each legal action checked."""
    v = PLAYABLE[name]
    rng = random.Random(name)
    made = 0
    for round_ in range(3):
        for kinds, gaps in _filler_plants(v):
            s = planted_position(v, kinds, rng, gaps or round_ == 2)
            if s is None:
                continue
            made += 1
            check_every_action(s, (name, kinds))
    assert made >= 10


def near_win(v: Variant, m: int, how: str, rng: random.Random) -> State:
    """A position one action from the win: King..m+1 of spades ending column 0 and m..Ace ending
    column 1 (``how="move"``), King..Ace at the end of column 0 (``"discard"``), or King..2
    ending column 0 with the Ace first in the next pile (``"deal"``). The other cards are
    completed runs, then face-down filler under column 1 and in the piles."""
    need = v.runs_to_win - 1
    comp = [0, 0, 0, 0]
    for s in v.suit_ids:
        k = min(v.copies_per_suit - (1 if s == 0 else 0), need)
        comp[s] = k
        need -= k
    assert need == 0
    pool = deck(v)
    for s in range(4):
        for r in range(13):
            for _ in range(comp[s]):
                pool.remove(s * 13 + r)
    for card in range(13):
        pool.remove(card)
    rng.shuffle(pool)
    C, P = v.n_columns, len(v.stock)
    cols: list[list[int]] = [[] for _ in range(C)]
    stock: list[tuple[int, ...]] = [() for _ in range(P)]
    if how == "deal":
        j = rng.randrange(P) if v.choose_pile else P - 1
        stock[j] = (0, *(pool.pop() for _ in range(v.stock[j] - 1)))
        cols[0] = list(range(12, 0, -1))
    elif how == "discard":
        cols[0] = list(range(12, -1, -1))
    else:
        cols[0] = list(range(12, m - 1, -1))
        cols[1] = list(range(m - 1, -1, -1))
    down = [0] * C
    cols[1] = pool + cols[1]  # filler face down under column 1 (its last card up if no run)
    down[1] = len(pool) if len(cols[1]) > len(pool) else max(len(pool) - 1, 0)
    deals = sum(1 for p in stock if not p)
    return State(
        v,
        tuple(map(tuple, cols)),
        tuple(down),
        tuple(stock),
        (comp[0], comp[1], comp[2], comp[3]),
        moves=rng.randrange(0, 900),
        deals=deals,
        reveals=rng.randrange(0, 40),
    )


@pytest.mark.parametrize("name", NAMES)
def test_winning_actions_agree_with_rewards(name: str) -> None:
    """Wins by a move, by a deal (runs_to_win lowered so cards are left for a pile) and by a
    discard: the kernel's terminal state, score and every reward mode equal the pure engine's."""
    v = PLAYABLE[name]
    rng = random.Random(name)
    won = 0
    plans: list[tuple[Variant, str]] = [(v, "move")]
    if not v.auto_discard:
        plans.append((v, "discard"))
    if v.stock:
        plans.append((v.with_options(runs_to_win=v.suit_sets - 1), "deal"))
    for vv, how in plans:
        for m in (1, 5, 12):
            s = near_win(vv, m, how, rng)
            mirror = Mirror(s)
            for a in mirror.check((name, how, m)):
                after = mirror.copy()
                after.step(a, (name, how, m))
                won += after.s.won
    assert won >= len(plans)


def test_stacked_complete_runs_are_removed_one_after_another() -> None:
    # hearts complete under spades King..2: the Ace of spades completes both
    s = position(
        ["|9H " + run("H", 13) + " " + run("S", 13, 2), "|9D AS", "* 5C"]
        + ["5C", "6C", "6C", "7C", "7C", "8C", "8C"]
    )
    n = check_every_action(s, "stacked")
    assert n > 0
    after = rules.apply(s, 1 * 13 * 10 + 0)  # 1 card 1 -> 0
    assert sum(after.completed) == 2


def test_empty_columns_with_and_without_a_deal() -> None:
    base = ["* 9S", "-", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD"]
    no_deal = position(base, piles=2)
    assert rules.legal_actions(no_deal)[-1] < no_deal.variant.n_move_actions
    check_every_action(no_deal, "classic, empty column, stock left")
    relaxed = position(base, variant="spider-relaxed-4suit", piles=2)
    assert rules.legal_actions(relaxed)[-1] == relaxed.variant.n_move_actions
    check_every_action(relaxed, "relaxed: deal onto an empty column")
    v = PLAYABLE["spider-2suit"]
    half = tuple(range(25, -1, -1)) * 2  # ends in 6S..AS face up: six groups may move
    eight_empty = State(v, (half, half) + ((),) * 8, (46, 46) + (0,) * 8, ((),) * 5, deals=5)
    assert check_every_action(eight_empty, "eight empty columns, no stock") == 2 * 6 * 8
    tour = position(
        ["* 5S", "-", "-", "4S", "3S", "2S", "AS", "9S", "KS"],
        variant="spider-tournament-1suit undo=false",
        piles=2,
    )
    check_every_action(tour, "tournament: deal with empty columns, free column empty")


def test_long_columns_near_the_bound() -> None:
    for name in ("spider-1suit", "spider-4suit", "spiderette-1suit", "spider-culbertson"):
        v = PLAYABLE[name]
        L = v.max_column_length
        rest = v.n_cards - L + 1  # column 0 one short of L; the others share the rest
        cards = deck(v)
        random.Random(L).shuffle(cards)
        lengths = [L - 1] + [0] * (v.n_columns - 1)
        for i in range(rest):
            lengths[1 + i % (v.n_columns - 1)] += 1
        cols, at = [], 0
        for n in lengths:
            cols.append(tuple(cards[at : at + n]))
            at += n
        down = tuple(max(len(c) - 1, 0) for c in cols)
        s = State(v, tuple(cols), down, tuple(() for _ in v.stock), deals=len(v.stock))
        check_every_action(s, (name, "long column"))
    # scorpion: every card in one column, groups of any face-up cards
    v = PLAYABLE["scorpion"]
    cards = deck(v)
    random.Random(5).shuffle(cards)
    s = State(v, (tuple(cards),) + ((),) * 6, (3,) + (0,) * 6, ((),), deals=1)
    assert len(rules.legal_actions(s)) > 0
    check_every_action(s, "scorpion, one column of 52")


def test_scorpion_any_face_up_groups() -> None:
    s = position(
        ["* |2S |9H QC KH", "KD 5C 4C", "7C 6C 2H", "KC", "4D", "-", "3D 7S"],
        variant="scorpion",
        piles=1,
    )
    assert check_every_action(s, "scorpion groups") > 3


def test_culbertson_complete_runs_stay_split_or_are_discarded() -> None:
    v = "spider-culbertson"
    s = position(
        [
            "* |4C " + run("H", 13),
            run("S", 13),
            run("D", 13, 3),
            "2D",
            "AD 5C",
            "KC",
            "-",
            "8H",
            "9H",
            "TH",
        ],
        variant=v,
        piles=0,
    )
    m = Mirror(s)
    legal = m.check("culbertson")
    assert len([a for a in legal if a >= s.variant.n_move_actions]) == 2  # two discards
    for a in legal:
        m.copy().step(a, "culbertson")
    # split the spade run onto the empty column, then put it back and discard it
    rng = random.Random(3)
    for t in range(60):
        legal = m.legal()
        if not legal:
            break
        m.step(rng.choice(legal), ("culbertson walk", t))


def test_tournament_free_column_and_visible_pile_tops() -> None:
    v = PLAYABLE["spider-tournament-2suit"]
    for deal in range(4):
        m = Mirror(State.from_deal(generate_deal(v, deal)))
        rng = random.Random(deal)
        used = False
        for t in range(150):
            legal = m.check((deal, t))
            if not legal:
                break
            to_free = [
                a for a in legal if a < v.n_move_actions and a % v.n_columns == v.n_columns - 1
            ]
            deals_ = [a for a in legal if v.n_move_actions <= a < v.n_move_actions + 5]
            pick = rng.random()
            if to_free and pick < 0.3:
                a = rng.choice(to_free)
            elif deals_ and pick < 0.4:
                a = rng.choice(deals_)  # any pile, not only the first
            else:
                a = rng.choice(legal)
            m.step(a, (deal, t))
            used = used or m.s.free_used
        assert used


# --- hash and key --------------------------------------------------------------------------------


def _pairs_in_two_orders(m: Mirror, legal: list[int]) -> Iterator[tuple[State, State, Any, Any]]:
    """Positions reached from ``m`` by two legal actions in both orders (pure and kernel)."""
    for i, a in enumerate(legal):
        for b in legal[i + 1 :]:
            sa, sb = rules.apply_legal(m.s, a), rules.apply_legal(m.s, b)
            if b not in rules.legal_actions(sa) or a not in rules.legal_actions(sb):
                continue
            sab, sba = rules.apply_legal(sa, b), rules.apply_legal(sb, a)
            x, y = m.st.copy(), m.st.copy()
            K.apply_action(m.pr, x, a)
            K.apply_action(m.pr, x, b)
            K.apply_action(m.pr, y, b)
            K.apply_action(m.pr, y, a)
            yield sab, sba, x, y


@pytest.mark.parametrize("name", ["spider-4suit", "spider-tournament-1suit", "scorpion"])
def test_equal_positions_hash_equal_and_counters_do_not_change_the_key(name: str) -> None:
    v = PLAYABLE[name]
    g = FastGame(v)
    same = 0
    seen: dict[bytes, int] = {}
    for m in random_game(v, 11, seed=4, steps=60, obs=False):
        # counters are not part of the position
        s2 = m.s.replace(
            moves=m.s.moves + 3, undos=m.s.undos + 2, reveals=m.s.reveals + 1, free_used=True
        )
        st2 = to_array(s2)
        assert not np.array_equal(st2, m.st)
        assert state_key(st2) == state_key(m.st) and g.hash(st2) == g.hash(m.st)
        key = state_key(m.st)
        seen[key] = g.hash(m.st)
        legal = m.legal()
        for sab, sba, x, y in _pairs_in_two_orders(m, legal[:12]):
            assert np.array_equal(x, to_array(sab)) and np.array_equal(y, to_array(sba))
            assert (state_key(x) == state_key(y)) == (sab.key() == sba.key())
            if sab.key() == sba.key():
                same += 1
                assert g.hash(x) == g.hash(y)
        # there and back again: same table, two more moves
        for a in legal[:6]:
            t = rules.apply_legal(m.s, a)
            for b in rules.legal_actions(t):
                back = rules.apply_legal(t, b)
                if back.key() == m.s.key():
                    x = g.apply(g.apply(m.st, a), b)
                    assert not np.array_equal(x, m.st)
                    assert g.key(x) == g.key(m.st) and g.hash(x) == g.hash(m.st)
                    same += 1
    assert same > 0
    # different positions: different keys, and (FNV-1a, 64 bits) different hashes
    assert len(set(seen.values())) == len(seen)


# --- FastGame ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_fastgame_refuses_illegal_actions_like_the_rules(name: str) -> None:
    v = PLAYABLE[name]
    g = FastGame(v)
    st = g.initial(9)
    s = g.to_state(st)
    before = st.copy()
    legal = set(g.legal_actions(st).tolist())
    assert legal == set(rules.legal_actions(s))
    illegal = [a for a in range(v.n_actions) if a not in legal]
    for a in random.Random(name).sample(illegal, min(25, len(illegal))) + [-1, v.n_actions]:
        with pytest.raises((IllegalMoveError, ValueError)) as pure:
            rules.apply(s, a)
        with pytest.raises(type(pure.value)) as fast:
            g.apply(st, a)
        assert str(fast.value) == str(pure.value)
        assert np.array_equal(st, before)
    for a in legal:
        out = g.apply(st, a)
        assert np.array_equal(st, before)
        assert g.to_state(out) == rules.apply(s, a)
        inplace = st.copy()
        g.apply_inplace(inplace, a)
        assert np.array_equal(inplace, out)
    assert g.is_terminal(st) == rules.is_terminal(s)
    assert g.won(st) == s.won and g.score(st) == s.score
    assert np.array_equal(g.from_state(s), st) and g.key(st) == state_key(to_array(s))


def test_fastgame_refuses_non_int_actions_like_the_rules() -> None:
    g = FastGame("spider-1suit")
    st = g.initial(0)
    s = g.to_state(st)
    legal = int(g.legal_actions(st)[0])
    for bad in (float(legal), legal + 0.5, True, str(legal), None):
        with pytest.raises(TypeError) as pure:
            rules.apply(s, bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError) as fast:
            g.apply(st, bad)  # type: ignore[arg-type]
        assert str(fast.value) == str(pure.value)


def test_fastgame_plays_a_long_game_like_the_rules() -> None:
    g = FastGame("spider-1suit")
    st = g.initial(42)
    s = State.from_deal(generate_deal(g.variant, 42))
    rng = random.Random(0)
    for _ in range(1500):  # random play need not end: capped
        legal = g.legal_actions(st).tolist()
        assert legal == rules.legal_actions(s)
        assert g.is_terminal(st) == (not legal)
        if not legal:
            break
        a = rng.choice(legal)
        st, s = g.apply(st, a), rules.apply(s, a)
        assert g.to_state(st) == s


# --- property: random positions ------------------------------------------------------------------

PROPERTY = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@st.composite
def planted_states(draw: st.DrawFn) -> State:
    v = PLAYABLE[draw(st.sampled_from(NAMES))]
    kinds = draw(st.lists(st.sampled_from(plant_kinds(v)), min_size=1, max_size=3))
    seed = draw(st.integers(0, 2**32))
    s = planted_position(v, kinds, random.Random(seed), draw(st.booleans()))
    assume(s is not None)
    assert s is not None
    return s


@PROPERTY
@given(planted_states())
def test_property_every_action_of_a_planted_position_agrees(state: State) -> None:
    check_every_action(state, state.variant.name)


@PROPERTY
@given(
    st.sampled_from(NAMES),
    st.integers(0, 2**64 - 1),
    st.integers(0, 2**32),
    st.integers(0, 80),
)
def test_property_positions_along_random_play_agree(
    name: str, deal: int, seed: int, skip: int
) -> None:
    """A random position ``skip`` steps into a game of a random deal: all its actions agree."""
    v = PLAYABLE[name]
    s = State.from_deal(generate_deal(v, deal))
    rng = random.Random(seed)
    for _ in range(skip):
        legal = rules.legal_actions(s)
        if not legal:
            break
        s = rules.apply_legal(s, rng.choice(legal))
    check_every_action(s, (name, deal, seed, skip))


GROWING = (
    "spider-env state 1\nvariant: simple-simon\n"
    "counters: moves=0 deals=0 undos=0 reveals=0 free_used=false\n"
    "completed: S=0 H=0 D=0 C=0\ncol0: 5S 4S 3S 2S AS\ncol1: TC 4C\ncol2: 9H 3D JD TD 2C\n"
    "col3: KD 8D AD QH 8H 7H {six3} 2H AH\ncol4: KC 5C JC\n"
    "col5: 3H 5H 3C 4H 8C 7C 6C 7D TH 2D 6D KS QS JS TS 9S 8S 7S {six5}\n"
    "col6: KH\ncol7: 5D\ncol8: 9D\ncol9: QC 9C AC QD 4D JH\n"
)
MOVE_0_TO_5 = 45  # move the 5 cards of column 0 (5S..AS) onto column 5 (19 cards)


@pytest.mark.parametrize("six5, six3", [("6S", "6H"), ("6H", "6S")], ids=["run-goes", "stays"])
def test_positions_growing_past_the_observation_bound_play_exactly(six5: str, six3: str) -> None:
    """Hand-built simple-simon positions (L = 20) where a move makes a column of 24 cards: the
    spade run completes and goes (6S under it), or the column stays at 24 (6H): the state
    vector (room for the whole deck in every column) follows the pure engine, and the table
    observation of a column over L is refused by both engines."""
    s = State.from_text(GROWING.format(six5=six5, six3=six3))
    m = Mirror(s)
    m.check("start")
    m.step(MOVE_0_TO_5, (six5, "move 5 cards 0 -> 5"))
    assert over_bound(m.s) == (six5 == "6H")
    g = FastGame(s.variant)
    st = g.from_state(s)
    for a in (int(x) for x in g.legal_actions(st)):  # every action, from the same position
        assert np.array_equal(g.apply(st, a), to_array(rules.apply_legal(s, a)))
