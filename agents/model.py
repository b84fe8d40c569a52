"""A trained model (a Stable-Baselines3 / sb3-contrib ``.zip``) as a player.

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
cleared by ``reset``), ``feature_slots`` and ``action_rows`` come from the model's sidecar
(:mod:`spider_env.agents.model_format`), else they are inferred from the model's observation space
with the layout sizes of :mod:`spider_env.observation`.

The player never imports torch or Stable-Baselines3: :func:`load_sb3_agent` hands the file to
:mod:`spider_env.agents.rl.models` (the ``train`` extra), which gives back a
:class:`ScoringModel`, a plain function from the model's input (NumPy) to a score per action.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from spider_env.core.variants import Variant, classic, get_variant
from spider_env.observation import (
    DEFAULT_FEATURE_SLOTS,
    OBS_MODES,
    FeatureEncoder,
    ObservationBuffers,
    assemble_observation,
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
from .model_format import ACTIONS_MODE, MODEL_OBS_MODES, ModelLoadError, Sidecar

INSTALL_HINT = (
    "loading a trained model needs the optional 'train' dependencies "
    "(stable-baselines3, sb3-contrib, torch): pip install 'spider-env[train]'"
)


@dataclass(frozen=True)
class ScoringModel:
    """What the player needs of a trained model (made by :mod:`spider_env.agents.rl.models`)."""

    scores: Callable[[Any], np.ndarray]
    """the model's input (a NumPy array or a dict of them) -> one float score per action"""
    observation_space: Any
    """the Gymnasium space of the model's input"""
    n_actions: int
    """the size of the model's action space"""


class SB3Agent(BaseAgent):
    """A trained model playing through the agent protocol (see the module docstring)."""

    name = "sb3"

    def __init__(
        self,
        model: ScoringModel,
        variant: Variant | str,
        obs_mode: str = "dict",
        *,
        feature_slots: int = DEFAULT_FEATURE_SLOTS,
        action_rows: int = DEFAULT_ACTION_ROWS,
        deterministic: bool = False,
        seed: int | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(variant, seed)
        assert self.variant is not None
        if obs_mode not in MODEL_OBS_MODES:
            raise ModelLoadError(f"unsupported observation mode {obs_mode!r}")
        if not isinstance(deterministic, bool):
            raise TypeError(f"deterministic must be a bool, got {deterministic!r}")
        self.model = model
        self.obs_mode = obs_mode
        self.feature_slots = feature_slots
        self.action_rows = action_rows
        self.deterministic = deterministic
        self.name = f"{name or self.name} ({'most likely' if deterministic else 'sampled'})"
        # the model's input is written to these and made by the one assemble_observation
        self._buffers = (
            ObservationBuffers(self.variant, obs_mode, feature_slots)
            if obs_mode in OBS_MODES
            else None
        )
        self._encoder = (
            FeatureEncoder(self.variant, feature_slots, out=self._buffers)
            if obs_mode in ("features", "flat")
            else None
        )
        self._actions = (
            ActionFeatureEncoder(self.variant, action_rows) if obs_mode == ACTIONS_MODE else None
        )
        space = model.observation_space
        self._wants_mask = hasattr(space, "spaces") and "action_mask" in space.spaces
        if model.n_actions != self.variant.n_actions:
            raise ModelLoadError(
                f"the model has {model.n_actions} actions, {self.variant.name} has "
                f"{self.variant.n_actions}: it was trained on another variant"
            )
        self._check_space()

    def _check_space(self) -> None:
        """Fail early, with a clear message, if the model cannot read this variant's table."""
        assert self.variant is not None
        v, mode = self.variant, self.obs_mode
        if mode == ACTIONS_MODE:
            ours: Any = action_feature_space(v, self.action_rows)
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
        if not isinstance(obs, Mapping) or "tableau" not in obs:
            return obs  # already the model's input (an env made with its obs_mode or wrapped)
        if self._actions is not None:
            return self._actions.encode(obs, mask)
        buffers = self._buffers
        assert buffers is not None
        if self._encoder is None:  # "dict": the table as the env gave it
            buffers.table[...] = obs["tableau"]
            buffers.completed[...] = obs["completed"]
            if "pile_tops" in obs:
                buffers.pile_tops[...] = obs["pile_tops"]
        else:
            self._encoder.write(TableView.from_obs(self.variant, obs).to_state(), fresh=True)
        wanted = np.asarray(mask, dtype=bool) if self._wants_mask else None
        return assemble_observation(buffers, obs["deals_left"], wanted)

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
        return self.model.scores(x)


def _shapes(space: Any) -> str:
    """A space's shape in words (for error messages)."""
    spaces = getattr(space, "spaces", None)
    if spaces is None:
        return f"shape {getattr(space, 'shape', None)}"
    return "dict {" + ", ".join(f"{k}: {sub.shape}" for k, sub in spaces.items()) + "}"


def _infer_input(space: Any, variant: Variant) -> dict[str, Any]:
    """``obs_mode`` and its size (``feature_slots`` or ``action_rows``) of a model whose sidecar
    does not say, from its observation space."""
    spaces = getattr(space, "spaces", None)
    try:
        if spaces is not None:
            if "tableau" in spaces:
                return {"obs_mode": "dict"}
            if "action_ids" in spaces:
                return {"obs_mode": ACTIONS_MODE, "action_rows": int(spaces["action_ids"].shape[0])}
            if "columns" in spaces:
                slots = slots_for_feature_width(variant, spaces["columns"].shape[-1])
                return {"obs_mode": "features", "feature_slots": slots}
            raise ModelLoadError(f"cannot tell the model's observation encoding ({sorted(spaces)})")
        shape = getattr(space, "shape", None)
        if shape is None or len(shape) != 1:
            raise ModelLoadError(f"cannot tell the model's observation encoding (shape {shape})")
        return {"obs_mode": "flat", "feature_slots": slots_for_flat_width(variant, shape[0])}
    except ModelLoadError:
        raise
    except ValueError as exc:
        raise ModelLoadError(f"the model's observations do not fit {variant.name}: {exc}") from None


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
    side = Sidecar.read(path) or Sidecar()
    v = get_variant(variant) if variant is not None else side.env.game() or classic(4)
    try:  # the one place a player reaches training code (tests/test_layers.py, LAZY_EDGES)
        from .rl.models import load_scoring_model
    except ImportError as exc:
        raise ImportError(f"{INSTALL_HINT} ({exc})") from None
    model = load_scoring_model(path, side, algo)
    env = side.env
    if env.obs_mode is None:
        size = _infer_input(model.observation_space, v)
    else:
        size = {"obs_mode": env.obs_mode, **env.input_size()}
    if deterministic is None:
        deterministic = bool(side.deterministic)  # sampled unless the sidecar says otherwise
    return SB3Agent(model, v, **size, deterministic=deterministic, seed=seed, name=path)


__all__ = [
    "INSTALL_HINT",
    "ModelLoadError",
    "SB3Agent",
    "ScoringModel",
    "load_sb3_agent",
]
