"""The per-action features of the RL recipe (``spider_env.observation.actions``): they show
nothing hidden, describe each legal action as the rules engine plays it, and plug into
Gymnasium's and SB3's checks."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest
from conftest import permute_hidden
from spider_env.agents import GreedyAgent

import spider_env  # noqa: F401
from spider_env.core.actions import move_parts
from spider_env.core.rules import apply_legal
from spider_env.env import SpiderEnv
from spider_env.observation.actions import (
    ACTION_FEATURES,
    DEFAULT_ACTION_ROWS,
    GLOBAL_FEATURES,
    ActionFeatureEncoder,
)
from spider_env.wrappers import ActionFeatures

F = {name: i for i, name in enumerate(ACTION_FEATURES)}
VARIANTS = ("spider-1suit", "spider-2suit", "spider-4suit", "spiderette-4suit", "scorpion")


def _game(variant: str, deal: int, steps: int):  # type: ignore[no-untyped-def]
    """``(env, obs, info)`` along a greedy game (the env's state is read by the test only)."""
    env = SpiderEnv(variant=variant)
    obs, info = env.reset(options={"deal": deal})
    agent = GreedyAgent(env.variant, seed=deal)
    for _ in range(steps):
        if not info["action_mask"].any():
            return
        yield env, obs, info
        obs, _, term, trunc, info = env.step(agent.act(obs, info["action_mask"], info))
        if term or trunc:
            return


@pytest.mark.parametrize("variant", VARIANTS)
def test_features_are_the_same_whatever_the_hidden_cards(variant: str) -> None:
    """The permutation test: at every position of a game, an encoder with the same memory
    gives identical arrays when the face-down cards and the stock are shuffled."""
    rng = np.random.default_rng(1)
    enc = ActionFeatureEncoder(variant)
    twin = SpiderEnv(variant=variant)
    checked = 0
    for env, obs, info in _game(variant, 3, 120):
        other = permute_hidden(env.state, rng)
        obs2, info2 = twin.reset(options={"state": other})
        clone = copy.deepcopy(enc)
        a = enc.encode(obs, info["action_mask"])
        b = clone.encode(obs2, info2["action_mask"])
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
        checked += 1
    assert checked >= 20


@pytest.mark.parametrize("variant", ("spider-1suit", "spider-2suit", "scorpion"))
def test_each_row_describes_its_action_as_the_rules_play_it(variant: str) -> None:
    enc = ActionFeatureEncoder(variant)
    v = enc.variant
    for env, obs, info in _game(variant, 11, 150):
        out = enc.encode(obs, info["action_mask"])
        state = env.state
        ids = out["action_ids"]
        legal = set(np.flatnonzero(info["action_mask"]).tolist())
        rows = [int(a) for a in ids if a >= 0]
        assert set(rows) <= legal and len(rows) == len(set(rows))
        assert all(a == -1 for a in ids[len(rows) :])  # rows first, then padding
        assert not out["actions"][len(rows) :].any()
        assert set(enc.row_of) == legal  # every legal action has a row standing for it
        for a, row in enc.row_of.items():
            rep = rows[row]
            if rep != a:  # only a move into another empty column shares a row
                s1, k1, d1 = move_parts(v, a)
                s2, k2, d2 = move_parts(v, rep)
                assert (s1, k1) == (s2, k2) and not state.cols[d1] and not state.cols[d2]
        for row, a in enumerate(rows):
            f = out["actions"][row]
            assert f[F["is_move"]] + f[F["is_deal"]] + f[F["is_discard"]] + f[F["is_undo"]] == 1
            if a >= v.n_move_actions:
                continue
            src, k, dst = move_parts(v, a)
            nxt = apply_legal(state, a)
            assert f[F["turns_up_card"]] == (nxt.down[src] < state.down[src])
            assert f[F["completes_run"]] == (sum(nxt.completed) > sum(state.completed))
            assert f[F["into_empty"]] == (not state.cols[dst])
            assert f[F["empties_column"]] == (len(state.cols[src]) == k)
            assert f[F["cards_moved"]] == np.float32(k / 13.0)
            head, tgt = state.cols[src][-k], state.cols[dst]
            joins = bool(tgt) and tgt[-1] == head + 1 and head % 13 != 12
            assert f[F["joins_suit"]] == joins


def test_glob_counts_and_memory_of_positions() -> None:
    enc = ActionFeatureEncoder("spider-1suit")
    env = SpiderEnv(suits=1)
    obs, info = env.reset(options={"deal": 0})
    g = enc.encode(obs, info["action_mask"])["globals"]
    gi = {name: i for i, name in enumerate(GLOBAL_FEATURES)}
    assert g[gi["deals_left"]] == 1.0 and g[gi["face_down"]] == 1.0
    assert g[gi["decisions"]] == 0.0 and g[gi["visits_here"]] == pytest.approx(0.2)
    again = enc.encode(obs, info["action_mask"])["globals"]
    assert again[gi["visits_here"]] == pytest.approx(0.4)
    assert again[gi["since_progress"]] == pytest.approx(1 / 50)
    enc.reset()
    assert enc.encode(obs, info["action_mask"])["globals"][gi["visits_here"]] == pytest.approx(0.2)


def test_a_move_back_is_marked_as_seen_before() -> None:
    """After a move that turns up nothing, the move that undoes it leads to a seen position."""
    from spider_env.core.actions import move_id

    enc = ActionFeatureEncoder("spider-1suit")
    v = enc.variant
    for env, obs, info in _game("spider-1suit", 4, 300):
        enc.encode(obs, info["action_mask"])
        state = env.state
        for a in np.flatnonzero(info["action_mask"]).tolist():
            if a >= v.n_move_actions:
                continue
            src, k, dst = move_parts(v, a)
            col = state.cols[src]
            if k >= len(col) - state.down[src] or col[-k - 1] != col[-k] + 1:
                continue  # it turns up or empties, or the card below does not take it back
            obs, _, _, _, info = env.step(a)
            out = enc.encode(obs, info["action_mask"])
            back = move_id(v, dst, k, src)
            assert info["action_mask"][back]
            assert out["actions"][enc.row_of[back]][F["seen_before"]] > 0
            return
    pytest.fail("no position with a move that can be moved back")


def test_wrapper_passes_the_gymnasium_and_sb3_checks() -> None:
    from gymnasium.utils.env_checker import check_env as gym_check

    env = ActionFeatures(gym.make("Spider-v0", suits=2, max_episode_steps=50))
    gym_check(env, skip_render_check=True)
    sb3 = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3.check_env(ActionFeatures(gym.make("Spider-v0", suits=1, max_episode_steps=50)))
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert obs["actions"].shape == (DEFAULT_ACTION_ROWS, len(ACTION_FEATURES))
    np.testing.assert_array_equal(env.action_masks(), info["action_mask"])


def test_wrapper_and_encoder_refuse_what_they_cannot_read() -> None:
    with pytest.raises(ValueError, match="dict observation"):
        ActionFeatures(SpiderEnv(suits=1, obs_mode="flat"))
    with pytest.raises(ValueError, match="Spider env"):
        ActionFeatures(gym.make("CartPole-v1"))
    with pytest.raises(ValueError, match="action_rows"):
        ActionFeatureEncoder("spider-1suit", action_rows=0)
    enc = ActionFeatureEncoder("spider-1suit")
    obs, info = SpiderEnv(suits=1).reset(options={"deal": 1})
    with pytest.raises(ValueError, match="mask"):
        enc.encode(obs, info["action_mask"][:-1])


def test_too_many_actions_keep_the_best_gains_and_are_counted() -> None:
    env = SpiderEnv(suits=1)
    obs, info = env.reset(options={"deal": 2})
    full = ActionFeatureEncoder(env.variant).encode(obs, info["action_mask"])
    n = int((full["action_ids"] >= 0).sum())
    small = ActionFeatureEncoder(env.variant, action_rows=3)
    out = small.encode(obs, info["action_mask"])
    assert small.overflows == (1 if n > 3 else 0)
    gains = sorted(full["actions"][:n, F["gain"]], reverse=True)[:3]
    np.testing.assert_allclose(sorted(out["actions"][:, F["gain"]], reverse=True), gains)


@pytest.mark.parametrize("variant", ("spider-1suit", "spider-2suit"))
def test_what_a_move_prepares_agrees_with_the_rules_in_classic_spider(variant: str) -> None:
    """The three "prepares" features say what the legal moves of the position after the move
    allow (checked here move by move in classic Spider)."""
    from spider_env.core.rules import legal_actions

    enc = ActionFeatureEncoder(variant)
    v = enc.variant
    seen = {"prepares_turn_up": 0, "makes_suited_target": 0, "target_takes_more": 0}
    for env, obs, info in _game(variant, 21, 200):
        out = enc.encode(obs, info["action_mask"])
        state = env.state
        for row, a in enumerate(int(x) for x in out["action_ids"] if x >= 0):
            if a >= v.n_move_actions:
                continue
            src, k, dst = move_parts(v, a)
            nxt = apply_legal(state, a)
            f = out["actions"][row]
            up = len(state.cols[src]) - state.down[src]
            later = [move_parts(v, b) for b in legal_actions(nxt) if b < v.n_move_actions]
            if k < up:
                rest = len(nxt.cols[src]) - nxt.down[src]
                turn_up = nxt.down[src] > 0 and any(s == src and n == rest for s, n, _ in later)
                assert f[F["prepares_turn_up"]] == turn_up

                top = nxt.cols[src][-1]
                takes = any(
                    d == src and s != src and nxt.cols[s][-n] == top - 1 for s, n, d in later
                )
                assert f[F["makes_suited_target"]] == takes
                seen["prepares_turn_up"] += turn_up
                seen["makes_suited_target"] += int(f[F["makes_suited_target"]])
            target_more = bool(nxt.cols[dst]) and any(
                d == dst and s not in (dst, src) and nxt.cols[s][-n] == nxt.cols[dst][-1] - 1
                for s, n, d in later
            )
            assert f[F["target_takes_more"]] == target_more
            seen["target_takes_more"] += target_more
    assert all(seen.values()), seen  # each feature was seen set at least once
