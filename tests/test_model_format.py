"""The sidecar next to a Stable-Baselines3 zip (format 2, and the old format 1), read without
torch. The model file and the model player: tests/test_model_file.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from spider_env.agents.model_format import (
    FORMAT,
    LEGACY_FORMAT,
    MOVED_POLICIES,
    EnvSettings,
    ModelLoadError,
    Sidecar,
    sidecar_variant,
)

ROOT = Path(__file__).resolve().parents[1]

# Two sidecars of the models once shipped, as the format-1 writers wrote them.
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


def test_old_sidecars_read_as_format_2_and_are_rewritten_in_it() -> None:
    recipe = Sidecar.from_dict(OLD_RL_1SUIT)
    assert recipe.format == LEGACY_FORMAT
    assert recipe.env == EnvSettings("spider-1suit", "actions", action_rows=96, reward_mode="runs")
    assert recipe.algo == "MaskablePPO" and recipe.deterministic is True
    flat = Sidecar.from_dict(OLD_MASKABLE_PPO_1SUIT)
    assert flat.env == EnvSettings("spider-1suit", "flat", feature_slots=6, reward_mode="shaped")
    assert flat.policy == "MlpPolicy" and flat.deterministic is False
    assert flat.training["test_result"]["deals"] == "0:1000"
    for old in (recipe, flat):
        rewritten = Sidecar.from_dict(json.loads(json.dumps(old.to_dict())))
        assert rewritten.format == FORMAT and rewritten == old.replace(format=FORMAT)


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
    data = {**Sidecar.from_dict(OLD_RL_1SUIT).to_dict(), **change}
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


def test_reading_sidecars_and_importing_the_players_imports_no_torch(tmp_path: Path) -> None:
    (tmp_path / "m.json").write_text(json.dumps(OLD_RL_1SUIT))
    code = (
        "import sys\n"
        "import spider_env.agents, spider_env.agents.rl, spider_env.agents.model\n"
        "import spider_env.agents.model_file, spider_env.agents.networks\n"
        "from spider_env.agents.model_format import Sidecar\n"
        "from spider_env.agents.rl import cloning, envs, measure, plots, ppo, sb3_train, settings\n"
        f"assert Sidecar.read({str(tmp_path / 'm.zip')!r}).env.variant == 'spider-1suit'\n"
        "loaded = [m for m in ('torch', 'stable_baselines3', 'sb3_contrib') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
