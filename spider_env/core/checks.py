"""The argument checks of the whole project, written once.

Every public function, constructor and file reader checks what it is given with these, so a
wrong type is always a ``TypeError`` and a value out of range always a ``ValueError``, each
naming the argument, its allowed range and what was given. A wrong type raises
:class:`ArgumentTypeError`, a ``TypeError`` that is also a ``ValueError``: code written against
the checks this module replaced, some of which raised ``ValueError`` for a wrong type, keeps
working. An int is what Python can use as an
index (:func:`operator.index`: Python's and NumPy's integers, a 0-d integer array), never a
``bool`` (``True`` is not a count); a number is a real number (NumPy's too: NumPy registers its
types with :mod:`numbers`, so nothing here imports NumPy), never a ``bool``.
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import TypeGuard


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type (a ``TypeError``, and a ``ValueError`` for the callers
    that caught the ``ValueError`` earlier checks raised)."""


def is_int(value: object) -> TypeGuard[int]:
    """Whether ``value`` is an integer (anything :func:`operator.index` takes: a Python or NumPy
    int, a 0-d integer array) and not a ``bool`` (typed as ``int``, which NumPy's stand in
    for)."""
    kind = type(value)
    if kind is int:
        return True
    if kind is bool:
        return False
    try:
        operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return False
    return True


def is_number(value: object) -> TypeGuard[float]:
    """Whether ``value`` is a real number (int or float, Python or NumPy) and not a ``bool``
    (typed as ``float``)."""
    kind = type(value)
    if kind is float or kind is int:
        return True
    return isinstance(value, numbers.Real) and kind is not bool


#: NumPy's bool type, by name (``numpy.bool`` in NumPy 2, ``numpy.bool_`` before).
_NP_BOOLS = ("bool", "bool_")


def _shown(bound: float) -> str:
    """A bound as a reader takes it in: ``2**64-1`` rather than 20 digits."""
    if isinstance(bound, int) and bound >= 2**32 and (bound + 1) & bound == 0:
        return f"2**{(bound + 1).bit_length() - 1}-1"
    return f"{bound:,}"


def _bounds(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f" in {_shown(low)}..{_shown(high)}"
    if low is not None:
        return f" >= {_shown(low)}"
    if high is not None:
        return f" <= {_shown(high)}"
    return ""


def check_int(name: str, value: object, low: int | None = None, high: int | None = None) -> int:
    """``value`` as a Python ``int``: :class:`ArgumentTypeError` unless it is an int
    (:func:`is_int`), ``ValueError`` unless ``low <= value <= high`` (each bound ``None``: none)."""
    if not is_int(value):
        raise ArgumentTypeError(f"{name} must be an int{_bounds(low, high)}, got {value!r}")
    n = operator.index(value)
    if (low is not None and n < low) or (high is not None and n > high):
        raise ValueError(f"{name} must be an int{_bounds(low, high)}, got {n:,}")
    return n


def check_optional_int(
    name: str, value: object, low: int | None = None, high: int | None = None
) -> int | None:
    """``None``, or :func:`check_int` of ``value``."""
    return None if value is None else check_int(name, value, low, high)


def check_number(
    name: str,
    value: object,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``value`` as a finite ``float``: :class:`ArgumentTypeError` unless it is a real number
    (:func:`is_number`), ``ValueError`` if it is not finite or outside ``low .. high``
    (``low_open`` / ``high_open``: that bound itself excluded)."""
    left = "(" if low_open else "["
    right = ")" if high_open else "]"
    where = ""
    if low is not None or high is not None:
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        where = f" in {left}{lo}, {hi}{right}"
    if not is_number(value):
        raise ArgumentTypeError(f"{name} must be a number{where}, got {value!r}")
    try:
        x = float(value)
    except OverflowError:  # an int beyond float's range
        raise ValueError(f"{name} must be a finite number{where}, got {value!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number{where}, got {value!r}")
    if low is not None and (x <= low if low_open else x < low):
        raise ValueError(f"{name} must be a number{where}, got {value!r}")
    if high is not None and (x >= high if high_open else x > high):
        raise ValueError(f"{name} must be a number{where}, got {value!r}")
    return x


def check_bool(name: str, value: object) -> bool:
    """``value`` as a ``bool`` (Python's or NumPy's): :class:`ArgumentTypeError` otherwise."""
    kind = type(value)
    if isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in _NP_BOOLS):
        return bool(value)
    raise ArgumentTypeError(f"{name} must be a bool, got {value!r}")


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    """``value`` as one of the names ``choices``: :class:`ArgumentTypeError` unless it is a ``str``,
    ``ValueError`` naming the choices otherwise."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


__all__ = [
    "ArgumentTypeError",
    "check_bool",
    "check_choice",
    "check_int",
    "check_number",
    "check_optional_int",
    "is_int",
    "is_number",
]
