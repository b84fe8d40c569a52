"""Episodes: record, save/load round trip, replay through the env, corrupt files."""

from __future__ import annotations

import json
from typing import Any

import pytest
from spider_env.agents import GreedyAgent, RandomAgent

from spider_env.apps.episodes import (
    Episode,
    EpisodeError,
    play_frames,
    record_episode,
    replay_frames,
)
from spider_env.core.variants import VARIANTS
from spider_env.env import SpiderEnv


@pytest.fixture(scope="module")
def episode() -> Episode:
    return record_episode(GreedyAgent(), "spider-1suit", 2, max_steps=120, agent_name="greedy")


def test_record_holds_variant_deal_actions_rewards_outcome(episode: Episode) -> None:
    assert episode.variant == "spider-1suit" and episode.deal == 2
    assert len(episode.actions) == len(episode.rewards) == episode.outcome["steps"]
    assert episode.outcome["reward"] == pytest.approx(sum(episode.rewards))
    assert set(episode.outcome) >= {"won", "completed_runs", "score", "moves", "truncated"}


def test_save_load_round_trip(episode: Episode, tmp_path: Any) -> None:
    path = tmp_path / "ep.jsonl"
    episode.save(str(path))
    lines = path.read_text().splitlines()
    head = json.loads(lines[0])
    assert head["format"] == "spider-env episode" and head["deal"] == 2
    assert json.loads(lines[1])["move"].startswith(("move", "deal"))
    assert "outcome" in json.loads(lines[-1])
    assert Episode.load(str(path)) == episode


def test_replay_reproduces_the_game(episode: Episode) -> None:
    frames = list(replay_frames(episode))
    assert len(frames) == len(episode.actions) + 1
    env = SpiderEnv(suits=1, render_mode="ansi")
    env.reset(options={"deal": 2})
    assert frames[0] == env.render()
    for a in episode.actions:
        env.step(a)
    assert frames[-1] == env.render()
    assert "last action:" in frames[-1]


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_records_and_replays(name: str, tmp_path: Any) -> None:
    v = VARIANTS[name].with_options(undo=True)
    ep = record_episode(RandomAgent(), v, 1, max_steps=40)
    assert ep.options == "undo=true" or VARIANTS[name].undo
    ep.save(str(tmp_path / "e.jsonl"))
    back = Episode.load(str(tmp_path / "e.jsonl"))
    assert len(list(replay_frames(back, ascii=True))) == len(ep.actions) + 1


def test_play_frames_modes(episode: Episode) -> None:
    import io

    out = io.StringIO()
    n = play_frames(replay_frames(episode), delay=None, out=out, final_only=True)
    assert n == 1 and out.getvalue() == list(replay_frames(episode))[-1]
    out = io.StringIO()
    answers = iter([True, True, False])
    n = play_frames(replay_frames(episode), delay=None, out=out, wait=lambda: next(answers))
    assert n == 3  # the start, two Enters, then "q"
    out = io.StringIO()
    assert play_frames(replay_frames(episode), delay=0.0, out=out) == len(episode.actions) + 1


def _corrupt(episode: Episode, tmp_path: Any, edit: Any) -> str:
    lines = episode.to_lines()
    lines = edit(lines)
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda ls: [], "empty file"),
        (lambda ls: ["{not json", *ls[1:]], "line 1: not valid JSON"),
        (lambda ls: ['{"hello": 1}', *ls[1:]], "not a spider-env episode"),
        (lambda ls: [ls[0].replace('"version": 1', '"version": 9'), *ls[1:]], "version"),
        (lambda ls: [ls[0].replace("spider-1suit", "spider-7suit"), *ls[1:]], "unknown variant"),
        (lambda ls: [ls[0].replace('"deal": 2', '"deal": -4'), *ls[1:]], "'deal'"),
        (lambda ls: ls[:-1], "no outcome line"),
        (lambda ls: [ls[0], ls[2], *ls[3:]], "line 2: expected step 0"),
        (lambda ls: [ls[0], ls[1].replace('"action": ', '"action": 99999 + '), *ls[2:]], "JSON"),
        (lambda ls: [ls[0], '{"step": 0, "action": 99999, "reward": 0}', *ls[2:]], "out of range"),
        (lambda ls: [ls[0], '{"step": 0, "action": "x", "reward": 0}', *ls[2:]], "must be an int"),
        (lambda ls: [*ls, '{"step": 999}'], "after the outcome"),
        (lambda ls: [ls[0], '{"step": 0, "action": 1, "reward": "a"}', *ls[2:]], "number"),
        (lambda ls: ["[1, 2]", *ls[1:]], "expected a JSON object"),
    ],
)
def test_corrupt_files_are_refused_with_the_line(
    episode: Episode, tmp_path: Any, edit: Any, match: str
) -> None:
    with pytest.raises(EpisodeError, match=match):
        Episode.load(_corrupt(episode, tmp_path, edit))


def test_inconsistent_files_fail_at_replay(episode: Episode) -> None:
    illegal = Episode(**{**episode.__dict__, "actions": [0, *episode.actions[1:]]})
    with pytest.raises(EpisodeError, match="step 0: action 0 is not legal"):
        list(replay_frames(illegal))
    rewards = Episode(**{**episode.__dict__, "rewards": [5.0, *episode.rewards[1:]]})
    with pytest.raises(EpisodeError, match="reward"):
        list(replay_frames(rewards))
    outcome = Episode(**{**episode.__dict__, "outcome": {**episode.outcome, "won": True}})
    if not episode.outcome["won"]:
        with pytest.raises(EpisodeError, match="outcome"):
            list(replay_frames(outcome))


def test_binary_and_directory_paths(tmp_path: Any) -> None:
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(EpisodeError, match="not a text file"):
        Episode.load(str(tmp_path / "bin.jsonl"))
    with pytest.raises(EpisodeError, match="directory"):
        Episode.load(str(tmp_path))
    with pytest.raises(FileNotFoundError):
        Episode.load(str(tmp_path / "missing.jsonl"))


# --- agents given as the CLI and evaluate take them -------------------------------------------
@pytest.mark.parametrize("spec", ["greedy", "random", "lookahead"])
def test_record_episode_takes_agent_names(spec: str) -> None:
    ep = record_episode(spec, "spider-1suit", 3, max_steps=15)
    assert ep.agent == spec and ep.deal == 3 and len(ep.actions) == 15
    assert len(list(replay_frames(ep))) == 16


def test_record_episode_by_name_plays_like_the_object() -> None:
    by_name = record_episode("greedy", "spider-1suit", 4, max_steps=80)
    by_object = record_episode(GreedyAgent(), "spider-1suit", 4, max_steps=80)
    assert by_name.actions == by_object.actions


def test_record_episode_refuses_what_is_not_an_agent() -> None:
    with pytest.raises(ValueError, match="unknown agent 'clever'"):
        record_episode("clever", "spider-1suit", 0)
    with pytest.raises(TypeError, match="an agent must be"):
        record_episode(42, "spider-1suit", 0)
    with pytest.raises(ValueError, match="trained models"):
        record_episode("greedy", "spider-1suit", 0, deterministic=True)
    with pytest.raises(ValueError, match="2\\*\\*64"):
        record_episode("greedy", "spider-1suit", 2**64)


@pytest.mark.parametrize(("deterministic", "label"), [(True, "most likely"), (False, "sampled")])
def test_record_episode_plays_a_model_path_in_the_chosen_mode(
    deterministic: bool, label: str
) -> None:
    import os

    model = os.path.join(
        os.path.dirname(__file__), "..", "docs", "models", "maskable_ppo_1suit.safetensors"
    )
    ep = record_episode(model, "spider-1suit", 0, max_steps=10, deterministic=deterministic)
    assert ep.agent == f"{model} ({label})"
    assert len(list(replay_frames(ep))) == 11


def test_deterministic_is_refused_for_an_agent_object() -> None:
    with pytest.raises(ValueError, match="given as a path"):
        record_episode(RandomAgent(), "spider-1suit", 0, deterministic=False)


# --- the deal's identity comes from what the env was reset with --------------------------------
def test_episodes_record_the_deal_without_reading_info(monkeypatch: Any) -> None:
    from spider_env.apps.play import TerminalGame

    real_reset = SpiderEnv.reset

    def reset_without_deal(self: SpiderEnv, **kwargs: Any) -> Any:
        obs, info = real_reset(self, **kwargs)
        info.pop("deal", None)
        info.pop("deal_number", None)
        return obs, info

    monkeypatch.setattr(SpiderEnv, "reset", reset_without_deal)
    ep = record_episode(RandomAgent(), "spider-2suit", 11, max_steps=5)
    assert ep.deal == 11 and ep.reset_options() == {"deal": 11}
    game = TerminalGame(VARIANTS["spider-2suit"], deal=12)
    assert game.episode().deal == 12


# --- how the episode ended ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("won", "terminated", "truncated", "result"),
    [
        (True, True, False, "won"),
        (False, True, False, "lost"),
        (False, False, True, "step limit"),
        (False, False, False, "quit"),
    ],
)
def test_outcome_says_how_the_game_ended(
    won: bool, terminated: bool, truncated: bool, result: str
) -> None:
    from spider_env.apps.episodes import episode_outcome, outcome_result

    outcome = episode_outcome(
        won=won, completed_runs=0, score=0, moves=0, steps=0, reward=0.0,
        terminated=terminated, truncated=truncated,
    )  # fmt: skip
    assert outcome["result"] == result
    legacy = {k: v for k, v in outcome.items() if k != "result"}
    assert outcome_result(legacy) == result


def test_record_episode_outcome_of_a_truncated_game(episode: Episode) -> None:
    assert episode.outcome["truncated"] is True
    assert episode.outcome["result"] == "step limit"


def test_replay_refuses_an_outcome_the_game_does_not_reach(episode: Episode) -> None:
    for result in ("won", "lost"):
        wrong = Episode(**{**episode.__dict__, "outcome": {**episode.outcome, "result": result}})
        with pytest.raises(EpisodeError, match=f"outcome says '{result}'.*not over"):
            list(replay_frames(wrong))


# --- a file's move text must be its action's words --------------------------------------------
def test_a_move_text_that_disagrees_with_the_action_is_refused(
    episode: Episode, tmp_path: Any
) -> None:
    def edit(lines: list[str]) -> list[str]:
        step = json.loads(lines[2])
        step["move"] = "deal"
        return [*lines[:2], json.dumps(step), *lines[3:]]

    with pytest.raises(EpisodeError, match="line 3: step 1: the move text 'deal' does not match"):
        Episode.load(_corrupt(episode, tmp_path, edit))


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda ls: [ls[0].replace('"deal": 2', f'"deal": {2**64}'), *ls[1:]], "2\\*\\*64-1"),
        (lambda ls: [ls[0].replace('"options": ""', '"options": 7'), *ls[1:]], "'options'"),
        (lambda ls: [*ls[:-1], ls[-1].replace('"result": "step limit"', '"result": "lost?"')],
         "'result' must be one of"),
        (lambda ls: [*ls[:-1], ls[-1].replace('"won": false', '"won": "no"')],
         "'won' must be true or false"),
    ],
)  # fmt: skip
def test_malformed_header_and_outcome_fields_are_refused(
    episode: Episode, tmp_path: Any, edit: Any, match: str
) -> None:
    with pytest.raises(EpisodeError, match=match):
        Episode.load(_corrupt(episode, tmp_path, edit))


def test_a_file_saved_with_a_byte_order_mark_loads(episode: Episode, tmp_path: Any) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_text("\n".join(episode.to_lines()) + "\n", encoding="utf-8-sig")
    assert Episode.load(str(path)) == episode
