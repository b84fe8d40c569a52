"""The model file: what a trained policy is when it is shared. Data only.

``model.safetensors`` holds the network's weights (`safetensors <https://huggingface.co/docs/
safetensors>`_: a JSON header and raw little-endian arrays, nothing that can run code) and, in
the header's metadata under ``"spider_env"``, one JSON object::

    {"format": "spider-env-model 3",
     "architecture": {"name": "action-set", "features": 27, "globals": 11, "hidden": 128,
                      "value_hidden": 128, "n_actions": 1301},
     "env": {"variant": "spider-1suit", "obs_mode": "actions", "action_rows": 96,
             "reward_mode": "runs", "illegal_action": "penalize", "max_episode_steps": 1000},
     "deterministic": true,
     "training": {...},            # what training recorded: trainer, steps, settings
     "card": {...}}                # the model card: title, training command, results

Reading (:meth:`SavedModel.read`) never unpickles and never imports anything the file names:
the architecture is one of the project's own (:data:`ARCHITECTURES`, an allow-list), every
tensor the architecture declares must be there with its shape, as ``float32`` and finite, and
no other; the header has no field but the format's (``training`` and ``card`` are free records:
data, shown, never interpreted); the game must be a registered variant whose observation and
actions fit the network.
Anything else is a :class:`~spider_env.agents.model_format.ModelLoadError` of one line naming
what is wrong. The NumPy networks that play a file are :mod:`spider_env.agents.networks`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from spider_env.core.checks import is_int
from spider_env.observation import flat_width
from spider_env.observation.actions import N_ACTION_FEATURES, N_GLOBAL_FEATURES

from .model_format import ACTIONS_MODE, EnvSettings, ModelLoadError, env_settings_from_json

FORMAT = "spider-env-model 3"
SUFFIX = ".safetensors"
METADATA_KEY = "spider_env"
#: The largest width of a layer a model file may declare.
MAX_WIDTH = 65_536
#: The activations of the MLP architecture.
ACTIVATIONS = ("tanh", "relu")
#: The fields of the header's JSON object, and of its ``"env"``: a file with another is refused
#: (``"training"`` and ``"card"`` are free records, kept as data and never interpreted).
FIELDS = ("format", "architecture", "env", "deterministic", "training", "card")
ENV_FIELDS = (
    "variant", "obs_mode", "feature_slots", "action_rows", "reward_mode", "illegal_action",
    "max_episode_steps",
)  # fmt: skip


def _only(data: Mapping[str, Any], known: tuple[str, ...], what: str, where: str) -> None:
    """:class:`ModelLoadError` naming the first fields of ``data`` not in ``known``."""
    unknown = [k for k in data if k not in known]
    if unknown:
        names = ", ".join(repr(k[:40]) for k in unknown[:3]) + (", ..." if len(unknown) > 3 else "")
        raise ModelLoadError(
            f"{where}: unknown field {names} in {what} (this version reads {', '.join(known)})"
        )


def _dim(data: Mapping[str, Any], key: str, where: str, low: int = 1) -> int:
    value = data.get(key)
    if not is_int(value) or not low <= value <= MAX_WIDTH:
        raise ModelLoadError(f"{where}: {key} must be an int in {low}..{MAX_WIDTH}, got {value!r}")
    return int(value)


def _dims(data: Mapping[str, Any], key: str, where: str, empty: bool = False) -> tuple[int, ...]:
    value = data.get(key, [] if empty else None)
    if not isinstance(value, list) or (not value and not empty):
        raise ModelLoadError(f"{where}: {key} must be a list of layer widths, got {value!r}")
    return tuple(_dim({key: v}, key, where) for v in value)


@dataclass(frozen=True)
class ActionSetArchitecture:
    """The action-set network (the policy of every trainer of ``obs_mode="actions"``): each
    legal action's row of ``features`` (with the position's ``globals``) goes through two ReLU
    layers ``hidden`` wide and a linear score; the critic (``value_hidden`` > 0, stored for
    training on) pools the rows' embeddings (mean and max) with the globals through one ReLU
    layer and a linear value."""

    features: int
    globals: int
    hidden: int
    n_actions: int
    value_hidden: int = 0
    name: ClassVar[str] = "action-set"
    #: The fields of its JSON object (:meth:`to_json`); a file with another is refused.
    json_fields: ClassVar[tuple[str, ...]] = (
        "name", "features", "globals", "hidden", "value_hidden", "n_actions",
    )  # fmt: skip

    def tensors(self) -> dict[str, tuple[int, ...]]:
        """Every tensor the network has, by name, with its shape (PyTorch's layout)."""
        h, inputs = self.hidden, self.features + self.globals
        out = {
            "embed.0.weight": (h, inputs),
            "embed.0.bias": (h,),
            "embed.2.weight": (h, h),
            "embed.2.bias": (h,),
            "score.weight": (1, h),
            "score.bias": (1,),
        }
        if self.value_hidden:
            v = self.value_hidden
            out |= {
                "value.0.weight": (v, 2 * h + self.globals),
                "value.0.bias": (v,),
                "value_net.weight": (1, v),
                "value_net.bias": (1,),
            }
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "features": self.features,
            "globals": self.globals,
            "hidden": self.hidden,
            "value_hidden": self.value_hidden,
            "n_actions": self.n_actions,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str) -> ActionSetArchitecture:
        return cls(
            features=_dim(data, "features", where),
            globals=_dim(data, "globals", where),
            hidden=_dim(data, "hidden", where),
            n_actions=_dim(data, "n_actions", where),
            value_hidden=_dim(data, "value_hidden", where, low=0),
        )

    def check_env(self, env: EnvSettings, where: str) -> None:
        """The game's observation and actions fit the network."""
        if env.obs_mode != ACTIONS_MODE:
            raise ModelLoadError(
                f"{where}: the {self.name} network reads obs_mode {ACTIONS_MODE!r}, the file "
                f"says {env.obs_mode!r}"
            )
        if (self.features, self.globals) != (N_ACTION_FEATURES, N_GLOBAL_FEATURES):
            raise ModelLoadError(
                f"{where}: the network reads {self.features} features per action and "
                f"{self.globals} globals; the env gives {N_ACTION_FEATURES} and "
                f"{N_GLOBAL_FEATURES}"
            )


@dataclass(frozen=True)
class MLPArchitecture:
    """A multi-layer perceptron over the ``"flat"`` observation (Stable-Baselines3's
    ``MlpPolicy`` actor, a DQN's Q-network): hidden ``layers`` of ``activation``, then a
    linear score per action; an actor-critic's value MLP (``value_layers``, then a linear
    value) is stored for training on."""

    inputs: int
    layers: tuple[int, ...]
    activation: str
    n_actions: int
    value_layers: tuple[int, ...] = ()
    name: ClassVar[str] = "mlp"
    #: The fields of its JSON object (:meth:`to_json`); a file with another is refused.
    json_fields: ClassVar[tuple[str, ...]] = (
        "name", "inputs", "layers", "activation", "value_layers", "n_actions",
    )  # fmt: skip

    def tensors(self) -> dict[str, tuple[int, ...]]:
        """Every tensor the network has, by name, with its shape (PyTorch's layout)."""
        out: dict[str, tuple[int, ...]] = {}
        width = self.inputs
        for i, size in enumerate(self.layers):
            out[f"policy_net.{2 * i}.weight"] = (size, width)
            out[f"policy_net.{2 * i}.bias"] = (size,)
            width = size
        out["action_net.weight"] = (self.n_actions, width)
        out["action_net.bias"] = (self.n_actions,)
        if self.value_layers:
            width = self.inputs
            for i, size in enumerate(self.value_layers):
                out[f"value_mlp.{2 * i}.weight"] = (size, width)
                out[f"value_mlp.{2 * i}.bias"] = (size,)
                width = size
            out["value_net.weight"] = (1, width)
            out["value_net.bias"] = (1,)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "inputs": self.inputs,
            "layers": list(self.layers),
            "activation": self.activation,
            "value_layers": list(self.value_layers),
            "n_actions": self.n_actions,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str) -> MLPArchitecture:
        activation = data.get("activation")
        if activation not in ACTIVATIONS:
            raise ModelLoadError(
                f"{where}: activation must be one of {', '.join(ACTIVATIONS)}, got {activation!r}"
            )
        return cls(
            inputs=_dim(data, "inputs", where),
            layers=_dims(data, "layers", where, empty=True),
            activation=str(activation),
            n_actions=_dim(data, "n_actions", where),
            value_layers=_dims(data, "value_layers", where, empty=True),
        )

    def check_env(self, env: EnvSettings, where: str) -> None:
        """The game's observation and actions fit the network."""
        if env.obs_mode != "flat":
            raise ModelLoadError(
                f"{where}: the {self.name} network reads obs_mode 'flat', the file says "
                f"{env.obs_mode!r}"
            )
        game = env.game()
        assert game is not None
        width = flat_width(game, env.feature_slots)
        if width != self.inputs:
            raise ModelLoadError(
                f"{where}: the network reads {self.inputs} inputs; {game.name} with "
                f"feature_slots={env.feature_slots} gives {width}"
            )


Architecture = ActionSetArchitecture | MLPArchitecture
#: The allow-list: the only networks a model file may declare, by name.
ARCHITECTURES: dict[str, type[ActionSetArchitecture] | type[MLPArchitecture]] = {
    ActionSetArchitecture.name: ActionSetArchitecture,
    MLPArchitecture.name: MLPArchitecture,
}


def public_record(record: Any) -> Any:
    """``record`` (JSON data) with every absolute path made its last part, recursively: what a
    shared file may say of where it was made (a run's ``out`` folder says nothing useful and
    names the trainer's machine)."""
    if isinstance(record, dict):
        return {str(k): public_record(v) for k, v in record.items()}
    if isinstance(record, list | tuple):
        return [public_record(v) for v in record]
    if isinstance(record, str) and os.path.isabs(record):
        return os.path.basename(record.rstrip("/\\")) or record
    return record


def _json_object(value: Any, key: str, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ModelLoadError(f"{where}: {key!r} must be a JSON object, got {type(value).__name__}")
    return value


@dataclass(frozen=True)
class SavedModel:
    """A trained policy as data: its :attr:`architecture`, :attr:`weights` (``float32`` arrays
    by tensor name), the :attr:`env` it was trained on, how it chooses
    (:attr:`deterministic`: the most likely legal action, or sampled), what training recorded
    and its model card. :meth:`write` / :meth:`read` are the file (see the module
    docstring)."""

    architecture: Architecture
    env: EnvSettings
    weights: Mapping[str, np.ndarray]
    deterministic: bool = True
    training: dict[str, Any] = field(default_factory=dict)
    card: dict[str, Any] = field(default_factory=dict)

    def check(self, where: str) -> None:
        """Every field against the architecture and the game (:class:`ModelLoadError` of one
        line otherwise)."""
        arch = self.architecture
        game = self.env.game()
        if game is None:
            raise ModelLoadError(f"{where}: the env settings name no game")
        if arch.n_actions != game.n_actions:
            raise ModelLoadError(
                f"{where}: the network scores {arch.n_actions} actions; {game.name} has "
                f"{game.n_actions}"
            )
        arch.check_env(self.env, where)
        want = arch.tensors()
        have = set(self.weights)
        missing, extra = sorted(set(want) - have), sorted(have - set(want))
        if missing or extra:
            raise ModelLoadError(
                f"{where}: the {arch.name} network's tensors do not match"
                + (f"; missing {', '.join(missing)}" if missing else "")
                + (f"; unknown {', '.join(extra)}" if extra else "")
            )
        for name, shape in want.items():
            w = self.weights[name]
            if not isinstance(w, np.ndarray) or w.dtype != np.float32:
                kind = getattr(w, "dtype", type(w).__name__)
                raise ModelLoadError(f"{where}: tensor {name} must be float32, got {kind}")
            if w.shape != shape:
                raise ModelLoadError(
                    f"{where}: tensor {name} has shape {w.shape}, the {arch.name} network "
                    f"declared needs {shape}"
                )
            if not np.isfinite(w).all():
                raise ModelLoadError(f"{where}: tensor {name} holds a value that is not finite")

    def metadata(self) -> dict[str, Any]:
        """The JSON object of the file's header (see the module docstring)."""
        return {
            "format": FORMAT,
            "architecture": self.architecture.to_json(),
            "env": self.env.to_json(),
            "deterministic": self.deterministic,
            "training": public_record(self.training),
            "card": public_record(self.card),
        }

    def write(self, path: str | Path) -> Path:
        """Write the model file ``path`` (``.safetensors``), after :meth:`check`."""
        from safetensors.numpy import save_file

        path = Path(path)
        if path.suffix != SUFFIX:
            raise ValueError(f"a model file's name ends in {SUFFIX}, got {path.name!r}")
        self.check(f"the model to write to {path}")
        text = json.dumps(self.metadata(), allow_nan=False)
        path.parent.mkdir(parents=True, exist_ok=True)
        tensors = {k: np.ascontiguousarray(v) for k, v in self.weights.items()}
        save_file(tensors, str(path), metadata={METADATA_KEY: text})
        # safetensors creates the file readable by its owner only; a model file is made to be
        # shared: the permissions of any new file (0o666 less the umask)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(path, 0o666 & ~umask)
        return path

    @classmethod
    def read(cls, path: str | Path) -> SavedModel:
        """The model in ``path``: ``FileNotFoundError`` if there is none, else
        :class:`ModelLoadError` (one line) for anything but a valid model file."""
        where = str(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"model file not found: {path}")
        try:
            from safetensors import SafetensorError, safe_open
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise ImportError(f"reading a model file needs safetensors: {exc}") from None
        try:
            with safe_open(str(path), framework="np") as f:
                meta = f.metadata() or {}
                names = list(f.keys())
                shapes = {k: tuple(f.get_slice(k).get_shape()) for k in names}
                dtypes = {k: f.get_slice(k).get_dtype() for k in names}
                text = meta.get(METADATA_KEY)
                if not isinstance(text, str):
                    raise ModelLoadError(
                        f"{where}: not a spider-env model file (no {METADATA_KEY!r} metadata)"
                    )
                data = _header(text, where)
                arch = _architecture(data, where)
                want = arch.tensors()
                for k in names:  # shapes and dtypes first: nothing unexpected is read
                    if k in want and (shapes[k] != want[k] or dtypes[k] != "F32"):
                        raise ModelLoadError(
                            f"{where}: tensor {k} is {dtypes[k]} of shape {shapes[k]}, the "
                            f"{arch.name} network declared needs F32 of shape {want[k]}"
                        )
                weights = {k: f.get_tensor(k) for k in names if k in want}
                weights |= {k: np.empty(0, np.float32) for k in names if k not in want}
        except (SafetensorError, OSError, ValueError) as exc:
            if isinstance(exc, ModelLoadError):
                raise
            line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ModelLoadError(f"{where}: not a readable model file ({line})") from None
        return cls.from_metadata(data, weights, where)

    @classmethod
    def from_metadata(
        cls, data: dict[str, Any], weights: Mapping[str, np.ndarray], where: str
    ) -> SavedModel:
        """A model from its header's JSON object and its tensors (checked)."""
        arch = _architecture(data, where)
        env_data = _json_object(data.get("env"), "env", where)
        _only(env_data, ENV_FIELDS, "its env", where)
        env = env_settings_from_json(env_data, where)
        deterministic = data.get("deterministic")
        if not isinstance(deterministic, bool):
            raise ModelLoadError(f"{where}: 'deterministic' must be true or false")
        model = cls(
            architecture=arch,
            env=env,
            weights=dict(weights),
            deterministic=deterministic,
            training=_json_object(data.get("training", {}), "training", where),
            card=_json_object(data.get("card", {}), "card", where),
        )
        model.check(where)
        return model


def _header(text: str, where: str) -> dict[str, Any]:
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except (json.JSONDecodeError, ValueError) as exc:
        raise ModelLoadError(f"{where}: its metadata is not JSON ({exc})") from None
    data = _json_object(data, METADATA_KEY, where)
    if data.get("format") != FORMAT:
        raise ModelLoadError(
            f"{where}: format {data.get('format')!r}; this version reads {FORMAT!r}"
        )
    _only(data, FIELDS, "its metadata", where)
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _architecture(data: Mapping[str, Any], where: str) -> Architecture:
    arch = _json_object(data.get("architecture"), "architecture", where)
    name = arch.get("name")
    kind = ARCHITECTURES.get(name) if isinstance(name, str) else None
    if kind is None:
        raise ModelLoadError(
            f"{where}: unknown architecture {name!r} (this version plays "
            f"{', '.join(ARCHITECTURES)})"
        )
    _only(arch, kind.json_fields, f"its {name} architecture", where)
    return kind.from_json(arch, where)


def is_model_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a model file (by its suffix)."""
    return str(path).endswith(SUFFIX)


__all__ = [
    "ACTIVATIONS",
    "ARCHITECTURES",
    "ENV_FIELDS",
    "FIELDS",
    "FORMAT",
    "MAX_WIDTH",
    "METADATA_KEY",
    "SUFFIX",
    "ActionSetArchitecture",
    "Architecture",
    "MLPArchitecture",
    "SavedModel",
    "is_model_file",
    "public_record",
]
