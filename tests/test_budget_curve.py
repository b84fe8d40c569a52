"""benchmarks/budget_curve.py (the planner's win rate against its dial, docs/budget/): the table
pairs every budget with the game's default on the same deals, a tiny curve runs end to end and
resumes without playing a budget again, and bad flags are one line with status 2 before any
game. (Its Ray run is tests/test_ray_eval.py's.)"""

from __future__ import annotations

import csv
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from spider_env.agents.planner import dial_budget

from spider_env.apps.evaluation.stats import mcnemar_exact, wilson_interval

ROOT = Path(__file__).resolve().parent.parent


def load_script() -> Any:
    spec = importlib.util.spec_from_file_location(
        "budget_curve", ROOT / "benchmarks" / "budget_curve.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["budget_curve"] = module
    spec.loader.exec_module(module)
    return module


curve = load_script()


def write_point(out: Path, variant: str, budget: int, wins: list[bool], seconds: float) -> None:
    records = [{"deal": 100 + i, "won": w, "seconds": seconds} for i, w in enumerate(wins)]
    deals = [r["deal"] for r in records]
    data = {"variant": variant, "deals": deals, "seed": 0, "max_steps": 1000,
            "records": records, "cartpole_steps_per_second": 200_000}  # fmt: skip
    (out / f"{variant}-budget-{budget}.json").write_text(json.dumps(data))


def test_each_budget_is_paired_with_the_games_default_on_the_same_deals(tmp_path: Path) -> None:
    default = [True, True, False, False, True, False]
    larger = [True, True, True, True, False, False]
    write_point(tmp_path, "spider-2suit", 192, default, 2.0)
    write_point(tmp_path, "spider-2suit", 768, larger, 8.0)
    write_point(tmp_path, "spider-2suit", 12, [False] * 6, 0.5)
    rows = curve.write_curve(tmp_path)
    assert [r["budget"] for r in rows] == [12, 192, 768]
    big = rows[2]
    lo, hi = wilson_interval(4, 6)
    assert (big["wins"], big["deals"], big["ci_low"], big["ci_high"]) == (
        4,
        6,
        round(lo, 4),
        round(hi, 4),
    )
    assert big["vs_default_only_this"] == 2 and big["vs_default_only_default"] == 1
    assert big["vs_default_p"] == curve.format_p(mcnemar_exact(2, 1))
    assert big["mcartpole_per_game"] == 8.0 * 200_000 / 1e6
    assert rows[1]["default"] == 192 and rows[1]["vs_default_p"] == ""  # the default itself
    with open(tmp_path / "curve.csv", newline="") as fh:
        stored = list(csv.DictReader(fh))
    assert [int(r["wins"]) for r in stored] == [0, 3, 4]
    assert (tmp_path / "budget_curve.png").stat().st_size > 10_000


def test_a_tiny_curve_runs_and_a_budget_played_is_not_played_again(
    tmp_path: Path, capsys: Any
) -> None:
    args = ["--suits", "1", "--budgets", "1,2", "--deals", "0:2", "--max-steps", "40",
            "--jobs", "1", "--out-dir", str(tmp_path / "c")]  # fmt: skip
    assert curve.main(args) == 0
    first = capsys.readouterr().out
    assert first.count("$ spider-env evaluate --agent planner:budget=") == 2
    point = json.loads((tmp_path / "c" / "spider-1suit-budget-2.json").read_text())
    assert point["agents"] == ["planner:budget=2"] and point["deals"] == [0, 1]
    assert point["max_steps"] == 40 and point["cartpole_steps_per_second"] > 0
    assert curve.main([*args[:3], "1,2,3", *args[4:]]) == 0
    again = capsys.readouterr().out
    assert again.count("already played") == 2 and "planner:budget=3 " in again
    with open(tmp_path / "c" / "curve.csv", newline="") as fh:
        assert [int(r["budget"]) for r in csv.DictReader(fh)] == [1, 2, 3]
    assert dial_budget("spider-1suit", 2)["evals"] == 2


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--suits", "2"], "--budgets: give the dial settings"),
        (["--suits", "2", "--budgets", "4,x"], "--budgets: 'x' is not an integer"),
        (["--suits", "2", "--budgets", "0"], "--budgets: 0 is not in 1..100000"),
        (["--suits", "2", "--budgets", "4,4"], "--budgets: 4 given twice"),
        (["--budgets", "4"], "give one of --suits or --variant"),
        (["--suits", "2", "--variant", "scorpion", "--budgets", "4"], "give one of --suits"),
        (["--suits", "3", "--budgets", "4"], "argument --suits: invalid choice"),
        (["--suits", "2", "--budgets", "4", "--jobs", "3"], "--jobs must be 1 or 2, got 3"),
        (["--suits", "2", "--budgets", "4", "--deals", "x"], "--deals: "),
        (["--suits", "2", "--budgets", "4", "--max-steps", "0"], "--max-steps must be at least"),
        (["--variant", "spider-9suit", "--budgets", "4"], "--variant: "),
        (["--suits", "2", "--budgets", "4", "--ray", ""], "ray"),
    ],
)
def test_a_bad_flag_is_one_line_and_status_2_before_any_game(
    tmp_path: Path, capsys: Any, flags: list[str], says: str
) -> None:
    out = tmp_path / "never"
    assert curve.main([*flags, "--out-dir", str(out)]) == 2
    stdout, err = capsys.readouterr()
    assert stdout == "" and err.count("\n") == 1 and says in err
    assert not out.exists()  # nothing written


def test_an_out_dir_whose_parent_is_missing_is_one_line(tmp_path: Path, capsys: Any) -> None:
    flags = ["--suits", "1", "--budgets", "1", "--out-dir", str(tmp_path / "no" / "such")]
    assert curve.main(flags) == 2
    assert "--out-dir: " in capsys.readouterr().err


def test_the_players_guide_shows_the_stored_curve() -> None:
    """docs/guide/players.md's table is the one the stored points give (``--markdown``), and its
    plot is stored beside them."""
    rows = curve.curve_rows(curve.load_points(ROOT / "docs" / "budget"))
    assert {r["variant"] for r in rows} == {"spider-1suit", "spider-2suit", "spider-4suit"}
    for variant in ("spider-1suit", "spider-2suit", "spider-4suit"):
        budgets = [r["budget"] for r in rows if r["variant"] == variant]
        assert len(budgets) >= 5 and max(budgets) >= 100 * min(budgets)  # five budgets, 100x
        assert default_evals(variant) in budgets
    guide = (ROOT / "docs" / "guide" / "players.md").read_text(encoding="utf-8")
    assert curve.markdown_table(rows) in guide
    assert (ROOT / "docs" / "budget" / "budget_curve.png").exists()
    assert "../budget/budget_curve.png" in guide


def default_evals(variant: str) -> int:
    from spider_env.agents.planner import default_budget

    return default_budget(variant)["evals"]
