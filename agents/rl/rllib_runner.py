"""An RLlib env runner that samples spider-env's row layout from arrays (the ``rllib`` extra).

RLlib's ``SingleAgentEnvRunner`` keeps an episode object per game and, at every step, adds each
game's observation, action, reward and model outputs to it one by one, running its connectors
on per-game items: per step, Python work for every game of the batched env. With 256 games a
runner that does so spends more CPU on this bookkeeping than on the env and the policy.

:class:`ArrayEnvRunner` samples the same way, a step of all games at a time, but keeps each
step's observations, actions, rewards, flags and model outputs in arrays: one forward pass of
the RLModule per step, one draw from its action distribution (RLlib's, drawn as RLlib's
runner draws it: from the same seed, the same rows), one step of the env. Only
at the end of a sample does it cut the arrays into the episode chunks RLlib's learner reads
(``SingleAgentEpisode`` objects whose data are slices of the arrays, with the same columns,
ids, lengths and flags as RLlib's runner would return, in its order; their infos are empty
dicts, which PPO's learner does not read), and it logs the same metrics.

On the CPU, with numba, the pass and the draw of :class:`~.rllib_modules.ActionRowsRLModule`
are the batched PPO's compiled choice (:class:`~.ppo.CompiledChoice`): torch's matrix products
around three compiled calls, at the uniform numbers ``MaskedCategorical`` would draw from
torch's generator. The rows drawn are the module's (a draw could differ only where a uniform
falls within float32 rounding of a row's bound), their log-probabilities, logits and values
equal the module's up to float32 rounding. ``compiled_choice = False`` (a class attribute)
keeps the module's own pass, and RLlib's runner's samples bit for bit.

A remote runner (a process of its own) keeps the memory it frees for its next sample,
blocks of every size (:func:`~.memory.keep_freed_memory`, as the trainer's driver does). Its
episodes cross Ray's object store: each chunk's observations and logits are one contiguous block
(the sample's arrays are laid out game by game), which Ray ships out of band, written once into
the store and read there without a copy; the columns of one number a step stay in the message.

It applies to the env :class:`~.rllib.RLlibVectorEnv` with ``obs_mode="rows"`` sampling
``num_timesteps`` with exploration (PPO's sampling). Anything else (RLlib's episode sampling,
random actions, inference, another env or layout, custom env-to-module or module-to-env
connectors, episode callbacks, a stateful module, restarting failed envs) goes to RLlib's own
``_sample``, unchanged; a switch between the two starts the games afresh.
"""

from __future__ import annotations

import time
import uuid
from contextlib import ExitStack
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core.columns import Columns
from ray.rllib.env.env_runner import NUM_ENV_STEP_FAILURES_LIFETIME
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
from ray.rllib.env.single_agent_episode import _REWARDS_BOX_SPACE, SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer
from ray.rllib.utils.metrics import ENV_STEP_TIMER, RLMODULE_INFERENCE_TIMER, WEIGHTS_SEQ_NO
from ray.rllib.utils.torch_utils import FLOAT_MIN

from spider_env.observation.spaces import N_ACTION_FEATURES, N_GLOBAL_FEATURES

from .memory import keep_freed_memory
from .ppo import CompiledChoice, compiled_choice
from .rllib import (
    ROWS_MODE,
    RLlibVectorEnv,
    resize_rows,
    rows_space,
    rows_used,
    rows_width,
    split_rows,
    width_rows,
)
from .rllib_modules import ActionRowsRLModule, MaskedCategorical

#: Torch threads of the policy's forward passes while sampling (the process's count is back
#: after): a pass over one step of a few hundred games gains nothing from a second thread, whose
#: waiting costs CPU.
SAMPLING_THREADS = 1
#: The episode callbacks a runner makes; any of them set sends sampling to RLlib's own loop.
EPISODE_CALLBACKS = (
    "callbacks_on_episode_created",
    "callbacks_on_episode_start",
    "callbacks_on_episode_step",
    "callbacks_on_episode_end",
)


def rows_env(env: Any) -> RLlibVectorEnv | None:
    """The :class:`~.rllib.RLlibVectorEnv` of ``obs_mode="rows"`` inside RLlib's wrappers of
    ``env``, or ``None``."""
    while env is not None:
        if isinstance(env, RLlibVectorEnv):
            return env if env.obs_mode == ROWS_MODE else None
        env = getattr(env, "env", None)
    return None


class EvenRows(ConnectorV2):
    """A learner connector piece for ``obs_mode="rows"``: every episode's observations (and
    logits) cut, or padded, to the most rows with an action in any of them, before RLlib
    batches them. Episodes of :class:`ArrayEnvRunner` come cut to the rows of their sample
    (those of two runners may differ); those of RLlib's own runner with every row. Built
    with the env's observation space (``input_observation_space``), it gives the episodes it
    changes that space cut to their rows."""

    def __call__(
        self,
        *,
        rl_module: Any,
        batch: dict[str, Any],
        episodes: list[Any],
        explore: bool | None = None,
        shared_data: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        if not episodes:
            return batch
        rows = max(1, max(rows_used(e.observations.data) for e in episodes))
        full = self.input_observation_space  # the env's, every row
        space = rows_space(full, rows) if isinstance(full, spaces.Box) else None
        for e in episodes:
            obs = e.observations.data
            if width_rows(obs.shape[-1]) == rows:
                continue
            e.observations.data = resize_rows(obs, rows, used=rows)  # rows: the most any uses
            e.observation_space = space
            z = e.extra_model_outputs.get(Columns.ACTION_DIST_INPUTS)
            if z is not None:
                z.data = np.ascontiguousarray(resize_logits(z.data, rows))
        return batch


def resize_logits(z: np.ndarray, rows: int) -> np.ndarray:
    """Logits ``(..., k)`` over rows cut to ``rows`` (a view), or padded with ``FLOAT_MIN``, the
    logit of a row without an action (a new array)."""
    k = z.shape[-1]
    if k >= rows:
        return z[..., :rows]
    pad = np.full((*z.shape[:-1], rows - k), FLOAT_MIN, z.dtype)
    return np.concatenate([z, pad], axis=-1)


def _buffer(data: np.ndarray, space: Any = None) -> InfiniteLookbackBuffer:
    """An episode's column holding ``data`` (an array: RLlib's numpy'd form), no lookback."""
    return InfiniteLookbackBuffer(data=data, lookback=0, space=space)


class _Games:
    """Where each game of the runner stands between two samples: its last observation; the
    id of its ongoing episode, the steps and the return it has had and when it started (for
    RLlib's episode metrics); and whether it ended on the last step (the env then resets it on
    the next: next-step autoreset)."""

    def __init__(self, obs: np.ndarray) -> None:
        n = len(obs)
        self.obs = obs
        self.ids = [uuid.uuid4().hex for _ in range(n)]
        self.t = np.zeros(n, np.int64)
        self.ret = np.zeros(n, np.float64)
        self.start = np.full(n, time.perf_counter())
        self.ended = np.zeros(n, bool)

    def new_episode(self, i: int) -> None:
        self.ids[i], self.t[i], self.ret[i] = uuid.uuid4().hex, 0, 0.0
        self.start[i] = time.perf_counter()


class _Steps:
    """The arrays of one sample, a row per step (``cap`` steps, grown when resets need more):
    the rows drawn, their log-probabilities and the logits, the values (if the module gives
    them), rewards, flags, and which games' steps count (not a reset); and each step's
    observations as the env gave them (one more: the last step's), with the most rows any of
    them uses."""

    def __init__(self, cap: int, n: int, rows: int, obs: np.ndarray) -> None:
        self.actions = np.empty((cap, n), np.int64)
        self.logp = np.empty((cap, n), np.float32)
        self.logits = np.empty((cap, n, rows), np.float32)
        self.values = np.empty((cap, n), np.float32)
        self.has_values = False
        self.rewards = np.empty((cap, n), np.float32)
        self.terminated = np.empty((cap, n), bool)
        self.truncated = np.empty((cap, n), bool)
        self.counted = np.empty((cap, n), bool)
        self.obs = [obs]
        self.used = rows_used(obs)

    @property
    def cap(self) -> int:
        return len(self.actions)

    def grow(self) -> None:
        """Room for as many steps again."""
        more = self.cap
        for name, a in list(vars(self).items()):
            if isinstance(a, np.ndarray):
                setattr(self, name, np.concatenate([a, np.empty((more, *a.shape[1:]), a.dtype)]))

    def observations(self) -> np.ndarray:
        """Every step's observations by game, ``(N, steps + 1, L)``, cut to the rows used (at
        least one): the padding rows no decision of the sample has are neither stored, nor
        sent, nor batched, nor shuffled by RLlib; and each game's steps are one block of
        memory, so an episode chunk's observations are a contiguous slice (see :func:`_by_game`)."""
        rows = max(1, self.used)
        first = self.obs[0]
        n = first.shape[0]
        out = np.empty((n, len(self.obs), rows_width(rows)), first.dtype)
        for s, o in enumerate(self.obs):
            resize_rows(o, rows, out=out[:, s], used=self.used)
        return out


def _choose(chooser: CompiledChoice, x: _Steps, s: int) -> None:
    """Step ``s``'s rows drawn by the compiled choice into ``x``, with their log-probabilities,
    values and logits (``FLOAT_MIN`` at the rows without an action, as the module gives them),
    at the uniforms ``MaskedCategorical.sample`` draws from torch's generator."""
    obs = x.obs[s]
    k = width_rows(obs.shape[-1])
    feats, glob, flags = split_rows(obs, k)
    u = torch.rand(len(obs)).numpy()  # as MaskedCategorical.sample draws them
    # the rows with an action come first: an "id" of 0 where the flag is 1, -1 past them
    rows = {"actions": feats, "action_ids": flags - 1, "globals": glob}
    chooser(rows, u, k, x.actions[s], x.logp[s], x.values[s])
    x.has_values = True
    logits = x.logits[s]
    logits.fill(FLOAT_MIN)
    np.copyto(logits, chooser.scores[: len(obs), :k], where=flags > 0.5)


def _by_game(a: np.ndarray) -> np.ndarray:
    """A copy of the step-major ``a`` ``(steps, N, ...)`` by game, ``(N, steps, ...)``.

    An episode chunk's columns are then contiguous slices, which Ray ships out of band (written
    once into its object store and read there without a copy); a strided slice of a step-major
    array is copied into the message instead, and out of it again (the training guide,
    "Episodes out of band")."""
    return np.ascontiguousarray(np.swapaxes(a, 0, 1))


class ArrayEnvRunner(SingleAgentEnvRunner):
    """RLlib's single-agent env runner, sampling PPO's steps from arrays (module docstring)."""

    #: Whether the module's pass and draw are the compiled choice where they can be (the CPU,
    #: numba, the rows module as it is): ``False`` keeps the module's own pass.
    compiled_choice: bool = True

    def __init__(self, *, config: Any, **kwargs: Any) -> None:
        self._games: _Games | None = None
        self._memory: ExitStack | None = None
        self._chooser: tuple[Any, CompiledChoice | None] | None = None  # (module, its choice)
        super().__init__(config=config, **kwargs)
        if (self.worker_index or 0) > 0:  # a process of its own: its arrays are reused
            self._memory = ExitStack()
            self._memory.enter_context(keep_freed_memory(every_size=True))

    def stop(self) -> None:
        super().stop()
        if self._memory is not None:
            self._memory.close()
            self._memory = None

    def array_sampling(self) -> str | None:
        """``None`` if :meth:`_sample` can sample from arrays, else why not (the settings; the
        call's own arguments are checked in :meth:`_sample`)."""
        c = self.config
        if rows_env(self.env) is None:
            return "the env is not spider-env's RLlib env with obs_mode='rows'"
        if c._env_to_module_connector is not None or c._module_to_env_connector is not None:
            return "custom env-to-module or module-to-env connectors"
        if not (c.add_default_connectors_to_env_to_module_pipeline
                and c.add_default_connectors_to_module_to_env_pipeline):  # fmt: skip
            return "RLlib's default connectors are off"
        if c.callbacks_class is not RLlibCallback or any(getattr(c, k) for k in EPISODE_CALLBACKS):
            return "episode callbacks"
        if c.restart_failed_sub_environments:
            return "restart_failed_sub_environments"
        if self.module is None or self.module.is_stateful():
            return "no RLModule, or a stateful one"
        return None

    def _sample(
        self,
        *,
        num_timesteps: int | None = None,
        num_episodes: int | None = None,
        explore: bool,
        random_actions: bool = False,
        force_reset: bool = False,
    ) -> list[SingleAgentEpisode]:
        if num_timesteps is None or not explore or random_actions or self.array_sampling():
            fresh = self._games is not None  # RLlib's own episodes are stale after arrays
            self._games = None  # and the next array sample starts afresh
            return super()._sample(
                num_timesteps=num_timesteps,
                num_episodes=num_episodes,
                explore=explore,
                random_actions=random_actions,
                force_reset=force_reset or fresh,
            )
        return self._sample_arrays(num_timesteps, force_reset)

    def choice(self) -> CompiledChoice | None:
        """The compiled choice of the runner's module, its weights as they are now; ``None``
        if :attr:`compiled_choice` is off or it cannot stand for the module's pass: a module
        other than :class:`~.rllib_modules.ActionRowsRLModule` itself (a subclass may change
        the pass), another distribution, weights off the CPU, or no numba."""
        module, env = self.module, rows_env(self.env)
        if not (
            self.compiled_choice
            and env is not None
            and type(module) is ActionRowsRLModule
            and module.get_exploration_action_dist_cls() is MaskedCategorical
        ):
            return None
        if self._chooser is None or self._chooser[0] is not module:  # made once per module
            device = next(module.parameters()).device
            made = compiled_choice(module, device, self.num_envs, env.action_rows,
                                   N_ACTION_FEATURES, N_GLOBAL_FEATURES)  # fmt: skip
            self._chooser = (module, made)
        chooser = self._chooser[1]
        if chooser is not None:
            chooser.refresh()  # new weights are copied in place; the score layer's views
        return chooser

    # --- sampling from arrays -------------------------------------------------------------------
    def _sample_arrays(self, num_timesteps: int, force_reset: bool) -> list[SingleAgentEpisode]:
        env = rows_env(self.env)
        assert env is not None and self.module is not None
        if force_reset or self._games is None or self._needs_initial_reset:
            # seeded on the first reset only, as RLlib's runner does
            obs0, _ = self._try_env_reset(seed=self._seed if self._needs_initial_reset else None)
            self._needs_initial_reset = False
            self._games = _Games(obs0)
        g = self._games
        n = self.num_envs
        runners = self.config.num_env_runners or 1
        x = _Steps(-(-num_timesteps // n) + 1, n, env.action_rows, g.obs)
        ended_before = g.ended.copy()
        threads = torch.get_num_threads()
        torch.set_num_threads(SAMPLING_THREADS)
        try:
            s, ts = self._steps(env, g, x, num_timesteps, runners)
        finally:
            torch.set_num_threads(threads)
        g.obs = x.obs[s]
        episodes = self._cut(x, s, ended_before)
        self._log_env_steps(metric=self._metrics_num_env_steps_sampled, num_steps=ts)
        self._increase_sampled_metrics(ts, sum(e.is_done for e in episodes))
        return episodes

    def _steps(
        self, env: RLlibVectorEnv, g: _Games, x: _Steps, num_timesteps: int, runners: int
    ) -> tuple[int, int]:
        """Steps every game until ``num_timesteps`` steps count, into ``x``; returns the steps
        taken and the steps that count."""
        module = self.module
        assert module is not None
        dist_cls = module.get_exploration_action_dist_cls()
        chooser = self.choice()
        ts = s = 0
        lifetime = self.num_env_steps_sampled_lifetime // runners
        while ts < num_timesteps:
            if s == x.cap:
                x.grow()
            with self.metrics.log_time(RLMODULE_INFERENCE_TIMER):
                if chooser is not None:
                    _choose(chooser, x, s)
                else:
                    out = module.forward_exploration(
                        {Columns.OBS: torch.from_numpy(x.obs[s])}, t=(lifetime + ts) * runners
                    )
                    z = out[Columns.ACTION_DIST_INPUTS]
                    dist = dist_cls.from_logits(z)  # RLlib's draw: the same rows, same seed
                    a = torch.as_tensor(dist.sample())
                    x.logp[s] = torch.as_tensor(dist.logp(a)).numpy()
                    x.actions[s] = a.numpy()
                    x.logits[s] = z.numpy()
                    if Columns.VF_PREDS in out:  # the module's values (those of this module's)
                        x.values[s] = out[Columns.VF_PREDS].numpy()
                        x.has_values = True
            try:
                with self.metrics.log_time(ENV_STEP_TIMER):
                    o, r, te, tr, _ = env.step(x.actions[s])  # o: a new array each step
            except Exception as e:  # as RLlib's runner reports it
                self.metrics.log_value(NUM_ENV_STEP_FAILURES_LIFETIME, 1, reduce="lifetime_sum")
                raise RuntimeError(f"{type(self).__name__}: the env's step failed: {e}") from e
            x.obs.append(o)
            x.used = max(x.used, rows_used(o))
            x.rewards[s], x.terminated[s], x.truncated[s] = r, te, tr
            np.logical_not(g.ended, out=x.counted[s])  # an ended game's step is its reset
            ts += int(x.counted[s].sum())
            np.logical_or(te, tr, out=g.ended)
            s += 1
        return s, ts

    def _cut(self, x: _Steps, steps: int, ended_before: np.ndarray) -> list[SingleAgentEpisode]:
        """The episode chunks of the first ``steps`` steps of ``x`` in RLlib's order (the done
        ones as they ended, then the ongoing ones game by game); logs each done episode's
        metrics and moves each game's episode on."""
        g = self._games
        assert g is not None
        obs = x.observations()  # (N, steps + 1, L), as the other columns below
        rows = width_rows(obs.shape[-1])
        logits = _by_game(x.logits[:steps, :, :rows])  # the rows cut: FLOAT_MIN in each decision
        # the columns of a number a step stay strided slices, pickled in band: out of band, each
        # would be a buffer of its own, which costs Ray more than its few bytes
        actions, rewards, logp = (np.swapaxes(v, 0, 1) for v in (x.actions, x.rewards, x.logp))
        values = np.swapaxes(x.values, 0, 1) if x.has_values else None
        seqs = np.swapaxes(np.full((steps, self.num_envs), self._weights_seq_no), 0, 1)
        assert self.env is not None
        full = self.env.single_observation_space
        assert isinstance(full, spaces.Box)
        obs_space = rows_space(full, rows)
        act_space = self.env.single_action_space
        ends = (x.terminated[:steps] | x.truncated[:steps]) & x.counted[:steps]
        done_eps: list[tuple[int, int, SingleAgentEpisode]] = []  # (step it ended, game, it)
        ongoing: list[SingleAgentEpisode] = []

        def chunk(i: int, a: int, b: int, done: bool) -> SingleAgentEpisode:
            # steps a .. b - 1 of game i, observations a .. b
            term = done and bool(x.terminated[b - 1, i])
            eps = SingleAgentEpisode(
                id_=g.ids[i],
                observations=_buffer(obs[i, a : b + 1]),
                observation_space=obs_space,
                infos=[{} for _ in range(a, b + 1)],
                actions=_buffer(actions[i, a:b]),
                action_space=act_space,
                rewards=_buffer(rewards[i, a:b], _REWARDS_BOX_SPACE),
                terminated=term,
                truncated=done and not term,
                extra_model_outputs={
                    Columns.ACTION_DIST_INPUTS: _buffer(logits[i, a:b]),
                    **({Columns.VF_PREDS: _buffer(values[i, a:b])} if values is not None else {}),
                    Columns.ACTION_LOGP: _buffer(logp[i, a:b]),
                    WEIGHTS_SEQ_NO: _buffer(seqs[i, a:b]),
                },
                t_started=int(g.t[i]),
                len_lookback_buffer=0,
            )
            g.t[i] += b - a
            g.ret[i] += float(rewards[i, a:b].sum(dtype=np.float64))
            return eps

        for i in range(self.num_envs):
            a = 0
            if ended_before[i]:  # step 0 reset it: a new episode from observation 1
                g.new_episode(i)
                a = 1
            for d in np.flatnonzero(ends[:, i]).tolist():
                done_eps.append((d, i, chunk(i, a, d + 1, True)))
                self._log_episode_metrics(
                    int(g.t[i]), float(g.ret[i]), time.perf_counter() - g.start[i]
                )
                g.new_episode(i)  # step d + 1 resets it
                a = d + 2
            if a < steps:
                ongoing.append(chunk(i, a, steps, False))
        done_eps.sort(key=lambda e: e[:2])  # in the order they ended, as RLlib returns them
        return [e for _, _, e in done_eps] + ongoing


__all__ = [
    "EPISODE_CALLBACKS",
    "SAMPLING_THREADS",
    "ArrayEnvRunner",
    "EvenRows",
    "resize_logits",
    "rows_env",
]
