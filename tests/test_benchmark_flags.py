"""Every script in benchmarks/ answers a bad flag as the CLI does: one line on stderr, nothing on
stdout, status 2, before any work is done."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import unknown_flag_is_one_line

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(
    p for p in (ROOT / "benchmarks").glob("*.py") if "def main(" in p.read_text(encoding="utf-8")
)


def test_every_benchmark_script_is_checked() -> None:
    # reference.py is a module the others import (CartPole's speed), not a script
    names = {p.name for p in (ROOT / "benchmarks").glob("*.py")} - {p.name for p in SCRIPTS}
    assert names == {"reference.py"} and len(SCRIPTS) >= 10


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_an_unknown_flag_is_one_line_and_status_2(script: Path) -> None:
    unknown_flag_is_one_line(script)


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (("spider-1suit", "0:10", 0, None, 3), "--jobs must be 1 or 2, got 3"),
        (("spider-1suit", "0:10", -1, None, 1), "--seed must be 0 or more, got -1"),
        (("spider-1suit", "0:10", 0, 0, 1), "--max-steps must be at least 1, got 0"),
        (("spider-9suit", "0:10", 0, None, 1), "--variant: "),
        (("spider-1suit", "ten", 0, None, 1), "--deals: "),
    ],
)
def test_check_games_names_the_flag_at_fault(flags: tuple, says: str) -> None:
    from spider_env.apps.evaluation.flags import check_games

    with pytest.raises(ValueError, match="^" + re.escape(says)):
        check_games(*flags)


def test_check_games_gives_the_variant_and_deals_and_refuses_an_unwritable_output(
    tmp_path: Path,
) -> None:
    from spider_env.apps.evaluation.flags import check_games, check_writable

    v, deals = check_games("spider-2suit", "3,7:9", 0, 1000, 2)
    assert v.name == "spider-2suit" and deals == [3, 7, 8]
    check_writable("--csv", str(tmp_path / "games.csv"))
    check_writable("--csv", None)
    with pytest.raises(ValueError, match=r"^--out: cannot write"):
        check_writable("--out", str(tmp_path / "no" / "such" / "games.csv"))


@pytest.mark.parametrize(
    "flags",
    [
        ("spider-1suit", "0:10", None, None, 1),
        ("spider-1suit", "0:10", 0, None, "2"),
        ("spider-1suit", "0:10", 0, 1.5, 1),
        ("spider-1suit", "0:10", True, None, 1),
    ],
)
def test_check_games_refuses_a_flag_of_the_wrong_type_by_name(flags: tuple) -> None:
    from spider_env.apps.evaluation.flags import check_games

    with pytest.raises(TypeError, match=r"^--(jobs|seed|max-steps) must be an int, got "):
        check_games(*flags)
    from spider_env.apps.evaluation.flags import check_writable

    with pytest.raises(TypeError, match=r"^--csv must be a path"):
        check_writable("--csv", 5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--hints-n", "256", "0"], "--hints-n: every N must be at least 1, got 0"),
        (["--vector-n", "-3"], "--vector-n: every N must be at least 1, got -3"),
        (["--where-n", "0"], "--where-n: every N must be at least 1, got 0"),
        (["--repeats", "0"], "--repeats must be at least 1, got 0"),
        (["--seconds", "-1"], "--seconds must be more than 0, got -1.0"),
    ],
)
def test_bench_fast_refuses_sizes_and_counts_below_one_in_one_line(
    flags: list[str], says: str
) -> None:
    r = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_fast.py"), *flags],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    assert r.stderr.strip() == f"bench_fast.py: error: {says}"
