"""The argument checks of the whole project, written once.

Every public function, constructor and file reader checks what it is given with these, so a
wrong type is always a ``TypeError`` and a value out of range always a ``ValueError``, each
naming the argument, its allowed range and what was given. ``bool`` is never taken for an int
(``True`` is not a count); NumPy's integers and floats are taken (NumPy registers them as
:mod:`numbers` types, so nothing here imports NumPy).
"""

from __future__ import annotations

import math
import numbers


def is_int(value: object) -> bool:
    """Whether ``value`` is an integer (a Python or NumPy int) and not a ``bool``."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """Whether ``value`` is a real number (int or float, Python or NumPy) and not a ``bool``."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


#: NumPy's bool type, by name (``numpy.bool`` in NumPy 2, ``numpy.bool_`` before).
_NP_BOOLS = ("bool", "bool_")


def _bounds(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f" in {low:,}..{high:,}"
    if low is not None:
        return f" >= {low:,}"
    if high is not None:
        return f" <= {high:,}"
    return ""


def check_int(name: str, value: object, low: int | None = None, high: int | None = None) -> int:
    """``value`` as a Python ``int``: ``TypeError`` unless it is an int (:func:`is_int`),
    ``ValueError`` unless ``low <= value <= high`` (each bound ``None``: none)."""
    if not is_int(value):
        raise TypeError(f"{name} must be an int{_bounds(low, high)}, got {value!r}")
    n = int(value)  # type: ignore[call-overload]
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
    """``value`` as a finite ``float``: ``TypeError`` unless it is a real number
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
        raise TypeError(f"{name} must be a number{where}, got {value!r}")
    try:
        x = float(value)  # type: ignore[arg-type]
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
    """``value`` as a ``bool``: ``TypeError`` unless it is one (Python's or NumPy's)."""
    kind = type(value)
    if isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in _NP_BOOLS):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {value!r}")


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    """``value`` as one of the names ``choices``: ``TypeError`` unless it is a ``str``,
    ``ValueError`` naming the choices otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


__all__ = [
    "check_bool",
    "check_choice",
    "check_int",
    "check_number",
    "check_optional_int",
    "is_int",
    "is_number",
]
