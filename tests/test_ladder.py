"""benchmarks/ladder.py (the ladder rows of the results page) runs end to end on a few deals (with
lookahead as the player: the pipeline is under test, not the planner),
and its numbers agree with the per-deal files it kept; a second run reuses the verdicts and
compares with the first run's games; the results page's table is benchmarks/ladder_table.py's
output. (The planner's probes, research/planner/, are tests/test_research_planner.py's.)"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAYER = "lookahead"


def ladder(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(ROOT / "benchmarks" / "ladder.py"), "--variant", "spider-1suit",
           "--deals", "0:3", "--jobs", "1", "--max-steps", "400", *args]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done


def test_ladder_row_agrees_with_its_per_deal_files(tmp_path: Path) -> None:
    out = tmp_path / "row.json"
    done = ladder("--player", PLAYER, "--json", str(out), "--out-dir", str(tmp_path))
    row = json.loads(out.read_text())
    assert row["n"] == 3 and list(row["players"]) == ["greedy", PLAYER]
    assert "| spider-1suit | 0:3 (3) |" in done.stdout

    [solved] = tmp_path.glob("*-solve.csv")
    [played] = tmp_path.glob("*-evaluate.csv")
    verdict = {int(r["deal"]): r["verdict"] for r in csv.DictReader(solved.open())}
    rows = list(csv.DictReader(played.open()))
    won = {(r["agent"], int(r["deal"])) for r in rows if r["won"] == "True"}
    assert row["solver_won"] == sum(v == "won" for v in verdict.values())
    for name, entry in row["players"].items():
        assert entry["wins"] == sum(a == name for a, _ in won)
    winnable = {d for d, v in verdict.items() if v == "won"}
    mine = {d for a, d in won if a == PLAYER}
    assert row["won_of_winnable"][PLAYER] == len(mine & winnable) <= row["solver_won"]
    vs = row["players"][PLAYER]["vs_greedy"]
    greedy = {d for a, d in won if a == "greedy"}
    assert (vs["only_player"], vs["only_greedy"]) == (len(mine - greedy), len(greedy - mine))

    # again, with the verdicts given and the first run's greedy games to compare with
    again = tmp_path / "again"
    out2 = tmp_path / "row2.json"
    ladder("--player", PLAYER, "--solver-csv", str(solved), "--compare", f"{played}:greedy",
           "--json", str(out2), "--out-dir", str(again))  # fmt: skip
    row2 = json.loads(out2.read_text())
    assert not list(again.glob("*-solve.csv"))  # not solved again
    assert row2["solver_won"] == row["solver_won"]
    [cmp] = row2["compare"]
    assert cmp["other"] == "greedy" and cmp["deals"] == 3
    assert cmp["player_wins"] == row2["players"][PLAYER]["wins"]
    assert cmp["other_wins"] == row["players"]["greedy"]["wins"]


def test_the_results_pages_ladder_table_is_what_ladder_table_prints() -> None:
    """The planner's ladder on docs/results.md is benchmarks/ladder_table.py's output over
    docs/ladder/, line for line (so a re-run of make ladder that is not followed by make results
    fails here; tests/test_results_page.py checks the whole page)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "ladder_table.py"), "--dir",
         str(ROOT / "docs" / "ladder")],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    lines = done.stdout.strip().splitlines()
    assert len(lines) >= 3 + 2  # header, rule, at least the rows of 1 and 2 suits
    page = (ROOT / "docs" / "results.md").read_text(encoding="utf-8").splitlines()
    start = page.index(lines[0])
    assert page[start : start + len(lines)] == lines


def test_a_bad_compare_is_one_line_and_status_2_before_anything_runs(tmp_path: Path) -> None:
    for spec in ("nofile.csv:expert", str(tmp_path), "README.md"):
        done = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "ladder.py"), "--variant", "spider-1suit",
             "--compare", spec],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "--compare wants CSV:AGENT" in done.stderr and "$" not in done.stdout
