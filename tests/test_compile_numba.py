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
