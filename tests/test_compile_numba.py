"""tests/compile_numba.py, which `make pytest` runs first: each half plays its steps."""

from __future__ import annotations

import pytest
from compile_numba import HALVES, compile_half, main

pytest.importorskip("numba")


@pytest.mark.parametrize("half", sorted(HALVES))
def test_each_half_plays_every_step_and_reports_its_cpu_seconds(half: str) -> None:
    line = compile_half(half)
    assert line.startswith(f"compile_numba: {half} half, CPU s: ")
    assert [part.rsplit(" ", 1)[0] for part in line.split(": ", 2)[2].split(", ")] == [
        name for name, _ in HALVES[half]
    ]


def test_more_jobs_than_halves_are_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--jobs", "3"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--jobs" in err


def test_the_search_functions_compile_once_for_all_their_callers() -> None:
    """A compiled function given constants by another compiled function is compiled again for
    their literal types (the beam's expand was compiled three times): the
    planner's score, the beam solver, best-first and depth-first search call each shared
    function with one signature, so numba's on-disk cache holds one for each (read from its
    index: a caller loaded from the cache does not load its callees). ``play_action`` too: the
    planner's samples and ``FastGame`` (from Python) play actions through it."""
    compile_half("search")
    compile_half("env")
    from spider_env.fast import rules
    from spider_env.search import beam, solver

    for f in (beam.expand, beam.select, beam.filtered, solver._push, rules.play_action):
        index = f._cache._cache_file._load_index()  # numba's cache: signature -> its file
        assert len(index) == 1, (f.py_func.__name__, list(index))
