"""The variants of issue 6 through the Gymnasium environment: ids, masks of their special
actions, visible pile tops, scoring in ``info`` and as reward, undo, PySolFC game numbers.

(Generic env checks, ``check_env`` on every registered id and variant, live in test_env.py.)
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from conftest import mv, position, run

import spider_env as se
from spider_env.core.interop import pysol_deal, pysol_state
from spider_env.core.rules import legal_actions
from spider_env.core.state import State
from spider_env.env import SpiderEnv
from spider_env.registration import ENV_IDS

VARIANT_IDS = {k: v for k, v in ENV_IDS.items() if v is not None}


def test_one_id_per_new_variant() -> None:
    names = set(VARIANT_IDS.values())
    assert len(names) == len(VARIANT_IDS)
    assert names == set(se.VARIANTS) - {"spider-1suit", "spider-2suit", "spider-4suit"}


@pytest.mark.parametrize("env_id", sorted(VARIANT_IDS))
def test_id_makes_its_variant_and_masks_are_exact(env_id: str) -> None:
    env = gym.make(env_id)
    v = se.get_variant(VARIANT_IDS[env_id])
    assert env.unwrapped.variant is v
    assert env.action_space.n == v.n_actions
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=3)
    for _ in range(60):
        st = env.unwrapped.state
        assert np.flatnonzero(info["action_mask"]).tolist() == legal_actions(st)
        assert info["score"] == st.score and info["deals_left"] == st.deals_left
        legal = np.flatnonzero(info["action_mask"])
        _obs, _r, term, trunc, info = env.step(int(rng.choice(legal)))
        if term or trunc:
            break
    env.close()


def test_undo_option_through_make() -> None:
    env = gym.make("Spiderette2Suit-v0", undo=True)
    v = env.unwrapped.variant
    assert v.undo and v.n_actions == se.get_variant("spiderette-2suit").n_actions + 1
    assert env.unwrapped.describe_action(v.n_actions - 1) == "undo"
    # The tournament game has undo already; asking for it changes nothing.
    t = gym.make("SpiderTournament1Suit-v0", undo=True)
    assert t.unwrapped.variant is se.get_variant("spider-tournament-1suit")


def test_tournament_pile_tops_score_and_reward() -> None:
    env = SpiderEnv(variant="spider-tournament-2suit", reward_mode="score")
    obs, info = env.reset(options={"deal": 5})
    st = env.state
    assert obs["pile_tops"].tolist() == [2 + p[0] for p in st.stock]
    assert info["score"] == 0
    deal_base = 9 * 13 * 9
    assert [a for a in np.flatnonzero(info["action_mask"]) if a >= deal_base] == [
        deal_base + j for j in range(5)
    ]
    total = 0.0
    obs, r, term, _, info = env.step(deal_base + 2)
    total += r
    assert obs["pile_tops"][2] == 0 and obs["deals_left"] == 4
    rng = np.random.default_rng(1)
    for _ in range(300):
        if term:
            break
        legal = np.flatnonzero(info["action_mask"])
        obs, r, term, _trunc, info = env.step(int(rng.choice(legal)))
        total += r
    assert total == info["score"] == env.state.score  # summed reward = final score (start 0)
    assert info["score"] == 25 * env.state.reveals + 100 * env.state.completed_runs


def test_tournament_win_reward_includes_the_clean_win_bonus() -> None:
    s = position(
        ["-", run("S", 13, 2), "AS", "-", "-", "-", "-", "-", "-"],
        variant="spider-tournament-1suit",
        completed=(5, 0, 0, 0),
        deals=5,
        reveals=30,
    )
    env = SpiderEnv(variant="spider-tournament-1suit")
    _, info = env.reset(options={"state": s})
    assert info["score"] == 25 * 30 + 500
    _, r, term, _, info = env.step(mv(s, 1, 2, 1))
    assert term and info["is_success"] and r == 200.0  # +100 run, +100 clean win
    assert info["score"] == 25 * 30 + 600 + 100


def test_culbertson_discard_is_in_the_mask() -> None:
    s = position(
        ["* " + run("S", 13, 2), "AS", "KH", "KH", "KD", "KD", "KC", "KC", "-", "-"],
        variant="spider-culbertson",
        piles=5,
    )
    env = SpiderEnv(variant="spider-culbertson")
    _, info = env.reset(options={"state": s})
    _, _, _, _, info = env.step(mv(s, 1, 1, 0))
    discard0 = 1301
    assert info["action_mask"][discard0] and not info["action_mask"][discard0 + 1 :].any()
    assert env.unwrapped.encode_action("discard", column=0) == discard0
    _, r, _, _, info = env.step(discard0)
    assert info["completed_runs"] == 1 and r == 100.0  # a discard is not a move: no -1


def test_simple_simon_never_offers_a_deal() -> None:
    env = SpiderEnv(variant="simple-simon")
    obs, info = env.reset(seed=0)
    assert int(obs["deals_left"]) == 0
    assert env.action_space.n == 1300 and info["action_mask"].shape == (1300,)


# --- PySolFC game numbers as a reset option ----------------------------------------------


@pytest.mark.parametrize(
    ("env_id", "game_id"),
    [("SpiderPySolFC4Suit-v0", 11), ("SpiderPySolFC1Suit-v0", 269), ("SpiderPySolFC2Suit-v0", 270)],
)
def test_pysol_game_option(env_id: str, game_id: int) -> None:
    env = gym.make(env_id)
    env.reset(options={"pysol_game": 617})
    st = env.unwrapped.state
    assert st == State.from_deal(pysol_deal(617, game_id))
    assert env.unwrapped.deal_name == f"pysolfc-{game_id}#617"
    assert env.unwrapped.deal_number == -1


def test_pysol_game_option_in_classic_spider_keeps_the_env_variant() -> None:
    env = gym.make("Spider-v0", suits=2)
    env.reset(options={"pysol_game": np.int64(32000)})
    st = env.unwrapped.state
    assert st.variant is se.classic(2)
    assert st.cols == pysol_deal(32000, 270).columns
    assert st == pysol_state(32000, "spider-2suit")
    assert env.get_wrapper_attr("deal_name") == "pysolfc-270#32000"


def test_pysol_game_option_errors() -> None:
    with pytest.raises(TypeError, match="pysol_game"):
        SpiderEnv(variant="pysol-spider-4suit").reset(options={"pysol_game": "617"})
    with pytest.raises(ValueError, match="PySolFC game numbers"):
        SpiderEnv(variant="pysol-spider-4suit").reset(options={"pysol_game": 0})
    with pytest.raises(ValueError, match="Spider's table"):
        SpiderEnv(variant="spiderette-4suit").reset(options={"pysol_game": 1})
