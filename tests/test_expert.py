"""The expert agent (agents/expert.py): blind to hidden cards, deterministic, legal, its budget
specs, pickling, and evaluation with it on one or two workers.

Small budgets keep these fast (``expert:samples=2,nodes=3000``); the permutation test is the
issue's check that the expert reads nothing hidden."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import (
    after_another_game,
    check_blind_to_hidden_cards,
    evaluate_on_one_and_two_workers,
    pickled_copy_plays_on,
    play,
)
from spider_env.agents import ExpertAgent, make_agent

from spider_env.env import SpiderEnv
from spider_env.search.solver import MAX_NODES

SMALL = "expert:samples=2,nodes=3000"


# --- no peeking: the permutation test --------------------------------------------------
@pytest.mark.parametrize(
    "name, deal",
    [
        ("spider-1suit", 2),
        ("spider-2suit", 2),
        ("spiderette-4suit", 2),
        ("scorpion", 0),  # a whole game (deals 1, 2 end within 17 steps)
        ("spider-tournament-2suit", 2),  # visible pile tops, chosen piles, undo
    ],
)
def test_choice_is_unchanged_when_face_down_cards_and_stock_are_permuted(
    name: str, deal: int
) -> None:
    """At every position of a game (60 steps at most), a copy of the expert (same memory, same
    RNG state) given the same position with the hidden cards permuted chooses the same action;
    the permuted env shows the same observation, mask and info."""
    agent = make_agent(SMALL, name, seed=3)
    agent.reset(seed=3)
    seen = check_blind_to_hidden_cards(agent, name, {"deal": deal}, np.random.default_rng(11))
    assert seen.checked >= 10 or seen.ended
    assert seen.permuted >= seen.checked // 2  # the hidden cards really were different
    assert agent.searches > 0  # the solver was used, not only the fallback


# --- determinism ---------------------------------------------------------------------------------
def test_same_seed_same_deal_same_actions() -> None:
    first, _ = play(make_agent(SMALL, "spider-2suit", 5), "spider-2suit", 4, 120, seed=5)
    second, _ = play(make_agent(SMALL, "spider-2suit", 5), "spider-2suit", 4, 120, seed=5)
    assert len(first) == 120 and first == second


def test_reset_forgets_the_last_game() -> None:
    again, fresh = after_another_game(SMALL)
    assert again == fresh


# --- play ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, deal, steps",
    [("spider-1suit", 3, 400), ("spiderette-4suit", 1, 300), ("spider-tournament-2suit", 1, 300)],
)
def test_plays_only_legal_actions(name: str, deal: int, steps: int) -> None:
    actions, _ = play(make_agent(SMALL, name, 0), name, deal, steps)  # play() checks the mask
    assert len(actions) > 20


@pytest.mark.parametrize("seed", [0, 1])
def test_wins_an_easy_one_suit_deal(seed: int) -> None:
    # 1-suit deal 0: the greedy agent wins it too; the expert wins it with any of seeds 0..2.
    _, info = play(make_agent(SMALL, "spider-1suit", seed), "spider-1suit", 0, 400, seed=seed)
    assert info["is_success"] and info["completed_runs"] == 8


@pytest.mark.parametrize("name, per_decision", [("simple-simon", 1), ("spider-2suit", 3)])
def test_with_no_hidden_card_one_layout_is_searched(name: str, per_decision: int) -> None:
    """Simple Simon deals every card face up: the samples collapse to the one true layout, a
    single search per decision at most; with hidden cards each sample is searched."""
    env = SpiderEnv(variant=name)
    obs, info = env.reset(options={"deal": 1})
    agent = ExpertAgent(name, seed=0, samples=3, nodes=3000)
    decisions = 0
    for _ in range(80):
        mask = info["action_mask"]
        if not mask.any():
            break
        a = agent.act(obs, mask, info)
        assert mask[a]
        if mask.sum() > 1:
            decisions += 1
            if decisions == 1:
                assert agent.searches == per_decision
        obs, _, term, _, info = env.step(a)
        if term:
            break
    assert decisions > 10
    if name == "simple-simon":
        assert 1 <= agent.searches <= decisions


# --- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec, message",
    [
        ("expert:samples=0", "samples must be an int >= 1, got 0"),
        ("expert:nodes=-5", "nodes must be an int >= 1, got -5"),
        ("expert:stage_nodes=0", "stage_nodes must be an int >= 1, got 0"),
        ("expert:foo=1", "bad expert budget 'foo=1'.*samples, nodes, width, stage_nodes"),
        ("expert:width=-1", "width must be an int >= 0, got -1"),
        ("expert:width=10,stage_nodes=100", "stage_nodes is a budget of best-first search"),
        ("expert:width=50000", "samples x width must be at most 100,000"),
        ("expert:", "bad expert budget ''"),
        ("expert:samples=2,,nodes=3000", "bad expert budget ''"),
        ("expert:samples", "bad expert budget 'samples'"),
        ("expert:samples=x", "samples='x' is not an integer"),
        ("expert:nodes=2.5", "nodes='2.5' is not an integer"),
        ("expert:samples=2,samples=3", "'samples' given twice"),
        ("expertx", "unknown agent 'expertx'"),
    ],
)
def test_bad_specs_are_refused_naming_the_problem(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_agent(spec, "spider-1suit")


def test_specs_set_the_budget_and_the_name() -> None:
    agent = make_agent("expert:nodes=5000,samples=3,width=0,stage_nodes=1000", "spider-1suit")
    assert isinstance(agent, ExpertAgent)
    assert (agent.samples, agent.nodes, agent.width, agent.stage_nodes) == (3, 5000, 0, 1000)
    assert agent.name == "expert:samples=3,nodes=5000,width=0,stage_nodes=1000"
    beam = make_agent("expert:width=20", "spider-1suit")
    assert isinstance(beam, ExpertAgent) and beam.width == 20
    assert beam.name == "expert:width=20"
    assert make_agent("expert", "spider-1suit").name == "expert"


@pytest.mark.parametrize(("width", "kind"), [(0, "Solver"), (10, "BeamSolver")])
def test_width_chooses_the_solver_of_the_samples(width: int, kind: str) -> None:
    from spider_env.agents.expert import sample_solver

    from spider_env.core.variants import get_variant

    solver = sample_solver(get_variant("spider-2suit"), width=width)
    assert type(solver).__name__ == kind
    assert solver.nodes == (100_000 if width else 30_000)
    agent = ExpertAgent("spider-2suit", 0, width=width)
    env = gym.make("Spider-v0", suits=2)
    obs, info = env.reset(seed=0, options={"deal": 3})
    for _ in range(5):
        a = agent.act(obs, info["action_mask"], info)
        obs, _, term, trunc, info = env.step(a)
        assert not (term or trunc)
    assert agent.searches > 0


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"samples": True}, TypeError, "samples must be an int >= 1, got True"),
        ({"samples": None}, TypeError, "samples must be an int"),
        ({"nodes": 2.0}, TypeError, "nodes must be an int >= 1, got 2.0"),
        ({"stage_nodes": -1}, ValueError, "stage_nodes must be an int >= 1"),
        ({"width": -1}, ValueError, "width must be an int >= 0, got -1"),
    ],
)
def test_bad_budget_arguments_are_refused(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        ExpertAgent("spider-1suit", **kwargs)


def test_a_budget_above_the_solvers_limit_is_refused() -> None:
    ExpertAgent("spider-1suit", samples=1, nodes=MAX_NODES)  # at the limit: accepted
    limit = f"{MAX_NODES:,}"
    with pytest.raises(ValueError, match=limit):
        ExpertAgent("spider-1suit", samples=1, nodes=MAX_NODES + 1)
    with pytest.raises(ValueError, match=limit):  # samples x nodes counts
        ExpertAgent("spider-1suit", samples=2, nodes=MAX_NODES // 2 + 1)
    with pytest.raises(ValueError, match=limit):
        make_agent(f"expert:samples=4,nodes={MAX_NODES // 4 + 1}", "spider-1suit")


def test_an_observation_of_another_variant_is_refused() -> None:
    env = SpiderEnv(variant="spiderette-4suit")
    obs, info = env.reset(options={"deal": 0})
    with pytest.raises(ValueError, match="the agent plays another variant"):
        make_agent(SMALL, "spider-2suit").act(obs, info["action_mask"], info)
    env = SpiderEnv(variant="spider-2suit")  # same shapes: the cards give it away
    obs, info = env.reset(options={"deal": 0})
    with pytest.raises(ValueError, match="more copies of a card than the spider-1suit deck"):
        make_agent(SMALL, "spider-1suit").act(obs, info["action_mask"], info)
    env = SpiderEnv(variant="spider-2suit", undo=True)  # undo adds an action
    obs, info = env.reset(options={"deal": 0})
    with pytest.raises(ValueError, match="the agent plays another variant"):
        make_agent(SMALL, "spider-2suit").act(obs, info["action_mask"], info)


def test_variant_comes_from_info_with_undo() -> None:
    env = SpiderEnv(variant="spider-2suit", undo=True)
    obs, info = env.reset(options={"deal": 0})
    agent = ExpertAgent(seed=0, samples=2, nodes=3000)
    a = agent.act(obs, info["action_mask"], info)
    assert info["action_mask"][a] and agent.variant == env.variant


# --- pickling and evaluation -------------------------------------------------------------------
def test_a_used_agent_pickles_and_the_copy_plays_on_the_same() -> None:
    ours, theirs = pickled_copy_plays_on(SMALL)
    assert ours == theirs


def test_evaluate_gives_the_same_records_with_one_or_two_workers(monkeypatch: Any) -> None:
    """By spec, and as an agent object (pickled to the workers): the same games."""
    one = evaluate_on_one_and_two_workers(SMALL, monkeypatch)
    assert [r.agent for r in one.records] == [SMALL] * 2
    assert sum(r.won for r in one.records) >= 1


@pytest.mark.parametrize(
    ("variant", "budget"),
    [
        ("spider-1suit", (0, 30_000)),
        ("spider-2suit", (0, 30_000)),
        ("spider-4suit", (10, 100_000)),
        ("simple-simon", (10, 100_000)),
    ],
)
def test_default_sample_budget_is_the_one_measured_better(
    variant: str, budget: tuple[int, int]
) -> None:
    from spider_env.agents.expert import default_budget, sample_solver

    from spider_env.core.variants import get_variant

    assert default_budget(get_variant(variant)) == budget
    agent = ExpertAgent(variant, 0)
    assert agent.name == "expert" and agent.width is None
    solver = sample_solver(get_variant(variant))
    assert type(solver).__name__ == ("BeamSolver" if budget[0] else "Solver")
    assert solver.nodes == budget[1]
