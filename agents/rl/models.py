"""Trained models on the training side: load a ``.zip`` with the right class, play one in memory
as the model player does (:func:`model_agent`), save it (compactly) with its sidecar and, beside
it, as the model file that is shared and played (``.safetensors``: :func:`save_model`); make
and load models of the action-set policy (the network every trainer of ``obs_mode="actions"``
trains: the batched PPO, behaviour cloning, RLlib's export).

The player reads models as data (:mod:`spider_env.agents.model_file`; SB3 zips through
:mod:`.model_import`); :func:`load_model` here *unpickles* a zip with Stable-Baselines3 itself,
for training further from a checkpoint of one's own. The sidecar format is
:mod:`spider_env.agents.model_format` (no torch).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import torch
from spider_env.agents.model import ModelAgent
from spider_env.agents.model_file import SUFFIX
from spider_env.agents.model_format import ACTIONS_MODE, ALGOS, EnvSettings, ModelLoadError, Sidecar

from spider_env.core.variants import Variant, get_variant
from spider_env.observation.actions import DEFAULT_ACTION_ROWS

from .model_import import from_sb3_model
from .policy import ActionSetPolicy

#: The sidecar's name of the action-set policy class (what models saved now store).
ACTION_SET_POLICY = f"{ActionSetPolicy.__module__}.{ActionSetPolicy.__qualname__}"
#: The reward an action-set model is trained on: +1 per completed run, +10 on the win.
ACTION_SET_REWARD = "runs"


def single_thread() -> None:
    """One torch thread: batch-1 inference of small policies is several times faster than
    with torch's default thread pool on a shared CPU (and ``--jobs`` gives the parallelism)."""
    torch.set_num_threads(1)


def algo_class(name: str) -> Any:
    """The Stable-Baselines3 / sb3-contrib class called ``name`` (one of :data:`ALGOS`)."""
    if name not in ALGOS:
        raise ModelLoadError(f"unknown algorithm {name!r} (known: {', '.join(ALGOS)})")
    if name == "MaskablePPO":
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    import stable_baselines3 as sb3

    return getattr(sb3, name)


def _algo_from_zip(path: str | Path) -> str | None:
    """Guess the algorithm from the policy class stored in the zip's ``data`` entry."""
    try:
        with zipfile.ZipFile(path) as zf:
            data = json.loads(zf.read("data").decode("utf-8"))
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    policy = data.get("policy_class", {})
    module = str(policy.get("__module__", "")) if isinstance(policy, dict) else ""
    if "maskable" in module:
        return "MaskablePPO"
    if "dqn" in module:
        return "DQN"
    return None


def _custom_objects(side: Sidecar) -> dict[str, Any]:
    """The policy class of an action-set model: its zip may name a module that moved (models
    saved before the move name ``spider_env.agents.rl_policy``, which no longer imports)."""
    return {"policy_class": ActionSetPolicy} if side.policy == ACTION_SET_POLICY else {}


def load_model(
    path: str | Path, side: Sidecar | None = None, algo: str | None = None, env: Any = None
) -> Any:
    """The Stable-Baselines3 model in ``path`` (on the CPU, one torch thread), with the training
    env ``env`` if given (to train it further: its spaces must be the model's).

    The class is ``algo``, else the sidecar's ``algo``, else a guess from the zip (then PPO, A2C
    and DQN are tried in turn). :class:`ModelLoadError` if none loads it.
    """
    side = side if side is not None else Sidecar.read(path) or Sidecar()
    names = [algo] if algo else [side.algo] if side.algo else []
    if not names:
        guess = _algo_from_zip(path)
        names = [guess] if guess else ["PPO", "A2C", "DQN"]
    single_thread()
    errors = []
    for name in names:
        cls = algo_class(name)
        try:
            return cls.load(str(path), env=env, device="cpu", custom_objects=_custom_objects(side))
        except Exception as exc:  # SB3 raises many kinds of errors for a foreign file
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
    raise ModelLoadError(f"cannot load {path} as {' or '.join(names)}: {'; '.join(errors)}")


def model_agent(model: Any, side: Sidecar, seed: int = 0) -> ModelAgent:
    """An in-memory ``model`` as the player ``spider-env evaluate --agent PATH`` makes of it
    once saved with ``side`` (its weights as a model file, played in NumPy)."""
    if side.env.game() is None or side.env.obs_mode is None:
        raise ValueError("model_agent needs a sidecar that names the game and the obs_mode")
    return ModelAgent(from_sb3_model(model, side), seed=seed, name="model")


def save_compact(model: Any, path: str | Path) -> None:
    """Save ``model`` without its optimizer's running averages (Adam keeps two per weight,
    which would triple the file): the policy is exactly the same and loads with the usual
    ``MaskablePPO.load`` / ``PPO.load``; further training starts the optimizer afresh
    (checkpoints keep the full state)."""
    opt = model.policy.optimizer
    model.policy.optimizer = type(opt)(model.policy.parameters(), **opt.defaults)
    try:
        model.save(str(path))
    finally:
        model.policy.optimizer = opt


def model_file_path(path: str | Path) -> Path:
    """The model file saved beside the checkpoint ``path`` (``model.zip`` ->
    ``model.safetensors``)."""
    return Path(path).with_suffix(SUFFIX)


def save_model(
    model: Any, path: str | Path, side: Sidecar, card: dict[str, Any] | None = None
) -> Path:
    """Save ``model`` compactly (:func:`save_compact`) as ``path`` (``.zip``, to train on from),
    its sidecar ``side`` next to it, and the model file to share and play,
    :func:`model_file_path` (``.safetensors``: the policy's weights, ``side``'s game and
    training record without absolute paths, the model ``card``). Returns ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    saved = from_sb3_model(model, side, card)  # first: what would not save is refused here
    side.write(path)
    save_compact(model, path)
    saved.write(model_file_path(path))
    return path


def action_set_sidecar(
    variant: Variant | str,
    deterministic: bool,
    action_rows: int = DEFAULT_ACTION_ROWS,
    training: dict[str, Any] | None = None,
) -> Sidecar:
    """The sidecar of an action-set model: MaskablePPO, :class:`~.policy.ActionSetPolicy`,
    per-action features (``action_rows`` rows), the :data:`ACTION_SET_REWARD`."""
    env = EnvSettings(
        variant=get_variant(variant).spec_text(),
        obs_mode=ACTIONS_MODE,
        action_rows=action_rows,
        reward_mode=ACTION_SET_REWARD,
    )
    return Sidecar(
        env=env,
        algo="MaskablePPO",
        policy=ACTION_SET_POLICY,
        deterministic=deterministic,
        training=training or {},
    )


def action_set_model(
    variant: Variant | str,
    *,
    hidden: int = 128,
    action_rows: int = DEFAULT_ACTION_ROWS,
    seed: int = 0,
    n_envs: int = 1,
    **ppo_kwargs: Any,
) -> Any:
    """A new ``MaskablePPO`` of :class:`~.policy.ActionSetPolicy` (``hidden`` wide, its weights
    drawn from ``seed``) on ``n_envs`` training envs of ``variant``
    (:func:`~.envs.env_factories`, the env of :func:`action_set_sidecar`); ``ppo_kwargs`` go to
    ``MaskablePPO`` (its own defaults otherwise: the model also holds a policy that another
    trainer trains, and saves it). No SB3 log (without one, every ``learn()`` leaves an empty
    ``SB3-<time>`` folder in the temporary directory)."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import DummyVecEnv

    from .envs import env_factories

    env = action_set_sidecar(variant, True, action_rows).env
    model = MaskablePPO(
        ActionSetPolicy,
        DummyVecEnv(env_factories(env, n_envs, seed=seed)),
        policy_kwargs={"hidden": hidden, "value_hidden": hidden},
        seed=seed,
        device="cpu",
        verbose=0,
        **ppo_kwargs,
    )
    model.set_logger(Logger(folder=None, output_formats=[]))
    return model


def load_action_set_model(path: str | Path) -> tuple[Sidecar, Variant, Any]:
    """The sidecar, game and model of a saved action-set model (a cloned one, a batched PPO
    checkpoint): ``ValueError`` if ``path`` is not one (no sidecar naming its game, another
    kind of model, a file that does not load)."""
    side = Sidecar.read(path)
    variant = side.env.game() if side is not None else None
    if side is None or variant is None:
        raise ValueError(f"{path} has no sidecar naming its game")
    if side.env.obs_mode != ACTIONS_MODE or side.policy != ACTION_SET_POLICY:
        raise ValueError(
            f"{path} is not an action-set model (its sidecar has obs_mode "
            f"{side.env.obs_mode!r} and policy {side.policy!r}, not {ACTIONS_MODE!r} and "
            f"{ACTION_SET_POLICY}): give a model cloned by examples/clone_teacher.py"
        )
    return side, variant, load_model(path, side)


__all__ = [
    "ACTION_SET_POLICY",
    "ACTION_SET_REWARD",
    "action_set_model",
    "action_set_sidecar",
    "algo_class",
    "load_action_set_model",
    "load_model",
    "model_agent",
    "model_file_path",
    "save_compact",
    "save_model",
    "single_thread",
]
