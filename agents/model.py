"""A trained Stable-Baselines3 / sb3-contrib model (``.zip``) as an agent.

``load_sb3_agent("runs/ppo/model.zip", variant)`` returns an :class:`SB3Agent`. At every step
the policy's action scores (logits, or Q-values for DQN) are restricted to the legal actions of
the env's mask (for MaskablePPO this is exactly its masked distribution), then either the most
likely legal action is played (``deterministic=True``) or one is sampled from the softmax of
those scores with the agent's seeded RNG (``deterministic=False``; reproducible for a seed).
By default the choice is the sidecar's ``deterministic`` and, without one, sampled: the most
likely action tends to shuttle cards back and forth. The agent's ``name`` says which it uses
(``"model.zip (sampled)"``, ``"model.zip (most likely)"``).

The observation the model was trained on is rebuilt from what the agent is given (the env's ``dict``
observation, parsed once per step by :class:`~spider_env.observation.view.TableView`; nothing hidden
is used): ``obs_mode`` ``"dict"``, ``"features"``, ``"flat"`` or ``"actions"`` (the per-action
features of :mod:`spider_env.observation.actions`, with the episode's memory of visited positions,
cleared by ``reset``) and ``feature_slots`` come from the JSON sidecar the training examples write
next to the model (``model.json`` beside ``model.zip``, ``env_kwargs``), else they are inferred from
the model's observation space with the layout sizes of :mod:`spider_env.observation`. torch and
stable-baselines3 are optional (the ``train`` extra) and imported only here.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from spider_env.core.variants import Variant, get_variant, resolve_variant
from spider_env.observation import (
    DEFAULT_FEATURE_SLOTS,
    OBS_MODES,
    FeatureEncoder,
    observation_space,
    slots_for_feature_width,
    slots_for_flat_width,
)
from spider_env.observation.actions import (
    DEFAULT_ACTION_ROWS,
    ActionFeatureEncoder,
    action_feature_space,
)
from spider_env.observation.view import TableView

from .base import BaseAgent

ACTIONS_MODE = "actions"  # spider_env.observation.actions (the RL recipe)

INSTALL_HINT = (
    "loading a trained model needs the optional 'train' dependencies "
    "(stable-baselines3, sb3-contrib, torch): pip install 'spider-env[train]'"
)
ALGOS = ("MaskablePPO", "PPO", "A2C", "DQN")


class ModelLoadError(ValueError):
    """The model file or its sidecar cannot be used (the message says why)."""


def sidecar_path(path: str) -> str:
    root, _ = os.path.splitext(path)
    return root + ".json"


def read_sidecar(path: str) -> dict[str, Any]:
    """The JSON sidecar next to the model (``{}`` if there is none)."""
    side = sidecar_path(path)
    if not os.path.exists(side):
        return {}
    try:
        with open(side, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelLoadError(f"cannot read the model's sidecar {side}: {exc}") from None
    if not isinstance(data, dict):
        raise ModelLoadError(f"the model's sidecar {side} must hold a JSON object")
    return data


def sidecar_variant(path: str) -> Variant | None:
    """The game a model's sidecar says it was trained on (``None`` without a sidecar or a
    game in it; :class:`ModelLoadError` if the sidecar cannot be read or names no known game)."""
    meta = read_sidecar(path)
    env_kwargs = _sidecar_field(meta, "env_kwargs", dict, path) or {}
    if env_kwargs.get("variant") is None and env_kwargs.get("suits") is None:
        return None
    try:
        return resolve_variant(
            env_kwargs.get("variant"), env_kwargs.get("suits"), env_kwargs.get("undo", False)
        )
    except (TypeError, ValueError) as exc:
        raise ModelLoadError(f"the sidecar {sidecar_path(path)} names no game: {exc}") from None


def _algo_from_zip(path: str) -> str | None:
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


def _algo_class(name: str) -> Any:
    try:
        if name == "MaskablePPO":
            from sb3_contrib import MaskablePPO

            return MaskablePPO
        import stable_baselines3 as sb3
    except ImportError as exc:
        raise ImportError(f"{INSTALL_HINT} ({exc})") from None
    if not hasattr(sb3, name):
        raise ModelLoadError(f"unknown algorithm {name!r} (known: {', '.join(ALGOS)})")
    return getattr(sb3, name)


class SB3Agent(BaseAgent):
    """A loaded SB3 model playing through the agent protocol (see the module docstring)."""

    name = "sb3"

    def __init__(
        self,
        model: Any,
        variant: Variant | str,
        obs_mode: str = "dict",
        feature_slots: int = DEFAULT_FEATURE_SLOTS,
        deterministic: bool = False,
        seed: int | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(variant, seed)
        assert self.variant is not None
        if obs_mode not in (*OBS_MODES, ACTIONS_MODE):
            raise ModelLoadError(f"unsupported observation mode {obs_mode!r}")
        if not isinstance(deterministic, bool):
            raise TypeError(f"deterministic must be a bool, got {deterministic!r}")
        self.model = model
        self.obs_mode = obs_mode
        self.feature_slots = feature_slots
        self.deterministic = deterministic
        self.name = f"{name or self.name} ({'most likely' if deterministic else 'sampled'})"
        self._encoder = (
            FeatureEncoder(self.variant, feature_slots)
            if obs_mode in ("features", "flat")
            else None
        )
        self._actions = (
            ActionFeatureEncoder(self.variant, feature_slots) if obs_mode == ACTIONS_MODE else None
        )
        space = model.observation_space
        self._wants_mask = hasattr(space, "spaces") and "action_mask" in space.spaces
        n = int(model.action_space.n) if hasattr(model.action_space, "n") else -1
        if n != self.variant.n_actions:
            raise ModelLoadError(
                f"the model has {n} actions, {self.variant.name} has {self.variant.n_actions}: "
                "it was trained on another variant"
            )
        self._check_space()

    def _check_space(self) -> None:
        """Fail early, with a clear message, if the model cannot read this variant's table."""
        assert self.variant is not None
        v, mode = self.variant, self.obs_mode
        if mode == ACTIONS_MODE:
            ours: Any = action_feature_space(v, self.feature_slots)
        else:
            ours = observation_space(v, mode, self.feature_slots, mask_in_obs=self._wants_mask)
        theirs = self.model.observation_space
        ours_d, theirs_d = getattr(ours, "spaces", None), getattr(theirs, "spaces", None)
        if ours_d is None or theirs_d is None:
            if ours_d is not None or theirs_d is not None or ours.shape != theirs.shape:
                raise ModelLoadError(
                    f"the model expects observations of {_shapes(theirs)}; {v.name} with "
                    f"obs_mode={mode!r} gives observations of {_shapes(ours)}: trained on "
                    "another variant?"
                )
            return
        for key, sub in theirs_d.items():
            if key not in ours_d or ours_d[key].shape != sub.shape:
                got = ours_d[key].shape if key in ours_d else "nothing"
                raise ModelLoadError(
                    f"the model expects observation {key!r} of shape {sub.shape}; {v.name} "
                    f"with obs_mode={mode!r} gives {got}: trained on another variant?"
                )

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if self._actions is not None:
            self._actions.reset()

    def encode(self, obs: Any, mask: np.ndarray) -> Any:
        """The model's input for a ``dict`` observation (features rebuilt from visible cards;
        in the ``"actions"`` mode one call is one decision of the episode)."""
        assert self.variant is not None
        if self._actions is not None:
            if not isinstance(obs, Mapping) or "tableau" not in obs:
                return obs  # already encoded (an env wrapped in ActionFeatures)
            return self._actions.encode(obs, mask)
        if self._encoder is None:
            if not isinstance(obs, Mapping):
                return obs
            out = {k: obs[k] for k in obs if k != "action_mask"}
        else:
            if not isinstance(obs, Mapping) or "tableau" not in obs:
                return obs  # already in the model's encoding (an env made with its obs_mode)
            state = TableView.from_obs(self.variant, obs).to_state()
            self._encoder.reset(state)
            cols, glob = self._encoder.encode(state)
            if self.obs_mode == "flat":
                return np.concatenate((cols.ravel(), glob))
            out = {"columns": cols, "globals": glob}
        if self._wants_mask:
            out["action_mask"] = np.asarray(mask, dtype=np.int8)
        return out

    def act(self, obs: Any, mask: np.ndarray, info: Mapping[str, Any] | None = None) -> int:
        assert self.variant is not None
        legal = self._legal(mask, self.variant)
        scores = self.scores(self.encode(obs, mask))[legal]
        if self.deterministic:
            return legal[int(np.argmax(scores))]
        p = np.exp(scores - scores.max())
        p /= p.sum()
        return legal[int(self.rng.choice(len(legal), p=p))]

    def scores(self, x: Any) -> np.ndarray:
        """The policy's score of every action for model input ``x``: the logits of its action
        distribution, or the Q-values of a DQN."""
        import torch

        policy = self.model.policy
        obs_t, _ = policy.obs_to_tensor(x)
        with torch.no_grad():
            q_net = getattr(policy, "q_net", None)
            if q_net is not None:
                out = q_net(obs_t)
            else:
                out = getattr(policy.get_distribution(obs_t).distribution, "logits", None)
                if out is None:
                    raise ModelLoadError(
                        f"{type(policy).__name__} gives no action logits: cannot restrict its "
                        "choices to legal actions"
                    )
        return np.asarray(out.cpu().numpy(), dtype=np.float64).reshape(-1)


def _shapes(space: Any) -> str:
    """A space's shape in words (for error messages)."""
    spaces = getattr(space, "spaces", None)
    if spaces is None:
        return f"shape {getattr(space, 'shape', None)}"
    return "dict {" + ", ".join(f"{k}: {sub.shape}" for k, sub in spaces.items()) + "}"


def _infer_obs_mode(space: Any, variant: Variant) -> tuple[str, int]:
    """``(obs_mode, feature_slots)`` of a model's observation space."""
    spaces = getattr(space, "spaces", None)
    try:
        if spaces is not None:
            if "tableau" in spaces:
                return "dict", DEFAULT_FEATURE_SLOTS
            if "action_ids" in spaces:
                return ACTIONS_MODE, int(spaces["action_ids"].shape[0])
            if "columns" in spaces:
                return "features", slots_for_feature_width(variant, spaces["columns"].shape[-1])
            raise ModelLoadError(f"cannot tell the model's observation encoding ({sorted(spaces)})")
        shape = getattr(space, "shape", None)
        if shape is None or len(shape) != 1:
            raise ModelLoadError(f"cannot tell the model's observation encoding (shape {shape})")
        return "flat", slots_for_flat_width(variant, shape[0])
    except ModelLoadError:
        raise
    except ValueError as exc:
        raise ModelLoadError(f"the model's observations do not fit {variant.name}: {exc}") from None


def _custom_objects(meta: dict[str, Any]) -> dict[str, Any]:
    """The policy class of an action-set model, given by its sidecar (models saved before the
    class moved name it by its old module path, which no longer imports)."""
    policy = meta.get("policy")
    if isinstance(policy, str) and policy.endswith(".ActionSetPolicy"):
        from spider_env.agents.rl.policy import ActionSetPolicy

        return {"policy_class": ActionSetPolicy}
    return {}


def _single_thread() -> None:
    """One torch thread: batch-1 inference of small policies is several times faster than
    with torch's default thread pool on a shared CPU (and ``--jobs`` gives the parallelism)."""
    try:
        import torch
    except ImportError as exc:
        raise ImportError(f"{INSTALL_HINT} ({exc})") from None
    torch.set_num_threads(1)


def _sidecar_field(meta: dict[str, Any], key: str, kind: type, path: str) -> Any:
    """``meta[key]`` if present (``ModelLoadError`` unless it is a ``kind``), else ``None``."""
    value = meta.get(key)
    if value is not None and not isinstance(value, kind):
        raise ModelLoadError(
            f"the sidecar {sidecar_path(path)} has {key}={value!r}, expected a {kind.__name__}"
        )
    return value


def load_sb3_agent(
    path: str,
    variant: Variant | str | None = None,
    *,
    seed: int | None = None,
    algo: str | None = None,
    deterministic: bool | None = None,
) -> SB3Agent:
    """Load ``path`` (``.zip``) as an agent for ``variant`` (default: the sidecar's game, else
    classic 4-suit Spider).

    ``deterministic``: ``True`` plays the most likely legal action, ``False`` samples one;
    ``None`` does what the sidecar's ``deterministic`` says, and samples without it.

    Raises ``FileNotFoundError``, ``ImportError`` (the ``train`` extra is missing) or
    :class:`ModelLoadError` (a ``ValueError``: not a model, a bad sidecar, or made for another
    variant).
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"model file not found: {path}")
    if not zipfile.is_zipfile(path):
        raise ModelLoadError(f"{path} is not a Stable-Baselines3 model (not a zip file)")
    if deterministic is not None and not isinstance(deterministic, bool):
        raise TypeError(f"deterministic must be True, False or None, got {deterministic!r}")
    meta = read_sidecar(path)
    env_kwargs = _sidecar_field(meta, "env_kwargs", dict, path) or {}
    if variant is None:
        try:
            variant = resolve_variant(
                env_kwargs.get("variant"), env_kwargs.get("suits"), env_kwargs.get("undo", False)
            )
        except (TypeError, ValueError) as exc:
            raise ModelLoadError(f"the sidecar {sidecar_path(path)} names no game: {exc}") from None
    v = get_variant(variant)
    sidecar_algo = _sidecar_field(meta, "algo", str, path)
    sidecar_det = _sidecar_field(meta, "deterministic", bool, path)
    names = [algo] if algo else [sidecar_algo] if sidecar_algo else []
    if not names:
        guess = _algo_from_zip(path)
        names = [guess] if guess else ["PPO", "A2C", "DQN"]
    model = None
    errors = []
    _single_thread()
    for name in names:
        cls = _algo_class(name)
        try:
            model = cls.load(path, device="cpu", custom_objects=_custom_objects(meta))
            break
        except Exception as exc:  # SB3 raises many kinds of errors for a foreign file
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
    if model is None:
        raise ModelLoadError(f"cannot load {path} as {' or '.join(names)}: {'; '.join(errors)}")
    if "obs_mode" in env_kwargs:
        obs_mode = str(env_kwargs["obs_mode"])
        default = DEFAULT_ACTION_ROWS if obs_mode == ACTIONS_MODE else DEFAULT_FEATURE_SLOTS
        slots = env_kwargs.get("feature_slots", default)
        if isinstance(slots, bool) or not isinstance(slots, int) or slots < 0:
            raise ModelLoadError(
                f"the sidecar {sidecar_path(path)} has feature_slots={slots!r}, expected an "
                "int >= 0"
            )
    else:
        obs_mode, slots = _infer_obs_mode(model.observation_space, v)
    if deterministic is None:
        deterministic = bool(sidecar_det)  # sampled unless the sidecar says otherwise
    return SB3Agent(model, v, obs_mode, slots, deterministic, seed, name=path)


__all__ = [
    "ACTIONS_MODE",
    "ModelLoadError",
    "SB3Agent",
    "load_sb3_agent",
    "read_sidecar",
    "sidecar_variant",
]
