"""benchmarks/ladder.py (the README's ladder rows) runs end to end on a few deals, and its numbers
agree with the per-deal files it kept."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ladder_row_agrees_with_its_per_deal_files(tmp_path: Path) -> None:
    out = tmp_path / "row.json"
    cmd = [
        sys.executable, str(ROOT / "benchmarks" / "ladder.py"), "--variant", "spider-1suit",
        "--deals", "0:3", "--jobs", "1", "--solver-nodes", "100000",
        "--expert", "expert:samples=2,nodes=3000", "--max-steps", "400",
        "--json", str(out), "--out-dir", str(tmp_path),
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    row = json.loads(out.read_text())
    assert row["n"] == 3 and row["expert"] == "expert:samples=2,nodes=3000"
    assert "| spider-1suit | 0:3 (3) |" in done.stdout

    [solved] = tmp_path.glob("*-solve.csv")
    [played] = tmp_path.glob("*-evaluate.csv")
    verdict = {int(r["deal"]): r["verdict"] for r in csv.DictReader(solved.open())}
    rows = list(csv.DictReader(played.open()))
    won = {(r["agent"], int(r["deal"])) for r in rows if r["won"] == "True"}
    assert row["solver_won"] == sum(v == "won" for v in verdict.values())
    assert row["greedy_wins"] == sum(a == "greedy" for a, _ in won)
    assert row["expert_wins"] == sum(a == row["expert"] for a, _ in won)
    winnable = {d for d, v in verdict.items() if v == "won"}
    assert row["expert_won_of_winnable"] == len(
        {d for a, d in won if a == row["expert"]} & winnable
    )
    assert 0 <= row["expert_won_of_winnable"] <= row["solver_won"]
