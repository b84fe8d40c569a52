"""The Gymnasium environment: a thin shell over one engine.

Everything about legality comes from :func:`spider_env.core.rules.legal_actions` (the pure engine,
and the compiled core held to it); the engine (:mod:`spider_env.engine`, chosen once) plays the
game and writes observations, masks and counters; observations are made by
:func:`spider_env.observation.assemble_observation`, rewards come from :mod:`spider_env.rewards`,
text from :mod:`spider_env.render`. The reset options are :func:`choose_start`, shared with the
vector env. The full contract is the :class:`SpiderEnv` docstring.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from spider_env.action_space import MaskableDiscrete
from spider_env.core.actions import Action, check_action_id, decode, describe, encode
from spider_env.core.checks import check_bool, check_int, check_number, is_int
from spider_env.core.deals import deal_from_text, deal_name, generate_deal
from spider_env.core.interop import pysol_reset_option
from spider_env.core.rules import IllegalMoveError, explain_illegal
from spider_env.core.state import State
from spider_env.core.variants import VARIANTS, Variant, resolve_variant
from spider_env.engine import Engine, choose_backend, make_engine
from spider_env.observation import (
    DEFAULT_ACTION_ROWS,
    DEFAULT_FEATURE_SLOTS,
    ColumnOverflowError,
    assemble_observation,
    observation_space,
)
from spider_env.render import render_text
from spider_env.render_image import PILLOW_MISSING, pillow_available, render_image
from spider_env.rewards import RewardFn, get_reward_fn

#: The step limit of the ids ``gymnasium.make`` builds (``Episode End`` in :class:`SpiderEnv`).
DEFAULT_MAX_EPISODE_STEPS = 1000
ILLEGAL_ACTION_POLICIES = ("penalize", "terminate", "raise")
DEAL_NUMBER_RANGE = 2**32  # deals drawn by reset(seed=...) are numbers in [0, 2**32)
_ROW0 = np.zeros(1, dtype=np.int64)  # the single env's game, as the engine's rows


#: The keys of ``info`` after every reset and step, in order (the "Information" section of the
#: ``SpiderEnv`` docstring); :func:`make_info` is the one place that builds it.
INFO_KEYS = (
    "action_mask",
    "score",
    "moves",
    "completed_runs",
    "deals_left",
    "is_success",
    "legal_action_count",
    "illegal_action",
    "variant",
)


def make_info(
    action_mask: Any,
    score: Any,
    moves: Any,
    completed_runs: Any,
    deals_left: Any,
    is_success: Any,
    legal_action_count: Any,
    illegal_action: Any,
    variant: Any,
) -> dict[str, Any]:
    """The ``info`` dict (:data:`INFO_KEYS`) of one env (scalars) or of a vector env (arrays
    over its games)."""
    return {
        "action_mask": action_mask,
        "score": score,
        "moves": moves,
        "completed_runs": completed_runs,
        "deals_left": deals_left,
        "is_success": is_success,
        "legal_action_count": legal_action_count,
        "illegal_action": illegal_action,
        "variant": variant,
    }


def last_action_text(variant: Variant, state: State, action: int, refused: bool) -> str:
    """The last action in words (what ``render`` shows); a refused one says why, read off
    ``state``, the position it was refused in."""
    text = describe(variant, action)
    if not refused:
        return text
    return f"{text} (illegal, refused: {explain_illegal(state, action)})"


# --- where a game starts ------------------------------------------------------------------------

# A reset option turns its value into (starting state, deal name, deal number or -1).
ResetOption = Callable[[Variant, Any], tuple[State, str, int]]


def _option_deal(variant: Variant, deal_number: Any) -> tuple[State, str, int]:
    if not is_int(deal_number):
        raise TypeError(f"options['deal'] must be an int deal number, got {deal_number!r}")
    d = generate_deal(variant, operator.index(deal_number))
    return State.from_deal(d), d.name, operator.index(deal_number)


def _option_deal_text(variant: Variant, text: Any) -> tuple[State, str, int]:
    if not isinstance(text, str):
        raise TypeError(f"options['deal_text'] must be a str, got {type(text).__name__}")
    d = deal_from_text(text, variant)
    return State.from_deal(d), "custom", -1


def _option_state_text(variant: Variant, text: Any) -> tuple[State, str, int]:
    if not isinstance(text, str):
        raise TypeError(f"options['state_text'] must be a str, got {type(text).__name__}")
    return _check_state(variant, State.from_text(text), "state_text"), "state", -1


def _option_state(variant: Variant, state: Any) -> tuple[State, str, int]:
    if not isinstance(state, State):
        raise TypeError(f"options['state'] must be a spider_env.State, got {type(state).__name__}")
    return _check_state(variant, state, "state"), "state", -1


def _check_state(variant: Variant, state: State, key: str) -> State:
    if state.variant != variant:
        raise ValueError(
            f"options[{key!r}] is a position of {state.variant.name} "
            f"({state.variant.options_text() or 'default options'}), but this env plays "
            f"{variant.name} ({variant.options_text() or 'default options'})"
        )
    longest = max((len(col) for col in state.cols), default=0)
    if longest > variant.max_column_length:
        raise ValueError(
            f"options[{key!r}] has a column of {longest} cards, longer than any reachable "
            f"column of {variant.name} (L={variant.max_column_length}); the observation "
            "cannot hold it"
        )
    return state


RESET_OPTIONS: dict[str, ResetOption] = {
    "deal": _option_deal,
    "deal_text": _option_deal_text,
    "state_text": _option_state_text,
    "state": _option_state,
    "pysol_game": pysol_reset_option,
}


def register_reset_option(name: str, fn: ResetOption) -> None:
    """Add a ``reset(options={name: value})`` way to choose the starting position.

    ``fn(variant, value)`` returns ``(state, deal_name, deal_number_or_-1)``, like the built-in
    ``pysol_game`` option (:func:`spider_env.core.interop.pysol_reset_option`). A name already
    registered with another function is a ``ValueError``.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"reset option name must be a non-empty str, got {name!r}")
    if not callable(fn):
        raise TypeError(f"reset option {name!r} needs a callable, got {type(fn).__name__}")
    current = RESET_OPTIONS.get(name)
    if current is not None and current is not fn:
        raise ValueError(f"reset option {name!r} is already registered")
    RESET_OPTIONS[name] = fn


def check_seed(seed: Any, name: str = "seed", expected: str = "an int or None") -> int | None:
    """A ``reset`` seed as an ``int`` (``None`` stays ``None``): a ``TypeError`` unless it is an
    int (not a bool), saying it must be ``expected``, and a ``ValueError`` if it is negative,
    each naming ``name``."""
    if seed is None:
        return None
    if not is_int(seed):
        raise TypeError(f"{name} must be {expected}, got {type(seed).__name__} {seed!r}")
    n = operator.index(seed)
    if n < 0:
        raise ValueError(f"{name} must be >= 0, got {n}")
    return n


class Start(NamedTuple):
    """Where a game starts: ``state`` (``None``: deal ``deal_number`` of the generator, which
    the engine lays out itself), the deal's name and number (``-1`` if none)."""

    state: State | None
    deal_name: str
    deal_number: int


def choose_start(
    variant: Variant, options: dict[str, Any] | None, rng: np.random.Generator | None
) -> Start:
    """The start ``reset(options=...)`` asks for (see "Starting State" in :class:`SpiderEnv`):
    the one reset option given (:data:`RESET_OPTIONS`; unknown keys, several keys and positions
    of another variant or too long for the observation are errors), or without options a deal
    number in ``[0, 2**32)`` drawn from ``rng``."""
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
    if options:
        unknown = [k for k in options if k not in RESET_OPTIONS]
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; known: {sorted(RESET_OPTIONS)}")
        if len(options) > 1:
            raise ValueError(f"give at most one way to choose the start, got {sorted(options)}")
        ((key, value),) = options.items()
        state, name, number = RESET_OPTIONS[key](variant, value)
        return Start(_check_state(variant, state, key), name, number)
    if rng is None:
        raise ValueError("no reset option and no generator to draw a deal number from")
    deal_number = int(rng.integers(0, DEAL_NUMBER_RANGE))
    return Start(None, deal_name(variant, deal_number), deal_number)


def start_games(engine: Engine, rows: np.ndarray, starts: list[Start]) -> None:
    """Start ``starts[r]`` in game ``rows[r]`` of ``engine`` (given positions and generated
    deals, each in one engine call)."""
    rows = np.asarray(rows, dtype=np.int64)
    given = [(r, s.state) for r, s in enumerate(starts) if s.state is not None]
    drawn = [(r, s.deal_number) for r, s in enumerate(starts) if s.state is None]
    if given:
        engine.start_states(rows[[r for r, _ in given]], [state for _, state in given])
    if drawn:
        engine.start_deals(rows[[r for r, _ in drawn]], [n for _, n in drawn])


class UnsupportedRenderMode(ValueError, TypeError):
    """A ``render_mode`` the env does not offer (or ``"rgb_array"`` without Pillow, the
    ``render`` extra).

    Also a ``TypeError`` because Stable-Baselines3's ``make_vec_env`` first tries
    ``render_mode="rgb_array"`` and falls back to no render mode only on a ``TypeError``.
    """


class SpiderEnv(gym.Env[Any, np.int64]):
    """Spider Solitaire (and its family of variants) with a fixed action encoding, exact action
    masks and a player's-eye observation.

    ## Description
    Classic Spider is played with two packs (104 cards) in 1, 2 or 4 suits. Ten columns are
    dealt (54 cards, the top card of each face up) and 50 cards stay in the stock. A run of
    face-up cards of one suit in descending rank may be moved onto a card one rank higher of
    any suit, or into an empty column. A face-down card that becomes exposed turns face up. A
    deal puts one stock card face up on every column (not allowed while a column is empty).
    A complete King-to-Ace run of one suit is removed at once; removing eight wins. The rules
    are those of :mod:`spider_env.core.rules`, the only place that decides legality; other games
    of the family (:mod:`spider_env.core.variants`) are chosen with `variant=`.

    ## Action Space
    `Discrete(C * R * C + D)` (plus `C` discard actions where discarding a run is optional,
    plus 1 undo action where undo is on), with `C` columns, `R` the longest movable run (13
    for suited-run moves) and `D` deal actions (1 for classic Spider; one per stock pile when
    the player chooses the pile):

    - move the `k` exposed cards of column `src` onto column `dst`:
      `action = (src * R + (k - 1)) * C + dst`;
    - deal stock pile `j` (`j = 0` unless the player chooses the pile): `action = C * R * C + j`;
    - discard the complete run ending column `c` (only without automatic discard):
      `action = C * R * C + D + c`;
    - undo (only with `undo=True`): the last id.

    The arithmetic is `spider_env.core.actions` (`move_id`, `move_parts`, `deal_id`,
    `discard_id`, `undo_id`, `encode`, `decode`). Classic Spider: 1301 actions, the deal is
    1300. `env.encode_action(src, k, dst)`, `env.decode_action(a)` and
    `env.describe_action(a)` ("move 3 cards 2 -> 7", "deal") translate. Only a few dozen
    actions are legal in a position: use the mask.

    ## Action Mask
    `env.action_masks()` (the sb3-contrib convention) and `info["action_mask"]` after every
    `reset` and `step`: a `bool` array of length `n_actions`, True exactly for the ids of
    `spider_env.core.rules.legal_actions(state)`. It is all False only in a terminal state. With
    `mask_in_obs=True` the observation gets the same mask as `"action_mask"` (`int8` 0/1, a
    `Box(0, 1, (n_actions,), int8)`). `gymnasium.make` wraps the env last in the thin
    `spider_env.wrappers.SpiderMethods`, so `env.action_masks()`, `env.state`,
    `env.describe_action(a)`... also work on the env it returns (Gymnasium 1.x wrappers do not
    forward attributes), and `envs.call("action_masks")` on vector envs. Gymnasium's own idiom
    `env.action_space.sample(mask=info["action_mask"])` takes it as it is: the action space is a
    `spider_env.action_space.MaskableDiscrete`, a `Discrete(n_actions)` (equal to it) whose
    `sample` also takes a `bool` mask.

    ## Observation Space
    What a player sees, nothing more (face-down cards and the stock order never appear).
    With `obs_mode="dict"` (default), a `Dict`:

    | key            | space                                  | meaning                        |
    |----------------|----------------------------------------|--------------------------------|
    | `"tableau"`    | `Box(0, 53, (C, L), int8)`             | row `c` = column `c`, deepest  |
    |                |                                        | card first, then zeros         |
    | `"deals_left"` | `Discrete(P + 1)`                      | deals remaining                |
    | `"completed"`  | `Box(0, suit_sets, (4,), int8)`        | completed runs per suit        |
    | `"pile_tops"`  | `Box(0, 53, (P,), int8)`               | only variants showing the top  |
    |                |                                        | card of each stock pile        |

    Tableau values: `0` no card, `1` face-down card, `2 + card_id` face-up card, with
    `card_id = suit * 13 + rank - 1`, suits spades, hearts, diamonds, clubs (0..3), rank
    1 = Ace .. 13 = King. `L = variant.max_column_length` bounds every reachable column: under
    suited-run moves a column is at most its never-moved dealt cards (`max(layout) - 1`) plus
    descending builds of at most 13 cards, one to start with and one more after each stock card
    dealt onto it, so classic Spider has `L = 5 + 13 * (1 + 5) = 83` (any-face-up variants: the
    deck size). No card is ever dropped: a position with a longer column (only possible
    through `options={"state": ...}`) is refused at `reset` with a `ValueError`.

    `obs_mode="features"` gives the encoding made for learning, a `Dict` of `float32` arrays
    (for SB3's `MultiInputPolicy`), with `N = feature_slots` and `S' = S` suits when the
    variant has more than one suit, else `S' = 0`:

    - `"columns"` `Box(0, high, (C, F))`, `F = 4 + (N + 1) * (13 + S')`; per column: face-down
      count / (most face-down cards dealt to a column), face-up count / 13 (at most `L / 13`,
      the only feature above 1), empty flag, suited run length / 13, then `N + 1` card slots of
      `13 + S'` values (one-hot rank A..K, then one-hot suit when `S' > 0`): slot 0 is the base
      (deepest card) of the suited run at the end of the column, slots `1..N` the last `N`
      face-up cards, exposed card first; slots without a face-up card are all zero.
    - `"globals"` `Box(0, 1, (G,))`: deals left / P (0 without a stock), completed runs / runs
      to win, completed runs per suit / copies of that suit (4 values), then for variants with
      visible pile tops `P` card slots like the column slots: `G = 6 (+ P * (13 + S'))`.

    `obs_mode="flat"` is one `Box` of `C * F + G` values, `columns.ravel()` then `globals`
    (for `MlpPolicy`; the mode to use with SB3's `check_env`, which warns about the 2-D
    `"tableau"` and `"columns"` arrays of the other modes). The sizes and spaces are computed
    by `spider_env.observation` (`feature_width`, `globals_width`, `flat_width`, their
    inverses, `observation_space`).

    `obs_mode="actions"` describes every legal action instead of the table (the RL recipe's
    input: one network scores each row), a `Dict` of `float32` arrays,
    `spider_env.observation.action_feature_space(variant, action_rows)`, `K = action_rows`
    (default 96, at most `n_actions`):

    - `"actions"` `Box(-20, 20, (K, 27))`: one row per legal action, in increasing id order,
      features named by `spider_env.observation.ACTION_FEATURES` (what the action does, in the
      same terms for every column: cards moved, a card turned up, columns emptied or filled,
      suit and rank links made and broken, the run it makes, the greedy heuristic's one-step
      gain and whether it is the best, how often the position it leads to was met in this
      episode, what it prepares); a move into an empty column has a row only for the first
      empty column (the others give the same table up to the order of the columns); when
      more than `K` actions need a row, the `K` of highest gain keep one (ties: the lower id).
      Rows past the last are zero.
    - `"action_ids"` `Box(-1, n_actions - 1, (K,))`: the action id of each row, `-1` past the
      last (play `action_ids[row]`).
    - `"globals"` `Box(-20, 20, (11,))`: `spider_env.observation.GLOBAL_FEATURES` (deals left,
      runs, cards face down, empty columns, rows used, best gain, improving moves, decisions
      since the last progress, visits of this position, deal legal, decisions made).

    Only what a player sees goes in: the features are computed on the visible table with every
    hidden card replaced by the unseen cards in sorted order, as
    `spider_env.observation.TableView.to_state()` fills them. The observation has an episode
    memory (the positions met, decisions made, decisions since a card turned up, a run or a
    deal): every observation `reset` and `step` return is one decision (a refused illegal
    action too), and `reset` forgets the episode. Exactly what
    `spider_env.observation.actions.ActionFeatureEncoder(variant, action_rows).encode(dict_obs,
    mask)` returns, called once per decision and reset at each episode start (the
    `spider_env.wrappers.ActionFeatures` wrapper over the `"dict"` mode gives the same); the
    pure engine calls that encoder, the compiled core computes the same bits
    (`spider_env.fast.action_features`). `mask_in_obs=True` adds `"action_mask"` as in the
    other `Dict` modes. A column longer than `L` (only from a given position) is refused as in
    the `"dict"` mode: the features read the table a player sees.

    ## Starting State
    A deal of the variant: with `reset(seed=s)` (an int >= 0: otherwise a `TypeError` or
    `ValueError`, as for an `options` that is not a dict) deal number `n` drawn from the env's RNG
    (`n` in `[0, 2**32)`, the same for the same seed on every machine and process); `reset()`
    continues the RNG; `options={"deal": n}` plays deal `n` of the engine's generator;
    `options={"deal_text": text}` a deal typed in (KPatience-like `Play0:`/`Deal0:` lines, see
    :mod:`spider_env.core.deals`); `options={"state_text": text}` / `options={"state": State}`
    any position of the same variant; `options={"pysol_game": n}` PySolFC's game `n` (see
    :mod:`spider_env.core.interop`). At most one option; unknown keys are an error. More can
    be added with `spider_env.env.register_reset_option`.
    The deal's identity is for tools only and never in `info`: `env.deal_name`
    (`"spider-4suit#123"`, `"custom"`, `"state"`, `"pysolfc-11#5"`) and `env.deal_number` (its
    number in the engine's generator, -1 if none), read-only, also through
    `env.unwrapped` or `env.get_wrapper_attr("deal_number")`.

    ## Rewards
    `reward_mode` selects a function of :mod:`spider_env.rewards` (or pass a callable
    `reward(prev_state, action, state) -> float`, called after each legal action). What each
    legal action pays, and what an episode's rewards sum to:

    - `"score"` (default): change of the variant's score. Sum = final score - starting score
      (Windows scoring: -1 per action, +100 per run, sum = final score - 500; tournament
      scoring: +25 per revealed card, +100 per run, +100 for a win without the free column,
      sum = the final score, which starts at 0).
    - `"runs"`: +1 per completed run, +10 on the winning action (`RunsReward(win_bonus=)`).
      Sum = runs + 10 * won.
    - `"shaped"`: +1 per run, +0.1 per revealed tableau card, +10 on win, -0.01 per action.
      Sum = runs + 0.1 * reveals + 10 * won - 0.01 * legal actions.
    - `"win"`: +1 on the winning action. Sum = 1 if won else 0.

    Every penalized illegal action adds `illegal_reward` (a finite number, default -1.0) instead.

    ## Episode End
    - Termination: the game is won, or no legal action is left (or an illegal action with
      `illegal_action="terminate"`).
    - Truncation: only by the step limit (`TimeLimit`): `gymnasium.make("Spider-v0")` uses
      `max_episode_steps=1000`. Why 1000: measured with the greedy baseline on 1-suit deals
      0..19, its 14 won games took 160 to 600 actions (median about 210) but one 1399; its 6
      lost games all ran into a 3000-step limit (moves back and forth stay legal), so a limit
      is needed, and 1000 keeps nearly every winning game while bounding training episodes. Pass
      `max_episode_steps=` to change it; `SpiderEnv(...)` built directly has no limit. A step
      after truncation without a reset is a `RuntimeError` (from the `SpiderMethods` wrapper
      that `gymnasium.make` adds).

    ## Illegal and malformed actions
    `illegal_action` chooses what a legal-but-not-now action does: `"penalize"` (default: the
    state is unchanged, reward `illegal_reward`, `info["illegal_action"] = True`),
    `"terminate"` (the same, and the episode terminates) or `"raise"`
    (`spider_env.IllegalMoveError`, a `ValueError` naming the action and why). An action that
    is not an int (`TypeError`), out of range (`ValueError`), or a step before `reset` or after
    the episode terminated (`RuntimeError`) is always an error.

    ## Information
    `info` after every reset and step holds exactly: `action_mask`, `score`, `moves`,
    `completed_runs`, `deals_left`, `is_success` (won; the key SB3 reads for its success rate),
    `legal_action_count`, `illegal_action`, `variant` (a `str` that
    `spider_env.get_variant` turns back into the env's variant: the registered name, followed
    by the changed options in the state text's `key=value` syntax, e.g.
    `"spider-4suit undo=true"`). Nothing in it depends on the hidden cards or names the deal.

    ## Arguments
    ```python
    import gymnasium as gym
    import spider_env  # registers Spider-v0
    env = gym.make("Spider-v0", suits=4, reward_mode="score", illegal_action="penalize",
                   mask_in_obs=False, obs_mode="dict", render_mode="ansi")
    ```
    - `variant=None`: a variant name, spec string (`"spider-4suit undo=true"`) or registered
      `Variant` (default classic Spider with `suits`); an unregistered variant is a
      `ValueError`.
    - `suits=None`: 1, 2 or 4 (default 4) for classic Spider; must agree with `variant`.
    - `reward_mode="score"`, `illegal_action="penalize"`, `illegal_reward=-1.0`: see above.
    - `mask_in_obs=False`: add `"action_mask"` to the observation.
    - `obs_mode="dict"`: `"dict"`, `"features"`, `"flat"` or `"actions"`; `feature_slots=6`
      face-up card slots per column in the feature encodings; `action_rows=None` rows of
      `"actions"` (default 96; an int in `1..n_actions`, else a `ValueError`; given with
      another `obs_mode`, a `ValueError`).
    - `undo=False`: add the undo action (legal when the last action revealed nothing).
    - `render_mode=None`: `"ansi"` (`render()` returns the text), `"human"` (prints it) or
      `"rgb_array"` (`render()` returns the table as an `(H, W, 3)` `uint8` image, one size per
      variant, for `gymnasium.wrappers.RecordVideo`; needs Pillow: `pip install
      'spider-env[render]'`); `ascii=False` plain-ASCII cards (`KS TH`, `##` backs);
      `color=False` red suits in colour (text modes).
    - `backend="auto"`: the engine. `"auto"` runs on the compiled core (`spider_env.fast`,
      numba: one compiled call per step for the action, mask, observation and reward) when it
      can play the arguments, else on the pure-Python engine: variants with undo (an undo
      history has no fixed size) and custom reward callables (they receive `State` objects)
      run pure, and without numba everything runs pure after a one-line warning. `"compiled"`
      insists (a `ValueError` naming the reason where it cannot), `"pure"` forces the pure
      engine. Both give identical results (pinned by `tests/test_backends.py`); `env.backend`
      says which is used.

    The read-only `env.state` is the engine's full state, hidden cards included: for tools,
    tests and recording, not for agents.

    ## Version History
    Every id registered for this class (`Spider-v0` and one per variant,
    `spider_env.registration.ENV_IDS`) carries the version below. A change that can change
    learning results (the rules, the deals a seed gives, the observation, the rewards, when an
    episode ends, the action encoding, or the default of an argument) registers the next version
    of every id it touches; the old id stays registered, builds the old behaviour and warns that
    it is out of date (Gymnasium's warning for an id with a newer version). Other changes (a new
    argument whose default changes nothing, speed, a new `info` key) keep the id.
    `tests/test_versions.py` holds this list and the registry to each other.

    - v0: the first release (spider-env 0.1.0). Before it, the id already stood for these
      dynamics; the pre-release changes kept them: `info` lost the deal's number and name and
      renamed `runs_completed` to `completed_runs`, the compiled core (`backend=`, identical
      results) and `obs_mode="actions"` came as options.
    """

    # Gymnasium declares metadata as a plain class attribute, hence no ClassVar here.
    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        variant: str | Variant | None = None,
        suits: int | None = None,
        reward_mode: str | RewardFn = "score",
        illegal_action: str = "penalize",
        illegal_reward: float = -1.0,
        mask_in_obs: bool = False,
        obs_mode: str = "dict",
        feature_slots: int = DEFAULT_FEATURE_SLOTS,
        action_rows: int | None = None,
        undo: bool = False,
        render_mode: str | None = None,
        ascii: bool = False,
        color: bool = False,
        backend: str = "auto",
    ) -> None:
        self.variant = resolve_variant(variant, suits, undo)
        if illegal_action not in ILLEGAL_ACTION_POLICIES:
            raise ValueError(
                f"illegal_action must be one of {ILLEGAL_ACTION_POLICIES}, got {illegal_action!r}"
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise UnsupportedRenderMode(
                f"render_mode must be None, 'ansi', 'human' or 'rgb_array', got {render_mode!r}"
            )
        if render_mode == "rgb_array" and not pillow_available():
            raise UnsupportedRenderMode(PILLOW_MISSING)
        for name, flag in (("mask_in_obs", mask_in_obs), ("ascii", ascii), ("color", color)):
            check_bool(name, flag)
        penalty = check_number("illegal_reward", illegal_reward)
        self.reward_mode = reward_mode
        self.reward_fn = get_reward_fn(reward_mode)
        self.illegal_action = illegal_action
        self.illegal_reward = penalty
        self.mask_in_obs = bool(mask_in_obs)
        self.obs_mode = obs_mode
        self.feature_slots = feature_slots
        self.render_mode = render_mode
        self.ascii = bool(ascii)
        self.color = bool(color)

        v = self.variant
        self.n_actions = v.n_actions
        self.action_space = MaskableDiscrete(self.n_actions)
        # checks obs_mode, feature_slots, mask_in_obs with "flat", action_rows
        self.observation_space: spaces.Space[Any] = observation_space(
            v, obs_mode, feature_slots, self.mask_in_obs, action_rows
        )
        #: rows of the per-action features (``obs_mode="actions"``), else None
        self.action_rows: int | None = (
            None if obs_mode != "actions" else int(action_rows or DEFAULT_ACTION_ROWS)
        )

        if v.name not in VARIANTS:
            raise ValueError(
                f"variant {v.name!r} is not registered; register it first with "
                "spider_env.core.variants.register_variant (info['variant'] names it)"
            )
        self._variant_spec = v.spec_text()  # info["variant"]; get_variant() gives v back
        self._runs_to_win = v.runs_to_win
        self._mask = np.zeros(self.n_actions, dtype=bool)
        self._done = False
        self._deal_name = ""
        self._deal_number = -1
        self._last: tuple[int, bool] | None = None  # (action, refused as illegal)
        self._started = False
        self.backend = choose_backend(backend, v, self.reward_fn)
        self._engine = make_engine(
            self.backend, v, 1, obs_mode=obs_mode, feature_slots=feature_slots,
            reward_fn=self.reward_fn, illegal_reward=penalty,
            terminate_illegal=illegal_action == "terminate",
            action_rows=self.action_rows or DEFAULT_ACTION_ROWS,
        )  # fmt: skip
        self._bind()

    def _bind(self) -> None:
        """The engine's views of the one game: its mask, counters, observation buffers."""
        self._mask_row, self._counters, self._obs = self._engine.game(0)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in ("_mask_row", "_counters", "_obs"):  # views: made again on unpickling
            del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bind()

    # --- public helpers --------------------------------------------------------------------
    @property
    def deal_name(self) -> str:
        """The deal being played, for tools (not for agents: it determines the hidden cards):
        ``"spider-4suit#123"``, ``"custom"`` (``deal_text``), ``"state"`` (``state`` /
        ``state_text``), ``"pysolfc-11#5"``; ``""`` before the first reset."""
        return self._deal_name

    @property
    def deal_number(self) -> int:
        """The deal number in the engine's generator of the deal being played (``-1`` when the
        start was not a generated deal, or before the first reset); for tools, not agents."""
        return self._deal_number

    @property
    def state(self) -> State:
        """The engine's full current state (HIDDEN cards included: not for agents)."""
        if not self._started:
            raise RuntimeError("the env has no state yet: call reset() first")
        return self._engine.state(0)

    def action_masks(self) -> np.ndarray:
        """Bool array, True exactly for the legal actions of the current state."""
        if not self._started:
            raise RuntimeError("call reset() before action_masks()")
        return self._mask

    def legal_actions(self) -> list[int]:
        """The legal action ids of the current state (sorted, a fresh list)."""
        if not self._started:
            raise RuntimeError("the env has no state yet: call reset() first")
        return np.flatnonzero(self._mask).tolist()

    def decode_action(self, action: int) -> Action:
        """The :class:`~spider_env.core.actions.Action` behind an action id."""
        return decode(self.variant, action)

    def describe_action(self, action: int | Action) -> str:
        """An action in words: ``"move 3 cards 2 -> 7"``, ``"deal"``..."""
        return describe(self.variant, action)

    def encode_action(
        self,
        move: Action | str | int,
        cards: int | None = None,
        dst: int | None = None,
        *,
        pile: int = 0,
        column: int | None = None,
    ) -> int:
        """The action id of a move.

        ``encode_action(src, k, dst)`` moves ``k`` cards; ``encode_action("deal")`` (or
        ``pile=j``), ``encode_action("discard", column=c)``, ``encode_action("undo")``, or a
        :class:`~spider_env.core.actions.Action`.
        """
        v = self.variant
        if isinstance(move, Action):
            return encode(v, move)
        if isinstance(move, str):
            if move == "deal":
                return encode(v, Action("deal", pile=pile))
            if move == "discard":
                if column is None:
                    raise ValueError("encode_action('discard') needs column=")
                return encode(v, Action("discard", src=column))
            if move == "undo":
                return encode(v, Action("undo"))
            raise ValueError(f"unknown action kind {move!r} (use 'deal', 'discard', 'undo')")
        if cards is None or dst is None:
            raise ValueError("encode_action(src, cards, dst) needs all three numbers")
        src, n, dst = (check_int(k, x) for k, x in (("src", move), ("cards", cards), ("dst", dst)))
        return encode(v, Action("move", src, n, dst))

    def last_action_text(self) -> str | None:
        """The last action of this episode in words (``None`` right after reset)."""
        if self._last is None:
            return None
        # a refused action left the state as it was: the reason is read off it when asked for
        return last_action_text(self.variant, self.state, *self._last)

    # --- Gymnasium API ---------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=check_seed(seed))
        self._last = None
        start = choose_start(self.variant, options, self.np_random)
        start_games(self._engine, _ROW0, [start])
        self._deal_name, self._deal_number = start.deal_name, start.deal_number
        self._started = True
        self._mask = self._mask_row.copy()
        n_legal, deals, score, moves, runs = self._counters.tolist()
        self._done = n_legal == 0
        obs = assemble_observation(self._obs, deals, self._mask if self.mask_in_obs else None)
        if self.render_mode == "human":
            self.render()
        return obs, make_info(
            self._mask, score, moves, runs, deals, runs >= self._runs_to_win, n_legal, False,
            self._variant_spec,
        )  # fmt: skip

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._started:
            raise RuntimeError("step() called before reset(): call env.reset() first")
        if self._done:
            raise RuntimeError("the episode has ended (terminated): call env.reset() first")
        cls = action.__class__
        if cls is int or cls is np.int64:  # fast path; anything else gets the full check
            a = int(action)
            if not 0 <= a < self.n_actions:
                a = check_action_id(self.variant, action)  # raises ValueError, naming the range
        else:
            try:
                a = check_action_id(self.variant, action)
            except TypeError as exc:
                raise TypeError(f"invalid action {action!r}: {exc}") from None
        if self._mask[a]:
            try:
                reward = self._engine.play(0, a)
            except ColumnOverflowError:  # the move was played; its observation cannot be made
                self._mask = self._mask_row.copy()
                raise
            self._mask = self._mask_row.copy()
            n_legal, deals, score, moves, runs = self._counters.tolist()
            terminated = n_legal == 0
            self._done = terminated
            self._last = (a, False)
            illegal = False
        else:  # the state, its observation and counters stay as they are
            reward, terminated = self._refuse(a)
            n_legal, deals, score, moves, runs = self._counters.tolist()
            illegal = True
        obs = assemble_observation(self._obs, deals, self._mask if self.mask_in_obs else None)
        info = make_info(
            self._mask, score, moves, runs, deals, runs >= self._runs_to_win, n_legal, illegal,
            self._variant_spec,
        )  # fmt: skip
        if self.render_mode == "human":
            self.render()
        return obs, reward, terminated, False, info

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gym.logger.warn(
                "You are calling render() without a render_mode; pass render_mode='ansi', "
                "'human' or 'rgb_array' when making the env."
            )
            return None
        if self.render_mode == "rgb_array":
            return render_image(self.state, last_action=self.last_action_text())
        text = render_text(
            self.state, ascii=self.ascii, color=self.color, last_action=self.last_action_text()
        )
        if self.render_mode == "ansi":
            return text
        print(text, end="")
        return None

    # --- internals -------------------------------------------------------------------------
    def _refuse(self, a: int) -> tuple[float, bool]:
        """The ``illegal_action`` policy for an action that is not legal now: raise (naming
        why), or the penalty and whether the episode ends (the state stays as it is; the reason
        is worked out only if asked for, by ``last_action_text``)."""
        if self.illegal_action == "raise":
            why = explain_illegal(self.state, a)
            raise IllegalMoveError(f"illegal action {a} ({describe(self.variant, a)}): {why}")
        terminated = self.illegal_action == "terminate"
        self._done = terminated
        self._last = (a, True)
        self._mask = self._mask.copy()  # each step returns its own arrays
        self._engine.decide_again(0)  # a new observation of the same position ("actions")
        return self.illegal_reward, terminated


__all__ = [
    "DEFAULT_MAX_EPISODE_STEPS",
    "INFO_KEYS",
    "RESET_OPTIONS",
    "SpiderEnv",
    "Start",
    "UnsupportedRenderMode",
    "check_seed",
    "choose_start",
    "register_reset_option",
]
