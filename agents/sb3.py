"""A trained Stable-Baselines3 / sb3-contrib model (``.zip``) as an agent.

``load_sb3_agent("runs/ppo/model.zip", variant)`` returns an :class:`SB3Agent`. Masks are
applied at predict time: ``MaskablePPO.predict(..., action_masks=mask)``; for models trained
without masks (PPO, A2C, DQN) the policy's action scores (logits or Q-values) are restricted to
the legal actions before the argmax (or before sampling, with ``deterministic=False``).

The observation the model was trained on is rebuilt from what the agent is given (the env's
``dict`` observation; nothing hidden is used): ``obs_mode`` ``"dict"``, ``"features"`` or
``"flat"`` and ``feature_slots`` come from the JSON sidecar the training examples write next
to the model (``model.json`` beside ``model.zip``, ``env_kwargs``), else they are inferred from
the model's observation space. torch and stable-baselines3 are optional (the ``train`` extra)
and imported only here.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from spider_env.core.variants import Variant, classic, get_variant
from spider_env.observation import DEFAULT_FEATURE_SLOTS, FeatureEncoder

from .base import BaseAgent, legal_from_mask
from .view import TableView

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
        masked: bool = True,
        deterministic: bool = True,
        seed: int | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(variant, seed)
        assert self.variant is not None
        if obs_mode not in ("dict", "features", "flat"):
            raise ModelLoadError(f"unsupported observation mode {obs_mode!r}")
        self.model = model
        self.obs_mode = obs_mode
        self.feature_slots = feature_slots
        self.masked = masked
        self.deterministic = deterministic
        if name:
            self.name = name
        self._encoder = FeatureEncoder(self.variant, feature_slots) if obs_mode != "dict" else None
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
        probe = self.encode(_start_obs(self.variant), np.ones(self.variant.n_actions, bool))
        space = self.model.observation_space
        if hasattr(space, "spaces"):
            for key, sub in space.spaces.items():
                if key not in probe or np.shape(probe[key]) != sub.shape:
                    raise ModelLoadError(
                        f"the model expects observation {key!r} of shape {sub.shape}; "
                        f"{self.variant.name} with obs_mode={self.obs_mode!r} gives "
                        f"{np.shape(probe.get(key)) if key in probe else 'nothing'}"
                    )
        elif np.shape(probe) != space.shape:
            raise ModelLoadError(
                f"the model expects observations of shape {space.shape}; {self.variant.name} "
                f"with obs_mode={self.obs_mode!r} gives {np.shape(probe)}"
            )

    def encode(self, obs: Any, mask: np.ndarray) -> Any:
        """The model's input for a ``dict`` observation (features rebuilt from visible cards)."""
        assert self.variant is not None
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
        legal = legal_from_mask(mask)
        m = np.asarray(mask, dtype=bool)
        x = self.encode(obs, m)
        if self.masked:
            action, _ = self.model.predict(x, action_masks=m, deterministic=self.deterministic)
            a = int(np.asarray(action).reshape(-1)[0])
            if m[a]:
                return a
        scores = self._scores(x)
        if scores is None:  # pragma: no cover - every SB3 algorithm we load has scores
            return int(legal[self.rng.integers(legal.size)])
        scores = scores[legal]
        if self.deterministic:
            return int(legal[int(np.argmax(scores))])
        p = np.exp(scores - scores.max())
        p /= p.sum()
        return int(self.rng.choice(legal, p=p))

    def _scores(self, x: Any) -> np.ndarray | None:
        import torch

        policy = self.model.policy
        obs_t, _ = policy.obs_to_tensor(x)
        with torch.no_grad():
            q_net = getattr(policy, "q_net", None)
            if q_net is not None:
                out = q_net(obs_t)
            else:
                dist = policy.get_distribution(obs_t)
                out = getattr(dist.distribution, "logits", None)
                if out is None:
                    return None
        return np.asarray(out.cpu().numpy()).reshape(-1).astype(np.float64)


def _start_obs(v: Variant) -> dict[str, Any]:
    from spider_env.core.deals import generate_deal
    from spider_env.core.state import State
    from spider_env.observation import TableEncoder

    return TableEncoder(v).reset(State.from_deal(generate_deal(v, 0)))


def _infer_obs_mode(space: Any, variant: Variant) -> tuple[str, int]:
    spaces = getattr(space, "spaces", None)
    if spaces is not None:
        if "tableau" in spaces:
            return "dict", DEFAULT_FEATURE_SLOTS
        if "columns" in spaces:
            width = spaces["columns"].shape[-1]
            return "features", _slots_from_width(width, variant)
        raise ModelLoadError(f"cannot tell the model's observation encoding ({sorted(spaces)})")
    shape = getattr(space, "shape", None)
    if shape is None or len(shape) != 1:
        raise ModelLoadError(f"cannot tell the model's observation encoding (shape {shape})")
    for slots in range(0, 60):
        enc = FeatureEncoder(variant, slots)
        if variant.n_columns * enc.n_features + enc.n_globals == shape[0]:
            return "flat", slots
    raise ModelLoadError(
        f"a flat observation of size {shape[0]} does not fit {variant.name}: trained on "
        "another variant?"
    )


def _slots_from_width(width: int, variant: Variant) -> int:
    card = 13 + (variant.suits if variant.suits > 1 else 0)
    slots, rest = divmod(width - 4, card)
    if rest or slots < 1:
        raise ModelLoadError(f"column features of width {width} do not fit {variant.name}")
    return slots - 1


def _single_thread() -> None:
    """One torch thread: batch-1 inference of small policies is several times faster than
    with torch's default thread pool on a shared CPU (and ``--jobs`` gives the parallelism)."""
    try:
        import torch
    except ImportError as exc:
        raise ImportError(f"{INSTALL_HINT} ({exc})") from None
    torch.set_num_threads(1)


def load_sb3_agent(
    path: str,
    variant: Variant | str | None = None,
    *,
    seed: int | None = None,
    algo: str | None = None,
    deterministic: bool | None = None,
) -> SB3Agent:
    """Load ``path`` (``.zip``) as an agent for ``variant`` (default: the sidecar's game).

    Raises ``FileNotFoundError``, ``ImportError`` (the ``train`` extra is missing) or
    :class:`ModelLoadError` (a ``ValueError``: not a model, or made for another variant).
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"model file not found: {path}")
    if not zipfile.is_zipfile(path):
        raise ModelLoadError(f"{path} is not a Stable-Baselines3 model (not a zip file)")
    meta = read_sidecar(path)
    env_kwargs = meta.get("env_kwargs", {}) if isinstance(meta.get("env_kwargs"), dict) else {}
    if variant is None:
        if env_kwargs.get("variant"):
            variant = str(env_kwargs["variant"])
        else:
            suits = env_kwargs.get("suits", 4)
            variant = classic(suits if suits in (1, 2, 4) else 4)
    v = get_variant(variant)
    names = [algo] if algo else []
    if not names and isinstance(meta.get("algo"), str):
        names = [meta["algo"]]
    if not names:
        guess = _algo_from_zip(path)
        names = [guess] if guess else ["PPO", "A2C", "DQN"]
    model = None
    errors = []
    _single_thread()
    for name in names:
        cls = _algo_class(name)
        try:
            model = cls.load(path, device="cpu")
            algo = name
            break
        except Exception as exc:  # SB3 raises many kinds of errors for a foreign file
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
    if model is None:
        raise ModelLoadError(f"cannot load {path} as {' or '.join(names)}: {'; '.join(errors)}")
    if "obs_mode" in env_kwargs:
        obs_mode = str(env_kwargs["obs_mode"])
        slots = int(env_kwargs.get("feature_slots", DEFAULT_FEATURE_SLOTS))
    else:
        obs_mode, slots = _infer_obs_mode(model.observation_space, v)
    masked = algo == "MaskablePPO"
    det = deterministic if deterministic is not None else bool(meta.get("deterministic", True))
    return SB3Agent(model, v, obs_mode, slots, masked, det, seed, name=path)


__all__ = ["ModelLoadError", "SB3Agent", "load_sb3_agent", "read_sidecar"]
