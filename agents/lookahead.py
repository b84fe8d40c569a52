"""Greedy scoring plus a search over sequences of moves.

A one-step player misses every manoeuvre that needs a preparatory move (put a run in an empty
column, move another run, bring the first back ...). :class:`LookaheadAgent` searches the
positions reachable by *moves* from the current one, best first by the greedy score
(:class:`spider_env.heuristics.PositionScorer`), up to a budget of expanded positions, and plays the
sequence that leads to the best-scoring position, provided it beats the current one.

Hidden information: a search never looks past a card turning up (or a deal): such a position is a
leaf, scored with the turned-up card counted as unknown. Every position the search expands is
therefore exactly what the player would see (the filled-in unseen cards of
:meth:`~spider_env.observation.view.TableView.to_state` are never looked at). The moves tried from
the current position are the legal ids of the env's mask; those from the positions after them come
from the one rules engine (:func:`spider_env.core.rules.legal_actions`). A found plan is followed
move by move while the table looks as predicted and the mask allows the next move (it always does:
no card turns up before its last move); otherwise the plan is dropped and the agent decides afresh.

Dealing, filling empty columns before a deal and repetition avoidance are the greedy agent's.
"""

from __future__ import annotations

import heapq
from typing import Any

from spider_env.core.actions import move_parts, undo_id
from spider_env.core.rules import apply_legal, legal_actions
from spider_env.core.state import State
from spider_env.core.variants import Variant
from spider_env.heuristics import DEFAULT_WEIGHTS, Weights, pointless, visible_key
from spider_env.observation.view import TableView

from .greedy import GreedyAgent


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
        # The rest of the plan: (action, view key and state key of the position before it).
        self._plan: list[tuple[int, tuple[Any, ...], tuple[Any, ...]]] = []

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._plan = []

    def _choose(self, view: TableView, legal: list[int]) -> int:
        if self._plan:
            a, view_key, state_key = self._plan[0]
            if view.key() == view_key and a in legal:
                self._plan.pop(0)
                self.visits[state_key] = self.visits.get(state_key, 0) + 1
                return a
            self._plan = []
        return super()._choose(view, legal)

    def _improve(
        self, state: State, legal: list[int], one: tuple[float, int] | None
    ) -> tuple[float, int] | None:
        plan = self.search(state, legal)
        if plan is None:
            return one
        value, actions = plan
        if one is not None and one[0] >= value - 1e-9:
            return one
        # Follow the plan: remember the expected position before each later move.
        self._plan = []
        s = state
        for a in actions:
            self._plan.append((a, TableView.from_state(s).key(), visible_key(s)))
            s = apply_legal(s, a)
        first = self._plan.pop(0)[0]
        return value, first

    def search(self, root: State, legal: list[int]) -> tuple[float, list[int]] | None:
        """Best move sequence from ``root``: ``(score gain, actions)``, or ``None``.

        ``legal`` are the root's legal action ids (the env's mask); they are not recomputed.
        """
        v = root.variant
        scorer = self.scorer(v)
        n_move = v.n_move_actions
        discard_lo = n_move + v.n_deal_actions
        discard_hi = discard_lo + v.n_discard_actions
        if v.undo:  # never searched (and the root, filled in from a view, has no history)
            legal = [a for a in legal if a != undo_id(v)]
        root_down = sum(root.down)
        seen = {visible_key(root)}
        best: tuple[float, list[int]] | None = None
        # Frontier: (-value, tie, state, path); value = score gain from the root.
        tie = 0
        frontier: list[tuple[float, int, State, list[int]]] = [(0.0, 0, root, [])]
        generated = 0
        while frontier and generated < self.max_nodes:
            neg, _, s, path = heapq.heappop(frontier)
            base = -neg
            has_empty = not all(s.cols)
            s_down, s_runs = sum(s.down), sum(s.completed)
            for a in legal if s is root else legal_actions(s):
                generated += 1
                if a < n_move:
                    if has_empty and pointless(s, *move_parts(v, a)):
                        continue  # a whole column into an empty one: the same table
                elif not discard_lo <= a < discard_hi:
                    continue  # no deals or undo inside a search
                nxt = apply_legal(s, a)
                leaf = sum(nxt.down) < s_down or sum(nxt.completed) > s_runs
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
        return best


__all__ = ["LookaheadAgent"]
