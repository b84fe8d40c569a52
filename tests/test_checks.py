"""spider_env.core.checks: the one set of argument checks. A wrong type is an
ArgumentTypeError (a TypeError and a ValueError), a value out of range a ValueError, each naming
the argument and its range; bools are never ints, NumPy's ints and floats are taken."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spider_env.core.checks import (
    ArgumentTypeError,
    check_bool,
    check_choice,
    check_int,
    check_number,
    check_optional_int,
    is_int,
    is_number,
)


@given(st.integers(), st.integers(), st.integers())
def test_check_int_takes_exactly_the_ints_in_range(value: int, a: int, b: int) -> None:
    low, high = min(a, b), max(a, b)
    if low <= value <= high:
        assert check_int("n", value, low, high) == value
    else:
        with pytest.raises(ValueError, match=r"n must be an int in") as info:
            check_int("n", value, low, high)
        assert not isinstance(info.value, TypeError)


@pytest.mark.parametrize("value", [True, False, np.bool_(True), 1.0, np.float64(2), "3", None, [1]])
def test_a_value_that_is_not_an_int_is_an_argument_type_error_naming_it(value: object) -> None:
    with pytest.raises(ArgumentTypeError, match=r"evals must be an int in 1\.\.5, got ") as info:
        check_int("evals", value, 1, 5)
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("value", [np.int8(3), np.uint64(3), np.int64(3), np.array(3)])
def test_numpy_ints_are_taken_and_given_back_as_python_ints(value: object) -> None:
    out = check_int("n", value, 0, 9)
    assert out == 3 and type(out) is int


def test_bounds_read_as_a_reader_takes_them_in() -> None:
    with pytest.raises(ValueError, match=r"deal must be an int in 0\.\.2\*\*64-1, got -1"):
        check_int("deal", -1, 0, 2**64 - 1)
    with pytest.raises(ValueError, match=r"nodes must be an int >= 1, got 0"):
        check_int("nodes", 0, 1)
    with pytest.raises(ValueError, match=r"width must be an int <= 1,000, got 1,001"):
        check_int("width", 1001, None, 1000)


def test_optional_int_takes_none() -> None:
    assert check_optional_int("limit", None, 1) is None
    assert check_optional_int("limit", 5, 1) == 5
    with pytest.raises(ArgumentTypeError, match=r"limit must be an int >= 1, got '5'"):
        check_optional_int("limit", "5", 1)


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_check_number_takes_the_finite_numbers_in_range(x: float) -> None:
    if math.isfinite(x) and 0.0 < x <= 1.0:
        assert check_number("alpha", x, 0, 1, low_open=True) == x
    else:
        with pytest.raises(ValueError, match="alpha must be a"):
            check_number("alpha", x, 0, 1, low_open=True)


@pytest.mark.parametrize("value", [True, "0.5", None, 1j])
def test_check_number_refuses_what_is_not_a_real_number(value: object) -> None:
    with pytest.raises(ArgumentTypeError, match="reward must be a number"):
        check_number("reward", value)


def test_check_number_refuses_an_int_beyond_floats_range() -> None:
    with pytest.raises(ValueError, match="must be a finite number"):
        check_number("reward", -(10**400))
    assert check_number("reward", np.float32(0.5)) == 0.5


def test_check_bool_takes_python_and_numpy_bools_only() -> None:
    assert check_bool("copy", True) is True
    assert check_bool("copy", np.bool_(False)) is False
    for bad in (1, 0, "yes", None):
        with pytest.raises(ArgumentTypeError, match="copy must be a bool, got"):
            check_bool("copy", bad)


def test_check_choice_names_the_choices() -> None:
    assert check_choice("order", "cycle", ("random", "cycle")) == "cycle"
    with pytest.raises(ValueError, match="order must be one of random, cycle, got 'x'"):
        check_choice("order", "x", ("random", "cycle"))
    with pytest.raises(ArgumentTypeError):
        check_choice("order", 1, ("random", "cycle"))


def test_predicates_agree_with_the_checks() -> None:
    assert [is_int(v) for v in (3, True, np.int16(1), 2.0, "1")] == [
        True,
        False,
        True,
        False,
        False,
    ]
    assert [is_number(v) for v in (3, 2.5, np.float32(1), True, "1")] == [
        True,
        True,
        True,
        False,
        False,
    ]
