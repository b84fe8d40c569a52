"""The Gymnasium environment's contract (issue 3): spaces, masks, observations, rewards, episode
end, illegal and malformed actions, seeding and deals."""

from __future__ import annotations

import math
import random
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import position, run
from gymnasium.utils.env_checker import check_env

import spider_env as se
from spider_env.core.rules import IllegalMoveError, apply, legal_actions
from spider_env.core.state import State
from spider_env.env import SpiderEnv
from spider_env.observation import (
    FeatureEncoder,
    TableEncoder,
    feature_width,
    flat_width,
    globals_width,
    slots_for_feature_width,
    slots_for_flat_width,
)
from spider_env.registration import ENV_IDS
from spider_env.rewards import RunsReward, ShapedReward
from spider_env.wrappers import FeatureObservation, mask_fn

ALL_VARIANTS = sorted(se.VARIANTS)
INFO_KEYS = {
    "action_mask",
    "score",
    "moves",
    "completed_runs",
    "deals_left",
    "is_success",
    "legal_action_count",
    "illegal_action",
    "variant",
}


def masked_rollout(env: gym.Env, seed: int, steps: int, options: dict | None = None):
    """Play random legal actions; yield ``(obs, reward, terminated, truncated, info)``."""
    rng = np.random.default_rng(seed)
    out = env.reset(seed=seed, options=options)
    yield (out[0], 0.0, False, False, out[1])
    for _ in range(steps):
        legal = np.flatnonzero(out[-1]["action_mask"])
        out = env.step(int(legal[rng.integers(len(legal))]))
        yield out
        if out[2] or out[3]:
            return


def obs_equal(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(obs_equal(a[k], b[k]) for k in a)
    return (
        np.array_equal(np.asarray(a), np.asarray(b)) and np.asarray(a).dtype == np.asarray(b).dtype
    )


def info_equal(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(obs_equal(a[k], b[k]) for k in a)


# --- registration and spaces --------------------------------------------------------------
@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_registered_ids_pass_gymnasium_check_env(env_id):
    env = gym.make(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped)
    assert env.spec.max_episode_steps == 1000


@pytest.mark.parametrize("name", ALL_VARIANTS)
def test_every_variant_passes_both_checkers(name):
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(SpiderEnv(variant=name, mask_in_obs=True))
        sb3_check_env(SpiderEnv(variant=name), warn=False)
        sb3_check_env(SpiderEnv(variant=name, obs_mode="flat"), warn=False)


def sb3_check_warnings(env: SpiderEnv) -> list[str]:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sb3_check_env(env, warn=True)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("name", ["spider-4suit", "spider-1suit", "spider-culbertson", "scorpion"])
def test_flat_observation_passes_sb3_check_env_without_warnings(name):
    assert sb3_check_warnings(SpiderEnv(variant=name, obs_mode="flat")) == []


@pytest.mark.parametrize(("obs_mode", "key"), [("dict", "tableau"), ("features", "columns")])
def test_sb3_check_env_warns_only_about_the_2d_array(obs_mode, key):
    # docs/guide/env.md says why these warnings stay: the (C, L) / (C, F) layout is public API.
    messages = sb3_check_warnings(SpiderEnv(obs_mode=obs_mode))
    assert len(messages) == 1
    assert f"observation {key} has an unconventional shape" in messages[0]


@pytest.mark.parametrize("suits", [1, 2, 4])
def test_make_suits(suits):
    env = gym.make("Spider-v0", suits=suits)
    v = env.unwrapped.variant
    assert v.name == f"spider-{suits}suit"
    assert env.action_space == gym.spaces.Discrete(1301)
    obs, _info = env.reset(seed=0)
    assert obs["tableau"].shape == (10, 83) and obs["tableau"].dtype == np.int8
    assert obs["completed"].shape == (4,)
    assert int(obs["deals_left"]) == 5
    assert env.unwrapped.encode_action("deal") == 1300


def test_default_is_four_suits_and_variant_arguments():
    assert SpiderEnv().variant.name == "spider-4suit"
    assert SpiderEnv(variant="spider-1suit").variant.suits == 1
    assert SpiderEnv(variant=se.classic(2), suits=2).variant.name == "spider-2suit"
    env = SpiderEnv(suits=1, undo=True)
    assert env.variant.undo and env.action_space.n == 1302
    with pytest.raises(ValueError, match="contradicts"):
        SpiderEnv(variant="spider-1suit", suits=4)
    with pytest.raises(ValueError, match="suits must be 1, 2 or 4"):
        SpiderEnv(suits=3)
    with pytest.raises(ValueError, match="unknown variant"):
        SpiderEnv(variant="nope")


@pytest.mark.parametrize("suits", [1.0, True, "1", 3, 2.0, 0])
def test_make_refuses_suits_that_are_not_the_int_1_2_or_4(suits):
    with pytest.raises(ValueError, match=r"suits must be 1, 2 or 4"):
        gym.make("Spider-v0", suits=suits)


@pytest.mark.parametrize("name", ALL_VARIANTS)
def test_action_space_formula(name):
    env = SpiderEnv(variant=name)
    v = env.variant
    C, R, D = v.n_columns, v.max_run, v.n_deal_actions
    extra = (0 if v.auto_discard else C) + (1 if v.undo else 0)
    assert env.action_space.n == C * R * C + D + extra
    space = env.observation_space
    assert space["tableau"].shape == (C, v.max_column_length)
    assert ("pile_tops" in space.spaces) == v.pile_top_visible


def test_bad_constructor_arguments():
    from spider_env.env import UnsupportedRenderMode

    assert issubclass(UnsupportedRenderMode, ValueError)
    assert issubclass(UnsupportedRenderMode, TypeError)  # for SB3's make_vec_env fallback
    for kwargs, exc, text in [
        ({"illegal_action": "ignore"}, ValueError, "illegal_action"),
        ({"obs_mode": "pixels"}, ValueError, "obs_mode"),
        ({"reward_mode": "money"}, ValueError, "reward_mode"),
        ({"reward_mode": 3}, TypeError, "reward_mode"),
        ({"render_mode": "rgb_array_list"}, ValueError, "render_mode"),
        ({"obs_mode": "flat", "mask_in_obs": True}, ValueError, "mask_in_obs"),
        ({"obs_mode": "features", "feature_slots": -1}, ValueError, "feature_slots"),
        ({"undo": "yes"}, TypeError, "undo"),
        ({"mask_in_obs": "no"}, TypeError, "mask_in_obs"),
        ({"color": 1}, TypeError, "color"),
        ({"illegal_reward": "-1"}, TypeError, "illegal_reward"),
        ({"illegal_reward": None}, TypeError, "illegal_reward"),
        ({"illegal_reward": float("nan")}, ValueError, "illegal_reward must be a finite number"),
        ({"illegal_reward": -math.inf}, ValueError, "illegal_reward must be a finite number"),
        ({"illegal_reward": np.float32("inf")}, ValueError, "illegal_reward must be a finite"),
        ({"illegal_reward": -(10**400)}, ValueError, "illegal_reward must be a finite number"),
        ({"feature_slots": 2.5}, ValueError, "feature_slots"),
    ]:
        with pytest.raises(exc, match=text):
            SpiderEnv(**kwargs)


# --- actions --------------------------------------------------------------------------------
def test_encode_decode_bijection_on_legal_moves():
    for name in ("spider-4suit", "spider-culbertson", "scorpion", "spider-tournament-2suit"):
        env = SpiderEnv(variant=name, undo=True)
        for _obs, _r, _te, _tr, _info in masked_rollout(env, 3, 150):
            for a in env.legal_actions():
                m = env.decode_action(a)
                assert env.encode_action(m) == a
                if m.kind == "move":
                    assert env.encode_action(m.src, m.cards, m.dst) == a
                    C, R = env.variant.n_columns, env.variant.max_run
                    assert a == (m.src * R + m.cards - 1) * C + m.dst
        ids = list(range(env.action_space.n))
        assert [env.encode_action(env.decode_action(a)) for a in ids] == ids


def test_describe_and_encode_helpers():
    env = SpiderEnv()
    assert env.describe_action(env.encode_action(2, 3, 7)) == "move 3 cards 2 -> 7"
    assert env.describe_action(1300) == "deal"
    assert env.encode_action(0, 1, 1) == 1
    with pytest.raises(ValueError):
        env.encode_action("discard", column=0)  # classic Spider discards at once
    with pytest.raises(ValueError):
        env.encode_action(0, 14, 1)
    with pytest.raises(ValueError):
        env.encode_action("fly")
    tour = SpiderEnv(variant="spider-tournament-1suit")
    assert tour.describe_action(tour.encode_action("deal", pile=3)) == "deal pile 3"
    assert tour.describe_action(tour.encode_action("undo")) == "undo"


# --- masks, info, episode end -------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_VARIANTS)
def test_mask_is_exact_and_never_empty_before_the_end(name):
    env = gym.make("Spider-v0", variant=name, max_episode_steps=400)
    for seed in (0, 1):
        for obs, _r, terminated, _truncated, info in masked_rollout(env, seed, 400):
            state = env.unwrapped.state
            legal = legal_actions(state)
            mask = env.unwrapped.action_masks()
            assert mask.dtype == np.bool_ and mask.shape == (env.action_space.n,)
            assert np.flatnonzero(mask).tolist() == legal
            assert info["action_mask"] is mask or np.array_equal(info["action_mask"], mask)
            assert set(info) == INFO_KEYS
            assert info["legal_action_count"] == len(legal)
            assert terminated == (not legal)
            assert info["is_success"] == state.won
            if not terminated:
                assert mask.any()
            assert info["score"] == state.score and info["moves"] == state.moves
            assert info["completed_runs"] == sum(state.completed) == int(obs["completed"].sum())
            assert info["deals_left"] == state.deals_left == int(obs["deals_left"])
            assert env.observation_space.contains(obs)


def test_truncation_only_from_the_time_limit():
    env = gym.make("Spider-v0", suits=1, max_episode_steps=7)
    outs = list(masked_rollout(env, 0, 100))
    assert len(outs) == 8
    assert all(not o[3] for o in outs[:-1]) and outs[-1][3]
    with pytest.raises(RuntimeError, match="truncated"):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    env.reset(seed=1)
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # a reset starts a new episode
    base = SpiderEnv(suits=1)
    assert all(not o[3] for o in masked_rollout(base, 0, 300))


def near_win(**kw) -> State:
    """1 suit, seven runs done, K..2 of spades on column 0 and the Ace on column 1."""
    cols = [run("S", 13, 2), "AS"] + ["-"] * 8
    return position(cols, variant="spider-1suit", completed=(7, 0, 0, 0), deals=5, **kw)


def test_win_terminates_with_success():
    env = SpiderEnv(suits=1)
    env.reset(options={"state": near_win(moves=10)})
    a = env.encode_action(1, 1, 0)
    obs, _r, terminated, truncated, info = env.step(a)
    assert terminated and not truncated and info["is_success"]
    assert not info["action_mask"].any() and info["legal_action_count"] == 0
    assert obs["completed"].tolist() == [8, 0, 0, 0]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_no_legal_action_terminates_without_success():
    # Six runs done; tops K K J J 9 9 7 7 5 5 accept nothing movable, the stock is empty.
    cols = ["|AS |2S KS", "|AS |2S KS", "|3S |3S JS", "|4S |4S JS", "|6S |6S 9S"]
    cols += ["|8S |8S 9S", "|TS |TS 7S", "|QS |QS 7S", "5S", "5S"]
    st = position(cols, variant="spider-1suit", completed=(6, 0, 0, 0), deals=5)
    assert legal_actions(st) == []
    env = SpiderEnv(suits=1)
    _obs, info = env.reset(options={"state": st})
    assert not info["action_mask"].any() and not info["is_success"]
    with pytest.raises(RuntimeError, match="ended"):
        env.step(0)
    # The action that leads into such a dead end reports terminated=True.
    cols[0], cols[9] = "|AS |2S KS 5S", "-"
    before = position(cols, variant="spider-1suit", completed=(6, 0, 0, 0), deals=5)
    env.reset(options={"state": before})
    _obs, r, terminated, truncated, info = env.step(env.encode_action(0, 1, 9))
    assert terminated and not truncated and not info["is_success"] and r == -1.0
    assert info["legal_action_count"] == 0


def test_too_long_column_is_refused():
    st = position(["* AS"] + ["AS"] * 7 + ["-", "-"], variant="spider-1suit", deals=5)
    with pytest.raises(ValueError, match="longer than any reachable"):
        SpiderEnv(suits=1).reset(options={"state": st})


# --- observation ----------------------------------------------------------------------------
def decode_tableau(tab: np.ndarray) -> list[tuple[int, list[int]]]:
    out = []
    for row in tab.tolist():
        n = sum(1 for x in row if x)
        assert all(x == 0 for x in row[n:])
        down = sum(1 for x in row[:n] if x == 1)
        assert all(x == 1 for x in row[:down]) and all(x >= 2 for x in row[down:n])
        out.append((down, [x - 2 for x in row[down:n]]))
    return out


@pytest.mark.parametrize("name", ["spider-4suit", "spider-tournament-2suit", "scorpion"])
def test_tableau_matches_the_state_and_a_fresh_encoding(name):
    env = SpiderEnv(variant=name, undo=True, mask_in_obs=True)
    fresh = TableEncoder(env.variant)
    prev = None
    for obs, *_rest in masked_rollout(env, 7, 300):
        st = env.state
        assert decode_tableau(obs["tableau"]) == [
            (d, list(col[d:])) for col, d in zip(st.cols, st.down)
        ]
        ref = fresh.reset(st)
        for k in ref:
            assert obs_equal(obs[k], ref[k])
        assert obs["action_mask"].tolist() == env.action_masks().astype(np.int8).tolist()
        if env.variant.pile_top_visible:
            assert obs["pile_tops"].tolist() == [2 + p[0] if p else 0 for p in st.stock]
        if prev is not None:  # arrays handed out are never reused
            assert not np.shares_memory(prev["tableau"], obs["tableau"])
            assert not np.shares_memory(prev["completed"], obs["completed"])
        prev = obs


@pytest.mark.parametrize("mode", ["features", "flat"])
def test_feature_encoding_is_bounded_and_incremental(mode):
    for name in ("spider-2suit", "spider-tournament-1suit", "simple-simon"):
        env = SpiderEnv(variant=name, obs_mode=mode)
        ref = FeatureEncoder(env.variant)
        for obs, *_rest in masked_rollout(env, 2, 200):
            assert env.observation_space.contains(obs)
            ref.reset(env.state)
            cols, glob = ref.encode(env.state)
            if mode == "flat":
                assert np.array_equal(obs, np.concatenate((cols.ravel(), glob)))
            else:
                assert np.array_equal(obs["columns"], cols)
                assert np.array_equal(obs["globals"], glob)


def test_feature_layout_of_a_known_column():
    st = position(["* |5H 9S 8S 7S", "KH"] + ["-"] * 8, variant="spider-2suit", piles=0, deals=5)
    enc = FeatureEncoder(st.variant, slots=2)
    cols, glob = enc.encode(st)
    w = 13 + 2
    row = cols[0]
    down = st.down[0]
    assert row[0] == pytest.approx(down / 5) and row[1] == pytest.approx(3 / 13)
    assert row[2] == 0 and row[3] == pytest.approx(3 / 13)
    assert row[4 + 8] == 1 and row[4 + 13 + 0] == 1  # run base: 9 of spades
    assert row[4 + w + 6] == 1 and row[4 + w + 13] == 1  # exposed card: 7 of spades
    assert row[4 + 2 * w + 7] == 1  # next face-up card: 8 of spades
    assert cols[2][2] == 1 and not cols[2][[0, 1, 3]].any()  # an empty column
    assert glob[0] == 0 and glob[1] == 0
    assert enc.n_features == 4 + 3 * w == cols.shape[1]


@pytest.mark.parametrize("name", sorted(se.VARIANTS))
def test_feature_sizes_match_the_arrays_and_invert(name: str) -> None:
    v = se.get_variant(name)
    st = se.new_game(v, 3)
    for slots in (0, 1, 6, 9):
        cols, glob = FeatureEncoder(v, slots).encode(st)
        assert cols.shape == (v.n_columns, feature_width(v, slots))
        assert glob.shape == (globals_width(v),)
        assert cols.size + glob.size == flat_width(v, slots)
        assert slots_for_feature_width(v, cols.shape[1]) == slots
        assert slots_for_flat_width(v, cols.size + glob.size) == slots
    for bad in (0, 3, feature_width(v, 2) + 1):
        with pytest.raises(ValueError, match="no feature layout"):
            slots_for_feature_width(v, bad)
    with pytest.raises(ValueError, match="no feature layout"):
        slots_for_flat_width(v, flat_width(v, 2) + 1)


def test_feature_wrapper_matches_obs_mode():
    a = FeatureObservation(gym.make("Spider-v0", suits=2, mask_in_obs=True))
    b = gym.make("Spider-v0", suits=2, obs_mode="features", mask_in_obs=True)
    flat = FeatureObservation(gym.make("Spider-v0", suits=2), flat=True)
    c = gym.make("Spider-v0", suits=2, obs_mode="flat")
    assert a.observation_space == b.observation_space
    assert flat.observation_space == c.observation_space
    for x, y in zip(masked_rollout(a, 4, 100), masked_rollout(b, 4, 100)):
        assert obs_equal(x[0], y[0]) and a.observation_space.contains(x[0])
    for x, y in zip(masked_rollout(flat, 4, 100), masked_rollout(c, 4, 100)):
        assert obs_equal(x[0], y[0])
    assert np.array_equal(mask_fn(a), a.unwrapped.action_masks())
    with pytest.raises(TypeError, match="SpiderEnv"):
        FeatureObservation(gym.make("CartPole-v1"))


NO_LEAK_CASES = [
    ("spider-4suit", {"mask_in_obs": True}),
    ("spider-1suit", {"obs_mode": "features"}),
    ("spider-2suit", {"obs_mode": "flat"}),
    ("spider-tournament-2suit", {"mask_in_obs": True}),
    ("spiderette-4suit", {}),
]


def hide_differently(st: State, seed: int) -> State:
    """The same player's view with the face-down cards and the stock order shuffled."""
    rng = random.Random(seed)
    hidden = [card for col, d in zip(st.cols, st.down) for card in col[:d]]
    piles = [p for p in st.stock if p]
    keep_top = st.variant.pile_top_visible
    stock_cards = [c for p in piles for c in (p[1:] if keep_top else p)]
    pool = hidden + stock_cards
    rng.shuffle(pool)
    it = iter(pool)
    cols = tuple(tuple(next(it) for _ in range(d)) + col[d:] for col, d in zip(st.cols, st.down))
    stock = tuple(
        ((p[0],) if keep_top else ()) + tuple(next(it) for _ in range(len(p) - keep_top))
        if p
        else ()
        for p in st.stock
    )
    return st.replace(cols=cols, stock=stock)


@pytest.mark.parametrize("name, kwargs", NO_LEAK_CASES)
def test_no_leak_of_the_deal_identity(name, kwargs):
    # A generated deal (its number determines every hidden card) and the same player's view
    # with other hidden cards, started from a State: observations, masks and infos must not
    # tell them apart, at the start and later in the game.
    env_a, env_b = SpiderEnv(variant=name, **kwargs), SpiderEnv(variant=name, **kwargs)
    oa, ia = env_a.reset(seed=5)
    ob, ib = env_b.reset(options={"state": hide_differently(env_a.state, 0)})
    assert env_a.deal_number >= 0 and env_b.deal_number == -1
    assert env_a.state.key() != env_b.state.key()
    assert obs_equal(oa, ob) and info_equal(ia, ib)
    for out in masked_rollout(env_a, 5, 200):
        st = env_a.state
        quiet = [a for a in legal_actions(st) if not turns_something_up(st, a)]
        if st.moves and quiet:
            oa, ia = out[0], out[4]
            break
    else:
        pytest.fail("no position with an action that turns nothing up")
    ob, ib = env_b.reset(options={"state": hide_differently(st, 1)})
    assert obs_equal(oa, ob) and info_equal(ia, ib)
    sa, sb = env_a.step(quiet[0]), env_b.step(quiet[0])
    assert obs_equal(sa[0], sb[0]) and sa[1:4] == sb[1:4] and info_equal(sa[4], sb[4])


def turns_something_up(st: State, a: int) -> bool:
    nxt = apply(st, a)
    return nxt.reveals != st.reveals or nxt.deals != st.deals


# obs_mode="actions" on the compiled core and (undo: the pure engine) on the pure one; not in the
# deal-identity test above, whose two envs have different histories (the mode's episode memory
# shows those, by design)
ACTIONS_LEAK_CASES = [
    ("spider-2suit", {"obs_mode": "actions"}),
    ("spider-tournament-2suit", {"obs_mode": "actions", "action_rows": 9, "mask_in_obs": True}),
]


@pytest.mark.parametrize("name, kwargs", NO_LEAK_CASES + ACTIONS_LEAK_CASES)
def test_no_leak_of_hidden_cards(name, kwargs):
    env_a, env_b = SpiderEnv(variant=name, **kwargs), SpiderEnv(variant=name, **kwargs)
    for _obs, *_ in masked_rollout(env_a, 11, 40):
        pass
    base = env_a.state.replace(prev=None)
    for seed in range(3):
        other = hide_differently(base, seed)
        assert other.key() != base.key()  # really different hidden cards
        oa, ia = env_a.reset(options={"state": base})
        ob, ib = env_b.reset(options={"state": other})
        assert obs_equal(oa, ob) and info_equal(ia, ib)
        assert np.array_equal(env_a.action_masks(), env_b.action_masks())
        # ... and after each action that turns nothing up
        for a in legal_actions(base):
            nxt = apply(base, a)
            if nxt.reveals != base.reveals or nxt.deals != base.deals:
                continue
            env_a.reset(options={"state": base})
            env_b.reset(options={"state": other})
            sa, sb = env_a.step(a), env_b.step(a)
            assert obs_equal(sa[0], sb[0]) and sa[1:4] == sb[1:4] and info_equal(sa[4], sb[4])


# --- rewards --------------------------------------------------------------------------------
def test_single_win_rewards_per_mode():
    expect = {"score": 99.0, "runs": 11.0, "shaped": 1.0 + 10.0 - 0.01, "win": 1.0}
    for mode, value in expect.items():
        env = SpiderEnv(suits=1, reward_mode=mode)
        env.reset(options={"state": near_win()})
        _o, r, term, _t, _i = env.step(env.encode_action(1, 1, 0))
        assert term and r == pytest.approx(value), mode


def episode_sum_expected(mode: str, st: State, illegal: int, penalty: float) -> float:
    runs, won = sum(st.completed), float(st.won)
    base = {
        "score": st.score - 500,
        "runs": runs + 10 * won,
        "shaped": runs + 0.1 * st.reveals + 10 * won - 0.01 * (st.moves + st.deals),
        "win": won,
    }[mode]
    return base + penalty * illegal


@pytest.mark.parametrize("mode", ["score", "runs", "shaped", "win"])
def test_episode_reward_sums(mode):
    # 1 suit gives runs; unmasked random actions with the default policy add penalties.
    env = gym.make("Spider-v0", suits=1, reward_mode=mode, max_episode_steps=3000)
    rng = np.random.default_rng(5)
    for ep in range(3):
        _obs, info = env.reset(seed=ep)
        total, illegal = 0.0, 0
        while True:
            if rng.random() < 0.1:
                a = int(rng.integers(env.action_space.n))
            else:
                legal = np.flatnonzero(info["action_mask"])
                a = int(legal[rng.integers(len(legal))])
            _obs, r, term, trunc, info = env.step(a)
            total += r
            illegal += info["illegal_action"]
            if term or trunc:
                break
        expected = episode_sum_expected(mode, env.unwrapped.state, illegal, -1.0)
        assert total == pytest.approx(expected, abs=1e-6)


def test_win_episode_reward_sums():
    st = near_win(moves=40)  # 40 moves and 5 deals already made: score 500 - 45 + 700
    for mode in ("score", "runs", "shaped", "win"):
        env = SpiderEnv(suits=1, reward_mode=mode)
        env.reset(options={"state": st})
        _o, r, *_ = env.step(env.encode_action(1, 1, 0))
        end = env.state
        start = episode_sum_expected(mode, st, 0, 0.0)
        assert r == pytest.approx(episode_sum_expected(mode, end, 0, 0.0) - start)


def test_custom_reward_callable_and_instances():
    from spider_env.rewards import ShapedReward

    calls = []

    def reward(prev, action, state):
        calls.append(action)
        return 0.5

    env = SpiderEnv(reward_mode=reward)
    for _ in masked_rollout(env, 0, 5):
        pass
    assert len(calls) == 5
    env = SpiderEnv(reward_mode=ShapedReward(reveal=1.0, step_cost=0.0))
    env.reset(seed=0)
    assert repr(env.reward_fn).startswith("ShapedReward(")


# --- illegal and malformed actions -----------------------------------------------------------
def first_illegal(env: SpiderEnv) -> int:
    return int(np.flatnonzero(~env.action_masks())[0])


def test_illegal_penalize_keeps_state():
    env = SpiderEnv(illegal_reward=-2.5, render_mode="ansi")
    obs, info = env.reset(seed=0)
    before = env.state
    a = first_illegal(env)
    obs2, r, term, trunc, info2 = env.step(a)
    assert r == -2.5 and not term and not trunc and info2["illegal_action"]
    assert env.state is before and obs_equal(obs, obs2)
    assert np.array_equal(info["action_mask"], info2["action_mask"])
    assert info2["action_mask"] is not info["action_mask"]
    assert "illegal" in env.render()
    legal = int(np.flatnonzero(info2["action_mask"])[0])
    assert env.step(legal)[4]["illegal_action"] is False


def test_illegal_terminate():
    env = SpiderEnv(illegal_action="terminate")
    env.reset(seed=0)
    _o, r, term, trunc, info = env.step(first_illegal(env))
    assert term and not trunc and r == -1.0 and info["illegal_action"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    env.reset(seed=0)  # a reset starts over


def test_illegal_raise_names_action_and_reason():
    env = SpiderEnv(illegal_action="raise")
    env.reset(seed=0)
    before = env.state
    a = env.encode_action(0, 1, 0)
    with pytest.raises(IllegalMoveError, match=r"illegal action 0 \(move 1 card 0 -> 0\): source"):
        env.step(a)
    assert issubclass(IllegalMoveError, ValueError) and env.state is before
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # the episode goes on


@pytest.mark.parametrize("policy", ["penalize", "terminate", "raise"])
def test_malformed_actions_always_raise(policy):
    env = SpiderEnv(illegal_action=policy)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    for bad, exc in [
        (1.0, TypeError),
        ("3", TypeError),
        (None, TypeError),
        (True, TypeError),
        (np.array([3]), TypeError),
        (-1, ValueError),
        (1301, ValueError),
        (np.int64(5000), ValueError),
    ]:
        with pytest.raises(exc, match="action"):
            env.step(bad)
    legal = int(np.flatnonzero(env.action_masks())[0])
    assert env.step(np.int32(legal))[4]["illegal_action"] is False
    env.reset(seed=0)
    assert env.step(np.array(legal))[4]["illegal_action"] is False


# --- seeding and deals ----------------------------------------------------------------------
def test_same_seed_same_deal_and_rollout():
    a, b = gym.make("Spider-v0"), gym.make("Spider-v0")
    ra, rb = list(masked_rollout(a, 123, 200)), list(masked_rollout(b, 123, 200))
    assert len(ra) == len(rb)
    for x, y in zip(ra, rb):
        assert obs_equal(x[0], y[0]) and x[1:4] == y[1:4] and info_equal(x[4], y[4])
    assert a.unwrapped.state == b.unwrapped.state


def deal_names(env: SpiderEnv, seed: int, n: int) -> list[str]:
    """The deals of ``reset(seed=seed)`` and ``n - 1`` unseeded resets after it."""
    names = []
    for i in range(n):
        env.reset(seed=seed if i == 0 else None)
        names.append(env.deal_name)
    return names


def test_reset_without_seed_continues_the_rng():
    env = SpiderEnv()
    names = deal_names(env, 9, 4)
    assert len(set(names)) == 4
    assert deal_names(env, 9, 4) == names
    assert deal_names(env, 10, 1) != names[:1]


def test_deal_options():
    env = SpiderEnv(suits=2)
    assert (env.deal_name, env.deal_number) == ("", -1)
    env.reset(options={"deal": 42})
    assert (env.deal_name, env.deal_number) == ("spider-2suit#42", 42)
    assert env.state == se.new_game("spider-2suit", 42)
    text = se.deal_to_text(se.generate_deal("spider-2suit", 7))
    env.reset(options={"deal_text": text})
    assert (env.deal_name, env.deal_number) == ("custom", -1)
    assert env.state == se.new_game("spider-2suit", 7)
    st = env.state
    for _ in range(3):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    saved = env.state
    _o, info3 = env.reset(options={"state_text": saved.to_text()})
    assert env.state == saved and env.deal_name == "state" and info3["moves"] == saved.moves
    env.reset(options={"state": st})
    assert env.state is st


def test_bad_reset_options():
    env = SpiderEnv(suits=2)
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"deel": 3})
    with pytest.raises(ValueError, match="at most one"):
        env.reset(options={"deal": 3, "deal_text": "x"})
    with pytest.raises(TypeError, match="deal"):
        env.reset(options={"deal": "3"})
    with pytest.raises(ValueError, match="deal number"):
        env.reset(options={"deal": -1})
    with pytest.raises(ValueError, match="Play"):
        env.reset(options={"deal_text": "Play0: AS"})
    with pytest.raises(ValueError, match="spider-4suit"):
        env.reset(options={"deal_text": se.deal_to_text(se.generate_deal("spider-4suit", 1))})
    with pytest.raises(ValueError, match="this env plays"):
        env.reset(options={"state": se.new_game("spider-1suit", 0)})
    with pytest.raises(TypeError, match="State"):
        env.reset(options={"state": "x"})
    with pytest.raises(ValueError, match="line"):
        env.reset(options={"state_text": "garbage"})
    env.reset(options={})  # empty options: a random deal


@pytest.mark.parametrize(
    ("seed", "error", "message"),
    [
        (1.5, TypeError, "seed must be an int or None, got float 1.5"),
        ("7", TypeError, "seed must be an int or None, got str '7'"),
        (True, TypeError, "seed must be an int or None, got bool True"),
        (-1, ValueError, "seed must be >= 0, got -1"),
    ],
)
def test_reset_refuses_a_bad_seed_naming_it_and_keeps_the_rng(seed, error, message):
    env, twin = SpiderEnv(suits=2), SpiderEnv(suits=2)
    env.reset(seed=3)
    twin.reset(seed=3)
    with pytest.raises(error, match=message):
        env.reset(seed=seed)
    assert deal_names(env, None, 2) == deal_names(twin, None, 2)


def test_reset_takes_a_numpy_int_seed_as_that_int():
    assert deal_names(SpiderEnv(), np.int64(9), 3) == deal_names(SpiderEnv(), 9, 3)


@pytest.mark.parametrize("options", [[1, 2], [], "deal", 3])
def test_reset_refuses_options_that_are_not_a_dict(options):
    with pytest.raises(
        TypeError, match=f"options must be a dict or None, got {type(options).__name__}"
    ):
        SpiderEnv().reset(options=options)


def test_state_is_read_only_and_needs_reset():
    env = SpiderEnv()
    with pytest.raises(RuntimeError, match="reset"):
        _ = env.state
    with pytest.raises(RuntimeError, match="reset"):
        env.action_masks()
    env.reset(seed=0)
    with pytest.raises(AttributeError):
        env.state = se.new_game()  # type: ignore[misc]


# --- rendering through the env ----------------------------------------------------------------
def test_render_modes(capsys):
    env = gym.make("Spider-v0", render_mode="ansi", ascii=True)
    env.reset(options={"deal": 0})
    text = env.render()
    assert isinstance(text, str) and text.startswith("spider-4suit") and "##" in text
    human = gym.make("Spider-v0", render_mode="human")
    human.reset(options={"deal": 0})
    assert human.render() is None
    out = capsys.readouterr().out
    assert "spider-4suit" in out and "▒▒" in out
    quiet = SpiderEnv()
    quiet.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert quiet.render() is None


# --- registration helpers and the made env's methods -------------------------------------------
def test_made_env_exposes_spider_methods():
    env = gym.make("Spider-v0", suits=2)
    env.reset(seed=4)
    assert np.flatnonzero(env.action_masks()).tolist() == env.legal_actions()
    assert env.state is env.unwrapped.state and env.variant.suits == 2
    assert env.describe_action(1300) == "deal" and env.encode_action("deal") == 1300
    assert env.decode_action(1300).kind == "deal" and env.n_actions == 1301
    assert env.last_action_text() is None
    with pytest.raises(AttributeError, match="no attribute"):
        _ = env.not_a_spider_method


@pytest.fixture
def forget_test_ids():
    """Unregister the ids a test registers, so other tests see only the package's ids."""
    yield
    for env_id in ("SpiderTestRelaxed-v0", "SpiderTestNope-v0"):
        ENV_IDS.pop(env_id, None)
        gym.registry.pop(env_id, None)


def test_register_variant_env(forget_test_ids):
    from spider_env.registration import register_variant_env

    register_variant_env("SpiderTestRelaxed-v0", "spider-relaxed-2suit", max_episode_steps=50)
    register_variant_env("SpiderTestRelaxed-v0", "spider-relaxed-2suit")  # idempotent
    env = gym.make("SpiderTestRelaxed-v0")
    assert env.unwrapped.variant.name == "spider-relaxed-2suit"
    assert env.spec.max_episode_steps == 50
    with pytest.raises(RuntimeError, match="reset"):
        env.action_masks()
    with pytest.raises(ValueError, match="already registered"):
        register_variant_env("SpiderTestRelaxed-v0", "spider-4suit")
    with pytest.raises(ValueError, match="unknown variant"):
        register_variant_env("SpiderTestNope-v0", "no-such-variant")
    assert "SpiderTestNope-v0" not in gym.registry and "SpiderTestNope-v0" not in ENV_IDS


def test_register_reset_option():
    from spider_env.env import RESET_OPTIONS, register_reset_option

    def start_at(variant, number):
        d = se.generate_deal(variant, number + 1000)
        return State.from_deal(d), f"offset#{number}", number + 1000

    register_reset_option("test_offset", start_at)
    try:
        register_reset_option("test_offset", start_at)  # the same function again: fine
        env = SpiderEnv(suits=1)
        env.reset(options={"test_offset": 5})
        assert (env.deal_name, env.deal_number) == ("offset#5", 1005)
        assert env.state == se.new_game("spider-1suit", 1005)
        with pytest.raises(ValueError, match="already registered"):
            register_reset_option("deal", start_at)
    finally:
        del RESET_OPTIONS["test_offset"]


def test_pysol_game_option():
    env = SpiderEnv(variant="pysol-spider-4suit")
    env.reset(options={"pysol_game": 5})
    assert (env.deal_name, env.deal_number) == ("pysolfc-11#5", -1)
    assert env.action_masks().any()


def test_info_variant_is_a_string_that_gives_the_variant_back():
    assert SpiderEnv(suits=2).reset(seed=0)[1]["variant"] == "spider-2suit"
    for env in (
        SpiderEnv(suits=2, undo=True),
        SpiderEnv(variant=se.get_variant("spider-relaxed-1suit").with_options(runs_to_win=3)),
    ):
        text = env.reset(seed=0)[1]["variant"]
        assert isinstance(text, str)
        assert se.get_variant(text) == env.variant
    assert SpiderEnv(suits=2, undo=True).reset(seed=0)[1]["variant"] == "spider-2suit undo=true"


def test_unregistered_variant_is_refused_by_the_env():
    v = se.Variant(name="test-unregistered", suits=1)
    with pytest.raises(ValueError, match="not registered"):
        SpiderEnv(variant=v)


@pytest.mark.parametrize("slots", [-1, 105, 10**9, 2.0, True, "6"])
def test_feature_slots_out_of_range_is_refused_before_allocating(slots: object) -> None:
    with pytest.raises(ValueError, match=r"feature_slots must be an int in 0\.\.104"):
        SpiderEnv(obs_mode="flat", feature_slots=slots)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: RunsReward(win_bonus=float("nan")), "win_bonus must be a finite number"),
        (lambda: ShapedReward(step_cost=float("inf")), "step_cost must be a finite number"),
        (lambda: ShapedReward(reveal=10**400), "reveal must be a finite number"),
        (lambda: ShapedReward(run="1"), "run must be a number"),  # type: ignore[arg-type]
        (lambda: RunsReward(win_bonus=True), "win_bonus must be a number"),
    ],
)
def test_reward_parameters_must_be_finite_numbers(make: Any, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        make()
