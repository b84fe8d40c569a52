"""Evaluation: statistics, deal ranges, the evaluate() API, JSON/CSV output, --jobs."""

from __future__ import annotations

import csv
import json
import math
from typing import Any

import pytest
from spider_env.agents import GreedyAgent, RandomAgent

import spider_env
from spider_env.apps.evaluation import (
    EvaluationResult,
    compare,
    evaluate,
    mcnemar_exact,
    parse_deals,
    wilson_interval,
)


# --- statistics ----------------------------------------------------------------------------------
def test_wilson_interval_known_values() -> None:
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson_interval(10, 10)
    assert lo == pytest.approx(0.7225, abs=1e-4) and hi == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_mcnemar_exact_is_a_two_sided_binomial_test() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(10, 0) == pytest.approx(2 * 0.5**10)
    assert mcnemar_exact(0, 10) == mcnemar_exact(10, 0)
    expected = 2 * sum(math.comb(12, i) for i in range(4)) / 2**12
    assert mcnemar_exact(3, 9) == pytest.approx(expected)
    assert mcnemar_exact(6, 6) == 1.0
    assert mcnemar_exact(400, 500) == pytest.approx(0.00097, rel=0.1)  # large n stays finite


# --- deal ranges ---------------------------------------------------------------------------------
def test_parse_deals_forms() -> None:
    assert parse_deals("0:5") == [0, 1, 2, 3, 4]
    assert parse_deals("7") == [7]
    assert parse_deals("1,5,10:12") == [1, 5, 10, 11]
    assert parse_deals("0:10:3") == [0, 3, 6, 9]
    assert parse_deals(" 2 : 4 ") == [2, 3]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("5:2", r"stop \(2\) must be greater than start \(5\)"),
        ("5:5", "must be greater"),
        ("a:b", "not a non-negative integer"),
        ("-1:3", "not a non-negative integer"),
        ("", "deals must be given"),
        ("1:2:0", "step must be at least 1"),
        ("1:2:3:4", "start:stop"),
        ("1,1", "more than once"),
        ("1,,2", "empty item"),
        (str(2**64), "too large"),
    ],
)
def test_parse_deals_errors(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_deals(text)


# --- evaluate -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def result() -> EvaluationResult:
    return evaluate(["random", "greedy"], "0:6", suits=1, max_steps=300)


def test_evaluate_plays_every_agent_on_the_same_deals(result: EvaluationResult) -> None:
    assert result.agents == ["random", "greedy"]
    assert result.deals == list(range(6))
    assert [r.deal for r in result.records_of("random")] == list(range(6))
    assert [r.deal for r in result.records_of("greedy")] == list(range(6))
    for rec in result.records:
        assert rec.steps <= 300
        assert rec.truncated == (rec.steps == 300 and not rec.won)
        assert 0 <= rec.completed_runs <= 8
    s = result.summary("greedy")
    assert s.deals == 6 and s.wins == sum(r.won for r in result.records_of("greedy"))
    assert s.ci_low <= s.win_rate <= s.ci_high
    assert s.steps_per_second > 0
    (c,) = result.comparisons
    assert (c.agent_a, c.agent_b) == ("random", "greedy")
    assert c.both + c.only_a + c.only_b + c.neither == 6


def test_evaluate_is_reproducible_and_matches_a_manual_rollout(result: EvaluationResult) -> None:
    again = evaluate(["random", "greedy"], range(6), suits=1, max_steps=300)
    strip = [
        (r.agent, r.deal, r.won, r.completed_runs, r.score, r.moves, r.steps)
        for r in result.records
    ]
    assert strip == [
        (r.agent, r.deal, r.won, r.completed_runs, r.score, r.moves, r.steps) for r in again.records
    ]
    # The same agent object, passed in, gives the same results as its name.
    agent = GreedyAgent()
    mine = evaluate([agent], range(6), suits=1, max_steps=300)
    assert [r.score for r in mine.records] == [r.score for r in result.records_of("greedy")]
    assert agent.variant is None  # not pinned: the same object can play another variant
    evaluate([agent], [0], suits=2, max_steps=20)
    with pytest.raises(ValueError, match="made for spider-1suit"):
        evaluate([GreedyAgent("spider-1suit")], [0], suits=2)


def test_evaluate_with_jobs_gives_the_same_records(result: EvaluationResult) -> None:
    par = evaluate(["random", "greedy"], "0:6", suits=1, max_steps=300, jobs=2)
    key = [(r.agent, r.deal, r.won, r.score, r.steps) for r in par.records]
    assert key == [(r.agent, r.deal, r.won, r.score, r.steps) for r in result.records]
    assert par.jobs == 2


def test_table_and_files(result: EvaluationResult, tmp_path: Any) -> None:
    text = result.table()
    assert "win rate" in text and "95% CI" in text and "steps/s" in text
    assert "McNemar exact p" in text
    result.to_json(str(tmp_path / "r.json"))
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["variant"] == "spider-1suit"
    assert len(data["records"]) == 12
    assert {"agent", "deal", "won", "completed_runs", "score", "moves", "steps"} <= set(
        data["records"][0]
    )
    assert data["summaries"][1]["agent"] == "greedy"
    result.write_csv(str(tmp_path / "r.csv"))
    with open(tmp_path / "r.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 12 and rows[0]["variant"] == "spider-1suit"
    assert rows[6]["agent"] == "greedy" and rows[6]["deal"] == "0"


def test_evaluate_variants_undo_and_errors() -> None:
    res = evaluate("random", [3], variant="spiderette-2suit", max_steps=50)
    assert res.variant == "spiderette-2suit" and res.records[0].steps == 50
    res = evaluate(RandomAgent(), [3], suits=4, undo=True, max_steps=20)
    assert res.variant_options == "undo=true"
    with pytest.raises(ValueError, match="unknown agent"):
        evaluate("nobody", [0])
    with pytest.raises(ValueError, match="unknown variant"):
        evaluate("random", [0], variant="spider-9suit")
    with pytest.raises(ValueError, match="contradicts"):
        evaluate("random", [0], variant="spider-1suit", suits=2)
    with pytest.raises(ValueError, match="jobs"):
        evaluate("random", [0], jobs=0)
    with pytest.raises(ValueError, match="more than once"):
        evaluate("random", [1, 1])
    with pytest.raises(ValueError, match="stop"):
        evaluate("random", "9:3")


def test_compare_needs_the_same_deals(result: EvaluationResult) -> None:
    with pytest.raises(ValueError, match="same deals"):
        compare(result.records_of("random")[:3], result.records_of("greedy"))


def test_public_api_export() -> None:
    assert spider_env.evaluate is evaluate


def test_progress_without_tqdm(monkeypatch: Any, capsys: Any) -> None:
    import sys

    from spider_env.apps.evaluation import _Progress

    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm -> ImportError
    bar = _Progress(3, True, "spider-1suit")
    assert bar.bar is None
    for _ in range(3):
        bar.update(1)
    bar.close()
    assert "spider-1suit: 3/3 deals" in capsys.readouterr().err
