"""Evaluation: statistics, deal ranges, the evaluate() API, JSON/CSV output, --jobs."""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from spider_env.agents import GreedyAgent, RandomAgent

import spider_env
from spider_env.apps.episodes import record_episode
from spider_env.apps.evaluation import (
    MAX_DEALS,
    EvaluationResult,
    WorkerError,
    compare,
    evaluate,
    mcnemar_exact,
    parse_deals,
    players,
    runner,
    wilson_interval,
)
from spider_env.apps.evaluation.deals import deal_list
from spider_env.apps.evaluation.episode import agent_seed
from spider_env.core.deals import DEAL_NUMBERS, generate_deal
from spider_env.core.variants import classic


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
    # A rollout by hand (same env, same per-deal agent seed) gives the evaluation's record.
    env = gymnasium.make("Spider-v0", suits=1, max_episode_steps=300)
    player = RandomAgent("spider-1suit")
    player.reset(seed=agent_seed(0, 4))
    obs, info = env.reset(options={"deal": 4})
    steps, done = 0, False
    while not done:
        obs, _, terminated, truncated, info = env.step(player.act(obs, info["action_mask"], info))
        steps, done = steps + 1, terminated or truncated
    rec = result.records_of("random")[4]
    assert rec.deal == 4
    assert (rec.score, rec.moves, rec.steps) == (info["score"], info["moves"], steps)


def test_evaluate_with_jobs_gives_the_same_records_and_never_more_workers_than_cores(
    result: EvaluationResult, monkeypatch: Any
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    par = evaluate(["random", "greedy"], "0:6", suits=1, max_steps=300, jobs=8)
    key = [(r.agent, r.deal, r.won, r.score, r.steps) for r in par.records]
    assert key == [(r.agent, r.deal, r.won, r.score, r.steps) for r in result.records]
    assert par.jobs == 2  # 8 asked, 2 cores


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

    from spider_env.apps.evaluation.progress import Progress

    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm -> ImportError
    bar = Progress(3, True, "spider-1suit")
    assert bar.bar is None
    for _ in range(3):
        bar.update(1)
    bar.close()
    assert "spider-1suit: 3/3 deals" in capsys.readouterr().err


# --- jobs ----------------------------------------------------------------------------------------
def test_jobs_are_capped_to_the_work_and_the_cores(monkeypatch: Any) -> None:
    def no_workers(*args: Any) -> None:
        raise AssertionError("worker processes started for work one process does")

    monkeypatch.setattr(runner, "play_in_workers", no_workers)
    assert evaluate("random", [0], suits=1, max_steps=5, jobs=4).jobs == 1  # one game
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    res = evaluate(["random", "greedy"], range(4), suits=1, max_steps=5, jobs=2)
    assert res.jobs == 1 and len(res.records) == 8


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs 2 cores to start 2 workers")
def test_unguarded_script_with_jobs_fails_promptly_saying_what_to_do(tmp_path: Path) -> None:
    # The README example saved as a script without `if __name__ == "__main__":`: spawned
    # workers import the script again and cannot start. That used to restart them forever.
    script = tmp_path / "unguarded.py"
    script.write_text(
        textwrap.dedent(
            """
            import spider_env

            spider_env.evaluate(["random", "greedy"], range(20), suits=1, jobs=2)
            """
        )
    )
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its workers too are ended if it hangs
    )
    try:
        _, err = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("evaluate(jobs=2) in an unguarded script did not end")
    assert proc.returncode != 0
    # multiprocessing's resource tracker may add its own shutdown warning (2 lines) after the
    # traceback when the machine is loaded: the error is the last line that is not it.
    lines = [
        line
        for line in err.strip().splitlines()
        if "resource_tracker" not in line and "leaked semaphore" not in line
    ]
    last = lines[-1]
    assert last.startswith(f"{WorkerError.__module__}.WorkerError: ")
    assert 'if __name__ == "__main__":' in last and "jobs=1" in last


# --- deals and step limits -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "deals",
    ["0:100000000000", "0:10,20:3000000", range(10**11), range(2**70), itertools.count()],
)
def test_too_many_deals_are_refused_before_anything_is_played(deals: Any) -> None:
    with pytest.raises(ValueError, match=f"at most {MAX_DEALS:,}"):
        evaluate("random", deals, suits=1)


def test_parse_deals_refuses_a_huge_range() -> None:
    with pytest.raises(ValueError, match="names 100,000,000,000 deals"):
        parse_deals("0:100000000000")
    assert len(parse_deals(f"0:{MAX_DEALS}")) == MAX_DEALS


@pytest.mark.parametrize(
    ("deals", "error", "match"),
    [
        ([1.5], TypeError, "deal 1.5 is not an int"),
        (7, TypeError, "got 7"),
        (["3"], TypeError, "deal '3' is not an int"),
        ([True], TypeError, "deal True is not an int"),
        ([-1], ValueError, "deal number -1 is out of range"),
        ([2**64], ValueError, f"deal number {2**64} is out of range"),
        (range(-2, 3), ValueError, "deal number -2 is out of range"),
        ([4, 5, 4], ValueError, "deal 4 is listed more than once"),
    ],
)
def test_bad_deals_are_refused_naming_the_value(deals: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        evaluate("random", deals, suits=1, max_steps=5)


def test_deals_may_be_numpy_integers_up_to_2_to_the_64() -> None:
    res = evaluate("random", np.array([2**64 - 1, 3], dtype=np.uint64), suits=1, max_steps=5)
    assert res.deals == [2**64 - 1, 3] and all(type(d) is int for d in res.deals)


def test_every_deal_number_check_uses_the_core_bound() -> None:
    last = DEAL_NUMBERS - 1
    assert DEAL_NUMBERS == 2**64
    assert generate_deal(classic(1), last).deal_number == last
    assert parse_deals(str(last)) == [last] and deal_list([last]) == [last]
    assert deal_list(range(last, DEAL_NUMBERS)) == [last]
    checks: list[Callable[[], object]] = [
        lambda: generate_deal(classic(1), DEAL_NUMBERS),
        lambda: parse_deals(str(DEAL_NUMBERS)),
        lambda: deal_list([DEAL_NUMBERS]),
        lambda: deal_list(range(last, DEAL_NUMBERS + 1)),
        lambda: record_episode("random", "spider-1suit", DEAL_NUMBERS),
    ]
    for check in checks:
        with pytest.raises(ValueError, match=r"2\*\*64|out of range|too large"):
            check()


def test_max_steps_none_plays_and_reports_the_envs_default_limit() -> None:
    limit = gymnasium.spec("Spider-v0").max_episode_steps
    assert isinstance(limit, int)
    res = evaluate("random", [0], suits=1, max_steps=None)
    assert res.max_steps == limit and res.to_dict()["max_steps"] == limit
    assert f"max {limit} steps" in res.table()
    (rec,) = res.records
    assert rec.steps == limit and rec.truncated  # random loses deal 0, at the limit


@pytest.mark.parametrize("max_steps", [0, -5, 2.5, True, "100"])
def test_bad_max_steps_are_refused(max_steps: Any) -> None:
    with pytest.raises(
        ValueError, match=r"max_steps \(None: the env's default\) must be an int >= 1"
    ):
        evaluate("random", [0], suits=1, max_steps=max_steps)


class _HideDeal(gymnasium.Wrapper[Any, Any, Any, Any]):
    """Takes the deal's identity out of info (as the env does now) and logs the reward of
    the first game of each deal number it is reset with."""

    def __init__(self, env: Any, log: dict[int, float]) -> None:
        super().__init__(env)
        self.log: dict[int, float] = log
        self.deal: int | None = None

    def reset(self, **kwargs: Any) -> Any:
        deal = int((kwargs.get("options") or {})["deal"])
        self.deal = None if deal in self.log else deal
        if self.deal is not None:
            self.log[self.deal] = 0.0
        obs, info = self.env.reset(**kwargs)
        return obs, self._hide(info)

    def step(self, action: Any) -> Any:
        obs, r, term, trunc, info = self.env.step(action)
        if self.deal is not None:
            self.log[self.deal] += float(r)
        return obs, r, term, trunc, self._hide(info)

    @staticmethod
    def _hide(info: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in info.items() if k not in ("deal", "deal_number")}


def test_evaluation_knows_the_deal_without_info_naming_it(monkeypatch: Any) -> None:
    log: dict[int, float] = {}
    made = runner.make_env
    monkeypatch.setattr(runner, "make_env", lambda *a, **k: _HideDeal(made(*a, **k), log))
    res = evaluate("random", [9, 2, 5], suits=1, max_steps=40)
    assert [r.deal for r in res.records] == [9, 2, 5]
    assert {r.deal: r.reward for r in res.records} == pytest.approx(log)


@pytest.fixture(scope="module")
def model(tmp_path_factory: Any) -> Path:
    """An untrained MaskablePPO model of 1-suit Spider, with the sidecar the examples write."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    d = tmp_path_factory.mktemp("model")
    env = gymnasium.make("Spider-v0", suits=1, obs_mode="flat")
    MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=16, policy_kwargs={"net_arch": [8]}).save(
        d / "model.zip"
    )
    (d / "model.json").write_text(
        json.dumps({"algo": "MaskablePPO", "env_kwargs": {"suits": 1, "obs_mode": "flat"}})
    )
    return d / "model.zip"


# --- trained models: most likely or sampled actions ---------------------------------------------
def test_deterministic_reaches_make_agent_for_model_paths_only(monkeypatch: Any) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    class Model(RandomAgent):
        def __init__(self, variant: Any, deterministic: bool) -> None:
            super().__init__(variant)
            self.deterministic = deterministic
            self.name = "m.zip (most likely)" if deterministic else "m.zip (sampled)"

    def fake_make_agent(spec: str, variant: Any, **kw: Any) -> Any:
        calls.append((spec, kw))
        if spec == "m.zip":
            return Model(variant, bool(kw.get("deterministic")))  # None: sampled here
        return RandomAgent(variant)

    monkeypatch.setattr(players, "make_agent", fake_make_agent)
    res = evaluate(["random", "m.zip"], [0], suits=1, max_steps=5, deterministic=True)
    assert calls == [("random", {}), ("m.zip", {"deterministic": True, "allow_other_game": False})]
    assert res.agents == ["random", "m.zip (most likely)"]
    assert res.summary("m.zip (most likely)").deterministic is True
    assert res.summary("random").deterministic is None
    assert "m.zip (most likely)" in res.table()
    assert res.to_dict()["summaries"][1]["deterministic"] is True
    calls.clear()
    res = evaluate(["m.zip"], [0], suits=1, max_steps=5)
    # None: the model file decides
    assert calls == [("m.zip", {"deterministic": None, "allow_other_game": False})]
    assert res.agents == ["m.zip (sampled)"] and res.summaries[0].deterministic is False


def test_model_agents_say_in_the_result_whether_they_sample(model: Path) -> None:
    path = str(model)
    sampled = evaluate([path], [0], suits=1, max_steps=5)  # no choice in the sidecar: sampled
    likely = evaluate([path], [0, 1], suits=1, max_steps=5, deterministic=True, jobs=2)
    assert sampled.summaries[0].deterministic is False
    assert likely.summaries[0].deterministic is True
    assert evaluate([path], [0], suits=1, max_steps=5, deterministic=False).agents == (
        sampled.agents
    )
    assert len({path, sampled.agents[0], likely.agents[0]}) == 3  # the name says which
    assert likely.records[0].agent == likely.agents[0]
    assert likely.agents[0] in likely.table()
    assert likely.to_dict()["summaries"][0]["deterministic"] is True


def test_deterministic_without_a_model_agent_is_refused() -> None:
    with pytest.raises(ValueError, match="deterministic applies to agents given as model paths"):
        evaluate(["random", "greedy"], [0], suits=1, deterministic=True)
    with pytest.raises(TypeError, match="deterministic must be True, False or None"):
        evaluate(["random"], [0], suits=1, deterministic="yes")  # type: ignore[arg-type]
