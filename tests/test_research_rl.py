"""The RL experiments of ``research/rl/`` run end to end on tiny budgets, and refuse bad flags as
every script does (one line naming the flag, status 2, nothing written): the RL recipe
(``recipe.py run``, ``finetune``, ``plot``) and the suit curricula (``curriculum.py``, with the
unit tests of its pieces)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib", reason="the RL experiments need the 'train' extra")

import spider_env
from spider_env.env import SpiderEnv
from spider_env.observation import FeatureEncoder

ROOT = Path(__file__).resolve().parents[1]
RESEARCH = ROOT / "research" / "rl"


def load(name: str) -> ModuleType:
    """The research script ``research/rl/<name>.py`` as a module (``research_rl_<name>``)."""
    module_name = f"research_rl_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, RESEARCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # (dataclasses and the settings' type hints look it up)
    spec.loader.exec_module(module)
    return module


def _script(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(RESEARCH / name), *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)  # fmt: skip


def test_every_script_has_its_help_and_the_readme_names_it() -> None:
    readme = (RESEARCH / "README.md").read_text(encoding="utf-8")
    for path in sorted(RESEARCH.glob("*.py")):
        assert path.name in readme, path.name
        assert load(path.stem).build_parser().format_help()


def test_every_setting_of_every_experiment_is_documented() -> None:
    from dataclasses import fields

    from spider_env.agents.rl.settings import field_docs

    recipe, curriculum = load("recipe"), load("curriculum")
    for cls in (recipe.RecipeSettings, recipe.FinetuneSettings, recipe.PlotSettings,
                curriculum.CurriculumSettings):  # fmt: skip
        docs = field_docs(cls)
        assert set(docs) == {f.name for f in fields(cls)} and all(docs.values()), cls


# --- the RL recipe ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def recipe_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A whole recipe with tiny budgets, in this process."""
    d = tmp_path_factory.mktemp("recipe")
    summary = load("recipe").main(["run", "--tiny", "--dir", str(d), "--jobs", "1"])
    assert summary["model"] == str(d / "model.safetensors")
    assert summary["checkpoint"] == str(d / "model.zip")
    return d


def test_the_recipe_writes_its_models_curves_baselines_and_wall_times(recipe_run: Path) -> None:
    for name in ("demos.npz", "bc.zip", "bc.safetensors", "bc_curve.csv", "ppo.zip",
                 "ppo.safetensors", "ppo_curve.csv", "model.zip", "model.json",
                 "model.safetensors", "baselines.json", "learning_curves.png"):  # fmt: skip
        assert (recipe_run / name).exists(), name
    summary = json.loads((recipe_run / "recipe.json").read_text())
    assert set(summary["wall_time_s"]) == {"demonstrations", "behaviour cloning", "fine-tuning",
                                           "baselines"}  # fmt: skip
    side = json.loads((recipe_run / "model.json").read_text())
    assert side["env_kwargs"]["obs_mode"] == "actions"
    assert side["env_kwargs"]["variant"] == "spider-1suit"
    assert side["training"]["stage"] == "MaskablePPO fine-tuning"
    base = json.loads((recipe_run / "baselines.json").read_text())
    assert set(base) >= {"random", "greedy", "lookahead"}


def test_the_plot_redraws_a_run_and_the_model_plays_through_evaluate(
    recipe_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "c.png"
    assert load("recipe").main(["plot", "--dir", str(recipe_run), "--out", str(out)]) == {
        "plot": str(out)
    }
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from spider_env.apps.evaluation import evaluate

    res = evaluate(str(recipe_run / "model.safetensors"), range(1000, 1002), max_steps=50,
                   variant="spider-1suit")  # fmt: skip
    assert [r.deal for r in res.records] == [1000, 1001]


def test_the_recipes_model_file_reads_back_and_plays_as_its_zip(recipe_run: Path) -> None:
    from model_checks import assert_plays_as_native, sb3_choice
    from spider_env.agents.rl.models import load_model

    assert (recipe_run / "model.safetensors").read_bytes() == (
        recipe_run / "ppo.safetensors"
    ).read_bytes()
    native = sb3_choice(load_model(recipe_run / "ppo.zip"))
    saved = assert_plays_as_native(recipe_run / "ppo.safetensors", native)
    assert saved.training["stage"] == "MaskablePPO fine-tuning"
    assert saved.training["from"] == "bc.zip"  # no absolute path in a shared file
    assert sorted(p.name for p in (recipe_run / "ppo_checkpoints").glob("*.safetensors"))


def test_the_plot_without_baselines_says_how_to_play_them(tmp_path: Path) -> None:
    for name in ("bc_curve.csv", "ppo_curve.csv"):
        (tmp_path / name).write_text("epoch,timesteps,win_rate_argmax\n1,0,0.5\n")
    out = _script("recipe.py", "plot", "--dir", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 2
    [line] = out.stderr.strip().splitlines()
    assert "--dir" in line and "--compute-baselines VARIANT:START:STOP" in line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--jobs", "0"], "--jobs"),
        (["run", "--demo-deals", "990:1010"], "--demo-deals"),
        (["run", "--teacher", "nosuch"], "nosuch"),
        (["finetune", "--bc", "missing.zip"], "missing.zip"),
        (["finetune", "--timesteps", "0"], "--timesteps"),
        (["finetune", "--gamma", "2"], "--gamma"),
        (["plot", "--dir", "no-such-dir"], "no-such-dir"),
        (["plot", "--compute-baselines", "bad"], "VARIANT:START:STOP"),
        (["nosuch"], "nosuch"),
        ([], "required"),
    ],
)
def test_recipe_errors_are_one_line_with_status_2(
    args: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # the default output paths are relative
    with pytest.raises(SystemExit) as exc:
        load("recipe").main(args)
    assert exc.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("script", "args", "message"),
    [
        ("rollout_probes", ["encoder", "--n", "0"], "--n"),
        ("rollout_probes", ["encoder", "--suits", "3"], "--suits"),
        ("rollout_probes", ["split", "--main-part", "255"], "--main-part"),
        ("rollout_probes", ["split", "--hidden", "x"], "--hidden"),
        ("rollout_probes", [], "required"),
        ("rollout_probes", ["rows", "--steps", "0"], "--steps"),
        ("update_probes", ["--steps", "0"], "--steps"),
        ("update_probes", ["--ways", "lazy"], "--ways"),
        ("update_probes", ["--n", "1", "--steps", "4"], "at least 8"),
        ("update_probes", ["--row-block", "0"], "--row-block"),
        ("update_probes", ["--precision", "float16"], "--precision"),
        ("update_probes", ["--gap", "no/such/model.zip"], "no such model file"),
        ("update_probes", ["--gap", __file__], "no sidecar naming its game"),
        ("rllib_parts", ["--updates", "0"], "--updates"),
        ("rllib_parts", ["--memory", "lots"], "--memory"),
        ("rllib_parts", ["--runners", "-1"], "--runners"),
        ("rllib_parts", ["--num-envs", "4", "--runners", "5"], "--runners"),
    ],
)
def test_probe_errors_are_one_line_with_status_2(
    script: str, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        load(script).main(args)
    assert exc.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines


def test_the_rows_probe_counts_the_rows_each_decision_uses() -> None:
    used = load("rollout_probes").rows_used_in_play(suits=1, n=4, steps=5)
    assert used.shape == (20,) and used.min() >= 1 and used.max() <= 96


def test_the_update_probe_times_each_way_of_a_pass_and_profiles_the_trainers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    probes = load("update_probes")
    runs = probes.main(["--n", "4", "--steps", "4", "--rounds", "2", "--ways", "eager", "one",
                        "halves"])  # fmt: skip
    assert list(runs) == ["eager", "one", "halves"]
    assert all(len(r) == 2 and all(w > 0 and c > 0 for w, c in r) for r in runs.values())
    assert probes.main(["--profile", "--n", "4", "--steps", "4"]) == {}
    from spider_env.agents.rl import action_set_net

    runs = probes.main(["--n", "4", "--steps", "4", "--rounds", "1", "--ways", "halves",
                        "--precision", "bfloat16", "--row-block", "1"])  # fmt: skip
    assert len(runs["halves"]) == 1
    assert action_set_net.ActionSetLayers.row_dtype is None  # put back
    assert action_set_net.ROW_BLOCK == 256
    gaps = probes.precision_gap(None, 1, 4, 4)
    assert 0 < gaps["logp_gap_mean"] <= gaps["logp_gap_p99"] <= gaps["logp_gap_max"] < 0.05
    assert 0 <= gaps["kl_mean"] < 1e-3 and gaps["value_gap_mean"] > 0
    assert action_set_net.ActionSetLayers.row_dtype is None
    assert "aten::" in capsys.readouterr().out


def test_the_encoder_probe_times_a_step_of_the_per_action_observation() -> None:
    us = load("rollout_probes").encoder(suits=1, n=4, steps=20)
    assert 0 < us < 10_000


def test_finetuning_refuses_a_model_that_is_not_an_action_set_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "flat.zip").write_text("not a model")
    with pytest.raises(SystemExit):
        load("recipe").main(["finetune", "--bc", str(tmp_path / "flat.zip"),
                             "--out", str(tmp_path / "o" / "ppo.zip")])  # fmt: skip
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "--bc" in line and "no sidecar" in line
    assert not (tmp_path / "o").exists()


# --- suit curricula -----------------------------------------------------------------------------
TINY = [
    "--timesteps", "256", "--n-envs", "2", "--n-steps", "64", "--batch-size", "64",
    "--n-epochs", "1", "--net-arch", "32", "--max-episode-steps", "40", "--eval-episodes", "2",
    "--checkpoint-freq", "128",
]  # fmt: skip


def test_the_curriculum_trains_and_validates_every_stage(tmp_path: Path) -> None:
    summary = load("curriculum").main([*TINY, "--out", str(tmp_path), "--threshold", "0.5"])
    assert summary["stages"] == [1, 2, 4]
    assert set(summary["validation"]) == {"1 suit(s)", "2 suit(s)", "4 suit(s)"}
    assert (tmp_path / "model.zip").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--vec", "spider"], "--vec"),
        (["--stages", "1,3"], "--stages"),
        (["--threshold", "0"], "--threshold"),
        (["--window", "0"], "--window"),
        (["--no-masks"], "unrecognized"),
    ],
)
def test_curriculum_errors_are_one_line_with_status_2(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        load("curriculum").main([*args, "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert not (tmp_path / "out").exists()


def test_curriculum_moves_on_only_after_a_full_window_above_threshold() -> None:
    c = load("curriculum").Curriculum((1, 2, 4), threshold=0.5, window=4)
    assert c.suits == 1
    for won in (True, True, True):
        assert not c.record(won)  # window not full yet
    assert c.record(False)  # 3 of 4 = 0.75 >= 0.5
    assert c.suits == 2 and c.win_rate == 0.0  # the window starts empty at a new stage
    assert not c.record(True, stage=0)  # a game of the old stage is ignored
    for won in (False, False, False, True):
        assert not c.record(won)  # 1 of 4 = 0.25
    assert c.record(True)  # the last 4: F F T T = 0.5 >= 0.5
    assert c.suits == 4 and c.is_last
    for _ in range(10):
        assert not c.record(True)  # the last stage never ends
    assert c.history == [(0, 4), (1, 9)]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"stages": ()}, ValueError, "at least one stage"),
        ({"stages": (1, 3)}, ValueError, "suit counts"),
        ({"threshold": 0.0}, ValueError, "threshold"),
        ({"window": 0}, ValueError, "window"),
        ({"window": 2.0}, TypeError, "window"),
    ],
)
def test_curriculum_rejects_bad_settings(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        load("curriculum").Curriculum(**kwargs)


def test_suit_curriculum_observation_is_the_widest_stage_layout() -> None:
    env = load("curriculum").SuitCurriculum(stages=(1, 2, 4), obs_mode="flat")
    obs, info = env.reset(options={"deal": 7})
    assert info["suits"] == 1 and info["curriculum_stage"] == 0
    assert env.observation_space.contains(obs)
    # a 1-suit position, widened, reads like the 4-suit encoding of the same cards (all spades)
    state = spider_env.new_game("spider-1suit", 7)
    cols, _ = FeatureEncoder(spider_env.classic(4), 6).encode(state)
    np.testing.assert_array_equal(obs[: cols.size].reshape(cols.shape), cols)
    assert env.action_masks().sum() == len(spider_env.legal_actions(state))
    env.set_stage(2)
    assert env.suits == 1  # takes effect at the next reset
    _, info = env.reset()
    assert info["suits"] == 4
    with pytest.raises(ValueError, match="stage"):
        env.set_stage(3)
    with pytest.raises(ValueError, match="learning encoding"):
        load("curriculum").SuitCurriculum(obs_mode="dict")
    with pytest.raises(ValueError, match="suits"):
        load("curriculum").SuitCurriculum(suits=2)


def test_suit_curriculum_passes_gymnasium_check_env() -> None:
    from gymnasium.utils.env_checker import check_env

    env = load("curriculum").SuitCurriculum(obs_mode="features", max_episode_steps=50)
    check_env(env, skip_render_check=True)


def test_the_sb3_callback_sets_the_stage_of_every_training_env() -> None:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    curriculum = load("curriculum")

    class AlwaysWon(curriculum.Curriculum):  # type: ignore[name-defined,misc]
        def record(self, won: bool, stage: int | None = None) -> bool:
            return bool(super().record(True, stage))

    cur = AlwaysWon(window=1)

    def make() -> gym.Env[Any, Any]:
        return Monitor(curriculum.SuitCurriculum(max_episode_steps=10))

    venv = DummyVecEnv([make, make])
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0)
    model.learn(64, callback=curriculum.sb3_curriculum_callback(cur))
    assert cur.stage == 2
    assert venv.get_attr("stage") == [2, 2]
    # and an env with its own curriculum advances itself
    env = curriculum.SuitCurriculum(curriculum=AlwaysWon(window=1), max_episode_steps=3)
    env.reset(seed=0)
    seen = set()
    for _ in range(12):
        _obs, _, term, trunc, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        seen.add(info["suits"])
        if term or trunc:
            env.reset()
    assert seen == {1, 2, 4}


def test_suit_curriculum_offers_the_render_modes_of_its_stages_envs() -> None:
    pytest.importorskip("PIL", reason="rgb_array needs the render extra")
    curriculum = load("curriculum")
    assert curriculum.SuitCurriculum.metadata["render_modes"] == SpiderEnv.metadata["render_modes"]
    env = curriculum.SuitCurriculum(stages=(1, 2), obs_mode="flat", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3


def test_ship_model_writes_the_card_from_the_test_record(tmp_path: Path) -> None:
    """research/rl/ship_model.py: the card's figures are the record's; a record of another
    model is one line, status 2."""
    import shutil

    from spider_env.agents.model_file import SavedModel

    root = RESEARCH.parent.parent
    shutil.copytree(root / "docs" / "models", tmp_path / "docs" / "models")
    shutil.copytree(root / "docs" / "rl", tmp_path / "docs" / "rl")
    out = "docs/models/planner_2suit.safetensors"
    args = ["--model", out, "--out", out, "--record", "docs/rl/test_planner_2suit.json",
            "--title", "t", "--trained", "x", "--training-command", "make y"]  # fmt: skip
    done = _script("ship_model.py", *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    card = SavedModel.read(tmp_path / out).card
    record = json.loads((tmp_path / "docs/rl/test_planner_2suit.json").read_text())
    assert card["test_win_rate"] == record["summaries"][0]["win_rate"]
    assert card["evaluation_command"].startswith(f"spider-env evaluate --agent {out}")
    for wrong in (
        [*args[:5], "docs/rl/test_fast_2suit.json", *args[6:]],  # another model's record
        [*args[:5], "docs/rl/missing.json", *args[6:]],
        args[:4],  # flags missing
    ):
        bad = _script("ship_model.py", *wrong, cwd=tmp_path)
        assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
