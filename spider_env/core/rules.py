"""The rules: the one place that decides what is legal, and what a legal action does.

* :func:`legal_actions` lists the legal action ids of a state (cached on the state);
  everything else (masks, step validation, agents, tests) derives from it.
* :func:`apply` returns the next state (the old one is untouched) and raises
  :class:`IllegalMoveError` for an action not in :func:`legal_actions`.

Rules of classic Spider as implemented (switches in :class:`~spider_env.core.variants.Variant`
change them for other games):

* A move takes the ``k`` exposed cards of a column when they are face up, of one suit and in
  descending rank, onto a column whose exposed card is one rank higher (any suit), or onto an
  empty column.
* A face-down card that becomes exposed turns face up (counted in ``reveals``).
* A deal puts the next stock pile onto the columns, one face-up card each, left to right; it is
  legal while the stock is not empty and (classic rule) no column is empty.
* Whenever the last 13 cards of a column are King down to Ace of one suit they are removed, after
  a move and after a deal, in every column where that happens; the card under them turns up.
* Won: ``runs_to_win`` runs removed. Over: won, or no legal action left.
"""

from __future__ import annotations

from spider_env.core.actions import (
    DEAL,
    DISCARD,
    MOVE,
    Action,
    check_action_id,
    deal_id,
    decode,
    describe,
    discard_id,
    encode,
    move_index,
    move_parts,
    undo_id,
)
from spider_env.core.cards import KING, N_RANKS, card_str
from spider_env.core.state import State, run_length


class IllegalMoveError(ValueError):
    """An action that is not legal in the state it was applied to."""


def movable_cards(state: State, column: int) -> int:
    """How many exposed cards of ``column`` may move together (at most; 0 if it is empty):
    its suited descending run, or every face-up card where the variant moves any face-up group.
    """
    if state.variant.move == "suited-run":
        return state.run_lengths[column]
    return len(state.cols[column]) - state.down[column]


def legal_actions(state: State) -> list[int]:
    """Sorted legal action ids of ``state`` (empty when the game is over).

    Computed once per state and cached on it; the caller gets its own copy of the list.
    """
    return list(state.cached_legal(_compute_legal))


def is_terminal(state: State) -> bool:
    """Won, or no legal action left."""
    return not legal_actions(state)


def _compute_legal(s: State) -> list[int]:
    v = s.variant
    if sum(s.completed) >= v.runs_to_win:
        return []
    C = v.n_columns
    R = v.max_run
    cols = s.cols
    runs = s.run_lengths
    out: list[int] = []
    empties = [d for d in range(C) if not cols[d]]
    any_suit = v.build == "any-suit"
    kings_only = v.empty_accepts == "king"
    # Index the non-empty columns by the key a moved card must have to go on them:
    # its rank (any-suit building) or its exact card id (same-suit building).
    targets: dict[int, list[int]] = {}
    for d in range(C):
        col = cols[d]
        if col:
            top = col[-1]
            if top % N_RANKS:  # nothing goes on an Ace
                key = top % N_RANKS - 1 if any_suit else top - 1
                lst = targets.get(key)
                if lst is None:
                    targets[key] = [d]
                else:
                    lst.append(d)
    for src in range(C):
        col = cols[src]
        if not col:
            continue
        kmax = movable_cards(s, src)
        for k in range(1, kmax + 1):
            moved = col[-k]
            if any_suit:
                lst = targets.get(moved % N_RANKS)
            elif moved % N_RANKS != KING:
                lst = targets.get(moved)
            else:
                lst = None
            if lst is not None:
                a0 = move_index(C, R, src, k, 0)
                for d in lst:
                    # A group taken from inside a column (any-face-up moves, e.g. 5C 9D 6C)
                    # can fit its own column's exposed card: never a move.
                    if d != src:
                        out.append(a0 + d)
            if empties and (not kings_only or moved % N_RANKS == KING):
                a0 = move_index(C, R, src, k, 0)
                for d in empties:
                    out.append(a0 + d)
    if s.stock:
        can_deal = True
        if v.deal_needs_no_empty:
            dealt = v.dealt_columns
            for d in empties:
                if d < dealt:
                    can_deal = False
                    break
        if can_deal:
            if v.choose_pile:
                for j, pile in enumerate(s.stock):
                    if pile:
                        out.append(deal_id(v, j))
            elif s.stock[-1]:  # piles are dealt in order, so the last goes last
                out.append(deal_id(v))
    if not v.auto_discard:
        for c in range(C):
            if runs[c] >= N_RANKS:
                out.append(discard_id(v, c))
    if s.prev is not None:
        out.append(undo_id(v))
    out.sort()
    return out


def apply(state: State, action: int | Action) -> State:
    """The state after a legal ``action`` (an id or a :class:`Action`); ``state`` is unchanged.

    Raises :class:`IllegalMoveError` (a ``ValueError``) naming the action and why it is
    illegal, ``TypeError``/``ValueError`` for something that is not an action id.
    """
    v = state.variant
    a = encode(v, action) if isinstance(action, Action) else check_action_id(v, action)
    if a not in state.cached_legal(_compute_legal):
        raise IllegalMoveError(
            f"illegal action {a} ({describe(v, a)}): {explain_illegal(state, a)}"
        )
    return apply_legal(state, a)


def apply_legal(s: State, a: int) -> State:
    """The state after action id ``a``, which the caller knows is legal (it came from
    :func:`legal_actions` of ``s``, or from a mask built from it); ``s`` is unchanged.

    For search and for the env, which have checked legality already: nothing is checked here,
    and an illegal ``a`` gives a meaningless state. Everyone else calls :func:`apply`.
    """
    v = s.variant
    n_move = v.n_move_actions
    cols = list(s.cols)
    down = list(s.down)
    runs = list(s.run_lengths)
    stock = s.stock
    completed = s.completed
    moves, deals, reveals, free_used = s.moves, s.deals, s.reveals, s.free_used
    revealed = False
    if a < n_move:
        src, k, dst = move_parts(v, a)
        scol = cols[src]
        dcol = cols[dst]
        moved = scol[-k:]
        rest = scol[:-k]
        cols[src] = rest
        # The suited run at the end of the moved group, joined to dst's run if it continues it.
        rs = runs[src]
        if k <= rs:
            if dcol and dcol[-1] == moved[0] + 1 and moved[0] % N_RANKS != KING:
                runs[dst] = runs[dst] + k
            else:
                runs[dst] = k
            if k < rs:
                runs[src] = rs - k
            else:
                runs[src] = -1
        else:
            runs[dst] = rs
            runs[src] = -1
        cols[dst] = dcol + moved
        moves += 1
        if dst >= v.dealt_columns:
            free_used = True
        if runs[src] < 0:
            d = down[src]
            if d and d == len(rest):
                down[src] = d - 1
                reveals += 1
                revealed = True
                runs[src] = 1
            else:
                runs[src] = run_length(rest, d)
        if v.auto_discard:
            # A group move (any-face-up rule) can uncover a run completed under it at src.
            # (Removing a run can uncover another complete run buried under it.)
            for c in (dst, src):
                while runs[c] >= N_RANKS:
                    completed, rev = _discard(cols, down, runs, completed, c)
                    reveals += rev
                    revealed = revealed or rev > 0
    elif a < n_move + v.n_deal_actions:
        j = a - n_move if v.choose_pile else _next_pile(stock)
        pile = stock[j]
        stock = stock[:j] + ((),) + stock[j + 1 :]
        deals += 1
        revealed = True
        for c, card in enumerate(pile):
            col = cols[c]
            if col and col[-1] == card + 1 and card % N_RANKS != KING:
                runs[c] += 1
            else:
                runs[c] = 1
            cols[c] = col + (card,)
        if v.auto_discard:
            for c in range(len(pile)):
                while runs[c] >= N_RANKS:
                    completed, rev = _discard(cols, down, runs, completed, c)
                    reveals += rev
    elif a < n_move + v.n_deal_actions + v.n_discard_actions:
        c = a - n_move - v.n_deal_actions
        completed, rev = _discard(cols, down, runs, completed, c)
        reveals += rev
        revealed = rev > 0
    else:  # undo
        p = s.prev
        assert p is not None
        return State(
            v, p.cols, p.down, p.stock, p.completed, moves, deals, s.undos + 1, reveals,
            free_used, p.prev, run_lengths=p.run_lengths, trusted=True,
        )  # fmt: skip
    return State(
        v, tuple(cols), tuple(down), stock, completed, moves, deals, s.undos, reveals, free_used,
        s if v.undo and not revealed else None, run_lengths=tuple(runs), trusted=True,
    )  # fmt: skip


def _next_pile(stock: tuple[tuple[int, ...], ...]) -> int:
    for j, pile in enumerate(stock):
        if pile:
            return j
    raise AssertionError("deal with an empty stock")  # excluded by legal_actions


def _discard(
    cols: list[tuple[int, ...]],
    down: list[int],
    runs: list[int],
    completed: tuple[int, int, int, int],
    c: int,
) -> tuple[tuple[int, int, int, int], int]:
    """Remove the complete run ending column ``c``; returns new completed counts and reveals."""
    col = cols[c]
    suit = col[-1] // N_RANKS
    rest = col[:-N_RANKS]
    cols[c] = rest
    comp = list(completed)
    comp[suit] += 1
    d = down[c]
    rev = 0
    if d and d == len(rest):
        down[c] = d - 1
        rev = 1
    runs[c] = run_length(rest, down[c])
    return (comp[0], comp[1], comp[2], comp[3]), rev


def explain_illegal(state: State, action: int | Action, *, ascii: bool = True) -> str:
    """Why ``action`` is not legal in ``state``, in words (for error messages only); cards are
    written ``card_str(c, ascii=ascii)``: ``TS`` (the default), or ``10♠`` as the board shows.

    Legality itself is decided by :func:`legal_actions` alone; this only describes a refusal.
    """
    v = state.variant
    m = action if isinstance(action, Action) else decode(v, action)
    if state.won:
        return "the game is won"
    if m.kind == MOVE:
        col = state.cols[m.src]
        if m.src == m.dst:
            return "source and target are the same column"
        if not col:
            return f"column {m.src} is empty"
        movable = movable_cards(state, m.src)
        if m.cards > movable:
            what = "suited descending run" if v.move == "suited-run" else "face-up cards"
            return f"column {m.src} has only {movable} movable card(s) (its {what})"
        top = col[-m.cards]
        dcol = state.cols[m.dst]
        if not dcol:
            if v.empty_accepts == "king":
                return f"only a King may go to an empty column, not {card_str(top, ascii=ascii)}"
            return "not legal in this position"
        need = "one rank higher" if v.build == "any-suit" else "one rank higher, same suit"
        card, onto = card_str(top, ascii=ascii), card_str(dcol[-1], ascii=ascii)
        return f"{card} cannot go on {onto} (needs a card {need})"
    if m.kind == DEAL:
        if not state.stock_cards:
            return "the stock is empty"
        if v.choose_pile and not state.stock[m.pile]:
            return f"stock pile {m.pile} has been dealt already"
        empty = [c for c in range(v.dealt_columns) if not state.cols[c]]
        if empty and v.deal_needs_no_empty:
            return f"no deal while a column is empty (column {empty[0]})"
        return "not legal in this position"
    if m.kind == DISCARD:
        return f"column {m.src} does not end in a complete King..Ace run of one suit"
    if m.kind == "undo":
        return "nothing to undo (the last action revealed a card, or there was none)"
    return "not legal in this position"


__all__ = [
    "DEAL",
    "DISCARD",
    "MOVE",
    "Action",
    "IllegalMoveError",
    "apply",
    "explain_illegal",
    "is_terminal",
    "legal_actions",
    "movable_cards",
]
