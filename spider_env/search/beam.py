"""A beam-search solver on the compiled core: every card known, a won line or "unknown".

The second-generation solver, after KPatience's SpiderSolver2 (coolo/spider, KDE kpat; read,
not copied) and plspider's stated policy. It searches breadth-first, one depth (one action) at a
time, and keeps only the best ``width`` positions of each depth *for each count of deals left*
(so a position that has dealt is never crowded out by one that has not, and the other way
round), in numba over the compiled core's state vectors, through the core's search interface
(:mod:`spider_env.fast.game`):

* **Moves that mean something**, a filter of the compiled core's legal ids (the rules are not
  written again): a move that splits a suited run (the card under the moved group is its own
  suit's next card) is kept only when it lengthens a suited run at the target, and never into an
  empty column once the stock is empty; of the empty columns only the first of each kind is a
  target (the others give the same position with columns renamed; two kinds where the deals
  left reach fewer columns than were dealt, :func:`alike_split`); a whole column never moves
  into an empty one of its kind (the same position, renamed); a discard, when the variant has
  one to make, is the only action tried (it is always made at once).
* **Order**: positions are ranked by "chaos" (lower is better): every face-down card, every
  face-up card not on its own suit's next card, and every column's first face-up card count
  one; a column whose base card is a King or could sit on another column's top card counts one
  less; empty columns take one each off what is left. Ties go to the larger count of cards ready
  to play (the suited runs at the columns' ends, the cards discarded, the empty columns), then,
  with no chaos left, to more empty columns and fewer discards, then to the order generated.
* **Transposition table**: one 64-bit hash set of every position generated (the compiled core's
  ``position_hash``), over the whole search: a position reached again at a later depth is not
  searched again.
* **Budget**: positions generated (``nodes``), depths (``max_depth``) and optionally seconds,
  looked at between depths.

The verdict is ``"won"`` (the line is replayed through the pure rules engine by
:func:`spider_env.search.solver.solve` before it is returned), ``"lost"`` only when nothing was
ever left out (no move filtered, no position beyond the width, no budget reached) and nothing
was left to search, else ``"unknown"``. Beam search rarely proves a loss; the best-first solver
(:class:`spider_env.search.solver.Solver`) with ``prune=False`` is the one that does.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from spider_env.core.cards import KING, N_RANKS
from spider_env.core.checks import check_int
from spider_env.core.variants import Variant
from spider_env.fast.game import (
    FastGame,
    OnGame,
    apply_action,
    card_at,
    column_length,
    completed_runs,
    copy_state,
    deals_left,
    dealt_columns,
    decode_move,
    face_down,
    is_deal,
    is_move,
    is_won,
    legal_buffers,
    legal_ids,
    n_columns,
    n_piles,
    new_records,
    new_state,
    on_own_suit,
    pack,
    pile_size,
    play_action,
    position_hash,
    restore_state,
    runs_hash,
    segment_hash,
    top_run,
    unpack,
)
from spider_env.fast.jit import borrowed, jit, jit_inline, refresh_cache
from spider_env.search.budget import DEFAULT_BEAM_NODES, MAX_WIDTH, check_budget

#: The verdict codes of the compiled searches (``VERDICTS[code]`` in
#: :mod:`spider_env.search.solver`), and the code of a search that stopped at the end of a slice.
WON, LOST, UNKNOWN, RUNNING = 0, 1, 2, 3
#: Positions kept per depth for each count of deals left, at the first try (KPatience's
#: SpiderSolver2 keeps 150; starting narrow and widening measured faster: docs/guide/players.md,
#: the solver).
DEFAULT_WIDTH = 25
#: Each try after the first is this many times as wide, and there are this many tries.
DEFAULT_WIDEN, DEFAULT_TRIES = 4, 5
#: Depths (actions from the root) searched at most.
DEFAULT_MAX_DEPTH = 1000
#: Room for children per position kept (more are counted and left out).
CHILDREN = 24
_TABLE_START = 1 << 16  # slots of the transposition table at the start of a try

# flags of a search (``flags`` array): something was left out / the budget ran out
F_PRUNED, F_DISCARDED, F_FULL = 0, 1, 2


class Frontier(NamedTuple):
    """The arrays of one beam's depth (:func:`frontier_buffers`): the positions kept and the
    children generated from them, read by name in the compiled :func:`expand` and
    :func:`select`."""

    frontier: np.ndarray  # the positions kept (packed), one row each
    f_ids: np.ndarray  # their node ids
    after: np.ndarray  # room for the next depth's positions (packed), made by :func:`select`
    c_row: np.ndarray  # each child generated: its parent's row of ``frontier``
    c_parent: np.ndarray  # its parent (a node id)
    c_action: np.ndarray  # the action that made it
    c_key: np.ndarray  # its rank (:func:`chaos_key`)
    c_left: np.ndarray  # its deals left
    c_cards: np.ndarray  # the cards on its table
    st: np.ndarray  # :func:`expand`'s scratch: the position expanded (a state vector)
    child: np.ndarray  # the child played from it
    ids: np.ndarray  # the legal ids of ``st`` (``legal_buffers``)
    keys: np.ndarray  # and their scratch
    parts: np.ndarray  # ``st``'s hash parts: each column's and pile's ``segment_hash``
    disorder: np.ndarray  # ``st``'s columns' ``column_disorder``


def frontier_buffers(pr: np.ndarray, front: int) -> Frontier:
    """The :class:`Frontier` of a beam of ``front`` positions kept per depth (its width times
    the counts of deals left), with room for :data:`CHILDREN` children each."""
    n = front * CHILDREN
    ids, keys = legal_buffers(pr)
    return Frontier(
        new_records(pr, front),
        np.empty(front, dtype=np.int32),
        new_records(pr, front),
        np.empty(n, dtype=np.int32),
        np.empty(n, dtype=np.int32),
        np.empty(n, dtype=np.int32),
        np.empty(n, dtype=np.int64),
        np.empty(n, dtype=np.int64),
        np.empty(n, dtype=np.int64),
        new_state(pr),
        new_state(pr),
        ids,
        keys,
        np.empty(n_columns(pr) + n_piles(pr), dtype=np.uint64),
        np.empty(n_columns(pr), dtype=np.int64),
    )


@jit
def chaos_key(pr: np.ndarray, st: np.ndarray) -> np.int64:
    """The rank of a position in the beam: lower is better (see the module docstring)."""
    total = 0
    for c in range(n_columns(pr)):
        total += column_disorder(pr, st, c)
    return ranked(pr, st, total)


@jit_inline
def column_disorder(pr: np.ndarray, st: np.ndarray, c: int) -> int:
    """Column ``c``'s own part of :func:`chaos_key`'s chaos: its face-down cards, its first
    face-up card and each face-up card not on its own suit's next card (0 if empty)."""
    n = column_length(pr, st, c)
    if n == 0:
        return 0
    d = face_down(pr, st, c)
    chaos = d + 1
    prev = card_at(pr, st, c, d)
    for i in range(d + 1, n):
        x = card_at(pr, st, c, i)
        if not on_own_suit(x, prev):
            chaos += 1
        prev = x
    return chaos


@jit_inline
def ranked(pr: np.ndarray, st: np.ndarray, disorder: int) -> np.int64:
    """:func:`chaos_key` of ``st`` from the sum of its columns' :func:`column_disorder`
    (``disorder``): what the columns' tops and bases, the empty columns and the runs add."""
    C = n_columns(pr)
    # the ranks of the columns' top cards: seen on one column at least, on two at least
    once = 0
    twice = 0
    for j in range(C):
        m = column_length(pr, st, j)
        if m > 0:
            bit = 1 << (card_at(pr, st, j, m - 1) % N_RANKS)
            twice |= once & bit
            once |= bit
    chaos = disorder
    ready = 0
    free = 0
    for c in range(C):
        n = column_length(pr, st, c)
        if n == 0:
            free += 1
            continue
        ready += top_run(pr, st, c)
        base = card_at(pr, st, c, 0) % N_RANKS
        if base == KING:
            chaos -= 1
            continue
        # another column's top card is one rank above this column's deepest card (this
        # column's own top counts only if a second column's top has the rank too)
        own = card_at(pr, st, c, n - 1) % N_RANKS == base + 1
        if ((twice if own else once) >> (base + 1)) & 1:
            chaos -= 1
    chaos -= min(free, max(chaos, 0))
    runs = completed_runs(st)
    ready += 13 * runs + free
    key = np.int64(max(chaos, 0)) * 4096 + (2047 - ready)
    key = key * 256
    if chaos <= 0:
        key += (15 - min(free, 15)) * 16 + min(runs, 15)
    return key


@jit
def alike_split(pr: np.ndarray, st: np.ndarray) -> int:
    """Where the columns split into two kinds that the deals left treat alike: the dealt
    columns, unless a pile left reaches fewer (Scorpion's reserve, Spiderette's last pile: 3
    columns); then the columns it reaches. Before Scorpion's reserve is dealt, an empty column 0
    and an empty column 5 are not alike (the reserve puts a card on the first only)."""
    at = dealt_columns(pr)
    for j in range(n_piles(pr)):
        size = pile_size(pr, st, j)
        if 0 < size < at:
            at = size
    return at


@jit
def first_empties(pr: np.ndarray, st: np.ndarray) -> tuple[int, int]:
    """The first empty column of each kind (:func:`alike_split`): of the columns the deals left
    reach first, and of the others (-1: none)."""
    dealt = -1
    free = -1
    D = alike_split(pr, st)
    for c in range(n_columns(pr)):
        if column_length(pr, st, c) == 0:
            if c < D and dealt < 0:
                dealt = c
            elif c >= D and free < 0:
                free = c
    return dealt, free


@jit
def filtered(
    pr: np.ndarray, st: np.ndarray, a: int, empty_dealt: int, empty_free: int, stock: int
) -> bool:
    """Whether the legal move ``a`` is left out (see the module docstring); ``empty_dealt`` /
    ``empty_free``: the first empty column of each kind (-1: none, :func:`first_empties`),
    ``stock``: deals left."""
    if not is_move(pr, a):
        return False
    src, k, dst = decode_move(pr, a)
    n = column_length(pr, st, src)
    d = face_down(pr, st, src)
    moved = card_at(pr, st, src, n - k)
    split = False
    if k < n - d:
        under = card_at(pr, st, src, n - k - 1)
        split = on_own_suit(moved, under)
    dn = column_length(pr, st, dst)
    if dn == 0:
        D = alike_split(pr, st)
        if dst != (empty_dealt if dst < D else empty_free):
            return True
        if k == n and (src < D) == (dst < D):
            return True  # the same position with two columns of a kind renamed
        return split and stock == 0
    if split:
        on = card_at(pr, st, dst, dn - 1)
        return not (on_own_suit(moved, on) and top_run(pr, st, dst) + k > top_run(pr, st, src))
    return False


@jit
def forced_discard(pr: np.ndarray, ids: np.ndarray, n: int) -> int:
    """The first discard among the ``n`` legal ids ``ids`` (-1: none): the filter makes a
    discard at once, the only action tried."""
    for i in range(n):
        if not is_move(pr, ids[i]) and not is_deal(pr, ids[i]):
            return ids[i]
    return -1


def table_size(n: int) -> int:
    """The smallest power of two of at least ``n`` slots (a :func:`hash_insert` table)."""
    size = 1
    while size < n:
        size *= 2
    return size


@jit
def hash_insert(table: np.ndarray, h: np.uint64) -> int:
    """Add ``h`` to the open-addressing hash set ``table`` (a power of two of ``uint64``
    slots, 0 = empty): 1 if new, 0 if present, -1 if full. Both solvers' transposition
    table."""
    mask = np.uint64(table.shape[0] - 1)
    key = h | np.uint64(1)  # 0 marks an empty slot
    i = key & mask
    for _ in range(table.shape[0]):
        cur = table[i]
        if cur == 0:
            table[i] = key
            return 1
        if cur == key:
            return 0
        i = (i + np.uint64(1)) & mask
    return -1


def trace_line(parent: np.ndarray, action: np.ndarray, node: int) -> list[int]:
    """The actions from a search tree's root (node 0) to ``node``: ``action[n]`` led from
    ``parent[n]`` to ``n``. Every search's line comes from here."""
    out: list[int] = []
    while node > 0:
        out.append(int(action[node]))
        node = int(parent[node])
    out.reverse()
    return out


@jit
def _rehash(old: np.ndarray, new: np.ndarray) -> None:
    """Insert every key of the hash set ``old`` into the empty, larger ``new``."""
    mask = np.uint64(new.shape[0] - 1)
    for key in old:
        if key != 0:
            i = key & mask
            while new[i] != 0:
                i = (i + np.uint64(1)) & mask
            new[i] = key


#: A position's hash and its completed runs' part (:func:`ready_children`, :func:`child_hash`).
Head = tuple[np.uint64, np.uint64]


@jit_inline
def ready_children(pr: np.ndarray, st: np.ndarray, child: np.ndarray, parts: np.ndarray) -> Head:
    """Ready the children of ``st``: ``child`` made a copy of it (for :func:`play_child`, the
    first ``dirty`` 0) and each column's and pile's ``segment_hash`` of it put in ``parts``;
    returns its ``head``, ``(position_hash, runs_hash)`` (for :func:`child_hash`)."""
    copy_state(pr, st, child)
    runs = runs_hash(st)
    whole = runs
    for s in range(parts.shape[0]):
        parts[s] = segment_hash(pr, st, s)
        whole += parts[s]
    return whole, runs


@jit_inline
def play_child(pr: np.ndarray, st: np.ndarray, child: np.ndarray, a: int, dirty: int) -> int:
    """Play ``a`` on ``child``, made ``st`` again first: ``child`` is a copy of ``st`` but for
    the columns ``dirty`` (the last :func:`play_child`'s return; 0: none, -1: all). Returns
    the columns ``child`` now differs in (-1 after a deal: the stock's cards too). Cheaper than
    a copy per child: only what the last one changed is copied back."""
    if dirty < 0:
        copy_state(pr, st, child)
    elif dirty:
        restore_state(pr, st, child, dirty)
    changed = apply_action(pr, child, a)
    return -1 if is_deal(pr, a) else changed


@jit_inline
def child_hash(
    pr: np.ndarray, child: np.ndarray, dirty: int, head: Head, parts: np.ndarray
) -> np.uint64:
    """``position_hash`` of ``child``, a child of the position of ``head`` and ``parts``
    (:func:`ready_children`) that differs from it in the columns ``dirty`` (:func:`play_child`;
    -1: hashed whole)."""
    if dirty < 0:
        return position_hash(pr, child)
    whole, runs = head
    h = np.uint64(whole) - np.uint64(runs) + runs_hash(child)  # (typed so from Python too)
    for c in range(n_columns(pr)):
        if (dirty >> c) & 1:
            h += segment_hash(pr, child, c) - parts[c]
    return h


@jit
def ready_children_call(
    pr: np.ndarray, st: np.ndarray, child: np.ndarray, parts: np.ndarray
) -> Head:
    """:func:`ready_children` as a compiled call of its own, not inlined into its caller (as
    ``play_action`` is to ``apply_action``), and so :func:`play_child_call` and
    :func:`child_hash_call`: for the searches whose children are not the hot loop (the
    closure, the best-first and depth-first solvers), which then compile no copy of them;
    :func:`expand` inlines them (the planner's lab record has the compile seconds)."""
    return ready_children(pr, st, child, parts)


@jit
def play_child_call(pr: np.ndarray, st: np.ndarray, child: np.ndarray, a: int, dirty: int) -> int:
    """:func:`play_child` as a compiled call of its own (see :func:`ready_children_call`)."""
    return play_child(pr, st, child, a, dirty)


@jit
def child_hash_call(
    pr: np.ndarray, child: np.ndarray, dirty: int, head: Head, parts: np.ndarray
) -> np.uint64:
    """:func:`child_hash` as a compiled call of its own (see :func:`ready_children_call`)."""
    return child_hash(pr, child, dirty, head, parts)


#: :func:`expand`'s ``deals``: play every legal deal, deal only where nothing else is legal, or
#: never deal (as ints: compiled code compares them).
EVERY_DEAL = 2
DEAL_WHEN_STUCK = 1
NO_DEAL = 0


@jit
def expand(
    pr: np.ndarray,
    bufs: Frontier,
    nf: int,
    table: np.ndarray,
    budget: int,
    counters: np.ndarray,
    flags: np.ndarray,
    prune: bool,
    deals: int,
) -> int:
    """Generate the children of the ``nf`` positions of ``bufs.frontier`` (node ids
    ``bufs.f_ids``) not seen before into the children's arrays of ``bufs``; returns how many,
    or ``-1 - j`` when child ``j`` wins (its parent and action are in ``bufs.c_parent[j]``,
    ``bufs.c_action[j]``). ``counters``: positions generated (all depths), positions expanded.
    ``deals``: :data:`EVERY_DEAL`, :data:`DEAL_WHEN_STUCK` (the planner's scores,
    :mod:`spider_env.search.plan`) or :data:`NO_DEAL`."""
    # every array is held by the caller for the call, so all are borrowed
    # (spider_env.fast.jit.borrowed): the positions passed to the rules are not counted
    pr, bufs, table, counters, flags = (
        borrowed(pr),
        borrowed(bufs),
        borrowed(table),
        borrowed(counters),
        borrowed(flags),
    )
    st, child, ids, keys = bufs.st, bufs.child, bufs.ids, bufs.keys
    parts, disorder = bufs.parts, bufs.disorder
    C = n_columns(pr)
    frontier, f_ids, c_row = bufs.frontier, bufs.f_ids, bufs.c_row
    c_parent, c_action, c_key, c_left = bufs.c_parent, bufs.c_action, bufs.c_key, bufs.c_left
    c_cards = bufs.c_cards
    cap = c_row.shape[0]
    nc = 0
    for f in range(nf):
        unpack(pr, frontier[f], st)
        head = ready_children(pr, st, child, parts)
        dirty = 0  # the columns ``child`` differs from ``st`` in (play_child)
        chaos = 0  # and its chaos_key's columns, for its children's keys
        for c in range(C):
            disorder[c] = column_disorder(pr, st, c)
            chaos += disorder[c]
        counters[1] += 1
        n = legal_ids(pr, st, ids, keys)
        empty_dealt, empty_free = first_empties(pr, st)
        stock = deals_left(pr, st)
        forced = -1
        no_deal = deals == NO_DEAL
        if deals == DEAL_WHEN_STUCK:
            for i in range(n):
                if not is_deal(pr, ids[i]):
                    no_deal = True
                    break
        if prune:
            forced = forced_discard(pr, ids, n)
        for i in range(n):
            a = ids[i]
            if no_deal and is_deal(pr, a):
                flags[F_PRUNED] = 1
                continue
            if prune and (
                (forced >= 0 and a != forced)
                or (forced < 0 and filtered(pr, st, np.int64(a), empty_dealt, empty_free, stock))
            ):
                flags[F_PRUNED] = 1
                continue
            if counters[0] >= budget:
                flags[F_FULL] = 1
                return nc
            dirty = play_child(pr, st, child, a, dirty)
            fresh = hash_insert(table, child_hash(pr, child, dirty, head, parts))
            if fresh == 0:
                continue
            if fresh < 0:
                flags[F_FULL] = 1
                return nc
            counters[0] += 1
            if nc >= cap:
                flags[F_DISCARDED] = 1
                continue
            c_row[nc] = f
            c_parent[nc] = f_ids[f]
            c_action[nc] = a
            if is_won(pr, child):
                return -1 - nc
            if dirty < 0:
                c_key[nc] = chaos_key(pr, child)
            else:  # chaos_key from st's columns and those the move changed
                total = chaos
                for c in range(C):
                    if (dirty >> c) & 1:
                        total += column_disorder(pr, child, c) - disorder[c]
                c_key[nc] = ranked(pr, child, total)
            c_left[nc] = deals_left(pr, child)
            cards = 0
            for c in range(C):
                cards += column_length(pr, child, c)
            c_cards[nc] = cards
            nc += 1
    return nc


@jit
def select(
    pr: np.ndarray,
    bufs: Frontier,
    nc: int,
    width: int,
    n_buckets: int,
    parent: np.ndarray,
    action: np.ndarray,
    n_nodes: int,
    flags: np.ndarray,
) -> int:
    """Keep the best ``width`` of the ``nc`` children of ``bufs`` of each count of deals left as
    the next ``bufs.frontier`` (node ids from ``n_nodes`` on, their parents and actions
    recorded in ``parent`` and ``action``); returns its size. A child is packed only here, once
    kept: played again from its parent's row (:func:`expand` packs none of the children it
    generates, most of which a depth leaves out)."""
    frontier, f_ids, after, c_row = bufs.frontier, bufs.f_ids, bufs.after, bufs.c_row
    c_parent, c_action, c_key, c_left = bufs.c_parent, bufs.c_action, bufs.c_key, bufs.c_left
    st = bufs.st
    order = np.argsort(c_key[:nc], kind="mergesort")
    counts = np.zeros(n_buckets, dtype=np.int64)
    nf = 0
    for j in order:
        b = c_left[j]
        if counts[b] >= width:
            flags[F_DISCARDED] = 1
            continue
        counts[b] += 1
        unpack(pr, frontier[c_row[j]], st)
        play_action(pr, st, np.int64(c_action[j]))
        pack(pr, st, after[nf])
        node = n_nodes + nf
        parent[node] = c_parent[j]
        action[node] = c_action[j]
        f_ids[nf] = node
        nf += 1
    frontier[:nf, :] = after[:nf, :]
    return nf


class BeamSolver(OnGame):
    """A reusable beam-search solver for one variant (see the module docstring).

    The search runs with the beam ``width`` (positions kept per depth for each count of deals
    left) and, while it has found nothing, again ``widen`` times as wide, ``tries`` times in
    all (25, 100, 400, 1600, 6400 by default: most deals are won by the narrow beams in a
    fraction of a second; the wide ones win most of the rest). ``nodes``: positions generated
    at most, all tries together (default :data:`DEFAULT_BEAM_NODES`); ``max_depth``: actions
    from the root at most; ``prune``: leave out the moves the filter leaves out (``False``:
    every legal move; a loss is then proven by a try whose beam never overflowed). :meth:`run`
    takes a state vector of :attr:`game` and returns ``(verdict code, line)``, with the counts
    of the search in :attr:`used` (positions generated), :attr:`expanded`, :attr:`depth` (of
    the last try), :attr:`widths` (the widths tried) and :attr:`stopped` (``"nodes"``,
    ``"seconds"``, ``"depth"`` or ``""``).
    """

    def __init__(
        self,
        variant: Variant,
        nodes: int = DEFAULT_BEAM_NODES,
        *,
        width: int = DEFAULT_WIDTH,
        widen: int = DEFAULT_WIDEN,
        tries: int = DEFAULT_TRIES,
        max_depth: int = DEFAULT_MAX_DEPTH,
        prune: bool = True,
    ) -> None:
        self.nodes, _ = check_budget(nodes, None)
        self.width = check_int("width", width, 1, MAX_WIDTH)
        self.widen = check_int("widen", widen, 1, 100)
        self.tries = check_int("tries", tries, 1, 10)
        self.max_depth = check_int("max_depth", max_depth, 1, 100_000)
        if variant.undo:
            variant = variant.with_options(undo=False)
        self.variant = variant
        self.prune = bool(prune)
        self.game = FastGame(variant)
        self.buckets = n_piles(self.pr) + 1
        self._buffers: dict[int, Frontier] = {}
        self._table = np.zeros(0, dtype=np.uint64)
        self.used = 0
        self.expanded = 0
        self.depth = 0
        self.widths: list[int] = []
        self.stopped = ""

    def _bufs(self, width: int) -> Frontier:
        """The frontier and children of a beam ``width`` wide (kept for reuse)."""
        if width not in self._buffers:
            self._buffers[width] = frontier_buffers(self.pr, width * self.buckets)
        return self._buffers[width]

    def _fresh_table(self) -> np.ndarray:
        """An empty transposition table, small at first (:meth:`_room` grows it)."""
        if self._table.shape[0] != _TABLE_START:
            self._table = np.zeros(_TABLE_START, dtype=np.uint64)
        else:
            self._table.fill(0)
        return self._table

    def _room(self, table: np.ndarray, held: int, coming: int) -> np.ndarray:
        """``table`` (holding ``held`` keys), or a larger copy if ``coming`` more keys would
        fill it beyond half."""
        size = table.shape[0]
        while 2 * (held + coming) > size:
            size *= 4
        if size == table.shape[0]:
            return table
        grown = np.zeros(size, dtype=np.uint64)
        _rehash(table, grown)
        self._table = grown
        return grown

    def run(self, root: np.ndarray, seconds: float | None = None) -> tuple[int, list[int]]:
        """Search from the state vector ``root``: ``(verdict code, winning line)``."""
        deadline = None if seconds is None else time.perf_counter() + seconds
        self.used = self.expanded = self.depth = 0
        self.widths = []
        self.stopped = ""
        if self.game.won(root):
            return WON, []
        width = self.width
        for _ in range(self.tries):
            self.widths.append(width)
            code, line = self._beam(root, width, deadline)
            if code != UNKNOWN or self.stopped in ("nodes", "seconds"):
                return code, line
            width *= self.widen
        return UNKNOWN, []

    def _beam(self, root: np.ndarray, width: int, deadline: float | None) -> tuple[int, list[int]]:
        """One beam search ``width`` wide from ``root``, with what is left of the budget."""
        pr = self.pr
        left = self.nodes - self.used
        if left <= 0:
            self.stopped = "nodes"
            return UNKNOWN, []
        bufs = self._bufs(width)
        table = self._fresh_table()
        parent = np.empty(bufs.frontier.shape[0] * self.max_depth + 1, dtype=np.int32)
        action = np.empty_like(parent)
        parent[0] = action[0] = -1
        pack(pr, root, bufs.frontier[0])
        bufs.f_ids[0] = 0
        nf, n_nodes = 1, 1
        hash_insert(table, np.uint64(position_hash(pr, root)))
        counters = np.zeros(2, dtype=np.int64)
        flags = np.zeros(3, dtype=np.int64)
        used0, expanded0 = self.used, self.expanded
        self.depth = 0
        self.stopped = ""
        try:
            while True:
                if self.depth >= self.max_depth:
                    self.stopped = "depth"
                    return UNKNOWN, []
                if deadline is not None and time.perf_counter() >= deadline:
                    self.stopped = "seconds"
                    return UNKNOWN, []
                # room for every child this depth can make (at most every action of each
                # position), so the table is never more than half full
                table = self._room(table, int(counters[0]) + 1, min(nf * self.game.n_actions, left))
                nc = expand(pr, bufs, nf, table, left, counters, flags, self.prune, EVERY_DEAL)
                self.depth += 1
                if nc < 0:
                    j = -1 - nc
                    line = trace_line(parent, action, int(bufs.c_parent[j]))
                    return WON, [*line, int(bufs.c_action[j])]
                if flags[F_FULL]:
                    self.stopped = "nodes"
                    return UNKNOWN, []
                if nc == 0:
                    complete = not flags[F_PRUNED] and not flags[F_DISCARDED]
                    return (LOST if complete else UNKNOWN), []
                nf = select(pr, bufs, nc, width, self.buckets, parent, action, n_nodes, flags)
                n_nodes += nf
        finally:
            self.used = used0 + int(counters[0])
            self.expanded = expanded0 + int(counters[1])


__all__ = [
    "CHILDREN",
    "DEAL_WHEN_STUCK",
    "DEFAULT_BEAM_NODES",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_TRIES",
    "DEFAULT_WIDEN",
    "DEFAULT_WIDTH",
    "EVERY_DEAL",
    "LOST",
    "NO_DEAL",
    "RUNNING",
    "UNKNOWN",
    "WON",
    "BeamSolver",
    "Frontier",
    "alike_split",
    "chaos_key",
    "child_hash",
    "child_hash_call",
    "column_disorder",
    "expand",
    "filtered",
    "first_empties",
    "forced_discard",
    "frontier_buffers",
    "hash_insert",
    "play_child",
    "play_child_call",
    "ranked",
    "ready_children",
    "ready_children_call",
    "select",
    "table_size",
    "trace_line",
]


refresh_cache(globals())
