"""Training on a Ray cluster: Spider on RLlib's PPO, with action masking (the ``rllib`` extra).

Three pieces, and :func:`train` that puts them together:

* **the env** (:class:`RLlibVectorEnv`, also registered with Ray's registry as :data:`RAY_ENV` by
  :func:`register_env`): every env runner builds a :class:`~spider_env.vector.SpiderVectorEnv`
  of ``num_envs_per_env_runner`` games through the vector entry point (one compiled call steps
  them all; ``gym_env_vectorize_mode="vector_entry_point"``). Three layouts (``obs_mode``):

  - ``"rows"`` (the default): RLlib's action is a *row* of the per-action observation
    (``Discrete(action_rows)``) and the observation one float32 array per game,
    ``[features (K * F) | globals (G) | row flags (K)]`` (:func:`split_rows`; a flag is 1 where
    the row holds a legal action); the env keeps each row's action id and steps the Gymnasium
    env with it. RLlib moves, stores and samples only what the network reads (no mask over the
    1,301 action ids, a categorical over ``K`` rows): the same network and the same
    distribution over the legal actions as ``"actions"`` (whose ids without a row have the
    logit ``NO_ROW_LOGIT``), at a fraction of RLlib's cost;
  - ``"actions"``: the env's own ``mask_in_obs=True`` (``actions``, ``action_ids``,
    ``globals``, ``action_mask``), the action an action id;
  - ``"flat"``: ``{"observations": flat, "action_mask": mask}`` (RLlib's action-masking
    layout), the action an action id.

  The Gymnasium env's action contract is unchanged: ``"rows"`` is this wrapper's. Training
  deals are ``10000 ..`` (the test deals 0..999 and the validation deals 1000.. are never
  played); env runner ``w`` (0: the driver's) reset with
  seed ``s`` seeds its game ``i`` with ``s * num_envs + i`` (RLlib gives runner ``w`` the seed
  ``seed + w``), so no two games of a run share a seed. The env raises on an illegal action
  (``illegal_action="raise"``): a run that finishes took none.
* **the env runners** (:mod:`.rllib_runner`, ``env_runner``): over rows,
  :class:`~.rllib_runner.ArrayEnvRunner` samples each step of all games in arrays and returns
  the episode chunks RLlib's own runner would, their observations cut to the rows used
  (:func:`resize_rows`); ``env_runner="rllib"`` keeps RLlib's ``SingleAgentEnvRunner``;
* **the policy** (:mod:`.rllib_modules`): RLModules that mask the logits with the observation's
  mask or row flags; the action-set network (``"rows"``, ``"actions"``) or two MLPs
  (``"flat"``).
* **the config** (:func:`ppo_config`): RLlib's ``PPOConfig`` from :class:`RLlibSettings`
  (env runners, envs per runner, learners, PPO's settings; over rows, the learner connector
  piece :class:`~.rllib_runner.EvenRows`).

:func:`train` connects to Ray (``ray="local"`` starts a private instance, an address joins a
cluster), trains, saves RLlib's checkpoint (``checkpoint/``) and exports the policy as a model
file (``model.safetensors``, beside ``model.zip`` + ``model.json``: :func:`export_model`), which
``spider-env evaluate --agent runs/rllib/model.safetensors`` plays; with ``eval_deals`` it plays the
validation deals too. Ray, RLlib and torch are imported inside the functions, so this module
(and its settings) import without them.
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv, VectorWrapper
from gymnasium.vector.utils import batch_space
from spider_env.agents.model_format import ACTIONS_MODE, EnvSettings, Sidecar

from spider_env.core.checks import is_int
from spider_env.core.rules import IllegalMoveError
from spider_env.core.variants import Variant, get_variant, resolve_variant
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS
from spider_env.observation import DEFAULT_FEATURE_SLOTS, MAX_FEATURE_SLOTS
from spider_env.observation.actions import DEFAULT_ACTION_ROWS
from spider_env.observation.spaces import N_ACTION_FEATURES, N_GLOBAL_FEATURES
from spider_env.rewards import REWARD_MODES

from .envs import TRAIN_DEALS, validation_deals
from .memory import keep_freed_memory, setup_frozen
from .ppo import PRECISIONS, update_precision
from .settings import (
    Name,
    OutputDir,
    SettingsError,
    above,
    at_least,
    check,
    check_discounts,
    check_fields,
    check_paths,
    setting_up,
)
from .threads import set_torch_threads, threads_line

RAY_ENV = "spider-env"  # the env's name in Ray's registry (config.environment(RAY_ENV))
ROWS_MODE = "rows"  # RLlib's action: a row of the per-action observation (RLlibVectorEnv)
OBS_MODES = (ROWS_MODE, ACTIONS_MODE, "flat")
DEFAULT_OBS_MODE = ROWS_MODE
#: How env runners sample (``RLlibSettings.env_runner``): spider-env's ``ArrayEnvRunner``
#: (:mod:`.rllib_runner`, obs_mode rows) or RLlib's ``SingleAgentEnvRunner``.
ENV_RUNNERS = ("arrays", "rllib")
DEFAULT_ENV_RUNNER = "arrays"
FLAT_KEY = "observations"  # the flat observation's key beside "action_mask"
INSTALL_HINT = "pip install 'spider-env[rllib]'"
#: The keys of the env's config (``config.environment(RAY_ENV, env_config=...)``).
ENV_CONFIG_KEYS = (
    "variant", "obs_mode", "action_rows", "feature_slots", "reward_mode", "max_episode_steps",
)  # fmt: skip


def ray_address(text: str) -> str:
    """``text`` if it names Ray: ``local`` (a private instance), ``auto`` (the cluster this
    machine is part of), ``HOST:PORT`` or ``ray://HOST:PORT``; else a ``ValueError``."""
    rest = text.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    if text in ("local", "auto") or (sep and host and port.isdigit() and " " not in rest):
        return text
    raise ValueError(f"expected local, auto, HOST:PORT or ray://HOST:PORT, got {text!r}")


@dataclass(frozen=True)
class RLlibSettings:
    """Every setting of :func:`train` (flags of ``examples/rllib_ppo.py``)."""

    suits: int = field(default=1, metadata={"choices": (1, 2, 4)})
    """classic Spider with this many suits (unless --variant)"""
    variant: Annotated[str, Name] | None = None
    """any registered variant instead of classic Spider"""
    obs_mode: str = field(default=DEFAULT_OBS_MODE, metadata={"choices": OBS_MODES})
    """the policy's observation and RLlib's action: rows (the per-action features in one array,
    the action a row of it: the least for RLlib to move and sample), actions (the env's
    per-action observation, the action an id), both for the action-set network; or flat"""
    hidden: int = 64
    """width of every hidden layer of the policy"""
    precision: str = field(default="auto", metadata={"choices": PRECISIONS})
    """number format of the learner's row embeddings (obs_mode rows and actions), as the
    batched PPO's --precision: auto is bfloat16 on a learner whose CPU multiplies it natively"""
    action_rows: int = DEFAULT_ACTION_ROWS
    """rows of per-action features (obs_mode rows and actions)"""
    feature_slots: int = DEFAULT_FEATURE_SLOTS
    """face-up card slots per column (obs_mode flat)"""
    reward_mode: str = field(default="runs", metadata={"choices": tuple(sorted(REWARD_MODES))})
    """the env's reward_mode (runs: +1 per completed run, +10 on the win)"""
    max_episode_steps: int = DEFAULT_MAX_EPISODE_STEPS
    """step limit per game"""
    ray: str = "local"
    """Ray to use: local (a private instance, stopped after), auto, or a cluster's HOST:PORT"""
    num_env_runners: int = 0
    """Ray actors that play games (0: the driver plays them itself)"""
    num_envs_per_env_runner: int = 64
    """games each env runner steps together (one SpiderVectorEnv)"""
    num_learners: int = 0
    """Ray actors that update the network (0: the driver does)"""
    torch_threads: int = 0
    """torch's CPU threads in the driver, whose learner updates the network when num_learners
    is 0 (0: the cores this process may use that other processes are not using, measured at
    the start and printed, as the batched PPO chooses; 1 makes the most env-steps per
    CPU-second)"""
    env_runner: str = field(default=DEFAULT_ENV_RUNNER, metadata={"choices": ENV_RUNNERS})
    """how env runners sample (obs_mode rows): arrays (spider-env's ArrayEnvRunner: each step
    of all games in arrays, the episodes cut from them at the end) or rllib (RLlib's
    SingleAgentEnvRunner: every game's episode built step by step)"""
    n_steps: int = 32
    """steps per game between updates (RLlib's rollout_fragment_length)"""
    timesteps: int = 200_000
    """env steps in all (decisions of all games); training stops at the first update past it"""
    learning_rate: float = 3e-4
    """Adam's learning rate at the start"""
    constant_lr: bool = False
    """keep the learning rate (default: lowered linearly to 0 over --timesteps, as the batched
    PPO does)"""
    gamma: float = 0.995
    """discount factor"""
    gae_lambda: float = 0.95
    """GAE's lambda"""
    update_epochs: int = 2
    """passes over each rollout"""
    minibatches: int = 4
    """minibatches per pass"""
    clip_coef: float = 0.2
    """PPO's clip range of the probability ratio"""
    ent_coef: float = 0.01
    """weight of the (masked) entropy bonus"""
    vf_coef: float = 0.5
    """weight of the value loss"""
    vf_clip: float = 10.0
    """RLlib's clip of the squared value error (vf_clip_param, RLlib's default; measured on 1
    suit: 1000 learned less in 2M steps)"""
    max_grad_norm: float = 0.5
    """gradient norm clip"""
    eval_deals: int = 100
    """validation deals (1000, 1001, ...) the exported model plays at the end (0: none)"""
    eval_jobs: int = 1
    """processes that play them (spider-env evaluate --jobs; a script calling train with more
    than 1 needs its `if __name__ == "__main__":` guard)"""
    seed: int = 0
    """seed of the network, the sampling and the training deals"""
    out: Annotated[str, OutputDir] = "runs/rllib"
    """output folder: checkpoint/, model.safetensors, model.zip + model.json, progress.csv,
    summary.json"""
    no_progress: bool = False
    """print nothing while training"""

    def __post_init__(self) -> None:
        check_fields(self)
        at_least(self, 1, "hidden", "action_rows", "max_episode_steps", "num_envs_per_env_runner")
        at_least(self, 1, "n_steps", "timesteps", "update_epochs", "minibatches", "eval_jobs")
        at_least(self, 0, "num_env_runners", "num_learners", "ent_coef", "vf_coef", "eval_deals")
        at_least(self, 0, "feature_slots", "torch_threads")
        check(self.feature_slots <= MAX_FEATURE_SLOTS, "feature_slots",
              f"must be <= {MAX_FEATURE_SLOTS}, got {self.feature_slots}")  # fmt: skip
        above(self, 0, "learning_rate", "clip_coef", "vf_clip", "max_grad_norm")
        check_discounts(self)
        with setting_up("ray"):
            ray_address(self.ray)
        check(self.minibatches <= self.batch_per_learner, "minibatches",
              f"must be at most the batch per learner ({self.batch_per_learner}), "
              f"got {self.minibatches}")  # fmt: skip
        with setting_up("variant"):
            self.game()

    def game(self) -> Variant:
        """The variant played."""
        return resolve_variant(self.variant, None if self.variant else self.suits)

    @property
    def batch(self) -> int:
        """Decisions per update (every env runner's games, ``n_steps`` each)."""
        return self.n_steps * self.num_envs_per_env_runner * max(1, self.num_env_runners)

    @property
    def batch_per_learner(self) -> int:
        """Decisions each learner updates on."""
        return max(1, self.batch // max(1, self.num_learners))

    def env_config(self) -> dict[str, Any]:
        """The env's config (``env_config`` of :class:`RLlibVectorEnv`)."""
        return {
            "variant": self.game().spec_text(),
            "obs_mode": self.obs_mode,
            "action_rows": self.action_rows,
            "feature_slots": self.feature_slots,
            "reward_mode": self.reward_mode,
            "max_episode_steps": self.max_episode_steps,
        }

    def env(self) -> EnvSettings:
        """The env of the exported model's sidecar."""
        return EnvSettings(
            variant=self.game().spec_text(),
            obs_mode=gymnasium_obs_mode(self.obs_mode),
            feature_slots=self.feature_slots,
            action_rows=self.action_rows,
            reward_mode=self.reward_mode,
            illegal_action="raise",  # the env of training (RLlibVectorEnv)
            max_episode_steps=self.max_episode_steps,
        )


# --- the env ------------------------------------------------------------------------------------
def gymnasium_obs_mode(obs_mode: str) -> str:
    """The Gymnasium env's ``obs_mode`` under the RLlib env's ``obs_mode`` (rows are the
    per-action observation, ``"actions"``)."""
    return ACTIONS_MODE if obs_mode == ROWS_MODE else obs_mode


def spider_vector_env(config: Mapping[str, Any]) -> VectorEnv[Any, Any, Any]:
    """The ``SpiderVectorEnv`` of an env config (:data:`ENV_CONFIG_KEYS`, all optional, plus
    RLlib's ``num_envs``). A ``ValueError`` names an unknown key or a missing ``num_envs``
    (RLlib's sync/async modes, which would build one game per env instead of the batched
    env)."""
    from spider_env.vector import SpiderVectorEnv

    cfg = dict(config)
    num_envs = cfg.pop("num_envs", None)
    if num_envs is None:
        raise ValueError(
            "spider-env's RLlib env is a vector env: set config.env_runners("
            "gym_env_vectorize_mode='vector_entry_point') (ppo_config does)"
        )
    unknown = sorted(set(cfg) - set(ENV_CONFIG_KEYS))
    if unknown:
        raise ValueError(f"unknown env_config keys {unknown}; known: {list(ENV_CONFIG_KEYS)}")
    obs_mode = cfg.get("obs_mode", DEFAULT_OBS_MODE)
    if obs_mode not in OBS_MODES:
        raise ValueError(f"env_config obs_mode must be one of {OBS_MODES}, got {obs_mode!r}")
    kwargs: dict[str, Any] = {
        "variant": get_variant(cfg.get("variant", "spider-1suit")),
        "obs_mode": gymnasium_obs_mode(obs_mode),
        "reward_mode": cfg.get("reward_mode", "runs"),
        "max_episode_steps": cfg.get("max_episode_steps", DEFAULT_MAX_EPISODE_STEPS),
        "illegal_action": "raise",
        "deal_numbers": TRAIN_DEALS,
    }
    if obs_mode in (ROWS_MODE, ACTIONS_MODE):
        kwargs["action_rows"] = cfg.get("action_rows", DEFAULT_ACTION_ROWS)
        kwargs["mask_in_obs"] = obs_mode == ACTIONS_MODE  # rows: the row flags instead
    else:
        kwargs["feature_slots"] = cfg.get("feature_slots", DEFAULT_FEATURE_SLOTS)
    if obs_mode == ROWS_MODE:  # RLlibVectorEnv copies what it hands out itself
        kwargs["copy"] = False
    return SpiderVectorEnv(int(num_envs), **kwargs)


def split_rows(obs: Any, action_rows: int) -> tuple[Any, Any, Any]:
    """The parts of ``obs_mode="rows"``'s observations ``obs`` ``(B, L)`` (a NumPy array or a
    torch tensor): ``(features (B, K, F), globals (B, G), row flags (B, K))``, views of it
    (``K = action_rows``, ``L = K * F + G + K``: :func:`rows_width`)."""
    k, f, g = action_rows, N_ACTION_FEATURES, N_GLOBAL_FEATURES
    if obs.shape[-1] != rows_width(k):
        raise ValueError(
            f"an observation of {action_rows} rows has {rows_width(k)} values, got {obs.shape[-1]}"
        )
    b = obs.shape[0]
    return obs[:, : k * f].reshape(b, k, f), obs[:, k * f : k * f + g], obs[:, k * f + g :]


def rows_width(action_rows: int) -> int:
    """The length of ``obs_mode="rows"``'s observation of ``action_rows`` rows."""
    return action_rows * (N_ACTION_FEATURES + 1) + N_GLOBAL_FEATURES


def width_rows(width: int) -> int:
    """The rows of an ``obs_mode="rows"`` observation of ``width`` values (the inverse of
    :func:`rows_width`); a ``ValueError`` if no number of rows gives ``width``."""
    k, extra = divmod(int(width) - N_GLOBAL_FEATURES, N_ACTION_FEATURES + 1)
    if extra or k < 1:
        raise ValueError(f"{width} values are not an observation of obs_mode='rows'")
    return k


def rows_used(obs: np.ndarray) -> int:
    """The most rows with an action in any of the ``obs_mode="rows"`` observations ``obs``
    ``(..., L)`` (0 if none has an action)."""
    flags = obs[..., obs.shape[-1] - width_rows(obs.shape[-1]) :]
    return int(flags.sum(axis=-1).max(initial=0))


def resize_rows(
    obs: np.ndarray, rows: int, out: np.ndarray | None = None, used: int | None = None
) -> np.ndarray:
    """``obs_mode="rows"`` observations ``obs`` ``(..., L)`` with ``rows`` rows each (into
    ``out`` if given): their first ``rows`` rows, and rows without an action (zero features,
    flag 0) past their own. Fewer rows than ``obs`` uses would drop actions: a ``ValueError``
    (``used``: the most rows ``obs`` uses, if the caller knows it: not counted again)."""
    used = rows_used(obs) if used is None else used
    if rows < used:
        raise ValueError(f"observations using {used} rows cannot be cut to {rows}")
    shape = (*obs.shape[:-1], rows_width(rows))
    if out is None:
        out = np.empty(shape, obs.dtype)
    elif out.shape != shape:
        raise ValueError(f"out has shape {out.shape}, not {shape}")
    return _move_rows(obs, rows, out)


def rows_space(space: spaces.Box, rows: int) -> spaces.Box:
    """The space of ``obs_mode="rows"`` observations of ``space`` cut to ``rows`` rows."""
    shape = (rows_width(rows),)
    low = _move_rows(space.low, rows, np.empty(shape, space.dtype))
    high = _move_rows(space.high, rows, np.empty(shape, space.dtype))
    return spaces.Box(low, high, dtype=space.dtype)


def _move_rows(obs: np.ndarray, rows: int, out: np.ndarray) -> np.ndarray:
    """:func:`resize_rows`'s copy, unchecked: the features of the first rows, the globals, the
    flags of the first rows, zeros past ``obs``'s rows."""
    k, f, g = width_rows(obs.shape[-1]), N_ACTION_FEATURES, N_GLOBAL_FEATURES
    m = min(k, rows)
    out[..., : m * f] = obs[..., : m * f]
    out[..., rows * f : rows * f + g] = obs[..., k * f : k * f + g]
    out[..., rows * f + g : rows * f + g + m] = obs[..., k * f + g : k * f + g + m]
    if rows > k:  # the rows past obs's: no action
        out[..., m * f : rows * f] = 0
        out[..., rows * f + g + m :] = 0
    return out


class RLlibVectorEnv(VectorWrapper):
    """The env of one env runner, made from its env config (:func:`spider_vector_env`): a
    ``SpiderVectorEnv`` in one of three layouts (``obs_mode``, see the module docstring), and
    an int reset seed ``s`` spread to ``s * num_envs`` (so that runners seeded ``s`` and
    ``s + 1`` play different games). RLlib builds it from the class
    (``config.environment(RLlibVectorEnv, env_config=...)``: :func:`ppo_config`).

    With ``obs_mode="rows"`` the action of game ``i`` is a row ``r`` of its last observation,
    played as :attr:`row_action_ids` ``[i, r]``; a row without an action raises
    :class:`~spider_env.core.rules.IllegalMoveError` (as an illegal action id does), except in
    a game without any (it ended, or was dealt with no legal move: the Gymnasium env ignores
    its action). Its info is the Gymnasium env's without ``action_mask`` (a mask over action
    ids, not rows)."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        env = spider_vector_env(config)
        super().__init__(env)
        self.obs_mode: str = dict(config).get("obs_mode", DEFAULT_OBS_MODE)
        n = self.num_envs
        if self.obs_mode == "flat":
            n_ids = int(env.single_action_space.n)  # type: ignore[attr-defined]
            self.single_observation_space = spaces.Dict(
                {
                    FLAT_KEY: env.single_observation_space,
                    "action_mask": spaces.Box(0, 1, (n_ids,), np.int8),
                }
            )
            self.observation_space = batch_space(self.single_observation_space, n)
        elif self.obs_mode == ROWS_MODE:
            inner = env.single_observation_space
            k = int(inner["actions"].shape[0])  # type: ignore[index]
            self.action_rows = k
            feats, glob = inner["actions"], inner["globals"]  # type: ignore[index]
            low = np.concatenate([feats.low.ravel(), glob.low, np.zeros(k)])
            high = np.concatenate([feats.high.ravel(), glob.high, np.ones(k)])
            self.single_observation_space = spaces.Box(
                low.astype(np.float32), high.astype(np.float32), dtype=np.float32
            )
            self.observation_space = batch_space(self.single_observation_space, n)
            self.single_action_space = spaces.Discrete(k)
            self.action_space = batch_space(self.single_action_space, n)
            self._ids = np.full((n, k), -1, np.int64)
            self._ended = np.zeros(n, bool)

    @property
    def row_action_ids(self) -> np.ndarray:
        """``obs_mode="rows"``: the action id of each row of the last observation ``(N, K)``,
        ``-1`` where a row has none (a copy)."""
        if self.obs_mode != ROWS_MODE:
            raise AttributeError(f"row_action_ids: obs_mode 'rows' only, not {self.obs_mode!r}")
        return self._ids.copy()

    def _obs(self, obs: Any, info: dict[str, Any]) -> Any:
        if self.obs_mode == "flat":
            return {FLAT_KEY: obs, "action_mask": info["action_mask"].astype(np.int8)}
        if self.obs_mode != ROWS_MODE:
            return obs
        for key in ("action_mask", "_action_mask"):
            info.pop(key, None)
        for key, value in info.items():  # the inner env's own arrays (copy=False): fresh ones
            if isinstance(value, np.ndarray):
                info[key] = value.copy()
        ids = obs["action_ids"]
        self._ids[:] = ids
        out = np.empty((self.num_envs, rows_width(self.action_rows)), np.float32)
        feats, glob, flags = split_rows(out, self.action_rows)
        feats[:] = obs["actions"]
        glob[:] = obs["globals"]
        np.greater_equal(ids, 0, out=flags, casting="unsafe")
        return out

    def _action_ids(self, actions: Any) -> np.ndarray:
        """The action ids of the rows ``actions`` (``obs_mode="rows"``)."""
        rows = np.asarray(actions)
        n, k = self.num_envs, self.action_rows
        if rows.shape != (n,) or rows.dtype.kind not in "iu":
            raise ValueError(
                f"expected {n} row numbers (integers), got shape {rows.shape} of {rows.dtype}"
            )
        ids = self._ids[np.arange(n), np.clip(rows, 0, k - 1)]
        waiting = self._ended | (self._ids[:, 0] < 0)  # ignored: ended, or nothing legal
        bad = np.flatnonzero(((rows < 0) | (rows >= k) | (ids < 0)) & ~waiting)
        if len(bad):
            i = int(bad[0])
            r = int(rows[i])
            problem = (
                f"row {r} is out of range 0..{k - 1}"
                if not 0 <= r < k
                else f"row {r} has no action (rows 0..{int((self._ids[i] >= 0).sum()) - 1} have)"
            )
            raise IllegalMoveError(f"env {i}: {problem}")
        return np.where(waiting, 0, ids)

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if is_int(seed):
            seed = int(seed) * self.num_envs
        obs, info = self.env.reset(seed=seed, options=options)  # type: ignore[arg-type]
        if self.obs_mode == ROWS_MODE:
            mask = (options or {}).get("reset_mask")
            self._ended[slice(None) if mask is None else np.asarray(mask, bool)] = False
        return self._obs(obs, info), info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        if self.obs_mode == ROWS_MODE:
            actions = self._action_ids(actions)
        obs, reward, terminated, truncated, info = self.env.step(actions)
        if self.obs_mode == ROWS_MODE:
            np.logical_or(terminated, truncated, out=self._ended)
            reward, terminated, truncated = reward.copy(), terminated.copy(), truncated.copy()
        return self._obs(obs, info), reward, terminated, truncated, info


def register_env() -> str:
    """Register :data:`RAY_ENV` with Ray's registry (``ray.tune.register_env``), so that a config
    can name it (``config.environment("spider-env", env_config=...)``); returns the name.

    Ray's registry (Ray 2.60) files an entry under the first Ray job of the process: in a
    process that connects to Ray a second time (a second ``ray.init``), remote env runners no
    longer find it. :func:`ppo_config` hands RLlib the class :class:`RLlibVectorEnv` instead,
    which works in every session."""
    from ray.tune.registry import register_env as ray_register

    ray_register(RAY_ENV, RLlibVectorEnv)
    return RAY_ENV


# --- the config ---------------------------------------------------------------------------------
def module_spec(s: RLlibSettings) -> Any:
    """The ``RLModuleSpec`` of the policy of ``s.obs_mode``."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from .rllib_modules import ActionRowsRLModule, ActionSetRLModule, FlatRLModule

    cls = {ROWS_MODE: ActionRowsRLModule, ACTIONS_MODE: ActionSetRLModule}.get(
        s.obs_mode, FlatRLModule
    )
    return RLModuleSpec(
        module_class=cls, model_config={"hidden": s.hidden, "precision": s.precision}
    )


def env_runner_class(s: RLlibSettings) -> Any:
    """The env runners' class: :class:`~.rllib_runner.ArrayEnvRunner` with
    ``env_runner="arrays"`` and ``obs_mode="rows"``, else RLlib's ``SingleAgentEnvRunner``."""
    if s.env_runner == "arrays" and s.obs_mode == ROWS_MODE:
        from .rllib_runner import ArrayEnvRunner

        return ArrayEnvRunner
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    return SingleAgentEnvRunner


def _even_rows(observation_space: Any, action_space: Any) -> Any:
    """The learner connector piece of ``obs_mode="rows"`` (:class:`~.rllib_runner.EvenRows`)."""
    from .rllib_runner import EvenRows

    return EvenRows(observation_space, action_space)


def ppo_config(s: RLlibSettings) -> Any:
    """RLlib's ``PPOConfig`` for ``s``: the env (:class:`RLlibVectorEnv`, built by every env runner
    through the vector entry point) and the env runners (:func:`env_runner_class`), the masked
    module, PPO's settings as the batched PPO names them (:mod:`.ppo`)."""
    from ray.rllib.algorithms.ppo import PPOConfig

    rows = s.obs_mode == ROWS_MODE
    learner: dict[str, Any] = {}
    if rows:
        from .rllib_learner import RowsPPOLearner

        learner["learner_class"] = RowsPPOLearner
    return (
        PPOConfig()
        .framework("torch")
        # discrete actions: nothing to unsquash or clip (RLlib would deep-copy every action)
        .environment(RLlibVectorEnv, env_config=s.env_config(), normalize_actions=False)
        .env_runners(
            env_runner_cls=env_runner_class(s),
            num_env_runners=s.num_env_runners,
            num_envs_per_env_runner=s.num_envs_per_env_runner,
            gym_env_vectorize_mode="vector_entry_point",
            rollout_fragment_length=s.n_steps,
        )
        .learners(num_learners=s.num_learners, **learner)
        .training(
            lr=s.learning_rate if s.constant_lr else [[0, s.learning_rate], [s.timesteps, 0.0]],
            gamma=s.gamma,
            lambda_=s.gae_lambda,
            clip_param=s.clip_coef,
            entropy_coeff=s.ent_coef,
            vf_loss_coeff=s.vf_coef,
            vf_clip_param=s.vf_clip,
            use_kl_loss=False,
            grad_clip=s.max_grad_norm,
            grad_clip_by="global_norm",
            num_epochs=s.update_epochs,
            train_batch_size_per_learner=s.batch_per_learner,
            minibatch_size=max(1, s.batch_per_learner // s.minibatches),
        )
        .rl_module(rl_module_spec=module_spec(s))
        .learners(learner_connector=_even_rows if rows else None)
        .debugging(seed=s.seed)
    )


# --- the model format ---------------------------------------------------------------------------
def export_model(module: Any, s: RLlibSettings, path: str | Path, training: dict[str, Any]) -> Path:
    """Save the RLModule ``module`` (trained with ``s``) as a MaskablePPO model ``path`` with its
    sidecar and, beside it, the model file ``spider-env evaluate --agent`` plays
    (``.safetensors``, :func:`~.models.save_model`): the same network, weights copied by name,
    so that its most likely action is the module's. Returns ``path`` (the zip)."""
    from .envs import env_factories
    from .models import ACTION_SET_POLICY, action_set_model, save_model

    variant = s.game()
    env = s.env()
    if gymnasium_obs_mode(s.obs_mode) == ACTIONS_MODE:
        model = action_set_model(variant, hidden=s.hidden, action_rows=s.action_rows, seed=s.seed)
        policy_name = ACTION_SET_POLICY
    else:
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.vec_env import DummyVecEnv

        model = MaskablePPO("MlpPolicy", DummyVecEnv(env_factories(env, 1, seed=s.seed)),
                            policy_kwargs={"net_arch": [s.hidden, s.hidden]}, seed=s.seed,
                            device="cpu")  # fmt: skip
        policy_name = "MlpPolicy"
    theirs = {k: v.detach().cpu() for k, v in module.state_dict().items()}
    # SB3 lists its shared extractor under two more names (pi_/vf_features_extractor): the same
    # tensors, loaded with it
    aliases = ("pi_features_extractor.", "vf_features_extractor.")
    wanted = {k: v for k, v in model.policy.state_dict().items() if not k.startswith(aliases)}
    bad = sorted(k for k, v in wanted.items() if k not in theirs or theirs[k].shape != v.shape)
    if bad:
        raise ValueError(
            f"the module has no weights of the right shape for {', '.join(bad[:3])}: it is not a "
            f"module of obs_mode={s.obs_mode!r} and hidden={s.hidden}"
        )
    model.policy.load_state_dict({k: theirs[k] for k in wanted}, strict=False)
    side = Sidecar(env=env, algo="MaskablePPO", policy=policy_name, deterministic=True,
                   training=training)  # fmt: skip
    return save_model(model, path, side)


# --- training -----------------------------------------------------------------------------------
def _cluster_cpus() -> int:
    import ray

    return int(ray.cluster_resources().get("CPU", 0))


def check_cpus(s: RLlibSettings, cpus: int) -> None:
    """A :class:`SettingsError` if the cluster's ``cpus`` cannot hold the env runners and the
    learners (one CPU each, as RLlib asks): Ray would wait for them for ever."""
    need = s.num_env_runners + s.num_learners
    if need > cpus:
        field = "num_env_runners" if s.num_env_runners > cpus else "num_learners"
        raise SettingsError(
            field,
            f"{s.num_env_runners} env runners and {s.num_learners} learners need {need} CPUs, "
            f"the Ray cluster has {cpus} (RLlib would wait for them for ever)",
        )


def _metric(result: Mapping[str, Any], *path: str) -> Any:
    node: Any = result
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def train(s: RLlibSettings) -> dict[str, Any]:
    """Train as ``s`` says on Ray (``s.ray``); returns the summary (also ``summary.json``).
    Settings that cannot be used (paths, a cluster that cannot be reached or is too small for
    the env runners and learners) are a :class:`SettingsError` before anything is trained or
    written; a missing ``rllib`` extra is an ``ImportError`` saying what to install."""
    check_paths(s)
    try:
        import ray.rllib  # noqa: F401
        import torch  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"training on RLlib needs the rllib extra ({exc}): {INSTALL_HINT}"
        ) from None
    from spider_env.apps.evaluation.ray_backend import ray_session

    from .models import model_file_path

    out = Path(s.out)
    say = (lambda *a: None) if s.no_progress else print
    rows: list[dict[str, Any]] = []
    with ExitStack() as stack:
        with setting_up("ray"):  # a cluster that cannot be reached: one line naming it
            session = stack.enter_context(ray_session(s.ray))
        check_cpus(s, _cluster_cpus())
        with setting_up("out"):
            out.mkdir(parents=True, exist_ok=True)
        threads, chosen = set_torch_threads(s.torch_threads)
        say(threads_line(threads, chosen))
        say(f"malloc: {stack.enter_context(keep_freed_memory(every_size=True))}")
        algo = ppo_config(s).build_algo()
        try:
            t0, steps = time.perf_counter(), 0
            while steps < s.timesteps:
                result = algo.train()
                steps = int(_metric(result, "env_runners", "num_env_steps_sampled_lifetime") or 0)
                ret = _metric(result, "env_runners", "episode_return_mean")
                row = {"iteration": len(rows) + 1, "timesteps": steps,
                       "episode_return_mean": None if ret is None else round(float(ret), 4),
                       "wall_s": round(time.perf_counter() - t0, 2)}  # fmt: skip
                rows.append(row)
                say(f"iteration {row['iteration']:>4}  steps {steps:>10,}  "
                    f"return {row['episode_return_mean']}  {row['wall_s']:.0f} s")  # fmt: skip
                if len(rows) == 1:  # set up: the algorithm, and what its first update made
                    say(f"garbage collector: {stack.enter_context(setup_frozen())}")
            wall = time.perf_counter() - t0
            checkpoint = Path(algo.save_to_path(str((out / "checkpoint").resolve())))
            module = algo.get_module()
        finally:
            algo.stop()
    training = {"trainer": "spider_env.agents.rl.rllib (RLlib PPO)", "timesteps": steps,
                "wall_s": round(wall, 1), "backend": session.backend,
                "train_deals": f"{TRAIN_DEALS.start}:{TRAIN_DEALS.stop}",
                "settings": asdict(s)}  # fmt: skip
    model_zip = export_model(module, s, out / "model.zip", training)
    model = model_file_path(model_zip)
    with open(out / "progress.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    summary: dict[str, Any] = {
        "timesteps": steps, "iterations": len(rows), "wall_s": round(wall, 1),
        "env_steps_per_s": round(steps / wall, 1) if wall > 0 else None,
        "backend": session.backend, "checkpoint": str(checkpoint), "model": str(model),
        "model_zip": str(model_zip), "torch_threads": threads, "torch_threads_chosen": chosen,
        # the learner's row embeddings: resolved here when the driver is the learner
        "update_precision": update_precision(s.precision, "cpu")[1] if not s.num_learners
        else s.precision,
    }  # fmt: skip
    if s.eval_deals:
        from spider_env.apps.evaluation import evaluate

        deals = validation_deals(s.eval_deals)
        result = evaluate([str(model)], deals, variant=s.game().spec_text(), jobs=s.eval_jobs)
        won = sum(r.won for r in result.records)
        summary["validation"] = {"deals": f"{deals.start}:{deals.stop}", "won": won,
                                 "win_rate": won / len(deals)}  # fmt: skip
        say(f"validation deals {deals.start}..{deals.stop - 1}: won {won} of {len(deals)}")
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def restore_module(checkpoint: str | Path) -> Any:
    """The trained RLModule of an RLlib checkpoint (:func:`train`'s ``checkpoint/``)."""
    from ray.rllib.core.rl_module.rl_module import RLModule

    path = (
        Path(checkpoint) / "learner_group" / "learner" / "rl_module" / "default_policy"
    ).resolve()
    if not path.is_dir():
        raise SettingsError(
            "checkpoint", f"{checkpoint} is not an RLlib PPO checkpoint (no {path})"
        )
    return RLModule.from_checkpoint(path)


__all__ = [
    "DEFAULT_ENV_RUNNER",
    "DEFAULT_OBS_MODE",
    "ENV_CONFIG_KEYS",
    "ENV_RUNNERS",
    "OBS_MODES",
    "RAY_ENV",
    "ROWS_MODE",
    "RLlibSettings",
    "RLlibVectorEnv",
    "check_cpus",
    "env_runner_class",
    "export_model",
    "gymnasium_obs_mode",
    "module_spec",
    "ppo_config",
    "ray_address",
    "register_env",
    "resize_rows",
    "restore_module",
    "rows_space",
    "rows_used",
    "rows_width",
    "spider_vector_env",
    "split_rows",
    "train",
    "width_rows",
]
