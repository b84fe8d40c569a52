"""The compiled core (numba): the rules over fixed-shape arrays, for speed and for batches.

:mod:`spider_env.core` is the specification; this package mirrors it over the state vectors of
:mod:`spider_env.fast.layout` and is held to it by differential tests. It needs numba (a
dependency of the package); without numba everything still works on the pure-Python engine, and
the first env that would have used the compiled core says so in a one-line warning.

One module per concern (the compiled ones import numba, the others do not):

* :mod:`~spider_env.fast.layout`: the state vector and the variant's parameter vector, exact
  conversions to and from :class:`~spider_env.core.state.State` (NumPy only);
* :mod:`~spider_env.fast.rules`: legal ids, apply, score, the position hash (compiled);
* :mod:`~spider_env.fast.deals`: the deal generator (compiled);
* :mod:`~spider_env.fast.observe`: the table and feature observations (compiled);
* :mod:`~spider_env.fast.rewards`: the built-in rewards (compiled);
* :mod:`~spider_env.fast.step`: whole transitions of one game or of ``N`` (compiled);
* :mod:`~spider_env.fast.game`: the one interface for search code (:class:`FastGame` from
  Python, the functions numba code of a search calls).

:func:`load_kernel` loads the compiled modules (or raises ``ImportError``) and returns their
functions as one namespace.
"""

from __future__ import annotations

import importlib.util
import operator
import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np

from spider_env.core.actions import check_action_id
from spider_env.core.state import State
from spider_env.core.variants import Variant, get_variant
from spider_env.fast.layout import (
    H_COMP,
    P_NACT,
    P_SIZE,
    P_TOWIN,
    STATE_DTYPE,
    CompiledCoreRefused,
    check_supported,
    from_array,
    params,
    state_key,
    to_array,
)

_NUMBA = importlib.util.find_spec("numba") is not None
_kernel: Any = None
_import_error: str | None = None
_warned = False


class SlowPathWarning(UserWarning):
    """The compiled core is unavailable (numba missing or failing): the pure engine is used."""


def load_kernel() -> Any:
    """The compiled functions of :mod:`~spider_env.fast.rules`, :mod:`~spider_env.fast.deals`,
    :mod:`~spider_env.fast.observe`, :mod:`~spider_env.fast.rewards` and
    :mod:`~spider_env.fast.step` as one namespace (``k.legal_ids``, ``k.step_batch``...);
    numba compiles them, or loads them from its cache, on first use. ``ImportError`` if numba
    is unavailable."""
    global _kernel, _import_error
    if _kernel is None:
        if _import_error is not None:
            raise ImportError(_import_error)
        try:
            from spider_env.fast import deals, observe, rewards, rules, step
        except Exception as exc:  # numba missing, or an llvmlite/numba install that fails
            _import_error = f"the compiled core needs numba ({type(exc).__name__}: {exc})"
            raise ImportError(_import_error) from None
        functions: dict[str, Any] = {}
        for module in (rules, deals, observe, rewards, step):
            functions.update(
                (name, obj)
                for name, obj in vars(module).items()
                if not name.startswith("_") and getattr(obj, "py_func", None) is not None
            )
        _kernel = SimpleNamespace(**functions)
    return _kernel


def available() -> bool:
    """Whether the compiled core can be used (numba imports and the kernel loads)."""
    if not _NUMBA:
        return False
    try:
        load_kernel()
    except ImportError:
        return False
    return True


def warn_unavailable() -> None:
    """Say once, in one line, that the pure engine is used and how to get the fast path."""
    global _warned
    if _warned:
        return
    _warned = True
    why = "numba is not installed" if not _NUMBA else (_import_error or "numba failed to load")
    warnings.warn_explicit(
        f"spider_env: {why}; using the pure-Python engine (about 5x slower); "
        "`pip install numba` for the compiled core",
        SlowPathWarning,
        filename="spider_env",
        lineno=0,
    )


def refusal(variant: Variant) -> str | None:
    """Why the compiled core cannot play ``variant`` (``None`` if it can)."""
    if not available():
        return "numba is not available"
    try:
        check_supported(variant)
    except CompiledCoreRefused as exc:
        return str(exc)
    return None


class FastGame:
    """Single-state operations of the compiled core for one variant (for search players).

    A state is an ``int32`` vector (:mod:`spider_env.fast.layout`); :meth:`apply` returns a new
    one and leaves its argument alone, :meth:`apply_inplace` changes it. Legality is the pure
    engine's, mirrored: :meth:`legal_actions` equals ``rules.legal_actions`` of
    :meth:`to_state`, checked by the differential tests. Hidden cards are in the state: a
    player's search must only look ahead over what it could see.
    """

    def __init__(self, variant: str | Variant) -> None:
        self.variant = get_variant(variant)
        if not available():
            raise ImportError(_import_error or "the compiled core needs numba (not installed)")
        check_supported(self.variant)
        self._k = load_kernel()
        self.params = params(self.variant)
        self.size = int(self.params[P_SIZE])
        self.n_actions = int(self.params[P_NACT])
        self._ids = np.empty(self.n_actions + 1, dtype=np.int32)
        self._keys = np.zeros(64, dtype=np.int64)

    # --- conversion ------------------------------------------------------------------------
    def initial(self, deal_number: int) -> np.ndarray:
        """The starting state of deal ``deal_number`` (as ``core.deals.generate_deal``)."""
        if isinstance(deal_number, bool) or not isinstance(deal_number, (int, np.integer)):
            raise TypeError(f"deal_number must be an int, got {deal_number!r}")
        if not 0 <= int(deal_number) < 2**64:
            raise ValueError(f"deal_number must be in [0, 2**64), got {deal_number}")
        st = np.empty(self.size, dtype=STATE_DTYPE)
        self._k.reset_deal(self.params, st, np.uint64(int(deal_number)))
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
        self._k.apply_action(self.params, out, a)
        return out

    def apply_inplace(self, st: np.ndarray, action: int) -> None:
        """Play ``action``, known legal, on ``st`` in place (unchecked, like
        ``rules.apply_legal``: an illegal id gives a meaningless state; a non-int is a
        ``TypeError``)."""
        self._k.apply_action(self.params, st, operator.index(action))

    @staticmethod
    def copy(st: np.ndarray) -> np.ndarray:
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
        return int(st[H_COMP : H_COMP + 4].sum()) >= int(self.params[P_TOWIN])

    def score(self, st: np.ndarray) -> int:
        return int(self._k.score(self.params, st))


__all__ = [
    "CompiledCoreRefused",
    "FastGame",
    "SlowPathWarning",
    "available",
    "from_array",
    "load_kernel",
    "params",
    "refusal",
    "to_array",
    "warn_unavailable",
]
