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
* :func:`blind_value` (:func:`evaluate_blind` for many pairs): a score without the beam's
  knowledge of the sample's cards, a rollout by a player who sees only what a player sees:
  at each step its closure, then the event best by the static rank with the card it turns up
  drawn from the unseen cards (:func:`blind_key`); the sample's own card then turns up.
"""

from __future__ import annotations

import numpy as np

from spider_env.core.cards import KING
from spider_env.core.variants import Variant
from spider_env.fast.game import (
    FastGame,
    OnGame,
    apply_action,
    card_at,
    column_length,
    copy_state,
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
    pile_card,
    pile_size,
    position_hash,
    set_card,
    unpack,
)
from spider_env.fast.jit import jit, refresh_cache
from spider_env.search.beam import (
    _CHILDREN,
    F_FULL,
    _expand,
    _select,
    chaos_key,
    filtered,
    first_empties,
    forced_discard,
    hash_insert,
    table_size,
    trace_line,
)

#: The share of the score a position that is not won can reach (a win scores 1.0).
GRADED_TOP = 0.9

#: A :func:`closure`'s buffers (:func:`closure_buffers`), passed to the compiled functions as
#: one tuple: ``recs, parent, action, table, ev_node, ev_action``.
ClosureBuffers = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
#: A :func:`beam_value`'s buffers (:func:`beam_buffers`), one tuple of ten arrays.
BeamBuffers = tuple[np.ndarray, ...]
#: (candidate, sample) pairs to score, one tuple of seven arrays (:func:`pair_state`).
Pairs = tuple[np.ndarray, ...]


@jit
def face_down_total(pr: np.ndarray, st: np.ndarray) -> int:
    """Face-down cards on the table (all columns)."""
    n = 0
    for c in range(n_columns(pr)):
        n += face_down(pr, st, c)
    return n


@jit
def closure(pr: np.ndarray, root: np.ndarray, bufs: ClosureBuffers) -> tuple[int, int, int, int]:
    """The positions reachable from ``root`` without turning a card up or dealing, breadth
    first, in ``bufs`` (:func:`closure_buffers`: ``recs, parent, action, table, ev_node,
    ev_action``): ``recs[i]`` (packed), reached from ``parent[i]`` by ``action[i]`` (node 0 is the
    root), at most ``recs.shape[0]``; and the events from them: ``ev_action[e]`` played in
    ``ev_node[e]`` turns a card up or deals (each distinct resulting position once), at most
    ``ev_node.shape[0]``. ``table`` (zeroed, a power of two, at least twice the positions and
    events) is the transposition table. Returns ``(positions, events, won, full)``: ``won`` is
    a node that wins (-1: none; the search stops there), ``full`` 1 when a child found no
    room (positions or events at their limit; it may repeat one listed). A child without room
    is not put in the table, so the table never fills."""
    recs, parent, action, table, ev_node, ev_action = bufs
    st = new_state(pr)
    child = new_state(pr)
    ids, keys = legal_buffers(pr)
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
        m = legal_ids(pr, st, ids, keys)
        empty_dealt, empty_free = first_empties(pr, st)
        stock = deals_left(pr, st)
        forced = forced_discard(pr, ids, m)  # a discard: made at once (as the beam does)
        for j in range(m):
            a = ids[j]
            if forced >= 0:
                if a != forced:
                    continue
            elif filtered(pr, st, a, empty_dealt, empty_free, stock):
                continue
            copy_state(pr, st, child)
            apply_action(pr, child, a)
            event = is_deal(pr, a) or face_down_total(pr, child) < down0
            if (n_ev >= ev_cap) if event else (n >= cap):
                # no room: not put in the table either (a full table would make every
                # later look-up scan all of it)
                full = 1
                continue
            fresh = hash_insert(table, position_hash(pr, child))
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
    if not deal_needs_no_empty(pr) or deals_left(pr, st) == 0:
        return False
    cards = 0
    for c in range(n_columns(pr)):
        cards += column_length(pr, st, c)
    return cards < dealt_columns(pr)


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
    bufs: BeamBuffers,
    deals: int,
    stock_by_left: np.ndarray,
    spent: np.ndarray,
) -> float:
    """A beam ``width`` wide (per count of deals left) from ``root``, at most ``budget``
    positions generated and ``max_depth`` depths: 1.0 if it wins, 0.0 if ``root`` is
    :func:`starved`, else :func:`graded` of the best position generated that is not starved;
    the positions generated are added to ``spent[0]``. ``bufs``: :func:`beam_buffers` (at least
    ``width * n_buckets`` frontier rows, a table of ``2 * budget`` keys, cleared here)."""
    frontier, f_ids, cand, c_parent, c_action, c_key, c_left, table, b_parent, b_action = bufs
    if is_won(pr, root):
        return 1.0
    if starved(pr, root):
        return 0.0
    tmp = new_state(pr)
    table[:] = 0
    pack(pr, root, frontier[0])
    f_ids[0] = 0
    hash_insert(table, position_hash(pr, root))
    counters = np.zeros(2, dtype=np.int64)
    flags = np.zeros(3, dtype=np.int64)
    best = chaos_key(pr, root) + stock_term(stock_by_left, deals_left(pr, root))
    nf = 1
    for _ in range(max_depth):
        nc = _expand(
            pr, frontier, f_ids, nf, cand, c_parent, c_action, c_key, c_left, table, budget,
            counters, flags, True, deals,
        )  # fmt: skip
        if nc < 0:
            spent[0] += counters[0]
            return 1.0
        for j in range(nc):
            key = c_key[j] + stock_term(stock_by_left, c_left[j])
            if key < best:
                unpack(pr, cand[j], tmp)
                if not starved(pr, tmp):
                    best = key
        if nc == 0 or flags[F_FULL]:
            break
        nf = _select(
            cand, c_parent, c_action, c_key, c_left, nc, width, n_buckets, frontier, f_ids,
            b_parent, b_action, 0, flags,
        )  # fmt: skip
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
        apply_action(pr, st, event)


@jit
def n_pairs(pairs: Pairs) -> int:
    """How many pairs ``pairs`` holds (:func:`pair_state`)."""
    return pairs[5].shape[0]


@jit
def pair_state(pr: np.ndarray, pairs: Pairs, p: int, st: np.ndarray) -> None:
    """Into ``st``: pair ``p`` of ``pairs`` (``recs, slots, values, cand_node, cand_event,
    pair_cand, pair_sample``), candidate ``k = pair_cand[p]`` on sample ``pair_sample[p]``:
    closure position ``recs[cand_node[k]]`` with the sample's unseen cards (``values[s]`` in the
    hidden ``slots``) put in, then its event ``cand_event[k]`` played (-1: none)."""
    recs, slots, values, cand_node, cand_event, pair_cand, pair_sample = pairs
    k = pair_cand[p]
    candidate_state(pr, recs[cand_node[k]], slots, values[pair_sample[p]], cand_event[k], st)


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
    bufs: BeamBuffers,
    deals: int,
    stock_by_left: np.ndarray,
    spent: np.ndarray,
) -> None:
    """``out[p]`` = :func:`beam_value` of pair ``p`` (:func:`pair_state`); the beams' positions
    generated are added to ``spent[0]``."""
    st = new_state(pr)
    for p in range(n_pairs(pairs)):
        pair_state(pr, pairs, p, st)
        out[p] = beam_value(
            pr, st, width, budget, max_depth, n_buckets, n_cards, bufs, deals, stock_by_left, spent
        )


@jit
def closure_graded(
    pr: np.ndarray,
    root: np.ndarray,
    recs: np.ndarray,
    n: int,
    stock_by_left: np.ndarray,
    n_cards: int,
    tmp: np.ndarray,
) -> float:
    """:func:`graded` of the best of ``root`` and the positions ``recs[1:n]`` of its
    :func:`closure` that are not :func:`starved` (no deal among them: the stock is ``root``'s;
    0.0 if ``root`` is starved); ``tmp``: a state buffer."""
    if starved(pr, root):
        return 0.0
    stock = stock_term(stock_by_left, deals_left(pr, root))
    best = chaos_key(pr, root) + stock
    for i in range(1, n):
        unpack(pr, recs[i], tmp)
        key = chaos_key(pr, tmp) + stock
        if key < best and not starved(pr, tmp):
            best = key
    return graded(pr, best, n_cards)


@jit
def blank_face_down(pr: np.ndarray, st: np.ndarray) -> None:
    """Every face-down card of ``st`` made a king (the beam rank reads a column's deepest card:
    blanked, a rank reads nothing unseen)."""
    for c in range(n_columns(pr)):
        for i in range(face_down(pr, st, c)):
            set_card(pr, st, c, i, KING)


@jit
def evaluate_worst(
    pr: np.ndarray,
    pairs: Pairs,
    out: np.ndarray,
    n_cards: int,
    bufs: ClosureBuffers,
    stock_by_left: np.ndarray,
) -> None:
    """``out[p]``: the worst case of pair ``p`` (:func:`pair_state`), the score when every card
    still unseen after its event is useless: the candidate's position with the sample's cards
    put in and its event played (what the event shows is seen), then the best position
    reachable without turning another card up or dealing (:func:`closure` in ``bufs``; 1.0 if
    it wins, else :func:`graded`). The cards still face down are blanked (all kings) first,
    since the rank reads a column's deepest card: only the card the event shows is read from
    the sample."""
    recs, _, _, table, _, _ = bufs
    st = new_state(pr)
    other = new_state(pr)
    for p in range(n_pairs(pairs)):
        pair_state(pr, pairs, p, st)
        blank_face_down(pr, st)
        if is_won(pr, st):
            out[p] = 1.0
            continue
        table[:] = 0
        n, _, won, _ = closure(pr, st, bufs)
        if won >= 0:
            out[p] = 1.0
            continue
        out[p] = closure_graded(pr, st, recs, n, stock_by_left, n_cards, other)


@jit
def unseen_pool(pr: np.ndarray, st: np.ndarray, pool: np.ndarray) -> int:
    """Into ``pool``: the cards ``st`` keeps unseen (face down, in the stock; a pile's top too
    where the variant shows it, so a rollout's player knows a little less than a player),
    sorted, so that a draw from it depends on what they are, not where they lie; returns how
    many."""
    n = 0
    for c in range(n_columns(pr)):
        for i in range(face_down(pr, st, c)):
            pool[n] = card_at(pr, st, c, i)
            n += 1
    for j in range(n_piles(pr)):
        for i in range(pile_size(pr, st, j)):
            pool[n] = pile_card(pr, st, j, i)
            n += 1
    pool[:n].sort()
    return n


@jit
def blind_key(
    pr: np.ndarray,
    rec: np.ndarray,
    event: int,
    pool: np.ndarray,
    n_pool: int,
    draws: int,
    tmp: np.ndarray,
) -> float:
    """The beam rank of closure position ``rec`` after ``event`` as a player sees it before
    the event: the card it turns up is drawn ``draws`` times (numba's RNG, seeded by the
    caller) from the ``n_pool`` unseen cards of ``pool`` (:func:`unseen_pool`) and the ranks
    averaged, every card still face down blanked (a king); a deal is ranked by the position it
    is made from. Nothing unseen is read."""
    unpack(pr, rec, tmp)
    shown = -1
    if not is_deal(pr, event):
        C = n_columns(pr)
        before = np.empty(C, dtype=np.int64)
        for c in range(C):
            before[c] = face_down(pr, tmp, c)
        apply_action(pr, tmp, event)
        for c in range(C):
            if face_down(pr, tmp, c) < before[c]:
                shown = c
    blank_face_down(pr, tmp)
    if shown < 0 or n_pool == 0:
        return float(chaos_key(pr, tmp) >> 8)
    at = face_down(pr, tmp, shown)
    total = 0.0
    for _ in range(draws):
        set_card(pr, tmp, shown, at, pool[np.random.randint(n_pool)])
        total += chaos_key(pr, tmp) >> 8
    return total / draws


@jit
def blind_value(
    pr: np.ndarray,
    start: np.ndarray,
    max_events: int,
    draws: int,
    hold: bool,
    n_cards: int,
    bufs: ClosureBuffers,
    stock_by_left: np.ndarray,
    spent: np.ndarray,
) -> float:
    """A rollout from ``start`` (a full layout) by a player who sees only what a player sees:
    at each step the :func:`closure` (in ``bufs``), a win played if listed, else the
    event best by :func:`blind_key` (no deal while a card can be turned up, with ``hold``),
    then the layout's own cards turn up; at most ``max_events`` events. 1.0 if it wins, else
    :func:`graded` of the best position of its last closure. The positions listed are added
    to ``spent[0]``; draws use numba's RNG (seeded by the caller)."""
    recs, _, _, table, ev_node, ev_action = bufs
    cur = new_state(pr)
    tmp = new_state(pr)
    pool = np.empty(cur.shape[0], dtype=cur.dtype)
    copy_state(pr, start, cur)
    n = 0
    for _ in range(max_events + 1):
        if is_won(pr, cur):
            return 1.0
        table[:] = 0
        n, n_ev, won, _ = closure(pr, cur, bufs)
        spent[0] += n
        if won >= 0:
            return 1.0
        if n_ev == 0:
            break
        reveal = False
        if hold:
            for e in range(n_ev):
                if not is_deal(pr, ev_action[e]):
                    reveal = True
                    break
        n_pool = unseen_pool(pr, cur, pool)
        best = -1
        best_key = 0.0
        for e in range(n_ev):
            if reveal and is_deal(pr, ev_action[e]):
                continue
            key = blind_key(pr, recs[ev_node[e]], ev_action[e], pool, n_pool, draws, tmp)
            if best < 0 or key < best_key:
                best, best_key = e, key
        unpack(pr, recs[ev_node[best]], cur)
        apply_action(pr, cur, ev_action[best])
        n = 0  # out of events: the position reached is graded alone
    return closure_graded(pr, cur, recs, n, stock_by_left, n_cards, tmp)


@jit
def evaluate_blind(
    pr: np.ndarray,
    pairs: Pairs,
    seeds: np.ndarray,
    out: np.ndarray,
    max_events: int,
    draws: int,
    hold: bool,
    n_cards: int,
    bufs: ClosureBuffers,
    stock_by_left: np.ndarray,
    spent: np.ndarray,
) -> None:
    """``out[p]``: :func:`blind_value` of pair ``p`` (:func:`pair_state`), numba's RNG seeded with
    ``seeds[p]`` first; the rollouts' closures in ``bufs``."""
    st = new_state(pr)
    for p in range(n_pairs(pairs)):
        pair_state(pr, pairs, p, st)
        np.random.seed(seeds[p])
        out[p] = blind_value(pr, st, max_events, draws, hold, n_cards, bufs, stock_by_left, spent)


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
    ``width``, ``nodes``, ``max_depth``: the beam of one score (:func:`beam_value`).
    """

    def __init__(
        self,
        variant: Variant,
        *,
        closure_nodes: int = 4000,
        width: int = 2,
        nodes: int = 4000,
        max_depth: int = 200,
        deals: int = 1,
    ) -> None:
        if variant.undo:
            variant = variant.with_options(undo=False)
        self.variant = variant
        self.game = FastGame(variant)
        pr = self.pr
        self.width, self.nodes, self.max_depth = width, nodes, max_depth
        self.n_buckets = n_piles(pr) + 1
        self.n_cards = variant.n_cards
        self.deals = deals
        # cards in the stock when k deals are left (the piles are dealt in order)
        sizes = list(variant.stock)
        self.stock_by_left = np.array(
            [sum(sizes[len(sizes) - k :]) if k else 0 for k in range(len(sizes) + 1)],
            dtype=np.int64,
        )
        self.bufs = closure_buffers(pr, closure_nodes)
        self.recs, self.parent, self.action, self.c_table, self.ev_node, self.ev_action = self.bufs
        self.beam = beam_buffers(pr, width * self.n_buckets, nodes)
        self.full = False
        #: positions the scores' beams (:meth:`evaluate`) have generated and the rollouts'
        #: closures (:meth:`blind`) listed, all calls
        self.generated = 0
        self._worst: ClosureBuffers | None = None
        self._blind: ClosureBuffers | None = None

    def closure(self, root: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
        """:func:`closure` of ``root``: ``(won node or -1, event nodes, event actions)``
        (copies); :attr:`full` says whether something was left out."""
        self.c_table.fill(0)
        _, n_ev, won, full = closure(self.pr, root, self.bufs)
        self.full = bool(full)
        return int(won), self.ev_node[:n_ev].copy(), self.ev_action[:n_ev].copy()

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
        smaller beam than the search's own (``None``: its own; ``ValueError`` outside 1 .. its
        own, the size of its buffers)."""
        width = self.width if width is None else _within("width", width, self.width)
        nodes = self.nodes if nodes is None else _within("nodes", nodes, self.nodes)
        out = np.empty(pair_cand.shape[0], dtype=np.float64)
        spent = np.zeros(1, dtype=np.int64)
        evaluate(
            self.pr, (self.recs, slots, values, cand_node, cand_event, pair_cand, pair_sample),
            out, width, nodes, self.max_depth, self.n_buckets, self.n_cards, self.beam, self.deals,
            self.stock_by_left, spent,
        )  # fmt: skip
        self.generated += int(spent[0])
        return out

    def worst(
        self,
        slots: np.ndarray,
        values: np.ndarray,
        cand_node: np.ndarray,
        cand_event: np.ndarray,
        pair_cand: np.ndarray,
        pair_sample: np.ndarray,
        positions: int,
    ) -> np.ndarray:
        """:func:`evaluate_worst` of the pairs (a new array), each closure at most
        ``positions`` positions (buffers made on first use, again if it changes);
        ``ValueError`` unless ``positions`` is an int of at least 1."""
        positions = _within("positions", positions)
        if self._worst is None or self._worst[0].shape[0] != positions:
            self._worst = closure_buffers(self.pr, positions)
        out = np.empty(pair_cand.shape[0], dtype=np.float64)
        evaluate_worst(
            self.pr, (self.recs, slots, values, cand_node, cand_event, pair_cand, pair_sample),
            out, self.n_cards, self._worst, self.stock_by_left,
        )  # fmt: skip
        return out

    def blind(
        self,
        slots: np.ndarray,
        values: np.ndarray,
        cand_node: np.ndarray,
        cand_event: np.ndarray,
        pair_cand: np.ndarray,
        pair_sample: np.ndarray,
        seeds: np.ndarray,
        *,
        positions: int,
        max_events: int = 200,
        draws: int = 2,
        hold: bool = True,
    ) -> np.ndarray:
        """:func:`evaluate_blind` of the pairs (a new array of scores), each rollout's closures
        at most ``positions`` positions (buffers made on first use, again if it changes); the
        positions listed are added to :attr:`generated`."""
        positions = _within("positions", positions)
        if self._blind is None or self._blind[0].shape[0] != positions:
            self._blind = closure_buffers(self.pr, positions)
        out = np.empty(pair_cand.shape[0], dtype=np.float64)
        spent = np.zeros(1, dtype=np.int64)
        evaluate_blind(
            self.pr, (self.recs, slots, values, cand_node, cand_event, pair_cand, pair_sample),
            seeds, out, _within("max_events", max_events), _within("draws", draws), hold,
            self.n_cards, self._blind, self.stock_by_left, spent,
        )  # fmt: skip
        self.generated += int(spent[0])
        return out

    def static(
        self, slots: np.ndarray, values: np.ndarray, cand_node: np.ndarray, cand_event: np.ndarray
    ) -> np.ndarray:
        """:func:`static_keys` of the candidates (lower is better)."""
        out = np.empty(cand_node.shape[0], dtype=np.float64)
        static_keys(self.pr, self.recs, slots, values, cand_node, cand_event, out)
        return out


def _within(name: str, value: object, top: int | None = None) -> int:
    """``value`` as an int of at least 1 (and at most ``top``, if given); ``ValueError`` naming
    ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if top is None and value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    if top is not None and not 1 <= value <= top:
        raise ValueError(f"{name} must be in 1..{top}, got {value}")
    return int(value)


def closure_buffers(pr: np.ndarray, n: int) -> ClosureBuffers:
    """The buffers of a :func:`closure` of ``n`` positions and ``n`` events: records, parents,
    actions, the transposition table (twice the room, so it never fills), event nodes, event
    actions."""
    return (
        new_records(pr, n),
        np.empty(n, dtype=np.int32),
        np.empty(n, dtype=np.int32),
        np.zeros(table_size(4 * n), dtype=np.uint64),
        np.empty(n, dtype=np.int32),
        np.empty(n, dtype=np.int32),
    )


def beam_buffers(pr: np.ndarray, front: int, nodes: int) -> BeamBuffers:
    """The buffers of a :func:`beam_value` of ``front`` frontier rows (its width times the
    counts of deals left) and at most ``nodes`` positions: the frontier and its node ids, the
    children (records, parents, actions, ranks, deals left), the transposition table, the
    selection's parents and actions."""
    n = front * _CHILDREN
    return (
        new_records(pr, front),
        np.empty(front, dtype=np.int32),
        new_records(pr, n),
        np.empty(n, dtype=np.int32),
        np.empty(n, dtype=np.int32),
        np.empty(n, dtype=np.int64),
        np.empty(n, dtype=np.int64),
        np.zeros(table_size(2 * nodes + 2), dtype=np.uint64),
        np.empty(front, dtype=np.int32),
        np.empty(front, dtype=np.int32),
    )


__all__ = [
    "GRADED_TOP",
    "BeamBuffers",
    "ClosureBuffers",
    "Pairs",
    "PlanSearch",
    "beam_buffers",
    "beam_value",
    "blank_face_down",
    "blind_key",
    "blind_value",
    "candidate_state",
    "closure",
    "closure_buffers",
    "closure_graded",
    "evaluate",
    "evaluate_blind",
    "evaluate_worst",
    "face_down_total",
    "graded",
    "n_pairs",
    "pair_state",
    "starved",
    "static_keys",
    "stock_term",
    "unseen_pool",
]


refresh_cache(globals())
