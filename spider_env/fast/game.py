"""The one interface of the compiled core for search code: players and solvers use nothing else
of :mod:`spider_env.fast` (``tests/test_layers.py`` holds them to it).

**From Python**: :class:`FastGame`, single-state operations on the state vectors of one variant
(rules, conversions, and the few reads and edits a player that keeps sampled layouts needs).

**From numba code** (a search): the compiled functions below, imported from this module. They take
the variant's parameter vector ``pr`` (:attr:`FastGame.params`) and state vectors ``st``; those
a search calls per node are inlined into it. They are loaded on first use, so importing this
module (and ``spider_env``) does not import numba.

* rules: ``legal_ids(pr, st, ids, keys) -> n`` (the sorted legal ids into ``ids``),
  ``apply_action(pr, st, a)`` (play legal ``a`` in place; returns the columns changed; inlined
  into the caller at each call site) and ``play_action`` (the same as a call of its own, for a
  caller that plays an action now and then and would rather not compile another copy),
  ``is_won(pr, st)``, ``completed_runs(st)``, ``deals_left(pr, st)``, and
  ``position_hash(pr, st)``, the one hash of a position (no counters), the sum of its parts
  ``runs_hash(st)`` and ``segment_hash(pr, st, s)`` of each column and pile;
* the variant: ``n_columns(pr)``, ``dealt_columns(pr)``, ``deal_needs_no_empty(pr)``,
  ``n_piles(pr)``,
  ``builds_any_suit(pr)``, ``is_move(pr, a)``, ``is_deal(pr, a)``,
  ``decode_move(pr, a) -> (src, cards, dst)`` (``core.actions.move_parts``), and buffers:
  ``new_state(pr)``, ``legal_buffers(pr) -> (ids, keys)``;
* a position: ``column_length(pr, st, c)``, ``face_down(pr, st, c)``, ``card_at(pr, st, c, i)``
  (deepest first), ``top_run(pr, st, c)`` (the suited run at its end), ``on_own_suit(card,
  under)``,
  ``pile_size(pr, st, j)``, ``pile_card(pr, st, j, i)``, ``moves_made(st)``,
  ``deals_made(st)``;
* packed positions (the slots in use only): ``new_records(pr, n)`` (from Python),
  ``pack(pr, st, rec)``, ``unpack(pr, rec, st)``, ``copy_state(pr, src, dst)`` and
  ``restore_state(pr, src, dst, dirty)`` (a copy made equal again after one move).
"""

from __future__ import annotations

import importlib
import operator
from typing import Any

import numpy as np

from spider_env.core.actions import check_action_id
from spider_env.core.checks import check_int, is_int
from spider_env.core.deals import DEAL_NUMBERS
from spider_env.core.state import State
from spider_env.core.variants import Variant, get_variant
from spider_env.fast.layout import (
    H_COMP,
    P_L,
    P_NACT,
    P_NP,
    P_OCOLS,
    P_ODOWN,
    P_OLEN,
    P_OPILE,
    P_ORUN,
    P_OSTOCK,
    P_PS,
    P_SIZE,
    P_TOPVIS,
    check_supported,
    from_array,
    params,
    state_key,
    to_array,
)

#: The compiled functions of the interface, by the module that defines them.
_COMPILED = {
    "spider_env.fast.rules": (
        "legal_ids",
        "apply_action",
        "play_action",
        "is_won",
        "completed_runs",
        "deals_left",
        "position_hash",
        "runs_hash",
        "segment_hash",
    ),
    "spider_env.fast.access": (
        "n_columns",
        "n_piles",
        "dealt_columns",
        "deal_needs_no_empty",
        "builds_any_suit",
        "is_move",
        "is_deal",
        "decode_move",
        "new_state",
        "legal_buffers",
        "column_length",
        "face_down",
        "card_at",
        "top_run",
        "on_own_suit",
        "pile_size",
        "pile_card",
        "moves_made",
        "deals_made",
        "new_records",
        "pack",
        "unpack",
        "copy_state",
        "restore_state",
    ),
}
_HOME = {name: module for module, names in _COMPILED.items() for name in names}


def __getattr__(name: str) -> Any:
    """A compiled function of the interface, imported on first use (``ImportError`` without
    numba)."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


class FastGame:
    """Single-state operations of the compiled core for one variant (for search players).

    A state is an ``int32`` vector (:mod:`spider_env.fast.layout`); :meth:`apply` returns a new
    one and leaves its argument alone, :meth:`apply_inplace` changes it. Legality is the pure
    engine's, mirrored: :meth:`legal_actions` equals ``rules.legal_actions`` of
    :meth:`to_state`, checked by the differential tests. Hidden cards are in the state: a
    player's search must only look ahead over what it could see.

    A *slot* is where one card lies: an index of the state vector (``st[slot]`` is the card),
    from :meth:`column_slot`, :meth:`pile_slot` or :meth:`hidden_slots`; :meth:`swap` is the one
    edit of a position besides playing moves.

    A copy (``copy.deepcopy``, ``pickle``) is a new ``FastGame`` of the variant: its
    :attr:`params` is the variant's one read-only vector again, never a writable copy, which
    numba would compile every function for a second time (a signature of its own).
    """

    def __init__(self, variant: str | Variant) -> None:
        from spider_env.fast import load_kernel  # the package's loader (ImportError: no numba)

        self.variant = get_variant(variant)
        self._k = load_kernel()
        check_supported(self.variant)
        self.params = params(self.variant)
        self.size = int(self.params[P_SIZE])
        self.n_actions = int(self.params[P_NACT])
        self._ids, self._keys = self._k.legal_buffers(self.params)
        pr = self.params
        self._len, self._down, self._run = int(pr[P_OLEN]), int(pr[P_ODOWN]), int(pr[P_ORUN])
        self._cols, self._cap = int(pr[P_OCOLS]), int(pr[P_L])
        self._pile, self._stock, self._pile_cap = int(pr[P_OPILE]), int(pr[P_OSTOCK]), int(pr[P_PS])
        self._n_piles = int(pr[P_NP])
        self._tops_seen = bool(pr[P_TOPVIS])

    def __reduce__(self) -> tuple[Any, ...]:
        return (FastGame, (self.variant,))

    # --- conversion ------------------------------------------------------------------------
    def initial(self, deal_number: int) -> np.ndarray:
        """The starting state of deal ``deal_number`` (as ``core.deals.generate_deal``)."""
        n = check_int("deal_number", deal_number, 0, DEAL_NUMBERS - 1)
        st = self._k.new_state(self.params)
        self._k.reset_deal(self.params, st, np.uint64(n))
        return st

    def from_state(self, state: State) -> np.ndarray:
        """The state vector of a :class:`State` of this variant (exact)."""
        if state.variant != self.variant:
            raise ValueError(f"a state of {state.variant.name}, not of {self.variant.name}")
        return to_array(state)

    def to_state(self, st: np.ndarray) -> State:
        """The :class:`State` of a state vector (exact, validated)."""
        return from_array(self.variant, st)

    # --- rules -----------------------------------------------------------------------------
    def legal_actions(self, st: np.ndarray) -> np.ndarray:
        """Sorted legal action ids (a fresh ``int32`` array; empty when the game is over)."""
        n = self._k.legal_ids(self.params, st, self._ids, self._keys)
        return self._ids[:n].copy()

    def apply(self, st: np.ndarray, action: int) -> np.ndarray:
        """The state after legal ``action`` (a new vector); ``IllegalMoveError`` otherwise."""
        a = check_action_id(self.variant, action)  # TypeError/ValueError for non-ids
        n = self._k.legal_ids(self.params, st, self._ids, self._keys)
        if not (self._ids[:n] == a).any():
            from spider_env.core.rules import IllegalMoveError, apply

            try:  # the pure engine words the refusal
                apply(self.to_state(st), a)
            except (IllegalMoveError, TypeError, ValueError) as exc:
                raise type(exc)(str(exc)) from None
            raise AssertionError("compiled and pure legality disagree")  # pragma: no cover
        out = st.copy()
        self._k.play_action(self.params, out, a)
        return out

    def apply_inplace(self, st: np.ndarray, action: int) -> None:
        """Play ``action``, known legal, on ``st`` in place (unchecked, like
        ``rules.apply_legal``: an illegal id gives a meaningless state; a non-int is a
        ``TypeError``)."""
        self._k.play_action(self.params, st, operator.index(action))

    @staticmethod
    def copy(st: np.ndarray) -> np.ndarray:
        """A copy of a state vector."""
        return st.copy()

    def hash(self, st: np.ndarray) -> int:
        """A 64-bit hash of the position (cards only, no counters): equal positions, equal
        hashes."""
        return int(self._k.position_hash(self.params, st))

    @staticmethod
    def key(st: np.ndarray) -> bytes:
        """The position as bytes (like ``State.key()``): equal keys mean the same table."""
        return state_key(st)

    def is_terminal(self, st: np.ndarray) -> bool:
        """Won, or no legal action left."""
        return self._k.legal_ids(self.params, st, self._ids, self._keys) == 0

    def won(self, st: np.ndarray) -> bool:
        """``State.won``."""
        return bool(self._k.is_won(self.params, st))

    def score(self, st: np.ndarray) -> int:
        """``State.score``."""
        return int(self._k.score(self.params, st))

    # --- reading and editing a position ------------------------------------------------------
    def completed(self, st: np.ndarray) -> tuple[int, int, int, int]:
        """Runs completed per suit (``State.completed``)."""
        s, h, d, c = (int(x) for x in st[H_COMP : H_COMP + 4])
        return s, h, d, c

    def column(self, st: np.ndarray, c: int) -> np.ndarray:
        """The cards of column ``c``, deepest first (a copy: ``State.cols[c]``)."""
        base = self.column_slot(c, 0)
        return st[base : base + int(st[self._len + c])].copy()

    def face_down(self, st: np.ndarray, c: int) -> int:
        """Face-down cards of column ``c``, its deepest (``State.down[c]``)."""
        self.column_slot(c, 0)  # checks c
        return int(st[self._down + c])

    def pile(self, st: np.ndarray, j: int) -> np.ndarray:
        """The cards left in stock pile ``j`` (a copy: ``State.stock[j]``, empty once dealt);
        card ``i`` is dealt onto column ``i``, card 0 is the top a variant with visible pile
        tops shows."""
        base = self.pile_slot(j, 0)
        return st[base : base + int(st[self._pile + j])].copy()

    def column_slot(self, c: int, i: int) -> int:
        """The slot of card ``i`` of column ``c`` (deepest first)."""
        _check_index("column", c, self.variant.n_columns)
        _check_index("card", i, self._cap)
        return self._cols + c * self._cap + i

    def pile_slot(self, j: int, i: int) -> int:
        """The slot of card ``i`` of stock pile ``j``."""
        _check_index("pile", j, self._n_piles)
        _check_index("card", i, self._pile_cap)
        return self._stock + j * self._pile_cap + i

    def hidden_slots(self, st: np.ndarray) -> list[int]:
        """The slots of the cards a player does not see: each column's face-down cards (column
        by column, deepest first), then the cards of each pile not dealt (pile by pile, but
        not its top where the variant shows pile tops)."""
        out: list[int] = []
        for c in range(self.variant.n_columns):
            base = self._cols + c * self._cap
            out.extend(range(base, base + int(st[self._down + c])))
        first = 1 if self._tops_seen else 0
        for j in range(self._n_piles):
            base = self._stock + j * self._pile_cap
            n = int(st[self._pile + j])
            if n > 0:
                out.extend(range(base + first, base + n))
        return out

    def swap(self, st: np.ndarray, a: int, b: int) -> None:
        """Exchange the cards in slots ``a`` and ``b`` of ``st`` in place and refresh the suited
        run at the end of each column they lie in (``ValueError`` if a slot holds no card).

        The deck and the shape of the table stay as they were, so a sampled layout of the
        unseen cards is repaired this way; the position need not be one that play reaches."""
        columns = {self._column_of(st, a), self._column_of(st, b)}
        st[a], st[b] = st[b], st[a]
        for c in columns:
            if c is not None:
                st[self._run + c] = self._k.run_length(self.params, st, c)

    def _column_of(self, st: np.ndarray, slot: int) -> int | None:
        """The column of card slot ``slot`` (``None``: a pile's); ``ValueError`` if no card of
        the position lies there."""
        _check_index("slot", slot, self.size)
        c, i = divmod(slot - self._cols, self._cap)
        if 0 <= c < self.variant.n_columns and i < int(st[self._len + c]):
            return c
        j, i = divmod(slot - self._stock, max(self._pile_cap, 1))
        if 0 <= j < self._n_piles and i < int(st[self._pile + j]):
            return None
        raise ValueError(
            f"slot {slot} holds no card of this {self.variant.name} position "
            "(slots come from column_slot, pile_slot and hidden_slots)"
        )


class OnGame:
    """A search over one :class:`FastGame` (``self.game``): ``pr`` is its parameter vector,
    read through the game so that a copy of the search keeps the variant's read-only vector
    (:class:`FastGame`'s copies)."""

    game: FastGame

    @property
    def pr(self) -> np.ndarray:
        return self.game.params


def _check_index(what: str, value: object, n: int) -> None:
    """``TypeError`` unless ``value`` is an int, ``IndexError`` unless it is in ``0..n-1``."""
    if not is_int(value):
        raise TypeError(f"{what} must be an int, got {value!r}")
    if not 0 <= operator.index(value) < n:
        raise IndexError(f"{what} {value} out of range " + (f"0..{n - 1}" if n else "(none)"))


__all__ = ["FastGame", "OnGame", *_HOME]
