"""Agents: protocol, legality, seeding, no peeking at hidden cards, greedy play quality."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import check_blind_to_hidden_cards, play, position, run
from spider_env.agents import (
    AGENT_NAMES,
    Agent,
    GreedyAgent,
    LookaheadAgent,
    RandomAgent,
    TableView,
    make_agent,
)

import spider_env as se
from spider_env.apps.evaluation import evaluate
from spider_env.core.actions import DEAL, UNDO, decode
from spider_env.core.state import State
from spider_env.core.variants import VARIANTS
from spider_env.env import SpiderEnv
from spider_env.observation import flat_width

AGENT_CLASSES = (RandomAgent, GreedyAgent, LookaheadAgent)
EVERY_AGENT = (*AGENT_NAMES, "model")  # "model": a tiny untrained SB3 model (needs sb3-contrib)


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory: Any) -> Callable[[str], str]:
    """``path(variant)``: an untrained MaskablePPO for ``variant`` (features, 2 card slots),
    saved without a sidecar: its observation encoding is inferred from its space."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    d = tmp_path_factory.mktemp("tiny_models")
    made: dict[str, str] = {}

    def path(variant: str) -> str:
        if variant not in made:
            env = SpiderEnv(variant=variant, obs_mode="features", feature_slots=2)
            p = d / f"{variant}.zip"
            MaskablePPO(
                "MultiInputPolicy", env, n_steps=16, batch_size=16, seed=0,
                policy_kwargs={"net_arch": [8]},
            ).save(p)  # fmt: skip
            made[variant] = str(p)
        return made[variant]

    return path


#: Smaller budgets for the slowest players, the same code paths (the expert's samples are still
#: solved by best-first search on 2 suits, by a beam elsewhere).
SMALL_BUDGET = {"expert": "expert:samples=2,nodes=3000"}


def agent_for(spec: str, variant: str, seed: int, request: Any) -> Any:
    """``make_agent`` for an agent name (with :data:`SMALL_BUDGET`), or for ``"model"`` a tiny
    model of ``variant``."""
    if spec == "model":
        return make_agent(request.getfixturevalue("tiny_models")(variant), variant, seed)
    return make_agent(SMALL_BUDGET.get(spec, spec), variant, seed)


def run_episode(agent: Any, variant: Any, deal: int, max_steps: int = 400) -> list[int]:
    """``agent``'s actions on ``deal`` (reset with the deal number as seed), each checked legal."""
    return play(agent, variant, deal, max_steps, seed=deal)[0]


# --- protocol, legality, seeding ----------------------------------------------------------------
@pytest.mark.parametrize("cls", AGENT_CLASSES)
def test_agents_follow_the_protocol_and_play_legal_moves(cls: type) -> None:
    agent = cls("spider-2suit", seed=1)
    assert isinstance(agent, Agent)
    actions = run_episode(agent, "spider-2suit", 3, max_steps=150)
    assert len(actions) > 10


@pytest.mark.parametrize("cls", AGENT_CLASSES)
def test_same_seed_same_game(cls: type) -> None:
    a = run_episode(cls("spider-4suit", seed=5), "spider-4suit", 11, max_steps=200)
    b = run_episode(cls("spider-4suit", seed=5), "spider-4suit", 11, max_steps=200)
    assert a == b


def test_random_agent_is_uniform_over_legal_actions() -> None:
    mask = np.zeros(1301, dtype=bool)
    mask[[3, 40, 1300]] = True
    agent = RandomAgent("spider-4suit", seed=0)
    picks = [agent.act({}, mask) for _ in range(600)]
    counts = {a: picks.count(a) for a in (3, 40, 1300)}
    assert set(picks) == {3, 40, 1300}
    assert all(150 < n < 250 for n in counts.values()), counts


def test_agents_refuse_an_empty_mask() -> None:
    env = SpiderEnv(suits=1)
    obs, _ = env.reset(options={"deal": 0})
    with pytest.raises(ValueError, match="no legal action"):
        GreedyAgent("spider-1suit").act(obs, np.zeros(1301, dtype=bool))


@pytest.mark.parametrize("undo", [False, True])
def test_variant_comes_from_the_constructor_or_info_else_a_clear_error(undo: bool) -> None:
    env = SpiderEnv(suits=2, undo=undo)
    obs, info = env.reset(options={"deal": 0})
    mask = info["action_mask"]
    agent = GreedyAgent(seed=0)
    a = agent.act(obs, mask, info)  # info["variant"] names the game, options included
    assert mask[a]
    assert agent.variant == env.variant
    assert GreedyAgent(env.variant, seed=0).act(obs, mask) == a
    no_variant = {k: v for k, v in info.items() if k != "variant"}
    with pytest.raises(ValueError, match="needs its variant"):
        GreedyAgent(seed=0).act(obs, mask, no_variant)
    other = VARIANTS["spider-2suit"].with_options(undo=not undo)
    with pytest.raises(ValueError, match=f"the action mask has {mask.size} entries"):
        GreedyAgent(other, seed=0).act(obs, mask)


def test_make_agent_names_and_errors(tmp_path: Any) -> None:
    assert isinstance(make_agent("random", "spider-1suit"), RandomAgent)
    assert isinstance(make_agent("GREEDY", "spider-1suit"), GreedyAgent)
    assert isinstance(make_agent("lookahead", "spider-1suit"), LookaheadAgent)
    with pytest.raises(ValueError, match="unknown agent 'grredy'"):
        make_agent("grredy", "spider-1suit")
    with pytest.raises(FileNotFoundError, match="model file not found"):
        make_agent(str(tmp_path / "nope.zip"), "spider-1suit")


# --- the player's view --------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_view_from_obs_matches_state_and_fills_consistently(name: str) -> None:
    env = SpiderEnv(variant=name)
    obs, _ = env.reset(options={"deal": 4})
    for a in run_episode(GreedyAgent(name, seed=0), name, 4, max_steps=30)[:30]:
        view = TableView.from_obs(name, obs)
        assert view == TableView.from_state(env.state)
        filled = view.to_state(np.random.default_rng(1))
        filled.validate()  # built unvalidated; the fill is still a valid position
        view.to_state().validate()
        assert TableView.from_state(filled) == view
        # Same legal actions (the rebuilt state has no undo history: undo aside).
        undo = s_undo(env.state)
        assert se.legal_actions(filled) == [x for x in se.legal_actions(env.state) if x != undo]
        obs, _, term, _, _ = env.step(a)
        if term:
            break


def s_undo(state: State) -> int:
    return state.variant.n_actions - 1 if state.variant.undo else -1


# --- no peeking ---------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", EVERY_AGENT)
@pytest.mark.parametrize("name", ["spider-2suit", "spider-tournament-2suit", "scorpion"])
def test_choices_do_not_depend_on_hidden_cards(spec: str, name: str, request: Any) -> None:
    """At every position of a game, an agent (with the same memory and RNG state) chooses the
    same action when the face-down and stock cards are permuted. Every agent name is tested."""
    agent = agent_for(spec, name, 3, request)
    agent.reset(seed=3)
    seen = check_blind_to_hidden_cards(agent, name, {"deal": 2}, np.random.default_rng(7))
    assert seen.checked >= 10 or seen.ended  # ten positions at least, or the whole game
    assert seen.unchanged_face_down == 0  # every table with a face-down card was permuted


@pytest.mark.parametrize("spec", EVERY_AGENT)
def test_agents_never_validate_a_state(spec: str, request: Any, monkeypatch: Any) -> None:
    """Agents take the env's observation as it is: no State they build is validated (the env
    validates the deal at reset; after that nothing may)."""
    name = "spider-2suit"
    env = SpiderEnv(variant=name)
    obs, info = env.reset(options={"deal": 5})
    agent = agent_for(spec, name, 0, request)
    agent.reset(seed=0)

    def refuse(self: State) -> None:
        raise AssertionError("an agent validated a state")

    monkeypatch.setattr(State, "validate", refuse)
    for _ in range(40):
        a = agent.act(obs, info["action_mask"], info)
        obs, _, term, _, info = env.step(a)
        if term:
            break


# --- greedy play --------------------------------------------------------------------------------
def test_greedy_wins_a_substantial_share_of_one_suit_deals() -> None:
    res = evaluate(["greedy"], "0:12", suits=1, max_steps=1000)
    assert res.summaries[0].wins >= 6, res.table()


def test_greedy_beats_random_on_completed_runs() -> None:
    res = evaluate(["random", "greedy"], "0:6", suits=2, max_steps=400)
    assert res.summary("greedy").mean_runs > res.summary("random").mean_runs


def test_greedy_never_walks_back_to_the_last_position() -> None:
    env = SpiderEnv(suits=1)
    obs, info = env.reset(options={"deal": 3})
    agent = GreedyAgent("spider-1suit", seed=0)
    keys = [TableView.from_obs("spider-1suit", obs).key()]
    for _ in range(300):
        a = agent.act(obs, info["action_mask"], info)
        obs, _, term, _, info = env.step(a)
        keys.append(TableView.from_obs("spider-1suit", obs).key())
        if term:
            break
    back = [t for t in range(2, len(keys)) if keys[t] == keys[t - 2]]
    assert not back, f"ping-pong at steps {back[:5]}"


def test_greedy_never_uses_undo() -> None:
    v = VARIANTS["spider-1suit"].with_options(undo=True)
    actions = run_episode(GreedyAgent(v, seed=0), v, 1, max_steps=300)
    assert all(decode(v, a).kind != UNDO for a in actions)


def _obs(state: State) -> tuple[Any, Any]:
    env = SpiderEnv(variant=state.variant)
    return env.reset(options={"state": state})


def test_greedy_completes_a_run_rather_than_dealing() -> None:
    # Column 0 ends with K..2 of spades, column 1 with the ace: moving it completes a run.

    s = position(
        [
            f"* {run('S', 13, 2)}",
            "|3D AS",
            "|4D 5H",
            "|5D 9D",
            "|6D 4C",
            "|7D 7H",
            "|8D 2C",
            "|9D JD",
            "|TD 3H",
            "|JD 8C",
        ],
        piles=3,
    )
    obs, info = _obs(s)
    a = GreedyAgent(s.variant, seed=0).act(obs, info["action_mask"], info)
    m = decode(s.variant, a)
    assert (m.kind, m.src, m.dst) == ("move", 1, 0)


def test_greedy_builds_in_suit_and_deals_when_nothing_helps() -> None:
    # 5H can go on 6H (in suit) or on 6C (off suit), both turning a card up: in suit wins.
    s = position(
        [
            "|2D 6C",
            "|3D 5H",
            "|4D 6H",
            "|5D 9D",
            "* 4C",
            "|7D KH",
            "|8D 2C",
            "|9D JD",
            "|TD 3H",
            "|QD 8C",
        ],
        piles=2,
    )
    obs, info = _obs(s)
    ranked = GreedyAgent(s.variant, seed=0).rank_actions(obs, info["action_mask"], info)
    best = decode(s.variant, ranked[0][1])
    assert (best.src, best.dst) == (1, 2)
    # The only move breaks a suited pair (8H off 9H onto 9C): the greedy player deals.
    s = position(
        [
            "|2D 9H 8H",
            "|3D 9C",
            "|4D 2H",
            "|5D KD",
            "* 4C",
            "|7D KH",
            "|8D 2C",
            "|9D JD",
            "|TD 6H",
            "|QD KS",
        ],
        piles=2,
    )
    obs, info = _obs(s)
    assert info["legal_action_count"] == 2
    a = GreedyAgent(s.variant, seed=0).act(obs, info["action_mask"], info)
    assert decode(s.variant, a).kind == DEAL


def test_greedy_turns_up_cards() -> None:
    s = position(
        [
            "|2D KC",
            "|3D KD",
            "|4D 7S",
            "|5D 9D",
            "* 8C",
            "|7D KH",
            "|8D 2C",
            "|9D JD",
            "|TD 6H",
            "|QD KS",
        ],
        piles=2,
    )
    obs, info = _obs(s)
    a = GreedyAgent(s.variant, seed=0).act(obs, info["action_mask"], info)
    assert sum(se.apply(s, a).down) < sum(s.down)
    assert decode(s.variant, a).kind == "move"


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_greedy_plays_every_variant(name: str) -> None:
    res = evaluate(["random", "greedy"], [0, 1], variant=name, max_steps=250)
    g, r = res.summary("greedy"), res.summary("random")
    assert g.mean_runs >= r.mean_runs
    assert all(rec.steps > 0 for rec in res.records)


def test_greedy_sorts_simple_simon() -> None:
    # All cards face up, no stock: the plan is building long suited runs. The greedy player
    # before its open-game terms completed no run on these deals (wandering until the step
    # limit); with them it wins all three (12 runs, in 153-405 steps) when measured.
    res = evaluate(["greedy"], [81, 101, 139], variant="simple-simon", max_steps=600)
    assert sum(rec.completed_runs for rec in res.records) >= 8, res.table()


def manoeuvre() -> State:
    """Column 8 ends 5S 4S 3S 2S AS JS over a face-down card; column 9 is empty. JS into the
    empty column, then the 5..A run onto 6S (column 3) turns a card up; each move alone loses
    score, so only a search sees it."""
    return position(
        [
            "* 9S KS",
            "|AS QS KS",
            "|AS QS KS",
            "|2S 9S 6S",
            "|2S QS KS",
            "|3S QS KS",
            "|3S QS KS",
            "|4S 8S KS",
            "|4S 5S 4S 3S 2S AS JS",
            "-",
        ],
        variant="spider-1suit",
        piles=0,
    )


def test_lookahead_finds_a_two_move_manoeuvre() -> None:
    s = manoeuvre()
    obs, info = _obs(s)
    greedy = GreedyAgent(s.variant, seed=0).rank_actions(obs, info["action_mask"], info)
    assert greedy[0][0] < 0  # no single move gains anything
    agent = LookaheadAgent(s.variant, seed=0)
    env = SpiderEnv(variant=s.variant)
    obs, info = env.reset(options={"state": s})
    for _ in range(3):
        a = agent.act(obs, info["action_mask"], info)
        obs, _, _, _, info = env.step(a)
        if sum(env.state.down) < sum(s.down):
            break
    assert sum(env.state.down) == sum(s.down) - 1


def test_lookahead_plays_only_what_the_mask_allows() -> None:
    # The search starts from the mask's legal ids: without the manoeuvre's first move in the
    # mask, the agent plays something the mask allows.
    s = manoeuvre()
    obs, info = _obs(s)
    first = LookaheadAgent(s.variant, seed=0).act(obs, info["action_mask"], info)
    mask = info["action_mask"].copy()
    mask[first] = False
    assert mask[LookaheadAgent(s.variant, seed=0).act(obs, mask, info)]


# --- trained models -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def models(tmp_path_factory: Any) -> Any:
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import DQN, PPO

    d = tmp_path_factory.mktemp("models")
    env = gym.make("Spider-v0", suits=1, obs_mode="flat")
    MaskablePPO(
        "MlpPolicy", env, n_steps=16, batch_size=16, seed=0, policy_kwargs={"net_arch": [8]}
    ).save(d / "mppo.zip")
    (d / "mppo.json").write_text(
        json.dumps({"algo": "MaskablePPO", "env_kwargs": {"suits": 1, "obs_mode": "flat"}})
    )
    PPO("MlpPolicy", env, n_steps=16, batch_size=16, seed=0, policy_kwargs={"net_arch": [8]}).save(
        d / "ppo.zip"
    )
    env2 = gym.make("Spider-v0", suits=1, obs_mode="features", feature_slots=3)
    DQN("MultiInputPolicy", env2, buffer_size=64, seed=0, policy_kwargs={"net_arch": [8]}).save(
        d / "dqn.zip"
    )
    return d


@pytest.mark.parametrize("name", ["mppo.zip", "ppo.zip", "dqn.zip"])
def test_sb3_models_play_legal_moves(models: Any, name: str) -> None:
    agent = make_agent(str(models / name), "spider-1suit")
    # a DQN over the "features" dict plays it as the "flat" vector (its concatenation)
    assert agent.obs_mode == "flat"
    assert agent.env_kwargs()["feature_slots"] == (3 if name == "dqn.zip" else 6)
    actions = run_episode(agent, "spider-1suit", 0, max_steps=40)
    assert len(actions) == 40


def test_sb3_samples_unless_told_or_its_sidecar_says_most_likely(
    models: Any, tmp_path: Any
) -> None:
    from spider_env.agents.model import ModelLoadError

    path = str(tmp_path / "m.zip")
    shutil.copy(models / "ppo.zip", path)  # no sidecar
    env = SpiderEnv(suits=1)
    obs, info = env.reset(options={"deal": 0})
    mask = info["action_mask"]
    legal = np.flatnonzero(mask)

    def agent(**kw: Any) -> Any:
        return make_agent(path, "spider-1suit", seed=0, **kw)

    sampled, likely = agent(), agent(deterministic=True)
    assert sampled.name == agent(deterministic=False).name == f"{path} (sampled)"
    assert likely.name == f"{path} (most likely)"
    best = int(legal[np.argmax(likely.scores(likely.encode(obs, mask))[legal])])
    assert {likely.act(obs, mask, info) for _ in range(20)} == {best}
    picks = [sampled.act(obs, mask, info) for _ in range(20)]
    assert len(set(picks)) > 1 and all(mask[a] for a in picks)
    again = agent()
    assert [again.act(obs, mask, info) for _ in range(20)] == picks  # seeded
    # The sidecar decides when the caller does not; the caller's word wins.
    side = tmp_path / "m.json"
    side.write_text(json.dumps({"deterministic": True}))
    assert agent().name == f"{path} (most likely)"
    assert agent(deterministic=False).name == f"{path} (sampled)"
    side.write_text(json.dumps({"deterministic": "yes"}))
    with pytest.raises(ModelLoadError, match="deterministic='yes'"):
        agent()


def test_sb3_model_errors(models: Any, tmp_path: Any) -> None:
    from spider_env.agents.model import ModelLoadError

    bad = tmp_path / "bad.zip"
    bad.write_text("not a zip")
    with pytest.raises(ModelLoadError, match="not a zip"):
        make_agent(str(bad), "spider-1suit")
    with pytest.raises(ModelLoadError, match=r"trained on spider-1suit, not spiderette-1suit"):
        make_agent(str(models / "mppo.zip"), "spiderette-1suit")
    with pytest.raises(ModelLoadError, match="weights do not read spider-4suit"):
        make_agent(str(models / "ppo.zip"), "spider-4suit")  # no sidecar: inferred, no fit
    with pytest.raises(ModelLoadError, match="trained on spider-1suit, not spider-2suit"):
        make_agent(str(models / "mppo.zip"), "spider-2suit")  # the sidecar's game
    one, two = (flat_width(VARIANTS[f"spider-{n}suit"], 6) for n in (1, 2))
    with pytest.warns(UserWarning), pytest.raises(ModelLoadError) as err:
        make_agent(str(models / "mppo.zip"), "spider-2suit", allow_other_game=True)
    message = str(err.value)
    assert f"reads {one} inputs" in message and f"has {two}" in message and "\n" not in message
