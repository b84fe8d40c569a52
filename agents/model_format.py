"""The one format of a saved model: the JSON sidecar next to the ``.zip``.

``runs/x/model.zip`` (the Stable-Baselines3 file) comes with ``runs/x/model.json``, which says
what the model needs to play: the game and observation it was trained with (:class:`EnvSettings`),
its algorithm and policy class, and how it chooses (most likely or sampled action). Training
writes it (:meth:`Sidecar.write`, through :func:`spider_env.agents.rl.models.save_model`); the
model player and ``spider-env evaluate`` read it (:meth:`Sidecar.read`). Reading needs neither
torch nor Stable-Baselines3.

Format ``"spider-env-model 2"`` (written)::

    {"format": "spider-env-model 2",
     "algo": "MaskablePPO", "policy": "spider_env.agents.rl.policy.ActionSetPolicy",
     "use_masking": true,          # derived from algo (MaskablePPO), for readers' convenience
     "deterministic": true,
     "env_kwargs": {"variant": "spider-1suit", "obs_mode": "actions", "action_rows": 96,
                    "reward_mode": "runs", "illegal_action": "penalize"},
     "max_episode_steps": 1000,
     "training": {...}}            # what training recorded (steps, wall time, settings...)

``env_kwargs`` has ``feature_slots`` (face-up card slots per column) for ``obs_mode``
``"features"``/``"flat"``, ``action_rows`` (rows of per-action features) for ``"actions"``,
neither for ``"dict"``. Every field is required.

Format ``"spider-env-sb3-model 1"`` (read only, also sidecars without a ``format``): the same
fields at the top level and in ``env_kwargs``, any of them possibly missing; the game as
``variant`` or ``suits`` (+ ``undo``); ``feature_slots`` meaning the action rows in the
``"actions"`` mode; the training record spread over the top level; and the policy of the RL
recipe named by the module it had before it moved (``spider_env.agents.rl_policy``).
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spider_env.core.variants import Variant, get_variant, resolve_variant
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS
from spider_env.observation import DEFAULT_FEATURE_SLOTS, OBS_MODES
from spider_env.observation.actions import DEFAULT_ACTION_ROWS

FORMAT = "spider-env-model 2"
LEGACY_FORMAT = "spider-env-sb3-model 1"
ACTIONS_MODE = "actions"  # per-action features (spider_env.observation.actions, the RL recipe)
MODEL_OBS_MODES = (*OBS_MODES, ACTIONS_MODE)
ALGOS = ("MaskablePPO", "PPO", "A2C", "DQN")
#: Policy classes that moved, by the name old sidecars give them -> their name now.
MOVED_POLICIES = {
    "spider_env.agents.rl_policy.ActionSetPolicy": "spider_env.agents.rl.policy.ActionSetPolicy"
}
_TOP_LEVEL = ("format", "algo", "policy", "use_masking", "deterministic", "env_kwargs")


class ModelLoadError(ValueError):
    """The model file or its sidecar cannot be used (the message says why)."""


@dataclass(frozen=True)
class EnvSettings:
    """The game and observation a model was trained with (the sidecar's ``env_kwargs`` and
    ``max_episode_steps``). ``None``: an old sidecar that does not say."""

    variant: str | None = None
    """the game, as :meth:`Variant.spec_text` names it (``"spider-1suit"``)"""
    obs_mode: str | None = None
    """``"dict"``, ``"features"``, ``"flat"`` or ``"actions"`` (the ``ActionFeatures`` wrapper)"""
    feature_slots: int = DEFAULT_FEATURE_SLOTS
    """face-up card slots per column (obs modes ``"features"`` and ``"flat"``)"""
    action_rows: int = DEFAULT_ACTION_ROWS
    """rows of per-action features (obs mode ``"actions"``)"""
    reward_mode: str | None = None
    """the env's ``reward_mode`` in training (``None``: the env's default)"""
    illegal_action: str = "penalize"
    """the env's answer to an illegal action in training (unmasked PPO meets it)"""
    max_episode_steps: int = DEFAULT_MAX_EPISODE_STEPS
    """the step limit of a game"""

    def game(self) -> Variant | None:
        """The variant, or ``None`` if the settings name none."""
        return None if self.variant is None else get_variant(self.variant)

    def input_size(self) -> dict[str, int]:
        """The size of the observation mode: ``{"feature_slots": n}`` (``"features"``,
        ``"flat"``), ``{"action_rows": n}`` (``"actions"``) or nothing (``"dict"``)."""
        if self.obs_mode in ("features", "flat"):
            return {"feature_slots": self.feature_slots}
        if self.obs_mode == ACTIONS_MODE:
            return {"action_rows": self.action_rows}
        return {}

    def to_json(self) -> dict[str, Any]:
        """The settings as a model file's ``"env"`` object (:func:`env_settings_from_json`
        reads it back)."""
        return {**self.env_kwargs(), "max_episode_steps": self.max_episode_steps}

    def env_kwargs(self) -> dict[str, Any]:
        """The sidecar's ``env_kwargs``."""
        out: dict[str, Any] = {"variant": self.variant, "obs_mode": self.obs_mode}
        out.update(self.input_size())
        out["reward_mode"] = self.reward_mode
        out["illegal_action"] = self.illegal_action
        return out


@dataclass(frozen=True)
class Sidecar:
    """What a saved model needs to play (see the module docstring). ``None``: an old sidecar
    (or none) that does not say; the loader then infers or defaults."""

    env: EnvSettings = field(default_factory=EnvSettings)
    """the game and the observation"""
    algo: str | None = None
    """the Stable-Baselines3 / sb3-contrib class (one of :data:`ALGOS`)"""
    policy: str | None = None
    """the policy: an SB3 name (``"MlpPolicy"``) or a class path"""
    deterministic: bool | None = None
    """``True``: the model plays its most likely legal action; ``False``: it samples"""
    training: dict[str, Any] = field(default_factory=dict)
    """what training recorded (steps, wall time, settings...); not read when playing"""
    format: str = FORMAT
    """the format the sidecar was read in (:meth:`write` always writes :data:`FORMAT`)"""

    @property
    def use_masking(self) -> bool:
        """Whether the model chooses among legal actions only (MaskablePPO)."""
        return self.algo == "MaskablePPO"

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of format :data:`FORMAT`."""
        return {
            "format": FORMAT,
            "algo": self.algo,
            "policy": self.policy,
            "use_masking": self.use_masking,
            "deterministic": self.deterministic,
            "env_kwargs": self.env.env_kwargs(),
            "max_episode_steps": self.env.max_episode_steps,
            "training": self.training,
        }

    def write(self, model_path: str | Path) -> Path:
        """Write the sidecar of ``model_path`` (format :data:`FORMAT`); ``ValueError`` if a field
        is missing or wrong (what a reader would refuse)."""
        data = self.to_dict()
        side = sidecar_path(model_path)
        _from_v2(data, f"the sidecar {side}")  # refuse to write what could not be read back
        side.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        return side

    @classmethod
    def read(cls, model_path: str | Path) -> Sidecar | None:
        """The sidecar of ``model_path`` (``None`` if there is none); :class:`ModelLoadError`
        if it cannot be read or is not a sidecar of a known format."""
        side = sidecar_path(model_path)
        if not side.exists():
            return None
        try:
            data = json.loads(side.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ModelLoadError(f"cannot read the model's sidecar {side}: {exc}") from None
        return cls.from_dict(data, f"the sidecar {side}")

    @classmethod
    def from_dict(cls, data: Any, where: str = "the sidecar") -> Sidecar:
        """A sidecar from its JSON object, in either format (``where`` names it in errors)."""
        if not isinstance(data, dict):
            raise ModelLoadError(f"{where} must hold a JSON object")
        fmt = data.get("format", LEGACY_FORMAT)
        if fmt == FORMAT:
            return _from_v2(data, where)
        if fmt == LEGACY_FORMAT:
            return _from_v1(data, where)
        raise ModelLoadError(f"{where} has format {fmt!r}; known: {FORMAT!r}, {LEGACY_FORMAT!r}")

    def replace(self, **changes: Any) -> Sidecar:
        """A copy with ``changes`` (fields of the sidecar or, by name, of its :attr:`env`)."""
        env_fields = {f.name for f in dataclasses.fields(EnvSettings)}
        env = {k: changes.pop(k) for k in list(changes) if k in env_fields}
        return dataclasses.replace(self, env=dataclasses.replace(self.env, **env), **changes)


def sidecar_path(model_path: str | Path) -> Path:
    """``model.json`` for ``model.zip``."""
    root, _ = os.path.splitext(str(model_path))
    return Path(root + ".json")


def sidecar_variant(model_path: str | Path) -> Variant | None:
    """The game a model's sidecar names (``None`` without a sidecar or a game in it;
    :class:`ModelLoadError` if the sidecar cannot be read)."""
    side = Sidecar.read(model_path)
    return None if side is None else side.env.game()


# --- reading -------------------------------------------------------------------------------
def _field(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``data[key]`` if present and not null (``ModelLoadError`` unless a ``kind``), else None."""
    value = data.get(key)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if value is not None and (
        not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds)
    ):
        names = " or ".join(k.__name__ for k in kinds)
        raise ModelLoadError(f"{where} has {key}={value!r}, expected a {names}")
    return value


def _required(data: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = _field(data, key, kind, where)
    if value is None:
        raise ModelLoadError(f"{where} lacks {key!r}")
    return value


def _count(data: dict[str, Any], key: str, where: str, low: int) -> int:
    value = _field(data, key, int, where)
    if value is None or value < low:
        raise ModelLoadError(f"{where} has {key}={value!r}, expected an int >= {low}")
    return int(value)


def _game(env_kwargs: dict[str, Any], where: str) -> str | None:
    variant, suits = env_kwargs.get("variant"), env_kwargs.get("suits")
    if variant is None and suits is None:
        return None
    try:
        return resolve_variant(variant, suits, env_kwargs.get("undo", False)).spec_text()
    except (TypeError, ValueError) as exc:
        raise ModelLoadError(f"{where} names no game: {exc}") from None


def _obs_mode(env_kwargs: dict[str, Any], where: str) -> str | None:
    mode = _field(env_kwargs, "obs_mode", str, where)
    if mode is not None and mode not in MODEL_OBS_MODES:
        raise ModelLoadError(f"{where} has obs_mode={mode!r}; known: {', '.join(MODEL_OBS_MODES)}")
    return mode


def _algo(data: dict[str, Any], where: str) -> str | None:
    algo = _field(data, "algo", str, where)
    if algo is not None and algo not in ALGOS:
        raise ModelLoadError(f"{where} has algo={algo!r}; known: {', '.join(ALGOS)}")
    return algo


def env_settings_from_json(kw: dict[str, Any], where: str) -> EnvSettings:
    """The :class:`EnvSettings` of a JSON object with a game, an ``obs_mode`` (and its size),
    ``reward_mode``, ``illegal_action`` and ``max_episode_steps`` (a model file's ``"env"``; a
    sidecar's ``env_kwargs`` with its ``max_episode_steps``); :class:`ModelLoadError` naming
    what is missing or wrong."""
    mode = _obs_mode(kw, where)
    if mode is None:
        raise ModelLoadError(f"{where} lacks 'obs_mode'")
    game = _game(kw, where) if "variant" in kw else None
    if game is None:
        raise ModelLoadError(f"{where} lacks 'variant'")
    size: dict[str, int] = {}
    if mode in ("features", "flat"):
        size["feature_slots"] = _count(kw, "feature_slots", where, 0)
    elif mode == ACTIONS_MODE:
        size["action_rows"] = _count(kw, "action_rows", where, 1)
    return EnvSettings(
        variant=game,
        obs_mode=mode,
        reward_mode=_required(kw, "reward_mode", str, where),
        illegal_action=_required(kw, "illegal_action", str, where),
        max_episode_steps=_count(kw, "max_episode_steps", where, 1),
        **size,
    )


def _from_v2(data: dict[str, Any], where: str) -> Sidecar:
    kw = _required(data, "env_kwargs", dict, where)
    env = env_settings_from_json({**kw, "max_episode_steps": data.get("max_episode_steps")}, where)
    algo = _algo(data, where)
    if algo is None:
        raise ModelLoadError(f"{where} lacks 'algo'")
    return Sidecar(
        env=env,
        algo=algo,
        policy=_required(data, "policy", str, where),
        deterministic=_required(data, "deterministic", bool, where),
        training=_required(data, "training", dict, where),
        format=FORMAT,
    )


def _from_v1(data: dict[str, Any], where: str) -> Sidecar:
    kw = _field(data, "env_kwargs", dict, where) or {}
    mode = _obs_mode(kw, where)
    slots = kw.get("feature_slots")
    size: dict[str, int] = {}
    if slots is not None and mode is not None:
        name = "action_rows" if mode == ACTIONS_MODE else "feature_slots"
        size[name] = _count(kw, "feature_slots", where, 1 if mode == ACTIONS_MODE else 0)
    steps = data.get("max_episode_steps")
    env = EnvSettings(
        variant=_game(kw, where),
        obs_mode=mode,
        reward_mode=_field(kw, "reward_mode", str, where),
        illegal_action=_field(kw, "illegal_action", str, where) or "penalize",
        max_episode_steps=DEFAULT_MAX_EPISODE_STEPS
        if steps is None
        else _count(data, "max_episode_steps", where, 1),
        **size,
    )
    policy = _field(data, "policy", str, where)
    return Sidecar(
        env=env,
        algo=_algo(data, where),
        policy=MOVED_POLICIES.get(policy, policy) if policy is not None else None,
        deterministic=_field(data, "deterministic", bool, where),
        training={
            k: v for k, v in data.items() if k not in (*_TOP_LEVEL, "env_id", "max_episode_steps")
        },
        format=LEGACY_FORMAT,
    )


__all__ = [
    "ACTIONS_MODE",
    "ALGOS",
    "FORMAT",
    "LEGACY_FORMAT",
    "MODEL_OBS_MODES",
    "MOVED_POLICIES",
    "EnvSettings",
    "ModelLoadError",
    "Sidecar",
    "env_settings_from_json",
    "sidecar_path",
    "sidecar_variant",
]
