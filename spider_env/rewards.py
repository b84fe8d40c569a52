"""Reward functions, selectable by name and injectable (no Gymnasium here).

A reward function is any callable ``reward(prev: State, action: int, state: State) -> float``,
called by the env after each *legal* action (``state`` follows ``prev``). :data:`REWARD_MODES`
maps the names of ``SpiderEnv(reward_mode=...)`` to the built-in classes; pass an instance
(e.g. ``ShapedReward(reveal=0.5)``) or any callable to customise. What each mode pays and what
an episode's rewards sum to is specified in :class:`spider_env.env.SpiderEnv` ("Rewards").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from spider_env.core.checks import check_number
from spider_env.core.state import State


class RewardFn(Protocol):
    def __call__(self, prev: State, action: int, state: State) -> float: ...


class ScoreReward:
    """The change of the game's score (the variant's scoring rule)."""

    name = "score"

    def __call__(self, prev: State, action: int, state: State) -> float:
        return float(state.score - prev.score)

    def __repr__(self) -> str:
        return "ScoreReward()"


class RunsReward:
    """+1 per completed run, plus ``win_bonus`` on the action that wins."""

    name = "runs"

    def __init__(self, win_bonus: float = 10.0) -> None:
        self.win_bonus = check_number("win_bonus", win_bonus)

    def __call__(self, prev: State, action: int, state: State) -> float:
        r = float(sum(state.completed) - sum(prev.completed))
        if r and state.won:
            r += self.win_bonus
        return r

    def __repr__(self) -> str:
        return f"RunsReward(win_bonus={self.win_bonus})"


class ShapedReward:
    """``run`` per completed run, ``reveal`` per face-down tableau card turned up, ``win`` on the
    winning action, minus ``step_cost`` per legal action."""

    name = "shaped"

    def __init__(
        self, run: float = 1.0, reveal: float = 0.1, win: float = 10.0, step_cost: float = 0.01
    ) -> None:
        self.run, self.reveal, self.win, self.step_cost = (
            check_number("run", run),
            check_number("reveal", reveal),
            check_number("win", win),
            check_number("step_cost", step_cost),
        )

    def __call__(self, prev: State, action: int, state: State) -> float:
        runs = sum(state.completed) - sum(prev.completed)
        r = self.run * runs + self.reveal * (state.reveals - prev.reveals) - self.step_cost
        if runs and state.won:
            r += self.win
        return r

    def __repr__(self) -> str:
        return (
            f"ShapedReward(run={self.run}, reveal={self.reveal}, win={self.win}, "
            f"step_cost={self.step_cost})"
        )


class WinReward:
    """+1 on the action that wins the game, 0 otherwise."""

    name = "win"

    def __call__(self, prev: State, action: int, state: State) -> float:
        return 1.0 if state.won and not prev.won else 0.0

    def __repr__(self) -> str:
        return "WinReward()"


REWARD_MODES: dict[str, Callable[[], RewardFn]] = {
    "score": ScoreReward,
    "runs": RunsReward,
    "shaped": ShapedReward,
    "win": WinReward,
}


def get_reward_fn(mode: str | RewardFn) -> RewardFn:
    """A reward function by name (a key of :data:`REWARD_MODES`), or ``mode`` itself if
    callable."""
    if isinstance(mode, str):
        try:
            return REWARD_MODES[mode]()
        except KeyError:
            raise ValueError(
                f"unknown reward_mode {mode!r}; known: {', '.join(sorted(REWARD_MODES))} "
                "(or pass a callable reward(prev, action, state) -> float)"
            ) from None
    if callable(mode):
        return mode
    raise TypeError(f"reward_mode must be a name or a callable, got {type(mode).__name__}")


def kernel_reward(fn: object) -> tuple[int, tuple[float, ...]] | None:
    """The compiled core's form of a built-in reward function: ``(mode, (w1, w2, w3, w4))``
    (see :mod:`spider_env.fast.layout`), or ``None`` for anything else (a subclass or a custom
    callable needs ``State`` objects: envs then run on the pure engine)."""
    from spider_env.fast.layout import R_RUNS, R_SCORE, R_SHAPED, R_WIN

    kind = type(fn)
    if kind is ScoreReward:
        return R_SCORE, (0.0, 0.0, 0.0, 0.0)
    if kind is RunsReward:
        return R_RUNS, (fn.win_bonus, 0.0, 0.0, 0.0)  # type: ignore[attr-defined]
    if kind is ShapedReward:
        f: ShapedReward = fn  # type: ignore[assignment]
        return R_SHAPED, (f.run, f.reveal, f.win, f.step_cost)
    if kind is WinReward:
        return R_WIN, (0.0, 0.0, 0.0, 0.0)
    return None


__all__ = [
    "REWARD_MODES",
    "RewardFn",
    "RunsReward",
    "ScoreReward",
    "ShapedReward",
    "WinReward",
    "get_reward_fn",
    "kernel_reward",
]
