"""Behaviour cloning, the first stage of the batched-PPO path: demonstrations, the action-set
policy, cloning (``examples/clone_teacher.py``, a smoke run with tiny budgets), the batched PPO
starting from the cloned model, and the shipped models of the action-set policy."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import permute_hidden

pytest.importorskip("sb3_contrib", reason="cloning needs the 'train' extra")

import torch
from spider_env.agents import make_agent
from spider_env.agents.rl.imitation import (
    Demonstration,
    build_bc_dataset,
    load_demonstrations,
    record_demonstrations,
    replay,
    save_demonstrations,
)
from spider_env.agents.rl.models import action_set_model, load_model
from spider_env.agents.rl.policy import NO_ROW_LOGIT, bc_accuracy, behaviour_clone

from spider_env.env import SpiderEnv
from spider_env.observation.actions import ActionFeatureEncoder

torch.set_num_threads(1)  # small networks on a shared CPU: one thread is the faster
ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SHIPPED = ROOT / "docs" / "models" / "rl_1suit_recipe.safetensors"
sys.path.insert(0, str(EXAMPLES))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spider_env.apps.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def _script(name: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, cwd=cwd
    )


@pytest.fixture(scope="module")
def demos() -> list[Demonstration]:
    return list(record_demonstrations(range(100000, 100003), "spider-1suit", max_steps=300))


TINY_CLONE = ["--deals", "100000:100003", "--max-steps", "200", "--epochs", "1",
              "--eval-deals", "1", "--hidden", "32", "--no-progress"]  # fmt: skip


@pytest.fixture(scope="module")
def cloned(tmp_path_factory: Any) -> Path:
    """A cloned model of tiny budgets (``clone_teacher.py``, in process): its folder."""
    import clone_teacher

    d = tmp_path_factory.mktemp("bc")
    summary = clone_teacher.main(
        [*TINY_CLONE, "--demos", str(d / "demos.npz"), "--out", str(d / "bc.zip")]
    )
    assert summary["recorded"]["games"] == 3 and summary["checkpoint"] == str(d / "bc.zip")
    assert summary["model"] == str(d / "bc.safetensors")
    return d


# --- demonstrations ---------------------------------------------------------------------------
def test_demonstrations_round_trip_and_replay_exactly(tmp_path: Path, demos: Any) -> None:
    path = tmp_path / "d.npz"
    save_demonstrations(str(path), demos, "spider-1suit", "lookahead")
    back, meta = load_demonstrations(str(path))
    assert back == demos and meta == {"variant": "spider-1suit", "teacher": "lookahead"}
    for demo in demos:
        assert [a for _, _, a in replay(demo, "spider-1suit")] == list(demo.actions)


def test_demonstrations_do_not_depend_on_jobs(demos: Any) -> None:
    again = list(
        record_demonstrations(range(100000, 100003), "spider-1suit", max_steps=300, jobs=2)
    )
    assert again == demos


def test_replay_refuses_a_demonstration_of_another_game(demos: Any) -> None:
    won = next(d for d in demos if d.won)
    with pytest.raises(ValueError, match="illegal"):
        list(replay(won, "spider-4suit"))


def test_load_refuses_a_file_that_is_not_demonstrations(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npz"
    np.savez(bad, deals=np.arange(3))
    with pytest.raises(ValueError, match="not a demonstrations file"):
        load_demonstrations(str(bad))


def test_bc_dataset_targets_the_teachers_actions(demos: Any) -> None:
    data = build_bc_dataset(demos, "spider-1suit", gamma=1.0)
    won = [d for d in demos if d.won]
    assert won, "the fixture needs a won game"
    assert data.imitate.sum() == sum(len(d.actions) for d in won)
    first = won[0]
    i = int(np.flatnonzero(data.deal == first.deal)[0])
    assert data.action_ids[i, data.target[i]] == first.actions[0]
    # gamma 1: the first decision of a won game is worth its 8 runs and the 10 of the win
    assert data.returns[i] == pytest.approx(18.0)


# --- the policy --------------------------------------------------------------------------------
def _obs_batch(deal: int = 3) -> tuple[dict[str, torch.Tensor], np.ndarray]:
    env = SpiderEnv(suits=1)
    obs, info = env.reset(options={"deal": deal})
    out = ActionFeatureEncoder(env.variant).encode(obs, info["action_mask"])
    return {k: torch.as_tensor(v)[None] for k, v in out.items()}, info["action_mask"]


def test_policy_scores_actions_by_their_rows_not_by_row_order() -> None:
    model = action_set_model("spider-1suit")
    policy = model.policy
    obs, mask = _obs_batch()
    n = int((obs["action_ids"] >= 0).sum())
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(0))
    shuffled = {k: v.clone() for k, v in obs.items()}
    shuffled["actions"][0, :n] = obs["actions"][0, perm]
    shuffled["action_ids"][0, :n] = obs["action_ids"][0, perm]
    with torch.no_grad():
        a = policy.features_extractor(obs)
        b = policy.features_extractor(shuffled)
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
        logits = a[0, :1301]
    ids = obs["action_ids"][0, :n].long()
    rest = torch.ones(1301, dtype=torch.bool)
    rest[ids] = False
    assert (logits[rest] == NO_ROW_LOGIT).all() and (logits[ids] > NO_ROW_LOGIT).all()
    with torch.no_grad():
        dist = policy.get_distribution(obs, action_masks=mask[None])
        p = dist.distribution.probs[0].numpy()
    assert p[~mask].sum() == 0 and p.sum() == pytest.approx(1.0, abs=1e-5)


def test_training_an_action_set_model_leaves_no_sb3_log_folder_in_the_temporary_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    monkeypatch.delenv("SB3_LOGDIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # SB3's fallback folder lands here
    model = action_set_model("spider-1suit", n_steps=8, batch_size=8)
    model.learn(8)
    assert model.num_timesteps == 8
    assert sorted(p.name for p in tmp_path.glob("SB3-*")) == []


def test_behaviour_cloning_learns_the_teachers_choices(demos: Any) -> None:
    torch.manual_seed(0)
    data = build_bc_dataset(demos, "spider-1suit")
    model = action_set_model("spider-1suit", hidden=64)
    before = bc_accuracy(model.policy, data)["valid_accuracy"]
    hist = behaviour_clone(model.policy, data, data, epochs=15, batch_size=128, lr=3e-3)
    after = hist[-1]["valid_accuracy"]
    assert hist[-1]["policy_loss"] < hist[0]["policy_loss"]
    # the teacher breaks ties between equally good moves at random: about 55% is the ceiling
    assert after > max(0.4, before + 0.25), (before, after)


# --- cloning and the batched PPO from the clone ---------------------------------------------------
def test_cloning_writes_the_model_its_curve_and_the_teachers_games(cloned: Path) -> None:
    for name in ("demos.npz", "bc.zip", "bc.json", "bc_curve.csv"):
        assert (cloned / name).is_file(), name
    side = json.loads((cloned / "bc.json").read_text())
    assert side["env_kwargs"]["obs_mode"] == "actions"
    assert side["env_kwargs"]["variant"] == "spider-1suit"
    assert side["training"]["teacher"] == "lookahead"
    demos, meta = load_demonstrations(str(cloned / "demos.npz"))
    assert [d.deal for d in demos] == [100000, 100001, 100002] and meta["teacher"] == "lookahead"


def test_the_cloned_model_file_reads_back_and_plays_as_the_zip(cloned: Path) -> None:
    from model_checks import assert_plays_as_native, sb3_choice

    native = sb3_choice(load_model(cloned / "bc.zip"))
    saved = assert_plays_as_native(cloned / "bc.safetensors", native)
    side = json.loads((cloned / "bc.json").read_text())
    assert saved.architecture.name == "action-set" and saved.env.variant == "spider-1suit"
    assert saved.deterministic == side["deterministic"]
    assert (
        saved.training["stage"] == "behaviour cloning" and saved.training["teacher"] == "lookahead"
    )
    assert saved.training["demonstrations"] == "demos.npz"  # no absolute path in a shared file


def test_a_demonstrations_file_of_another_teacher_is_refused_before_any_work(
    cloned: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import clone_teacher

    out = tmp_path / "bc.zip"
    with pytest.raises(SystemExit) as exc:
        clone_teacher.main([*TINY_CLONE, "--teacher", "greedy", "--demos",
                            str(cloned / "demos.npz"), "--out", str(out)])  # fmt: skip
    assert exc.value.code == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "--demos" in line and "lookahead's games" in line
    assert list(tmp_path.iterdir()) == []


def test_the_batched_ppo_starts_from_the_cloned_model(cloned: Path, tmp_path: Path) -> None:
    from spider_env.agents.rl import ppo

    s = ppo.BatchedPPOSettings(bc=str(cloned / "bc.zip"), num_envs=8, n_steps=8, timesteps=64,
                               eval_every=64, eval_deals=2, eval_envs=2, max_episode_steps=20,
                               minibatches=2, no_progress=True, torch_threads=1,
                               out=str(tmp_path))  # fmt: skip
    summary = ppo.train(s)
    assert summary["timesteps"] == 64 and summary["illegal_actions"] == 0
    bc = load_model(cloned / "bc.zip").policy.state_dict()
    first = load_model(tmp_path / "checkpoints" / "model_0.zip").policy.state_dict()
    last = load_model(tmp_path / "checkpoints" / "model_64.zip").policy.state_dict()
    assert all(torch.equal(bc[k], first[k]) for k in bc)  # step 0: the clone itself
    assert not all(torch.equal(bc[k], last[k]) for k in bc)  # then trained on


def test_the_kl_from_the_cloned_model_is_taken_alike_on_one_thread_and_on_two(
    cloned: Path, tmp_path: Path
) -> None:
    """``--bc-coef`` keeps PPO near the clone: on two threads each half of a minibatch takes the
    KL from the clone on its own thread, and the run learns as on one thread (the same losses
    up to the float rounding of the threads)."""
    from spider_env.agents.rl import ppo

    def run(threads: int) -> dict[str, float]:
        s = ppo.BatchedPPOSettings(bc=str(cloned / "bc.zip"), bc_coef=0.5, num_envs=8,
                                   n_steps=8, timesteps=128, eval_every=128, eval_deals=2,
                                   eval_envs=2, max_episode_steps=20, minibatches=2,
                                   no_progress=True, torch_threads=threads,
                                   out=str(tmp_path / str(threads)))  # fmt: skip
        return ppo.train(s)["last_update"]

    one, two = run(1), run(2)
    assert one["bc_kl"] > 0
    for key, value in one.items():
        assert two[key] == pytest.approx(value, rel=1e-3, abs=1e-7), key


def test_evaluate_plays_a_cloned_model_on_its_sidecars_game(cloned: Path) -> None:
    out = _cli("evaluate", "--agent", str(cloned / "bc.safetensors"), "--deals", "1000:1002",
               "--max-steps", "100", "--no-progress")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("spider-1suit: 2 deals")
    mode = (
        "most likely"
        if json.loads((cloned / "bc.json").read_text())["deterministic"]
        else "sampled"
    )
    assert f"({mode})" in out.stdout


def test_evaluate_refuses_models_of_different_games_without_a_game(
    cloned: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.zip"
    shutil.copyfile(cloned / "bc.zip", other)
    side = json.loads((cloned / "bc.json").read_text())
    side["env_kwargs"]["variant"] = "spider-2suit"
    other.with_suffix(".json").write_text(json.dumps(side))
    out = _cli("evaluate", "--agent", str(cloned / "bc.zip"), "--agent", str(other),
               "--deals", "1000:1001")  # fmt: skip
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "different games" in out.stderr


def test_model_agent_sees_nothing_hidden(cloned: Path) -> None:
    """The permutation test for an action-set model: the same choices with the hidden cards
    shuffled (most likely action, and sampled with the same RNG state)."""
    rng = np.random.default_rng(0)
    for deterministic in (True, False):
        agent = make_agent(str(cloned / "bc.zip"), seed=1, deterministic=deterministic)
        env, twin = SpiderEnv(suits=1), SpiderEnv(suits=1)
        obs, info = env.reset(options={"deal": 1005})
        agent.reset(seed=1)
        for _ in range(25):
            other = permute_hidden(env.state, rng)
            obs2, info2 = twin.reset(options={"state": other})
            clone = copy.deepcopy(agent)
            a = agent.act(obs, info["action_mask"], info)
            assert clone.act(obs2, info2["action_mask"], info2) == a
            obs, _, term, _, info = env.step(a)
            if term:
                break


@pytest.mark.parametrize(
    ("script", "args", "message"),
    [
        ("clone_teacher.py", ["--deals", "990:1010"], "test set"),
        ("clone_teacher.py", ["--variant", "no-such-game"], "no-such-game"),
        ("clone_teacher.py", ["--teacher", "nosuch", "--deals", "100000:100001"], "nosuch"),
        ("clone_teacher.py", ["--jobs", "0"], "--jobs"),
        ("clone_teacher.py", ["--epochs", "0"], "--epochs"),
        ("clone_teacher.py", ["--lr", "0"], "--lr"),
        ("batched_ppo.py", ["--bc", "missing.zip"], "missing.zip"),
        ("batched_ppo.py", ["--gamma", "2"], "--gamma"),
    ],
)
def test_example_errors_are_one_line_with_status_2(
    script: str, args: list[str], message: str, tmp_path: Path
) -> None:
    out = _script(script, *args, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], out.stderr


# --- the shipped recipe model (in git: a missing file fails these tests) -------------------------
def test_shipped_model_plays_1suit_as_measured() -> None:
    from spider_env.agents.model_file import SavedModel

    assert SHIPPED.is_file(), "the shipped model"
    saved = SavedModel.read(SHIPPED)
    assert saved.env.variant == "spider-1suit" and saved.env.obs_mode == "actions"
    assert saved.training["stage"] == "MaskablePPO fine-tuning"
    agent = make_agent(str(SHIPPED), seed=0)
    assert agent.variant is not None and agent.variant.name == "spider-1suit"
    assert agent.deterministic == saved.deterministic  # type: ignore[attr-defined]
    env = SpiderEnv(suits=1)
    obs, info = env.reset(options={"deal": 1000})
    agent.reset(seed=0)
    for _ in range(60):
        a = agent.act(obs, info["action_mask"], info)
        assert info["action_mask"][a]
        obs, _, term, _, info = env.step(a)
        if term:
            break


def test_shipped_model_replays_its_measured_games() -> None:
    """The shipped model, through the same evaluation, plays the first test deals exactly as
    recorded in docs/rl/test_ppo_1suit.json (the README's measurement, made by the NumPy player
    in batches): a change of the features or of the agent that would alter the model's play
    fails here."""
    from spider_env.apps.evaluation import evaluate

    recorded = json.loads((ROOT / "docs" / "rl" / "test_ppo_1suit.json").read_text())
    name = recorded["agents"][0]
    want = {r["deal"]: r for r in recorded["records"] if r["agent"] == name and r["deal"] < 12}
    res = evaluate(str(SHIPPED), range(12), variant="spider-1suit")
    assert sorted(want) == [r.deal for r in res.records]
    for rec in res.records:
        w = want[rec.deal]
        assert (rec.won, rec.completed_runs, rec.moves, rec.steps, rec.reward) == (
            w["won"],
            w["completed_runs"],
            w["moves"],
            w["steps"],
            w["reward"],
        ), rec.deal
