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
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import batch_space

from spider_env.core.actions import describe
from spider_env.core.rules import IllegalMoveError, explain_illegal
from spider_env.core.state import State
from spider_env.env import DEAL_NUMBER_RANGE, SpiderEnv, choose_backend
from spider_env.fast import load_kernel
from spider_env.fast.layout import P_SIZE, STATE_DTYPE, from_array, params, to_array
from spider_env.observation import feature_width, globals_width
from spider_env.rewards import kernel_reward

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED)
# The info keys of every step, in SyncVectorEnv's layout (value arrays + "_key" masks).
# SpiderEnv attributes that do not depend on the game's position, for call()/get_attr().
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
    runs a ``SyncVectorEnv`` of pure-engine ``SpiderEnv``\\ s: same results, single-env speed.
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
      stepping one is a ``RuntimeError``.

    New games' deals are drawn from each sub-env's own generator, as ``SpiderEnv.reset``
    does: ``reset(seed=s)`` seeds game ``i`` with ``s + i`` (a list gives one seed per game).

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
        self.num_envs = int(num_envs)
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
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.single_observation_space = self._proto.observation_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._started = False
        if self.backend == "pure":
            self._sync = SyncVectorEnv(
                [self._make_pure_env for _ in range(self.num_envs)],
                copy=self.copy,
                autoreset_mode=mode,
            )
        else:
            self._init_compiled()

    # --- construction ------------------------------------------------------------------------
    def _make_pure_env(self) -> gym.Env[Any, Any]:
        env: gym.Env[Any, Any] = SpiderEnv(backend="pure", **self._env_kwargs)
        if self.max_episode_steps is not None:
            env = gym.wrappers.TimeLimit(env, self.max_episode_steps)
        return env

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
        self._rewards = np.zeros(N, dtype=np.float64)
        self._terminated = np.zeros(N, dtype=bool)
        self._truncated = np.zeros(N, dtype=bool)
        self._illegal = np.zeros(N, dtype=bool)
        self._info = np.zeros((N, 5), dtype=np.int64)
        self._elapsed = np.zeros(N, dtype=np.int64)
        self._autoreset = np.zeros(N, dtype=bool)
        self._no_reset = np.full(N, -1, dtype=np.int64)
        self._rngs: list[np.random.Generator] = [seeding.np_random()[0] for _ in range(N)]
        self._deal_names = [""] * N
        self._deal_numbers = np.full(N, -1, dtype=np.int64)
        self._cached_states: list[State | None] = [None] * N
        self._all_true = np.ones(N, dtype=bool)
        self._keys[:] = 0
        self._variant_info = np.full(N, proto._variant_spec, dtype=object)

    # --- public helpers ----------------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """``bool`` array ``(num_envs, A)``: row ``i`` is game ``i``'s mask."""
        if not self._started:
            raise RuntimeError("call reset() before action_masks()")
        if self.backend == "pure":
            return np.stack(self._sync.call("action_masks"))
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
        if self.backend == "pure":
            return self._sync.call(name, *args, **kwargs)
        if name == "action_masks":
            return tuple(self.action_masks())
        if name == "state":
            return tuple(self.states())
        if name == "deal_name":
            return tuple(self._deal_names)
        if name == "deal_number":
            return tuple(int(n) for n in self._deal_numbers)
        if name == "legal_actions":
            return tuple(np.flatnonzero(m).tolist() for m in self._masks)
        if name not in _STATELESS:
            raise AttributeError(
                f"SpiderVectorEnv.call({name!r}): known names are action_masks, state, "
                f"deal_name, deal_number, legal_actions, {', '.join(_STATELESS)}"
            )
        attr = getattr(self._proto, name)
        return tuple(
            attr(*args, **kwargs) if callable(attr) else attr for _ in range(self.num_envs)
        )

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Attribute ``name`` of every sub-env (``SyncVectorEnv.get_attr``)."""
        return self.call(name)

    def states(self) -> list[State]:
        """Each game's full engine state (hidden cards included: for tools, not agents)."""
        if not self._started:
            raise RuntimeError("the env has no state yet: call reset() first")
        if self.backend == "pure":
            return list(self._sync.get_attr("state"))
        out = []
        for i in range(self.num_envs):
            st = self._cached_states[i]
            if st is None:
                st = self._cached_states[i] = from_array(self.variant, self._states[i])
            out.append(st)
        return out

    # --- Gymnasium API -----------------------------------------------------------------------
    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        if self.backend == "pure":
            if seed is not None:
                self._np_random, self._np_random_seed = seeding.np_random(
                    seed if isinstance(seed, (int, np.integer)) else None
                )
            out = self._reset_pure(seed, dict(options) if options else None)
            self._started = True
            return out
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
        rows = np.flatnonzero(rows_mask)
        for i in rows:
            if seeds[i] is not None:
                self._rngs[i] = seeding.np_random(seeds[i])[0]
        if options:
            ((key, value),) = options.items()
            per_env = isinstance(value, (list, tuple, np.ndarray))
            if per_env and len(value) != N:
                raise ValueError(
                    f"options[{key!r}] has {len(value)} values; give one per env ({N}) or one "
                    "value for all"
                )
            for i in rows:
                state, name, number = self._proto._starting_state(
                    {key: value[i] if per_env else value}
                )
                to_array(state, out=self._states[i])
                self._deal_names[i], self._deal_numbers[i] = name, number
                self._cached_states[i] = None
        else:
            self._reset_from_rngs(rows)
        self._k.observe_rows(
            self._pr, self._states, rows.astype(np.int64), self._masks, self._legal,
            self._keys, self._obs_kind, self._slots, self._tab, self._comp, self._tops,
            self._feat, self._info,
        )  # fmt: skip
        self._elapsed[rows] = 0
        self._autoreset[rows] = False
        self._terminated[rows] = False
        self._truncated[rows] = False
        self._started = True
        info = self._make_info(rows_mask, self._no_illegal(rows_mask))
        return self._observations(), info

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._started:
            raise RuntimeError("step() called before reset(): call envs.reset() first")
        a = self._check_actions(actions, ranges=False)
        if self.backend == "pure":
            pending = self._sync._autoreset_envs.copy()
            if self.autoreset_mode != AutoresetMode.NEXT_STEP:
                pending[:] = False
            bad = np.flatnonzero(((a < 0) | (a >= self.n_actions)) & ~pending)
            if len(bad):
                self._out_of_range(a, int(bad[0]))
            if self._proto.illegal_action == "raise":
                self._raise_if_illegal(a, pending)
            return self._sync.step(np.where(pending, 0, a))
        resetting = self._autoreset.copy()  # games the next-step autoreset starts again
        any_reset = bool(resetting.any())
        if any_reset and self.autoreset_mode == AutoresetMode.DISABLED:
            raise RuntimeError(
                f"envs {np.flatnonzero(resetting).tolist()} have ended and autoreset is "
                "disabled: reset them with reset(options={'reset_mask': mask}) first"
            )
        if any_reset or self._proto.illegal_action == "raise":
            # Check what would refuse the step before a deal number is drawn (the compiled
            # step checks ranges itself otherwise); actions of restarting games are ignored.
            bad = np.flatnonzero(((a < 0) | (a >= self.n_actions)) & ~resetting)
            if len(bad):
                self._out_of_range(a, int(bad[0]))
            if self._proto.illegal_action == "raise":
                self._raise_if_illegal(a, resetting)
        resets = self._no_reset
        if any_reset:
            resets = self._no_reset.copy()
            for i in np.flatnonzero(resetting).tolist():
                n = int(self._rngs[i].integers(0, DEAL_NUMBER_RANGE))
                resets[i] = n
                self._deal_names[i], self._deal_numbers[i] = f"{self.variant.name}#{n}", n
        bad = self._k.step_batch(
            self._pr, self._states, a, resets, self._masks, self._legal, self._keys,
            self._rmode, self._rw, self._terminate_illegal, self._obs_kind, self._slots,
            self._tab, self._comp, self._tops, self._feat, self._rewards, self._terminated,
            self._illegal, self._info,
        )  # fmt: skip
        if bad >= 0:
            self._out_of_range(a, bad)
        self._cached_states = [None] * self.num_envs
        self._elapsed += 1
        if self.max_episode_steps is not None:
            np.greater_equal(self._elapsed, self.max_episode_steps, out=self._truncated)
        if any_reset:
            self._elapsed[resetting] = 0
            self._truncated[resetting] = False
        np.logical_or(self._terminated, self._truncated, out=self._autoreset)
        info = self._make_info(self._all_true, self._illegal)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and self._autoreset.any():
            rewards, terminated, truncated = (
                self._rewards.copy(), self._terminated.copy(), self._truncated.copy(),
            )  # fmt: skip
            obs = self._same_step_reset(info)
            return obs, rewards, terminated, truncated, info
        return (
            self._observations(),
            self._out(self._rewards),
            self._out(self._terminated),
            self._out(self._truncated),
            info,
        )

    def render(self) -> tuple[Any, ...] | None:
        if self.render_mode is None:
            gym.logger.warn("You are calling render() without a render_mode; pass 'ansi'.")
            return None
        if self.backend == "pure":
            return self._sync.render()
        env = SpiderEnv(backend="pure", **self._env_kwargs)
        frames = []
        for st in self.states():
            env.reset(options={"state": st})
            frames.append(env.render())
        return tuple(frames)

    def close_extras(self, **kwargs: Any) -> None:
        if self.backend == "pure":
            self._sync.close()

    # --- internals ---------------------------------------------------------------------------
    def _reset_pure(
        self, seed: int | Sequence[int | None] | None, options: dict[str, Any] | None
    ) -> tuple[Any, dict[str, Any]]:
        """``SyncVectorEnv.reset``, plus option values given one per env."""
        per_env = {
            k: v
            for k, v in (options or {}).items()
            if k != "reset_mask" and isinstance(v, (list, tuple, np.ndarray))
        }
        if not per_env:
            return self._sync.reset(
                seed=seed if seed is None or isinstance(seed, int) else list(seed),
                options=options,
            )
        assert options is not None
        if len(options) - ("reset_mask" in options) > 1:
            raise ValueError(f"give at most one way to choose the start, got {sorted(options)}")
        ((key, values),) = per_env.items()
        N = self.num_envs
        if len(values) != N:
            raise ValueError(
                f"options[{key!r}] has {len(values)} values; give one per env ({N}) or one "
                "value for all"
            )
        rows = self._reset_mask(options.get("reset_mask"))
        seeds = self._seeds(seed)
        merged: dict[str, Any] = {}
        obs: Any = None
        for i in np.flatnonzero(rows):
            one = np.zeros(N, dtype=bool)
            one[i] = True
            obs, info = self._sync.reset(seed=seeds, options={"reset_mask": one, key: values[i]})
            for k, v in info.items():
                if k.startswith("_"):
                    continue
                if k not in merged:
                    merged[k], merged["_" + k] = v, info["_" + k]
                else:
                    merged[k][i] = v[i]
                    merged["_" + k][i] = True
        return obs, merged

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

    def _reset_from_rngs(self, rows: np.ndarray) -> None:
        deals = np.empty(len(rows), dtype=np.uint64)
        for r, i in enumerate(rows):
            n = int(self._rngs[i].integers(0, DEAL_NUMBER_RANGE))
            deals[r] = n
            self._deal_names[i], self._deal_numbers[i] = f"{self.variant.name}#{n}", n
        self._k.reset_rows(self._pr, self._states, rows.astype(np.int64), deals)
        for i in rows:
            self._cached_states[i] = None

    def _check_actions(self, actions: Any, ranges: bool = True) -> np.ndarray:
        """``actions`` as an ``int64`` array of shape ``(num_envs,)``; ``TypeError`` /
        ``ValueError`` naming what is wrong (the range only with ``ranges``)."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(
                f"actions must have shape ({self.num_envs},), one action id per env, got "
                f"shape {a.shape}"
            )
        if a.dtype.kind not in "iu":
            raise TypeError(f"actions must be integers (action ids), got dtype {a.dtype}")
        a = a.astype(np.int64, copy=False)
        if ranges:  # the compiled step checks the range itself, before changing anything
            bad = np.flatnonzero((a < 0) | (a >= self.n_actions))
            if len(bad):
                self._out_of_range(a, int(bad[0]))
        return a

    def _out_of_range(self, a: np.ndarray, i: int) -> None:
        raise ValueError(
            f"action {int(a[i])} of env {i} is out of range: {self.variant.name} has "
            f"actions 0..{self.n_actions - 1}"
        )

    def _raise_if_illegal(self, a: np.ndarray, resetting: np.ndarray) -> None:
        masks = self._masks if self.backend == "compiled" else self.action_masks()
        ok = masks[np.arange(self.num_envs), np.where(resetting, 0, a)] | resetting
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            st = self.states()[i]
            raise IllegalMoveError(
                f"env {i}: illegal action {int(a[i])} ({describe(self.variant, int(a[i]))}): "
                f"{explain_illegal(st, int(a[i]))}"
            )

    def _no_illegal(self, rows_mask: np.ndarray) -> np.ndarray:
        return np.zeros(self.num_envs, dtype=bool)

    def _observations(self) -> Any:
        copy = self.copy
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

    def _make_info(self, given: np.ndarray, illegal: np.ndarray) -> dict[str, Any]:
        """``SyncVectorEnv``'s layout of the env's info, for the games in ``given``."""
        n_legal, deals, score, moves, runs = self._info.T.copy()  # fresh rows, views of one copy
        values: dict[str, np.ndarray] = {
            "action_mask": self._masks.copy() if self.copy else self._masks,
            "score": score,
            "moves": moves,
            "completed_runs": runs,
            "deals_left": deals,
            "is_success": runs >= self.variant.runs_to_win,
            "legal_action_count": n_legal,
            "illegal_action": illegal.copy(),
            "variant": self._variant_info.copy(),
        }
        masks = np.empty((len(values), self.num_envs), dtype=bool)
        masks[:] = given
        out: dict[str, Any] = {}
        if not given.all():
            if not self.copy:
                values["action_mask"] = values["action_mask"].copy()
            for arr in values.values():
                arr[~given] = None if arr.dtype == object else 0
        for m, (key, arr) in enumerate(values.items()):
            out[key] = arr
            out["_" + key] = masks[m]
        return out

    def _same_step_reset(self, info: dict[str, Any]) -> Any:
        ended = self._autoreset.copy()
        rows = np.flatnonzero(ended)
        last = self._observations() if self.copy else deepcopy(self._observations())
        final_obs = np.full(self.num_envs, None, dtype=object)
        for i in rows:
            final_obs[i] = _row(last, int(i))
        final_info: dict[str, Any] = {}
        for key, value in info.items():
            if key.startswith("_"):
                continue
            value = value.copy()
            value[~ended] = None if value.dtype == object else 0
            final_info[key], final_info["_" + key] = value, ended.copy()
        self._reset_from_rngs(rows)
        self._k.observe_rows(
            self._pr, self._states, rows.astype(np.int64), self._masks, self._legal,
            self._keys, self._obs_kind, self._slots, self._tab, self._comp, self._tops,
            self._feat, self._info,
        )  # fmt: skip
        self._elapsed[rows] = 0
        self._autoreset[rows] = False
        illegal = self._illegal.copy()
        illegal[rows] = False
        new = self._make_info(self._all_true, illegal)
        for key in list(new):
            if not key.startswith("_"):
                info[key] = new[key]
        info["final_obs"], info["_final_obs"] = final_obs, ended.copy()
        info["final_info"], info["_final_info"] = final_info, ended.copy()
        return self._observations()


def _row(obs: Any, i: int) -> Any:
    if isinstance(obs, dict):
        return {k: v[i].copy() for k, v in obs.items()}
    return obs[i].copy()


def make_vector_env(num_envs: int = 1, **kwargs: Any) -> SpiderVectorEnv:
    """The ``vector_entry_point`` of every registered id (``gymnasium.make_vec``)."""
    return SpiderVectorEnv(num_envs, **kwargs)


__all__ = ["AUTORESET_MODES", "SpiderVectorEnv", "make_vector_env"]
