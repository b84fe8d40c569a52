"""Per-action features: the observation ``obs_mode="actions"`` of ``SpiderEnv`` and
``SpiderVectorEnv`` (the RL recipe's; also the wrapper :class:`spider_env.wrappers.ActionFeatures`).

:class:`ActionFeatureEncoder` is the specification: the pure engine's envs call it once per
decision; the compiled core's mirror (:mod:`spider_env.fast.action_features`) is held to it bit
for bit (``tests/test_action_features_compiled.py``).

A flat policy over Spider's action ids has to learn separately that "3 cards from column 2 to column
7" and "from column 4 to column 1" are the same kind of move. Here every *legal* action is described
by what it does, in the same terms for every column, and one shared network scores each description
(:mod:`spider_env.agents.rl.policy`). The features are computed from what a player sees only: the
env's ``dict`` observation (parsed by :class:`~spider_env.observation.view.TableView`), its action
mask, and the encoder's memory of the visible positions already met in this episode (a policy
without memory shuttles cards back and forth; the baseline agents avoid that the same way).

Per legal action (one row of ``actions``, its id in ``action_ids``), :data:`ACTION_FEATURES`:
the kind of action; for a move, the cards it moves, whether it turns up a face-down card,
empties its column, goes into an empty column, joins its suit or only the rank, breaks a suited
or an off-suit link at its source, the suited run it makes at the target, whether it completes
a run, the face-down cards under source and target, the greedy heuristic's one-step gain
(:class:`spider_env.heuristics.PositionScorer`: a card turned up counts as unknown, never by value),
whether that gain is the best of all moves, how often the position it leads to was already
seen, whether it moves a whole column into an empty one (a pointless move), the rank it moves,
whether it fills an empty column without emptying another, and three signs of what it
prepares, read from the rules engine's legal moves after it: whether the rest of its source
could then move away and turn up a card, whether the card it uncovers could take the next lower
card of its suit from another column, and whether the card it lands could.

Rows past the legal actions are zero with id ``-1``. A move into an empty column has a row only
for the first empty column (into another one it gives the same table up to the order of the
columns), so the policy plays those moves into the first empty column;
:attr:`ActionFeatureEncoder.row_of` maps every legal action of the last decision to the row
that stands for it.

``globals`` (:data:`GLOBAL_FEATURES`) describes the position: deals left, runs completed, cards
face down, empty columns, actions with a row, the best move's gain and the number of improving
moves, decisions since the last progress (a card turned up, a run, a deal), visits of this
position, whether a deal is legal, and decisions made so far.

If more actions need a row than there are ``action_rows`` (96 by default; in 1-suit games of the
lookahead player at most 51 did), the rows go to the actions with the highest one-step gain
and the rest get none (the policy gives them probability zero;
:attr:`ActionFeatureEncoder.overflows` counts such decisions).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from spider_env.core.actions import move_parts
from spider_env.core.cards import KING, N_RANKS
from spider_env.core.rules import apply_legal, legal_actions
from spider_env.core.state import State
from spider_env.core.variants import Variant, get_variant
from spider_env.heuristics import PositionScorer, pointless
from spider_env.observation.spaces import (
    ACTION_FEATURES,
    DEFAULT_ACTION_ROWS,
    GLOBAL_FEATURES,
    N_ACTION_FEATURES,
    N_GLOBAL_FEATURES,
    action_feature_space,
    check_action_rows,
)
from spider_env.observation.view import TableView


class ActionFeatureEncoder:
    """Turns ``(dict observation, mask)`` into per-action features, remembering the visible
    positions of the episode (call :meth:`reset` at the start of each)."""

    def __init__(self, variant: Variant | str, action_rows: int = DEFAULT_ACTION_ROWS) -> None:
        self.action_rows = check_action_rows(action_rows)
        self.variant = get_variant(variant)
        self.space = action_feature_space(self.variant, action_rows)
        self._scorer = PositionScorer(self.variant)
        self.overflows = 0
        self.reset()

    def reset(self) -> None:
        """Forget the episode's positions."""
        self.visits: dict[tuple[Any, ...], int] = {}
        self._progress: tuple[int, int, int] | None = None
        self._since = 0
        self._decisions = 0
        self.row_of: dict[int, int] = {}

    def encode(self, obs: Mapping[str, Any], mask: Any) -> dict[str, np.ndarray]:
        """The features of the position ``obs`` with legal actions ``mask`` (one decision: the
        position is counted as visited)."""
        v = self.variant
        m = np.asarray(mask)
        if m.shape != (v.n_actions,):
            raise ValueError(
                f"the action mask has shape {m.shape}, {v.name} has {v.n_actions} actions"
            )
        legal = np.flatnonzero(m).tolist()
        view = TableView.from_obs(v, obs)
        state = view.to_state()
        here = state.key()
        self.visits[here] = self.visits.get(here, 0) + 1
        progress = (sum(view.down), sum(view.completed), view.deals_left)
        if progress != self._progress:
            self._progress, self._since = progress, 0
        else:
            self._since += 1
        scorer = self._scorer
        n_move = v.n_move_actions
        deal_end = n_move + v.n_deal_actions
        discard_end = deal_end + v.n_discard_actions
        down_total = sum(state.down)
        runs = sum(state.completed)
        has_empty = not all(state.cols)
        rows: list[tuple[float, int, np.ndarray]] = []
        alias: dict[int, int] = {}
        first_empty: dict[tuple[int, int, bool], int] = {}
        for a in legal:
            f = np.zeros(N_ACTION_FEATURES, np.float32)
            gain = 0.0
            if a < n_move:
                src, k, dst = move_parts(v, a)
                if not state.cols[dst]:
                    # The same move into another empty column gives the same table up to the
                    # order of the columns: one row stands for all of them.
                    same = (src, k, dst < v.dealt_columns)
                    if same in first_empty:
                        alias[a] = first_empty[same]
                        continue
                    first_empty[same] = a
                f[0] = 1.0
                col, tgt = state.cols[src], state.cols[dst]
                d_src, d_dst = state.down[src], state.down[dst]
                up = len(col) - d_src
                head = col[-k]
                nxt = apply_legal(state, a)
                gain = scorer.gain(state, nxt)
                reveals = k == up and d_src > 0
                f[4] = k / 13.0
                f[5] = reveals
                f[6] = k == len(col)
                f[7] = not tgt
                if tgt:
                    top = tgt[-1]
                    suited = top == head + 1 and head % N_RANKS != KING
                    f[8] = suited
                    f[9] = (not suited) and top % N_RANKS == head % N_RANKS + 1
                if k < up:
                    below = col[-k - 1]
                    if below == head + 1 and head % N_RANKS != KING:
                        f[10] = 1.0
                    elif below % N_RANKS == head % N_RANKS + 1:
                        f[11] = 1.0
                f[12] = nxt.run_lengths[dst] / 13.0
                f[13] = sum(nxt.completed) > runs
                f[14] = d_src / 6.0
                f[15] = d_dst / 6.0
                f[18] = 0.0 if reveals else min(self.visits.get(nxt.key(), 0) / 3.0, 1.0)
                f[19] = has_empty and pointless(state, src, k, dst)
                f[20] = (head % N_RANKS) / 12.0
                f[21] = (not tgt) and k < len(col) and dst < v.dealt_columns
                f[22] = (up - k) / 13.0 if not reveals else 0.0
                f[23] = reveals and d_src == 1
                later = self._later_moves(nxt)
                if not reveals and k < up:
                    rest = len(nxt.cols[src]) - nxt.down[src]
                    f[24] = nxt.down[src] > 0 and any(s == src and n == rest for s, n, _ in later)
                    f[25] = _takes_run(nxt, later, src, src)
                f[26] = _takes_run(nxt, later, dst, src)
            elif a < deal_end:
                f[1] = 1.0
            elif a < discard_end:
                f[2] = 1.0
                nxt = apply_legal(state, a)
                gain = scorer.gain(state, nxt)
                f[13] = sum(nxt.completed) > runs
            else:
                f[3] = 1.0
                gain = -100.0
            f[16] = np.clip(gain / 100.0, -20.0, 20.0)
            rows.append((gain, a, f))
        move_gains = [g for g, a, _ in rows if a < n_move or deal_end <= a < discard_end]
        best = max(move_gains) if move_gains else 0.0
        if len(rows) > self.action_rows:
            self.overflows += 1
            rows = sorted(rows, key=lambda r: -r[0])[: self.action_rows]
        feats = np.zeros((self.action_rows, N_ACTION_FEATURES), np.float32)
        ids = np.full(self.action_rows, -1.0, np.float32)
        row_of: dict[int, int] = {}
        for i, (g, a, f) in enumerate(rows):
            if (a < n_move or deal_end <= a < discard_end) and g >= best - 1e-9:
                f[17] = 1.0
            feats[i] = f
            ids[i] = a
            row_of[a] = i
        for a, rep in alias.items():
            if rep in row_of:
                row_of[a] = row_of[rep]
        self.row_of = row_of
        glob = np.zeros(N_GLOBAL_FEATURES, np.float32)
        glob[0] = view.deals_left / max(1, len(v.stock))
        glob[1] = sum(view.completed) / max(1, v.n_cards // N_RANKS)
        glob[2] = down_total / 44.0
        glob[3] = sum(1 for c in state.cols[: v.n_columns] if not c) / v.n_columns
        glob[4] = len(rows) / 50.0
        glob[5] = np.clip(best / 100.0, -20.0, 20.0)
        glob[6] = sum(1 for g in move_gains if g > 0) / 10.0
        glob[7] = min(self._since / 50.0, 2.0)
        glob[8] = min(self.visits[here] / 5.0, 1.0)
        glob[9] = any(n_move <= a < deal_end for a in legal)
        glob[10] = self._decisions / 1000.0
        self._decisions += 1
        return {"actions": feats, "action_ids": ids, "globals": glob}

    def _later_moves(self, nxt: State) -> list[tuple[int, int, int]]:
        """``(source, cards, target)`` of every move legal after a move (the rules engine's)."""
        v = self.variant
        return [move_parts(v, b) for b in legal_actions(nxt) if b < v.n_move_actions]


def _takes_run(nxt: State, later: list[tuple[int, int, int]], col: int, skip: int) -> float:
    """Whether a legal move ``later`` puts onto column ``col`` the next lower card of the same
    suit from a column other than ``col`` and ``skip`` (a suited join made possible)."""
    cards = nxt.cols[col]
    if len(cards) <= nxt.down[col]:
        return 0.0
    want = cards[-1] - 1
    return float(
        any(d == col and s not in (col, skip) and nxt.cols[s][-n] == want for s, n, d in later)
    )


__all__ = [
    "ACTION_FEATURES",
    "DEFAULT_ACTION_ROWS",
    "GLOBAL_FEATURES",
    "N_ACTION_FEATURES",
    "N_GLOBAL_FEATURES",
    "ActionFeatureEncoder",
    "action_feature_space",
]
