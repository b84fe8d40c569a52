"""A one-step heuristic player: the moves a good player makes without looking ahead.

For every legal action of the mask the agent works out the position it leads to (by running the
one rules engine, :func:`spider_env.core.rules.apply_legal`, on a state filled in from the
observation, see :meth:`spider_env.observation.view.TableView.to_state`; the mask says which
actions are legal) and scores what a player can see of it with
:class:`spider_env.heuristics.PositionScorer` (completed runs, cards turned up, empty columns,
suited links...; a card turned up counts as unknown, never by its filled-in value).

It plays the best move that improves that score and leads to a position it has not seen in this
game (so it never undoes its own last move nor walks in circles); it deals only when no move
improves the position; it discards complete runs where that is optional; it never uses undo.
Ties break by the agent's seeded RNG, so it is deterministic for a given seed. When nothing
helps and it cannot deal (stock empty, or an empty column blocks the deal), it plays the least
harmful move to a new position (filling an empty column so that it can deal, or searching for a
way on), then the least-visited one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from spider_env.core.actions import DEAL, DISCARD, MOVE, UNDO, decode, move_parts
from spider_env.core.rules import apply_legal, legal_actions
from spider_env.core.state import State
from spider_env.core.variants import Variant
from spider_env.heuristics import DEFAULT_WEIGHTS, PositionScorer, Weights, pointless, visible_key
from spider_env.observation.view import TableView

from .base import BaseAgent


class GreedyAgent(BaseAgent):
    """One-step heuristic player (see the module docstring). Deterministic for a given seed."""

    name = "greedy"
    max_neutral = 12  # moves that lose nothing, tried before a deal (per stage of the game)

    def __init__(
        self,
        variant: Variant | str | None = None,
        seed: int | None = None,
        weights: Weights = DEFAULT_WEIGHTS,
    ) -> None:
        super().__init__(variant, seed)
        self.weights = weights
        self._scorer: PositionScorer | None = None
        self.visits: dict[tuple[Any, ...], int] = {}
        self._filling = False
        self._neutral = 0
        self._progress: tuple[int, int, int] | None = None

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.visits = {}
        self._filling = False
        self._neutral = 0
        self._progress = None

    def scorer(self, variant: Variant) -> PositionScorer:
        if self._scorer is None or self._scorer.variant != variant:
            self._scorer = PositionScorer(variant, self.weights)
        return self._scorer

    # ------------------------------------------------------------------------------------
    def rank_actions(
        self, obs: Any, mask: np.ndarray, info: Mapping[str, Any] | None = None
    ) -> list[tuple[float, int, str]]:
        """``(gain, action, kind)`` for every legal action, best first (for hints and tests).

        Deals are listed with gain 0.0, undo with ``-inf``.
        """
        v = self._variant(info)
        legal = self._legal(mask, v)
        scored = self._score(TableView.from_obs(v, obs).to_state(), legal)
        return sorted(((g, a, k) for g, _, a, k in scored), key=lambda t: (-t[0], t[1]))

    def _score(self, state: State, legal: list[int]) -> list[tuple[float, bool, int, str]]:
        """``(gain, leads to a new position, action, kind)`` for each legal action (ids from
        the mask: legal in ``state``, apart from an undo, which is never applied here)."""
        v = state.variant
        scorer = self.scorer(v)
        n_move = v.n_move_actions
        deal_end = n_move + v.n_deal_actions
        discard_end = deal_end + v.n_discard_actions
        down = sum(state.down)
        has_empty = not all(state.cols)
        visits = self.visits
        out: list[tuple[float, bool, int, str]] = []
        for a in legal:
            if a < n_move or deal_end <= a < discard_end:
                nxt = apply_legal(state, a)
                fresh = sum(nxt.down) < down or visible_key(nxt) not in visits
                if a < n_move:
                    kind = MOVE
                    if fresh and has_empty and pointless(state, *move_parts(v, a)):
                        fresh = False
                else:
                    kind = DISCARD
                out.append((scorer.gain(state, nxt), fresh, a, kind))
            elif a < deal_end:
                out.append((0.0, True, a, DEAL))
            else:
                out.append((float("-inf"), False, a, UNDO))
        return out

    def _improve(
        self, state: State, legal: list[int], one: tuple[float, int] | None
    ) -> tuple[float, int] | None:
        """The move to play if it improves the position (``one``: the best single move)."""
        return one

    def _new_stage(self) -> None:
        """Called when a card turned up, a run was completed or a deal was made."""
        self._filling = False
        self._neutral = 0

    def act(self, obs: Any, mask: np.ndarray, info: Mapping[str, Any] | None = None) -> int:
        v = self._variant(info)
        legal = self._legal(mask, v)
        return self._choose(TableView.from_obs(v, obs), legal)

    def _choose(self, view: TableView, legal: list[int]) -> int:
        """The action to play in ``view`` (``legal``: the mask's legal ids, sorted)."""
        v = view.variant
        state = view.to_state()
        here = visible_key(state)
        self.visits[here] = self.visits.get(here, 0) + 1
        progress = (sum(view.down), sum(view.completed), view.deals_left)
        if progress != self._progress:
            self._progress = progress
            self._new_stage()
        scored = self._score(state, legal)
        moves = [(g, f, a) for g, f, a, k in scored if k in (MOVE, DISCARD)]
        deals = [a for _, _, a, k in scored if k == DEAL]
        fresh = [(g, a) for g, f, a in moves if f]
        if self._filling:
            # We chose to deal but empty columns blocked it: fill them (never emptying a
            # column again) until the deal is legal or a card turned up changed the picture.
            if deals:
                return self._pick_deal(view, deals)
            pick = self._best([(g, a) for g, a in fresh if self._fills_empty(state, a)])
            if pick is not None:
                return pick[1]
        one = self._best(fresh)
        best = self._improve(state, legal, one)
        if best is not None and best[0] > 0:
            return best[1]
        if one is not None and one[0] >= 0 and self._neutral < self.max_neutral:
            # A move that loses nothing, to a new position: it may open something up.
            self._neutral += 1
            return one[1]
        if deals:
            return self._pick_deal(view, deals)
        if view.deals_left and fresh and v.deal_needs_no_empty:
            # The deal is blocked by empty columns: fill one, as well as possible.
            pick = self._best([(g, a) for g, a in fresh if self._fills_empty(state, a)])
            if pick is not None:
                self._filling = True
                return pick[1]
        if one is not None:
            # Nothing improves the position and no deal is possible: the least harmful move
            # that does not end the game (a position without any legal action is lost).
            alive = [(g, a) for g, a in fresh if self._keeps_playing(state, a)]
            pick = self._best(alive) if alive else one
            assert pick is not None
            return pick[1]
        if moves:
            # Every move leads back to a position seen before: the least visited, then best.
            visits = {
                a: self.visits.get(visible_key(apply_legal(state, a)), 0) for _, _, a in moves
            }
            ranked = sorted(moves, key=lambda t: (visits[t[2]], -t[0]))
            lowest = (visits[ranked[0][2]], -ranked[0][0])
            ties = [t[2] for t in ranked if (visits[t[2]], -t[0]) == lowest]
            return int(ties[self.rng.integers(len(ties))])
        undo = [a for _, _, a, k in scored if k == UNDO]
        return undo[0] if undo else legal[0]

    @staticmethod
    def _keeps_playing(state: State, a: int) -> bool:
        nxt = apply_legal(state, a)
        return nxt.won or bool(legal_actions(nxt))

    @staticmethod
    def _fills_empty(state: State, a: int) -> bool:
        """``a`` moves cards into an empty dealt column without emptying its source."""
        v = state.variant
        if a >= v.n_move_actions:
            return False
        src, cards, dst = move_parts(v, a)
        if state.cols[dst] or dst >= v.dealt_columns:
            return False
        return len(state.cols[src]) > cards

    def _best(self, items: list[tuple[float, int]]) -> tuple[float, int] | None:
        if not items:
            return None
        top = max(g for g, _ in items)
        ties = [a for g, a in items if g >= top - 1e-9]
        return top, int(ties[self.rng.integers(len(ties))]) if len(ties) > 1 else ties[0]

    def _pick_deal(self, view: TableView, deals: list[int]) -> int:
        if len(deals) == 1 or view.pile_tops is None:
            return deals[0]
        # The player picks the pile: its visible top goes onto the first column.
        scorer = self.scorer(view.variant)
        best, best_a = float("-inf"), deals[0]
        col0 = view.up[0]
        for a in deals:
            top = view.pile_tops[decode(view.variant, a).pile]
            if top < 0:
                continue
            val = scorer.column(col0 + (top,), 0, False) if col0 else 0.0
            if val > best:
                best, best_a = val, a
        return best_a


__all__ = ["GreedyAgent"]
