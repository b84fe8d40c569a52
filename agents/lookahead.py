"""Greedy scoring plus a search over sequences of moves.

A one-step player misses every manoeuvre that needs a preparatory move (put a run in an empty
column, move another run, bring the first back ...). :class:`LookaheadAgent` searches the
positions reachable by *moves* from the current one, best first by the greedy score
(:class:`agents.greedy.PositionScorer`), up to a budget of expanded positions, and plays the
sequence that leads to the best-scoring position, provided it beats the current one.

Hidden information: a search never looks past a card turning up (or a deal): such a position is
a leaf, scored with the turned-up card counted as unknown. Every position the search expands is
therefore exactly what the player would see (the filled-in unseen cards of
:meth:`agents.view.TableView.to_state` are never looked at), and legality of each searched move
comes from the one rules engine (:func:`spider_env.core.rules.legal_actions`). The first move is
checked against the env's mask. A found plan is followed move by move as long as the table
looks as predicted (it always does: no card turns up before its last move).

Dealing, filling empty columns before a deal and repetition avoidance are the greedy agent's.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from typing import Any

import numpy as np

from spider_env.core.actions import MOVE, decode
from spider_env.core.rules import apply_legal, legal_actions
from spider_env.core.state import State
from spider_env.core.variants import Variant

from .greedy import DEFAULT_WEIGHTS, GreedyAgent, Weights, visible_key


class LookaheadAgent(GreedyAgent):
    """Best-first search over move sequences (``max_nodes`` positions generated per search,
    sequences of at most ``max_depth`` moves)."""

    name = "lookahead"

    def __init__(
        self,
        variant: Variant | str | None = None,
        seed: int | None = None,
        weights: Weights = DEFAULT_WEIGHTS,
        max_nodes: int = 600,
        max_depth: int = 8,
    ) -> None:
        super().__init__(variant, seed, weights)
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self._plan: list[tuple[int, tuple[Any, ...]]] = []  # (action, key before it)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._plan = []

    def act(self, obs: Any, mask: np.ndarray, info: Mapping[str, Any] | None = None) -> int:
        if self._plan:
            v = self._variant(info, obs, mask)
            from .view import TableView

            state = TableView.from_obs(v, obs).to_state()
            a, key = self._plan[0]
            m = np.asarray(mask)
            if visible_key(state) == key and 0 <= a < m.size and m[a]:
                self._plan.pop(0)
                here = key
                self.visits[here] = self.visits.get(here, 0) + 1
                return a
            self._plan = []
        return super().act(obs, mask, info)

    def _improve(self, state: State, one: tuple[float, int] | None) -> tuple[float, int] | None:
        plan = self.search(state)
        if plan is None:
            return one
        value, actions = plan
        if one is not None and one[0] >= value - 1e-9:
            return one
        # Follow the plan: remember the expected position before each later move.
        self._plan = []
        s = state
        for a in actions:
            self._plan.append((a, visible_key(s)))
            s = apply_legal(s, a)
        first = self._plan.pop(0)[0]
        return value, first

    def search(self, root: State) -> tuple[float, list[int]] | None:
        """Best move sequence from ``root``: ``(score gain, actions)``, or ``None``."""
        v = root.variant
        scorer = self.scorer(v)
        C, R = v.n_columns, v.max_run
        n_move = C * R * C
        discard_lo = n_move + v.n_deal_actions
        discard_hi = discard_lo + v.n_discard_actions
        root_down = sum(root.down)
        root_key = visible_key(root)
        seen = {root_key}
        best: tuple[float, list[int]] | None = None
        # Frontier: (-value, tie, state, path); value = score gain from the root.
        tie = 0
        frontier: list[tuple[float, int, State, list[int]]] = [(0.0, 0, root, [])]
        generated = 0
        while frontier and generated < self.max_nodes:
            neg, _, s, path = heapq.heappop(frontier)
            base = -neg
            for a in legal_actions(s):
                generated += 1
                if a < n_move:
                    dst = a % C
                    if not s.cols[dst] and len(s.cols[(a // C) // R]) == (a // C) % R + 1:
                        continue  # a whole column into an empty one: the same table
                elif not discard_lo <= a < discard_hi:
                    continue  # no deals or undo inside a search
                nxt = apply_legal(s, a)
                leaf = sum(nxt.down) < sum(s.down) or sum(nxt.completed) > sum(s.completed)
                if not leaf:
                    key = visible_key(nxt)
                    if key in seen:
                        continue
                    seen.add(key)
                value = base + scorer.gain(s, nxt) - 0.01 * (len(path) + 1)
                new_path = [*path, a]
                if (leaf or key not in self.visits) and (best is None or value > best[0]):
                    best = (value, new_path)
                if not leaf and len(new_path) < self.max_depth and sum(nxt.down) == root_down:
                    tie += 1
                    heapq.heappush(frontier, (-value, tie, nxt, new_path))
        if best is None:
            return None
        return best

    def plan_text(self) -> list[str]:
        """The rest of the current plan in words (for debugging and hints)."""
        v = self.variant
        if v is None:
            return []
        return [describe_move(v, a) for a, _ in self._plan]


def describe_move(v: Variant, a: int) -> str:
    m = decode(v, a)
    return f"{m.cards} {m.src}->{m.dst}" if m.kind == MOVE else m.kind


__all__ = ["LookaheadAgent"]
