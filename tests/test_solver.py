"""The perfect-information solver (:mod:`spider_env.search.solver`): won lines win under the pure
rules engine, hand-built wins and losses, budgets, determinism, undo variants, bad input.

Every won line is replayed here through :func:`spider_env.core.rules.apply` (each action checked
against :func:`~spider_env.core.rules.legal_actions` first), independently of the solver's own
check. Losses are checked against an exhaustive search of the pure engine.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from conftest import mv, position, random_position, run
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from spider_env.core import rules
from spider_env.core.actions import deal_id, move_parts, undo_id
from spider_env.core.deals import generate_deal
from spider_env.core.state import State
from spider_env.core.variants import VARIANTS, get_variant
from spider_env.search.solver import MAX_NODES, VERDICTS, Solver, SolveResult, check_budget, solve


def deal_state(variant: str, deal: int) -> State:
    return State.from_deal(generate_deal(variant, deal))


def replays_to_win(state: State, line: tuple[int, ...]) -> bool:
    """Play ``line`` with the pure engine, each action legal where it is played; won at the end."""
    s = state
    for a in line:
        if a not in rules.legal_actions(s):
            return False
        s = rules.apply(s, a)
    return s.won


def exhaustive_outcome(state: State, limit: int = 50_000) -> str:
    """``"won"`` / ``"lost"`` by visiting every position the pure engine reaches (counters left
    out of the key), ``"limit"`` past ``limit`` positions."""
    seen: set[tuple[object, ...]] = set()
    stack = [state]
    while stack:
        s = stack.pop()
        key = (s.cols, s.down, s.stock, s.completed)
        if key in seen:
            continue
        seen.add(key)
        if s.won:
            return "won"
        if len(seen) > limit:
            return "limit"
        stack.extend(rules.apply(s, a) for a in rules.legal_actions(s))
    return "lost"


# --- won lines ------------------------------------------------------------------------------------
# Deals best-first search wins within these budgets (a tenth of a second or less each); the
# beam's are in test_beam.py.
WON_DEALS = [
    ("spider-1suit", (1, 2, 4), 100_000),
    ("spider-2suit", (1, 2, 3), 100_000),
    ("simple-simon", (1, 8, 11), 100_000),
    ("spiderette-1suit", (0, 1, 3), 100_000),
    ("scorpion", (0, 41, 44), 200_000),
    ("spider-tournament-1suit", (0, 1), 100_000),  # has undo
    ("spider-tournament-2suit", (0, 1), 100_000),  # has undo
]


@pytest.mark.parametrize(("variant", "deals", "nodes"), WON_DEALS)
def test_won_lines_replay_to_a_win_through_the_pure_engine(
    variant: str, deals: tuple[int, ...], nodes: int
) -> None:
    for d in deals:
        s = deal_state(variant, d)
        r = solve(s, nodes=nodes, method="best-first")
        assert r.verdict == "won", (variant, d, r)
        assert r.won and r.budget == ""
        assert len(r.line) > 0
        assert replays_to_win(s, r.line), (variant, d)
        assert r.nodes > 0 and r.expansions > 0


def test_undo_variant_is_solved_with_its_own_action_ids() -> None:
    v = get_variant("spider-tournament-1suit")
    assert v.undo
    s = deal_state(v.name, 3)
    r = solve(s)
    assert r.won
    assert all(0 <= a < v.n_actions for a in r.line)
    assert undo_id(v) not in r.line  # solved without undo
    assert replays_to_win(s, r.line)  # in the variant with undo


def test_position_with_an_undo_history_is_solved_from_there() -> None:
    s = deal_state("spider-tournament-1suit", 0)
    rng = random.Random(3)
    for _ in range(40):  # a few moves, until the last one leaves an undo history
        moves = [a for a in rules.legal_actions(s) if a < s.variant.n_move_actions]
        s = rules.apply(s, rng.choice(moves))
        if s.moves >= 4 and s.prev is not None:
            break
    assert s.prev is not None
    r = solve(s)
    assert r.won
    assert replays_to_win(s, r.line)


# --- hand-built positions -------------------------------------------------------------------------
def test_position_one_move_from_a_win_is_won_with_that_move() -> None:
    s = position(
        [run("S", 13, 2), "AS", *["-"] * 8], variant="spider-1suit", completed=(7, 0, 0, 0)
    )
    for prune in (True, False):
        r = solve(s, nodes=1_000, prune=prune)
        assert r.verdict == "won"
        assert r.line == (mv(s, 1, 1, 0),)


def test_position_two_moves_from_a_win_is_won_with_the_two_moves() -> None:
    # 2S on a face-down AS: 2S onto 3S turns the ace up, the ace onto 2S completes the run
    s = position(
        [run("S", 13, 3), "|AS 2S", *["-"] * 8], variant="spider-1suit", completed=(7, 0, 0, 0)
    )
    for prune in (True, False):
        r = solve(s, nodes=1_000, prune=prune)
        assert r.verdict == "won"
        assert r.line == (mv(s, 1, 1, 0), mv(s, 1, 1, 0))
        assert replays_to_win(s, r.line)


def test_won_position_is_won_with_an_empty_line() -> None:
    s = position(["-"] * 10, variant="spider-1suit", completed=(8, 0, 0, 0))
    r = solve(s, nodes=10)
    assert (r.verdict, r.line, r.budget) == ("won", (), "")


def test_position_without_legal_moves_is_lost() -> None:
    # spiderette, three runs done: the tops A 3 5 7 9 J K take nothing, the stock is dealt
    s = position(
        ["|2S AS", "|4S 3S", "|6S 5S", "|8S 7S", "|TS 9S", "|QS JS", "KS"],
        variant="spiderette-1suit",
        completed=(3, 0, 0, 0),
    )
    assert rules.legal_actions(s) == [] and not s.won
    for prune in (False, True):  # nothing to prune: a proof either way
        r = solve(s, nodes=1_000, prune=prune)
        assert (r.verdict, r.line, r.budget) == ("lost", (), "")


@pytest.mark.parametrize(
    ("variant", "deal", "width"),
    [("simple-simon", 3, 3), ("scorpion", 14, 64)],
)
def test_deal_whose_every_line_dead_ends_is_lost_without_pruning(
    variant: str, deal: int, width: int
) -> None:
    s = deal_state(variant, deal)
    assert exhaustive_outcome(s) == "lost"  # the pure engine's own proof
    r = solve(s, nodes=200_000, prune=False, width=width, method="best-first")
    assert (r.verdict, r.line, r.budget) == ("lost", (), "")
    pruned = solve(s, nodes=200_000, prune=True, width=width, method="best-first")
    assert pruned.verdict == "unknown"  # moves left out: no loss claimed
    assert pruned.budget == "pruned"
    every = solve(s, nodes=200_000, prune=False, method="dfs")
    assert (every.verdict, every.line, every.budget) == ("lost", (), "")
    filtered = solve(s, nodes=200_000, prune=True, method="dfs")
    if variant == "scorpion":  # the filter leaves out renamed columns only: still a proof
        assert (filtered.verdict, filtered.budget) == ("lost", "")
    else:  # Simple Simon builds in any suit: real moves left out, no loss claimed
        assert (filtered.verdict, filtered.budget) == ("unknown", "pruned")


@pytest.mark.parametrize("deal", [1, 2, 7])
def test_depth_first_proves_the_scorpion_losses_the_pure_engine_finds(deal: int) -> None:
    s = deal_state("scorpion", deal)
    assert exhaustive_outcome(s, 200_000) == "lost"
    for prune in (True, False):
        r = solve(s, nodes=1_000_000, prune=prune, method="dfs")
        assert (r.verdict, r.line, r.budget) == ("lost", (), "")


@pytest.mark.parametrize("deal", [0, 16])
def test_depth_first_wins_scorpion_deals_and_its_lines_replay(deal: int) -> None:
    s = deal_state("scorpion", deal)
    r = solve(s, nodes=2_000_000, method="dfs")
    assert r.verdict == "won" and replays_to_win(s, r.line)


def test_depth_first_claims_no_loss_with_lines_cut_short() -> None:
    from spider_env.search.dfs import DepthFirstSolver

    s = deal_state("scorpion", 1)  # lost (above), its lines longer than 5 actions
    solver = DepthFirstSolver(s.variant, 100_000, max_depth=5)
    code, line = solver.run(solver.game.from_state(s))
    assert (VERDICTS[code], line, solver.stopped) == ("unknown", [], "depth")
    with pytest.raises(ValueError, match=r"max_depth must be an int in 1\.\.100,000, got 0"):
        DepthFirstSolver(s.variant, 10, max_depth=0)
    with pytest.raises(ValueError, match="at most 20,000,000"):
        DepthFirstSolver(s.variant, 20_000_001)


def test_depth_first_proves_only_where_its_filter_renames() -> None:
    from spider_env.search.dfs import DepthFirstSolver, scorpion_like

    proving = [name for name in VARIANTS if scorpion_like(get_variant(name))]
    assert proving == ["scorpion"]
    assert DepthFirstSolver(get_variant("scorpion"), 10).proves
    assert not DepthFirstSolver(get_variant("spider-1suit"), 10).proves
    assert DepthFirstSolver(get_variant("spider-1suit"), 10, prune=False).proves


# --- budgets --------------------------------------------------------------------------------------
def test_tiny_node_budget_gives_unknown_nodes() -> None:
    s = deal_state("spider-1suit", 0)
    r = solve(s, nodes=1)
    assert (r.verdict, r.line, r.budget) == ("unknown", (), "nodes")


@pytest.mark.parametrize("method", ["beam", "best-first", "dfs"])
def test_node_budget_runs_out_on_a_hard_deal(method: str) -> None:
    r = solve(deal_state("spider-4suit", 0), nodes=5_000, method=method)
    assert (r.verdict, r.budget) == ("unknown", "nodes")


@pytest.mark.parametrize("method", ["beam", "best-first", "dfs"])
def test_seconds_budget_stops_a_search(method: str) -> None:
    # 4-suit deal 0 takes about 0.5 s to win with the beam (and is not won in 5M positions by
    # best-first search); the clock stops the search long before
    solve(deal_state("spider-4suit", 0), nodes=100, method=method)  # compiled before the clock
    r = solve(deal_state("spider-4suit", 0), nodes=2_000_000, seconds=0.05, method=method)
    assert (r.verdict, r.line, r.budget) == ("unknown", (), "seconds")
    assert r.nodes < 2_000_000


@pytest.mark.parametrize("method", ["beam", "best-first", "dfs"])
def test_search_is_deterministic(method: str) -> None:
    for variant, deal in (("spider-2suit", 1), ("spider-4suit", 0)):
        s = deal_state(variant, deal)
        a = solve(s, nodes=50_000, method=method)
        b = solve(s, nodes=50_000, method=method)
        assert (a.verdict, a.line, a.nodes, a.expansions, a.budget) == (
            b.verdict,
            b.line,
            b.nodes,
            b.expansions,
            b.budget,
        )


def test_solver_object_can_be_reused() -> None:
    from spider_env.fast.layout import to_array

    s = deal_state("spiderette-1suit", 0)
    solver = Solver(s.variant, 100_000)
    first = solver.run(to_array(s))
    second = solver.run(to_array(s))
    assert first[0] == second[0] and first[1] == second[1]
    assert replays_to_win(s, tuple(first[1]))


# --- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["beam", "best-first", "dfs"])
@pytest.mark.parametrize(
    ("nodes", "error"),
    [(0, ValueError), (-1, ValueError), (MAX_NODES + 1, ValueError), (True, TypeError),
     (1.5, TypeError), ("100", TypeError)],
)  # fmt: skip
def test_bad_node_budget_is_refused(nodes: object, error: type[Exception], method: str) -> None:
    s = deal_state("spider-1suit", 0)
    with pytest.raises(error, match=r"^nodes must be an int in 1\.\.50,000,000, got "):
        solve(s, nodes=nodes, method=method)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("seconds", "error"),
    [(0, ValueError), (-1, ValueError), (math.nan, ValueError), (math.inf, ValueError),
     (-math.inf, ValueError), ("1", TypeError), (True, TypeError)],
)  # fmt: skip
def test_bad_seconds_budget_is_refused(seconds: object, error: type[Exception]) -> None:
    s = deal_state("spider-1suit", 0)
    with pytest.raises(error, match=r"^seconds must be a (finite )?number in \(0, inf\]"):
        solve(s, nodes=10, seconds=seconds)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("method", "width", "error"),
    [
        *[("best-first", w, ValueError) for w in (0, -1, 65)],
        *[("beam", w, ValueError) for w in (0, -1, 100_001)],
        *[(m, w, TypeError) for m in ("best-first", "beam") for w in (True, 2.0)],
    ],
)
def test_bad_width_is_refused(method: str, width: object, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"^width must be an int in 1"):
        solve(deal_state("spider-1suit", 0), nodes=10, width=width, method=method)  # type: ignore[arg-type]


def test_depth_first_search_has_no_width() -> None:
    with pytest.raises(ValueError, match="width is not a setting of the depth-first solver"):
        solve(deal_state("scorpion", 0), nodes=10, width=3, method="dfs")


@pytest.mark.parametrize("method", ["", "Beam", "bfs", None, 1])
def test_unknown_method_is_refused(method: object) -> None:
    with pytest.raises(ValueError, match="method must be one of auto, beam, best-first"):
        solve(deal_state("spider-1suit", 0), nodes=10, method=method)  # type: ignore[arg-type]


@pytest.mark.parametrize("state", [None, "spider-1suit", 0, generate_deal("spider-1suit", 0)])
def test_non_state_is_a_type_error(state: object) -> None:
    with pytest.raises(TypeError, match="State"):
        solve(state, nodes=10)  # type: ignore[arg-type]


def test_check_budget_accepts_and_normalises_good_values() -> None:
    assert check_budget(np.int64(5), 2) == (5, 2.0)
    assert check_budget(MAX_NODES, None) == (MAX_NODES, None)
    assert check_budget(1, 0.25) == (1, 0.25)


# --- a property -----------------------------------------------------------------------------------
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(
    variant=st.sampled_from(["spider-1suit", "spiderette-1suit", "spider-2suit", "simple-simon"]),
    deal=st.integers(0, 2**32),
    seed=st.integers(0, 2**16),
    steps=st.integers(0, 40),
)
def test_won_lines_from_random_positions_win(
    variant: str, deal: int, seed: int, steps: int
) -> None:
    """From a position reached by random legal play, a won line replays to a win; any other
    verdict comes with no line."""
    s = random_position(deal_state(variant, deal), random.Random(seed), steps)
    r = solve(s, nodes=20_000)
    event(r.verdict)
    assert isinstance(r, SolveResult)
    assert r.verdict in VERDICTS
    if r.won:
        assert replays_to_win(s, r.line)
    else:
        assert r.line == ()
        if r.verdict == "lost":
            assert r.budget == ""
        else:
            assert r.budget in ("nodes", "seconds", "pruned", "depth")


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(deal=st.integers(0, 2**32), seed=st.integers(0, 2**16), steps=st.integers(0, 30))
def test_depth_first_search_with_the_filter_decides_scorpion_as_without_it(
    deal: int, seed: int, steps: int
) -> None:
    """On Scorpion the filter leaves out renamed positions only: from a position reached by
    random legal play, depth-first search with it and without it (every legal move) never
    disagree where both finish, and a loss proven without the filter is proven with it (it
    has fewer positions to search)."""
    s = random_position(deal_state("scorpion", deal), random.Random(seed), steps)
    pruned = solve(s, nodes=150_000, method="dfs")
    every = solve(s, nodes=150_000, method="dfs", prune=False)
    event(f"{pruned.verdict} / {every.verdict}")
    if "unknown" not in (pruned.verdict, every.verdict):
        assert pruned.verdict == every.verdict
    if every.verdict == "lost":
        assert pruned.verdict == "lost" and pruned.nodes <= every.nodes
    for r in (pruned, every):
        assert r.verdict != "won" or replays_to_win(s, r.line)


def test_the_filter_keeps_empty_columns_apart_that_the_reserve_treats_differently() -> None:
    """Scorpion's reserve deals onto columns 0-2 only: before it is dealt, a King moved into
    empty column 0 and one moved into empty column 4 make different games. The beam's filter
    (the beam's, the planner's closure's and depth-first search's) keeps the first empty column
    of each kind the reserve makes as a target, and of all seven once it is dealt."""
    from spider_env.fast.game import FastGame
    from spider_env.search.beam import alike_split, filtered, first_empties

    cols = ["-", "* 5H", "4D KS", "3C", "-", "2S", "9H"]
    s = position(cols, variant="scorpion", piles=1)
    game = FastGame("scorpion")
    st, pr = game.from_state(s), game.params
    deal = deal_id(s.variant)
    moves = [int(a) for a in game.legal_actions(st) if int(a) != deal]
    king_to = {dst: a for a in moves for src, k, dst in [move_parts(s.variant, a)] if src == 2}
    assert sorted(king_to) == [0, 4]
    stock = s.deals_left
    kept = [d for d, a in king_to.items() if not filtered(pr, st, a, *first_empties(pr, st), stock)]
    assert (alike_split(pr, st), first_empties(pr, st), sorted(kept)) == (3, (0, 4), [0, 4])
    dealt = game.apply(st, deal)
    assert alike_split(pr, dealt) == 7  # nothing left to deal: the seven columns alike


def test_the_planners_closure_deals_from_either_kind_of_empty_column() -> None:
    """The planner's list of candidates goes through the same filter: from the position above,
    it deals from three positions (the King left in place, moved into column 0, moved into
    column 4), not two."""
    from spider_env.search.plan import PlanSearch

    cols = ["-", "* 5H", "4D KS", "3C", "-", "2S", "9H"]
    s = position(cols, variant="scorpion", piles=1)
    search = PlanSearch(get_variant("scorpion"))
    won, ev_node, ev_action = search.closure(search.game.from_state(s))
    assert won < 0 and set(ev_action.tolist()) == {deal_id(s.variant)}
    king_to = sorted(
        move_parts(s.variant, a)[2] if a is not None else -1
        for path in (search.path(int(n)) for n in ev_node)
        for a in [path[0] if path else None]
    )
    assert king_to == [-1, 0, 4]
