"""The SB3 training example and the tools beside it (smoke runs with a tiny budget).

``train_maskable_ppo.py`` runs for a few hundred steps (seconds), with masks and without, then
the saved model is loaded and played through the ``spider-env evaluate`` command line and
``evaluate_trained_model.py``; ``plot_learning_curves.py`` and ``compare_records.py`` read what
runs and evaluations wrote.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from spider_env.env import SpiderEnv
from spider_env.wrappers import DealRange

pytest.importorskip("sb3_contrib", reason="the training examples need the 'train' extra")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES))  # the example scripts, imported to call their main()

TINY = [
    "--timesteps", "256",
    "--n-envs", "2",
    "--n-steps", "64",
    "--batch-size", "64",
    "--n-epochs", "1",
    "--net-arch", "32",
    "--max-episode-steps", "40",
    "--eval-freq", "128",
    "--eval-episodes", "2",
    "--eval-envs", "2",
    "--checkpoint-freq", "128",
]  # fmt: skip


# Every test here runs with SpiderEnv.state and ._state refusing to be read from the examples'
# code: the examples must play from the observation, the action mask and info alone.
STATE_READS: list[str] = []
_FORWARDING = frozenset({"__getattr__", "get_wrapper_attr", "has_wrapper_attr"})


def _example_reader() -> str | None:
    """``file:line`` of the code reading the attribute (past attribute-forwarding wrappers) when
    that code is in the examples folder, else ``None``."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_name in _FORWARDING:
        frame = frame.f_back
    if frame is None or not Path(frame.f_code.co_filename).is_relative_to(EXAMPLES):
        return None
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


@pytest.fixture(scope="module", autouse=True)
def examples_never_read_the_state() -> Iterator[None]:
    read = object.__getattribute__

    def guarded(self: SpiderEnv, name: str) -> Any:
        if name in ("state", "_state"):
            where = _example_reader()
            if where is not None:
                STATE_READS.append(where)
                raise AssertionError(f"{where} reads SpiderEnv.{name} (hidden cards)")
        return read(self, name)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SpiderEnv, "__getattribute__", guarded)
        yield
    assert not STATE_READS, STATE_READS  # even reads whose error an example swallowed


def _spider_env_cli() -> list[str]:
    exe = Path(sys.executable).with_name("spider-env")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "spider_env.apps.cli"]


@pytest.fixture(scope="module")
def maskable_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import train_maskable_ppo

    out = tmp_path_factory.mktemp("maskable")
    train_maskable_ppo.main([*TINY, "--out", str(out)])
    return out


def test_maskable_ppo_smoke_writes_everything(maskable_run: Path) -> None:
    out = maskable_run
    for name in ("model.zip", "model.json", "eval.csv", "progress.csv", "learning_curve.png"):
        assert (out / name).is_file(), name
    assert (out / "best_model" / "best_model.zip").is_file()
    assert list((out / "checkpoints").glob("*.zip"))
    assert list(out.glob("events.out.tfevents.*")), "no TensorBoard log"
    meta = json.loads((out / "model.json").read_text())
    assert meta["algo"] == "MaskablePPO" and meta["use_masking"] is True
    assert meta["format"] == "spider-env-model 2"
    assert meta["env_kwargs"] == {
        "variant": "spider-1suit",
        "obs_mode": "flat",
        "feature_slots": 6,
        "reward_mode": "shaped",
        "illegal_action": "penalize",
    }
    summary = json.loads((out / "summary.json").read_text())
    assert summary["timesteps"] >= 256
    assert set(summary["baselines"]) == {"random", "greedy"}
    rows = (out / "eval.csv").read_text().splitlines()
    assert rows[0].startswith("timesteps,") and len(rows) >= 3
    last = dict(zip(rows[0].split(","), rows[-1].split(",")))
    assert float(last["episodes"]) == 2
    assert 0.0 <= float(last["win_rate"]) <= 1.0
    assert float(last["illegal_action_rate"]) == 0.0  # masks at evaluation


def test_the_model_file_reads_back_and_plays_as_the_saved_zip(maskable_run: Path) -> None:
    from model_checks import assert_plays_as_native, sb3_choice
    from spider_env.agents.rl.models import load_model

    summary = json.loads((maskable_run / "summary.json").read_text())
    assert summary["model"] == str(maskable_run / "model.safetensors")
    native = sb3_choice(load_model(maskable_run / "model.zip"))
    saved = assert_plays_as_native(summary["model"], native)
    assert saved.architecture.name == "mlp" and saved.env.feature_slots == 6
    assert saved.deterministic is False  # as the sidecar: the run sampled
    assert saved.training["seed"] == 0 and "hyperparameters" in saved.training


def test_saved_model_evaluates_through_the_cli(maskable_run: Path, tmp_path: Path) -> None:
    report = tmp_path / "eval.json"
    cmd = [
        *_spider_env_cli(),
        "evaluate",
        "--agent",
        str(maskable_run / "model.safetensors"),
        "--suits",
        "1",
        "--deals",
        "0:2",
        "--max-steps",
        "30",
        "--no-progress",
        "--json",
        str(report),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "model.safetensors" in proc.stdout
    assert report.is_file()
    assert "model.safetensors" in report.read_text()


def test_maskable_ppo_trains_on_the_compiled_vector_env(tmp_path: Path) -> None:
    import train_maskable_ppo

    summary = train_maskable_ppo.main(
        [*TINY, "--vec", "spider", "--out", str(tmp_path), "--baselines", "skip"]
    )
    assert (tmp_path / "model.zip").is_file() and (tmp_path / "eval.csv").is_file()
    assert summary["timesteps"] >= 256
    progress = (tmp_path / "progress.csv").read_text()
    assert "rollout/ep_rew_mean" in progress  # VecMonitor counted the 40-step episodes


def test_ppo_without_masks_smoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import train_maskable_ppo

    args = [*TINY, "--no-masks", "--out", str(tmp_path), "--baselines", "skip", "--no-progress"]
    summary = train_maskable_ppo.main(args)
    assert json.loads(capsys.readouterr().out) == summary  # --no-progress: the summary only
    assert summary["algo"] == "PPO" and summary["label"] == "PPO, no masks"
    meta = json.loads((tmp_path / "model.json").read_text())
    assert meta["algo"] == "PPO" and meta["use_masking"] is False
    assert (tmp_path / "model.zip").is_file() and (tmp_path / "learning_curve.png").is_file()
    import evaluate_trained_model

    res = evaluate_trained_model.main(["--model", str(tmp_path / "model.zip"), "--deals", "0:2"])
    assert res["masked"] is False and len(res["records"]) == 2  # plays without masks


def test_plot_script_draws_runs_side_by_side(maskable_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "curve.png"
    cmd = [
        sys.executable,
        str(EXAMPLES / "plot_learning_curves.py"),
        "--run",
        f"A={maskable_run}",
        "--run",
        f"B={maskable_run}",
        "--baselines",
        str(maskable_run / "baselines.json"),
        "--out",
        str(out),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_setting_of_every_trainer_is_documented() -> None:
    # CleanRL style: the string under each field is its documentation and its flag's help
    from dataclasses import fields

    from spider_env.agents.rl.cloning import CloneSettings
    from spider_env.agents.rl.measure import EvaluationSettings
    from spider_env.agents.rl.ppo import BatchedPPOSettings
    from spider_env.agents.rl.rllib import RLlibSettings
    from spider_env.agents.rl.sb3_train import PPOSettings
    from spider_env.agents.rl.settings import field_docs

    for cls in (PPOSettings, CloneSettings, BatchedPPOSettings, RLlibSettings,
                EvaluationSettings):  # fmt: skip
        docs = field_docs(cls)
        assert set(docs) == {f.name for f in fields(cls)}, cls
        assert all(docs.values()), cls


def test_a_run_shorter_than_eval_freq_says_so_and_still_draws_its_curve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import train_maskable_ppo

    i = TINY.index("--eval-freq")
    args = [*TINY[:i], *TINY[i + 2 :], "--out", str(tmp_path), "--baselines", "skip"]
    summary = train_maskable_ppo.main(args)  # the default --eval-freq: 100,000 steps
    lines = capsys.readouterr().out.splitlines()
    assert (
        "fewer than --eval-freq 100,000: one evaluation on 2 validation deals, at the end"
        in (lines[0])
    )
    assert lines[1].startswith("step        256  validation win rate ")  # a line per evaluation
    rows = (tmp_path / "eval.csv").read_text().splitlines()
    assert len(rows) == 2 and rows[1].startswith("256,")  # the evaluation at the end
    assert summary["last_eval"]["timesteps"] == 256
    assert (tmp_path / "learning_curve.png").is_file() and summary["plot"]


def test_the_plan_line_says_when_a_run_evaluates() -> None:
    from spider_env.agents.rl.sb3_train import PPOSettings, plan

    line = plan(PPOSettings())  # the defaults: 1M steps, 8 envs, every 100,000 steps
    assert line.startswith("MaskablePPO: 1,001,472 steps in 8 envs (1 suit)")  # whole rollouts
    assert line.endswith("evaluation on 100 validation deals every 100,000 steps and at the end")
    assert plan(PPOSettings(eval_freq=0)).endswith(
        "--eval-freq 0: no evaluation, so no eval.csv and no learning curve"
    )
    short = plan(PPOSettings(timesteps=50_000, suits=2, no_masks=True))
    assert short.startswith("PPO, no masks: 51,200 steps in 8 envs (2 suits)")
    assert short.endswith("fewer than --eval-freq 100,000: one evaluation on 100 validation "
                          "deals, at the end")  # fmt: skip


def test_bad_command_line_values_are_refused(tmp_path: Path) -> None:
    import train_maskable_ppo

    with pytest.raises(SystemExit, match="net-arch"):
        train_maskable_ppo.main(["--net-arch", "64,x", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="timesteps"):
        train_maskable_ppo.main(["--timesteps", "0", "--out", str(tmp_path)])


def test_deal_range_cycles_and_draws_reproducibly() -> None:
    env = DealRange(gym.make("Spider-v0", suits=1), range(5, 8), order="cycle")
    assert env.chosen_deal_number is None
    played = []
    for _ in range(4):
        _obs, info = env.reset()
        assert "deal_number" not in info and "deal" not in info  # never shown to agents
        played.append((env.chosen_deal_number, env.get_wrapper_attr("deal_number")))
    assert played == [(5, 5), (6, 6), (7, 7), (5, 5)]
    assert env.unwrapped.deal_name == "spider-1suit#5"
    env.restart()
    env.reset()
    assert env.chosen_deal_number == 5
    env.reset(options={"deal": 42})  # an explicit choice wins
    assert env.chosen_deal_number is None and env.unwrapped.deal_number == 42
    big = DealRange(gym.make("Spider-v0", suits=1), range(10_000, 2**32))
    first = []
    for _ in range(2):
        big.reset(seed=3)
        first.append(big.chosen_deal_number)
    assert first[0] == first[1] >= 10_000
    assert big.action_masks().dtype == bool
    with pytest.raises(ValueError, match="order"):
        DealRange(gym.make("Spider-v0"), [1], order="sorted")
    with pytest.raises(ValueError, match="empty"):
        DealRange(gym.make("Spider-v0"), [])
    with pytest.raises(ValueError, match=">= 0"):
        DealRange(gym.make("Spider-v0"), [3, -1])


def test_the_state_guard_catches_reads_from_example_code() -> None:
    env = gym.make("Spider-v0", suits=1)
    env.reset(seed=0)
    assert env.get_wrapper_attr("state") is env.unwrapped.state  # reads from tests are allowed
    probe = str(EXAMPLES / "probe.py")  # code that says it is an example file
    reads = ("env.state", "env.unwrapped.state", "env.unwrapped._state")
    for src in (*reads, "env.get_wrapper_attr('state')", "getattr(env.unwrapped, '_state')"):
        with pytest.raises(AssertionError, match="reads SpiderEnv"):
            eval(compile(src, probe, "eval"), {"env": env})
    assert len(STATE_READS) == 5 and all(where.startswith(probe) for where in STATE_READS)
    STATE_READS.clear()


def test_evaluate_trained_model_plays_every_deal_once(maskable_run: Path, tmp_path: Path) -> None:
    import evaluate_trained_model

    report = tmp_path / "eval.json"
    res = evaluate_trained_model.main(
        ["--model", str(maskable_run / "model.zip"), "--deals", "0:5", "--n-envs", "2"]
        + ["--json", str(report)]
    )
    assert [r["deal"] for r in res["records"]] == [0, 1, 2, 3, 4]
    assert res["masked"] is True and res["illegal_action_rate"] == 0.0
    assert 0.0 <= res["ci95"][0] <= res["win_rate"] <= res["ci95"][1] <= 1.0
    assert json.loads(report.read_text())["deals"] == "0..4 (5)"


class _RewardsByDeal(gym.Wrapper[Any, Any, Any, Any]):
    """Sums the rewards of each deal the env is reset on (the first time) into ``log``."""

    def __init__(self, env: gym.Env[Any, Any], log: dict[int, float]) -> None:
        super().__init__(env)
        self.log, self.deal = log, None

    def reset(self, **kwargs: Any) -> Any:
        deal = int(kwargs["options"]["deal"])
        self.deal = None if deal in self.log else deal
        if self.deal is not None:
            self.log[self.deal] = 0.0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> Any:
        obs, r, term, trunc, info = self.env.step(action)
        if self.deal is not None:
            self.log[self.deal] += float(r)
        return obs, r, term, trunc, info


def test_batched_evaluation_knows_the_deal_without_info_naming_it(
    maskable_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # evaluate_trained_model.py's games: which deal each record is comes from how the deals
    # were split between the envs, not from info (which does not name the deal).
    from spider_env.agents.rl import measure
    from spider_env.agents.rl.envs import spider_kwargs
    from stable_baselines3.common.monitor import Monitor

    log: dict[int, float] = {}

    def make_env(env: Any, deals: Any, order: str) -> Any:
        base = gym.make("Spider-v0", max_episode_steps=env.max_episode_steps, **spider_kwargs(env))
        return Monitor(DealRange(_RewardsByDeal(base, log), deals, order=order))

    monkeypatch.setattr(measure, "make_env", make_env)
    deals = [11, 3, 8, 20, 6]
    res = measure.evaluate_batched(maskable_run / "model.zip", deals, 2, max_episode_steps=12)
    assert sorted(log) == sorted(deals)
    assert {r["deal"]: r["reward"] for r in res.records} == pytest.approx(log)


def test_evaluate_trained_model_plays_an_action_set_model(tmp_path: Path) -> None:
    # an "actions" model: per-action features, the action-set policy class
    import evaluate_trained_model
    from spider_env.agents.rl.models import action_set_model, action_set_sidecar, save_model

    path = tmp_path / "actions.zip"
    save_model(action_set_model("spider-1suit", hidden=8), path,
               action_set_sidecar("spider-1suit", True))  # fmt: skip
    res = evaluate_trained_model.main(
        ["--model", str(path), "--deals", "0:2", "--n-envs", "2", "--max-episode-steps", "30"]
    )
    assert res["variant"] == "spider-1suit" and res["suits"] == 1
    assert [r["deal"] for r in res["records"]] == [0, 1] and res["masked"] is True
    assert res["deterministic"] is True and res["illegal_action_rate"] == 0.0


def test_evaluate_trained_model_refuses_a_model_without_sidecar(
    maskable_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    import evaluate_trained_model

    bare = tmp_path / "bare.zip"
    shutil.copyfile(maskable_run / "model.zip", bare)
    with pytest.raises(SystemExit) as exc:
        evaluate_trained_model.main(["--model", str(bare), "--deals", "0:1"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "model.json of the training run" in err[0]


def test_resume_continues_the_run_and_its_learning_curve(tmp_path: Path) -> None:
    import train_maskable_ppo

    out = tmp_path / "run"
    train_maskable_ppo.main([*TINY, "--out", str(out), "--baselines", "skip"])
    rows_before = (out / "eval.csv").read_text().splitlines()
    ckpt = out / "checkpoints" / "maskableppo_256_steps.zip"
    assert ckpt.is_file()
    summary = train_maskable_ppo.main(
        [*TINY, "--out", str(out), "--baselines", "skip", "--resume", str(ckpt)]
    )
    assert summary["timesteps"] == 512
    rows_after = (out / "eval.csv").read_text().splitlines()
    assert rows_after[: len(rows_before)] == rows_before and len(rows_after) > len(rows_before)


def test_compare_records_pairs_saved_evaluations_of_json_and_csv(tmp_path: Path) -> None:
    import compare_records

    out = tmp_path / "cmp.json"
    res = compare_records.main(
        [
            str(ROOT / "docs" / "rl" / "test_baselines_1suit.json"),
            str(ROOT / "docs" / "ladder" / "spider-1suit-0_1000-expert-evaluate.csv"),
            "--json",
            str(out),
        ]
    )
    assert res["agents"]["greedy"]["wins"] == 634  # the JSON's greedy, not the CSV's again
    assert res["agents"]["expert"]["wins"] == 757
    [pair] = [c for c in res["comparisons"] if (c["a"], c["b"]) == ("lookahead", "expert")]
    assert (pair["only_a"], pair["only_b"], pair["deals"]) == (146, 170, 1000)
    assert json.loads(out.read_text()) == json.loads(json.dumps(res))
