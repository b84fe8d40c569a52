"""``SpiderVectorEnv``: N Spider games stepped in one compiled call.

``gymnasium.make_vec("Spider-v0", num_envs=N, vectorization_mode="vector_entry_point")`` (and
the same for every registered id) returns it. The full contract is the class docstring.
"""

from __future__ import annotations

from collections.abc import Sequence
from copy import deepcopy
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

from spider_env.core.actions import describe
from spider_env.core.rules import IllegalMoveError, explain_illegal
from spider_env.core.state import State
from spider_env.env import (
    DEAL_NUMBER_RANGE,
    INFO_KEYS,
    SpiderEnv,
    choose_backend,
    make_info,
    raise_column_overflow,
)
from spider_env.fast import load_kernel
from spider_env.fast.layout import P_SIZE, STATE_DTYPE, from_array, params, to_array
from spider_env.observation import feature_width, globals_width
from spider_env.rewards import kernel_reward
from spider_env.wrappers import deal_sequence

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED)
# The info keys of every step, in SyncVectorEnv's layout (value arrays + "_key" masks).
# What call()/get_attr() give: per game, and SpiderEnv attributes that do not depend on the game.
_PER_GAME = ("action_masks", "state", "deal_name", "deal_number", "legal_actions")
_STATELESS = ("decode_action", "describe_action", "encode_action", "n_actions", "variant")


class SpiderVectorEnv(VectorEnv[Any, np.ndarray, np.ndarray]):
    """``num_envs`` Spider games of one variant, stepped together.

    ## What it is
    The batched form of :class:`~spider_env.env.SpiderEnv`: every sub-env behaves exactly as
    ``gymnasium.make(env_id, **kwargs)`` would (same deals for the same seeds, same
    observations, masks, rewards, ``info`` values and step limit), which the tests check step by
    step against gymnasium's ``SyncVectorEnv`` of single pure-engine envs. On the compiled core
    (numba) all ``num_envs`` games advance in one compiled call: apply, legal ids and mask,
    observation, reward, next-step autoreset. Where the compiled core cannot play the
    arguments (variants with undo, custom reward callables, numba missing) the same class
    steps ``num_envs`` pure-engine ``SpiderEnv``\\ s in a loop: same results, single-env speed.
    ``envs.backend`` says which (``"compiled"`` or ``"pure"``).

    ## Spaces
    ``single_action_space`` is the env's ``Discrete(A)``; ``action_space`` is
    ``MultiDiscrete([A] * num_envs)``; ``observation_space`` is
    ``gymnasium.vector.utils.batch_space`` of the env's observation space (every ``obs_mode``:
    ``"dict"``, ``"features"``, ``"flat"``, with ``mask_in_obs``), so a ``"tableau"`` batch has
    shape ``(num_envs, C, L)``.

    ## Masks
    ``envs.action_masks()``: a ``bool`` array of shape ``(num_envs, A)``, row ``i`` True
    exactly for the legal actions of game ``i`` (its ``rules.legal_actions``);
    ``info["action_mask"]`` holds the same after every reset and step.

    ## Autoreset
    ``autoreset_mode`` (also ``metadata["autoreset_mode"]``):

    - ``AutoresetMode.NEXT_STEP`` (default, Gymnasium 1.x's default): a game that terminated or
      was truncated is reset by the next ``step``, whose action for it is ignored; that step
      returns the new game's first observation, reward 0, ``terminated`` and ``truncated``
      False.
    - ``AutoresetMode.SAME_STEP``: the game is reset inside the step that ended it; the
      returned observation is the new game's, and ``info["final_obs"]`` (an object array,
      entries for ended games only) and ``info["final_info"]`` hold the last ones.
    - ``AutoresetMode.DISABLED``: ended games wait for ``reset(options={"reset_mask": m})``;
      stepping one is a ``RuntimeError`` (and no game moves).

    A game dealt with no legal action at all (a few deals of some variants, e.g. Simple Simon)
    ends at its first step: the action is ignored, reward 0, ``terminated`` True, and it is
    reset like any ended game. (A single ``SpiderEnv`` refuses that step with a
    ``RuntimeError`` instead: its episode is over at the reset, which its ``info`` shows as
    ``legal_action_count == 0``; a vector env must keep every game going.)

    New games' deals are drawn from each game's own generator, as ``SpiderEnv.reset`` does:
    ``reset(seed=s)`` seeds game ``i`` with ``s + i`` (a list gives one seed per game). With
    ``deal_numbers`` (a ``range`` or sequence of ints below 2**63) every new game plays one of
    them, drawn as ``spider_env.wrappers.DealRange(env, deal_numbers)`` draws for a single env
    (e.g. a training range that leaves out evaluation deals).

    ## Reset options
    Those of ``SpiderEnv`` (``deal``, ``deal_text``, ``state_text``, ``state``, ``pysol_game``),
    a value for every game, or a list/tuple/array of ``num_envs`` values (one per game); and
    ``reset_mask`` (a ``bool`` array of shape ``(num_envs,)``): reset only those games (their
    ``info`` entries are the ones marked in the ``_key`` masks, as in ``SyncVectorEnv``).

    ## Info
    ``SyncVectorEnv``'s layout of the single env's ``info``: each key maps to an array over the
    games (``action_mask`` of shape ``(num_envs, A)``, ``variant`` an object array of ``str``)
    and ``"_" + key`` to a ``bool`` mask of the games it is given for.

    ## Arguments
    ``num_envs``, ``max_episode_steps=None`` (``make_vec`` passes the id's limit, 1000),
    ``deal_numbers=None``,
    ``autoreset_mode``, ``copy=True`` (return fresh arrays; ``False`` returns the env's own
    buffers, overwritten by the next call), ``backend="auto"`` (``"compiled"`` insists,
    ``"pure"`` forces the pure engine), and every argument of ``SpiderEnv`` (``variant``,
    ``suits``, ``reward_mode``, ``illegal_action``, ``illegal_reward``, ``mask_in_obs``,
    ``obs_mode``, ``feature_slots``, ``undo``, ``render_mode`` (``"ansi"``: ``render()``
    returns a tuple of texts), ``ascii``, ``color``).

    ``illegal_action="raise"`` raises ``IllegalMoveError`` naming the game, before any game
    moves; ``"penalize"``/``"terminate"`` act per game as in ``SpiderEnv``.
    """

    metadata = {  # noqa: RUF012  (Gymnasium declares metadata as a plain class attribute)
        "render_modes": ["ansi"],
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self,
        num_envs: int = 1,
        *,
        max_episode_steps: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        backend: str = "auto",
        render_mode: str | None = None,
        deal_numbers: Sequence[int] | range | None = None,
        **env_kwargs: Any,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)):
            raise TypeError(f"num_envs must be an int, got {num_envs!r}")
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}")
        if max_episode_steps is not None and (
            isinstance(max_episode_steps, bool)
            or not isinstance(max_episode_steps, (int, np.integer))
            or max_episode_steps < 1
        ):
            raise ValueError(
                f"max_episode_steps must be a positive int or None, got {max_episode_steps!r}"
            )
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(
                f"autoreset_mode must be one of {[m.value for m in AUTORESET_MODES]}, "
                f"got {autoreset_mode!r}"
            ) from None
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.num_envs = N = int(num_envs)
        self.max_episode_steps = None if max_episode_steps is None else int(max_episode_steps)
        self.autoreset_mode = mode
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        self.copy = bool(copy)
        self.render_mode = render_mode
        self._env_kwargs = dict(env_kwargs, render_mode=render_mode)
        # One env built for its checks, spaces and reset options (never stepped).
        self._proto = SpiderEnv(backend="pure", **self._env_kwargs)
        self.variant = self._proto.variant
        self.n_actions = self._proto.n_actions
        self.backend = choose_backend(backend, self.variant, self._proto.reward_fn)
        self.single_action_space = spaces.Discrete(self.n_actions)
        self.action_space = batch_space(self.single_action_space, N)
        self.single_observation_space = self._proto.observation_space
        self.observation_space = batch_space(self.single_observation_space, N)
        self._started = False
        self.deal_numbers = None if deal_numbers is None else deal_sequence(deal_numbers)
        if self.deal_numbers is not None:
            top = self.deal_numbers[-1] if isinstance(self.deal_numbers, range) else None
            high = max(self.deal_numbers) if top is None else max(top, self.deal_numbers[0])
            if high >= 2**63:
                raise ValueError(f"deal_numbers of a vector env must be below 2**63, got {high}")
        # Each game's generator: the deal numbers of its new games (seeded by reset(seed=...)).
        self._rngs: list[np.random.Generator] = [seeding.np_random()[0] for _ in range(N)]
        self._max_steps = -1 if self.max_episode_steps is None else self.max_episode_steps
        self._elapsed = np.zeros(N, dtype=np.int64)
        self._ended = np.zeros(N, dtype=bool)  # terminated | truncated at the last step
        self._n_ended = 0
        self._rewards = np.zeros(N, dtype=np.float64)
        self._terminated = np.zeros(N, dtype=bool)
        self._truncated = np.zeros(N, dtype=bool)
        if self.backend == "pure":
            self._envs = [SpiderEnv(backend="pure", **self._env_kwargs) for _ in range(N)]
            self._env_obs: list[Any] = [None] * N
            self._obs_buf: Any = create_empty_array(self.single_observation_space, N)
            self._dead = np.zeros(N, dtype=bool)
            self._reset_infos: list[dict[str, Any]] = [{} for _ in range(N)]
        else:
            self._init_compiled()

    # --- construction ------------------------------------------------------------------------
    def _init_compiled(self) -> None:
        self._k = load_kernel()
        v, N, A = self.variant, self.num_envs, self.n_actions
        proto = self._proto
        self._pr = params(v)
        self._states = np.full((N, int(self._pr[P_SIZE])), -1, dtype=STATE_DTYPE)
        self._masks = np.zeros((N, A), dtype=bool)
        self._legal = np.zeros((N, A + 1), dtype=np.int32)
        self._keys = np.zeros(64, dtype=np.int64)
        mode, weights = kernel_reward(proto.reward_fn)  # type: ignore[misc]
        self._rmode = mode
        self._rw = np.array((proto.illegal_reward, *weights), dtype=np.float64)
        self._terminate_illegal = proto.illegal_action == "terminate"
        self._obs_kind = 0 if proto.obs_mode == "dict" else 1
        self._slots = int(self._env_kwargs.get("feature_slots", 6))
        C = v.n_columns
        self._tab = np.zeros((N, C, v.max_column_length), dtype=np.int8)
        self._comp = np.zeros((N, 4), dtype=np.int8)
        self._tops = np.zeros((N, len(v.stock)), dtype=np.int8)
        self._CF = C * feature_width(v, self._slots) if self._obs_kind else 0
        width = self._CF + globals_width(v) if self._obs_kind else 1
        self._feat = np.zeros((N, width), dtype=np.float32)
        self._illegal = np.zeros(N, dtype=bool)
        self._info = np.zeros((N, 5), dtype=np.int64)
        self._no_reset = np.full(N, -1, dtype=np.int64)
        self._deal_names = [""] * N
        self._deal_numbers = np.full(N, -1, dtype=np.int64)
        self._cached_states: dict[int, State] = {}
        self._all_true = np.ones(N, dtype=bool)
        self._given_all = np.ones((len(INFO_KEYS), N), dtype=bool)  # "_key" masks, copy=False
        self._variant_info = np.full(N, proto._variant_spec, dtype=object)

    # --- public helpers ----------------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """``bool`` array ``(num_envs, A)``: row ``i`` is game ``i``'s mask."""
        if not self._started:
            raise RuntimeError("call reset() before action_masks()")
        if self.backend == "pure":
            return np.stack([env.action_masks() for env in self._envs])
        return self._masks.copy()

    def sample_legal_actions(self) -> np.ndarray:
        """A uniformly random legal action per game (``int64`` array ``(num_envs,)``; 0 where
        a game has none: it has ended and its next step resets it), drawn in compiled code
        from ``envs.np_random`` (seeded by ``reset(seed=...)``). For random baselines and
        benchmarks; equal in distribution to choosing from each row of :meth:`action_masks`."""
        if not self._started:
            raise RuntimeError("call reset() before sample_legal_actions()")
        out = np.zeros(self.num_envs, dtype=np.int64)
        if self.backend == "pure":
            for i, mask in enumerate(self.action_masks()):
                legal = np.flatnonzero(mask)
                if len(legal):
                    out[i] = legal[self.np_random.integers(len(legal))]
            return out
        seed = np.uint64(self.np_random.integers(0, 2**63))
        self._k.sample_legal(self._legal, out, seed)
        np.maximum(out, 0, out=out)
        return out

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """``name`` of every sub-env, as ``SyncVectorEnv.call`` (what sb3-contrib's
        ``env_method("action_masks")`` reaches): ``"action_masks"``, ``"state"``,
        ``"deal_name"``, ``"deal_number"``, ``"legal_actions"`` per game, and the
        position-independent ``SpiderEnv`` methods and attributes (``describe_action``...)."""
        if name not in _PER_GAME and name not in _STATELESS:
            raise AttributeError(
                f"SpiderVectorEnv.call({name!r}): known names are "
                f"{', '.join(_PER_GAME + _STATELESS)}"
            )
        if name == "action_masks":
            return tuple(self.action_masks())
        if name == "state":
            return tuple(self.states())
        if self.backend == "pure" and name in _PER_GAME:
            return tuple(
                getattr(env, name) if name != "legal_actions" else env.legal_actions()
                for env in self._envs
            )
        if name == "deal_name":
            return tuple(self._deal_names)
        if name == "deal_number":
            return tuple(int(n) for n in self._deal_numbers)
        if name == "legal_actions":
            return tuple(np.flatnonzero(m).tolist() for m in self._masks)
        attr = getattr(self._proto, name)
        return tuple(
            attr(*args, **kwargs) if callable(attr) else attr for _ in range(self.num_envs)
        )

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Attribute ``name`` of every sub-env (``SyncVectorEnv.get_attr``), as :meth:`call`."""
        return self.call(name)

    def states(self) -> list[State]:
        """Each game's full engine state (hidden cards included: for tools, not agents)."""
        if not self._started:
            raise RuntimeError("the env has no state yet: call reset() first")
        if self.backend == "pure":
            return [env.state for env in self._envs]
        out = []
        for i in range(self.num_envs):
            st = self._cached_states.get(i)
            if st is None:
                st = self._cached_states[i] = from_array(self.variant, self._states[i])
            out.append(st)
        return out

    def _state_of(self, i: int) -> State:
        """Game ``i``'s state alone (for an error message: no other game is converted)."""
        if self.backend == "pure":
            return self._envs[i].state
        return from_array(self.variant, self._states[i])

    # --- Gymnasium API -----------------------------------------------------------------------
    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        N = self.num_envs
        if seed is not None:
            self._np_random, self._np_random_seed = seeding.np_random(
                seed if isinstance(seed, (int, np.integer)) else None
            )
        seeds = self._seeds(seed)
        options = dict(options) if options else {}
        rows_mask = self._reset_mask(options.pop("reset_mask", None))
        if len(options) > 1:
            raise ValueError(f"give at most one way to choose the start, got {sorted(options)}")
        starts: list[dict[str, Any] | None] = [None] * N
        if options:
            ((key, value),) = options.items()
            per_env = isinstance(value, (list, tuple, np.ndarray))
            if per_env and len(value) != N:
                raise ValueError(
                    f"options[{key!r}] has {len(value)} values; give one per env ({N}) or one "
                    "value for all"
                )
            starts = [{key: value[i] if per_env else value} for i in range(N)]
        rows = np.flatnonzero(rows_mask)
        for i in rows.tolist():
            if seeds[i] is not None:
                self._rngs[i] = seeding.np_random(seeds[i])[0]
        if self.backend == "pure":
            info = self._reset_pure(rows, seeds, starts)
        else:
            info = self._reset_compiled(rows, seeds, starts, rows_mask)
        self._elapsed[rows] = 0
        self._ended[rows] = False
        self._n_ended = int(self._ended.sum())
        self._terminated[rows] = False
        self._truncated[rows] = False
        self._started = True
        return self._observations(), info

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._started:
            raise RuntimeError("step() called before reset(): call envs.reset() first")
        a = self._check_actions(actions)
        resetting = self._ended.copy() if self._n_ended else None  # next-step autoreset
        if resetting is not None and self.autoreset_mode == AutoresetMode.DISABLED:
            raise RuntimeError(
                f"envs {np.flatnonzero(resetting).tolist()} have ended and autoreset is "
                "disabled: reset them with reset(options={'reset_mask': mask}) first"
            )
        if self.autoreset_mode != AutoresetMode.NEXT_STEP:
            resetting = None
        if resetting is not None or self._proto.illegal_action == "raise" or self.backend == "pure":
            # What refuses the step is checked before any game moves or any deal number is
            # drawn (otherwise the compiled step checks ranges itself); actions of restarting
            # games are ignored.
            restarting = resetting if resetting is not None else np.zeros(self.num_envs, bool)
            bad = np.flatnonzero(((a < 0) | (a >= self.n_actions)) & ~restarting)
            if len(bad):
                self._out_of_range(a, int(bad[0]))
            if self._proto.illegal_action == "raise":
                self._raise_if_illegal(a, restarting)
        if self.backend == "pure":
            info = self._step_pure(a, resetting)
        else:
            info = self._step_compiled(a, resetting)
        rewards = self._out(self._rewards)
        terminated = self._out(self._terminated)
        truncated = self._out(self._truncated)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and self._n_ended:
            rewards, terminated, truncated = (
                self._rewards.copy(), self._terminated.copy(), self._truncated.copy(),
            )  # fmt: skip
            self._same_step_reset(info)
        return self._observations(), rewards, terminated, truncated, info

    def render(self) -> tuple[Any, ...] | None:
        if self.render_mode is None:
            gym.logger.warn("You are calling render() without a render_mode; pass 'ansi'.")
            return None
        if self.backend == "pure":
            return tuple(env.render() for env in self._envs)
        env = SpiderEnv(backend="pure", **self._env_kwargs)
        frames = []
        for st in self.states():
            env.reset(options={"state": st})
            frames.append(env.render())
        return tuple(frames)

    def close_extras(self, **kwargs: Any) -> None:
        if self.backend == "pure":
            for env in self._envs:
                env.close()

    # --- the compiled backend ----------------------------------------------------------------
    def _reset_compiled(
        self,
        rows: np.ndarray,
        seeds: list[int | None],
        starts: list[dict[str, Any] | None],
        rows_mask: np.ndarray,
    ) -> dict[str, Any]:
        drawn = [i for i in rows.tolist() if starts[i] is None]
        for i in rows.tolist():
            start = starts[i]
            if start is not None:
                state, name, number = self._proto._starting_state(start)
                to_array(state, out=self._states[i])
                self._deal_names[i], self._deal_numbers[i] = name, number
        if drawn:
            self._reset_from_rngs(np.array(drawn, dtype=np.int64))
        self._cached_states.clear()
        self._observe_rows(rows)
        return self._make_info(rows_mask, np.zeros(self.num_envs, dtype=bool))

    def _step_compiled(self, a: np.ndarray, resetting: np.ndarray | None) -> dict[str, Any]:
        resets = self._no_reset
        if resetting is not None:
            resets = self._no_reset.copy()
            for i in np.flatnonzero(resetting).tolist():
                n = self._draw(i)
                resets[i] = n
                self._deal_names[i], self._deal_numbers[i] = f"{self.variant.name}#{n}", n
        tab = self._tab.reshape(self.num_envs, -1)  # the kernel writes each table as one row
        n_ended = self._k.step_batch(
            self._pr, self._states, a, resets, self._masks, self._legal, self._keys,
            self._rmode, self._rw, self._terminate_illegal, self._obs_kind, self._slots,
            tab, self._comp, self._tops, self._feat, self._rewards, self._terminated,
            self._truncated, self._ended, self._elapsed, self._max_steps, self._illegal,
            self._info,
        )  # fmt: skip
        if n_ended < 0:
            self._cached_states.clear()
            if n_ended >= -self.num_envs:
                self._out_of_range(a, -1 - n_ended)
            self._overflow(-1 - self.num_envs - n_ended)
        self._n_ended = n_ended
        self._cached_states.clear()
        return self._make_info(self._all_true, self._illegal)

    def _observe_rows(self, rows: np.ndarray) -> None:
        tab = self._tab.reshape(self.num_envs, -1)
        overflow = self._k.observe_rows(
            self._pr, self._states, rows.astype(np.int64), self._masks, self._legal,
            self._keys, self._obs_kind, self._slots, tab, self._comp, self._tops,
            self._feat, self._info,
        )  # fmt: skip
        if overflow >= 0:
            self._overflow(overflow)

    def _overflow(self, i: int) -> None:
        try:
            raise_column_overflow(self._state_of(i))
        except RuntimeError as exc:
            raise RuntimeError(f"env {i}: {exc}") from None

    def _draw(self, i: int) -> int:
        """The deal number of game ``i``'s next game, from its generator: any of
        ``[0, 2**32)`` as ``SpiderEnv.reset`` draws, or one of ``deal_numbers`` as
        ``DealRange(env, deal_numbers)`` draws."""
        pool = self.deal_numbers
        if pool is None:
            return int(self._rngs[i].integers(0, DEAL_NUMBER_RANGE))
        return int(pool[int(self._rngs[i].integers(0, len(pool)))])

    def _pool_start(self, i: int) -> dict[str, Any] | None:
        """Pure backend: the reset options of game ``i``'s next game (``None``: the env's own
        draw)."""
        return None if self.deal_numbers is None else {"deal": self._draw(i)}

    def _reset_from_rngs(self, rows: np.ndarray) -> None:
        deals = np.empty(len(rows), dtype=np.uint64)
        for r, i in enumerate(rows.tolist()):
            n = self._draw(i)
            deals[r] = n
            self._deal_names[i], self._deal_numbers[i] = f"{self.variant.name}#{n}", n
        self._k.reset_rows(self._pr, self._states, rows.astype(np.int64), deals)
        self._cached_states.clear()

    def _make_info(self, given: np.ndarray, illegal: np.ndarray) -> dict[str, Any]:
        """``SyncVectorEnv``'s layout of the env's info, for the games in ``given``. With
        ``copy=False`` and every game given, the arrays are views of the env's buffers (like
        its observations: overwritten by the next call)."""
        fresh = self.copy or not given.all()
        info = self._info.T.copy() if fresh else self._info.T
        n_legal, deals, score, moves, runs = info
        values: dict[str, np.ndarray] = make_info(
            self._masks.copy() if fresh else self._masks, score, moves, runs, deals,
            runs >= self.variant.runs_to_win, n_legal, illegal.copy() if fresh else illegal,
            self._variant_info.copy() if fresh else self._variant_info,
        )  # fmt: skip
        if fresh:
            masks = np.empty((len(values), self.num_envs), dtype=bool)
            masks[:] = given
        else:
            masks = self._given_all
        out: dict[str, Any] = {}
        if not given.all():
            for arr in values.values():
                arr[~given] = None if arr.dtype == object else 0
        for m, (key, arr) in enumerate(values.items()):
            out[key] = arr
            out["_" + key] = masks[m]
        return out

    # --- the pure backend (num_envs pure-engine SpiderEnvs in a loop) -------------------------
    def _reset_pure(
        self, rows: np.ndarray, seeds: list[int | None], starts: list[dict[str, Any] | None]
    ) -> dict[str, Any]:
        infos: dict[str, Any] = {}
        for i in rows.tolist():
            start = starts[i] if starts[i] is not None else self._pool_start(i)
            obs, info = self._envs[i].reset(seed=seeds[i], options=start)
            self._env_obs[i] = obs
            self._dead[i] = info["legal_action_count"] == 0
            self._reset_infos[i] = info
            infos = self._add_info(infos, info, i)
        if any(obs is None for obs in self._env_obs):
            # the first reset resets every game: the batch needs an observation of each
            missing = [i for i, obs in enumerate(self._env_obs) if obs is None]
            raise ValueError(f"the first reset must reset every env (envs {missing} were not)")
        self._obs_buf = concatenate(self.single_observation_space, self._env_obs, self._obs_buf)
        return infos

    def _step_pure(self, a: np.ndarray, resetting: np.ndarray | None) -> dict[str, Any]:
        infos: dict[str, Any] = {}
        max_steps = self._max_steps
        for i, env in enumerate(self._envs):
            if resetting is not None and resetting[i]:
                obs, info = env.reset(options=self._pool_start(i))
                self._dead[i] = info["legal_action_count"] == 0
                self._reset_infos[i] = info
                self._rewards[i], self._terminated[i], self._truncated[i] = 0.0, False, False
                self._elapsed[i] = 0
            else:
                self._elapsed[i] += 1
                if self._dead[i]:  # dealt with no legal action: the game ends here
                    obs, reward, term, info = self._env_obs[i], 0.0, True, self._reset_infos[i]
                else:
                    try:
                        obs, reward, term, _, info = env.step(int(a[i]))
                    except RuntimeError as exc:  # a column outgrew the table observation
                        raise RuntimeError(f"env {i}: {exc}") from None
                self._rewards[i], self._terminated[i] = reward, term
                self._truncated[i] = max_steps > 0 and self._elapsed[i] >= max_steps
            self._env_obs[i] = obs
            infos = self._add_info(infos, info, i)
        np.logical_or(self._terminated, self._truncated, out=self._ended)
        self._n_ended = int(self._ended.sum())
        self._obs_buf = concatenate(self.single_observation_space, self._env_obs, self._obs_buf)
        return infos

    # --- internals ---------------------------------------------------------------------------
    def _same_step_reset(self, info: dict[str, Any]) -> None:
        """Reset the games that just ended (same-step autoreset), keeping their last
        observation and info in ``info["final_obs"]`` / ``info["final_info"]``."""
        ended = self._ended.copy()
        rows = np.flatnonzero(ended)
        if self.backend == "pure":
            last = deepcopy(self._env_obs)
        else:
            batch = self._observations(copy=True)
            last = [_row(batch, i) for i in range(self.num_envs)]
        final_obs = np.full(self.num_envs, None, dtype=object)
        final_info: dict[str, Any] = {}
        for key, value in info.items():
            if key.startswith("_"):
                continue
            value = value.copy()
            value[~ended] = None if value.dtype == object else 0
            final_info[key], final_info["_" + key] = value, ended.copy()
        for i in rows.tolist():
            final_obs[i] = last[i]
        if self.backend == "pure":
            for i in rows.tolist():
                obs, new = self._envs[i].reset(options=self._pool_start(i))
                self._env_obs[i] = obs
                self._dead[i] = new["legal_action_count"] == 0
                self._reset_infos[i] = new
                for key, value in new.items():
                    info[key][i] = value
                info["illegal_action"][i] = False
            self._obs_buf = concatenate(self.single_observation_space, self._env_obs, self._obs_buf)
        else:
            self._reset_from_rngs(rows)
            self._observe_rows(rows)
            illegal = self._illegal.copy()
            illegal[rows] = False
            new_info = self._make_info(self._all_true, illegal)
            for key in list(new_info):
                if not key.startswith("_"):
                    info[key] = new_info[key]
        self._elapsed[rows] = 0
        self._ended[rows] = False
        self._n_ended = 0
        info["final_obs"], info["_final_obs"] = final_obs, ended.copy()
        info["final_info"], info["_final_info"] = final_info, ended.copy()

    def _out(self, arr: np.ndarray) -> np.ndarray:
        return arr.copy() if self.copy else arr

    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        N = self.num_envs
        if seed is None:
            return [None] * N
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            return [int(seed) + i for i in range(N)]
        seeds = list(seed)  # type: ignore[arg-type]
        if len(seeds) != N:
            raise ValueError(f"give one seed per env ({N}), got {len(seeds)}")
        return seeds

    def _reset_mask(self, mask: Any) -> np.ndarray:
        if mask is None:
            return np.ones(self.num_envs, dtype=bool)
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            raise TypeError("options['reset_mask'] must be a numpy bool array")
        if mask.shape != (self.num_envs,):
            raise ValueError(
                f"options['reset_mask'] must have shape ({self.num_envs},), got {mask.shape}"
            )
        if not mask.any():
            raise ValueError("options['reset_mask'] must select at least one env")
        return mask.copy()

    def _check_actions(self, actions: Any) -> np.ndarray:
        """``actions`` as an ``int64`` array of shape ``(num_envs,)``, or a ``TypeError`` /
        ``ValueError`` naming what is wrong (ranges are checked by the caller)."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(
                f"actions must have shape ({self.num_envs},), one action id per env, got "
                f"shape {a.shape}"
            )
        if a.dtype.kind not in "iu":
            raise TypeError(f"actions must be integers (action ids), got dtype {a.dtype}")
        return a.astype(np.int64, copy=False)

    def _out_of_range(self, a: np.ndarray, i: int) -> None:
        raise ValueError(
            f"action {int(a[i])} of env {i} is out of range: {self.variant.name} has "
            f"actions 0..{self.n_actions - 1}"
        )

    def _raise_if_illegal(self, a: np.ndarray, resetting: np.ndarray) -> None:
        masks = self._masks if self.backend == "compiled" else self.action_masks()
        legal = masks[np.arange(self.num_envs), np.where(resetting, 0, a)]
        dead = ~masks.any(axis=1)  # a game dealt with no legal action ends, it does not raise
        ok = legal | resetting | dead
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            st = self._state_of(i)
            raise IllegalMoveError(
                f"env {i}: illegal action {int(a[i])} ({describe(self.variant, int(a[i]))}): "
                f"{explain_illegal(st, int(a[i]))}"
            )

    def _observations(self, copy: bool | None = None) -> Any:
        copy = self.copy if copy is None else copy
        if self.backend == "pure":
            return deepcopy(self._obs_buf) if copy else self._obs_buf
        if self._obs_kind == 0:
            obs: dict[str, Any] = {
                "tableau": self._tab.copy() if copy else self._tab,
                "deals_left": self._info[:, 1].copy(),
                "completed": self._comp.copy() if copy else self._comp,
            }
            if self.variant.pile_top_visible:
                obs["pile_tops"] = self._tops.copy() if copy else self._tops
        elif self._proto.obs_mode == "flat":
            return self._feat.copy() if copy else self._feat
        else:
            CF = self._CF
            obs = {
                "columns": self._feat[:, :CF].reshape(self.num_envs, self.variant.n_columns, -1),
                "globals": self._feat[:, CF:],
            }
            if copy:
                obs = {k: np.ascontiguousarray(v).copy() for k, v in obs.items()}
        if self._proto.mask_in_obs:
            obs["action_mask"] = self._masks.astype(np.int8)
        return obs


def _row(obs: Any, i: int) -> Any:
    if isinstance(obs, dict):
        return {k: v[i].copy() for k, v in obs.items()}
    return obs[i].copy()


def make_vector_env(num_envs: int = 1, **kwargs: Any) -> SpiderVectorEnv:
    """The ``vector_entry_point`` of every registered id (``gymnasium.make_vec``)."""
    return SpiderVectorEnv(num_envs, **kwargs)


__all__ = ["AUTORESET_MODES", "SpiderVectorEnv", "make_vector_env"]
