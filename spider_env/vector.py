"""``SpiderVectorEnv``: N Spider games stepped in one compiled call.

``gymnasium.make_vec("Spider-v0", num_envs=N, vectorization_mode="vector_entry_point")`` (and
the same for every registered id) returns it. A shell over one engine of
:mod:`spider_env.engine` with ``n = num_envs``; the full contract is the class docstring.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from spider_env.action_space import MaskableDiscrete
from spider_env.core.actions import describe
from spider_env.core.checks import check_bool, check_int, check_optional_int
from spider_env.core.deals import deal_name
from spider_env.core.rules import IllegalMoveError, explain_illegal
from spider_env.core.state import State
from spider_env.engine import DEALS_LEFT, LEGAL_COUNT, choose_backend, game_nbytes, make_engine
from spider_env.env import (
    DEAL_NUMBER_RANGE,
    INFO_KEYS,
    SpiderEnv,
    Start,
    check_seed,
    choose_start,
    last_action_text,
    make_info,
    start_games,
)
from spider_env.observation import (
    DEFAULT_ACTION_ROWS,
    ColumnOverflowError,
    assemble_observation,
)
from spider_env.render import render_text
from spider_env.render_image import render_image
from spider_env.wrappers import deal_sequence

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED)

#: With ``copy=True`` a batch of at least ``FRESH_MASKS_FROM`` games makes each step's masks from
#: the legal ids and its engine keeps no mask buffer (``Engine.step(..., keep_masks=False)``);
#: a smaller batch keeps the buffer and copies it, which costs less there. Measured: the vector
#: guide's "Masks made new from the legal ids".
FRESH_MASKS_FROM = 64
# What call()/get_attr() give: per game, and SpiderEnv attributes that do not depend on the game.
_PER_GAME = ("action_masks", "state", "deal_name", "deal_number", "legal_actions")
_STATELESS = ("decode_action", "describe_action", "encode_action", "n_actions", "variant")
# Where a cgroup (v2, v1) memory limit and the memory used under it are read (containers).
_CGROUP_MEMORY = (
    ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
    ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"),
)


def available_memory() -> int | None:
    """Bytes of memory a new batch can take: Linux's ``MemAvailable``, lowered to what a cgroup
    memory limit leaves (a container's); elsewhere the physical memory; ``None`` if unknown."""
    found: list[int] = []
    try:
        with open("/proc/meminfo") as f:
            found += [int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:")]
    except OSError:
        pass
    for limit_file, usage_file in _CGROUP_MEMORY:
        try:
            with open(limit_file) as limit, open(usage_file) as usage:
                found.append(int(limit.read()) - int(usage.read()))
        except (OSError, ValueError):  # no such cgroup, or no limit ("max")
            pass
    if not found:
        try:
            return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, OSError, ValueError):
            return None
    return min(found)


class SpiderVectorEnv(VectorEnv[Any, np.ndarray, np.ndarray]):
    """``num_envs`` Spider games of one variant, stepped together.

    ## What it is
    The batched form of :class:`~spider_env.env.SpiderEnv`: every sub-env behaves exactly as
    ``gymnasium.make(env_id, **kwargs)`` would (same deals for the same seeds, same
    observations, masks, rewards, ``info`` values and step limit), which the tests check step by
    step against gymnasium's ``SyncVectorEnv`` of single pure-engine envs. On the compiled core
    (numba) all ``num_envs`` games advance in one compiled call: apply, legal ids and mask,
    observation, reward, next-step autoreset. Where the compiled core cannot play the
    arguments (variants with undo, custom reward callables, numba missing) the pure engine
    steps the games one after the other: same results, single-env speed. ``envs.backend``
    says which (``"compiled"`` or ``"pure"``); both are one engine of :mod:`spider_env.engine`.

    ## Spaces
    ``single_action_space`` is the env's ``Discrete(A)``; ``action_space`` is
    ``MultiDiscrete([A] * num_envs)`` (both as :mod:`spider_env.action_space` makes them: equal
    to Gymnasium's, and ``envs.action_space.sample(mask=info["action_mask"])`` takes the
    batched ``bool`` mask, one legal action per game); ``observation_space`` is
    ``gymnasium.vector.utils.batch_space`` of the env's observation space (every ``obs_mode``:
    ``"dict"``, ``"features"``, ``"flat"``, ``"actions"``, with ``mask_in_obs``), so a
    ``"tableau"`` batch has shape ``(num_envs, C, L)`` and an ``"actions"`` batch
    ``(num_envs, action_rows, 27)``.

    ## Per-action features
    With ``obs_mode="actions"`` each game's observation is the single env's: one decision of
    ``ActionFeatureEncoder`` per game and step (a refused action and the step that ends a game
    dealt without legal actions are decisions too), each game with its own episode memory,
    forgotten when that game starts (``reset``, a ``reset_mask``, autoreset). On the compiled
    core the features of all games are computed in one compiled call after the step
    (:func:`spider_env.fast.action_features.encode_rows`); each game's table of visited
    positions is sized from ``max_episode_steps`` (and grows when there is none).

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
    ``reset(seed=s)`` seeds game ``i`` with ``s + i`` (a list, tuple or 1-D array gives one seed
    per game, each an int >= 0 or ``None``; anything else is a ``TypeError`` or ``ValueError``
    naming it, raised, like every bad ``options`` value, before any game changes). With
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
    ``num_envs`` (refused with a ``ValueError``, before anything is allocated, when the engine's
    buffers for that many games, ``spider_env.engine.game_nbytes`` each, exceed the memory
    available: :func:`available_memory`; a lower bound, as a game also holds Python objects),
    ``max_episode_steps=None`` (``make_vec`` passes the id's limit, 1000),
    ``deal_numbers=None``,
    ``autoreset_mode``, ``copy=True`` (return fresh arrays; ``False`` returns the env's own
    buffers, overwritten by the next call), ``backend="auto"`` (``"compiled"`` insists,
    ``"pure"`` forces the pure engine), and every argument of ``SpiderEnv`` (``variant``,
    ``suits``, ``reward_mode``, ``illegal_action``, ``illegal_reward``, ``mask_in_obs``,
    ``obs_mode``, ``feature_slots``, ``undo``, ``render_mode`` (``"ansi"``: ``render()``
    returns a tuple of texts; ``"rgb_array"``: a tuple of images, as ``SpiderEnv`` draws them),
    ``ascii``, ``color``).

    ``illegal_action="raise"`` raises ``IllegalMoveError`` naming the game, before any game
    moves; ``"penalize"``/``"terminate"`` act per game as in ``SpiderEnv``.
    """

    metadata = {  # noqa: RUF012  (Gymnasium declares metadata as a plain class attribute)
        "render_modes": ["ansi", "rgb_array"],
        "render_fps": SpiderEnv.metadata["render_fps"],
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
        # Every argument is checked, and the batch's size against the memory available, before
        # anything is allocated for the games.
        self.num_envs = N = check_int("num_envs", num_envs, 1)
        self.max_episode_steps = check_optional_int("max_episode_steps", max_episode_steps, 1)
        self.autoreset_mode = mode = _autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None, 'ansi' or 'rgb_array', got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.copy = check_bool("copy", copy)
        self.deal_numbers = _vector_deals(deal_numbers)
        # One env built for its argument checks, spaces and position-independent methods (never
        # reset or stepped: the games are the engine's).
        self._proto = proto = SpiderEnv(backend="pure", **env_kwargs, render_mode=render_mode)
        self.variant = proto.variant
        self.n_actions = proto.n_actions
        self.backend = choose_backend(backend, self.variant, proto.reward_fn)
        settings: dict[str, Any] = dict(
            obs_mode=proto.obs_mode, feature_slots=proto.feature_slots, reward_fn=proto.reward_fn,
            illegal_reward=proto.illegal_reward,
            terminate_illegal=proto.illegal_action == "terminate",
            action_rows=proto.action_rows or DEFAULT_ACTION_ROWS,
            episode_steps=self.max_episode_steps,
        )  # fmt: skip
        self._check_fits(game_nbytes(self.backend, self.variant, **settings))
        self.single_action_space = MaskableDiscrete(self.n_actions)
        self.action_space = batch_space(self.single_action_space, N)
        self.single_observation_space = proto.observation_space
        self.observation_space = batch_space(self.single_observation_space, N)
        self._started = False
        # Each game's generator: the deal numbers of its new games (seeded by reset(seed=...)).
        self._rngs: list[np.random.Generator] = [seeding.np_random()[0] for _ in range(N)]
        self._max_steps = -1 if self.max_episode_steps is None else self.max_episode_steps
        self._n_ended = 0
        self._engine = make_engine(self.backend, self.variant, N, **settings)
        self._raise_illegal = proto.illegal_action == "raise"
        self._fresh_masks = self.num_envs >= FRESH_MASKS_FROM  # see FRESH_MASKS_FROM
        self._mask_in_obs = proto.mask_in_obs
        self._no_reset = np.full(N, -1, dtype=np.int64)
        self._deal_names = [""] * N
        self._deal_numbers = np.full(N, -1, dtype=np.int64)
        self._all_true = np.ones(N, dtype=bool)
        self._given_all = np.ones((len(INFO_KEYS), N), dtype=bool)  # the "_key" masks
        self._flag_keys = ["_" + key for key in INFO_KEYS]
        self._variant_info = np.full(N, self.variant.spec_text(), dtype=object)
        # each game's last action (-1: none since its start) and whether it was refused, kept
        # for render() only
        self._last_actions = np.full(N, -1, dtype=np.int64)
        self._last_refused = np.zeros(N, dtype=bool)

    # --- public helpers ----------------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """``bool`` array ``(num_envs, A)``: row ``i`` is game ``i``'s mask."""
        if not self._started:
            raise RuntimeError("call reset() before action_masks()")
        return self._engine.fresh_masks()

    def sample_legal_actions(self) -> np.ndarray:
        """A uniformly random legal action per game (``int64`` array ``(num_envs,)``; 0 where
        a game has none: it has ended and its next step resets it), drawn by the engine
        (``Engine.sample_legal``, in compiled code on the compiled core) from a seed taken from
        ``envs.np_random`` (seeded by ``reset(seed=...)``): the same actions on both backends.
        For random baselines and benchmarks; equal in distribution to choosing from each row of
        :meth:`action_masks`."""
        if not self._started:
            raise RuntimeError("call reset() before sample_legal_actions()")
        out = self._engine.sample_legal(int(self.np_random.integers(0, 2**63)))
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
        if name == "deal_name":
            return tuple(self._deal_names)
        if name == "deal_number":
            return tuple(int(n) for n in self._deal_numbers)
        if name == "legal_actions":
            return tuple(np.flatnonzero(m).tolist() for m in self.action_masks())
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
        return [self._engine.state(i) for i in range(self.num_envs)]

    # --- Gymnasium API -----------------------------------------------------------------------
    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        N = self.num_envs
        # Every argument (each game's option value too) is checked before anything changes.
        seed_all, seeds = self._seeds(seed)
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
        options = dict(options) if options else {}
        rows_mask = self._reset_mask(options.pop("reset_mask", None))
        if len(options) > 1:
            raise ValueError(f"give at most one way to choose the start, got {sorted(options)}")
        rows = np.flatnonzero(rows_mask)
        if not self._started and len(rows) < N:
            # the first reset resets every game: the batch needs an observation of each
            missing = np.flatnonzero(~rows_mask).tolist()
            raise ValueError(f"the first reset must reset every env (envs {missing} were not)")
        given: list[Start] | None = None
        if options:
            ((key, value),) = options.items()
            per_env = isinstance(value, (list, tuple, np.ndarray))
            if per_env and len(value) != N:
                raise ValueError(
                    f"options[{key!r}] has {len(value)} values; give one per env ({N}) or one "
                    "value for all"
                )
            given = [
                choose_start(self.variant, {key: value[i] if per_env else value}, None)
                for i in rows.tolist()
            ]
        if seed is not None:
            self._np_random, self._np_random_seed = seeding.np_random(seed_all)
        for i in rows.tolist():
            if seeds[i] is not None:
                self._rngs[i] = seeding.np_random(seeds[i])[0]
        starts = given if given is not None else [self._new_deal(i) for i in rows.tolist()]
        start_games(self._engine, rows, starts)
        for i, start in zip(rows.tolist(), starts):
            self._deal_names[i], self._deal_numbers[i] = start.deal_name, start.deal_number
        self._last_actions[rows] = -1
        self._n_ended = int(self._engine.ended.sum())
        self._started = True
        return self._observations(), self._make_info(rows_mask)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._started:
            raise RuntimeError("step() called before reset(): call envs.reset() first")
        a = self._check_actions(actions)
        engine = self._engine
        resetting = engine.ended.copy() if self._n_ended else None  # next-step autoreset
        if resetting is not None and self.autoreset_mode == AutoresetMode.DISABLED:
            raise RuntimeError(
                f"envs {np.flatnonzero(resetting).tolist()} have ended and autoreset is "
                "disabled: reset them with reset(options={'reset_mask': mask}) first"
            )
        if self.autoreset_mode != AutoresetMode.NEXT_STEP:
            resetting = None
        if resetting is not None or self._raise_illegal:
            # What refuses the step is checked before any game moves or any deal number is
            # drawn (otherwise the engine checks ranges itself); actions of restarting games
            # are ignored.
            restarting = resetting if resetting is not None else np.zeros(self.num_envs, bool)
            bad = np.flatnonzero(((a < 0) | (a >= self.n_actions)) & ~restarting)
            if len(bad):
                self._out_of_range(a, int(bad[0]))
            if self._raise_illegal:
                self._raise_if_illegal(a, restarting)
        resets = self._no_reset
        if resetting is not None:
            resets = self._no_reset.copy()
            for i in np.flatnonzero(resetting).tolist():
                resets[i] = self._new_deal(i).deal_number
        dead = engine.counters[:, LEGAL_COUNT] == 0 if self.render_mode is not None else None
        # with copy=True the masks handed out are new arrays, which a large batch makes from the
        # legal ids: its engine need not keep its own (unless raise_illegal reads them)
        keep_masks = not (self.copy and self._fresh_masks) or self._raise_illegal
        try:
            n_ended = engine.step(a, resets, self._max_steps, keep_masks)
        except ColumnOverflowError as exc:
            raise RuntimeError(f"env {exc.game}: {exc}") from None
        if n_ended < 0:
            self._out_of_range(a, -1 - n_ended)
        self._n_ended = n_ended
        if dead is not None:  # what render() shows: no last action for a new or dead game
            np.copyto(self._last_actions, np.where((resets >= 0) | dead, -1, a))
            np.copyto(self._last_refused, engine.illegal)
        mask = engine.fresh_masks() if self.copy else None  # one new array, info's and obs's
        info = self._make_info(self._all_true, mask)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and n_ended:
            rewards, terminated, truncated = (
                engine.rewards.copy(), engine.terminated.copy(), engine.truncated.copy(),
            )  # fmt: skip
            self._same_step_reset(info)
            mask = None  # games were reset: the masks after that
        else:
            rewards = self._out(engine.rewards)
            terminated = self._out(engine.terminated)
            truncated = self._out(engine.truncated)
        return self._observations(mask=mask), rewards, terminated, truncated, info

    def render(self) -> tuple[Any, ...] | None:
        if self.render_mode is None:
            gym.logger.warn(
                "You are calling render() without a render_mode; pass 'ansi' or 'rgb_array'."
            )
            return None
        v, p = self.variant, self._proto
        frames: list[Any] = []
        for i, st in enumerate(self.states()):
            a = int(self._last_actions[i])
            last = None if a < 0 else last_action_text(v, st, a, bool(self._last_refused[i]))
            if self.render_mode == "rgb_array":
                frames.append(render_image(st, last_action=last))
            else:
                frames.append(render_text(st, ascii=p.ascii, color=p.color, last_action=last))
        return tuple(frames)

    # --- internals ---------------------------------------------------------------------------
    def _new_deal(self, i: int) -> Start:
        """Game ``i``'s next game, drawn from its generator (any of ``[0, 2**32)`` as
        ``SpiderEnv.reset`` draws, or one of ``deal_numbers`` as ``DealRange(env,
        deal_numbers)`` draws), and named."""
        pool = self.deal_numbers
        if pool is None:
            n = int(self._rngs[i].integers(0, DEAL_NUMBER_RANGE))
        else:
            n = int(pool[int(self._rngs[i].integers(0, len(pool)))])
        self._deal_names[i], self._deal_numbers[i] = deal_name(self.variant, n), n
        return Start(None, self._deal_names[i], n)

    def _make_info(self, given: np.ndarray, mask: np.ndarray | None = None) -> dict[str, Any]:
        """``SyncVectorEnv``'s layout of the env's info, for the games in ``given``
        (``self._all_true``: every game). With ``copy=False`` and every game given, the arrays
        are views of the engine's buffers (like its observations: overwritten by the next
        call). ``mask``: the masks as a new array, if made already."""
        engine = self._engine
        every = given is self._all_true or bool(given.all())
        fresh = self.copy or not every
        counters = engine.counters.T.copy() if fresh else engine.counters.T
        n_legal, deals, score, moves, runs = counters
        values: dict[str, np.ndarray] = make_info(
            (engine.fresh_masks() if mask is None else mask) if fresh else engine.masks,
            score, moves, runs, deals,
            runs >= self.variant.runs_to_win, n_legal,
            engine.illegal.copy() if fresh else engine.illegal,
            self._variant_info.copy() if fresh else self._variant_info,
        )  # fmt: skip
        if not every:
            for arr in values.values():
                arr[~given] = None if arr.dtype == object else 0
            flags = np.empty((len(values), self.num_envs), dtype=bool)
            flags[:] = given
        else:
            flags = self._given_all.copy() if fresh else self._given_all
        out: dict[str, Any] = {}
        for key, flag_key, arr, flag in zip(values, self._flag_keys, values.values(), flags):
            out[key] = arr
            out[flag_key] = flag
        return out

    def _same_step_reset(self, info: dict[str, Any]) -> None:
        """Reset the games that just ended (same-step autoreset), keeping their last
        observation and info in ``info["final_obs"]`` / ``info["final_info"]``."""
        engine = self._engine
        ended = engine.ended.copy()
        rows = np.flatnonzero(ended)
        batch = self._observations(copy=True)
        final_obs = np.full(self.num_envs, None, dtype=object)
        final_info: dict[str, Any] = {}
        for key, value in info.items():
            if key.startswith("_"):
                continue
            value = value.copy()
            value[~ended] = None if value.dtype == object else 0
            final_info[key], final_info["_" + key] = value, ended.copy()
        for i in rows.tolist():
            final_obs[i] = _row(batch, i)
        start_games(engine, rows, [self._new_deal(i) for i in rows.tolist()])
        self._last_actions[rows] = -1
        new_info = self._make_info(self._all_true)
        for key in list(new_info):
            if not key.startswith("_"):
                info[key] = new_info[key]
        self._n_ended = 0
        info["final_obs"], info["_final_obs"] = final_obs, ended.copy()
        info["final_info"], info["_final_info"] = final_info, ended.copy()

    def _out(self, arr: np.ndarray) -> np.ndarray:
        return arr.copy() if self.copy else arr

    def _seeds(self, seed: Any) -> tuple[int | None, list[int | None]]:
        """``reset``'s ``seed`` checked: ``None``, an int ``s`` (game ``i`` gets ``s + i``) or a
        list, tuple or 1-D array of ``num_envs`` ints and ``None``s (one per game). Returns the
        seed of ``np_random`` (``s``, or ``None``: random) and each game's seed; a
        ``TypeError`` / ``ValueError`` names what is wrong."""
        N = self.num_envs
        if isinstance(seed, np.ndarray) and seed.ndim != 1:
            raise ValueError(f"a seed array must be 1-D (one seed per env), got shape {seed.shape}")
        if isinstance(seed, (list, tuple, np.ndarray)):
            if len(seed) != N:
                raise ValueError(f"give one seed per env ({N}), got {len(seed)}")
            return None, [check_seed(s, f"seed[{i}]") for i, s in enumerate(seed)]
        one = check_seed(seed, expected=f"an int, None, or a list of {N} seeds (one per env)")
        return one, [None if one is None else one + i for i in range(N)]

    def _check_fits(self, game_bytes: int) -> None:
        """A ``ValueError`` when the engine's buffers for ``num_envs`` games (``game_bytes``
        each, a lower bound of what a game takes) exceed :func:`available_memory`."""
        need, free = self.num_envs * game_bytes, available_memory()
        if free is not None and need > free:
            raise ValueError(
                f"num_envs={self.num_envs} does not fit in memory: the engine's buffers alone "
                f"need {_size(need)} ({game_bytes:,} bytes per game of {self.variant.name}, "
                f"obs_mode={self._proto.obs_mode!r}, {self.backend} engine), more than the "
                f"{_size(free)} available"
            )

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
        masks = self._engine.masks
        legal = masks[np.arange(self.num_envs), np.where(resetting, 0, a)]
        dead = ~masks.any(axis=1)  # a game dealt with no legal action ends, it does not raise
        ok = legal | resetting | dead
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise IllegalMoveError(
                f"env {i}: illegal action {int(a[i])} ({describe(self.variant, int(a[i]))}): "
                f"{explain_illegal(self._engine.state(i), int(a[i]))}"
            )

    def _observations(self, copy: bool | None = None, mask: np.ndarray | None = None) -> Any:
        """The batch's observation; ``mask``: the masks, if made already (as a new array)."""
        engine = self._engine
        if not self._mask_in_obs:
            mask = None
        elif mask is None:
            mask = engine.masks
        return assemble_observation(
            engine.obs, engine.counters[:, DEALS_LEFT], mask, self.copy if copy is None else copy
        )


def _autoreset_mode(value: object) -> AutoresetMode:
    """``value`` as an :class:`AutoresetMode` (the mode or its name); ``ValueError`` naming the
    modes otherwise."""
    try:
        return AutoresetMode(value)
    except ValueError:
        raise ValueError(
            f"autoreset_mode must be one of {[m.value for m in AUTORESET_MODES]}, got {value!r}"
        ) from None


def _vector_deals(deal_numbers: Sequence[int] | range | None) -> Sequence[int] | range | None:
    """``deal_numbers`` as :func:`~spider_env.wrappers.deal_sequence` checks them, each below
    2**63 (the engine keeps deal numbers as ``int64``)."""
    if deal_numbers is None:
        return None
    deals = deal_sequence(deal_numbers)
    top = deals[-1] if isinstance(deals, range) else None
    high = max(deals) if top is None else max(top, deals[0])
    if high >= 2**63:
        raise ValueError(f"deal_numbers of a vector env must be below 2**63, got {high}")
    return deals


def _size(n: int) -> str:
    return f"{n / 2**30:,.1f} GiB" if n >= 2**30 else f"{n / 2**20:,.1f} MiB"


def _row(obs: Any, i: int) -> Any:
    if isinstance(obs, dict):
        return {k: v[i].copy() for k, v in obs.items()}
    return obs[i].copy()


def make_vector_env(num_envs: int = 1, **kwargs: Any) -> SpiderVectorEnv:
    """The ``vector_entry_point`` of every registered id (``gymnasium.make_vec``)."""
    return SpiderVectorEnv(num_envs, **kwargs)


__all__ = ["AUTORESET_MODES", "SpiderVectorEnv", "make_vector_env"]
