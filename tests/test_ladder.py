"""benchmarks/ladder.py (the README's ladder rows) runs end to end on a few deals, and its numbers
agree with the per-deal files it kept; a second run reuses the verdicts and compares with the
first run's games."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAYER = "planner:evals=8,nodes=1500"


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


def _evaluated(tmp_path: Path, agent: str, *, suits: int, deals: str, max_steps: int) -> Path:
    """The CSV of ``spider-env evaluate`` of ``agent`` on ``deals``."""
    played = tmp_path / f"{agent}.csv"
    subprocess.run(
        [sys.executable, "-m", "spider_env.apps.cli", "evaluate", "--agent", agent,
         "--suits", str(suits), "--deals", deals, "--max-steps", str(max_steps), "--csv",
         str(played), "--no-progress"],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return played


def _losses(played: Path, agent: str, max_steps: int, *flags: str) -> list[str]:
    """The command of benchmarks/losses.py on ``played`` (``agent``'s games), with ``flags``."""
    return [sys.executable, str(ROOT / "benchmarks" / "losses.py"), str(played), "--agent",
            agent, "--max-steps", str(max_steps), *flags]  # fmt: skip


def test_losses_replays_lost_games_as_they_were_recorded(tmp_path: Path) -> None:
    """benchmarks/losses.py plays each lost deal again exactly as the evaluation did (it stops
    with an error if the replay ends differently) and says how each game ended."""
    played = _evaluated(tmp_path, "random", suits=2, deals="0:3", max_steps=200)
    out = tmp_path / "losses.json"
    cmd = _losses(played, "random", 200, "--limit", "2", "--json", str(out))
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())
    assert len(rows) == 2 and all(not r["won"] and r["steps"] <= 200 for r in rows)
    assert "2 lost deals of 3 replayed (random)" in done.stdout
    bad = subprocess.run([*cmd[:-4], "--limit", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--limit must be at least 1" in bad.stderr
    none_won = subprocess.run([*cmd, "--games", "won"], capture_output=True, text=True)
    assert none_won.returncode == 2 and none_won.stderr.count("\n") == 1
    assert "no won games of 'random'" in none_won.stderr
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    unreadable = [(tmp_path / "none.csv", "cannot read"),
                  (tmp_path / "other.csv", "not an evaluation CSV: no column agent")]  # fmt: skip
    for path, message in unreadable:
        bad = subprocess.run([*cmd[:2], str(path), *cmd[3:]], capture_output=True, text=True)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and message in bad.stderr


def test_losses_known_bound_is_never_worse_than_what_the_player_reached(tmp_path: Path) -> None:
    """``--known``: with every card known, the fewest face-down cards reachable before the first
    deal; an exhausted search can only do as well as the player (its position before the first
    deal was reached by moves alone) or better."""
    played = _evaluated(tmp_path, "greedy", suits=1, deals="17,23", max_steps=300)
    out = tmp_path / "known.json"
    checked = 0  # deals 17 and 23 start with a small space of moves: their searches finish
    for games in ("lost", "won"):
        flags = ("--games", games, "--known", "3000", "--json", str(out))
        cmd = _losses(played, "greedy", 300, *flags)
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if done.returncode == 2 and f"no {games} games" in done.stderr:
            continue
        assert done.returncode == 0, done.stderr
        for row in json.loads(out.read_text()):
            assert row["won"] == (games == "won")
            fewest, before = row["known_fewest_before_first_deal"], row["down_before_first_deal"]
            assert 0 <= fewest <= 44
            if row["known_exhausted"] and row["first_deal_step"] > 0:
                assert fewest <= before
                checked += 1
    assert checked == 2


def test_losses_solve_says_after_which_event_no_win_was_found(tmp_path: Path) -> None:
    """``--solve``: the true position is solved after every event of a lost game; every 2-suit
    deal tried is won by the solver at its first events, so the last event with a win found is
    a real step, and the event where the game was lost (if any) comes after it; a bad budget is
    one line, status 2."""
    played = _evaluated(tmp_path, "greedy", suits=2, deals="0:3", max_steps=300)
    out = tmp_path / "solve.json"
    cmd = _losses(played, "greedy", 300, "--solve", "200000", "--json", str(out))
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())
    assert rows and "a win found (every card known) until an event, never after" in done.stdout
    for row in rows:
        assert not row["won"] and row["events"] >= 1
        assert 0 < row["last_win_found_step"] <= row["steps"]
        if row["lost_at_step"] > 0:
            assert row["last_win_found_step"] < row["lost_at_step"] <= row["steps"]
            assert 0 <= row["lost_at_down"] <= 44 and 0 <= row["lost_at_deals_made"] <= 5
    bad = subprocess.run([*cmd[:-4], "--solve", "-1"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "--solve must be in 0..50,000,000, got -1" in bad.stderr


def test_losses_solve_on_scorpion_tells_a_deal_lost_from_the_start(tmp_path: Path) -> None:
    """``--solve`` on Scorpion (depth-first search, which proves losses there): deal 1 has no
    win even with every card known, so it is lost at the start (step 0); deal 16 is winnable at
    the start, and greedy loses the win at an event after it."""
    played = tmp_path / "greedy.csv"
    subprocess.run(
        [sys.executable, "-m", "spider_env.apps.cli", "evaluate", "--agent", "greedy",
         "--variant", "scorpion", "--deals", "1,16", "--csv", str(played), "--no-progress"],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    out = tmp_path / "solve.json"
    cmd = _losses(played, "greedy", 1000, "--solve", "3000000", "--json", str(out))
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = {row["deal"]: row for row in json.loads(out.read_text())}
    assert not rows[1]["win_found_at_start"] and rows[1]["lost_at_step"] == 0
    assert rows[16]["win_found_at_start"]
    assert 0 <= rows[16]["last_win_found_step"] < rows[16]["lost_at_step"] <= rows[16]["steps"]
    assert "no win found (every card known) even at the start: 1" in done.stdout


def test_readme_ladder_table_is_what_ladder_table_prints_from_the_stored_rows() -> None:
    """The README's planner ladder is benchmarks/ladder_table.py's output over docs/ladder/, line
    for line (so a re-run of make ladder that is not copied into the README fails here)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "ladder_table.py"), "--dir",
         str(ROOT / "docs" / "ladder")],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    lines = done.stdout.strip().splitlines()
    assert len(lines) >= 3 + 2  # header, rule, at least the rows of 1 and 2 suits
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    for line in lines:
        assert line in readme, line


def test_a_bad_compare_is_one_line_and_status_2_before_anything_runs(tmp_path: Path) -> None:
    for spec in ("nofile.csv:expert", str(tmp_path), "README.md"):
        done = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "ladder.py"), "--variant", "spider-1suit",
             "--compare", spec],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "--compare wants CSV:AGENT" in done.stderr and "$" not in done.stdout


def decision_time(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(ROOT / "benchmarks" / "decision_time.py"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def test_decision_time_counts_the_same_decisions_where_the_hint_plays_the_default() -> None:
    """On 1 suit the hint's budget is the default, so both play the same game: the same number
    of planned decisions."""
    done = decision_time("spider-1suit", "--deals", "3", "--max-steps", "40")
    assert done.returncode == 0, done.stderr
    counts = [int(line.split()[1]) for line in done.stdout.splitlines()]
    assert len(counts) == 2 and counts[0] == counts[1] > 0


def test_decision_time_bad_flags_are_one_line_and_status_2() -> None:
    for args in (["spider-9suit"], ["spider-1suit", "--max-steps", "0"], ["spider-1suit",
                 "--deals", "x"]):  # fmt: skip
        done = decision_time(*args)
        assert done.returncode == 2 and done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_choices_plays_the_planners_contenders_out_on_layouts_a_player_could_guess(
    tmp_path: Path,
) -> None:
    """benchmarks/choices.py replays a lost planner game, and at its decisions plays every
    contender out on the same layouts (the share of layouts won is a number of the layouts);
    bad flags and files are one line, status 2."""
    spec = "planner:evals=4,candidates=3,nodes=300"
    played = _evaluated(tmp_path, spec, suits=2, deals="0:2", max_steps=150)
    out = tmp_path / "choices.json"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "choices.py"), str(played), "--agent", spec,
           "--continue", "greedy", "--max-steps", "150", "--limit", "1", "--decisions", "2",
           "--contenders", "2", "--layouts", "3", "--jobs", "1", "--json", str(out)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())
    assert 1 <= len(rows) <= 2 and "decisions: the chosen contender's share" in done.stdout
    for row in rows:
        assert str(row["best"]) in row["shares"] and len(row["shares"]) == 2
        assert all(round(share * 3, 9) in (0, 1, 2, 3) for share in row["shares"].values())
    assert all(row["left"] in range(6) for row in rows)
    at = cmd.index("--json")
    early = tmp_path / "early.json"
    done = subprocess.run([*cmd[:at], "--deals-left", "4,5", "--json", str(early)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads(early.read_text())
    assert rows and all(row["left"] in (4, 5) for row in rows)
    flags = [("--layouts", "0", "--layouts must be at least 1"),
             ("--agent", "nobody", "no lost game of agent 'nobody'"),
             ("--continue", "nobody", "--continue: unknown agent 'nobody'"),
             ("--decisions", "x", "--decisions: invalid int value")]  # fmt: skip
    for flag, value, message in flags:
        at = cmd.index(flag)
        bad = subprocess.run([*cmd[:at], flag, value, *cmd[at + 2 :]], capture_output=True,
                             text=True)  # fmt: skip
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and message in bad.stderr
    extras = [(["--deals-left", "x"], "--deals-left must be a comma list"),
              (["--deals-left=-1"], "--deals-left must be counts of 0 or more"),
              (["--deals-left", "0", "--late"], "--late and --deals-left")]  # fmt: skip
    for extra, message in extras:
        bad = subprocess.run([*cmd, *extra], capture_output=True, text=True)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and message in bad.stderr
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    bad = subprocess.run([*cmd[:2], str(tmp_path / "other.csv"), *cmd[3:]], capture_output=True,
                         text=True)  # fmt: skip
    assert bad.returncode == 2 and "not an evaluation CSV" in bad.stderr
