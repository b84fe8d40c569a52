"""A depth-first solver on the compiled core: every card known; a won line, a proven loss, or
"unknown".

Where a game's reachable positions are few (Scorpion's: one pack, each card has one place to go,
so a deal of it usually has thousands to a few million positions), searching all of them is
cheaper than ranking them, and it proves a loss the beam (:mod:`spider_env.search.beam`) can
only leave "unknown". The search is depth-first over a stack of packed positions, in numba,
through the core's search interface (:mod:`spider_env.fast.game`):

* **Order**: a position's children are pushed worst first by the beam's rank
  (:func:`spider_env.search.beam.chaos_key`), so the best is searched next.
* **Transposition table**: the 64-bit hash set of every position generated (the beam's), so no
  position is searched twice and move loops are cut.
* **Moves**: every legal action (``prune=False``: a loss is then a proof, up to hash
  collisions), or the beam's filtered moves (``prune=True``: a discard made at once; the moves
  :func:`spider_env.search.beam.filtered` leaves out, with columns of a kind as the deals left
  treat them alike, :func:`spider_env.search.beam.alike_split`). On Scorpion the filter leaves
  out only moves to a second empty column of the same kind and whole columns moved into an
  empty one (the same position with columns renamed) and never a move that splits a suited
  run (a card has one next card of its suit, which is the card it sits on), so a loss is a
  proof there too; on Spider it leaves out real moves, and a loss is not claimed.
* **The line**: each stacked position keeps its depth and the action that made it; the actions
  of the positions popped are written at their depth, so when a child wins, the first entries
  of ``path`` are the line to it.
* **Budget**: positions generated (``nodes``) and optionally seconds (looked at between slices
  of :data:`SLICE` expansions).
"""

from __future__ import annotations

import time

import numpy as np

from spider_env.core.checks import check_int
from spider_env.core.variants import Variant
from spider_env.fast.game import (
    FastGame,
    OnGame,
    deals_left,
    is_won,
    legal_buffers,
    legal_ids,
    n_columns,
    n_piles,
    new_records,
    new_state,
    pack,
    position_hash,
    unpack,
)
from spider_env.fast.jit import jit, refresh_cache
from spider_env.search.beam import (
    LOST,
    RUNNING,
    UNKNOWN,
    WON,
    chaos_key,
    child_hash_call,
    filtered,
    first_empties,
    forced_discard,
    hash_insert,
    play_child_call,
    ready_children_call,
    table_size,
)
from spider_env.search.budget import DEFAULT_DFS_NODES, check_budget, check_dfs_nodes

#: Positions expanded between two looks at the clock (a search with ``seconds``).
SLICE = 5_000


@jit
def depth_first(
    pr: np.ndarray,
    root: np.ndarray,
    budget: int,
    stack: np.ndarray,
    s_depth: np.ndarray,
    s_action: np.ndarray,
    path: np.ndarray,
    table: np.ndarray,
    prune: bool,
    state: np.ndarray,
) -> int:
    """Search from ``root`` (see the module docstring), ``budget`` positions generated at most;
    resumable: ``state`` holds ``[stack size, positions generated, line length, expansions
    left in this slice, positions expanded, 1 if a position was too deep for path]``
    (``state[0] == 0``: a new search, which clears ``table``; the caller zeroes the rest).
    Returns ``WON`` (``path[:state[2]]`` is the line), ``LOST`` (the stack ran empty with
    the budget not reached), ``UNKNOWN`` (the budget was reached, or a position was deeper
    than ``path`` has room for) or ``RUNNING`` (the slice ended: call again). ``stack``,
    ``s_depth``, ``s_action``: ``budget + 1`` rows at least; ``table``: room for
    ``2 * budget`` keys; ``path``: the deepest line's room."""
    st = new_state(pr)
    child = new_state(pr)
    ids, keys = legal_buffers(pr)
    order = np.empty(ids.shape[0], dtype=np.int64)
    kids = np.empty(ids.shape[0], dtype=np.int64)
    parts = np.empty(n_columns(pr) + n_piles(pr), dtype=np.uint64)
    if state[0] == 0:
        if is_won(pr, root):
            state[2] = 0
            return WON
        table[:] = 0
        hash_insert(table, position_hash(pr, root))
        pack(pr, root, stack[0])
        s_depth[0] = 0
        s_action[0] = -1
        state[0] = 1
        state[1] = 0
    top = state[0]
    generated = state[1]
    slice_left = state[3]
    while top > 0:
        if slice_left <= 0:
            state[0], state[1] = top, generated
            return RUNNING
        slice_left -= 1
        state[4] += 1
        top -= 1
        unpack(pr, stack[top], st)
        depth = s_depth[top]
        if depth > 0:
            path[depth - 1] = s_action[top]
        if depth >= path.shape[0]:
            state[5] = 1  # no room for a deeper line: a position left out
            continue
        head = ready_children_call(pr, st, child, parts)
        dirty = 0  # the columns ``child`` differs from ``st`` in (play_child)
        m = legal_ids(pr, st, ids, keys)
        forced = -1
        empty_dealt = empty_free = stock = -1
        if prune:  # what the filter reads
            empty_dealt, empty_free = first_empties(pr, st)
            stock = deals_left(pr, st)
            forced = forced_discard(pr, ids, m)  # a discard: made at once
        base = top
        for i in range(m):
            a = ids[i]
            if prune:
                if forced >= 0:
                    if a != forced:
                        continue
                elif filtered(pr, st, np.int64(a), empty_dealt, empty_free, stock):
                    continue
            if generated >= budget:
                state[0], state[1] = 0, generated
                return UNKNOWN
            dirty = play_child_call(pr, st, child, a, dirty)
            if hash_insert(table, child_hash_call(pr, child, dirty, head, parts)) <= 0:
                continue
            generated += 1
            if is_won(pr, child):
                path[depth] = a
                state[0], state[1], state[2] = 0, generated, depth + 1
                return WON
            pack(pr, child, stack[top])
            s_depth[top] = depth + 1
            s_action[top] = a
            kids[top - base] = chaos_key(pr, child)
            top += 1
        k = top - base
        if k > 1:  # the best child on top: the new rows sorted worst first
            order[:k] = np.argsort(-kids[:k], kind="mergesort")
            rows = stack[base:top].copy()
            acts = s_action[base:top].copy()
            for j in range(k):
                stack[base + j] = rows[order[j]]
                s_action[base + j] = acts[order[j]]
    state[0], state[1] = 0, generated
    return UNKNOWN if state[5] else LOST


class DepthFirstSolver(OnGame):
    """A reusable depth-first solver for one variant (see the module docstring): ``nodes``
    positions generated at most (default :data:`~spider_env.search.budget.DEFAULT_DFS_NODES`,
    at most :data:`~spider_env.search.budget.MAX_DFS_NODES`: each is kept), ``prune`` the
    beam's filter (a loss is then claimed only on a game whose filter leaves out renamed
    columns only: :attr:`proves`). :meth:`run` takes a state vector of :attr:`game` and returns
    ``(verdict code, line)``; :attr:`used` (positions generated), :attr:`expanded`,
    :attr:`stopped` (``"nodes"``, ``"seconds"``, ``"depth"``, ``"pruned"`` or ``""``).
    ``max_depth``: the longest line searched (a deeper position is left out, and no loss is
    then claimed)."""

    def __init__(
        self,
        variant: Variant,
        nodes: int = DEFAULT_DFS_NODES,
        *,
        prune: bool = True,
        max_depth: int = 2000,
    ) -> None:
        self.nodes = check_dfs_nodes(check_budget(nodes, None)[0])
        max_depth = check_int("max_depth", max_depth, 1, 100_000)
        if variant.undo:
            variant = variant.with_options(undo=False)
        self.variant = variant
        self.prune = bool(prune)
        self.game = FastGame(variant)
        #: whether a loss found with this filter is a proof (no real move left out)
        self.proves = not self.prune or scorpion_like(variant)
        self.max_depth = max_depth
        self.used = 0
        self.expanded = 0
        self.stopped = ""
        self._bufs: tuple[np.ndarray, ...] | None = None

    def _buffers(self) -> tuple[np.ndarray, ...]:
        if self._bufs is None:
            n = self.nodes + 1
            self._bufs = (
                new_records(self.pr, n),
                np.empty(n, dtype=np.int32),
                np.empty(n, dtype=np.int32),
                np.empty(self.max_depth, dtype=np.int32),
                np.zeros(table_size(2 * n), dtype=np.uint64),
            )
        return self._bufs

    def run(self, root: np.ndarray, seconds: float | None = None) -> tuple[int, list[int]]:
        """Search from the state vector ``root``: ``(verdict code, winning line)``."""
        deadline = None if seconds is None else time.perf_counter() + seconds
        stack, s_depth, s_action, path, table = self._buffers()
        state = np.zeros(6, dtype=np.int64)
        self.stopped = ""
        while True:
            state[3] = SLICE
            code = depth_first(
                self.pr, root, self.nodes, stack, s_depth, s_action, path, table, self.prune,
                state,
            )  # fmt: skip
            if code != RUNNING:
                break
            if deadline is not None and time.perf_counter() >= deadline:
                self.stopped = "seconds"
                code = UNKNOWN
                break
        self.used = int(state[1])
        self.expanded = int(state[4])
        if code == WON:
            return WON, [int(a) for a in path[: state[2]]]
        if code == UNKNOWN and not self.stopped:
            self.stopped = "nodes" if self.used >= self.nodes else "depth"
        if code == LOST and not self.proves:
            self.stopped = "pruned"
            code = UNKNOWN
        return code, []


def scorpion_like(variant: Variant) -> bool:
    """Whether the beam's filter leaves out only renamed positions on ``variant``: one card of
    each (each card has one next card of its suit), built in suit only (a card that sits on
    its own suit's next card has nowhere else to go) and only Kings into an empty column (a
    King sits on no next card), so no move the filter leaves out splits a run; runs leave at
    once (no discard made early in place of a move)."""
    return (
        variant.build == "same-suit"
        and variant.suit_sets == variant.suits
        and variant.empty_accepts == "king"
        and variant.auto_discard
    )


__all__ = ["DEFAULT_DFS_NODES", "DepthFirstSolver", "depth_first", "scorpion_like"]


refresh_cache(globals())
