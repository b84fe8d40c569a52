"""Trained policies of other formats as model files (:mod:`spider_env.agents.model_file`).

* :func:`read_sb3_zip`: a Stable-Baselines3 / sb3-contrib ``.zip``, read as data. Its ``data``
  entry is JSON, whose ``":serialized:"`` entries (cloudpickled classes, spaces, schedules)
  are never decoded; the weights come from ``policy.pth`` through
  ``torch.load(..., weights_only=True)``, which refuses anything but tensors; the network is
  recognised from the weights' names and shapes, the game and observation from the sidecar
  (:class:`~spider_env.agents.model_format.Sidecar`) or, without one, from the weights and the
  game the caller names. What cannot be read that way is refused in one line saying how to
  convert a file the user trusts.
* :func:`from_sb3_model` / :func:`from_state_dict`: a policy in memory (what every trainer
  saves beside its own checkpoint).
* :func:`convert_trusted`: a file that *is* unpickled, for a user who trusts it: an SB3 zip that
  cannot be read as data (e.g. pickled ``policy_kwargs``) or an RLlib checkpoint. It is the
  only function here that unpickles, and ``spider-env model convert --trust-pickle`` says so.

Parameter names are those of the project's own networks (``spider_env.agents.rl.policy``, SB3's
``MlpPolicy``, DQN's ``QNetwork``, the RLlib modules of :mod:`.rllib_modules`, which name their
parameters as SB3 does).
"""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from spider_env.agents.model_file import ActionSetArchitecture, MLPArchitecture, SavedModel
from spider_env.agents.model_format import (
    ACTIONS_MODE,
    EnvSettings,
    ModelLoadError,
    Sidecar,
)

from spider_env.core.variants import Variant, get_variant
from spider_env.observation import slots_for_flat_width
from spider_env.observation.actions import (
    DEFAULT_ACTION_ROWS,
    N_ACTION_FEATURES,
    N_GLOBAL_FEATURES,
)

#: The largest ``policy.pth`` read (the shipped models' are below 4 MB).
MAX_WEIGHTS_BYTES = 256 * 2**20
CONVERT_HINT = (
    "if you trust the file, convert it once (this unpickles it): "
    "spider-env model convert --trust-pickle {path} MODEL.safetensors"
)
#: SB3's actor-critic default activation (``ActorCriticPolicy``), and DQN's.
ACTOR_CRITIC_ACTIVATION = "tanh"
DQN_ACTIVATION = "relu"


def _numbered(state: Mapping[str, np.ndarray], prefix: str) -> list[str]:
    """The layer names ``prefix.0``, ``prefix.2``, ... of a ``Sequential`` of Linear and
    activation layers, in order."""
    found = sorted(
        {int(k[len(prefix) + 1 :].split(".")[0]) for k in state if k.startswith(prefix + ".")}
    )
    return [f"{prefix}.{i}" for i in found]


def from_state_dict(
    state: Mapping[str, Any],
    env: EnvSettings,
    *,
    deterministic: bool,
    training: dict[str, Any] | None = None,
    card: dict[str, Any] | None = None,
    activation: str | None = None,
) -> SavedModel:
    """The model file of a policy's ``state`` (tensor name -> array or torch tensor) trained
    on ``env``: the action-set network (SB3's extractor names, the batched PPO's, RLlib's),
    an SB3 ``MlpPolicy`` (``mlp_extractor.policy_net``, ``action_net``; ``activation``
    ``"tanh"`` unless given) or a DQN ``QNetwork`` (``q_net.q_net``, ReLU).
    :class:`ModelLoadError` for anything else."""
    arrays = {k: np.asarray(_numpy(v), dtype=np.float32) for k, v in state.items()}
    game = env.game()
    if game is None:
        raise ModelLoadError("the model's game is not known")
    extract = next(
        (
            p
            for p in ("pi_features_extractor", "features_extractor")
            if f"{p}.embed.0.weight" in arrays
        ),
        None,
    )
    if extract is not None:
        return _action_set(arrays, extract, env, game, deterministic, training, card)
    if "mlp_extractor.policy_net.0.weight" in arrays or "action_net.weight" in arrays:
        layers = _numbered(arrays, "mlp_extractor.policy_net")
        return _mlp(
            arrays, layers, "action_net", _numbered(arrays, "mlp_extractor.value_net"),
            activation or ACTOR_CRITIC_ACTIVATION, env, deterministic, training, card,
        )  # fmt: skip
    if "q_net.q_net.0.weight" in arrays:
        layers = _numbered(arrays, "q_net.q_net")
        return _mlp(
            arrays, layers[:-1], layers[-1], [], activation or DQN_ACTIVATION, env,
            deterministic, training, card,
        )  # fmt: skip
    names = ", ".join(sorted(arrays)[:4])
    raise ModelLoadError(
        f"the weights ({names}, ...) are of no network this version plays (the action-set "
        "network, an MLP policy, a DQN)"
    )


def _numpy(value: Any) -> Any:
    detach = getattr(value, "detach", None)
    return detach().cpu().numpy() if detach is not None else value


def _action_set(
    arrays: dict[str, np.ndarray],
    extract: str,
    env: EnvSettings,
    game: Variant,
    deterministic: bool,
    training: dict[str, Any] | None,
    card: dict[str, Any] | None,
) -> SavedModel:
    hidden = int(arrays[f"{extract}.embed.0.weight"].shape[0])
    weights = {
        name: arrays[f"{extract}.{name}"]
        for name in ("embed.0.weight", "embed.0.bias", "embed.2.weight", "embed.2.bias")
        + ("score.weight", "score.bias")
        if f"{extract}.{name}" in arrays
    }
    # the critic: in the actor's extractor, or in the shared one (SB3 names it three times)
    critic = next(
        (p for p in (extract, "features_extractor") if f"{p}.value.0.weight" in arrays), None
    )
    value_hidden = 0
    if critic is not None and "value_net.weight" in arrays:
        value_hidden = int(arrays[f"{critic}.value.0.weight"].shape[0])
        weights |= {
            "value.0.weight": arrays[f"{critic}.value.0.weight"],
            "value.0.bias": arrays[f"{critic}.value.0.bias"],
            "value_net.weight": arrays["value_net.weight"],
            "value_net.bias": arrays["value_net.bias"],
        }
    arch = ActionSetArchitecture(
        features=N_ACTION_FEATURES,
        globals=N_GLOBAL_FEATURES,
        hidden=hidden,
        n_actions=game.n_actions,
        value_hidden=value_hidden,
    )
    if env.obs_mode != ACTIONS_MODE:
        env = EnvSettings(
            variant=env.variant, obs_mode=ACTIONS_MODE, action_rows=env.action_rows,
            reward_mode=env.reward_mode, illegal_action=env.illegal_action,
            max_episode_steps=env.max_episode_steps,
        )  # fmt: skip
    model = SavedModel(arch, env, weights, deterministic, dict(training or {}), dict(card or {}))
    model.check("the action-set weights")
    return model


def _mlp(
    arrays: dict[str, np.ndarray],
    layers: list[str],
    head: str,
    value_layers: list[str],
    activation: str,
    env: EnvSettings,
    deterministic: bool,
    training: dict[str, Any] | None,
    card: dict[str, Any] | None,
) -> SavedModel:
    game = env.game()
    assert game is not None
    weights: dict[str, np.ndarray] = {}
    for i, name in enumerate(layers):
        weights[f"policy_net.{2 * i}.weight"] = arrays[f"{name}.weight"]
        weights[f"policy_net.{2 * i}.bias"] = arrays[f"{name}.bias"]
    weights["action_net.weight"] = arrays[f"{head}.weight"]
    weights["action_net.bias"] = arrays[f"{head}.bias"]
    if value_layers and "value_net.weight" in arrays:
        for i, name in enumerate(value_layers):
            weights[f"value_mlp.{2 * i}.weight"] = arrays[f"{name}.weight"]
            weights[f"value_mlp.{2 * i}.bias"] = arrays[f"{name}.bias"]
        weights["value_net.weight"] = arrays["value_net.weight"]
        weights["value_net.bias"] = arrays["value_net.bias"]
    else:
        value_layers = []
    first = arrays[f"{layers[0]}.weight"] if layers else arrays[f"{head}.weight"]
    arch = MLPArchitecture(
        inputs=int(first.shape[1]),
        layers=tuple(int(arrays[f"{n}.weight"].shape[0]) for n in layers),
        activation=activation,
        n_actions=int(arrays[f"{head}.weight"].shape[0]),
        value_layers=tuple(int(arrays[f"{n}.weight"].shape[0]) for n in value_layers),
    )
    model = SavedModel(arch, env, weights, deterministic, dict(training or {}), dict(card or {}))
    model.check("the MLP weights")
    return model


# --- Stable-Baselines3 zips, read as data -------------------------------------------------------


def _zip_json(zf: zipfile.ZipFile, path: str) -> dict[str, Any]:
    try:
        data = json.loads(zf.read("data").decode("utf-8"))
    except KeyError:
        raise ModelLoadError(f"{path} is not a Stable-Baselines3 model (no 'data' entry)") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelLoadError(f"{path}: its 'data' entry is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ModelLoadError(f"{path}: its 'data' entry is not a JSON object")
    return data


def _zip_weights(zf: zipfile.ZipFile, path: str) -> dict[str, Any]:
    import torch

    try:
        info = zf.getinfo("policy.pth")
    except KeyError:
        raise ModelLoadError(f"{path} has no policy weights ('policy.pth')") from None
    if info.file_size > MAX_WEIGHTS_BYTES:
        raise ModelLoadError(f"{path}: its weights take {info.file_size:,} bytes (at most "
                             f"{MAX_WEIGHTS_BYTES:,})")  # fmt: skip
    try:
        state = torch.load(io.BytesIO(zf.read(info)), weights_only=True, map_location="cpu")
    except (pickle.UnpicklingError, RuntimeError, ValueError, EOFError) as exc:
        line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelLoadError(
            f"{path}: its weights are not plain tensors (refused without running them: "
            f"{line}); {CONVERT_HINT.format(path=path)}"
        ) from None
    if not isinstance(state, dict) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()
    ):
        raise ModelLoadError(f"{path}: its weights are not a dict of named tensors")
    return state


def _plain(value: Any) -> bool:
    """Whether a ``data`` entry is plain JSON (no ``":serialized:"`` object anywhere in it)."""
    if isinstance(value, dict):
        return ":serialized:" not in value and all(_plain(v) for v in value.values())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return True


def read_sb3_zip(path: str | Path, variant: Variant | str | None = None) -> tuple[SavedModel, bool]:
    """The policy of the SB3 zip ``path``, read as data (see the module docstring), and whether
    the file named its game (its sidecar did; else the game is ``variant``, by default classic
    4-suit Spider, and the observation is inferred from the weights).
    :class:`ModelLoadError` (one line) for anything it cannot read that way."""
    where = str(path)
    side = Sidecar.read(path)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelLoadError(f"{where} is not a Stable-Baselines3 model ({exc})") from None
    with zf:
        data = _zip_json(zf, where)
        kwargs = data.get("policy_kwargs", {})
        if not _plain(kwargs):
            raise ModelLoadError(
                f"{where}: its policy settings are pickled objects, which are never read; "
                + CONVERT_HINT.format(path=where)
            )
        state = _zip_weights(zf, where)
        version = zf.read("_stable_baselines3_version").decode("utf-8", "replace").strip()[
            :40
        ] if "_stable_baselines3_version" in zf.namelist() else None  # fmt: skip
    activation = kwargs.get("activation_fn") if isinstance(kwargs, dict) else None
    if activation is not None:  # a class: always pickled, refused above
        raise ModelLoadError(f"{where}: an activation_fn cannot be read as data")
    known = side is not None and side.env.game() is not None
    env = side.env if side is not None and known else _guess_env(state, variant, where)
    training = dict(side.training) if side is not None else {}
    training.setdefault("source", {"format": "stable-baselines3 zip", "sb3_version": version})
    deterministic = bool(side.deterministic) if side is not None else False
    return from_state_dict(state, env, deterministic=deterministic, training=training), known


def _guess_env(state: Mapping[str, Any], variant: Variant | str | None, where: str) -> EnvSettings:
    """The game (``variant``, by default classic 4-suit Spider) and observation of a zip without
    a sidecar that names them, from its weights."""
    game = get_variant(variant) if variant is not None else get_variant("spider-4suit")
    if any(k.endswith("features_extractor.embed.0.weight") for k in state):
        return EnvSettings(variant=game.spec_text(), obs_mode=ACTIONS_MODE,
                           action_rows=DEFAULT_ACTION_ROWS)  # fmt: skip
    first = state.get("mlp_extractor.policy_net.0.weight", state.get("q_net.q_net.0.weight"))
    if first is None:
        raise ModelLoadError(f"{where}: no sidecar says how it reads the table, nor do its weights")
    try:
        slots = slots_for_flat_width(game, int(first.shape[1]))
    except ValueError as exc:
        raise ModelLoadError(
            f"{where}: its weights do not read {game.name}'s table ({exc})"
        ) from None
    return EnvSettings(variant=game.spec_text(), obs_mode="flat", feature_slots=slots)


# --- policies in memory, and trusted conversion ---------------------------------------------------


def from_sb3_model(model: Any, side: Sidecar, card: dict[str, Any] | None = None) -> SavedModel:
    """The model file of an SB3 model in memory, trained as ``side`` says (its policy's
    weights; an activation other than SB3's default read from the policy)."""
    policy = model.policy
    activation = None
    fn = getattr(policy, "activation_fn", None)
    if fn is not None:
        activation = {"Tanh": "tanh", "ReLU": "relu"}.get(getattr(fn, "__name__", ""))
        if activation is None:
            raise ModelLoadError(
                f"the policy's activation {fn!r} is of no network this version plays"
            )
    return from_state_dict(
        policy.state_dict(), side.env, deterministic=bool(side.deterministic),
        training=side.training, card=card, activation=activation,
    )  # fmt: skip


def convert_trusted(path: str | Path, variant: Variant | str | None = None) -> SavedModel:
    """The model file of ``path``, **unpickling it** (only for a file the user trusts): an SB3
    zip loaded by Stable-Baselines3 itself (:func:`~.models.load_model`), or an RLlib
    checkpoint folder (:func:`~.rllib.restore_module`; its game from ``variant``)."""
    p = Path(path)
    if p.is_dir():
        from .rllib import restore_module

        module = restore_module(p)
        game = get_variant(variant) if variant is not None else get_variant("spider-1suit")
        state = {k: v.detach().cpu().numpy() for k, v in module.state_dict().items()}
        env = _guess_env(state, game, str(p))
        return from_state_dict(state, env, deterministic=True,
                               training={"source": {"format": "rllib checkpoint"}})  # fmt: skip
    from .models import load_model

    side = Sidecar.read(p) or Sidecar()
    model = load_model(p, side)
    if side.env.game() is None:
        side = side.replace(**_guess_env(model.policy.state_dict(), variant, str(p)).__dict__)
    return from_sb3_model(model, side)


__all__ = [
    "CONVERT_HINT",
    "MAX_WEIGHTS_BYTES",
    "convert_trusted",
    "from_sb3_model",
    "from_state_dict",
    "read_sb3_zip",
]
