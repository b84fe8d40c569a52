"""Heuristics of Spider shared by the players and the per-action features: the position
scorer, the test of a pointless move and the key of a visited position.

Pure Python over :class:`~spider_env.core.state.State` (what a player's filled-in view gives, see
:class:`spider_env.observation.view.TableView`); they read no legality (that is the rules'). The
greedy player (:mod:`spider_env.agents.greedy`) plays by :class:`PositionScorer`, the lookahead
player searches with it, and the per-action features (:mod:`spider_env.observation.actions`)
describe each legal move by its one-step gain.

:class:`PositionScorer` scores what a player can see of a position:

* completed runs (by far the most), face-down cards turned up (more for the last card of a
  column: a column about to empty), empty columns, suited links (a card on the next higher card
  of its suit), plain rank links (worth less: they cannot move as a group), breaks (a card on
  a card it does not follow), Kings at the root of a column;
* a card turned up by a move is unknown: it counts as a reveal, never by its (filled-in) value;
* in open games (no face-down cards in the deal, as in Simple Simon, or any face-up card may
  move, as in Scorpion: sorting what is visible is the whole game) also the shape of the suited
  runs: longer runs count more (squared), a run from a King at a column's root more still, and a
  run covered by a card that does not follow it less. Classic Spider never uses these terms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from spider_env.core.cards import KING, N_RANKS
from spider_env.core.state import State
from spider_env.core.variants import Variant


@dataclass(frozen=True)
class Weights:
    """The heuristic's weights (scores of one position; a move's gain is the difference)."""

    run: float = 1000.0  # a completed (removed) run
    down: float = 50.0  # per face-down card (negative)
    last_down: float = 12.0  # extra for a column that still has face-down cards (negative)
    empty: float = 45.0  # per empty column
    suited: float = 10.0  # per suited link (card on the next higher card of its suit)
    rank: float = 4.0  # per off-suit rank link (any-suit building only)
    brk: float = 2.0  # per break between face-up cards (negative)
    king_root: float = 6.0  # a column with nothing face down whose deepest card is a King
    unknown: float = 0.0  # value of a card just turned up (unknown to the player)
    # Open games (variants where the plan is sorting what is already face up: no face-down
    # cards at all, or any face-up card moves), where a run's shape matters more:
    run_sq: float = 6.0  # per squared suited link count of each suited run (longer runs)
    home: float = 8.0  # per card of a suited run from a King at the root of its column
    cover: float = 6.0  # a suited run covered by a card that does not follow it (negative)


DEFAULT_WEIGHTS = Weights()


class PositionScorer:
    """Scores the visible part of positions; caches per-column values."""

    def __init__(self, variant: Variant, weights: Weights = DEFAULT_WEIGHTS) -> None:
        self.variant = variant
        self.w = weights
        self.any_suit = variant.build == "any-suit"
        self.open = not any(variant.face_down) or variant.move == "any-face-up"
        self._cache: dict[tuple[Any, ...], float] = {}

    def column(self, col: tuple[int, ...], down: int, unknown: bool) -> float:
        """Value of one column (``unknown``: its deepest face-up card was just turned up)."""
        key = (col, down, unknown)
        v = self._cache.get(key)
        if v is not None:
            return v
        w = self.w
        n = len(col)
        if n == 0:
            v = w.empty
        else:
            v = -w.down * down - (w.last_down if down else 0.0)
            start = down + 1 if unknown else down
            suited = rank = brk = 0
            for i in range(start + 1, n):
                hi, lo = col[i - 1], col[i]
                if hi == lo + 1 and lo % N_RANKS != KING:
                    suited += 1
                elif hi % N_RANKS == lo % N_RANKS + 1:
                    rank += 1
                else:
                    brk += 1
            v += w.suited * suited - w.brk * brk
            if self.any_suit:
                v += w.rank * rank
            else:
                v -= w.brk * rank
            if down == 0 and not unknown and col[0] % N_RANKS == KING:
                v += w.king_root
            if self.open:
                v += self._shape(col, start)
            if unknown:
                v += w.unknown
        if len(self._cache) > 200_000:
            self._cache.clear()
        self._cache[key] = v
        return v

    def _shape(self, col: tuple[int, ...], start: int) -> float:
        """Open games: longer suited runs, runs home on a root King, runs not covered."""
        w = self.w
        v = 0.0
        n = len(col)
        i = start
        while i < n:
            j = i + 1
            while j < n and col[j - 1] == col[j] + 1 and col[j] % N_RANKS != KING:
                j += 1
            links = j - i - 1
            v += w.run_sq * links * links
            if i == 0 and col[0] % N_RANKS == KING:
                v += w.home * (j - i)
            elif j < n and links:
                v -= w.cover * links
            i = j
        return v

    def gain(self, before: State, after: State) -> float:
        """Score change from ``before`` to ``after`` (cards turned up count as unknown)."""
        g = self.w.run * (sum(after.completed) - sum(before.completed))
        col_value = self.column
        for c in range(len(before.cols)):
            a, b = after.cols[c], before.cols[c]
            if a is b:
                continue
            da, db = after.down[c], before.down[c]
            g += col_value(a, da, da < db) - col_value(b, db, False)
        return g


def visible_key(s: State) -> tuple[Any, ...]:
    """A hashable key of the position an agent sees (to recognise repeated positions).

    Agents only ever hold states filled in by :meth:`TableView.to_state` without an RNG (and the
    states moves lead to from them), whose unseen cards are a fixed function of the visible
    table; so the full position key identifies the visible position (and is much cheaper to
    build than slicing the columns).
    """
    return s.key()


def pointless(state: State, src: int, cards: int, dst: int) -> bool:
    """A whole column (nothing face down) moved into an empty column: the table is the same."""
    return not state.cols[dst] and len(state.cols[src]) == cards


__all__ = ["DEFAULT_WEIGHTS", "PositionScorer", "Weights", "pointless", "visible_key"]
