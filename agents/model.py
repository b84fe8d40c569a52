"""A trained model as a player, in NumPy: no torch, no Stable-Baselines3, nothing unpickled.

``load_model_agent("runs/ppo/model.safetensors")`` returns a :class:`ModelAgent` over the model
file (:mod:`spider_env.agents.model_file`: weights and JSON, read with every field checked); a
Stable-Baselines3 ``.zip`` is read as data first (:mod:`spider_env.agents.rl.model_import`:
its pickled entries are never decoded; reading its weights needs torch, the ``train`` extra).
The network runs in NumPy (:mod:`spider_env.agents.networks`).

At every step the policy scores every action; the scores of the legal actions (those of the
env's mask) are kept, and the most likely one is played (``deterministic=True``) or one is
drawn from their softmax with the agent's seeded RNG (``deterministic=False``). The default is
what the model file says. The agent's ``name`` says which (``"model.safetensors (sampled)"``).

A model knows its game: the variant and observation it was trained on are in the file, and a
model played on another game is refused in one line, unless the caller asks for it
(``allow_other_game=True``, ``spider-env evaluate --allow-other-game``), which plays it after a
one-line warning. The model's input is rebuilt from what the agent is given (the env's ``dict``
observation; nothing hidden): the per-action features of :mod:`spider_env.observation.actions`
(with the episode's memory, cleared by ``reset``) or the ``"flat"`` features.
:mod:`spider_env.apps.evaluation` plays the same model on many games at once instead
(:meth:`ModelAgent.choose_batch` over the vector env's own observations: the same moves).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from spider_env.core.variants import Variant, get_variant
from spider_env.observation import FeatureEncoder, ObservationBuffers, assemble_observation
from spider_env.observation.actions import ActionFeatureEncoder
from spider_env.observation.spaces import flat_width
from spider_env.observation.view import TableView

from .base import BaseAgent
from .model_file import SUFFIX, MLPArchitecture, SavedModel, is_model_file
from .model_format import ACTIONS_MODE, ModelLoadError
from .networks import network

INSTALL_HINT = (
    "reading a Stable-Baselines3 .zip needs torch (the 'train' extra: pip install "
    "'spider-env[train]'); or, where torch is installed, convert it once: "
    "spider-env model convert MODEL.zip MODEL.safetensors"
)


class OtherGameWarning(UserWarning):
    """A model is played on another game than the one it was trained on (asked for)."""


class ModelAgent(BaseAgent):
    """A trained model playing through the agent protocol (see the module docstring).

    Args:
        model: the model (a :class:`~spider_env.agents.model_file.SavedModel`).
        variant: the game played (``None``: the model's own).
        deterministic: ``True`` plays the most likely legal action, ``False`` samples;
            ``None``: what the model says.
        seed: the RNG of the samples.
        name: the agent's name (``"model"``), followed by how it chooses.
        allow_other_game: play a ``variant`` other than the model's (after a one-line
            :class:`OtherGameWarning`) instead of refusing it (:class:`ModelLoadError`).
        game_known: ``False`` for a model whose file did not name its game (an old zip
            without a sidecar): it is played on ``variant`` after a warning.
    """

    name = "model"

    def __init__(
        self,
        model: SavedModel,
        variant: Variant | str | None = None,
        *,
        deterministic: bool | None = None,
        seed: int | None = None,
        name: str | None = None,
        allow_other_game: bool = False,
        game_known: bool = True,
    ) -> None:
        own = model.env.game()
        assert own is not None  # SavedModel.check
        v = get_variant(variant) if variant is not None else own
        super().__init__(v, seed)
        if deterministic is not None and not isinstance(deterministic, bool):
            raise TypeError(f"deterministic must be True, False or None, got {deterministic!r}")
        label = name or self.name
        if not game_known:
            warnings.warn(
                f"{label} does not say which game it was trained on: playing it on {v.name}",
                OtherGameWarning,
                stacklevel=2,
            )
        elif v.spec_text() != own.spec_text():
            if not allow_other_game:
                raise ModelLoadError(
                    f"{label} was trained on {own.spec_text()}, not {v.spec_text()}: play it on "
                    "its own game, or allow it explicitly (allow_other_game=True, "
                    "--allow-other-game)"
                )
            warnings.warn(
                f"{label} was trained on {own.spec_text()}; playing it on {v.spec_text()} as asked",
                OtherGameWarning,
                stacklevel=2,
            )
        if model.architecture.n_actions != v.n_actions:
            raise ModelLoadError(
                f"{label} scores {model.architecture.n_actions} actions; {v.name} has {v.n_actions}"
            )
        self.model = model
        self.network = network(model)
        self.obs_mode = str(model.env.obs_mode)
        self.obs_size = model.env.input_size()
        self.deterministic = model.deterministic if deterministic is None else deterministic
        self.name = f"{label} ({'most likely' if self.deterministic else 'sampled'})"
        if self.obs_mode == ACTIONS_MODE:
            self._actions: ActionFeatureEncoder | None = ActionFeatureEncoder(v, **self.obs_size)
        else:
            self._actions = None
            slots = self.obs_size["feature_slots"]
            arch = model.architecture
            if isinstance(arch, MLPArchitecture) and arch.inputs != flat_width(v, slots):
                raise ModelLoadError(
                    f"{label} reads {arch.inputs} inputs, but {v.name}'s flat observation "
                    f"({slots} card slots) has {flat_width(v, slots)}: it cannot play {v.name}"
                )
            self._buffers = ObservationBuffers(v, self.obs_mode, slots)
            self._encoder = FeatureEncoder(v, slots, out=self._buffers)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if self._actions is not None:
            self._actions.reset()

    def env_kwargs(self) -> dict[str, Any]:
        """The env arguments under which an env's observations are this model's input (what a
        batch of its games is played in)."""
        return {"obs_mode": self.obs_mode, **self.obs_size}

    def encode(self, obs: Any, mask: np.ndarray) -> Any:
        """The model's input for a ``dict`` observation (in ``obs_mode="actions"`` one call is one
        decision of the episode); an observation already in the model's mode is passed on."""
        assert self.variant is not None
        if not isinstance(obs, Mapping) or "tableau" not in obs:
            return obs
        if self._actions is not None:
            return self._actions.encode(obs, mask)
        self._encoder.write(TableView.from_obs(self.variant, obs).to_state(), fresh=True)
        return assemble_observation(self._buffers, obs["deals_left"], None)

    def scores(self, x: Any) -> np.ndarray:
        """The policy's score of every action for one input ``x`` (``float64``)."""
        return np.asarray(self.network.logits(x)[0], dtype=np.float64)

    def act(self, obs: Any, mask: np.ndarray, info: Mapping[str, Any] | None = None) -> int:
        assert self.variant is not None
        legal = self._legal(mask, self.variant)
        return choose(self.scores(self.encode(obs, mask)), legal, self.deterministic, self.rng)

    def choose_batch(
        self, obs: Any, masks: np.ndarray, rngs: Sequence[np.random.Generator] | None
    ) -> np.ndarray:
        """One action per game of a batch: ``obs`` the env's batched observations in the
        model's mode, ``masks`` ``(B, A)``; ``rngs`` one generator per game where the model
        samples (as :meth:`act` would with that game's RNG). A game without a legal action
        gets 0 (a vector env ignores it). The same choices as :meth:`act` game by game."""
        logits = self.network.logits(obs)
        if self.deterministic:
            masked = np.where(masks, logits, -np.inf)
            out = masked.argmax(axis=1).astype(np.int64)
            out[~masks.any(axis=1)] = 0
            return out
        if rngs is None or len(rngs) != logits.shape[0]:
            raise ValueError("a sampling model needs one generator per game")
        out = np.zeros(logits.shape[0], dtype=np.int64)
        for b in np.flatnonzero(masks.any(axis=1)).tolist():
            legal = np.flatnonzero(masks[b])
            out[b] = choose(np.asarray(logits[b], np.float64), legal, False, rngs[b])
        return out


def choose(
    scores: np.ndarray, legal: Sequence[int] | np.ndarray, deterministic: bool, rng: Any
) -> int:
    """The action a model plays given its ``scores`` of every action: the legal one scored
    highest (the first of equals), or one drawn from the softmax of the legal scores with
    ``rng``."""
    s = scores[np.asarray(legal)]
    if deterministic:
        return int(legal[int(np.argmax(s))])
    p = np.exp(s - s.max())
    p /= p.sum()
    return int(legal[int(rng.choice(len(legal), p=p))])


def load_model(path: str, variant: Variant | str | None = None) -> tuple[SavedModel, bool]:
    """The model in ``path`` (a ``.safetensors`` model file, or a Stable-Baselines3 ``.zip``
    read as data) and whether the file names its game. ``FileNotFoundError``, ``ImportError``
    (a zip without torch) or :class:`ModelLoadError` (one line)."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"a model path must be a str, got {type(path).__name__}")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"model file not found: {path}")
    if is_model_file(path):
        return SavedModel.read(path), True
    if str(path).endswith(".zip"):
        try:  # the one place a player reaches training code (tests/test_layers.py, LAZY_EDGES)
            from .rl.model_import import read_sb3_zip
        except ImportError as exc:
            raise ImportError(f"{INSTALL_HINT} ({exc})") from None
        return read_sb3_zip(path, variant)
    raise ModelLoadError(f"{path} is not a model file ({SUFFIX}, or a Stable-Baselines3 .zip)")


def load_model_agent(
    path: str,
    variant: Variant | str | None = None,
    *,
    seed: int | None = None,
    deterministic: bool | None = None,
    allow_other_game: bool = False,
) -> ModelAgent:
    """The player of the model in ``path`` (:func:`load_model`) on ``variant`` (``None``: the
    model's own game); see :class:`ModelAgent` for the other arguments."""
    model, known = load_model(path, variant)
    return ModelAgent(
        model,
        variant,
        deterministic=deterministic,
        seed=seed,
        name=str(path),
        allow_other_game=allow_other_game,
        game_known=known,
    )


#: The name this player had when it read Stable-Baselines3 zips only.
load_sb3_agent = load_model_agent

__all__ = [
    "INSTALL_HINT",
    "ModelAgent",
    "ModelLoadError",
    "OtherGameWarning",
    "choose",
    "load_model",
    "load_model_agent",
    "load_sb3_agent",
]
