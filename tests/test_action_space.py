"""The envs' action spaces (``spider_env.action_space``): Gymnasium's sampling idiom
``env.action_space.sample(mask=info["action_mask"])`` with the envs' ``bool`` masks, while the
spaces stay Gymnasium's ``Discrete`` / ``MultiDiscrete`` for every checker and library."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from gymnasium.vector.utils import batch_space

import spider_env  # noqa: F401  (registers Spider-v0)
from spider_env.action_space import MaskableDiscrete, MaskableMultiDiscrete
from spider_env.env import SpiderEnv
from spider_env.vector import SpiderVectorEnv


def test_made_env_samples_legal_actions_from_its_bool_mask() -> None:
    env = gym.make("Spider-v0", suits=2)  # through gymnasium.make's wrappers
    assert isinstance(env.action_space, MaskableDiscrete)
    env.action_space.seed(1)
    _, info = env.reset(seed=1)
    for _ in range(100):
        mask = info["action_mask"]
        assert mask.dtype == np.bool_
        action = env.action_space.sample(mask=mask)
        assert mask[action]
        *_, info = env.step(action)
        assert not info["illegal_action"]


def test_bool_mask_draws_what_gymnasiums_int8_mask_draws() -> None:
    mask = np.zeros(1301, dtype=bool)
    mask[[3, 40, 1300]] = True
    ours, theirs = MaskableDiscrete(1301, seed=7), spaces.Discrete(1301, seed=7)
    drawn = [int(ours.sample(mask=mask)) for _ in range(50)]
    assert drawn == [int(theirs.sample(mask=mask.astype(np.int8))) for _ in range(50)]
    assert set(drawn) == {3, 40, 1300}
    assert ours.sample(mask=mask.astype(np.int8)) in (3, 40, 1300)  # Taxi's int8 mask too
    assert ours.sample(mask=np.zeros(1301, dtype=bool)) == 0  # no legal action: start
    probability = mask / mask.sum()
    assert ours.sample(probability=probability) in (3, 40, 1300)
    with pytest.raises(ValueError, match="Only one of"):
        ours.sample(mask=mask, probability=probability)
    with pytest.raises(AssertionError, match="shape"):  # Gymnasium still checks the rest
        ours.sample(mask=mask[:10])


def test_spaces_equal_gymnasiums_and_pickle() -> None:
    single, batched = MaskableDiscrete(1301), batch_space(MaskableDiscrete(1301), 3)
    assert isinstance(batched, MaskableMultiDiscrete)
    assert single == spaces.Discrete(1301) and spaces.Discrete(1301) == single
    assert batched == spaces.MultiDiscrete([1301] * 3) == batched
    assert repr(single) == "Discrete(1301)" and repr(batched) == "MultiDiscrete([1301 1301 1301])"
    for space in (single, batched):
        again = pickle.loads(pickle.dumps(space))
        assert type(again) is type(space) and again == space


def test_batched_space_takes_row_masks_probabilities_and_gymnasiums_tuples() -> None:
    masks = np.zeros((3, 1301), dtype=bool)
    masks[0, 5] = masks[1, [6, 7]] = masks[2, 1300] = True
    space = MaskableMultiDiscrete(np.full(3, 1301), seed=0)
    for given in (masks, masks.astype(np.int8), tuple(masks), tuple(masks.astype(np.int8))):
        actions = space.sample(mask=given)
        assert masks[np.arange(3), actions].all()
    actions = space.sample(probability=masks / masks.sum(axis=1, keepdims=True))
    assert masks[np.arange(3), actions].all()


def test_vector_env_spaces_pickle_and_sample_after_unpickling() -> None:
    envs = SpiderVectorEnv(2, suits=1)
    _, info = envs.reset(seed=0)
    space = pickle.loads(pickle.dumps(envs.action_space))
    assert info["action_mask"][np.arange(2), space.sample(mask=info["action_mask"])].all()


def test_env_with_the_maskable_space_passes_gymnasium_and_sb3_checkers() -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    for kwargs in ({"suits": 1, "mask_in_obs": True}, {"variant": "scorpion"}):
        env = gym.make("Spider-v0", **kwargs)
        assert isinstance(env.unwrapped.action_space, MaskableDiscrete)
        check_env(env.unwrapped)
    sb3_check_env(SpiderEnv(suits=1, obs_mode="flat"), warn=False)
