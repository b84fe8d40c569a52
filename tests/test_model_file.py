"""The model file (weights + JSON) and the model player in NumPy: a file round-trips, the player
chooses by the one rule and rebuilds the env's observation, it plays with torch unimportable,
and its scores are the torch policy's over many positions of every variant and architecture."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from model_files import ARCHITECTURES, random_model
from spider_env.agents.model import ModelAgent, OtherGameWarning
from spider_env.agents.model_file import MLPArchitecture, SavedModel
from spider_env.agents.model_format import EnvSettings, ModelLoadError

from spider_env.env import SpiderEnv
from spider_env.observation import flat_width

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_a_model_file_reads_back_as_written(architecture: str, tmp_path: Path) -> None:
    model = random_model("spider-2suit", architecture, seed=3, deterministic=False)
    path = model.write(tmp_path / "m.safetensors")
    back = SavedModel.read(path)
    assert back.architecture == model.architecture and back.env == model.env
    assert back.deterministic is False and back.card == {"title": "test"}
    assert set(back.weights) == set(model.weights)
    for name, w in model.weights.items():
        np.testing.assert_array_equal(back.weights[name], w, err_msg=name)


def test_a_model_file_names_no_folder_of_the_machine_that_made_it(tmp_path: Path) -> None:
    model = random_model()
    record = {"out": str(tmp_path / "runs" / "ppo"), "stages": [{"from": "/home/me/bc.zip"}]}
    card = {"command": "python x.py --out runs/ppo", "dir": "/home/me"}
    mine = SavedModel(model.architecture, model.env, model.weights, training=record, card=card)
    back = SavedModel.read(mine.write(tmp_path / "m.safetensors"))
    assert back.training == {"out": "ppo", "stages": [{"from": "bc.zip"}]}
    assert back.card == {"command": "python x.py --out runs/ppo", "dir": "me"}
    assert str(tmp_path) not in (tmp_path / "m.safetensors").read_bytes().decode("latin-1")


def _bias_only(prefs: np.ndarray, variant: str = "spider-1suit") -> SavedModel:
    """An MLP without hidden layers whose scores are ``prefs`` whatever the position."""
    env = EnvSettings(variant, "flat", feature_slots=6, reward_mode="shaped")
    game = env.game()
    assert game is not None
    arch = MLPArchitecture(flat_width(game, 6), (), "tanh", game.n_actions)
    weights = {
        "action_net.weight": np.zeros((game.n_actions, arch.inputs), np.float32),
        "action_net.bias": prefs.astype(np.float32),
    }
    return SavedModel(arch, env, weights)


def test_the_player_plays_the_most_likely_legal_action_or_samples_with_its_seed() -> None:
    env = SpiderEnv(suits=1)
    obs, info = env.reset(options={"deal": 0})
    mask = info["action_mask"]
    prefs = np.random.default_rng(0).normal(size=env.variant.n_actions)
    model = _bias_only(prefs)
    likely = ModelAgent(model, deterministic=True)
    legal = np.flatnonzero(mask)
    assert likely.act(obs, mask, info) == legal[np.argmax(prefs[legal])]
    assert likely.encode(obs, mask).shape == (flat_width(env.variant, 6),)  # the flat encoding
    picks = [ModelAgent(model, deterministic=False, seed=1).act(obs, mask, info) for _ in range(2)]
    assert picks[0] == picks[1] and mask[picks[0]]
    drawn = {ModelAgent(model, deterministic=False, seed=s).act(obs, mask, info) for s in range(30)}
    assert len(drawn) > 1 and all(mask[a] for a in drawn)
    assert likely.name == "model (most likely)"


def test_a_model_refuses_another_game_unless_asked_then_warns_in_one_line() -> None:
    model = random_model("spider-1suit", "action-set")
    with pytest.raises(ModelLoadError, match="trained on spider-1suit, not spider-2suit"):
        ModelAgent(model, "spider-2suit")
    with pytest.warns(OtherGameWarning) as caught:
        agent = ModelAgent(model, "spider-2suit", allow_other_game=True)
    assert agent.variant is not None and agent.variant.name == "spider-2suit"
    assert len(caught) == 1 and "\n" not in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ModelAgent(model, "spider-1suit")  # its own game: not a word


@pytest.mark.parametrize(
    ("architecture", "size"), [("mlp", 6), ("mlp", 3), ("action-set", 96), ("action-set", 4)]
)
def test_the_player_rebuilds_the_envs_observation_of_its_mode(architecture: str, size: int) -> None:
    # from the dict observation a player is given, over a game of random moves (4 action rows:
    # more legal actions than rows)
    variant = "spider-2suit"
    agent = ModelAgent(random_model(variant, architecture, size=size))
    plain = SpiderEnv(variant=variant)
    theirs = SpiderEnv(variant=variant, **agent.env_kwargs())
    rng = np.random.default_rng(0)
    obs, info = plain.reset(options={"deal": 3})
    want, _ = theirs.reset(options={"deal": 3})
    agent.reset()
    for _ in range(60):
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


# --- play without torch ----------------------------------------------------------------------

BLOCKED = ("torch", "stable_baselines3", "sb3_contrib")
PLAY = """
import sys
BLOCKED = sys.argv[2].split(",")
from spider_env.apps.cli import main
from spider_env.agents.model import load_model_agent
from spider_env.env import SpiderEnv
path = sys.argv[1]
status = main(["evaluate", "--agent", path, "--suits", "1", "--deals", "0:2"])
assert status == 0, status
agent = load_model_agent(path, seed=0)
env = SpiderEnv(suits=1)
obs, info = env.reset(options={"deal": 5})
agent.reset()
for _ in range(30):
    obs, _, done, cut, info = env.step(agent.act(obs, info["action_mask"], info))
    if done or cut:
        break
loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
assert not loaded, loaded
print("played", agent.name)
"""


def _blocker(folder: Path, tried: Path) -> Path:
    """A folder that, first on ``PYTHONPATH``, makes torch and SB3 unimportable (an import
    of one of them is written to ``tried`` and raises ``ImportError``)."""
    for name in BLOCKED:
        package = folder / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(
            f"with open({str(tried)!r}, 'a') as f:\n"
            f"    f.write({name!r} + '\\n')\n"
            f"raise ImportError('{name} is not installed (blocked by the test)')\n"
        )
    return folder


def test_the_blocker_makes_torch_unimportable(tmp_path: Path) -> None:
    tried = tmp_path / "tried.txt"
    env = {**os.environ, "PYTHONPATH": f"{_blocker(tmp_path / 'b', tried)}{os.pathsep}{ROOT}"}
    code = "import torch"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 1 and "torch is not installed" in out.stderr
    assert tried.read_text() == "torch\n"


@pytest.mark.slow
@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_a_model_file_plays_with_torch_and_sb3_unimportable(
    architecture: str, tmp_path: Path
) -> None:
    path = random_model("spider-1suit", architecture, seed=1).write(tmp_path / "m.safetensors")
    tried = tmp_path / "tried.txt"
    env = {**os.environ, "PYTHONPATH": f"{_blocker(tmp_path / 'b', tried)}{os.pathsep}{ROOT}"}
    out = subprocess.run(
        [sys.executable, "-c", PLAY, str(path), ",".join(BLOCKED)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert "m.safetensors" in out.stdout and "played" in out.stdout
    assert not tried.exists(), tried.read_text()  # nothing even tried to import them


# --- the NumPy player scores as the torch policy ----------------------------------------------


def _torch_policy(variant: str, architecture: str, seed: int) -> tuple[Any, SavedModel]:
    """A MaskablePPO of ``architecture`` on ``variant`` with random weights (every parameter
    drawn, so that the scores spread) and its model file."""
    import torch
    from spider_env.agents.model_format import Sidecar
    from spider_env.agents.rl.model_import import from_sb3_model
    from spider_env.agents.rl.models import action_set_model, action_set_sidecar

    torch.set_num_threads(1)
    if architecture == "action-set":
        model = action_set_model(variant, hidden=32, seed=seed)
        side = action_set_sidecar(variant, True)
    else:
        from sb3_contrib import MaskablePPO
        from spider_env.agents.rl.envs import env_factories
        from stable_baselines3.common.vec_env import DummyVecEnv

        settings = EnvSettings(variant, "flat", feature_slots=6, reward_mode="shaped")
        model = MaskablePPO(
            "MlpPolicy", DummyVecEnv(env_factories(settings, 1)), seed=seed, device="cpu",
            policy_kwargs={"net_arch": [64, 32]},
        )  # fmt: skip
        side = Sidecar(settings, "MaskablePPO", "MlpPolicy", deterministic=True)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    return model.policy, from_sb3_model(model, side)


def _torch_logits(policy: Any, obs: Any) -> np.ndarray:
    import torch

    with torch.no_grad():
        x = policy.obs_to_tensor(obs)[0]
        features = policy.extract_features(x, policy.pi_features_extractor)
        out: np.ndarray = policy.action_net(policy.mlp_extractor.forward_actor(features)).numpy()
    return out


def _positions(agent: ModelAgent, n: int, seed: int) -> tuple[Any, np.ndarray]:
    """``n`` positions (the env's observations in the model's mode, and the masks) of games
    played by the model with one move in three random, 80 moves a game at most."""
    assert agent.variant is not None
    env = SpiderEnv(variant=agent.variant, **agent.env_kwargs())
    rng = np.random.default_rng(seed)
    seen: list[Any] = []
    masks: list[np.ndarray] = []
    deal = 0
    while len(seen) < n:
        obs, info = env.reset(options={"deal": deal})
        deal += 1
        for _ in range(80):
            mask = info["action_mask"]
            seen.append({k: np.array(v) for k, v in obs.items()} if isinstance(obs, dict)
                        else np.array(obs))  # fmt: skip
            masks.append(mask.copy())
            legal = np.flatnonzero(mask)
            if rng.random() < 1 / 3:
                a = int(rng.choice(legal))
            else:
                a = int(agent.choose_batch(_stack([obs]), mask[None], None)[0])
            obs, _, term, trunc, info = env.step(a)
            if term or trunc or len(seen) == n:
                break
    return _stack(seen), np.array(masks)


def _stack(obs: list[Any]) -> Any:
    if isinstance(obs[0], dict):
        return {k: np.stack([o[k] for o in obs]) for k in obs[0]}
    return np.stack(obs)


N_POSITIONS = 300


@pytest.mark.slow
@pytest.mark.parametrize("architecture", ARCHITECTURES)
@pytest.mark.parametrize("variant", ["spider-1suit", "spider-2suit"])
def test_the_numpy_player_scores_and_chooses_as_the_torch_policy(
    variant: str, architecture: str
) -> None:
    pytest.importorskip("sb3_contrib")
    policy, saved = _torch_policy(variant, architecture, seed=7)
    agent = ModelAgent(saved)
    obs, masks = _positions(agent, N_POSITIONS, seed=1)
    mine = agent.network.logits(obs)
    theirs = _torch_logits(policy, obs)
    assert mine.shape == theirs.shape == (N_POSITIONS, agent.variant.n_actions)  # type: ignore[union-attr]
    legal_theirs = np.where(masks, theirs, -np.inf)
    np.testing.assert_allclose(np.where(masks, mine, 0), np.where(masks, theirs, 0),
                               rtol=1e-5, atol=1e-5)  # fmt: skip
    np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-5)
    top2 = np.sort(legal_theirs, axis=1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0] > 1e-6) | ~np.isfinite(top2[:, 0])  # one legal action
    # (actions whose rows are equal score equally: the action-set network ties them exactly)
    assert clear.mean() > 0.75, f"{(~clear).sum()} near-ties of {N_POSITIONS}"
    chosen = agent.choose_batch(obs, masks, None)
    np.testing.assert_array_equal(chosen[clear], legal_theirs.argmax(axis=1)[clear])
    assert len(set(chosen.tolist())) > 10  # the positions vary


def test_a_model_file_is_written_with_the_permissions_of_any_new_file(tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    path = random_model().write(tmp_path / "m.safetensors")
    assert stat.S_IMODE(path.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)
