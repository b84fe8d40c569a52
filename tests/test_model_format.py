"""The one model format (the sidecar next to a model's zip), read without torch; the model
player scores with a plain function and never imports torch or Stable-Baselines3."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from spider_env.agents.model import SB3Agent, ScoringModel
from spider_env.agents.model_format import (
    FORMAT,
    LEGACY_FORMAT,
    MOVED_POLICIES,
    EnvSettings,
    ModelLoadError,
    Sidecar,
    sidecar_variant,
)

from spider_env.env import SpiderEnv
from spider_env.observation import observation_space

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "docs" / "models"

# The shipped sidecars as the format-1 writers wrote them (before they were rewritten in
# format 2); their zips are unchanged.
OLD_RL_1SUIT = {
    "format": "spider-env-sb3-model 1",
    "algo": "MaskablePPO",
    "policy": "spider_env.agents.rl_policy.ActionSetPolicy",
    "use_masking": True,
    "deterministic": True,
    "env_id": "Spider-v0",
    "env_kwargs": {
        "variant": "spider-1suit",
        "obs_mode": "actions",
        "feature_slots": 96,
        "reward_mode": "runs",
    },
    "max_episode_steps": 1000,
    "stage": "MaskablePPO fine-tuning",
    "from": "runs/rl_1suit/bc.zip",
    "bc": {"teacher": "lookahead", "demonstrations": "runs/rl_1suit/demos.npz", "epochs": 6},
    "timesteps": 501760,
    "chosen_timesteps": 501760,
    "validation_deals": "1000:1200",
    "validation_win_rate": 0.735,
    "wall_time_s": 1614.6,
    "train_time_s": 899.1,
    "hyperparameters": {
        "n_envs": 8,
        "n_steps": 256,
        "batch_size": 256,
        "n_epochs": 4,
        "learning_rate": 5e-05,
        "clip_range": 0.1,
        "ent_coef": 0.0,
        "gamma": 0.995,
    },
    "seed": 0,
}
OLD_MASKABLE_PPO_1SUIT = {
    "format": "spider-env-sb3-model 1",
    "algo": "MaskablePPO",
    "policy": "MlpPolicy",
    "use_masking": True,
    "deterministic": False,
    "env_id": "Spider-v0",
    "env_kwargs": {
        "suits": 1,
        "obs_mode": "flat",
        "feature_slots": 6,
        "reward_mode": "shaped",
        "illegal_action": "penalize",
    },
    "max_episode_steps": 1000,
    "timesteps": 1000000,
    "trained_timesteps": 1000000,
    "wall_time_s": 3969.7,
    "seed": 0,
    "train_deals": "10000:4294967296",
    "validation_deals": "1000:1050",
    "stopped_early_from_checkpoint": "MaskablePPO_1000000_steps.zip",
    "test_result": {
        "win_rate": 0.0,
        "ci95": [0.0, 0.0038267584855551234],
        "mean_completed_runs": 2.392,
        "deals": "0:1000",
    },
}


def _without_format(side: Sidecar) -> Sidecar:
    return side.replace(format=FORMAT)


@pytest.mark.parametrize(
    ("name", "old"),
    [("rl_1suit_recipe", OLD_RL_1SUIT), ("maskable_ppo_1suit", OLD_MASKABLE_PPO_1SUIT)],
)
def test_old_sidecars_read_as_the_rewritten_shipped_ones(name: str, old: dict[str, Any]) -> None:
    legacy = Sidecar.from_dict(old)
    assert legacy.format == LEGACY_FORMAT
    shipped = Sidecar.read(MODELS / f"{name}.zip")
    assert shipped is not None and shipped.format == FORMAT
    assert _without_format(legacy) == shipped
    assert shipped.env.variant == "spider-1suit" and shipped.algo == "MaskablePPO"


def test_the_old_action_slots_are_action_rows_and_the_moved_policy_its_new_name() -> None:
    side = Sidecar.from_dict(OLD_RL_1SUIT)
    assert side.env.obs_mode == "actions" and side.env.action_rows == 96
    assert side.env.input_size() == {"action_rows": 96}
    assert side.policy == MOVED_POLICIES["spider_env.agents.rl_policy.ActionSetPolicy"]
    assert side.training["chosen_timesteps"] == 501760 and "env_id" not in side.training


def test_the_moved_policy_name_is_the_class_training_saves() -> None:
    pytest.importorskip("sb3_contrib")
    from spider_env.agents.rl.models import ACTION_SET_POLICY

    assert set(MOVED_POLICIES.values()) == {ACTION_SET_POLICY}


def test_a_sidecar_round_trips_and_names_only_its_modes_size(tmp_path: Path) -> None:
    env = EnvSettings("spider-2suit undo=true", "flat", feature_slots=4, reward_mode="shaped")
    side = Sidecar(env, "PPO", "MlpPolicy", deterministic=False, training={"seed": 3})
    path = side.write(tmp_path / "m.zip")
    assert path == tmp_path / "m.json"
    data = json.loads(path.read_text())
    assert data["format"] == FORMAT and data["use_masking"] is False
    assert data["env_kwargs"] == {
        "variant": "spider-2suit undo=true",
        "obs_mode": "flat",
        "feature_slots": 4,
        "reward_mode": "shaped",
        "illegal_action": "penalize",
    }
    assert Sidecar.read(tmp_path / "m.zip") == side
    assert sidecar_variant(tmp_path / "m.zip") == env.game()
    assert env.game() is not None and env.game().undo  # type: ignore[union-attr]


def test_no_sidecar_reads_as_none(tmp_path: Path) -> None:
    assert Sidecar.read(tmp_path / "m.zip") is None
    assert sidecar_variant(tmp_path / "m.zip") is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "spider-env-model 9"}, "format 'spider-env-model 9'"),
        ({"algo": None}, "lacks 'algo'"),
        ({"algo": "SAC"}, "algo='SAC'"),
        ({"deterministic": "yes"}, "deterministic='yes'"),
        ({"training": None}, "lacks 'training'"),
        ({"max_episode_steps": 0}, "max_episode_steps=0"),
        (
            {
                "env_kwargs": {
                    "obs_mode": "actions",
                    "action_rows": 96,
                    "reward_mode": "runs",
                    "illegal_action": "penalize",
                }
            },
            "lacks 'variant'",
        ),
        (
            {
                "env_kwargs": {
                    "variant": "spider-1suit",
                    "obs_mode": "actions",
                    "reward_mode": "runs",
                    "illegal_action": "penalize",
                }
            },
            "action_rows=None",
        ),
        ({"env_kwargs": {"variant": "nope", "obs_mode": "flat", "feature_slots": 6}}, "nope"),
        ({"env_kwargs": {"variant": "spider-1suit", "obs_mode": "pixels"}}, "obs_mode='pixels'"),
    ],
)
def test_a_bad_sidecar_is_refused_naming_what_is_wrong(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    good = Sidecar.read(MODELS / "rl_1suit_recipe.zip")
    assert good is not None
    data = {**good.to_dict(), **change}
    (tmp_path / "m.json").write_text(json.dumps(data))
    with pytest.raises(ModelLoadError, match=message):
        Sidecar.read(tmp_path / "m.zip")


def test_writing_refuses_what_could_not_be_read_back(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="lacks 'algo'"):
        Sidecar(EnvSettings("spider-1suit", "dict", reward_mode="score")).write(tmp_path / "m.zip")
    assert not (tmp_path / "m.json").exists()


def test_a_partial_old_sidecar_leaves_unsaid_fields_open() -> None:
    side = Sidecar.from_dict({"deterministic": True})
    assert side.format == LEGACY_FORMAT and side.deterministic is True
    assert side.env.variant is None and side.env.obs_mode is None and side.algo is None
    side = Sidecar.from_dict({"env_kwargs": {"suits": 2, "undo": True, "obs_mode": "flat"}})
    assert side.env.variant == "spider-2suit undo=true" and side.env.feature_slots == 6


def test_reading_models_and_sidecars_imports_no_torch() -> None:
    code = (
        "import sys\n"
        "import spider_env.agents, spider_env.agents.rl, spider_env.agents.model\n"
        "from spider_env.agents.model_format import Sidecar\n"
        "from spider_env.agents.rl import cloning, envs, measure, plots, ppo, sb3_train, settings\n"
        "Sidecar.read('docs/models/rl_1suit_recipe.zip')\n"
        "loaded = [m for m in ('torch', 'stable_baselines3', 'sb3_contrib') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr


def test_the_player_plays_a_plain_scoring_function() -> None:
    # no torch: scores from NumPy; the most likely legal action is played, sampling is seeded
    env = SpiderEnv(suits=1)
    obs, info = env.reset(options={"deal": 0})
    mask = info["action_mask"]
    n = env.variant.n_actions
    prefs = np.random.default_rng(0).normal(size=n)
    seen: list[Any] = []

    def scores(x: Any) -> np.ndarray:
        seen.append(x)
        return prefs

    model = ScoringModel(scores, observation_space(env.variant, "flat", 6), n)
    likely = SB3Agent(model, env.variant, "flat", feature_slots=6, deterministic=True)
    legal = np.flatnonzero(mask)
    assert likely.act(obs, mask, info) == legal[np.argmax(prefs[legal])]
    assert seen[-1].shape == model.observation_space.shape  # the flat encoding, rebuilt
    picks = [SB3Agent(model, env.variant, "flat", seed=1).act(obs, mask, info) for _ in range(2)]
    assert picks[0] == picks[1] and mask[picks[0]]
    with pytest.raises(ModelLoadError, match="another variant"):
        SB3Agent(ScoringModel(scores, model.observation_space, 7), env.variant, "flat")


@pytest.mark.parametrize(
    ("obs_mode", "mask_in_obs"),
    [("dict", True), ("dict", False), ("features", True), ("features", False), ("flat", False)],
)
def test_the_player_rebuilds_the_envs_observation_of_its_mode(
    obs_mode: str, mask_in_obs: bool
) -> None:
    # from the dict observation a player is given, over a game of random moves
    variant = "spider-2suit"
    plain = SpiderEnv(variant=variant)
    theirs = SpiderEnv(variant=variant, obs_mode=obs_mode, feature_slots=4, mask_in_obs=mask_in_obs)
    space = theirs.observation_space
    n = theirs.variant.n_actions
    model = ScoringModel(lambda x: np.zeros(n), space, n)
    agent = SB3Agent(model, variant, obs_mode, feature_slots=4)
    rng = np.random.default_rng(0)
    obs, info = plain.reset(options={"deal": 3})
    want, _ = theirs.reset(options={"deal": 3})
    for _ in range(40):
        got = agent.encode(obs, info["action_mask"])
        if isinstance(want, dict):
            assert set(got) == set(want)
            for key in want:
                np.testing.assert_array_equal(got[key], want[key], err_msg=key)
        else:
            np.testing.assert_array_equal(got, want)
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, _, term, trunc, info = plain.step(a)
        want, *_ = theirs.step(a)
        if term or trunc:
            break
