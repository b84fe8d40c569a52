"""Training on RLlib (``spider_env.agents.rl.rllib``, the ``rllib`` extra): the env runners build
``SpiderVectorEnv`` through the vector entry point, the masked modules never choose an illegal
action, training on a real Ray cluster exports a model that ``spider-env evaluate`` plays and
that chooses as the restored checkpoint does, and bad settings are refused in one line.

These tests need RLlib; ``make test-rllib`` runs them in their own venv (RLlib's Gymnasium pin)
with ``SPIDER_ENV_REQUIRE_RLLIB=1``, where a missing RLlib is a failure, not a skip.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

if os.environ.get("SPIDER_ENV_REQUIRE_RLLIB") != "1":
    pytest.importorskip("ray.rllib.algorithms.ppo", reason="the rllib extra is not installed")
    pytest.importorskip("torch")

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.utils.torch_utils import FLOAT_MIN
from spider_env.agents.rl.rllib import (
    RLlibSettings,
    RLlibVectorEnv,
    env_runner_class,
    export_model,
    ppo_config,
    resize_rows,
    restore_module,
    rows_space,
    rows_used,
    rows_width,
    split_rows,
    train,
    width_rows,
)
from spider_env.agents.rl.rllib_learner import EpisodesToBatch, GatherShuffledBatch, RowsPPOLearner
from spider_env.agents.rl.rllib_modules import (
    ActionRowsRLModule,
    ActionSetRLModule,
    FlatRLModule,
    MaskedCategorical,
)
from spider_env.agents.rl.rllib_runner import ArrayEnvRunner, EvenRows
from spider_env.agents.rl.settings import SettingsError
from test_readme import RLLIB_PYTHON, run_snippet

from spider_env.core.rules import IllegalMoveError
from spider_env.vector import SpiderVectorEnv

ROOT = Path(__file__).resolve().parents[1]
TINY = {"num_envs_per_env_runner": 8, "n_steps": 8, "hidden": 16, "max_episode_steps": 200}
pytestmark = pytest.mark.usefixtures("ray_env")


def env_of(obs_mode: str, num_envs: int = 4, **config: Any) -> RLlibVectorEnv:
    return RLlibVectorEnv({"variant": "spider-2suit", "obs_mode": obs_mode, "num_envs": num_envs,
                           **config})  # fmt: skip


MODULES = {"rows": ActionRowsRLModule, "actions": ActionSetRLModule, "flat": FlatRLModule}


def module_of(env: RLlibVectorEnv, obs_mode: str, hidden: int = 16) -> Any:
    return MODULES[obs_mode](
        observation_space=env.single_observation_space,
        action_space=env.single_action_space,
        model_config={"hidden": hidden},
    )


def as_batch(obs: Any) -> dict[str, Any]:
    def tensor(x: Any) -> Any:
        return {k: tensor(v) for k, v in x.items()} if isinstance(x, dict) else torch.as_tensor(x)

    return {Columns.OBS: tensor(obs)}


def legal(env: RLlibVectorEnv, obs: Any) -> np.ndarray:
    """The legal actions of the module's action space: rows with an action, or action ids."""
    if env.obs_mode == "rows":
        return split_rows(obs, env.action_rows)[2] > 0.5
    return obs["action_mask"].astype(bool)


def as_actions_obs(env: RLlibVectorEnv, obs: np.ndarray) -> dict[str, np.ndarray]:
    """The Gymnasium env's ``obs_mode="actions"`` observation of a rows observation."""
    feats, glob, _ = split_rows(obs, env.action_rows)
    ids = env.row_action_ids.astype(np.float32)
    return {"actions": feats, "action_ids": ids, "globals": glob}


# --- the env ------------------------------------------------------------------------------------
@pytest.mark.parametrize("obs_mode", ["actions", "flat"])
def test_the_env_has_the_mask_beside_the_observation(obs_mode: str) -> None:
    env = env_of(obs_mode)
    obs, info = env.reset(seed=3)
    assert isinstance(env.unwrapped, SpiderVectorEnv)
    assert env.single_observation_space.contains({k: v[0] for k, v in obs.items()})
    assert env.observation_space.contains(obs)
    np.testing.assert_array_equal(obs["action_mask"], env.unwrapped.action_masks())
    assert obs["action_mask"].dtype == np.int8
    if obs_mode == "flat":
        assert set(obs) == {"observations", "action_mask"}
        assert obs["observations"].shape == (4, env.unwrapped.single_observation_space.shape[0])
    actions = np.array([np.flatnonzero(m)[0] for m in obs["action_mask"]])
    obs, *_, info = env.step(actions)
    np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])


def test_the_rows_env_packs_the_per_action_observation_and_plays_each_row_s_action() -> None:
    # the same games through the rows layout and the Gymnasium env's per-action layout,
    # short games so that episodes end (truncated) and restart (next-step autoreset)
    rows = env_of("rows", num_envs=6, max_episode_steps=15)
    ids = env_of("actions", num_envs=6, max_episode_steps=15)
    assert rows.single_action_space.n == rows.action_rows == 96
    assert rows.single_observation_space.shape == (rows_width(96),) == (96 * 28 + 11,)
    obs, info = rows.reset(seed=4)
    ref, _ = ids.reset(seed=4)
    assert "action_mask" not in info and "_action_mask" not in info  # ids, not rows
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(60):
        assert rows.observation_space.contains(obs)
        np.testing.assert_array_equal(as_actions_obs(rows, obs)["actions"], ref["actions"])
        np.testing.assert_array_equal(as_actions_obs(rows, obs)["globals"], ref["globals"])
        np.testing.assert_array_equal(rows.row_action_ids, ref["action_ids"])
        np.testing.assert_array_equal(legal(rows, obs), ref["action_ids"] >= 0)
        chosen = np.array([rng.choice(np.flatnonzero(row)) for row in legal(rows, obs)])
        played = ref["action_ids"][np.arange(6), chosen].astype(np.int64)
        np.testing.assert_array_equal(ref["action_mask"][np.arange(6), played], 1)
        obs, reward, terminated, truncated, _ = rows.step(chosen)
        ref, reward_ref, terminated_ref, truncated_ref, _ = ids.step(played)
        np.testing.assert_array_equal(reward, reward_ref)
        np.testing.assert_array_equal(terminated, terminated_ref)
        np.testing.assert_array_equal(truncated, truncated_ref)
        ended += int((terminated | truncated).sum())
    assert ended >= 6


def test_the_rows_env_hands_out_arrays_of_its_own_that_the_next_step_leaves_alone() -> None:
    # the inner env gives its own buffers (copy=False); the rows env copies what it returns
    env = env_of("rows", num_envs=4, max_episode_steps=3)
    obs, _ = env.reset(seed=2)
    returned, copies = [], []
    for _ in range(8):
        rows = np.array([int(np.flatnonzero(r)[0]) for r in legal(env, obs)])
        out = env.step(rows)
        returned.append(out)
        copies.append([np.copy(x) for x in out[:4]] + [{k: np.copy(v) for k, v in out[4].items()}])
        obs = out[0]
    for live, copied in zip(returned, copies, strict=True):  # nothing overwritten since
        for x, y in zip(live[:4], copied[:4], strict=True):
            np.testing.assert_array_equal(x, y)
        assert live[4].keys() == copied[4].keys()
        for key, value in copied[4].items():
            np.testing.assert_array_equal(live[4][key], value)
    assert any(c[2].any() or c[3].any() for c in copies)  # episodes ended (and restarted)


def test_a_row_without_an_action_raises_naming_the_env_and_the_row() -> None:
    env = env_of("rows", num_envs=3)
    obs, _ = env.reset(seed=0)
    flags = legal(env, obs)
    first = flags.argmax(axis=1)
    empty = int(np.flatnonzero(~flags[1])[0])
    with pytest.raises(IllegalMoveError, match=f"env 1: row {empty} has no action"):
        env.step(np.array([first[0], empty, first[2]]))
    with pytest.raises(IllegalMoveError, match=r"env 2: row 96 is out of range 0\.\.95"):
        env.step(np.array([first[0], first[1], 96]))
    with pytest.raises(ValueError, match="expected 3 row numbers"):
        env.step(first.astype(float))
    env.step(first)  # nothing was played before
    with pytest.raises(AttributeError, match="obs_mode 'rows' only"):
        _ = env_of("actions").row_action_ids


def test_a_game_that_ended_ignores_its_row() -> None:
    env = env_of("rows", num_envs=2, max_episode_steps=1)
    obs, _ = env.reset(seed=0)
    _, _, _, truncated, _ = env.step(legal(env, obs).argmax(axis=1))
    assert truncated.all()
    obs, *_ = env.step(np.array([95, 95]))  # ignored: both games restart
    assert legal(env, obs).any(axis=1).all()
    _, _, _, truncated, _ = env.step(legal(env, obs).argmax(axis=1))
    assert truncated.all()
    obs, _ = env.reset(options={"reset_mask": np.array([True, False])})  # game 1 still ended
    with pytest.raises(IllegalMoveError, match="env 0: row 95 has no action"):
        env.step(np.array([95, 95]))
    env.step(np.array([legal(env, obs)[0].argmax(), 95]))  # game 1's row is ignored


def test_runners_seeded_one_apart_play_different_games() -> None:
    a, b = env_of("actions"), env_of("actions")
    a.reset(seed=10)
    b.reset(seed=11)  # RLlib seeds runner w with seed + w
    deals = a.unwrapped.get_attr("deal_number") + b.unwrapped.get_attr("deal_number")
    assert len(set(deals)) == 8
    assert all(d >= 10_000 for d in deals)  # training deals: never a test or validation deal


def test_the_env_refuses_to_be_built_game_by_game_or_with_unknown_keys() -> None:
    with pytest.raises(ValueError, match="vector_entry_point"):
        RLlibVectorEnv({"obs_mode": "actions"})
    with pytest.raises(ValueError, match=r"unknown env_config keys \['suits'\]"):
        RLlibVectorEnv({"num_envs": 2, "suits": 2})
    with pytest.raises(ValueError, match="obs_mode"):
        RLlibVectorEnv({"num_envs": 2, "obs_mode": "dict"})
    assert RLlibVectorEnv({"num_envs": 2}).obs_mode == "rows"  # the default


def test_an_illegal_action_raises() -> None:
    env = env_of("actions", num_envs=2)
    obs, _ = env.reset(seed=0)
    illegal = int(np.flatnonzero(obs["action_mask"][0] == 0)[0])
    with pytest.raises(IllegalMoveError):
        env.step(np.array([illegal, np.flatnonzero(obs["action_mask"][1])[0]]))


# --- the modules --------------------------------------------------------------------------------
@pytest.mark.parametrize("obs_mode", ["rows", "actions", "flat"])
def test_the_modules_sample_only_legal_actions(obs_mode: str) -> None:
    torch.manual_seed(0)
    env = env_of(obs_mode, num_envs=16)
    module = module_of(env, obs_mode)
    obs, _ = env.reset(seed=0)
    for _ in range(60):  # every step also checks the env did not raise
        with torch.no_grad():
            out = module.forward_exploration(as_batch(obs))
        dist = module.get_exploration_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
        actions = dist.sample().numpy()
        mask = legal(env, obs)
        playing = mask.any(axis=1)  # (a game that just ended has no legal action)
        assert playing.sum() >= 12
        assert mask[np.arange(16), actions][playing].all()
        probs = torch.softmax(out[Columns.ACTION_DIST_INPUTS], -1).numpy()[playing]
        assert probs[~mask[playing]].max() == 0.0
        obs, *_ = env.step(actions)


def test_the_rows_module_gives_each_legal_action_the_actions_module_s_probability() -> None:
    torch.manual_seed(2)
    rows, ids = env_of("rows", num_envs=8), env_of("actions", num_envs=8)
    by_row, by_id = module_of(rows, "rows"), module_of(ids, "actions")
    by_id.load_state_dict(by_row.state_dict())  # the same parameters, the same names
    obs, _ = rows.reset(seed=7)
    ref, _ = ids.reset(seed=7)
    for _ in range(40):
        with torch.no_grad():
            p_row = torch.softmax(
                by_row.forward_inference(as_batch(obs))[Columns.ACTION_DIST_INPUTS], -1
            )
            p_id = torch.softmax(
                by_id.forward_inference(as_batch(ref))[Columns.ACTION_DIST_INPUTS], -1
            )
        row_ids = rows.row_action_ids
        for i in range(8):
            has = row_ids[i] >= 0
            np.testing.assert_allclose(p_row[i][has].numpy(), p_id[i][row_ids[i][has]].numpy(),
                                       rtol=1e-5, atol=1e-7)  # fmt: skip
            assert p_id[i].sum().item() == pytest.approx(p_id[i][row_ids[i][has]].sum().item())
        chosen = p_row.argmax(-1).numpy()
        obs, *_ = rows.step(chosen)
        ref, *_ = ids.step(row_ids[np.arange(8), chosen])


@pytest.mark.parametrize("obs_mode", ["rows", "actions"])
def test_the_module_values_come_from_the_same_pass(obs_mode: str) -> None:
    env = env_of(obs_mode)
    module = module_of(env, obs_mode)
    obs, _ = env.reset(seed=1)
    batch = as_batch(obs)
    with torch.no_grad():
        out = module.forward_train(batch)
        assert torch.allclose(module.compute_values(batch, out[Columns.EMBEDDINGS]),
                              module.compute_values(batch), atol=1e-5)  # fmt: skip


@pytest.mark.parametrize("obs_mode", ["rows", "actions"])
def test_only_the_learners_pass_embeds_in_the_precision_of_the_model_config(obs_mode: str) -> None:
    """``model_config["precision"] = "bfloat16"``: ``forward_train`` multiplies the row
    embeddings in bfloat16 (near float32's, not equal), sampling and inference are float32's bit
    for bit, and the network is left in float32; a precision of another name is refused."""
    env = env_of(obs_mode, num_envs=8)
    torch.manual_seed(4)
    plain = module_of(env, obs_mode)
    mixed = MODULES[obs_mode](
        observation_space=env.single_observation_space, action_space=env.single_action_space,
        model_config={"hidden": 16, "precision": "bfloat16"},
    )  # fmt: skip
    mixed.load_state_dict(plain.state_dict())
    obs, _ = env.reset(seed=3)
    batch = as_batch(obs)
    with torch.no_grad():
        for fwd in ("forward_inference", "forward_exploration"):
            a = getattr(plain, fwd)(batch)[Columns.ACTION_DIST_INPUTS]
            assert torch.equal(a, getattr(mixed, fwd)(batch)[Columns.ACTION_DIST_INPUTS])
    a, b = plain.forward_train(batch), mixed.forward_train(batch)
    for key in (Columns.ACTION_DIST_INPUTS, Columns.EMBEDDINGS):
        x, y = a[key], b[key]
        legal_x = x[x > FLOAT_MIN / 2] if key == Columns.ACTION_DIST_INPUTS else x
        legal_y = y[y > FLOAT_MIN / 2] if key == Columns.ACTION_DIST_INPUTS else y
        assert not torch.equal(legal_x, legal_y)
        assert torch.allclose(legal_x, legal_y, atol=0.02 * legal_x.abs().max().item())
    assert mixed.features_extractor.row_dtype is None
    bad = MODULES[obs_mode](
        observation_space=env.single_observation_space, action_space=env.single_action_space,
        model_config={"hidden": 16, "precision": "half"},
    )  # fmt: skip
    with pytest.raises(ValueError, match="precision"):
        bad.forward_train(batch)


def masked_logits(seed: int, b: int = 6, k: int = 9, first: bool = False) -> torch.Tensor:
    """Logits with ``FLOAT_MIN`` at illegal actions (as the modules give them): legal ones
    first (rows) or anywhere (action ids); decision 0 has one legal action."""
    gen = torch.Generator().manual_seed(seed)
    legal = torch.rand(b, k, generator=gen) < 0.5
    if first:
        legal = torch.arange(k) < torch.randint(1, k + 1, (b, 1), generator=gen)
    legal[:, 0] |= ~legal.any(dim=1)
    legal[0] = False
    legal[0, k - 1] = True
    return (torch.randn(b, k, generator=gen) * 2).masked_fill(~legal, FLOAT_MIN)


@pytest.mark.parametrize("first", [True, False])
def test_the_masked_categorical_is_torch_s_categorical_over_the_legal_actions(first: bool) -> None:
    z, other = masked_logits(1, first=first), masked_logits(2, first=first)
    other = torch.where(z > FLOAT_MIN, other.clamp(min=-5.0), FLOAT_MIN)  # the same legal set
    ours, theirs = MaskedCategorical.from_logits(z), torch.distributions.Categorical(logits=z)
    actions = torch.stack([torch.multinomial(theirs.probs, 1)[:, 0] for _ in range(20)])
    torch.testing.assert_close(ours.logp(actions), theirs.log_prob(actions))
    torch.testing.assert_close(ours.entropy(), theirs.entropy())
    ref_kl = torch.distributions.kl_divergence(
        theirs, torch.distributions.Categorical(logits=other)
    )
    torch.testing.assert_close(ours.kl(MaskedCategorical.from_logits(other)), ref_kl)
    assert torch.equal(ours.to_deterministic().sample(), z.argmax(-1))
    # its draws: never an illegal action, each legal one as often as its probability
    torch.manual_seed(0)
    draws = torch.stack([ours.sample() for _ in range(4000)])
    assert draws.shape == (4000, len(z))
    assert (z.gather(1, draws.T) > FLOAT_MIN).all()
    freq = torch.nn.functional.one_hot(draws, z.shape[1]).float().mean(0)
    assert (freq - theirs.probs).abs().max() < 0.03
    assert (draws[:, 0] == z.shape[1] - 1).all()  # decision 0's only legal action, the last


def test_the_masked_categorical_refuses_probabilities_and_many_samples() -> None:
    z = masked_logits(3)
    with pytest.raises(ValueError, match="logits"):
        MaskedCategorical(probs=torch.softmax(z, -1))
    with pytest.raises(ValueError, match="one sample per decision"):
        MaskedCategorical.from_logits(z).sample(sample_shape=(2,))


@pytest.mark.parametrize("obs_mode", ["rows", "actions", "flat"])
def test_the_modules_draw_from_the_masked_categorical(obs_mode: str) -> None:
    module = module_of(env_of(obs_mode), obs_mode)
    for get in ("inference", "exploration", "train"):
        assert getattr(module, f"get_{get}_action_dist_cls")() is MaskedCategorical


@pytest.mark.parametrize("obs_mode", ["rows", "actions"])
def test_the_values_of_sampled_steps_are_the_runner_s_and_only_the_extra_steps_are_computed(
    obs_mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a batch as RLlib's learner connectors make it: each step with the value the runner's pass
    # gave it, and RLlib's extra step at a chunk's end (loss mask false) without one of its own
    env = env_of(obs_mode, num_envs=6)
    module = module_of(env, obs_mode)
    obs, _ = env.reset(seed=5)
    batch = as_batch(obs)
    with torch.no_grad():
        sampled = module.forward_exploration(batch)[Columns.VF_PREDS]
        every = module.compute_values(batch)  # no values in the batch: every one computed
    torch.testing.assert_close(sampled, every)
    seen: list[int] = []
    real = module._logits_latent

    def counted(o: Any) -> Any:
        seen.append(len(o) if isinstance(o, torch.Tensor) else len(next(iter(o.values()))))
        return real(o)

    monkeypatch.setattr(module, "_logits_latent", counted)
    mask = torch.tensor([True, True, False, True, False, True])
    stale = torch.full((6,), 123.0)  # what AddOneTs repeats at the extra steps: not their values
    values = module.compute_values({**batch, Columns.VF_PREDS: torch.where(mask, sampled, stale),
                                    Columns.LOSS_MASK: mask})  # fmt: skip
    assert seen == [2]  # one pass, over the two extra steps only
    torch.testing.assert_close(values, every)
    assert torch.equal(values[mask], sampled[mask])  # the runner's, as they were


def test_a_module_refuses_an_observation_without_the_mask() -> None:
    env = env_of("actions")
    with pytest.raises(ValueError, match="obs_mode='flat'"):
        module_of(env, "flat")
    with pytest.raises(ValueError, match="hidden"):
        module_of(env, "actions", hidden=0)
    with pytest.raises(ValueError, match="obs_mode='rows' of 1301 rows"):
        ActionRowsRLModule(observation_space=env_of("flat").single_observation_space,
                           action_space=env.single_action_space)  # fmt: skip
    with pytest.raises(ValueError, match="obs_mode='actions'"):
        module_of(env_of("rows"), "actions")


# --- the model format ---------------------------------------------------------------------------
@pytest.mark.parametrize("obs_mode", ["rows", "actions", "flat"])
def test_the_exported_model_chooses_the_module_s_most_likely_action(
    obs_mode: str, tmp_path: Path
) -> None:
    from spider_env.agents.model import ModelAgent
    from spider_env.agents.model_file import SavedModel
    from spider_env.agents.rl.models import load_model

    torch.manual_seed(1)
    s = RLlibSettings(suits=2, obs_mode=obs_mode, hidden=16, ray="local", eval_deals=0)
    env = env_of(obs_mode, num_envs=8)
    module = module_of(env, obs_mode)
    path = export_model(module, s, tmp_path / "model.zip", training={"test": True})
    model = load_model(path)
    saved = SavedModel.read(tmp_path / "model.safetensors")  # the model file beside the zip
    # a rows module plays the Gymnasium env's per-action observation, action ids
    assert saved.env.variant == "spider-2suit"
    assert saved.env.obs_mode == ("actions" if obs_mode == "rows" else obs_mode)
    assert saved.training == {"test": True}
    agent = ModelAgent(saved, deterministic=True)
    obs, _ = env.reset(seed=5)
    for _ in range(20):
        with torch.no_grad():
            logits = module.forward_inference(as_batch(obs))[Columns.ACTION_DIST_INPUTS]
        ours = logits.argmax(-1).numpy()
        if obs_mode == "rows":
            plain, mask = as_actions_obs(env, obs), env.unwrapped.action_masks()
            ids = env.row_action_ids[np.arange(8), ours]
        else:
            mask, ids = obs["action_mask"].astype(bool), ours
            plain = obs["observations"] if obs_mode == "flat" else {
                k: v for k, v in obs.items() if k != "action_mask"}  # fmt: skip
        theirs, _ = model.predict(plain, action_masks=mask, deterministic=True)
        playing = mask.any(axis=1)  # (a game without a legal action has no row to choose)
        np.testing.assert_array_equal(ids[playing], theirs[playing])
        mine = agent.choose_batch(plain, mask, None)
        # the model file plays in NumPy as the module
        np.testing.assert_array_equal(ids[playing], mine[playing])
        obs, *_ = env.step(ours)


def test_exporting_a_module_of_another_width_is_refused(tmp_path: Path) -> None:
    env = env_of("actions")
    s = RLlibSettings(obs_mode="actions", hidden=32, eval_deals=0)
    with pytest.raises(ValueError, match=r"right shape .* hidden=32"):
        export_model(module_of(env, "actions", hidden=16), s, tmp_path / "m.zip", training={})
    assert not (tmp_path / "m.zip").exists()


def test_exporting_a_module_of_the_other_observation_is_refused(tmp_path: Path) -> None:
    env = env_of("flat")
    s = RLlibSettings(obs_mode="actions", hidden=16, eval_deals=0)
    with pytest.raises(ValueError, match="not a module of obs_mode='actions'"):
        export_model(module_of(env, "flat"), s, tmp_path / "m.zip", training={})


# --- rows cut to those used, and the array env runner ---------------------------------------------
def test_rows_can_be_cut_to_those_used_and_padded_back_without_losing_a_value() -> None:
    env = env_of("rows", num_envs=5)
    obs, _ = env.reset(seed=2)
    k = rows_used(obs)
    assert 0 < k < 96 and k == int(legal(env, obs).sum(axis=1).max())
    assert width_rows(rows_width(k)) == k and width_rows(obs.shape[-1]) == 96
    cut = resize_rows(obs, k)
    assert cut.shape == (5, rows_width(k))
    feats, glob, flags = split_rows(cut, k)
    full_feats, full_glob, full_flags = split_rows(obs, 96)
    np.testing.assert_array_equal(feats, full_feats[:, :k])
    np.testing.assert_array_equal(glob, full_glob)
    np.testing.assert_array_equal(flags, full_flags[:, :k])
    assert not full_feats[:, k:].any() and not full_flags[:, k:].any()  # only padding was cut
    np.testing.assert_array_equal(resize_rows(cut, 96), obs)  # padded back: the same values
    assert rows_space(env.single_observation_space, k).contains(cut[0])
    into = np.full((5, rows_width(96)), np.nan, np.float32)  # padded into an array given
    np.testing.assert_array_equal(resize_rows(cut, 96, out=into), obs)
    with pytest.raises(ValueError, match=f"using {k} rows cannot be cut to {k - 1}"):
        resize_rows(obs, k - 1)
    with pytest.raises(ValueError, match="not an observation of obs_mode='rows'"):
        width_rows(rows_width(3) + 1)


def test_the_rows_module_scores_an_observation_cut_to_its_rows_as_the_full_one() -> None:
    torch.manual_seed(3)
    env = env_of("rows", num_envs=6)
    module = module_of(env, "rows")
    obs, _ = env.reset(seed=5)
    k = rows_used(obs)
    with torch.no_grad():
        full = module.forward_train(as_batch(obs))
        cut = module.forward_train(as_batch(resize_rows(obs, k)))
        values = (
            module.compute_values(as_batch(obs)),
            module.compute_values(as_batch(resize_rows(obs, k))),
        )
    logits = full[Columns.ACTION_DIST_INPUTS]
    np.testing.assert_allclose(cut[Columns.ACTION_DIST_INPUTS].numpy(), logits[:, :k].numpy(),
                               rtol=1e-6)  # fmt: skip
    assert (logits[:, k:] == FLOAT_MIN).all()
    np.testing.assert_allclose(values[0].numpy(), values[1].numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="an observation of 97 rows for a module of 96"):
        module.forward_train(as_batch(np.zeros((1, rows_width(97)), np.float32)))


def runner_of(
    cls: type, num_envs: int = 16, max_steps: int = 12, compiled: bool = True, **settings: Any
) -> Any:
    """An env runner of ``cls`` as the driver builds it (``ppo_config``), 1 suit, seed 0;
    ``compiled``: an :class:`ArrayEnvRunner`'s ``compiled_choice``."""
    torch.manual_seed(0)
    s = RLlibSettings(suits=1, num_envs_per_env_runner=num_envs, n_steps=8, hidden=16,
                      max_episode_steps=max_steps, **settings)  # fmt: skip
    runner = cls(config=ppo_config(s))
    if isinstance(runner, ArrayEnvRunner):
        runner.compiled_choice = compiled
        assert (runner.choice() is not None) == compiled  # numba is part of the core
    return runner


@pytest.fixture
def one_thread() -> Iterator[None]:
    """Torch on one thread, as the array runner samples (the same sums, bit for bit)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def in_common_order(episodes: list[SingleAgentEpisode]) -> list[dict[str, np.ndarray]]:
    """Each episode chunk's data, its observations and logits with all 96 rows, in their
    order."""
    out = []
    for e in episodes:
        n = len(e)
        logits = e.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS, slice(0, n))
        padded = np.full((n, 96), FLOAT_MIN, np.float32)
        padded[:, : logits.shape[1]] = logits
        out.append({
            "where": np.array([e.t_started, n, e.is_terminated, e.is_truncated]),
            "obs": resize_rows(e.get_observations(slice(0, n + 1)), 96),
            "actions": e.get_actions(slice(0, n)),
            "rewards": e.get_rewards(slice(0, n)).astype(np.float64),
            "logp": e.get_extra_model_outputs(Columns.ACTION_LOGP, slice(0, n)),
            "values": e.get_extra_model_outputs(Columns.VF_PREDS, slice(0, n)),
            "logits": padded,
        })  # fmt: skip
    return out


#: The model outputs the compiled choice computes in another order than torch's pass: equal up
#: to float32 rounding; everything else in a sample is equal.
MODEL_OUTPUTS = ("logp", "values", "logits")


def assert_same_samples(mine: list[Any], rllib: list[Any], exact: bool) -> None:
    """The same chunks in the same order, with the same observations, draws and rewards, and
    the same model outputs: bit for bit if ``exact``, else up to float32 rounding."""
    x_all, y_all = in_common_order(mine), in_common_order(rllib)
    assert len(x_all) == len(y_all)
    for x, y in zip(x_all, y_all, strict=True):
        for key in x:
            if exact or key not in MODEL_OUTPUTS:
                np.testing.assert_array_equal(x[key], y[key], err_msg=key)
            else:
                np.testing.assert_allclose(x[key], y[key], rtol=1e-5, atol=1e-5, err_msg=key)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled-choice", "module-pass"])
def test_the_array_runner_samples_the_episodes_rllib_s_runner_samples(compiled: bool) -> None:
    # the same seed, the same weights: the same chunks in the same order, with the same
    # observations, draws, rewards and log-probabilities (the module's own pass: bit for bit);
    # games cut at 12 steps, so that samples of 8 steps end episodes and restart games
    # (next-step autoreset)
    ours = runner_of(ArrayEnvRunner, compiled=compiled)
    theirs = runner_of(SingleAgentEnvRunner)
    theirs.module.load_state_dict(ours.module.state_dict())
    assert ours.array_sampling() is None
    ends = []
    for i in range(5):
        if i == 2:  # new weights, copied in place as RLlib syncs them: the choice takes them
            with torch.no_grad():
                for p in ours.module.parameters():
                    p.add_(0.3 * torch.randn_like(p))
            theirs.module.load_state_dict(ours.module.state_dict())
        torch.manual_seed(100 + i)
        a = ours.sample()
        torch.manual_seed(100 + i)
        b = theirs.sample()
        ends.append(sum(e.is_truncated for e in a))
        assert sum(len(e) for e in a) >= 16 * 8
        assert_same_samples(a, b, exact=not compiled)
        used = max(rows_used(e.get_observations(slice(0, len(e) + 1))) for e in a)
        for e in a:  # cut to the rows the sample's observations use, each action a row with one
            obs = e.get_observations(slice(0, len(e) + 1))
            k = width_rows(obs.shape[-1])
            assert used <= k < 96  # (the sample's first observation of a game that had ended
            # counts too, though it is in no chunk of the sample)
            flags = split_rows(obs[:-1], k)[2]
            assert (flags[np.arange(len(e)), e.get_actions(slice(0, len(e)))] == 1).all()
            logits = e.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS, slice(0, len(e)))
            assert logits.shape == (len(e), k)
    assert ends == [0, 16, 16, 0, 16]  # 12 steps each
    ours.stop()
    theirs.stop()


@pytest.mark.usefixtures("one_thread")
def test_the_array_runner_takes_the_steps_resets_need_as_rllib_s_runner_does() -> None:
    # one step a game: every other step of a game is its reset, which does not count, so a
    # sample takes about twice the steps planned (the runner's arrays grow)
    ours, theirs = (
        runner_of(ArrayEnvRunner, max_steps=1),
        runner_of(SingleAgentEnvRunner, max_steps=1),
    )
    theirs.module.load_state_dict(ours.module.state_dict())
    for i in range(3):
        torch.manual_seed(i)
        a = ours.sample()
        torch.manual_seed(i)
        b = theirs.sample()
        assert sum(len(e) for e in a) == sum(len(e) for e in b) >= 16 * 8
        assert all(len(e) == 1 and e.is_truncated for e in a)
        assert_same_samples(a, b, exact=False)
    ours.stop()
    theirs.stop()


@pytest.mark.usefixtures("one_thread")
def test_the_array_runner_s_observations_and_logits_go_out_of_band_and_the_rest_in_band() -> None:
    # Ray pickles a remote runner's episodes with protocol 5: a contiguous array goes out of
    # band (written once into the object store, read there without a copy), a strided one is
    # copied into the message; the columns of a number a step are too small for a buffer each
    ours = runner_of(ArrayEnvRunner)
    for _ in range(2):  # the second sample starts with games that ended
        episodes = ours.sample()
        big = [
            (e.observations, e.extra_model_outputs[Columns.ACTION_DIST_INPUTS]) for e in episodes
        ]
        assert all(o.data.flags.c_contiguous and z.data.flags.c_contiguous for o, z in big)
        buffers: list[pickle.PickleBuffer] = []
        message = pickle.dumps(episodes, protocol=5, buffer_callback=buffers.append)
        observations = sum(o.data.nbytes for o, _ in big)
        assert (
            sum(b.raw().nbytes for b in buffers)
            >= sum(z.data.nbytes for _, z in big) + observations
        )
        assert len(message) < observations / 4
        # a buffer for each of those two columns, for a one-step chunk's other columns (then
        # contiguous) and for the bounds of the spaces, which all chunks share
        one_step = sum(len(e) == 1 for e in episodes)
        assert len(buffers) <= 2 * len(episodes) + 5 * one_step + 8 < 7 * len(episodes)
        back = pickle.loads(message, buffers=buffers)
        for x, y in zip(in_common_order(back), in_common_order(episodes), strict=True):
            for key in x:
                np.testing.assert_array_equal(x[key], y[key], err_msg=key)
    ours.stop()


@pytest.mark.usefixtures("one_thread")
def test_training_with_the_array_runner_gives_rllib_s_weights(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bit for bit through the module's own pass; through the compiled choice (the default)
    # up to the float32 rounding of its log-probabilities, which the same draws carry
    import ray

    weights = {}
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR")
    try:
        for runner, compiled in (("arrays", True), ("arrays", False), ("rllib", False)):
            monkeypatch.setattr(ArrayEnvRunner, "compiled_choice", compiled)
            algo = ppo_config(RLlibSettings(suits=1, env_runner=runner, **TINY)).build_algo()
            for _ in range(3):
                algo.train()
            local = algo.env_runner
            assert isinstance(local, ArrayEnvRunner) == (runner == "arrays")
            assert runner == "rllib" or (local.choice() is not None) == compiled
            key = runner + ("-compiled" if compiled else "")
            weights[key] = {k: v.clone() for k, v in algo.get_module().state_dict().items()}
            algo.stop()
    finally:
        ray.shutdown()
    assert weights["arrays"].keys() == weights["rllib"].keys()
    for key, value in weights["arrays"].items():
        assert torch.equal(value, weights["rllib"][key]), key
        if key != "features_extractor.score.bias":
            torch.testing.assert_close(weights["arrays-compiled"][key], value, rtol=0, atol=1e-6)
    # the bias of every row's score changes no probability: its gradient is rounding alone,
    # which Adam scales up to steps of the learning rate's size, so it differs more


def test_the_compiled_choice_stands_only_for_the_rows_module_s_own_pass() -> None:
    runner = runner_of(ArrayEnvRunner)
    first = runner.choice()
    assert first is not None and runner.choice() is first  # made once per module

    class Changed(ActionRowsRLModule):  # a subclass may change the pass
        pass

    module = runner.module
    module.__class__ = Changed
    assert runner.choice() is None
    module.__class__ = ActionRowsRLModule
    assert runner.choice() is first
    runner.compiled_choice = False
    assert runner.choice() is None
    runner.stop()


def test_the_array_runner_counts_as_rllib_s_runner_does() -> None:
    ours, theirs = runner_of(ArrayEnvRunner), runner_of(SingleAgentEnvRunner)
    for _ in range(4):
        ours.sample(), theirs.sample()
    a, b = ours.get_metrics(), theirs.get_metrics()
    for key in ("num_env_steps_sampled_lifetime", "num_episodes_lifetime", "episode_len_mean"):
        assert a[key] == b[key], key
    assert a["episode_len_mean"] == 12
    ours.stop()
    theirs.stop()


def test_the_array_runner_leaves_episode_sampling_to_rllib_and_starts_afresh_after() -> None:
    runner = runner_of(ArrayEnvRunner, max_steps=6)
    runner.sample()
    done = runner.sample(num_episodes=3)  # RLlib's own loop: whole episodes
    assert len(done) >= 3 and all(e.is_done and e.t_started == 0 for e in done)
    assert all(width_rows(e.get_observations(0).shape[-1]) == 96 for e in done)  # not cut
    again = runner.sample()
    assert all(e.t_started == 0 for e in again)  # every game started afresh
    runner.stop()


def test_the_array_runner_leaves_a_config_it_cannot_follow_to_rllib() -> None:
    runner = runner_of(ArrayEnvRunner)
    runner.config.callbacks_on_episode_step = lambda **kw: None
    assert runner.array_sampling() == "episode callbacks"
    assert all(width_rows(e.get_observations(0).shape[-1]) == 96 for e in runner.sample())
    runner.stop()
    assert env_runner_class(RLlibSettings(env_runner="rllib")) is SingleAgentEnvRunner
    assert env_runner_class(RLlibSettings(obs_mode="actions")) is SingleAgentEnvRunner
    assert env_runner_class(RLlibSettings()) is ArrayEnvRunner


def test_the_parts_probe_times_rllib_s_update_and_sample_and_puts_every_method_back() -> None:
    import gc

    from ray.rllib.connectors.learner import GeneralAdvantageEstimation
    from ray.rllib.policy.sample_batch import SampleBatch
    from test_research_rl import load

    before = (SampleBatch.shuffle, GatherShuffledBatch.shuffle, EpisodesToBatch.__call__,
              GeneralAdvantageEstimation.__call__)  # fmt: skip
    callbacks = list(gc.callbacks)
    for bad in ({"memory": "lots"}, {"learner": "tf"}, {"collector": "off"}):
        args = {"memory": "as-is", **bad}
        with pytest.raises(ValueError, match=next(iter(bad))):
            load("rllib_parts").measure(1, 1, 8, 8, **args)
    out = load("rllib_parts").measure(1, 1, 8, 8, "as-is")
    assert gc.callbacks == callbacks and gc.get_freeze_count() == 0  # (frozen while it ran)
    parts = out["parts"]
    assert parts["learner connector EpisodesToBatch"] > 0  # the rows learner's one piece
    assert "learner connector AddOneTsToEpisodesAndTruncate" not in parts
    for key in ("learner update (all)", "learner: connectors (all)", "learner: forward passes",
                "learner: backward passes", "runner sample (all)", "runner: env steps",
                "runner: compiled choices", "learner: the batch's shuffles",
                "learner connector GeneralAdvantageEstimation"):  # fmt: skip
        assert parts[key] > 0, key
    assert parts["learner update (all)"] >= parts["learner: backward passes"]
    assert 0 < parts["runner sample (all)"] < out["total"]
    assert "runner: forward passes" not in parts  # the compiled choice stands for them
    assert (SampleBatch.shuffle, GatherShuffledBatch.shuffle, EpisodesToBatch.__call__,
            GeneralAdvantageEstimation.__call__) == before  # fmt: skip
    theirs = load("rllib_parts").measure(1, 1, 8, 8, "as-is", learner="rllib")["parts"]
    assert theirs["learner connector AddOneTsToEpisodesAndTruncate"] > 0  # RLlib's pieces
    assert theirs["learner: the batch's shuffles"] > 0
    assert "learner connector EpisodesToBatch" not in theirs
    draws = load("rllib_parts").draw_times(decisions=8, rows=4, calls=3)
    assert set(draws) == {"TorchCategorical", "MaskedCategorical"} and min(draws.values()) > 0
    # a remote runner: its CPU and the driver's, which the total adds up
    remote = load("rllib_parts").measure(1, 1, 8, 8, "as-is", runners=1)
    parts = remote["parts"]
    assert parts["remote runners (all)"] > 0 and parts["learner update (all)"] > 0
    assert "runner sample (all)" not in parts  # (sampled in the runner's own process)
    assert remote["total"] == pytest.approx(
        parts["driver (all)"] + parts["remote runners (all)"], abs=0.11
    )
    rest = "remote runners: the rest (Ray's calls, shipping the sample, weights)"
    assert 0 < parts["remote runners: sample()"] < parts["remote runners (all)"]
    assert parts["remote runners: sample()"] + parts.get(rest, 0.0) == pytest.approx(
        parts["remote runners (all)"], abs=0.11
    )
    assert parts["driver: garbage collections"] > 0  # (gen 0 at least: every update makes some)


def test_even_rows_gives_every_episode_the_most_rows_any_uses() -> None:
    ours, theirs = runner_of(ArrayEnvRunner), runner_of(SingleAgentEnvRunner)
    episodes = ours.sample() + theirs.sample()
    before = [e.get_observations(slice(0, len(e) + 1)) for e in episodes]
    most = max(rows_used(o) for o in before)
    assert {width_rows(o.shape[-1]) for o in before} >= {96}  # RLlib's runner: every row
    EvenRows(theirs.env.single_observation_space)(rl_module=None, batch={}, episodes=episodes)
    for e, old in zip(episodes, before, strict=True):
        obs = e.get_observations(slice(0, len(e) + 1))
        assert obs.shape[-1] == rows_width(most)
        np.testing.assert_array_equal(resize_rows(obs, 96), resize_rows(old, 96))
        assert e.observation_space.shape == (rows_width(most),)
        logits = e.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS, slice(0, len(e)))
        assert logits.shape == (len(e), most)
    ours.stop()
    theirs.stop()


# --- the learner over rows ----------------------------------------------------------------------
def rllib_s_pieces_and_ours(runner: Any) -> tuple[Any, list[Any], EpisodesToBatch]:
    """The learner of ``runner``'s config, RLlib's learner pieces before ``NumpyToTensor`` as
    RLlib's PPO learner builds them, and an :class:`EpisodesToBatch` falling back on them."""
    from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
    from ray.rllib.connectors.common.numpy_to_tensor import NumpyToTensor
    from ray.rllib.core import DEFAULT_MODULE_ID

    config = runner.config.copy(copy_frozen=False).learners(learner_class=PPOTorchLearner)
    env = runner.env
    spaces = {DEFAULT_MODULE_ID: (env.single_observation_space, env.single_action_space)}
    learner = PPOTorchLearner(
        config=config, module_spec=config.get_multi_rl_module_spec(spaces=spaces)
    )
    learner.build()
    pieces = learner._learner_connector.connectors
    cut = next(i for i, c in enumerate(pieces) if isinstance(c, NumpyToTensor))
    return learner, pieces, EpisodesToBatch(fallback=pieces[:cut])


@pytest.mark.parametrize("cls", [ArrayEnvRunner, SingleAgentEnvRunner])
def test_the_rows_learner_batches_episodes_as_rllib_s_learner_pieces_do(cls: type) -> None:
    # chunks that end terminated or truncated and chunks cut by the sample, with rows that differ
    # between samples (RLlib's runner: every row, cut by EvenRows), through the whole pipeline
    import copy

    from ray.rllib.core import DEFAULT_MODULE_ID

    runner = runner_of(cls, max_steps=5)
    learner, pieces, ours = rllib_s_pieces_and_ours(runner)
    for _ in range(3):
        episodes = runner.sample() + runner.sample()
        assert any(e.is_truncated for e in episodes) and any(not e.is_done for e in episodes)
        theirs, mine = copy.deepcopy(episodes), copy.deepcopy(episodes)
        assert ours.arrays(learner.module, {}, mine) is None
        shared_a: dict[str, Any] = {}
        shared_b: dict[str, Any] = {}
        a = learner._learner_connector(rl_module=learner.module, batch={}, episodes=theirs,
                                       shared_data=shared_a)  # fmt: skip
        b = ours(rl_module=learner.module, batch={}, episodes=mine, shared_data=shared_b)
        for piece in pieces[pieces.index(ours.fallback[-1]) + 1 :]:  # NumpyToTensor, GAE
            b = piece(rl_module=learner.module, batch=b, episodes=mine, shared_data=shared_b)
        a, b = a[DEFAULT_MODULE_ID], b[DEFAULT_MODULE_ID]
        assert list(a) == list(b)  # the same columns in the same order
        for key in a:
            assert a[key].dtype == b[key].dtype and torch.equal(a[key], b[key]), key
        assert shared_a == shared_b
        for x, y in zip(theirs, mine, strict=True):  # what is read of the episodes after
            assert (x.id_, len(x), x.is_terminated, x.is_truncated) == (
                y.id_, len(y), y.is_terminated, y.is_truncated)  # fmt: skip
    runner.stop()


def test_the_rows_learner_leaves_what_it_cannot_batch_to_rllib_s_pieces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import copy

    runner = runner_of(ArrayEnvRunner)
    learner, _, ours = rllib_s_pieces_and_ours(runner)
    episodes = runner.sample()
    module = learner.module
    assert ours.arrays(module, {"obs": {}}, episodes) == "a batch already begun"
    assert ours.arrays(module, {}, []) == "no episodes"
    odd = [*episodes[:-1], copy.deepcopy(episodes[-1])]
    odd[-1].observations.data = {"rows": odd[-1].observations.data}
    assert ours.arrays(module, {}, odd) == "observations that are not one array"
    odd[-1].observations.data = odd[-1].observations.data["rows"][:, :-1]
    assert ours.arrays(module, {}, odd) == "observations not of obs_mode='rows'"
    odd[-1] = copy.deepcopy(episodes[-1])
    del odd[-1].extra_model_outputs[Columns.VF_PREDS]
    assert ours.arrays(module, {}, odd) == "episodes with different model outputs"
    assert ours.arrays(module, {}, [*episodes, object()]) == (
        "episodes other than numpy'd single-agent ones"
    )
    # whatever the reason, RLlib's pieces make the batch, each once and in order
    seen: list[str] = []
    for piece in ours.fallback:
        call = type(piece).__call__

        def counted(self: Any, *args: Any, _call: Any = call, **kwargs: Any) -> Any:
            seen.append(type(self).__name__)
            return _call(self, *args, **kwargs)

        monkeypatch.setattr(type(piece), "__call__", counted)
    monkeypatch.setattr(EpisodesToBatch, "arrays", lambda self, *args: "refused")
    theirs, mine = copy.deepcopy(episodes), copy.deepcopy(episodes)
    b = ours(rl_module=module, batch={}, episodes=mine, shared_data={})
    assert seen == [type(p).__name__ for p in ours.fallback]
    a: dict[str, Any] = {}
    for piece in ours.fallback:
        a = piece(rl_module=module, batch=a, episodes=theirs, shared_data={})
    assert a.keys() == b.keys()
    runner.stop()


def test_the_gather_shuffle_draws_rllib_s_permutation_and_moves_every_column_s_rows() -> None:
    from ray.rllib.policy.sample_batch import SampleBatch

    def batch() -> Any:
        g = torch.Generator().manual_seed(1)
        return SampleBatch({"obs": torch.randn(40, 7, generator=g),
                            "actions": torch.randint(0, 5, (40,), generator=g),
                            "half": torch.randn(40, 3, generator=g).to(torch.bfloat16),
                            "flags": np.arange(40) % 3 == 0})  # fmt: skip

    theirs, ours = batch(), batch()
    ours.__class__ = GatherShuffledBatch
    np.random.seed(7)
    theirs.shuffle()
    np.random.seed(7)
    assert ours.shuffle() is ours
    for key in theirs:
        x, y = theirs[key], ours[key]
        assert type(x) is type(y), key
        assert torch.equal(x, y) if isinstance(x, torch.Tensor) else (x == y).all(), key
    assert not torch.equal(ours["obs"], batch()["obs"])  # shuffled
    nested = SampleBatch({"obs": {"a": torch.arange(6.0)}, "x": torch.arange(6)})
    nested.__class__ = GatherShuffledBatch
    np.random.seed(3)
    nested.shuffle()  # a nested column: RLlib's own shuffle, the same permutation
    np.random.seed(3)
    expected = np.random.permutation(6)
    np.testing.assert_array_equal(nested["x"].numpy(), expected)
    np.testing.assert_array_equal(nested["obs"]["a"].numpy(), expected.astype(np.float32))


@pytest.mark.usefixtures("one_thread")
def test_training_with_the_rows_learner_gives_rllib_s_learner_s_weights(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bit for bit: the same batches, shuffled by the same permutations
    import ray
    from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner

    shuffles = []
    real = GatherShuffledBatch.shuffle

    def counted(self: Any) -> Any:
        shuffles.append(self.count)
        return real(self)

    monkeypatch.setattr(GatherShuffledBatch, "shuffle", counted)
    weights = {}
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR")
    try:
        for learner in ("rows", "rllib"):
            config = ppo_config(RLlibSettings(suits=1, **{**TINY, "max_episode_steps": 10}))
            if learner == "rllib":
                config = config.learners(learner_class=PPOTorchLearner)
            algo = config.build_algo()
            built = algo.learner_group._learner
            assert isinstance(built, RowsPPOLearner) == (learner == "rows")
            for _ in range(3):
                algo.train()
            weights[learner] = {k: v.clone() for k, v in algo.get_module().state_dict().items()}
            algo.stop()
    finally:
        ray.shutdown()
    assert shuffles  # the rows learner's batches shuffled with its own
    assert weights["rows"].keys() == weights["rllib"].keys()
    for key, value in weights["rows"].items():
        assert torch.equal(value, weights["rllib"][key]), key


# --- settings -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"num_envs_per_env_runner": 0}, "num_envs_per_env_runner"),
        ({"num_env_runners": -1}, "num_env_runners"),
        ({"num_learners": -1}, "num_learners"),
        ({"obs_mode": "dict"}, "obs_mode"),
        ({"ray": " local"}, "ray"),
        ({"ray": ""}, "ray"),
        ({"minibatches": 10_000}, "minibatches"),
        ({"variant": "nope"}, "variant"),
        ({"gamma": 0.0}, "gamma"),
        ({"hidden": 0}, "hidden"),
        ({"env_runner": "fast"}, "env_runner"),
        ({"precision": "float16"}, "precision"),
        ({"torch_threads": -1}, "torch_threads"),
    ],
)
def test_bad_settings_are_refused_naming_the_setting(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(SettingsError) as err:
        RLlibSettings(**kwargs)
    assert err.value.field == field


def test_an_unreachable_cluster_is_one_line_naming_it(tmp_path: Path) -> None:
    from ray_cluster import free_port

    address = f"127.0.0.1:{free_port()}"
    with pytest.raises(SettingsError, match=f"ray: cannot reach a Ray cluster at {address}"):
        train(RLlibSettings(ray=address, out=str(tmp_path), **TINY))


def test_more_runners_and_learners_than_the_cluster_s_cpus_are_refused(
    cluster: str, tmp_path: Path
) -> None:
    with pytest.raises(SettingsError, match="need 3 CPUs, the Ray cluster has 2") as err:
        train(RLlibSettings(ray=cluster, num_env_runners=2, num_learners=1, out=str(tmp_path),
                            **TINY))  # fmt: skip
    assert err.value.field == "num_learners"
    assert not list(tmp_path.iterdir())  # nothing written


def test_the_config_builds_spider_vector_env_through_the_vector_entry_point() -> None:
    import ray

    s = RLlibSettings(suits=2, **TINY)
    config = ppo_config(s)
    assert config.gym_env_vectorize_mode in ("vector_entry_point", "VECTOR_ENTRY_POINT") or (
        getattr(config.gym_env_vectorize_mode, "value", None) == "vector_entry_point"
    )
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR")
    try:
        algo = config.build_algo()
        env = algo.env_runner.env
        assert isinstance(env.unwrapped, SpiderVectorEnv) and env.num_envs == 8
        assert env.unwrapped.variant.name == "spider-2suit"
        algo.stop()
    finally:
        ray.shutdown()


REGISTERED = """
import ray
from spider_env.agents.rl.rllib import RAY_ENV, RLlibSettings, ppo_config, register_env
from spider_env.vector import SpiderVectorEnv

s = RLlibSettings(suits=2, num_env_runners=1, num_envs_per_env_runner=4, n_steps=4, hidden=8)
ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR")
assert register_env() == RAY_ENV
algo = ppo_config(s).environment(RAY_ENV, env_config=s.env_config()).build_algo()
result = algo.train()
kinds = algo.env_runner_group.foreach_env_runner(  # the remote runner chooses compiled
    lambda r: (type(r.env.unwrapped).__name__, r.env.num_envs, type(r.choice()).__name__),
    local_env_runner=False,
)
print(kinds, result["env_runners"]["num_env_steps_sampled_lifetime"])
algo.stop()
ray.shutdown()
"""


def test_a_config_can_name_the_registered_env() -> None:
    # a process of its own: Ray's registry files the name under the process's first Ray job
    proc = subprocess.run([sys.executable, "-c", REGISTERED], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    kinds, steps = proc.stdout.strip().splitlines()[-1].rsplit(" ", 1)
    assert kinds == "[('SpiderVectorEnv', 4, 'CompiledChoice')]" and float(steps) >= 16


# --- training on a cluster ----------------------------------------------------------------------
class UnmaskedModule(ActionSetRLModule):
    """The action-set module without the mask: it picks illegal actions."""

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        logits, _ = self._logits_latent(batch[Columns.OBS])
        return {Columns.ACTION_DIST_INPUTS: torch.zeros_like(logits)}


class UnmaskedRowsModule(ActionRowsRLModule):
    """The rows module without the row flags: it picks rows without an action."""

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        logits, _ = self._logits_latent(batch[Columns.OBS])
        return {Columns.ACTION_DIST_INPUTS: torch.zeros_like(logits)}


@pytest.mark.parametrize("obs_mode", ["rows", "actions"])
def test_training_with_a_policy_that_ignores_the_mask_fails(obs_mode: str) -> None:
    import ray
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    s = RLlibSettings(obs_mode=obs_mode, **TINY)
    cls = UnmaskedRowsModule if obs_mode == "rows" else UnmaskedModule
    config = ppo_config(s).rl_module(
        rl_module_spec=RLModuleSpec(module_class=cls, model_config={"hidden": 16})
    )
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR")
    try:
        algo = config.build_algo()
        with pytest.raises(RuntimeError) as err:  # RLlib's, from the env's error
            algo.train()
        assert isinstance(err.value.__cause__, IllegalMoveError)
        algo.stop()
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def trained(cluster: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """A few iterations of PPO on the test cluster (2 CPUs): an env runner and a learner, each a
    Ray actor."""
    out = tmp_path_factory.mktemp("rllib")
    s = RLlibSettings(suits=1, ray=cluster, num_env_runners=1, num_learners=1, timesteps=400,
                      eval_deals=3, out=str(out), no_progress=True, **TINY)  # fmt: skip
    return train(s), out


def test_training_on_a_cluster_takes_no_illegal_action_and_saves_everything(
    trained: tuple[dict[str, Any], Path], cluster: str
) -> None:
    summary, out = trained
    assert summary["backend"] == f"ray {cluster}"
    assert summary["timesteps"] >= 400 and summary["iterations"] >= 2
    assert (out / "model.zip").is_file() and (out / "model.json").is_file()
    assert (
        summary["model"] == str(out / "model.safetensors") and (out / "model.safetensors").is_file()
    )
    assert (out / "checkpoint").is_dir()
    assert summary["validation"]["deals"] == "1000:1003"
    lines = (out / "progress.csv").read_text().splitlines()
    assert lines[0].startswith("iteration,timesteps") and len(lines) == summary["iterations"] + 1


def test_the_restored_checkpoint_chooses_as_the_exported_model(
    trained: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    from spider_env.agents.rl.models import load_model

    _, out = trained
    module = restore_module(out / "checkpoint")
    again = export_model(module, RLlibSettings(hidden=16, eval_deals=0), tmp_path / "m.zip", {})
    saved, restored = load_model(out / "model.zip"), load_model(again)
    for a, b in zip(saved.policy.state_dict().values(), restored.policy.state_dict().values()):
        assert torch.equal(a, b)
    env = env_of("rows", num_envs=8, variant="spider-1suit")  # trained with the default
    obs, _ = env.reset(seed=2)
    with torch.no_grad():
        logits = module.forward_inference(as_batch(obs))[Columns.ACTION_DIST_INPUTS]
    theirs, _ = saved.predict(as_actions_obs(env, obs), action_masks=env.unwrapped.action_masks(),
                              deterministic=True)  # fmt: skip
    ours = env.row_action_ids[np.arange(8), logits.argmax(-1).numpy()]
    assert (ours >= 0).all()  # every game has a legal action at the start
    np.testing.assert_array_equal(ours, theirs)


def test_spider_env_evaluate_plays_the_exported_model(trained: tuple[dict[str, Any], Path]) -> None:
    _, out = trained
    cli = Path(sys.executable).with_name("spider-env")
    proc = subprocess.run(
        [str(cli), "evaluate", "--agent", str(out / "model.safetensors"), "--agent", "random",
         "--suits", "1", "--deals", "1000:1003", "--no-progress"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "model.safetensors" in proc.stdout and "random" in proc.stdout


def test_a_missing_checkpoint_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="not an RLlib PPO checkpoint"):
        restore_module(tmp_path)


# --- the example script -------------------------------------------------------------------------
def test_the_example_trains_on_a_local_ray_and_prints_the_summary(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "rllib_ppo.py"), "--timesteps", "64",
         "--num-envs-per-env-runner", "8", "--n-steps", "8", "--hidden", "16",
         "--eval-deals", "0", "--out", str(tmp_path), "--no-progress"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert '"backend": "ray local"' in proc.stdout
    assert (tmp_path / "model.zip").is_file() and (tmp_path / "model.safetensors").is_file()


def test_the_driver_s_torch_threads_are_chosen_from_the_free_cores_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``torch_threads=0`` (the default): ``train`` chooses the driver's threads as the batched
    PPO does, prints the choice first and keeps it in the summary; the set-up's objects are
    frozen while it trains, and said."""
    import gc

    import torch

    assert RLlibSettings().torch_threads == 0
    before = torch.get_num_threads()
    try:
        summary = train(RLlibSettings(timesteps=64, eval_deals=0, out=str(tmp_path), **TINY))
        lines = capsys.readouterr().out.splitlines()
        assert lines[0] == f"torch threads: {summary['torch_threads_chosen']}"
        assert any(x.startswith("garbage collector: the set-up's ") for x in lines)
        assert gc.get_freeze_count() == 0  # unfrozen when training ends
        assert "cores usable" in summary["torch_threads_chosen"]
        assert summary["torch_threads"] == torch.get_num_threads() >= 1
    finally:
        torch.set_num_threads(before)


# --- the README's RLlib snippets ----------------------------------------------------------------
@pytest.mark.parametrize(("at", "code"), RLLIB_PYTHON, ids=[at for at, _ in RLLIB_PYTHON])
def test_readme_rllib_snippet_runs(at: str, code: str, tmp_path: Path) -> None:
    run_snippet(at, code, tmp_path)


def test_the_readme_has_rllib_snippets() -> None:
    assert len(RLLIB_PYTHON) >= 2
