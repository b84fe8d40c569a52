"""benchmarks/oracle.py: the planner told part of the truth. Told nothing it plays evaluate's
games move for move; told a part, its guesses keep that part's true cards and draw the rest
from the right cards; the script runs end to end and its bad flags are one line, status 2."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from spider_env.agents import make_agent

from spider_env.apps.evaluation.episode import make_env, play_episode
from spider_env.core.variants import get_variant
from spider_env.fast.game import FastGame
from spider_env.observation.view import TableView

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "oracle.py"
_spec = importlib.util.spec_from_file_location("oracle_bench", SCRIPT)
assert _spec is not None and _spec.loader is not None
oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oracle)

SMALL = "planner:evals=6,candidates=3,nodes=500,screen=8"
V = get_variant("spider-1suit")


def told(know: str, env: Any) -> Any:
    agent = oracle.ToldPlanner(V, seed=0, **make_agent(SMALL, V, seed=0).given)
    agent.know = know
    agent.truth = lambda: env.unwrapped.state
    return agent


def test_told_nothing_plays_the_games_of_the_planner() -> None:
    for deal in (3, 8):
        env = make_env(V, 300)
        rec, acts, _ = play_episode(env, told("none", env), deal, seed=1)
        ref, ref_acts, _ = play_episode(make_env(V, 300), make_agent(SMALL, V), deal, seed=1)
        assert acts == ref_acts and rec.won == ref.won


def hidden(st: Any) -> tuple[list[int], list[int]]:
    """The face-down cards (column by column, deepest first) and the stock's cards."""
    game = FastGame(V)
    arr = game.from_state(st)
    slots = game.hidden_slots(arr)
    down = sum(st.down)
    values = [int(arr[s]) for s in slots]
    return values[:down], values[down:]


@pytest.mark.parametrize("know", ["none", "next", "stock", "down", "full"])
def test_a_guess_keeps_the_told_cards_and_draws_the_rest_from_the_right_ones(know: str) -> None:
    env = make_env(V, 300)
    obs, _ = env.reset(options={"deal": 11})
    agent = told(know, env)
    agent.reset(seed=5)
    truth_down, truth_stock = hidden(env.unwrapped.state)
    tops = np.cumsum(env.unwrapped.state.down) - 1  # each column's next card (none empty here)
    changed = Counter()
    for _ in range(8):
        down, stock = hidden(agent._guess(TableView.from_obs(V, obs)))
        assert Counter(down) + Counter(stock) == Counter(truth_down) + Counter(truth_stock)
        if know in ("down", "full"):
            assert down == truth_down
        if know in ("stock", "full"):
            assert stock == truth_stock
        if know == "stock":
            assert Counter(down) == Counter(truth_down)  # the face-down cards among themselves
        if know == "down":
            assert Counter(stock) == Counter(truth_stock)
        if know == "next":
            assert [down[i] for i in tops] == [truth_down[i] for i in tops]
        changed["down"] += down != truth_down
        changed["stock"] += stock != truth_stock
        # the scores' further layouts keep the same part
        known = np.array(down + stock)
        again = agent._draw(known)
        if know in ("down", "full"):
            assert again[: len(down)].tolist() == down
        if know in ("stock", "full"):
            assert again[len(down) :].tolist() == stock
    assert changed["down"] == (8 if know in ("none", "next", "stock") else 0)
    assert changed["stock"] == (8 if know in ("none", "next", "down") else 0)


@pytest.mark.parametrize("when", ["all", "early"])
def test_the_script_plays_each_mode_on_the_same_deals_and_pairs_them(
    tmp_path: Path, when: str
) -> None:
    out = tmp_path / "games.csv"
    argv = ["--agent", SMALL, "--deals", "3", "--max-steps", "200", "--know", "none"]
    argv += ["--know", "full", "--csv", str(out), "--when", when]
    r = subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    named = "" if when == "all" else f" ({when})"
    assert lines[0].startswith("know=none: won ") and " of 1 " in lines[0]
    assert lines[1].startswith(f"know=full{named}: won ") and "against know=none:" in lines[1]
    rows = out.read_text().splitlines()
    assert rows[0] == "know,when,deal,won,steps,cpu_seconds" and len(rows) == 3
    assert all(row.split(",")[1] == when for row in rows[1:])


@pytest.mark.parametrize("when", ["early", "late"])
def test_told_early_or_late_is_told_at_those_decisions_only(when: str) -> None:
    env = make_env(V, 300)
    agent = told("next", env)
    agent.when = when
    seen: list[tuple[int, bool]] = []
    guess = agent._guess

    def record(view: TableView) -> Any:
        out = guess(view)
        seen.append((view.deals_left, agent._told))
        return out

    agent._guess = record  # type: ignore[method-assign]
    _, acts, _ = play_episode(env, agent, 8, seed=1)
    assert {left == 0 for left, _ in seen} == {True, False}  # decisions before and after
    assert all(t == ((left == 0) == (when == "late")) for left, t in seen)
    if when == "late":  # the same game as told nothing until the stock is empty
        _, ref, _ = play_episode(make_env(V, 300), make_agent(SMALL, V), 8, seed=1)
        replay = make_env(V, 300)
        replay.reset(options={"deal": 8})
        first = next(i for i, a in enumerate(ref) if replay.step(a)[0]["deals_left"] == 0)
        assert acts[: first + 1] == ref[: first + 1] and acts != ref


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--know", "nope"], "--know must be one of"),
        (["--know", "down", "--know", "down"], "--know repeats a mode"),
        (["--when", "never"], "--when must be one of"),
        (["--agent", "greedy"], "--agent must be a planner"),
        (["--agent", "planner:ply2=2"], "ply2 draws layouts"),
        (["--agent", "planner:evals=x"], "--agent"),
        (["--jobs", "3"], "--jobs must be 1 or 2"),
        (["--deals", "x"], "--deals"),
        (["--variant", "nope"], "--variant"),
        (["--max-steps", "0"], "--max-steps must be at least 1"),
        (["--csv", "/nonexistent/dir/games.csv"], "--csv: cannot write"),
    ],
)
def test_bad_flags_are_one_line_and_status_2(argv: list[str], says: str) -> None:
    r = subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and says in r.stderr, r.stderr
