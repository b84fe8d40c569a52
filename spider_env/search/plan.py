"""The compiled parts of the planner (:class:`agents.planner.PlannerAgent`): what a player can
reach before the next irreversible event, and a cheap, graded score of a position.

* :func:`closure`: every distinct position reachable from a root by moves that turn no card up
  (a breadth-first search with a transposition table, over the beam's filtered moves), and the
  *events* that end them: a move that turns a card up (a face-down card comes to the top, also
  under a completed run), a deal. Nothing hidden is read: these moves never touch a face-down
  card or the stock, so the positions are the same for every layout of the unseen cards, and a
  sampled layout is put in by overwriting the hidden slots (:func:`evaluate`).
* :func:`beam_value`: a short beam search that never deals (the beam solver's moves and
  ranking, :mod:`spider_env.search.beam`), scored 1.0 when it wins and else by the best
  position it generated, a graded value below 1 (:func:`graded`): fewer disordered,
  face-down and stock cards, more cards ready to play. It does not deal because a sample's
  stock is a guess: what a deal would bring is scored by the candidates that deal.
* :func:`evaluate`: many (candidate, sample) pairs in one call: a closure position with the
  sample's unseen cards put in, its event played, then :func:`beam_value`.

The buffers pass to the compiled functions as named tuples (:class:`ClosureBuffers`,
:class:`ScoreBuffers`, :class:`Pairs`), read by name.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from spider_env.core.checks import check_int
from spider_env.core.variants import Variant
from spider_env.fast.game import (
    FastGame,
    OnGame,
    column_length,
    deal_needs_no_empty,
    deals_left,
    dealt_columns,
    face_down,
    is_deal,
    is_won,
    legal_buffers,
    legal_ids,
    n_columns,
    n_piles,
    new_records,
    new_state,
    pack,
    play_action,
    position_hash,
    unpack,
)
from spider_env.fast.jit import jit, jit_inline, refresh_cache
from spider_env.search.beam import (
    DEAL_WHEN_STUCK,
    F_FULL,
    Frontier,
    chaos_key,
    child_hash_call,
    expand,
    filtered,
    first_empties,
    forced_discard,
    frontier_buffers,
    hash_insert,
    play_child_call,
    ready_children_call,
    select,
    table_size,
    trace_line,
)

#: The share of the score a position that is not won can reach (a win scores 1.0).
GRADED_TOP = 0.9
#: How a score's beam deals (:func:`spider_env.search.beam.expand`'s ``deals``): only where
#: nothing else is legal, since a sample's stock is a guess.
SCORE_DEALS = DEAL_WHEN_STUCK


class ClosureBuffers(NamedTuple):
    """The arrays of a :func:`closure` (:func:`closure_buffers`)."""

    recs: np.ndarray  # the positions listed (packed); node 0 is the root
    parent: np.ndarray  # each position's parent node
    action: np.ndarray  # the action that reached it
    table: np.ndarray  # the transposition table (zeroed before each closure)
    ev_node: np.ndarray  # the node each event is played in
    ev_action: np.ndarray  # the event's action


class ScoreBuffers(NamedTuple):
    """The arrays of a :func:`beam_value` (:func:`score_buffers`)."""

    beam: Frontier  # the frontier and children of one depth
    table: np.ndarray  # the transposition table (cleared by each score)
    parent: np.ndarray  # the selection's parents (:func:`spider_env.search.beam.select`)
    action: np.ndarray  # and actions


class Pairs(NamedTuple):
    """(candidate, sample) pairs to score (:func:`pair_state`): pair ``p`` is candidate
    ``k = pair_cand[p]`` (the closure position ``recs[cand_node[k]]`` and its event
    ``cand_event[k]``, -1: none) on the layout ``values[pair_sample[p]]`` of the hidden
    ``slots``."""

    recs: np.ndarray
    slots: np.ndarray
    values: np.ndarray
    cand_node: np.ndarray
    cand_event: np.ndarray
    pair_cand: np.ndarray
    pair_sample: np.ndarray


@jit
def face_down_total(pr: np.ndarray, st: np.ndarray) -> int:
    """Face-down cards on the table (all columns)."""
    n = 0
    for c in range(n_columns(pr)):
        n += face_down(pr, st, c)
    return n


@jit
def closure(
    pr: np.ndarray, root: np.ndarray, bufs: ClosureBuffers, every: bool = False
) -> tuple[int, int, int, int]:
    """The positions reachable from ``root`` without turning a card up or dealing, breadth
    first, by the moves the beam's filter keeps (``every``: by every legal move,
    :func:`spider_env.search.beam.filtered` not applied), in ``bufs``
    (:class:`ClosureBuffers`): ``recs[i]`` (packed), reached from ``parent[i]`` by
    ``action[i]`` (node 0 is the root), at most ``recs.shape[0]``; and the events from them:
    ``ev_action[e]`` played in ``ev_node[e]`` turns a card up or deals (each distinct resulting
    position once), at most ``ev_node.shape[0]``. ``table`` (zeroed, a power
    of two, at least twice the positions and events) is the transposition table. Returns
    ``(positions, events, won, full)``: ``won`` is a node that wins (-1: none; the search stops
    there), ``full`` 1 when a child found no room (positions or events at their limit; it may
    repeat one listed). A child without room is not put in the table, so the table never
    fills."""
    recs, parent, action, table = bufs.recs, bufs.parent, bufs.action, bufs.table
    ev_node, ev_action = bufs.ev_node, bufs.ev_action
    st = new_state(pr)
    child = new_state(pr)
    ids, keys = legal_buffers(pr)
    parts = np.empty(n_columns(pr) + n_piles(pr), dtype=np.uint64)
    cap = recs.shape[0]
    ev_cap = ev_node.shape[0]
    pack(pr, root, recs[0])
    parent[0] = -1
    action[0] = -1
    hash_insert(table, position_hash(pr, root))
    if is_won(pr, root):
        return 1, 0, 0, 0
    down0 = face_down_total(pr, root)
    n = 1
    n_ev = 0
    full = 0
    i = 0
    while i < n:
        unpack(pr, recs[i], st)
        head = ready_children_call(pr, st, child, parts)
        dirty = 0  # the columns ``child`` differs from ``st`` in (play_child)
        m = legal_ids(pr, st, ids, keys)
        empty_dealt, empty_free = first_empties(pr, st)
        stock = deals_left(pr, st)
        forced = forced_discard(pr, ids, m)  # a discard: made at once (as the beam does)
        for j in range(m):
            a = ids[j]
            if forced >= 0:
                if a != forced:
                    continue
            elif not every and filtered(pr, st, np.int64(a), empty_dealt, empty_free, stock):
                continue
            dirty = play_child_call(pr, st, child, a, dirty)
            event = is_deal(pr, a) or face_down_total(pr, child) < down0
            if (n_ev >= ev_cap) if event else (n >= cap):
                # no room: not put in the table either (a full table would make every
                # later look-up scan all of it)
                full = 1
                continue
            fresh = hash_insert(table, child_hash_call(pr, child, dirty, head, parts))
            if fresh <= 0:
                if fresh < 0:  # pragma: no cover - the table holds twice the room
                    full = 1
                continue
            if event:
                ev_node[n_ev] = i
                ev_action[n_ev] = a
                n_ev += 1
                continue
            pack(pr, child, recs[n])
            parent[n] = i
            action[n] = a
            n += 1
            if is_won(pr, child):
                return n, n_ev, n - 1, full
        i += 1
    return n, n_ev, -1, full


@jit
def starved(pr: np.ndarray, st: np.ndarray) -> bool:
    """Whether ``st`` can never deal again though its stock holds cards, so it is lost: a deal
    needs every dealt column filled (``Variant.deal_needs_no_empty``) and the table holds
    fewer cards than there are such columns (cards come to the table only by a deal; a
    completed run leaves it). Late in a 1-suit game, completing one run too many does this."""
    cards = 0
    for c in range(n_columns(pr)):
        cards += column_length(pr, st, c)
    return starved_counts(pr, cards, deals_left(pr, st))


@jit_inline
def starved_counts(pr: np.ndarray, cards: int, left: int) -> bool:
    """:func:`starved` of a position of ``cards`` cards on the table and ``left`` deals left
    (what the score's beam keeps of each child, :class:`~spider_env.search.beam.Frontier`)."""
    return deal_needs_no_empty(pr) and left > 0 and cards < dealt_columns(pr)


@jit
def stock_term(stock_by_left: np.ndarray, left: int) -> np.int64:
    """What the cards left in the stock (``left`` deals) add to a beam rank before
    :func:`graded` reads it: they count as disorder (the rank's high bits)."""
    return np.int64(stock_by_left[left]) << 20


@jit
def graded(pr: np.ndarray, key: np.int64, n_cards: int) -> float:
    """The score of a position that is not won, from its beam rank ``key``
    (:func:`spider_env.search.beam.chaos_key`) and the cards left in its ``stock``:
    ``GRADED_TOP`` times the share of the deck's cards that are neither face down, nor in the
    stock, nor out of order, plus a little for the cards ready to play; always below
    ``GRADED_TOP + 0.05``."""
    chaos = key >> 20
    ready = 2047 - ((key >> 8) & 4095)
    order = 1.0 - min(chaos, n_cards) / n_cards
    return GRADED_TOP * order + 0.05 * min(ready, n_cards) / (n_cards + 1)


@jit
def beam_value(
    pr: np.ndarray,
    root: np.ndarray,
    width: int,
    budget: int,
    max_depth: int,
    n_buckets: int,
    n_cards: int,
    bufs: ScoreBuffers,
    stock_by_left: np.ndarray,
    spent: np.ndarray,
) -> float:
    """A beam ``width`` wide (per count of deals left) from ``root``, at most ``budget``
    positions generated and ``max_depth`` depths, dealing only where nothing else is legal
    (:data:`SCORE_DEALS`): 1.0 if it wins, 0.0 if ``root`` is :func:`starved`, else
    :func:`graded` of the best position generated that is not starved; the positions generated
    are added to ``spent[0]``. ``bufs``: :func:`score_buffers` (at least ``width * n_buckets``
    frontier rows, a table of ``2 * budget`` keys, cleared here)."""
    beam, table = bufs.beam, bufs.table
    if is_won(pr, root):
        return 1.0
    if starved(pr, root):
        return 0.0
    table[:] = 0
    pack(pr, root, beam.frontier[0])
    beam.f_ids[0] = 0
    hash_insert(table, position_hash(pr, root))
    counters = np.zeros(2, dtype=np.int64)
    flags = np.zeros(3, dtype=np.int64)
    best = chaos_key(pr, root) + stock_term(stock_by_left, deals_left(pr, root))
    # typed values, not constants: a compiled function given constants by another one is
    # compiled again for their literal types (tests/test_compile_numba.py)
    nf, deals = np.int64(1), np.int64(SCORE_DEALS)
    prune: bool = np.bool_(True)  # type: ignore[assignment]
    for _ in range(max_depth):
        nc = expand(pr, beam, nf, table, budget, counters, flags, prune, deals)
        if nc < 0:
            spent[0] += counters[0]
            return 1.0
        for j in range(nc):
            key = beam.c_key[j] + stock_term(stock_by_left, beam.c_left[j])
            if key < best and not starved_counts(pr, beam.c_cards[j], beam.c_left[j]):
                best = key
        if nc == 0 or flags[F_FULL]:
            break
        nf = select(pr, beam, nc, width, n_buckets, bufs.parent, bufs.action, np.int64(0), flags)
    spent[0] += counters[0]
    return graded(pr, best, n_cards)


@jit
def candidate_state(
    pr: np.ndarray,
    rec: np.ndarray,
    slots: np.ndarray,
    values: np.ndarray,
    event: int,
    st: np.ndarray,
) -> None:
    """Into ``st``: the closure position ``rec`` with a sample's unseen cards (``values`` in the
    hidden ``slots``) put in, then ``event`` played (-1: none)."""
    unpack(pr, rec, st)
    for h in range(slots.shape[0]):
        st[slots[h]] = values[h]
    if event >= 0:
        play_action(pr, st, np.int64(event))  # the type FastGame calls it with: one compile


@jit
def pair_state(pr: np.ndarray, pairs: Pairs, p: int, st: np.ndarray) -> None:
    """Into ``st``: pair ``p`` of ``pairs`` (:class:`Pairs`), candidate ``k = pair_cand[p]`` on
    sample ``pair_sample[p]``: closure position ``recs[cand_node[k]]`` with the sample's unseen
    cards (``values[s]`` in the hidden ``slots``) put in, then its event ``cand_event[k]``
    played (-1: none)."""
    k = pairs.pair_cand[p]
    candidate_state(
        pr, pairs.recs[pairs.cand_node[k]], pairs.slots, pairs.values[pairs.pair_sample[p]],
        pairs.cand_event[k], st,
    )  # fmt: skip


@jit
def evaluate(
    pr: np.ndarray,
    pairs: Pairs,
    out: np.ndarray,
    width: int,
    budget: int,
    max_depth: int,
    n_buckets: int,
    n_cards: int,
    bufs: ScoreBuffers,
    stock_by_left: np.ndarray,
    spent: np.ndarray,
) -> None:
    """``out[p]`` = :func:`beam_value` of pair ``p`` (:func:`pair_state`); the beams' positions
    generated are added to ``spent[0]``."""
    st = new_state(pr)
    for p in range(pairs.pair_cand.shape[0]):
        pair_state(pr, pairs, p, st)
        out[p] = beam_value(
            pr, st, width, budget, max_depth, n_buckets, n_cards, bufs, stock_by_left, spent
        )


@jit
def static_keys(
    pr: np.ndarray,
    recs: np.ndarray,
    slots: np.ndarray,
    values: np.ndarray,
    cand_node: np.ndarray,
    cand_event: np.ndarray,
    out: np.ndarray,
) -> None:
    """``out[k]``: the beam rank (:func:`spider_env.search.beam.chaos_key`) of candidate ``k``
    after its event, averaged over the samples ``values`` (a first sort of many candidates)."""
    st = new_state(pr)
    S = values.shape[0]
    for k in range(cand_node.shape[0]):
        total = 0.0
        for s in range(S):
            candidate_state(pr, recs[cand_node[k]], slots, values[s], cand_event[k], st)
            total += chaos_key(pr, st) >> 8
        out[k] = total / S


class PlanSearch(OnGame):
    """The planner's searches for one variant, with their buffers (made once, reused).

    ``closure_nodes``: positions a :func:`closure` holds at most (and as many events);
    ``width``, ``nodes``, ``max_depth``: the beam of one score (:func:`beam_value`). Each an int
    of at least 1 (``TypeError`` / ``ValueError`` otherwise). ``every_move``: the closure
    follows every legal move, not only those the beam's filter keeps (a bool).
    """

    def __init__(
        self,
        variant: Variant,
        *,
        closure_nodes: int = 4000,
        width: int = 2,
        nodes: int = 4000,
        max_depth: int = 200,
        every_move: bool = False,
    ) -> None:
        if variant.undo:
            variant = variant.with_options(undo=False)
        self.variant = variant
        self.game = FastGame(variant)
        pr = self.pr
        self.width = check_int("width", width, 1)
        self.nodes = check_int("nodes", nodes, 1)
        self.max_depth = check_int("max_depth", max_depth, 1)
        self.n_buckets = n_piles(pr) + 1
        self.n_cards = variant.n_cards
        # cards in the stock when k deals are left (the piles are dealt in order)
        sizes = list(variant.stock)
        self.stock_by_left = np.array(
            [sum(sizes[len(sizes) - k :]) if k else 0 for k in range(len(sizes) + 1)],
            dtype=np.int64,
        )
        if not isinstance(every_move, bool):
            raise TypeError(f"every_move must be a bool, got {type(every_move).__name__}")
        #: whether a :meth:`closure` follows every legal move (else the beam's filtered ones)
        self.every_move = every_move
        self.bufs = closure_buffers(pr, check_int("closure_nodes", closure_nodes, 1))
        self.recs, self.parent, self.action = self.bufs.recs, self.bufs.parent, self.bufs.action
        self.c_table = self.bufs.table
        self.ev_node, self.ev_action = self.bufs.ev_node, self.bufs.ev_action
        self.beam = score_buffers(pr, self.width * self.n_buckets, self.nodes)
        self.full = False
        #: positions the last :meth:`closure` listed (node 0 its root)
        self.positions = 0
        #: positions the scores' beams (:meth:`evaluate`) have generated, all calls
        self.generated = 0

    def closure(self, root: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
        """:func:`closure` of ``root``: ``(won node or -1, event nodes, event actions)``
        (copies); :attr:`full` says whether something was left out."""
        self.c_table.fill(0)
        n, n_ev, won, full = closure(self.pr, root, self.bufs, self.every_move)
        self.full = bool(full)
        self.positions = int(n)
        return int(won), self.ev_node[:n_ev].copy(), self.ev_action[:n_ev].copy()

    def most_runs(self) -> int:
        """The node of the last :meth:`closure` with the most completed runs (the first such
        node listed, so one of the fewest moves from the root)."""
        st = new_state(self.pr)
        best, node = -1, 0
        for i in range(self.positions):
            unpack(self.pr, self.recs[i], st)
            runs = sum(self.game.completed(st))
            if runs > best:
                best, node = runs, i
        return node

    def path(self, node: int) -> list[int]:
        """The actions from the closure's root to ``node``."""
        return trace_line(self.parent, self.action, node)

    def evaluate(
        self,
        slots: np.ndarray,
        values: np.ndarray,
        cand_node: np.ndarray,
        cand_event: np.ndarray,
        pair_cand: np.ndarray,
        pair_sample: np.ndarray,
        *,
        width: int | None = None,
        nodes: int | None = None,
    ) -> np.ndarray:
        """:func:`evaluate` of the pairs (a new array of scores); ``width`` / ``nodes``: a
        smaller beam than the search's own (``None``: its own; an int in 1 .. its own, the size
        of its buffers, else ``TypeError`` / ``ValueError``)."""
        width = self.width if width is None else check_int("width", width, 1, self.width)
        nodes = self.nodes if nodes is None else check_int("nodes", nodes, 1, self.nodes)
        out = np.empty(pair_cand.shape[0], dtype=np.float64)
        spent = np.zeros(1, dtype=np.int64)
        pairs = Pairs(self.recs, slots, values, cand_node, cand_event, pair_cand, pair_sample)
        evaluate(
            self.pr, pairs, out, width, nodes, self.max_depth, self.n_buckets, self.n_cards,
            self.beam, self.stock_by_left, spent,
        )  # fmt: skip
        self.generated += int(spent[0])
        return out

    def value(self, st: np.ndarray) -> float:
        """The score of position ``st`` with no search (:func:`beam_value` of depth 0): 1.0 if
        it is won, 0.0 if it is :func:`starved`, else :func:`graded` of its beam rank and its
        stock."""
        spent = np.zeros(1, dtype=np.int64)
        value = beam_value(
            self.pr, st, self.width, self.nodes, 0, self.n_buckets, self.n_cards, self.beam,
            self.stock_by_left, spent,
        )  # fmt: skip
        return float(value)

    def static(
        self, slots: np.ndarray, values: np.ndarray, cand_node: np.ndarray, cand_event: np.ndarray
    ) -> np.ndarray:
        """:func:`static_keys` of the candidates (lower is better)."""
        out = np.empty(cand_node.shape[0], dtype=np.float64)
        static_keys(self.pr, self.recs, slots, values, cand_node, cand_event, out)
        return out


def closure_buffers(pr: np.ndarray, n: int) -> ClosureBuffers:
    """The :class:`ClosureBuffers` of a :func:`closure` of ``n`` positions and ``n`` events (the
    transposition table with twice the room, so it never fills)."""
    return ClosureBuffers(
        new_records(pr, n),
        np.empty(n, dtype=np.int32),
        np.empty(n, dtype=np.int32),
        np.zeros(table_size(4 * n), dtype=np.uint64),
        np.empty(n, dtype=np.int32),
        np.empty(n, dtype=np.int32),
    )


def score_buffers(pr: np.ndarray, front: int, nodes: int) -> ScoreBuffers:
    """The :class:`ScoreBuffers` of a :func:`beam_value` of ``front`` frontier rows (its width
    times the counts of deals left) and at most ``nodes`` positions."""
    return ScoreBuffers(
        frontier_buffers(pr, front),
        np.zeros(table_size(2 * nodes + 2), dtype=np.uint64),
        np.empty(front, dtype=np.int32),
        np.empty(front, dtype=np.int32),
    )


__all__ = [
    "GRADED_TOP",
    "SCORE_DEALS",
    "ClosureBuffers",
    "Pairs",
    "PlanSearch",
    "ScoreBuffers",
    "beam_value",
    "candidate_state",
    "closure",
    "closure_buffers",
    "evaluate",
    "face_down_total",
    "graded",
    "pair_state",
    "score_buffers",
    "starved",
    "static_keys",
    "stock_term",
]


refresh_cache(globals())
