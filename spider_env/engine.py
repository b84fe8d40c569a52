"""The engines: ``N`` games of one variant behind one interface, :class:`Engine`.

:class:`SpiderEnv <spider_env.env.SpiderEnv>` runs one engine with ``N = 1`` and
:class:`SpiderVectorEnv <spider_env.vector.SpiderVectorEnv>` one with ``N = num_envs``; both
choose it once (:func:`choose_backend`, :func:`make_engine`). Two implementations:

* :class:`PureEngine`: the rules core (``State`` objects; legality from
  :func:`spider_env.core.rules.legal_actions` only) and the pure encoders of
  :mod:`spider_env.observation` (for ``obs_mode="actions"``,
  :class:`~spider_env.observation.actions.ActionFeatureEncoder` over the ``dict`` observation,
  once per decision): the specification;
* :class:`CompiledEngine`: the compiled core (:mod:`spider_env.fast`, numba), all ``N`` games
  in one call, held to the pure engine by the differential tests.

A *decision* is an observation an env returns: at a game's start, after each step of it, and
after a refused action. In ``obs_mode="actions"`` each one is counted by the game's episode
memory (positions met, decisions, decisions since progress), forgotten when the game starts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any, NamedTuple

import numpy as np

from spider_env.core.deals import SplitMix64, generate_deal
from spider_env.core.rules import apply_legal, legal_actions
from spider_env.core.state import State
from spider_env.core.variants import Variant
from spider_env.fast import available as fast_available
from spider_env.fast import load_kernel, refusal, warn_unavailable
from spider_env.fast.buffers import Batch, StepConfig
from spider_env.fast.layout import P_SIZE, STATE_DTYPE, from_array, params, to_array
from spider_env.heuristics import PositionScorer
from spider_env.observation import (
    ColumnOverflowError,
    FeatureEncoder,
    ObservationBuffers,
    TableEncoder,
    assemble_observation,
    card_slot_width,
    feature_width,
    globals_width,
)
from spider_env.observation.actions import ActionFeatureEncoder
from spider_env.observation.spaces import (
    DEFAULT_ACTION_ROWS,
    N_ACTION_FEATURES,
    N_COLUMN_SCALARS,
    N_GLOBAL_FEATURES,
    N_GLOBAL_SCALARS,
    face_down_scale,
)
from spider_env.rewards import RewardFn, kernel_reward

BACKENDS = ("auto", "compiled", "pure")

#: The columns of :attr:`Engine.counters`, in order (what ``info`` reports of a position).
COUNTERS = ("legal_action_count", "deals_left", "score", "moves", "completed_runs")
LEGAL_COUNT, DEALS_LEFT, SCORE, MOVES, COMPLETED_RUNS = range(len(COUNTERS))


def choose_backend(backend: str, variant: Variant, reward_fn: object) -> str:
    """``"compiled"`` or ``"pure"``: the engine an env with these arguments runs on.

    ``"auto"`` takes the compiled core where it plays the variant (no undo) and the reward is a
    built-in one, else the pure engine (with a one-line warning if only numba is missing);
    ``"compiled"`` is a ``ValueError`` naming the reason where it cannot be used.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "pure":
        return "pure"
    why = refusal(variant)
    if why is None and kernel_reward(reward_fn) is None:
        why = (
            f"the reward {reward_fn!r} is not one of the built-in reward classes (custom rewards "
            "need State objects)"
        )
    if why is None:
        return "compiled"
    if backend == "compiled":
        raise ValueError(f"backend='compiled' is not possible: {why}")
    if not fast_available():
        warn_unavailable()
    return "pure"


def compiled_feature_layout(variant: Variant, slots: int) -> np.ndarray:
    """The layout vector the compiled encoder reads
    (:func:`spider_env.fast.observe.feature_layout`), filled with the sizes
    :mod:`spider_env.observation` computes (the compiled core computes none of them). Needs
    numba."""
    from spider_env.fast.observe import feature_layout  # a compiled module

    return feature_layout(
        F=feature_width(variant, slots), slot_width=card_slot_width(variant),
        G=globals_width(variant), slots=slots, down_scale=face_down_scale(variant),
        slot0=N_COLUMN_SCALARS, tops0=N_GLOBAL_SCALARS,
    )  # fmt: skip


def compiled_scorer(variant: Variant) -> np.ndarray:
    """The scorer vector the compiled per-action features read
    (:func:`spider_env.fast.scorer.scorer_vector`), made from the ``PositionScorer`` the pure
    encoder uses (its weights and switches keep their one home). Needs numba."""
    from spider_env.fast.scorer import scorer_vector  # a compiled module

    scorer = PositionScorer(variant)
    return scorer_vector(asdict(scorer.w), scorer.any_suit, scorer.open)


def visit_capacity(episode_steps: int | None) -> int:
    """Slots of a game's table of visited positions: a power of 2 at least twice the positions
    an episode of ``episode_steps`` steps can meet (``steps + 1``), at least 64; 1024 without a
    limit (the tables then grow, doubling, before they are half full)."""
    if episode_steps is None:
        return 1024
    return max(64, 1 << (2 * (int(episode_steps) + 1) - 1).bit_length())


class GameView(NamedTuple):
    """One game's rows of an engine's buffers (views: they follow every operation)."""

    mask: np.ndarray  # (A,) bool
    counters: np.ndarray  # (5,) int64, COUNTERS
    obs: ObservationBuffers  # one game's observation buffers


class Engine(ABC):
    """``n`` games of one variant: their states, masks, observations, counters and rewards.

    Buffers (arrays over the games, written in place by every operation; read them, do not
    write them):

    * :attr:`masks` ``(n, A)`` bool: row ``i`` True exactly for the legal actions of game ``i``
      (``rules.legal_actions`` of :meth:`state`; all False only when the game is over);
    * :attr:`counters` ``(n, 5)`` int64: :data:`COUNTERS` of each game's position
      (``legal_action_count, deals_left, score, moves, completed_runs``);
    * :attr:`obs`: the :class:`~spider_env.observation.ObservationBuffers` of ``obs_mode``
      (``"actions"``: ``action_rows`` rows per game; ``episode_steps``, the step limit if any,
      only sizes the episode memory);
    * what the last :meth:`step` did to each game: :attr:`rewards` (float64),
      :attr:`terminated`, :attr:`truncated`, :attr:`ended` (``terminated | truncated``),
      :attr:`illegal` (the action was refused) and :attr:`elapsed` (steps since the game
      started), the ``SpiderVectorEnv`` semantics.

    Operations: start games from deal numbers of the generator (:meth:`start_deals`) or from
    given positions (:meth:`start_states`); play one legal action of one game (:meth:`play`, the
    single env's step); step every game (:meth:`step`, the vector env's step: next-step
    autoreset, step limit, illegal actions refused); a game's ``State`` (:meth:`state`); a
    random legal action per game (:meth:`sample_legal`). Legality, rewards and observations of
    the two engines are identical game by game (``tests/test_engine.py``). The illegal-action
    policy ``"raise"`` and the deal names belong to the envs; an engine refuses (penalty
    ``illegal_reward``, terminating when ``terminate_illegal``).
    """

    #: Attributes derived from the others (views, caches, bound functions): not pickled,
    #: rebuilt by :meth:`_bind`.
    _DERIVED: tuple[str, ...] = ("_games",)

    def __init__(
        self,
        variant: Variant,
        n: int,
        *,
        obs_mode: str,
        feature_slots: int,
        reward_fn: RewardFn,
        illegal_reward: float,
        terminate_illegal: bool,
        action_rows: int = DEFAULT_ACTION_ROWS,
        episode_steps: int | None = None,
    ) -> None:
        self.variant = variant
        self.n = int(n)
        self.n_actions = A = variant.n_actions
        self.obs_mode = obs_mode
        self.feature_slots = feature_slots
        self.action_rows = int(action_rows)
        self.episode_steps = episode_steps
        self.reward_fn = reward_fn
        self.illegal_reward = float(illegal_reward)
        self.terminate_illegal = bool(terminate_illegal)
        N = self.n
        self._masks = np.zeros((N, A), dtype=bool)
        self.counters = np.zeros((N, len(COUNTERS)), dtype=np.int64)
        self.obs = ObservationBuffers(variant, obs_mode, feature_slots, N, self.action_rows)
        self.rewards = np.zeros(N, dtype=np.float64)
        self.terminated = np.zeros(N, dtype=bool)
        self.truncated = np.zeros(N, dtype=bool)
        self.ended = np.zeros(N, dtype=bool)
        self.illegal = np.zeros(N, dtype=bool)
        self.elapsed = np.zeros(N, dtype=np.int64)

    def _bind(self) -> None:
        """(Re)build the derived attributes (after ``__init__`` and unpickling)."""
        self._games: dict[int, GameView] = {}

    @property
    def masks(self) -> np.ndarray:
        """``(n, A)`` bool: row ``i`` True exactly for game ``i``'s legal actions (the buffer
        itself: do not write it)."""
        return self._masks

    def fresh_masks(self) -> np.ndarray:
        """:attr:`masks` as a new array (the caller's to keep)."""
        return self.masks.copy()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in self._DERIVED:
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bind()

    @property
    def nbytes(self) -> int:
        """Bytes of the engine's arrays: its buffers and constants (views are not counted)."""
        arrays = [*vars(self).values(), *vars(self.obs).values()]
        return sum(a.nbytes for a in arrays if isinstance(a, np.ndarray) and a.base is None)

    def game(self, i: int) -> GameView:
        """Game ``i``'s mask, counters and observation buffers (views, made once)."""
        view = self._games.get(i)
        if view is None:
            view = self._games[i] = GameView(self.masks[i], self.counters[i], self.obs.row(i))
        return view

    def _restarted(self, rows: np.ndarray) -> None:
        """The step outputs of games that start anew."""
        self.rewards[rows] = 0.0
        self.elapsed[rows] = 0
        for flags in (self.terminated, self.truncated, self.ended, self.illegal):
            flags[rows] = False

    @abstractmethod
    def start_deals(self, rows: np.ndarray, deal_numbers: Sequence[int] | np.ndarray) -> None:
        """Game ``rows[r]`` starts deal ``deal_numbers[r]`` of the generator
        (``core.deals.generate_deal``; numbers in ``[0, 2**64)``)."""

    @abstractmethod
    def start_states(self, rows: np.ndarray, states: Sequence[State]) -> None:
        """Game ``rows[r]`` starts from position ``states[r]`` (a ``State`` of the variant whose
        columns fit the observation: the env checks)."""

    @abstractmethod
    def play(self, i: int, action: int) -> float:
        """Play ``action``, legal in game ``i`` (``masks[i, action]``: unchecked), and return
        its reward. Updates the game's mask, counters and observation (not the step outputs).
        :class:`~spider_env.observation.ColumnOverflowError` (``game=i``, after the move) when
        the table observation cannot hold a column."""

    @abstractmethod
    def step(
        self, actions: np.ndarray, resets: np.ndarray, max_steps: int, keep_masks: bool = True
    ) -> int:
        """Step every game ``i`` (``actions``, ``resets``: int64 ``(n,)``):

        * ``resets[i] >= 0``: start deal ``resets[i]`` instead (reward 0, not terminated, not
          truncated, ``elapsed`` 0);
        * a game with no legal action (only a game dealt that way) ends: reward 0, terminated,
          unchanged;
        * else play ``actions[i]`` if legal, or refuse it (unchanged, reward ``illegal_reward``,
          ``illegal``, terminated when ``terminate_illegal``);

        then ``truncated`` when ``max_steps > 0`` and ``elapsed >= max_steps`` (not for a game
        just started). Returns how many games ended, or ``-1 - i`` (nothing changed) when game
        ``i``'s action is out of range (actions of games being started are ignored).
        :class:`~spider_env.observation.ColumnOverflowError` (``game`` = the first such game)
        after the step when a table observation cannot hold a column.

        ``keep_masks=False`` tells the engine that the caller reads the masks of this step
        through :meth:`fresh_masks` (a new array) only: the compiled engine then skips
        updating its :attr:`masks` buffer, and rebuilds it from the legal ids when
        :attr:`masks` is next read (views of it taken before, :meth:`game`, are stale until
        then). :attr:`masks` and :meth:`fresh_masks` are exact either way."""

    @abstractmethod
    def decide_again(self, i: int) -> None:
        """Game ``i`` returns its unchanged position once more (the single env refused an
        action): with ``obs_mode="actions"`` that is a decision its observation counts; nothing
        to do in the other modes."""

    @abstractmethod
    def state(self, i: int) -> State:
        """Game ``i``'s full position (hidden cards included: for tools, not agents)."""

    def sample_legal(self, seed: int) -> np.ndarray:
        """A uniformly random legal action per game (int64 ``(n,)``; ``-1`` where a game has
        none): SplitMix64 seeded with ``seed`` (``[0, 2**64)``), one draw per game with a legal
        action, ``legal[draw % count]`` of its sorted legal ids. Both engines draw alike."""
        gen = SplitMix64(int(seed))
        out = np.full(self.n, -1, dtype=np.int64)
        for i, mask in enumerate(self.masks):
            legal = np.flatnonzero(mask)
            if len(legal):
                out[i] = legal[gen.next64() % len(legal)]
        return out


# --- the pure engine ------------------------------------------------------------------------------


class PureEngine(Engine):
    """The rules core and the pure encoders, one game after the other: the specification."""

    _DERIVED = (*Engine._DERIVED, "_encoders", "_mask_bytes", "_table_rows")

    def __init__(self, variant: Variant, n: int, **settings: Any) -> None:
        super().__init__(variant, n, **settings)
        self._states: list[State | None] = [None] * self.n
        self._no_mask = bytes(self.n_actions)
        self._actions = self.obs_mode == "actions"
        # obs_mode="actions": each game's dict observation (the encoder's input) and encoder,
        # whose memory is the game's episode memory (pickled with the engine)
        self._tables = ObservationBuffers(variant, "dict", n=self.n) if self._actions else None
        self._action_encoders = (
            [ActionFeatureEncoder(variant, self.action_rows) for _ in range(self.n)]
            if self._actions
            else []
        )
        self._bind()

    def _bind(self) -> None:
        super()._bind()
        tables = self._tables if self._tables is not None else self.obs
        rows = [tables.row(i) for i in range(self.n)]
        v, slots = self.variant, self.feature_slots
        self._table_rows = rows
        self._encoders: list[TableEncoder | FeatureEncoder] = [
            TableEncoder(v, out=r) if tables.obs_mode == "dict" else FeatureEncoder(v, slots, out=r)
            for r in rows
        ]  # new encoders rewrite every column at their first write
        self._mask_bytes = [m.view(np.uint8).data for m in self.masks]

    def _record(self, i: int, state: State, fresh: bool = False) -> bool:
        """Game ``i`` is at ``state``: its mask, counters, observation. False when the table
        observation cannot hold a column (everything else is written)."""
        self._states[i] = state
        legal = legal_actions(state)
        mask = self._mask_bytes[i]
        mask[:] = self._no_mask
        for a in legal:
            mask[a] = 1
        self.counters[i] = (
            len(legal), state.deals_left, state.score, state.moves, state.completed_runs,
        )  # fmt: skip
        try:
            self._encoders[i].write(state, fresh)
        except ColumnOverflowError:
            return False
        if self._actions:
            self._decide(i, fresh)
        return True

    def _decide(self, i: int, fresh: bool = False) -> None:
        """``obs_mode="actions"``: one decision of game ``i``, by the pure encoder from the
        game's ``dict`` observation and mask (``fresh``: its episode memory is forgotten
        first)."""
        encoder = self._action_encoders[i]
        if fresh:
            encoder.reset()
        table = assemble_observation(
            self._table_rows[i], int(self.counters[i, DEALS_LEFT]), copy=False
        )
        out = encoder.encode(table, self.masks[i])
        o = self.obs
        o.actions[i] = out["actions"]
        o.action_ids[i] = out["action_ids"]
        o.action_globals[i] = out["globals"]

    def decide_again(self, i: int) -> None:
        if self._actions:
            self._decide(i)

    def _start(self, rows: np.ndarray, states: Sequence[State]) -> None:
        rows = np.asarray(rows, dtype=np.int64)
        for i, state in zip(rows.tolist(), states):
            if not self._record(i, state, fresh=True):
                raise ColumnOverflowError.of(state, i)
        self._restarted(rows)

    def start_deals(self, rows: np.ndarray, deal_numbers: Sequence[int] | np.ndarray) -> None:
        v = self.variant
        self._start(rows, [State.from_deal(generate_deal(v, int(d))) for d in deal_numbers])

    def start_states(self, rows: np.ndarray, states: Sequence[State]) -> None:
        self._start(rows, states)

    def state(self, i: int) -> State:
        state = self._states[i]
        if state is None:
            raise RuntimeError(f"game {i} has not started")
        return state

    def play(self, i: int, action: int) -> float:
        before = self._states[i]
        assert before is not None, "play() in a game that has not started"
        after = apply_legal(before, action)  # the mask is legal_actions(before)
        reward = self.reward_fn(before, action, after)
        if not self._record(i, after):
            raise ColumnOverflowError.of(after, i)
        return reward

    def step(
        self, actions: np.ndarray, resets: np.ndarray, max_steps: int, keep_masks: bool = True
    ) -> int:
        """(Its masks are always kept: ``keep_masks`` changes nothing here.)"""
        A = self.n_actions
        acts, starts = actions.tolist(), resets.tolist()
        for i, (a, d) in enumerate(zip(acts, starts)):
            if d < 0 and not 0 <= a < A:
                return -1 - i
        v = self.variant
        rewards, terminated, illegal = [0.0] * self.n, [False] * self.n, [False] * self.n
        elapsed = self.elapsed.tolist()
        n_legal = self.counters[:, LEGAL_COUNT].tolist()
        overflow = None
        for i, (a, d) in enumerate(zip(acts, starts)):
            if d >= 0:
                self._record(i, State.from_deal(generate_deal(v, d)), fresh=True)
                elapsed[i] = 0
                continue
            elapsed[i] += 1
            if n_legal[i] == 0 or not self.masks[i, a]:
                if n_legal[i] == 0:  # dealt with no legal action: the game ends here
                    terminated[i] = True
                else:
                    illegal[i] = True
                    rewards[i] = self.illegal_reward
                    terminated[i] = self.terminate_illegal
                if self._actions:  # the same position, a new decision
                    self._decide(i)
            else:
                before = self.state(i)
                after = apply_legal(before, a)
                rewards[i] = float(self.reward_fn(before, a, after))
                if not self._record(i, after) and overflow is None:
                    overflow = i
                terminated[i] = self.counters[i, LEGAL_COUNT] == 0
        self.rewards[:] = rewards
        self.terminated[:] = terminated
        self.illegal[:] = illegal
        self.elapsed[:] = elapsed
        started = resets >= 0
        if max_steps > 0:
            np.greater_equal(self.elapsed, max_steps, out=self.truncated)
            self.truncated[started] = False
        else:
            self.truncated[:] = False
        np.logical_or(self.terminated, self.truncated, out=self.ended)
        if overflow is not None:
            raise ColumnOverflowError.of(self.state(overflow), overflow)
        return int(self.ended.sum())


# --- the compiled engine --------------------------------------------------------------------------

#: A batch of at least ``PREFETCH_FROM`` games is stepped with cache hints ``PREFETCH_AHEAD``
#: games ahead (``fast.step._prefetch_game``); a smaller batch stays in the cache, where the
#: hints only cost instructions. Measured: the env's speed record (``research/env``), "Cache hints
#: for large batches" (``python benchmarks/bench_fast.py --sections hints``).
PREFETCH_FROM = 1024
PREFETCH_AHEAD = 8


class CompiledEngine(Engine):
    """The compiled core: every game's state is an ``int32`` vector (:mod:`spider_env.fast.layout`),
    every operation one compiled call; ``State`` objects are made only when asked for."""

    # ``_pr``: the variant's one read-only parameter vector, never a copy (a writable copy has a
    # numba signature of its own: every compiled function would be compiled again)
    _DERIVED = (
        *Engine._DERIVED, "_pr", "_k", "_tab", "_batch_fields", "_config_fields", "_play_args",
        "_step_one", "_scratch_fields", "_one_row", "_fill_masks",
    )  # fmt: skip

    def __init__(self, variant: Variant, n: int, **settings: Any) -> None:
        super().__init__(variant, n, **settings)
        reward = kernel_reward(self.reward_fn)
        if reward is None:
            raise ValueError(f"the compiled core cannot compute the reward {self.reward_fn!r}")
        v = self.variant
        self._pr = params(v)
        self._states = np.full((self.n, int(self._pr[P_SIZE])), -1, dtype=STATE_DTYPE)
        self._legal = np.zeros((self.n, self.n_actions + 1), dtype=np.int32)
        self._stale = False  # whether steps left the masks buffer behind (keep_masks=False)
        self._keys = np.zeros(64, dtype=np.int64)
        self._rmode = reward[0]
        self._rw = np.array((self.illegal_reward, *reward[1]), dtype=np.float64)
        self._obs_kind = {"dict": 0, "actions": 2}.get(self.obs_mode, 1)
        self._flay = compiled_feature_layout(v, self.feature_slots)
        self._cache: dict[int, State] = {}  # the States asked for, until their game changes
        self._actions = self.obs_mode == "actions"
        if self._actions:
            from spider_env.fast import action_features as af  # a compiled module

            if (af.N_ACTION_FEATURES, af.N_GLOBAL_FEATURES) != (
                N_ACTION_FEATURES,
                N_GLOBAL_FEATURES,
            ):
                raise AssertionError("the compiled per-action features have other sizes")
            self._w = compiled_scorer(v)
            # each game's episode memory (af.Memory)
            self._memory = af.new_memory(self.n, visit_capacity(self.episode_steps))
            self._all_rows = np.arange(self.n, dtype=np.int64)
            self._fresh_rows = np.zeros(self.n, dtype=np.int64)
        self._bind()

    def _bind(self) -> None:
        super()._bind()
        self._pr = params(self.variant)
        self._k = load_kernel()
        self._tab = self.obs.table.reshape(self.n, -1)  # the kernel writes a table as one row
        o = self.obs
        self._batch_fields = tuple(Batch(
            states=self._states, masks=self._masks, legal=self._legal, tab=self._tab,
            comp=o.completed, tops=o.pile_tops, feat=o.features, info=self.counters,
            rewards=self.rewards, terminated=self.terminated, truncated=self.truncated,
            ended=self.ended, elapsed=self.elapsed, illegal=self.illegal,
        ))  # fmt: skip
        self._config_fields = tuple(StepConfig(
            keys=self._keys, mode=self._rmode, w=self._rw,
            terminate_illegal=self.terminate_illegal, obs_kind=self._obs_kind, flay=self._flay,
            prefetch=PREFETCH_AHEAD if self.n >= PREFETCH_FROM else 0,
        ))  # fmt: skip
        self._play_args: dict[
            int, tuple[Callable[..., float], tuple[Any, ...], tuple[Any, ...]]
        ] = {}
        self._step_one: Callable[..., float] | None = None  # step_one bound to their types
        self._fill_masks: Callable[..., None] | None = None  # masks_from_legal, bound alike
        if self._actions:
            from spider_env.fast.action_features import new_scratch  # a compiled module

            self._scratch_fields = tuple(new_scratch(self._pr))  # encode_rows' argument
            self._one_row = (np.zeros(1, dtype=np.int64), np.full(1, -1, dtype=np.int64))

    def _decide(self, rows: np.ndarray, fresh: np.ndarray) -> int:
        """``obs_mode="actions"``: one decision of each game ``rows[r]``, all in one compiled
        call (``fresh[r] >= 0``: the game starts, its memory is forgotten first); returns -1
        or the first game whose column the table observation could not hold."""
        memory = self._memory
        capacity = memory.vcounts.shape[1]
        if 2 * (int(memory.vused.max()) + 1) > capacity:  # keep every table at most half full
            bigger = self._k.grow_tables  # (compiled) rehash into tables twice the size
            from spider_env.fast.action_features import new_memory

            larger = new_memory(self.n, 2 * capacity)
            bigger(memory.vkeys, memory.vcounts, larger.vkeys, larger.vcounts)
            self._memory = memory._replace(vkeys=larger.vkeys, vcounts=larger.vcounts)
        o = self.obs
        overflow: int = self._k.encode_rows(
            self._pr, self._w, self._states, self._legal, rows, fresh, o.actions,
            o.action_ids, o.action_globals, tuple(self._memory), self._scratch_fields,
        )  # fmt: skip
        return overflow

    def _observe(self, rows: np.ndarray) -> None:
        self._cache.clear()
        overflow = self._k.observe_rows(self._pr, self._batch_fields, self._config_fields, rows)
        if self._actions:
            overflow = self._decide(rows, self._fresh_rows[: len(rows)])
        self._restarted(rows)
        if overflow >= 0:
            raise ColumnOverflowError.of(self.state(overflow), overflow)

    def start_deals(self, rows: np.ndarray, deal_numbers: Sequence[int] | np.ndarray) -> None:
        rows = np.asarray(rows, dtype=np.int64)
        deals = np.array([int(d) for d in deal_numbers], dtype=np.uint64)
        self._k.reset_rows(self._pr, self._states, rows, deals)
        self._observe(rows)

    def start_states(self, rows: np.ndarray, states: Sequence[State]) -> None:
        rows = np.asarray(rows, dtype=np.int64)
        for i, state in zip(rows.tolist(), states):
            to_array(state, out=self._states[i])
        self._observe(rows)
        for i, state in zip(rows.tolist(), states):
            self._cache[i] = state  # the State given is the State asked for

    def state(self, i: int) -> State:
        state = self._cache.get(i)
        if state is None:
            state = self._cache[i] = from_array(self.variant, self._states[i])
        return state

    def _args(self, i: int) -> tuple[Callable[..., float], tuple[Any, ...], tuple[Any, ...]]:
        """``step_one`` and its arguments for game ``i`` around the action: (step_one, before,
        after)."""
        o = self.obs
        before = (self._pr, self._states[i])
        after = (
            self.masks[i], self._legal[i], self._keys, self._rmode, self._rw, self._obs_kind,
            self._flay, self._tab[i], o.completed[i], o.pile_tops[i], o.features[i],
            self.counters[i],
        )  # fmt: skip
        if self._step_one is None:  # the buffers keep their types: no dispatch per call
            from spider_env.fast.jit import exact_call  # a compiled module

            self._step_one = exact_call(self._k.step_one, *before, 0, *after)
        call = self._play_args[i] = (self._step_one, before, after)
        return call

    def play(self, i: int, action: int) -> float:
        self._sync_masks()  # the move updates its row in place
        step_one, before, after = self._play_args.get(i) or self._args(i)
        self._cache.pop(i, None)
        reward: float = step_one(*before, action, *after)
        if after[-1][DEALS_LEFT] < 0 or (self._actions and self.decide_overflows(i)):
            raise ColumnOverflowError.of(self.state(i), i)
        return reward

    def decide_overflows(self, i: int) -> bool:
        """One decision of game ``i`` (``obs_mode="actions"``); whether a column overflowed."""
        rows, fresh = self._one_row
        rows[0] = i
        return self._decide(rows, fresh) >= 0

    def decide_again(self, i: int) -> None:
        if self._actions and self.decide_overflows(i):
            raise ColumnOverflowError.of(self.state(i), i)

    def _masks_from_legal(self, out: np.ndarray) -> None:
        """Set ``out`` (all False, of the masks' shape) at every game's legal ids."""
        fill = self._fill_masks
        if fill is None:  # bound once, without numba's dispatch per call (small batches)
            from spider_env.fast.jit import exact_call  # a compiled module

            fill = self._fill_masks = exact_call(self._k.masks_from_legal, self._legal, out)
        fill(self._legal, out)

    def _sync_masks(self) -> None:
        """The masks buffer rebuilt from the legal ids if steps left it behind."""
        if self._stale:
            self._masks.fill(False)
            self._masks_from_legal(self._masks)
            self._stale = False

    @property
    def masks(self) -> np.ndarray:
        self._sync_masks()
        return self._masks

    def fresh_masks(self) -> np.ndarray:
        if not self._stale:
            return self._masks.copy()
        out = np.zeros(self._masks.shape, np.bool_)
        self._masks_from_legal(out)
        return out

    def step(
        self, actions: np.ndarray, resets: np.ndarray, max_steps: int, keep_masks: bool = True
    ) -> int:
        if keep_masks and self._stale:
            self._sync_masks()  # the step updates them in place
        n_ended: int = self._k.step_batch(
            self._pr, self._batch_fields, self._config_fields, actions, resets, max_steps,
            keep_masks,
        )  # fmt: skip
        if not keep_masks:
            self._stale = True
        if n_ended >= -self.n:  # ended games, or an action out of range (nothing changed)
            if n_ended >= 0:
                self._cache.clear()
                if self._actions:
                    i = self._decide(self._all_rows, resets)
                    if i >= 0:
                        raise ColumnOverflowError.of(self.state(i), i)
            return n_ended
        self._cache.clear()
        i = -1 - self.n - n_ended
        raise ColumnOverflowError.of(self.state(i), i)

    def sample_legal(self, seed: int) -> np.ndarray:
        out = np.empty(self.n, dtype=np.int64)
        self._k.sample_legal(self._legal, out, np.uint64(seed))
        return out


ENGINES: dict[str, type[Engine]] = {"compiled": CompiledEngine, "pure": PureEngine}


def make_engine(
    backend: str,
    variant: Variant,
    n: int,
    *,
    obs_mode: str,
    feature_slots: int,
    reward_fn: RewardFn,
    illegal_reward: float,
    terminate_illegal: bool,
    action_rows: int = DEFAULT_ACTION_ROWS,
    episode_steps: int | None = None,
) -> Engine:
    """The engine of ``backend`` (``"compiled"`` or ``"pure"``, see :func:`choose_backend`)."""
    return ENGINES[backend](
        variant, n, obs_mode=obs_mode, feature_slots=feature_slots, reward_fn=reward_fn,
        illegal_reward=illegal_reward, terminate_illegal=terminate_illegal,
        action_rows=action_rows, episode_steps=episode_steps,
    )  # fmt: skip


def game_nbytes(backend: str, variant: Variant, **settings: Any) -> int:
    """The bytes one game adds to the arrays of an engine of ``backend`` with these
    :func:`make_engine` settings: an engine of two games less an engine of one (so the shapes
    keep their one home, the engines' ``__init__``). Python objects (states, generators) come on
    top."""
    one, two = (make_engine(backend, variant, n, **settings).nbytes for n in (1, 2))
    return two - one


__all__ = [
    "BACKENDS",
    "COUNTERS",
    "ENGINES",
    "CompiledEngine",
    "Engine",
    "GameView",
    "PureEngine",
    "choose_backend",
    "compiled_feature_layout",
    "compiled_scorer",
    "game_nbytes",
    "make_engine",
    "visit_capacity",
]
