"""``spider_env.fast.jit.borrowed``: arrays without numba's reference counts, and what the
compiled kernels that use it must still do (same values, writes reaching the caller's arrays,
every allocation freed exactly once)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import numpy as np
import pytest

pytest.importorskip("numba")

from numba import njit
from numba.core.runtime import _nrt_python, rtsys

import spider_env as se
from spider_env.engine import make_engine
from spider_env.fast.jit import borrowed
from spider_env.rewards import get_reward_fn


@njit
def _row_sum(row: np.ndarray) -> float:  # a real call, not inlined: a view crosses it
    return row.sum()


@njit
def _sum_rows_and_mark(grid: np.ndarray, parts: tuple) -> float:
    """The sum of ``grid``'s rows, each passed as a view to a call, plus ``parts``' array
    sums; writes 1 at the start of each row of ``grid`` and of ``parts[1][0]``."""
    grid = borrowed(grid)
    parts = borrowed(parts)
    total = 0.0
    for i in range(grid.shape[0]):
        total += _row_sum(grid[i])
        grid[i, 0] = 1.0
    inner = parts[1]
    inner[0][0] = 1.0
    return total + parts[0] + inner[0].sum() + inner[1].sum()


@njit
def _with_temporaries(n: int) -> float:
    """``_sum_rows_and_mark`` given arrays made here, held only by this call's temporaries."""
    return _sum_rows_and_mark(np.ones((n, 3)), (2.0, (np.zeros(4), np.full(2, 5.0))))


@pytest.fixture
def nrt_stats() -> Iterator[None]:
    _nrt_python.memsys_enable_stats()
    try:
        yield
    finally:
        _nrt_python.memsys_disable_stats()


def _balance() -> tuple[int, int]:
    s = rtsys.get_allocation_stats()
    return s.alloc - s.free, s.mi_alloc - s.mi_free


def test_borrowed_arrays_read_and_write_the_callers_memory() -> None:
    grid = np.arange(12, dtype=np.float64).reshape(4, 3)
    a, b = np.zeros(4), np.full(2, 5.0)
    total = _sum_rows_and_mark(grid, (2.0, (a, b)))
    assert total == pytest.approx(66.0 + 2.0 + 0.0 + 1.0 + 10.0)
    assert grid[:, 0].tolist() == [1.0, 1.0, 1.0, 1.0]  # written through the borrowed views
    assert a.tolist() == [1.0, 0.0, 0.0, 0.0]


def test_borrowing_frees_every_allocation_once_and_keeps_python_references(
    nrt_stats: None,
) -> None:
    grid = np.ones((50, 3))
    a, b = np.zeros(4), np.full(2, 5.0)
    _sum_rows_and_mark(grid, (2.0, (a, b)))  # compiled (and any warm-up allocation) first
    _with_temporaries(7)
    refs = [sys.getrefcount(x) for x in (grid, a, b)]
    before = _balance()
    for n in range(1, 200):
        assert _with_temporaries(n) == pytest.approx(3.0 * n + 2.0 + 1.0 + 10.0)
        _sum_rows_and_mark(grid, (2.0, (a, b)))
    assert _balance() == before  # every array made in the loop freed, none twice
    assert [sys.getrefcount(x) for x in (grid, a, b)] == refs


@pytest.mark.parametrize("obs_mode", ["dict", "actions"])
def test_the_compiled_batched_step_leaves_no_allocation_behind(
    obs_mode: str, nrt_stats: None
) -> None:
    """The batched step borrows every buffer it is given (``fast.step.step_batch``, and
    ``fast.action_features.encode_rows`` for ``"actions"``): stepping 300 times, with
    autoresets, allocates nothing in compiled code that is not freed."""
    engine = make_engine(
        "compiled", se.get_variant("spider-2suit"), 16, obs_mode=obs_mode, feature_slots=6,
        reward_fn=get_reward_fn("score"), illegal_reward=-1.0, terminate_illegal=False,
    )  # fmt: skip
    rows = np.arange(16)
    engine.start_deals(rows, rows)
    engine.step(np.maximum(engine.sample_legal(0), 0), np.full(16, -1), 40)
    before = _balance()
    for step in range(300):
        resets = np.where(engine.ended, rows + 1000 + step, -1)
        engine.step(np.maximum(engine.sample_legal(step), 0), resets, 40)
    assert _balance() == before
