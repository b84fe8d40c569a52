"""A perfect-information solver on the compiled core: given a whole position (face-down cards and
stock known), search for a line of play that wins.

Best-first search over the compiled core's state vectors, in numba, through the core's search
interface (:mod:`spider_env.fast.game`: legal ids, apply, hash, reads of a position, packing):

* **Nodes** are positions, stored packed (``pack``: counters, column lengths, face-down counts,
  the cards of each column and of each pile), with their parent and the action that led there,
  so the line to any node is read back without storing it.
* **Order**: the open list is a binary heap on a static evaluation of the position (completed
  runs first, then face-down cards left, cards lying on their own suit's next card, empty
  columns, cards out of order); among equal values the newest node first.
* **Transposition table**: a 64-bit hash of every position generated (cards, face-down counts,
  stock, completed runs; not the counters), so no position is queued twice and move loops are
  cut.
* **Obviously pointless moves are not generated**: moving a column's whole face-up part, with
  nothing face down under it, into an empty column (the same table in another place); and
  splitting a group off the card of its own suit just above it onto another card (it frees a
  card of the same rank and suit as the one it moves onto); in games without a stock (Simple
  Simon), also moving a group off a next card of another suit, unless onto its own suit's.
  A search with these left out (``prune=True``, the default) still finds wins; a loss is proven
  only by a search that ran out of positions without leaving anything out (``prune=False``, or
  a position where nothing was pruned).
* **Budget**: positions stored (``nodes``) and optionally seconds; the search runs in slices of
  expansions and checks the clock between them.

The verdict is ``"won"`` (the line, replayed through the pure rules engine before it is
returned), ``"lost"`` (every position reachable was searched, none wins: a proof, up to 64-bit
hash collisions) or ``"unknown"`` (the budget ran out first, or moves were pruned). Undo changes
no outcome: a variant with undo is solved without it (the action ids are the same).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from spider_env.core import rules
from spider_env.core.cards import N_RANKS
from spider_env.core.checks import check_int
from spider_env.core.state import State
from spider_env.core.variants import Variant
from spider_env.fast.game import (
    FastGame,
    OnGame,
    builds_any_suit,
    card_at,
    column_length,
    completed_runs,
    copy_state,
    deals_left,
    deals_made,
    decode_move,
    face_down,
    is_deal,
    is_move,
    is_won,
    legal_buffers,
    legal_ids,
    moves_made,
    n_columns,
    n_piles,
    new_records,
    new_state,
    on_own_suit,
    pack,
    play_action,
    position_hash,
    unpack,
)
from spider_env.fast.jit import jit, refresh_cache
from spider_env.search.beam import (
    LOST,
    RUNNING,
    UNKNOWN,
    WON,
    BeamSolver,
    child_hash_call,
    hash_insert,
    play_child_call,
    ready_children_call,
    trace_line,
)
from spider_env.search.budget import (
    DEFAULT_BEAM_NODES,
    DEFAULT_DFS_NODES,
    DEFAULT_NODES,
    MAX_NODES,
    METHODS,
    check_budget,
)
from spider_env.search.dfs import DepthFirstSolver, scorpion_like

VERDICTS = ("won", "lost", "unknown")

#: Weights of :func:`evaluate`, by index: completed run, face-down card (minus), empty column,
#: card on its own suit's next card, card on a next card of another suit, card out of order
#: (minus), deal made, move made (minus). Chosen by trying a few sets on deals 0..9 and
#: 100..119 of 1, 2 and 4 suits (the solver in docs/guide/players.md).
W_RUN, W_DOWN, W_EMPTY, W_SUITED, W_RANKED, W_BREAK, W_DEAL, W_MOVE = range(8)
DEFAULT_WEIGHTS = (5000, 120, 250, 80, 0, 60, 0, 5)
SLICE = 1024  # expansions between two looks at the clock


# --- evaluation and pruning ----------------------------------------------------------------------
@jit
def evaluate(pr: np.ndarray, st: np.ndarray, w: np.ndarray) -> np.int64:
    """How promising a position is (higher is better; weights ``w``, indices ``W_*``)."""
    any_suit = builds_any_suit(pr)
    v = np.int64(
        w[W_RUN] * completed_runs(st) + w[W_DEAL] * deals_made(st) - w[W_MOVE] * moves_made(st)
    )
    for c in range(n_columns(pr)):
        n = column_length(pr, st, c)
        if n == 0:
            v += w[W_EMPTY]
            continue
        d = face_down(pr, st, c)
        v -= w[W_DOWN] * d
        prev = card_at(pr, st, c, d)
        for i in range(d + 1, n):
            x = card_at(pr, st, c, i)
            if on_own_suit(x, prev):
                v += w[W_SUITED]
            elif any_suit and x % N_RANKS + 1 == prev % N_RANKS:
                v += w[W_RANKED]
            else:
                v -= w[W_BREAK]
            prev = x
    return v


@jit
def _pointless(pr: np.ndarray, st: np.ndarray, a: int) -> bool:
    """Whether move ``a`` is one the search leaves out (see the module docstring)."""
    if not is_move(pr, a):
        return False
    src, k, dst = decode_move(pr, a)
    n = column_length(pr, st, src)
    d = face_down(pr, st, src)
    dn = column_length(pr, st, dst)
    if dn == 0:
        return k == n - d and d == 0  # a whole column into an empty one
    if k == n - d:
        return False  # turns a card up or empties the column
    moved = card_at(pr, st, src, n - k)
    under = card_at(pr, st, src, n - k - 1)
    if on_own_suit(moved, under):
        return True  # it sits on its own suit's next card
    if n_piles(pr) == 0 and builds_any_suit(pr) and under % N_RANKS == moved % N_RANKS + 1:
        # no stock (Simple Simon): a group on a next card of another suit moves only onto its
        # own suit's (measured: more wins there, fewer in 4-suit Spider, where uncovering a
        # card for later deals matters)
        return card_at(pr, st, dst, dn - 1) != moved + 1
    return False


# --- the search -----------------------------------------------------------------------------------
@jit
def _push(heap: np.ndarray, prio: np.ndarray, size: int, node: int) -> int:
    i = size
    heap[i] = node
    p = prio[node]
    while i > 0:
        up = (i - 1) >> 1
        q = heap[up]
        if prio[q] > p or (prio[q] == p and q > node):
            break
        heap[i] = q
        i = up
    heap[i] = node
    return size + 1


@jit
def _pop(heap: np.ndarray, prio: np.ndarray, size: int) -> int:
    top = heap[0]
    size -= 1
    last = heap[size]
    p = prio[last]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        r = child + 1
        if r < size:
            a, b = heap[child], heap[r]
            if prio[b] > prio[a] or (prio[b] == prio[a] and b > a):
                child = r
        q = heap[child]
        if p > prio[q] or (p == prio[q] and last > q):
            break
        heap[i] = q
        i = child
    heap[i] = last
    return top


@jit
def _start(
    pr: np.ndarray,
    root: np.ndarray,
    w: np.ndarray,
    pool: np.ndarray,
    parent: np.ndarray,
    action: np.ndarray,
    prio: np.ndarray,
    heap: np.ndarray,
    table: np.ndarray,
) -> None:
    pack(pr, root, pool[0])
    parent[0] = -1
    action[0] = -1
    prio[0] = evaluate(pr, root, w)
    hash_insert(table, position_hash(pr, root))
    _push(heap, prio, np.int64(0), np.int64(0))  # not literals: one compiled signature


@jit
def _stage(
    pr: np.ndarray,
    w: np.ndarray,
    prune: bool,
    pool: np.ndarray,
    parent: np.ndarray,
    action: np.ndarray,
    prio: np.ndarray,
    heap: np.ndarray,
    table: np.ndarray,
    counters: np.ndarray,
    cand: np.ndarray,
    expansions: int,
) -> int:
    """Continue the search of one stage (the play between two deals) for at most
    ``expansions`` expansions: every move but deals, best first.

    ``counters``: nodes stored, heap size, pruned flag, the node that won (or -1), expansions
    done, candidates kept. ``cand`` (rows: evaluation after the deal, node, deal action) keeps
    the best positions to deal from, best first, each scored by the position the deal makes.
    Returns a verdict code (``LOST``: the stage was searched to the end), ``RUNNING`` if the
    slice ended first.
    """
    cap = pool.shape[0]
    M = cand.shape[0]
    st = new_state(pr)
    child = new_state(pr)
    moves, keys = legal_buffers(pr)
    parts = np.empty(n_columns(pr) + n_piles(pr), dtype=np.uint64)
    nodes = counters[0]
    size = counters[1]
    for _ in range(expansions):
        if size == 0:
            counters[0] = nodes
            counters[1] = 0
            return LOST
        node = _pop(heap, prio, size)
        size -= 1
        counters[4] += 1
        unpack(pr, pool[node], st)
        head = ready_children_call(pr, st, child, parts)
        dirty = 0  # the columns ``child`` differs from ``st`` in (play_child)
        n = legal_ids(pr, st, moves, keys)
        for i in range(n):
            a = moves[i]
            deal = is_deal(pr, a)
            if not deal and prune and _pointless(pr, st, a):
                counters[2] = 1
                continue
            dirty = play_child_call(pr, st, child, a, dirty)
            if deal:
                if is_won(pr, child):
                    value = np.int64(1) << 60
                else:  # the board the deal makes; the moves it took do not count here (a
                    # deal should come when the board is best, not as early as possible)
                    value = evaluate(pr, child, w) + w[W_MOVE] * moves_made(child)
                k = counters[5]
                if k < M or value > cand[M - 1, 0]:
                    j = min(k, M - 1)
                    while j > 0 and cand[j - 1, 0] < value:
                        cand[j, 0] = cand[j - 1, 0]
                        cand[j, 1] = cand[j - 1, 1]
                        cand[j, 2] = cand[j - 1, 2]
                        j -= 1
                    cand[j, 0] = value
                    cand[j, 1] = node
                    cand[j, 2] = a
                    if k < M:
                        counters[5] = k + 1
                else:
                    counters[2] = 1  # a deal left out: the stage's search is not complete
                continue
            fresh = hash_insert(table, child_hash_call(pr, child, dirty, head, parts))
            if fresh == 0:
                continue
            if fresh < 0 or nodes >= cap:
                counters[0] = nodes
                counters[1] = size
                counters[2] = 1
                return UNKNOWN
            pack(pr, child, pool[nodes])
            parent[nodes] = node
            action[nodes] = a
            if is_won(pr, child):
                counters[0] = nodes + 1
                counters[1] = size
                counters[3] = nodes
                return WON
            prio[nodes] = evaluate(pr, child, w)
            size = _push(heap, prio, size, nodes)
            nodes += 1
    counters[0] = nodes
    counters[1] = size
    return RUNNING


@jit
def line_wins(pr: np.ndarray, root: np.ndarray, line: np.ndarray) -> bool:
    """Whether playing ``line`` from ``root`` is legal at every step and wins (``root`` is left
    as it was)."""
    st = new_state(pr)
    copy_state(pr, root, st)
    moves, keys = legal_buffers(pr)
    for a in line:
        n = legal_ids(pr, st, moves, keys)
        ok = False
        for i in range(n):
            if moves[i] == a:
                ok = True
                break
        if not ok:
            return False
        play_action(pr, st, np.int64(a))  # a call, not another inlined copy (once per line)
    return is_won(pr, st)


# --- the Python interface -------------------------------------------------------------------------
@dataclass(frozen=True)
class SolveResult:
    """What :func:`solve` found.

    ``verdict``: ``"won"``, ``"lost"`` or ``"unknown"``; ``line``: the winning action ids from
    the position given (empty unless won); ``nodes``: positions stored; ``expansions``:
    positions expanded; ``seconds``: wall time of the search; ``budget``: what stopped an
    unknown search (``"nodes"``, ``"seconds"``, ``"pruned"``) or ``""``.
    """

    verdict: str
    line: tuple[int, ...]
    nodes: int
    expansions: int
    seconds: float
    budget: str = ""

    @property
    def won(self) -> bool:
        return self.verdict == "won"


def without_undo(state: State) -> State:
    """``state`` of a variant with undo, as the same position without undo."""
    if not state.variant.undo:
        return state
    v = state.variant.with_options(undo=False)
    return State(
        v, state.cols, state.down, state.stock, state.completed, state.moves, state.deals,
        state.undos, state.reveals, state.free_used,
    )  # fmt: skip


def default_stage_nodes(nodes: int) -> int:
    """The stage budget for a total of ``nodes``: an eighth, between 1,000 and 20,000."""
    return max(1, min(nodes, max(1_000, min(20_000, nodes // 8))))


class _Stage:
    """The buffers of one stage's search (one per deal level, reused)."""

    def __init__(self, pr: np.ndarray, nodes: int, width: int) -> None:
        cap = nodes
        self.pool = new_records(pr, cap)
        self.parent = np.empty(cap, dtype=np.int32)
        self.action = np.empty(cap, dtype=np.int32)
        self.prio = np.empty(cap, dtype=np.int64)
        self.heap = np.empty(cap, dtype=np.int32)
        self.table = np.zeros(1 << max(12, (2 * cap).bit_length()), dtype=np.uint64)
        self.counters = np.zeros(6, dtype=np.int64)
        self.cand = np.zeros((width, 3), dtype=np.int64)

    def line_to(self, node: int) -> list[int]:
        return trace_line(self.parent, self.action, node)


class Solver(OnGame):
    """A reusable solver for one variant (the expert player runs thousands of searches).

    The search goes stage by stage: a stage is the play between two deals. Each stage is a
    best-first search over moves (``stage_nodes`` positions at most) that remembers the
    ``width`` best positions to deal from, scored by the position each deal makes (every card
    is known); the next stage starts from the best of them, and from the next best when that
    one fails (depth-first over stages). ``nodes`` bounds the positions of all stages together
    (default :data:`DEFAULT_NODES`, as :func:`solve` and ``spider-env solve``).

    ``game`` is the :class:`~spider_env.fast.game.FastGame` of the variant (without undo) and
    ``pr`` its parameter vector: :meth:`run` takes state vectors of that game.
    """

    def __init__(
        self,
        variant: Variant,
        nodes: int = DEFAULT_NODES,
        *,
        stage_nodes: int | None = None,
        width: int = 3,
        weights: tuple[int, ...] = DEFAULT_WEIGHTS,
        prune: bool = True,
    ) -> None:
        self.nodes, _ = check_budget(nodes, None)
        stage = stage_nodes if stage_nodes is not None else default_stage_nodes(self.nodes)
        self.stage_nodes, _ = check_budget(stage, None)
        self.stage_nodes = min(self.stage_nodes, self.nodes)
        width = check_int("width", width, 1, 64)
        if len(weights) != len(DEFAULT_WEIGHTS):
            raise ValueError(f"weights must have {len(DEFAULT_WEIGHTS)} values")
        if variant.undo:
            variant = variant.with_options(undo=False)
        self.variant = variant
        self.width = width
        self.prune = bool(prune)
        self.game = FastGame(variant)
        self.weights = np.asarray(weights, dtype=np.int64)
        self._stages: list[_Stage] = []
        self._deadline: float | None = None
        self.used = 0
        self.expanded = 0
        self.stopped = ""
        self.truncated = False

    def _buffers(self, level: int, cap: int) -> _Stage:
        """The buffers of stage ``level``, with room for ``cap`` positions (grown on demand:
        only a last stage, with nothing left to deal, takes more than ``stage_nodes``)."""
        while len(self._stages) <= level:
            self._stages.append(_Stage(self.pr, self.stage_nodes, self.width))
        if self._stages[level].pool.shape[0] < cap:
            self._stages[level] = _Stage(self.pr, cap, self.width)
        return self._stages[level]

    def run(self, root: np.ndarray, seconds: float | None = None) -> tuple[int, list[int]]:
        """Search from the state vector ``root``: ``(verdict code, winning line)``."""
        self.used = 0
        self.expanded = 0
        self.stopped = ""
        self.truncated = False
        self._deadline = None if seconds is None else time.perf_counter() + seconds
        if self.game.won(root):
            return WON, []
        return self._search(root, 0)

    def _search(self, root: np.ndarray, level: int) -> tuple[int, list[int]]:
        left = self.nodes - self.used
        if left <= 0:
            self.stopped = self.stopped or "nodes"
            return UNKNOWN, []
        if self._deadline is not None and time.perf_counter() >= self._deadline:
            self.stopped = "seconds"
            return UNKNOWN, []
        # the last stage (nothing left to deal) may use all that is left
        cap = left if deals_left(self.pr, root) == 0 else min(self.stage_nodes, left)
        b = self._buffers(level, cap)
        b.table.fill(0)
        b.counters[:] = 0
        b.counters[0] = 1
        b.counters[1] = 1
        b.counters[3] = -1
        _start(self.pr, root, self.weights, b.pool, b.parent, b.action, b.prio, b.heap, b.table)
        pool = b.pool[:cap]
        while True:
            code = _stage(
                self.pr, self.weights, self.prune, pool, b.parent, b.action, b.prio, b.heap,
                b.table, b.counters, b.cand, SLICE,
            )  # fmt: skip
            if code != RUNNING:
                break
            if self._deadline is not None and time.perf_counter() >= self._deadline:
                self.stopped = "seconds"
                code = UNKNOWN
                break
        self.used += int(b.counters[0])
        self.expanded += int(b.counters[4])
        if code == WON:
            return WON, b.line_to(int(b.counters[3]))
        if code == UNKNOWN and int(b.counters[0]) >= cap and not self.stopped:
            self.truncated = True  # this stage's budget ran out
            if cap == left:
                self.stopped = "nodes"
        complete = code == LOST and not b.counters[2]
        st = np.empty_like(root)
        for k in range(int(b.counters[5])):
            if self.stopped:
                return UNKNOWN, []
            node, deal = int(b.cand[k, 1]), int(b.cand[k, 2])
            unpack(self.pr, b.pool[node], st)
            self.game.apply_inplace(st, deal)
            prefix = [*b.line_to(node), deal]
            if self.game.won(st):
                return WON, prefix
            sub, line = self._search(st.copy(), level + 1)
            if sub == WON:
                return WON, prefix + line
            complete = complete and sub == LOST
        return (LOST if complete else UNKNOWN), []


def default_method(variant: Variant) -> str:
    """The method ``solve(method="auto")`` uses for ``variant``: depth-first search where its
    filter leaves out renamed columns only (Scorpion, :func:`spider_env.search.dfs.scorpion_like`:
    it proves losses there), else the beam (it won more deals than best-first search on every
    variant measured). The measurements are in docs/solver/ and docs/results.md."""
    return "dfs" if scorpion_like(variant) else "beam"


def default_nodes(method: str) -> int:
    """The budget ``solve`` uses when none is given: positions stored (best-first) or
    generated (beam, depth-first)."""
    if method == "dfs":
        return DEFAULT_DFS_NODES
    return DEFAULT_BEAM_NODES if method == "beam" else DEFAULT_NODES


def check_method(method: object, variant: Variant) -> str:
    """``method`` resolved (``"auto"``: :func:`default_method`), or a ``ValueError``."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    return default_method(variant) if method == "auto" else str(method)


def solve(
    state: State,
    nodes: int | None = None,
    seconds: float | None = None,
    *,
    method: str = "auto",
    stage_nodes: int | None = None,
    width: int | None = None,
    prune: bool = True,
    weights: tuple[int, ...] = DEFAULT_WEIGHTS,
) -> SolveResult:
    """Search for a win from ``state`` with every card known.

    ``method``: ``"beam"`` (:class:`~spider_env.search.beam.BeamSolver`), ``"best-first"``
    (:class:`Solver`), ``"dfs"`` (:class:`~spider_env.search.dfs.DepthFirstSolver`) or
    ``"auto"`` (:func:`default_method` of the variant). ``nodes``: the
    budget (1 .. ``MAX_NODES``; ``None``: :func:`default_nodes` of the method), positions
    generated by the beam or depth-first search, positions stored by best-first search (about
    300 bytes each for 104-card games); ``seconds``: a wall-clock budget as well (``None``:
    nodes only);
    ``width``: the beam's first width (positions kept per depth and count of deals left,
    default 25, widened on failure) or best-first search's positions to deal from per stage
    (default 3; depth-first search has none: ``ValueError``);
    ``stage_nodes`` / ``weights``: best-first search's (see :class:`Solver`);
    ``prune``: leave out pointless moves (a loss is then not claimed, but by depth-first
    search on Scorpion, whose filter leaves out renamed columns only). A won line is replayed
    through the pure rules engine before it is returned.
    """
    if not isinstance(state, State):
        raise TypeError(f"solve needs a State, got {type(state).__name__}")
    how = check_method(method, state.variant)
    n, secs = check_budget(default_nodes(how) if nodes is None else nodes, seconds)
    state = without_undo(state)
    given = {} if width is None else {"width": width}  # else each search's own default
    solver: Solver | BeamSolver | DepthFirstSolver
    if how == "beam":
        solver = BeamSolver(state.variant, n, prune=prune, **given)
    elif how == "dfs":
        if width is not None:
            raise ValueError("width is not a setting of the depth-first solver")
        solver = DepthFirstSolver(state.variant, n, prune=prune)
    else:
        solver = Solver(
            state.variant, n, stage_nodes=stage_nodes, weights=weights, prune=prune, **given
        )
    t0 = time.perf_counter()
    code, line = solver.run(solver.game.from_state(state), secs)
    elapsed = time.perf_counter() - t0
    if code == WON:
        s = state
        for a in line:  # the rules' own check of the line
            s = rules.apply(s, a)
        if not s.won:  # pragma: no cover - would be a solver bug
            raise AssertionError("the solver's line does not win")
    budget = ""
    if code == UNKNOWN:
        if isinstance(solver, (BeamSolver, DepthFirstSolver)):
            budget = solver.stopped or "pruned"
        else:
            budget = solver.stopped or ("nodes" if solver.truncated else "pruned")
    return SolveResult(VERDICTS[code], tuple(line), solver.used, solver.expanded, elapsed, budget)


__all__ = [
    "DEFAULT_NODES",
    "DEFAULT_WEIGHTS",
    "MAX_NODES",
    "METHODS",
    "VERDICTS",
    "SolveResult",
    "Solver",
    "check_budget",
    "check_method",
    "default_method",
    "default_nodes",
    "line_wins",
    "solve",
    "without_undo",
]


refresh_cache(globals())
