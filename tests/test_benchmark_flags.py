"""Every script in benchmarks/ answers a bad flag as the CLI does: one line on stderr, nothing on
stdout, status 2, before any work is done."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(
    p for p in (ROOT / "benchmarks").glob("*.py") if "def main(" in p.read_text(encoding="utf-8")
)


def test_every_benchmark_script_is_checked() -> None:
    # reference.py is a module the others import (CartPole's speed), not a script
    names = {p.name for p in (ROOT / "benchmarks").glob("*.py")} - {p.name for p in SCRIPTS}
    assert names == {"reference.py"} and len(SCRIPTS) >= 15


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_an_unknown_flag_is_one_line_and_status_2(script: Path) -> None:
    r = subprocess.run(
        [sys.executable, str(script), "--no-such-flag"], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{script.name}: error: "), r.stderr
