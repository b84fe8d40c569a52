"""A network that learns from the planner (``spider_env.agents.rl.planner_demos``,
``expert_iteration``, ``examples/planner_rl.py``): the demonstration store (what it holds is
what the policy sees, round trip, no test deals, resumption, refusals), the cloning loss with
the teacher's scores, the KL term of PPO, and a tiny run of the whole pipeline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib", reason="the pipeline needs the 'train' extra")

import torch
from spider_env.agents.rl.expert_iteration import PipelineSettings, deal_range
from spider_env.agents.rl.imitation import BCDataset
from spider_env.agents.rl.planner_demos import (
    ShardTask,
    StoreError,
    StoreSpec,
    fill_store,
    load_store,
    play_shard,
    read_shard,
    returns,
    shard_name,
    shard_paths,
    store_summary,
)
from spider_env.agents.rl.policy import behaviour_clone, score_targets
from spider_env.agents.rl.ppo import BatchedPPOSettings, kl_from, masked_log_probs
from spider_env.agents.rl.settings import SettingsError

from spider_env.env import SpiderEnv
from spider_env.observation.actions import ActionFeatureEncoder

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))  # planner_rl.py, imported to call its main()
#: A planner of tiny budget: a few milliseconds a decision, still scoring several candidates.
TINY = "planner:evals=6,candidates=3,nodes=300,screen=0,late=1,exact=20000"
SPEC = StoreSpec("spider-1suit", TINY, TINY, max_steps=150)


@pytest.fixture(scope="module")
def store(tmp_path_factory: Any) -> Path:
    folder = tmp_path_factory.mktemp("store") / "demos"
    fill_store(folder, SPEC, range(100_000, 100_004), shard=2)
    return folder


def _arrays(folder: Path) -> list[dict[str, np.ndarray]]:
    return [read_shard(p, SPEC) for p in shard_paths(folder)]


def test_the_store_holds_the_rows_the_policy_sees_and_the_teachers_actions(store: Path) -> None:
    """Replaying every stored game from its deal gives, at each stored decision, the rows the
    encoder gives there, and the label is the row of the action the teacher played."""
    checked = 0
    for a in _arrays(store):
        for g, deal in enumerate(a["deal"].tolist()):
            env = SpiderEnv(variant="spider-1suit")
            enc = ActionFeatureEncoder("spider-1suit")
            obs, info = env.reset(options={"deal": deal})
            lo, hi = a["step_offsets"][g], a["step_offsets"][g + 1]
            decisions = dict(
                zip(a["step"][a["decision_offsets"][g] : a["decision_offsets"][g + 1]].tolist(),
                    range(a["decision_offsets"][g], a["decision_offsets"][g + 1]))
            )  # fmt: skip
            for step, action in enumerate(a["actions"][lo:hi].tolist()):
                out = enc.encode(obs, info["action_mask"])
                if step in decisions:
                    d = decisions[step]
                    r0, r1 = a["row_offsets"][d], a["row_offsets"][d + 1]
                    k = int((out["action_ids"] >= 0).sum())
                    assert r1 - r0 == k
                    assert np.array_equal(a["ids"][r0:r1], out["action_ids"][:k])
                    assert np.array_equal(
                        a["features"][r0:r1], out["actions"][:k].astype(np.float16)
                    )
                    assert enc.row_of[action] == a["target"][d]
                    checked += 1
                else:
                    assert int(info["action_mask"].sum()) == 1 or action not in enc.row_of
                obs, _, terminated, _, info = env.step(action)
                assert int(info["completed_runs"]) == a["runs"][lo + step]
                if terminated:
                    assert bool(a["won"][g])
    assert checked > 50


def test_the_teachers_scores_are_kept_where_it_weighed_candidates(store: Path) -> None:
    planned = scored = 0
    for a in _arrays(store):
        for d in np.flatnonzero(a["planned"]).tolist():
            planned += 1
            s = a["scores"][a["row_offsets"][d] : a["row_offsets"][d + 1]]
            assert np.isfinite(s).any() and (s[np.isfinite(s)] <= 1.0).all()
            scored += int(np.isfinite(s).sum() > 1)
        for d in np.flatnonzero(~a["planned"]).tolist():
            assert np.isnan(a["scores"][a["row_offsets"][d] : a["row_offsets"][d + 1]]).all()
    assert planned > 10 and scored > 5


def test_a_store_is_one_dataset_with_returns_from_the_outcomes(store: Path) -> None:
    data = load_store([store], gamma=0.9)
    assert isinstance(data, BCDataset) and data.scores is not None
    total = sum(len(a["target"]) for a in _arrays(store))
    assert len(data) == total  # every game is under 400 decisions
    assert set(np.unique(data.deal).tolist()) == set(range(100_000, 100_004))
    assert (data.target < (data.action_ids >= 0).sum(axis=1)).all()
    r = returns(True, np.array([0, 1, 1, 2]), 0.5, win_bonus=10)
    assert np.allclose(
        r, [0.5 * 1 + 0.25 * 0 + 0.125 * 11, 1 + 0.5 * 0 + 0.25 * 11, 0 + 0.5 * 11, 11]
    )


def test_an_interrupted_store_resumes_with_the_missing_shards_only(
    store: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "demos"
    copy.mkdir()
    for p in [store / "store.json", *shard_paths(store)]:
        (copy / p.name).write_bytes(p.read_bytes())
    gone = copy / shard_name(range(100_002, 100_004))
    gone.unlink()
    (copy / f".{gone.name}.123.tmp.npz").write_bytes(b"half a shard")  # an interrupted write
    out = fill_store(copy, SPEC, range(100_000, 100_004), shard=2)
    assert out["played"]["games"] == 2 and out["store"]["games"] == 4
    again = read_shard(gone, SPEC)
    first = read_shard(store / gone.name, SPEC)
    for key in first:
        if key != "cpu_seconds":
            assert np.array_equal(first[key], again[key], equal_nan=key == "scores"), key
    assert fill_store(copy, SPEC, range(100_000, 100_004), shard=2)["played"]["games"] == 0


def test_the_store_refuses_test_deals_and_other_runs_files(store: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="test set"):
        fill_store(tmp_path / "d", SPEC, range(990, 1010))
    assert not (tmp_path / "d").exists()
    other = StoreSpec("spider-2suit", TINY, TINY, max_steps=150)
    with pytest.raises(StoreError, match="another store"):
        fill_store(store, other, range(100_000, 100_002))
    bad = tmp_path / "shard-0000100000-0000100002.npz"
    bad.write_bytes(b"not a shard")
    with pytest.raises(StoreError, match="not a demonstration shard"):
        read_shard(bad)
    arrays = dict(np.load(shard_paths(store)[0]))
    arrays["target"] = arrays["target"][:-1]
    np.savez(bad, **arrays)
    with pytest.raises(StoreError, match="inconsistent"):
        read_shard(bad, SPEC)
    with pytest.raises(StoreError, match="not a demonstration store"):
        load_store([tmp_path])


def test_the_network_plays_and_the_teacher_labels_one_decision_in_every(
    store: Path, tmp_path: Path
) -> None:
    model = str(ROOT / "docs" / "models" / "rl_1suit.safetensors")
    spec = StoreSpec("spider-1suit", TINY, "rl_1suit.safetensors", max_steps=150, every=5)
    path = tmp_path / shard_name(range(200_000, 200_002))
    (tmp_path / "store.json").write_text(json.dumps(spec.meta()))
    play_shard(ShardTask(spec, (200_000, 200_002), model, str(path)))
    a = read_shard(path, spec)
    from spider_env.agents import make_agent

    net = make_agent(model, "spider-1suit")
    for g, deal in enumerate(a["deal"].tolist()):  # the moves are the network's own
        env = SpiderEnv(variant="spider-1suit")
        obs, info = env.reset(options={"deal": deal})
        net.reset(deal)
        for action in a["actions"][a["step_offsets"][g] : a["step_offsets"][g + 1]].tolist():
            assert int(net.act(obs, info["action_mask"], info)) == action
            obs, *_, info = env.step(action)
    assert 0 < len(a["target"]) <= len(a["actions"]) // 5 + 1
    assert store_summary(tmp_path)["decisions"] == len(a["target"])


def test_score_targets_are_a_softmax_of_the_scored_rows_only() -> None:
    scores = torch.tensor([[0.5, float("nan"), 0.6, float("nan")], [float("nan")] * 4])
    dist, has = score_targets(scores, 0.1)
    assert has.tolist() == [True, False]
    e = np.exp(np.array([0.5, 0.6]) / 0.1)
    assert np.allclose(dist[0].numpy(), [e[0] / e.sum(), 0, e[1] / e.sum(), 0], atol=1e-6)
    assert float(dist[1].abs().sum()) == 0.0


def _synthetic(n: int, k: int, seed: int = 0) -> BCDataset:
    """``n`` decisions of ``k`` legal rows of random features, the teacher's scores a fixed
    function of each row's features on about half the rows, its choice the best scored row."""
    from spider_env.observation.spaces import N_ACTION_FEATURES, N_GLOBAL_FEATURES

    rng = np.random.default_rng(seed)
    feats = rng.normal(size=(n, k, N_ACTION_FEATURES)).astype(np.float16)
    w = rng.normal(size=N_ACTION_FEATURES)
    scores = (feats.astype(np.float64) @ w / 20).astype(np.float32)
    scores[rng.random((n, k)) < 0.5] = np.nan
    scores[:, 0] = feats[:, 0].astype(np.float64) @ w / 20  # at least one scored row
    target = np.nanargmax(scores, axis=1)
    return BCDataset(feats, np.tile(np.arange(k, dtype=np.int16), (n, 1)),
                     np.zeros((n, N_GLOBAL_FEATURES), np.float32), target.astype(np.int64),
                     np.zeros(n, np.float32), np.ones(n, bool), np.zeros(n, np.uint64),
                     scores)  # fmt: skip


def test_cloning_with_soft_targets_learns_the_teachers_distribution() -> None:
    """On a tiny set whose scores the network can represent, ``soft=1`` brings the policy's
    distribution over the scored rows to the softmax of the scores (the KL from it falls
    tenfold), and plain cloning (``soft=0``) only to its choice."""
    from spider_env.agents.rl.models import action_set_model
    from spider_env.agents.rl.ppo import RowPolicy

    data = _synthetic(64, 6)
    target, _ = score_targets(torch.from_numpy(data.scores), 0.05)

    def kl(model: Any) -> float:
        with torch.no_grad():
            logits, _, _ = RowPolicy(model.policy).forward(
                torch.from_numpy(data.actions.astype(np.float32)),
                torch.from_numpy(data.action_ids.astype(np.float32)),
                torch.from_numpy(data.globals))  # fmt: skip
            scored = target > 0
            logp = torch.log_softmax(logits.masked_fill(~scored, -1e9), dim=1)
            terms = torch.where(scored, target * (target.clamp(min=1e-12).log() - logp), 0 * logp)
            return float(terms.sum(dim=1).mean())

    models = {soft: action_set_model("spider-1suit", hidden=32, seed=0) for soft in (0.0, 1.0)}
    before = kl(models[1.0])
    for soft, model in models.items():
        behaviour_clone(model.policy, data, epochs=60, batch_size=64, lr=2e-2, soft=soft,
                        temperature=0.05, value_coef=0.0)  # fmt: skip
    assert kl(models[1.0]) < before / 10
    assert kl(models[1.0]) < kl(models[0.0]) / 3
    with pytest.raises(ValueError, match="scores"):
        behaviour_clone(models[0.0].policy, BCDataset(*(getattr(data, f) for f in
                        ("actions", "action_ids", "globals", "target", "returns", "imitate",
                         "deal"))), soft=0.5)  # fmt: skip


def test_the_kl_term_is_zero_at_the_anchor_and_positive_away_from_it() -> None:
    logits = torch.tensor([[1.0, 2.0, -1e8], [0.0, 0.0, 0.0]])
    valid = torch.tensor([[True, True, False], [True, True, True]])
    logp, _ = masked_log_probs(logits, valid)
    assert torch.allclose(kl_from(logp, logp, valid), torch.zeros(2), atol=1e-6)
    other, _ = masked_log_probs(torch.tensor([[2.0, 1.0, -1e8], [1.0, 0.0, -1.0]]), valid)
    assert (kl_from(logp, other, valid) > 0.1).all()
    with pytest.raises(SettingsError, match="bc_coef"):
        BatchedPPOSettings(bc_coef=0.1)


def test_the_pipeline_refuses_test_deals_and_overlapping_deals() -> None:
    with pytest.raises(SettingsError, match=r"demo_deals.*test set"):
        PipelineSettings(demo_deals=range(500, 1500))
    with pytest.raises(SettingsError, match=r"dagger_deals.*overlap"):
        PipelineSettings(demo_deals=range(100_000, 100_100), dagger_deals=range(100_050, 100_060))
    assert deal_range("5:5") == range(5, 5)
    for bad in ("5", "5:x", "10:5", "1:2:3"):
        with pytest.raises(ValueError):
            deal_range(bad)


TINY_RUN = ["--suits", "1", "--teacher", TINY, "--demo-deals", "100000:100002", "--shard", "2",
            "--jobs", "1", "--epochs", "1", "--hidden", "16", "--dagger-deals", "200000:200001",
            "--dagger-every", "25", "--dagger-epochs", "1", "--ppo-timesteps", "256",
            "--eval-deals", "1", "--test-deals", "0:1", "--max-steps", "80",
            "--no-progress"]  # fmt: skip


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    return subprocess.run([sys.executable, str(ROOT / "examples" / "planner_rl.py"), *args],
                          capture_output=True, text=True, cwd=ROOT, env=env)  # fmt: skip


def test_a_tiny_pipeline_runs_every_stage_then_resumes_with_nothing_to_do(tmp_path: Path) -> None:
    """The command line runs every stage but PPO, ``--stage ppo`` adds it, and ``all`` again
    finds every shard and stage done (in process: the script's ``main``)."""
    import planner_rl

    out = tmp_path / "run"
    done = _run(*TINY_RUN, "--out", str(out), "--ppo-timesteps", "0")
    assert done.returncode == 0, done.stderr
    record = json.loads((out / "pipeline.json").read_text())
    assert list(record["stages"]) == ["demos", "clone", "dagger", "test"]
    for name in ("clone.safetensors", "dagger.safetensors", "clone_curve.csv", "test.json",
                 "curve.png", "curve.csv"):  # fmt: skip
        assert (out / name).is_file(), name
    test = json.loads((out / "test.json").read_text())
    assert len(test["agents"]) == 3  # clone, dagger and the shipped model from scratch
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        planner_rl.main([*TINY_RUN, "--out", str(out), "--stage", "ppo"])
        assert (out / "ppo" / "model.safetensors").is_file()
        assert json.loads((out / "pipeline.json").read_text())["stages"]["ppo"]["timesteps"] > 0
        stamp = (out / "ppo" / "model.safetensors").stat().st_mtime
        again = planner_rl.main([*TINY_RUN, "--out", str(out)])
    finally:
        os.chdir(cwd)
    demos = again["stages"]["demos"]
    assert demos["played"]["games"] == 0 and demos["store"]["games"] == 2  # nothing played
    assert (out / "ppo" / "model.safetensors").stat().st_mtime == stamp


def test_a_bad_setting_is_one_line_with_status_2(tmp_path: Path) -> None:
    cases = (
        (["--demo-deals", "0:100"], "demo_deals"),
        (["--teacher", "nobody"], "teacher"),
        (["--baseline", str(tmp_path / "missing.safetensors")], "baseline"),
    )
    for args, flag in cases:
        done = _run(*args, "--out", str(tmp_path / "run"))
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert flag.replace("_", "-") in done.stderr or flag in done.stderr
    assert not (tmp_path / "run").exists()


def test_the_dagger_labels_are_repeated_to_their_share() -> None:
    from spider_env.agents.rl.expert_iteration import oversample

    data = _synthetic(100, 3)
    data.deal[:] = 100_000
    data.deal[:5] = 200_000  # five labels of the network's games
    out = oversample(data, range(200_000, 200_010), 0.25)
    share = float((out.deal == 200_000).mean())
    assert 0.2 <= share <= 0.3 and int((out.deal == 100_000).sum()) == 95
    assert oversample(data, range(200_000, 200_010), 0.0) is data
    assert oversample(data, range(300_000, 300_010), 0.25) is data


def test_an_interrupted_demos_stage_is_recorded_and_the_next_run_adds_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spider_env.agents.rl import expert_iteration, planner_demos

    settings = PipelineSettings(suits=1, teacher=TINY, demo_deals=range(100_000, 100_004),
                                shard=2, jobs=1, max_steps=60, out=str(tmp_path / "run"),
                                stage="demos", no_progress=True)  # fmt: skip
    real = planner_demos.play_shard
    calls: list[int] = []

    def interrupted(task: Any) -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(planner_demos, "play_shard", interrupted)
    with pytest.raises(KeyboardInterrupt):
        expert_iteration.run(settings)
    first = json.loads((tmp_path / "run" / "pipeline.json").read_text())["stages"]["demos"]
    assert first["interrupted"] and first["played"]["games"] == 2
    assert first["store"]["games"] == 2 and first["cpu_s"] > 0
    monkeypatch.setattr(planner_demos, "play_shard", real)
    done = expert_iteration.run(settings)["stages"]["demos"]
    assert "interrupted" not in done and done["played"]["games"] == 2
    assert done["store"]["games"] == 4 and done["wall_s"] >= first["wall_s"]
    assert done["cpu_s"] > first["cpu_s"]
