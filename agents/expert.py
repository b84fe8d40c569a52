"""The expert: a hidden-information player that searches sampled layouts with the solver.

What it sees is what a player sees: the observation and the mask. The unseen cards (face-down
cards and the stock) are known as a multiset (the deck minus every card in view or in a
completed run), so the agent draws ``samples`` layouts of them uniformly at random
(:meth:`agents.view.TableView.to_state`), each consistent with everything seen, and solves each
with the perfect-information solver (:class:`spider_env.fast.solver.Solver`, ``nodes``
positions per search). Every sample votes for the first move of its line: a winning line
counts 1, the line towards the best position of an unfinished search ``FALLBACK_VOTE``. The move
with the most votes is played (ties: the lowest action id).

Lines are kept between decisions: after a move, a sample whose line began with that move keeps
the rest of it; a sample whose position no longer matches the table (a card turned up that it
had placed elsewhere) is replaced by a new draw. Only samples without a line are searched, so
a decision costs a search only when what is seen changes or the samples disagreed.

Determinism: all randomness is the agent's RNG (seeded by ``reset(seed)``), and the state it
keeps is a function of the observations so far, so the same seed and the same game give the
same moves; nothing hidden is read, so permuting the face-down cards and the stock changes no
choice (``tests/test_expert.py`` checks both).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from spider_env.core.variants import Variant

from .base import BaseAgent
from .lookahead import LookaheadAgent
from .view import TableView

FALLBACK_VOTE = 0.25  # the vote of a sample whose search found no win
DEFAULT_SAMPLES = 4
DEFAULT_NODES = 30_000


def _check_positive(name: str, value: object, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return int(value)


BUDGET_KEYS = ("samples", "nodes", "stage_nodes")


def parse_expert_spec(spec: str) -> dict[str, int]:
    """The budget of an agent spec ``expert`` or ``expert:samples=8,nodes=60000`` (keys
    ``samples``, ``nodes``, ``stage_nodes``); ``ValueError`` naming what is wrong."""
    name, _, rest = spec.partition(":")
    if name.lower() != "expert":
        raise ValueError(f"not an expert agent spec: {spec!r}")
    out: dict[str, int] = {}
    if not rest and ":" not in spec:
        return out
    for item in rest.split(","):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in BUDGET_KEYS:
            raise ValueError(
                f"bad expert budget {item!r} in {spec!r}: use expert:KEY=N,... with KEY one of "
                f"{', '.join(BUDGET_KEYS)}"
            )
        if key in out:
            raise ValueError(f"expert budget {key!r} given twice in {spec!r}")
        try:
            out[key] = int(value)
        except ValueError:
            raise ValueError(f"expert budget {key}={value!r} is not an integer") from None
    return out


class ExpertAgent(BaseAgent):
    """Solver-backed sampling player (see the module docstring).

    Args:
        variant: the game (or ``None``: read from ``info["variant"]``).
        seed: the RNG seed of the samples.
        samples: layouts drawn per decision (``ValueError`` below 1); with no unseen card
            (Simple Simon, or late in a game) one sample is searched with ``samples`` times
            the nodes.
        nodes: positions per search (see :class:`spider_env.fast.solver.Solver`).
        stage_nodes: positions per stage of a search (default: the solver's choice).
    """

    name = "expert"

    def __init__(
        self,
        variant: Variant | str | None = None,
        seed: int | None = None,
        *,
        samples: int = DEFAULT_SAMPLES,
        nodes: int = DEFAULT_NODES,
        stage_nodes: int | None = None,
    ) -> None:
        super().__init__(variant, seed)
        self.samples = _check_positive("samples", samples)
        self.nodes = _check_positive("nodes", nodes)
        self.stage_nodes = (
            None if stage_nodes is None else _check_positive("stage_nodes", stage_nodes)
        )
        from spider_env.fast.solver import check_budget

        check_budget(self.nodes * self.samples, None)
        if (self.samples, self.nodes, self.stage_nodes) != (DEFAULT_SAMPLES, DEFAULT_NODES, None):
            budget = f"samples={self.samples},nodes={self.nodes}"
            if self.stage_nodes is not None:
                budget += f",stage_nodes={self.stage_nodes}"
            self.name = f"expert:{budget}"
        self._solver: Any = None
        self._fallback = LookaheadAgent(variant, seed)
        # per sample: [state vector, remaining line, whether the line wins in that sample]
        self._pool: list[list[Any]] = []
        self.searches = 0  # searches run since the last reset (for reports)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._fallback.reset(seed)
        self._pool = []
        self.searches = 0

    # ------------------------------------------------------------------------------------
    def _solver_for(self, v: Variant) -> Any:
        if self._solver is None:
            try:
                from spider_env.fast import load_kernel
                from spider_env.fast.solver import Solver

                load_kernel()
            except ImportError as exc:
                raise ImportError(
                    f"the expert agent needs numba (the compiled core): {exc}"
                ) from None
            self._solver = Solver(v, self.nodes, stage_nodes=self.stage_nodes)
            self._big: Any = None
        return self._solver

    def act(self, obs: Any, mask: np.ndarray, info: Mapping[str, Any] | None = None) -> int:
        v = self._variant(info)
        legal = self._legal(mask, v)
        view = TableView.from_obs(v, obs)
        choice = legal[0] if len(legal) == 1 else self._decide(v, view, legal, obs, mask, info)
        self._advance(choice)
        return choice

    def _decide(
        self,
        v: Variant,
        view: TableView,
        legal: list[int],
        obs: Any,
        mask: np.ndarray,
        info: Mapping[str, Any] | None,
    ) -> int:
        from spider_env.fast.layout import from_array, to_array

        solver = self._solver_for(v)
        hidden = len(view.unseen_cards())
        want = 1 if hidden == 0 else self.samples
        key = view.key()
        kept: list[list[Any]] = []
        for sample in self._pool:
            if TableView.from_state(from_array(solver.variant, sample[0])).key() == key:
                kept.append(sample)
        while len(kept) < want:
            st = view.to_state(self.rng if hidden else None)
            kept.append([to_array(_plain(st)), [], False])
        self._pool = kept[:want]
        legal_set = set(legal)
        votes: dict[int, float] = {}
        for sample in self._pool:
            line = sample[1]
            if not line or line[0] not in legal_set:
                line, sample[2] = self._search(v, sample[0], hidden == 0)
                sample[1] = line
            if line and line[0] in legal_set:
                weight = 1.0 if sample[2] else FALLBACK_VOTE
                votes[line[0]] = votes.get(line[0], 0.0) + weight
        if not any(sample[2] for sample in self._pool):
            return int(self._fallback.act(obs, mask, info))
        best = max(votes.values())
        return min(a for a, w in votes.items() if w == best)

    def _search(self, v: Variant, st: np.ndarray, alone: bool) -> tuple[list[int], bool]:
        """Solve one sample: its winning line, or the solver's fallback line."""
        from spider_env.fast.solver import Solver

        solver = self._solver
        if alone and self.samples > 1:
            if self._big is None:
                self._big = Solver(v, self.nodes * self.samples, stage_nodes=self.stage_nodes)
            solver = self._big
        self.searches += 1
        code, line = solver.run(st.copy())
        if code == 0:
            return list(line), True
        return list(solver.fallback), False

    def _advance(self, action: int) -> None:
        """Play ``action`` in every sample; keep the lines that began with it."""
        if not self._pool:
            return
        from spider_env.fast import load_kernel

        k = load_kernel()
        pr = self._solver.pr
        for sample in self._pool:
            line = sample[1]
            k.apply_action(pr, sample[0], action)
            sample[1] = line[1:] if line and line[0] == action else []


def _plain(state: Any) -> Any:
    from spider_env.fast.solver import _plain as plain

    return plain(state)


__all__ = ["BUDGET_KEYS", "ExpertAgent", "parse_expert_spec"]
