"""The expert: a hidden-information player that searches sampled layouts with the solver.

What it sees is what a player sees: the observation and the mask. The unseen cards (face-down cards
and the stock) are known as a multiset (the deck minus every card in view or in a completed run), so
the agent draws ``samples`` layouts of them uniformly at random
(:meth:`~spider_env.observation.view.TableView.to_state`), each consistent with everything seen, and
solves each with the perfect-information solver (a beam ``width`` wide,
:class:`spider_env.search.beam.BeamSolver`, one try of at most ``nodes`` positions; ``width=0``:
best-first search, :class:`spider_env.search.solver.Solver`). Every sample whose search found a
win votes for the first move of its line; the move with the most votes is played (ties: the
lowest action id). A sample still following the line of an earlier search votes
``1 + INCUMBENT_BONUS``, so that two samples with different plans do not take turns undoing each
other's moves. When no sample has a winning line, the lookahead agent
(:class:`~spider_env.agents.lookahead.LookaheadAgent`) moves.

Samples and lines are kept between decisions:

* after a move, a sample whose line began with it keeps the rest of its line; the others search
  again at the next decision;
* when a card turns up (or a deal shows ten), a sample that had placed another card there is
  *repaired*: the card it had is swapped with a copy of the card now seen, taken from one of
  its hidden slots at random (the repaired layout is again a uniform draw of what is still
  unseen). Its line is replayed on the repaired layout (:func:`spider_env.search.solver.line_wins`)
  and kept if it still wins;
* a sample whose search found no win searches again when its cards change, or after
  ``RETRY_EVERY`` decisions.

So a decision costs a search only when what is seen contradicts a sample's plan.

Determinism: all randomness is the agent's RNG (seeded by ``reset(seed)``), and the state it
keeps is a function of the observations so far, so the same seed and the same game give the
same moves; nothing hidden is read, so permuting the face-down cards and the stock changes no
choice (``tests/test_expert.py`` checks both).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from spider_env.core.checks import check_int, check_optional_int
from spider_env.core.variants import Variant
from spider_env.observation.view import TableView
from spider_env.search.budget import MAX_NODES, MAX_WIDTH, check_budget

from .base import BaseAgent, parse_budget_spec
from .lookahead import LookaheadAgent

INCUMBENT_BONUS = 0.5  # extra vote of a sample still following the line of an earlier search
RETRY_EVERY = 5  # decisions between two searches of a sample that found no win
DEFAULT_SAMPLES = 4
SAMPLE_NODES = 100_000  # positions per beam search of one sample
#: The beam's width per search of one sample (one try, no widening); 0: best-first search.
SAMPLE_WIDTH = 10
#: Positions per best-first search of one sample (the expert of the earlier ladder).
BEST_FIRST_NODES = 30_000
#: The variants whose samples are solved by best-first search by default (``width=0``,
#: ``nodes=30000``), because the expert won more there that way (the expert's rows in
#: docs/results.md).
#: The beam's lines deal early (with every card known a deal costs nothing), which a player who
#: cannot see the stock pays for. Every other variant's samples are solved by a beam
#: ``SAMPLE_WIDTH`` wide.
BEST_FIRST_VARIANTS = frozenset(
    {
        "spider-1suit",
        "spider-2suit",
        "spider-relaxed-1suit",
        "spider-relaxed-2suit",
        "pysol-spider-1suit",
        "pysol-spider-2suit",
        "spiderette-4suit",
        "scorpion",
    }
)


def default_budget(variant: Variant) -> tuple[int, int]:
    """``(width, nodes)`` of the samples' searches when none is given, for ``variant``."""
    if variant.name in BEST_FIRST_VARIANTS:
        return 0, BEST_FIRST_NODES
    return SAMPLE_WIDTH, SAMPLE_NODES


def sample_solver(
    variant: Variant,
    width: int | None = None,
    nodes: int | None = None,
    stage_nodes: int | None = None,
    scale: int = 1,
) -> Any:
    """The solver of one sample's search, as the expert makes it: a beam ``width`` wide, one
    try (:class:`spider_env.search.beam.BeamSolver`), or best-first search for ``width=0``
    (:class:`spider_env.search.solver.Solver`, ``stage_nodes`` per stage), of ``nodes``
    positions; ``None`` takes the default (:func:`default_budget` of ``variant`` for both, or
    the nodes of the width given); the budget and the width times ``scale``."""
    from spider_env.search.beam import BeamSolver
    from spider_env.search.solver import Solver

    w, n = default_budget(variant)
    if width is not None:
        w, n = width, SAMPLE_NODES if width else BEST_FIRST_NODES
    if nodes is not None:
        n = nodes
    if w:
        return BeamSolver(variant, n * scale, width=w * scale, tries=1)
    return Solver(variant, n * scale, stage_nodes=stage_nodes)


BUDGET_KEYS = ("samples", "nodes", "width", "stage_nodes")


def parse_expert_spec(spec: str) -> dict[str, int]:
    """The budget of an agent spec ``expert`` or ``expert:samples=8,nodes=60000,width=20``
    (keys ``samples``, ``nodes``, ``width``, ``stage_nodes``); ``ValueError`` naming what is
    wrong."""
    return parse_budget_spec(spec, "expert", BUDGET_KEYS)


class ExpertAgent(BaseAgent):
    """Solver-backed sampling player (see the module docstring).

    Args:
        variant: the game (or ``None``: read from ``info["variant"]``).
        seed: the RNG seed of the samples.
        samples: layouts drawn per decision (at least 1); with no unseen card
            (Simple Simon, or late in a game) one sample is searched with ``samples`` times
            the nodes.
        nodes: positions per search: generated by the beam, stored by best-first search.
        width: the beam's width per search (:class:`spider_env.search.beam.BeamSolver`, one
            try), or 0 for best-first search (:class:`spider_env.search.solver.Solver`, the
            expert's solver before the beam).
        stage_nodes: positions per stage of a best-first search (default: the solver's
            choice).
    Each an int (``TypeError`` otherwise) in its range (``ValueError`` otherwise).
    """

    name = "expert"

    def __init__(
        self,
        variant: Variant | str | None = None,
        seed: int | None = None,
        *,
        samples: int = DEFAULT_SAMPLES,
        nodes: int | None = None,
        width: int | None = None,
        stage_nodes: int | None = None,
    ) -> None:
        super().__init__(variant, seed)
        self.samples = check_int("samples", samples, 1)
        #: as given (``None``: the variant's default, :func:`default_budget`)
        self.nodes = check_optional_int("nodes", nodes, 1)
        self.width = check_optional_int("width", width, 0)
        if self.width is not None and self.width * self.samples > MAX_WIDTH:
            raise ValueError(
                f"samples x width must be at most {MAX_WIDTH:,} (the widest beam), got "
                f"{self.samples} x {self.width}"
            )
        self.stage_nodes = check_optional_int("stage_nodes", stage_nodes, 1)
        if self.stage_nodes is not None and self.width:
            raise ValueError("stage_nodes is a budget of best-first search: give it with width=0")
        top = max(SAMPLE_NODES, BEST_FIRST_NODES) if self.nodes is None else self.nodes
        check_budget(top, None)
        if top * self.samples > MAX_NODES:
            raise ValueError(
                f"samples x nodes must be at most {MAX_NODES:,} (the positions of one search "
                f"without hidden cards), got {self.samples} x {top:,}"
            )
        given = [
            f"{key}={value}"
            for key, value, default in (
                ("samples", self.samples, DEFAULT_SAMPLES),
                ("nodes", self.nodes, None),
                ("width", self.width, None),
                ("stage_nodes", self.stage_nodes, None),
            )
            if value != default
        ]
        if given:
            self.name = "expert:" + ",".join(given)
        self._solver: Any = None
        self._big: Any = None  # the solver for positions with no unseen card
        self._fallback = LookaheadAgent(variant, seed)
        self._pool: list[_Sample] = []
        self._decisions = 0
        self.searches = 0  # searches run since the last reset (for reports)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._fallback.reset(seed)
        self._pool = []
        self._decisions = 0
        self.searches = 0

    # ------------------------------------------------------------------------------------
    def _solver_for(self, v: Variant) -> Any:
        if self._solver is None:
            try:
                from spider_env.fast import load_kernel

                load_kernel()
                import spider_env.search.solver  # noqa: F401
            except ImportError as exc:
                raise ImportError(
                    f"the expert agent needs numba (the compiled core): {exc}"
                ) from None
            self._solver = self._new_solver(v, 1)
        return self._solver

    def _new_solver(self, v: Variant, scale: int) -> Any:
        """The solver of one search, its budget (and beam width) times ``scale``."""
        return sample_solver(v, self.width, self.nodes, self.stage_nodes, scale)

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
        from spider_env.search.solver import line_wins, without_undo

        solver = self._solver_for(v)
        hidden = len(view.unseen_cards())
        want = 1 if hidden == 0 else self.samples
        self._decisions += 1
        kept: list[_Sample] = []
        for sample in self._pool:
            changed = self._repair(sample.st, view)
            if changed is None:
                continue  # cannot be made to agree with the table: draw a new one
            if changed:
                sample.fresh = True
                if sample.won and not line_wins(
                    solver.pr, sample.st, np.asarray(sample.line, dtype=np.int64)
                ):
                    sample.line, sample.won = [], False
            kept.append(sample)
        while len(kept) < want:
            st = view.to_state(self.rng if hidden else None)
            kept.append(_Sample(solver.game.from_state(without_undo(st))))
        self._pool = kept[:want]
        legal_set = set(legal)
        deal_lo = v.n_move_actions
        deal_hi = deal_lo + v.n_deal_actions
        votes: dict[int, float] = {}
        for sample in self._pool:
            stale = not sample.line or sample.line[0] not in legal_set
            retry = sample.fresh or self._decisions - sample.searched >= RETRY_EVERY
            if stale if sample.won else retry:
                sample.line, sample.won = self._search(v, sample.st, hidden == 0)
                sample.fresh = False
                sample.searched = self._decisions
            if sample.won and sample.line and sample.line[0] in legal_set:
                # a line already being followed counts more: two samples whose lines differ
                # must not take turns (each undoing the other's move)
                weight = 1.0 if sample.searched == self._decisions else 1.0 + INCUMBENT_BONUS
                votes[sample.line[0]] = votes.get(sample.line[0], 0.0) + weight
        if not votes:
            return int(self._fallback.act(obs, mask, info))
        moves = {a: w for a, w in votes.items() if not deal_lo <= a < deal_hi}
        if moves:
            # A sample knows its stock: its line deals when the cards it knows come out well,
            # which the player cannot know. So a deal needs every winning line to agree.
            votes = moves
        best = max(votes.values())
        return min(a for a, w in votes.items() if w == best)

    def _repair(self, st: np.ndarray, view: TableView) -> bool | None:
        """Make sample ``st`` show what ``view`` shows: each face-up card that differs (a card
        just turned up or dealt) is swapped with a copy of the card the view shows from one of
        the sample's hidden slots, chosen at random. ``True`` if anything changed, ``False`` if
        it agreed already, ``None`` if it cannot agree (the sample is then replaced)."""
        game = self._solver.game
        if game.completed(st) != view.completed:
            return None
        wrong: list[tuple[int, int]] = []  # (slot, card the view shows there)
        for c, (d, up) in enumerate(zip(view.down, view.up)):
            cards = game.column(st, c)
            if len(cards) != d + len(up) or game.face_down(st, c) != d:
                return None
            for i, card in enumerate(up, start=d):
                if cards[i] != card:
                    wrong.append((game.column_slot(c, i), card))
        piles = [j for j in range(len(game.variant.stock)) if len(game.pile(st, j))]
        if len(piles) != view.deals_left:
            return None
        tops = view.pile_tops
        if tops is not None:
            for j in piles:
                if game.pile(st, j)[0] != tops[j]:
                    wrong.append((game.pile_slot(j, 0), tops[j]))
        if not wrong:
            return False
        hidden = game.hidden_slots(st)
        for slot, card in wrong:
            where = [h for h in hidden if st[h] == card]
            if not where:
                return None
            game.swap(st, where[int(self.rng.integers(len(where)))], slot)
        return True

    def _search(self, v: Variant, st: np.ndarray, alone: bool) -> tuple[list[int], bool]:
        """Solve one sample: its winning line (or ``[]``) and whether one was found."""
        solver = self._solver
        if alone and self.samples > 1:
            if self._big is None:
                self._big = self._new_solver(v, self.samples)
            solver = self._big
        self.searches += 1
        code, line = solver.run(st.copy())
        if code == 0:
            return list(line), True
        return [], False

    def _advance(self, action: int) -> None:
        """Play ``action`` in every sample; keep the lines that began with it. An undo (the
        only legal action at times, in variants with undo) takes back a move the samples do
        not remember: they are dropped and drawn again at the next decision."""
        if not self._pool:
            return
        v = self._solver.variant
        if action >= v.n_actions:  # the undo action of the env's variant (none in the solver's)
            self._pool = []
            return
        game = self._solver.game
        for sample in self._pool:
            game.apply_inplace(sample.st, action)
            if sample.line and sample.line[0] == action:
                sample.line = sample.line[1:]
            else:
                sample.line = []


class _Sample:
    """One layout of the unseen cards: its state vector, the line its search found (and
    whether it wins), whether its cards changed since, when it was last searched."""

    __slots__ = ("fresh", "line", "searched", "st", "won")

    def __init__(self, st: np.ndarray) -> None:
        self.st = st
        self.line: list[int] = []
        self.won = False
        self.fresh = True
        self.searched = 0


__all__ = [
    "BEST_FIRST_VARIANTS",
    "BUDGET_KEYS",
    "ExpertAgent",
    "default_budget",
    "parse_expert_spec",
    "sample_solver",
]
