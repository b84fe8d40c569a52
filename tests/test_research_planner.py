"""research/planner/: each probe runs end to end on a tiny budget, through the planner's public
hooks only, and answers a bad flag in one line with status 2.

The scripts are loaded from their files (research/ is not a package); the end-to-end runs call
their ``main`` in this process, on a few short games, so the whole file stays within about half
a minute of CPU."""

from __future__ import annotations

import csv
import importlib.util
import json
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import unknown_flag_is_one_line
from spider_env.agents import PlannerAgent, make_agent

from spider_env import new_game
from spider_env.apps.evaluation.episode import make_env, play_episode
from spider_env.core.variants import get_variant
from spider_env.observation.view import TableView

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "research" / "planner"
SCRIPTS = sorted(HERE.glob("*.py"))
TINY = "planner:evals=4,candidates=3,nodes=300"


def load(name: str) -> ModuleType:
    """The script ``research/planner/NAME.py`` as a module."""
    spec = importlib.util.spec_from_file_location(f"research_planner_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def one_line_error(capsys: pytest.CaptureFixture[str], main: Any, argv: list[str]) -> str:
    """Run ``main(argv)``, which must stop with status 2 and one line on stderr; that line."""
    capsys.readouterr()  # what ran before
    with pytest.raises(SystemExit) as stop:
        main(argv)
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == "" and err.count("\n") == 1, (argv, out, err)
    return err


def games_csv(path: Path, spec: str, variant: str, deals: list[int], max_steps: int) -> Path:
    """An evaluation CSV of ``spec``'s games (as ``spider-env evaluate --csv`` writes the columns
    the probes read), played here."""
    v = get_variant(variant)
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["variant", "agent", "deal", "won", "steps"])
        for deal in deals:
            env = make_env(v, max_steps)
            rec, _, _ = play_episode(env, make_agent(spec, v, seed=0), deal, 0, name=spec)
            out.writerow([variant, spec, deal, rec.won, rec.steps])
    return path


def test_every_research_script_is_smoke_tested_and_has_a_readme() -> None:
    names = {p.stem for p in SCRIPTS}
    assert names == {
        "candidates", "choices", "decision_time", "game_time", "losses", "oracle", "values",
        "won_by",
    }  # fmt: skip
    readme = (HERE / "README.md").read_text(encoding="utf-8")
    assert all(f"{name}.py" in readme for name in names)
    assert (HERE / "record.md").exists() and list((HERE / "patches").glob("*.diff"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_an_unknown_flag_is_one_line_and_status_2(script: Path) -> None:
    unknown_flag_is_one_line(script)


# --- oracle.py: the planner told part of the truth ----------------------------------------------
def test_oracle_told_parts_keep_the_true_cards_and_draw_the_rest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    oracle = load("oracle")
    v = get_variant("spider-1suit")
    env = make_env(v, 100)
    obs, _ = env.reset(options={"deal": 11})
    view = TableView.from_obs(v, obs)
    state = env.unwrapped.state
    down = sum(state.down)
    truth = [c for col, d in zip(state.cols, state.down) for c in col[:d]]
    truth += [c for pile in state.stock for c in pile]
    nexts = np.cumsum(state.down) - 1  # each column's next card (no column is empty here)
    for know in oracle.KNOWS:
        told = oracle.Told(know, "all", lambda: state)
        layouts = told(view, np.random.default_rng(5))
        for layout in [next(layouts) for _ in range(4)]:
            got = layout.tolist()
            assert Counter(got) == Counter(truth)
            assert (got[:down] == truth[:down]) == (know in ("down", "full"))
            assert (got[down:] == truth[down:]) == (know in ("stock", "full"))
            if know == "next":
                assert [got[i] for i in nexts] == [truth[i] for i in nexts]
        assert told.told == [(5, know != "none")]
    late = oracle.Told("full", "late", lambda: state)
    assert next(late(view, np.random.default_rng(5))).tolist() != truth and late.told == [
        (5, False)
    ]
    # told nothing: the planner's own games
    spec = "planner:evals=4,candidates=3,nodes=300,screen=8"
    told_env = make_env(v, 60)
    agent = oracle.told_planner(spec, v, "none", "all", told_env)
    _, acts, _ = play_episode(told_env, agent, 3, seed=1)
    _, ref, _ = play_episode(make_env(v, 60), make_agent(spec, v, seed=0), 3, seed=1)
    assert acts == ref


def test_oracle_plays_each_mode_on_the_same_deals_and_pairs_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    oracle = load("oracle")
    out = tmp_path / "games.csv"
    argv = ["--agent", TINY, "--deals", "3", "--max-steps", "40", "--jobs", "1"]
    assert oracle.main([*argv, "--know", "none", "--know", "full", "--csv", str(out)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("know=none: won ") and " of 1 " in lines[0]
    assert lines[1].startswith("know=full: won ") and "against know=none:" in lines[1]
    rows = out.read_text().splitlines()
    assert rows[0] == "know,when,deal,won,steps,cpu_seconds" and len(rows) == 3
    for extra, says in [
        (["--know", "nope"], "--know must be one of"),
        (["--know", "down", "--know", "down"], "--know repeats a mode"),
        (["--when", "never"], "--when must be one of"),
        (["--agent", "greedy"], "--agent must be a planner"),
        (["--agent", "planner:ply2=2"], "--agent: bad planner budget 'ply2=2'"),
        (["--jobs", "3"], "--jobs must be 1 or 2"),
        (["--max-steps", "0"], "--max-steps must be at least 1"),
        (["--csv", str(tmp_path / "no" / "games.csv")], "--csv: cannot write"),
    ]:
        assert says in one_line_error(capsys, oracle.main, extra)


# --- choices.py: the contenders of lost games played out ---------------------------------------
def test_choices_plays_the_contenders_out_on_layouts_a_player_could_guess(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    choices = load("choices")
    played = games_csv(tmp_path / "games.csv", TINY, "spider-2suit", [0], 40)
    out = tmp_path / "choices.json"
    argv = [str(played), "--agent", TINY, "--continue", "greedy", "--max-steps", "40",
            "--limit", "1", "--decisions", "2", "--contenders", "2", "--layouts", "2",
            "--jobs", "1"]  # fmt: skip
    assert choices.main([*argv, "--json", str(out)]) == 0
    assert "decisions: the chosen contender's share" in capsys.readouterr().out
    rows = json.loads(out.read_text())
    assert 1 <= len(rows) <= 2
    for row in rows:
        assert str(row["best"]) in row["shares"] and len(row["shares"]) == 2
        assert all(share in (0, 0.5, 1) for share in row["shares"].values())
        assert row["left"] in range(6) and row["count"][str(row["best"])] >= 1
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    for extra, says in [
        (["--layouts", "0"], "--layouts must be at least 1"),
        (["--agent", "nobody"], "no lost game of agent 'nobody'"),
        (["--continue", "nobody"], "--continue: unknown agent 'nobody'"),
        (["--deals-left", "x"], "--deals-left must be a comma list"),
        (["--deals-left", "0", "--late"], "--late and --deals-left"),
    ]:
        assert says in one_line_error(capsys, choices.main, [*argv, *extra])
    assert "not an evaluation CSV" in one_line_error(capsys, choices.main, [str(other)])


def test_a_probe_keeps_the_halvings_ranking_of_a_decision() -> None:
    from spider_env.agents.planner import PlannedDecision

    d = PlannedDecision(2, ((1,), (2, 3), (4,)), (0.5, 0.75, float("nan")), (2, 4, 0), 1)
    assert load("choices").probe(d) == {
        "left": 2,
        "best": 1,
        "order": [1, 0],
        "mean": {0: 0.5, 1: 0.75},
        "count": {0: 2, 1: 4},
        "plans": {0: [1], 1: [2, 3]},
    }


# --- values.py: what a player sees, and the graded value ----------------------------------------
def test_values_features_and_the_graded_value_of_an_opening() -> None:
    values = load("values")
    view = TableView.from_state(new_game("spider-1suit", 0))
    f = dict(zip(values.FEATURES, values.features(view).tolist()))
    assert f["one"] == 1.0
    assert f["face_down"] == pytest.approx(44 / 104) and f["stock"] == pytest.approx(50 / 104)
    assert f["out_of_order"] == f["empty_columns"] == f["runs"] == f["clear_columns"] == 0
    assert f["down_squared"] == pytest.approx((4 * 25 + 6 * 16) / 100)
    assert f["ready"] == pytest.approx(10 / 104) and f["longest"] == pytest.approx(6 / 30)
    search = values.value_search(view.variant)
    # every card face down, in the stock or a column's only face-up card: little order to grade
    assert 0 < values.graded_value(search, view) < 0.1
    won = np.array([1, 1, 0, 0])
    assert values.auc(np.array([3.0, 4, 1, 2]), won) == 1.0
    assert values.auc(np.ones(4), won) == 0.5
    rng = np.random.default_rng(0)
    z = rng.normal(size=2000)
    y = (rng.random(2000) < 1 / (1 + np.exp(-2 * z))).astype(float)
    w = values.fit(np.c_[np.ones(2000), z], y)
    assert 1.5 < w[1] < 2.5 and abs(w[0]) < 0.3


def test_values_records_and_reloads_the_same_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = load("values")
    out = tmp_path / "v.npz"
    argv = ["--agent", "greedy", "--deals", "0:6", "--max-steps", "60", "--jobs", "1"]
    assert values.main([*argv, "--out", str(out)]) == 0
    first = capsys.readouterr().out
    assert "positions of 6 games" in first
    assert values.main(["--load", str(out)]) == 0
    assert capsys.readouterr().out == first
    with np.load(out) as z:
        assert z["x"].shape == (z["deal"].size, len(values.FEATURES)) == (z["graded"].size, 13)
        assert ((z["graded"] >= 0) & (z["graded"] < 1)).all()
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    for extra, says in [
        (["--jobs", "3"], "--jobs must be 1 or 2"),
        (["--agent", "nobody"], "--agent: unknown agent"),
        (["--load", str(tmp_path / "other.npz")], "--load: cannot read"),
        (["--out", str(tmp_path / "no" / "v.npz")], "--out: cannot write"),
    ]:
        assert says in one_line_error(capsys, values.main, extra)


# --- losses.py: how lost games ended ------------------------------------------------------------
def test_losses_replays_lost_games_as_they_were_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    losses = load("losses")
    played = games_csv(tmp_path / "games.csv", "greedy", "spider-2suit", [0, 1], 60)
    out = tmp_path / "losses.json"
    argv = [str(played), "--agent", "greedy", "--max-steps", "60"]
    flags = ["--known", "500", "--solve", "2000", "--json", str(out)]
    assert losses.main([*argv, *flags]) == 0
    assert "2 lost deals of 2 replayed (greedy)" in capsys.readouterr().out
    rows = json.loads(out.read_text())
    assert len(rows) == 2 and all(not r["won"] and r["steps"] == 60 for r in rows)
    assert all(r["events"] >= 0 and 0 <= r["known_fewest_before_first_deal"] <= 44 for r in rows)
    for extra, says in [
        (["--limit", "0"], "--limit must be at least 1"),
        (["--games", "won"], "no won games of 'greedy'"),
        (["--solve", "-1"], "--solve must be in 0..50,000,000, got -1"),
    ]:
        assert says in one_line_error(capsys, losses.main, [*argv, *extra])


# --- decision_time.py: CPU seconds of a planned decision ---------------------------------------
def test_decision_time_counts_the_same_decisions_where_the_hint_plays_the_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """On 1 suit the hint's budget is the default but for its exact search, so both play the
    same game: the same number of planned decisions."""
    times = load("decision_time")
    out = times.main(["spider-1suit", "--deals", "3", "--max-steps", "12"])
    assert out["default"]["decisions"] == out["hint"]["decisions"] > 0
    assert isinstance(make_agent("planner", "spider-1suit"), PlannerAgent)
    for extra in (["spider-9suit"], ["spider-1suit", "--max-steps", "0"],
                  ["spider-1suit", "--deals", "x"]):  # fmt: skip
        one_line_error(capsys, times.main, extra)


# --- game_time.py: CPU seconds of a game, and of a lost game played on -------------------------
def test_game_time_times_each_game_and_the_play_out_of_a_lost_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """2-suit deal 13 (a small budget) is shown lost (at step 75) and played on to the step
    limit; bad flags are one line with status 2."""
    times = load("game_time")
    spec = "planner:evals=12,candidates=6,nodes=1500"
    out = times.main(["spider-2suit", "--deals", "13", "--agent", spec, "--max-steps", "150"])
    (game,) = out["games"]
    assert game["steps"] == 150 and not game["won"] and 0 < game["lost_at"] < 150
    assert 0 <= game["cpu_after_lost"] <= game["cpu"] and out["total"]["shown_lost"] == 1
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert printed == [game, out["total"]]
    for extra in (["spider-9suit"], ["spider-2suit", "--max-steps", "0"],
                  ["spider-2suit", "--deals", "x"], ["spider-2suit", "--agent", "greedy"],
                  ["spider-2suit", "--agent", "planner:evals=0"]):  # fmt: skip
        one_line_error(capsys, times.main, extra)


# --- candidates.py: the candidates of a planned decision, and the events its scores reach ------
def test_candidates_counts_each_decision_as_the_observer_saw_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Every planned decision of the game is counted once, with at most as many distinct events
    as candidates and scored events as scored candidates; the summary is the rows' medians."""
    probe = load("candidates")
    out_json = tmp_path / "c.json"
    argv = ["spider-4suit", "--agent", TINY, "--deals", "5000", "--max-steps", "60"]
    out = probe.main([*argv, "--json", str(out_json)])
    rows = json.loads(out_json.read_text())["decisions"]
    agent = make_agent(TINY, "spider-4suit")
    seen: list[Any] = []
    agent.observer = seen.append
    env = make_env(get_variant("spider-4suit"), 60)
    play_episode(env, agent, 5000, 0, name=TINY)
    assert len(rows) == len(seen) == out["all"]["decisions"] > 0
    for row, d in zip(rows, seen):
        assert row["candidates"] == len(d.plans) >= row["events"] >= 1
        assert row["scored"] == sum(c > 0 for c in d.counts) >= row["scored_events"]
    assert out["all"]["median_candidates"] == float(np.median([r["candidates"] for r in rows]))
    for extra in (["spider-9suit"], ["spider-4suit", "--max-steps", "0"],
                  ["spider-4suit", "--agent", "greedy"], ["spider-4suit", "--jobs", "3"],
                  ["spider-4suit", "--deals", "x"], ["spider-4suit", "--seed", "-1"],
                  ["spider-4suit", "--json", str(tmp_path / "no" / "c.json")]):  # fmt: skip
        one_line_error(capsys, probe.main, extra)


# --- won_by.py: the runs that won each deal -------------------------------------------------
def write_runs(path: Path, variant: str, runs: dict[str, dict[int, bool]]) -> Path:
    """An evaluation CSV of ``runs`` (agent -> deal -> won), with the columns won_by.py reads."""
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["variant", "agent", "deal", "won", "steps"])
        for agent, games in runs.items():
            out.writerows([variant, agent, d, w, 100] for d, w in games.items())
    return path


def test_won_by_counts_the_runs_that_won_each_deal_and_skips_runs_missing_a_deal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    probe = load("won_by")
    a = write_runs(
        tmp_path / "a.csv",
        "spider-4suit",
        {"planner": {0: True, 1: False, 2: False}, "greedy": {0: False, 1: False, 2: False}},
    )
    b = write_runs(tmp_path / "b.csv", "spider-4suit", {"planner": {0: True, 1: True, 2: False}})
    short = write_runs(tmp_path / "c.csv", "spider-4suit", {"planner:width=1": {0: True}})
    out = tmp_path / "won_by.csv"
    argv = [str(a), str(b), str(short), "--deals", "0:3", "--prefix", "planner"]
    assert probe.main([*argv, "--csv", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"skipped planner:width=1 in {short}: 1 of the deals" in text
    assert "2 runs of spider-4suit on 3 deals:" in text and "greedy" not in text
    assert "won by at least one run: 2 of 3" in text and "won by every run: 1 of 3" in text
    assert "a run's wins (mean): 1.5" in text
    with out.open(newline="") as f:
        rows = [(int(r["deal"]), int(r["runs"]), int(r["won_by"])) for r in csv.DictReader(f)]
    assert rows == [(0, 2, 2), (1, 2, 1), (2, 2, 0)]
    # without --prefix greedy is a third run
    assert probe.main([str(a), str(b), "--deals", "0:3"]) == 0
    assert "3 runs of spider-4suit on 3 deals:" in capsys.readouterr().out
    other = write_runs(tmp_path / "d.csv", "spider-2suit", {"planner": {0: True, 1: True, 2: True}})
    twice = tmp_path / "e.csv"
    twice.write_text(a.read_text() + "spider-4suit,planner,0,True,100\n")
    torn = tmp_path / "f.csv"
    torn.write_text(a.read_text() + "spider-4suit,planner\n")
    for bad, says in [
        ([str(a), str(other), "--deals", "0:3"], "the runs are of several games"),
        ([str(a), "--deals", "0:4"], "no run of any agent* played every deal of --deals 0:4"),
        ([str(tmp_path / "none.csv"), "--deals", "0:3"], "cannot read"),
        ([str(tmp_path), "--deals", "0:3"], "cannot read"),
        ([str(twice), "--deals", "0:3"], "plays deal 0 twice"),
        ([str(torn), "--deals", "0:3"], "line 8 is not a game's record"),
        ([str(a), "--deals", "x"], "bad deal range"),
        ([str(a), "--deals", "0:3", "--csv", str(tmp_path / "no" / "o.csv")], "--csv"),
    ]:
        assert says in one_line_error(capsys, probe.main, bad)
