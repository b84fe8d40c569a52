"""The planner: a hidden-information player that chooses among the positions it can reach
before the next card turns up, scored over sampled layouts of the unseen cards.

What it sees is what a player sees: the observation and the mask. At a decision with no plan
left it:

1. draws ``samples`` layouts of the unseen cards (face-down cards and the stock), each a uniform
   draw of the cards not in view (:meth:`~spider_env.observation.view.TableView.to_state`);
2. lists every distinct position it can reach by moves that turn no card up, and the
   irreversible *events* that end them: a move that turns a card up, a deal
   (:func:`spider_env.search.plan.closure`; those moves never touch an unseen card, so the list
   is the same for every layout). Each event, with the moves that lead to it, is a candidate;
3. scores the candidates over the samples (the event played on each sample, then a short beam
   search on it: 1.0 if it wins, else a graded value of the best position it reached,
   :func:`spider_env.search.plan.beam_value`), the best ``candidates`` of them by the beam's
   static rank (or, with ``screen=N``, by one cheap score each of the best N), spending
   ``evals`` scores by successive halving: every candidate is scored on a few samples, the
   better half on more, and so on (so the scores go where the choice is close; ``bandit=1``:
   UCB1 instead; ``late=L``: L times the scores once the stock is empty; ``blind=K``: once the
   stock is empty, the candidates tied at the top rolled out K times each by a player that
   sees only what a player sees, :func:`spider_env.search.plan.blind_value`). With
   ``ply2=K`` the two best are then compared one decision further: on ``K`` samples each plays
   its event, and the next decision's best candidates are scored on fresh layouts of the
   cards still unseen (what a player would know then, not the sample's cards);
4. plays the best candidate's moves and event, and plans again once the event has shown a new
   card. A decision with one candidate costs no score; a deal is a candidate only when no
   candidate turns a card up (``hold=1``, the default; with ``hold=0`` deals compete with the
   reveals on their scores).

A table that can never be dealt on again while the stock holds cards (a deal needs every
column filled, and fewer cards than columns are left: late in a 1-suit game, one run completed
too many) is lost: such a candidate scores 0 (:func:`spider_env.search.plan.starved`). Where a
closure runs out of room before it reaches a deal (many empty columns and a stock left: the ways
to fill them are too many to list), the empty columns are filled one card at a time, so that
the deal can come (:meth:`PlannerAgent._fill_for_deal`).

A whole closure (nothing left out) without a win or an event shows the game lost: no card will
turn up and no deal come, whatever is played. The planner then stops searching and the
lookahead agent plays the game out. With ``cap=C`` (on a game of four suits), once the scores of
a game have generated C million positions, its later decisions score with the base budget (at
most :data:`DEFAULT_EVALS` scores, beams at most :data:`DEFAULT_WIDTH` wide of
:data:`DEFAULT_NODES` positions), so that a long game stays within its minute.

The budget (``evals``, ``candidates`` and the beam of a score) has a larger default on a game
of four suits, whose short beams rarely find a win, with a cap per game, and on a game of two
suits (four times the scores); a game of one suit screens its candidates and gives a decision
made with the stock empty four times the scores (:func:`default_budget`).

With nothing unseen (Simple Simon, or the end of a game) the beam solver
(:class:`spider_env.search.beam.BeamSolver`) searches the position itself and its winning line
is played; where no candidate exists (or no win was found) the lookahead agent moves.

Determinism: all randomness is the agent's RNG (seeded by ``reset(seed)``) and what it keeps is
a function of the observations, so the same seed and the same game give the same moves; nothing
hidden is read, so permuting the face-down cards and the stock changes no choice
(``tests/test_planner.py`` checks both).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from spider_env.core.actions import deal_ids, move_id
from spider_env.core.state import State
from spider_env.core.variants import Variant, get_variant
from spider_env.observation.view import TableView
from spider_env.search.budget import MAX_NODES, check_budget

from .base import BaseAgent, parse_budget_spec
from .lookahead import LookaheadAgent

#: Scores spent per planned decision (successive halving over the candidates).
DEFAULT_EVALS = 48
#: Candidates kept for scoring, after a first sort by the beam's static rank.
DEFAULT_CANDIDATES = 12
#: The beam of one score: width, positions generated, depths.
DEFAULT_WIDTH = 2
DEFAULT_NODES = 4000
DEFAULT_DEPTH = 200
#: A choice among deals only (where to deal from) gets this many times the scores, and twice
#: the candidates.
DEAL_FACTOR = 4
#: Candidates screened by one cheap score each on a game of one suit (``screen``).
DEFAULT_SCREEN = 256
#: The scores' factor of a decision made with the stock empty on a game of one suit (``late``).
DEFAULT_LATE = 4
#: Positions of one closure at most.
DEFAULT_CLOSURE = 4000
#: A closure that found no event and ran out of room is listed again this many times larger.
WIDE_CLOSURE = 16
#: Millions of positions the scores of one game generate before its later decisions score
#: with the base budget (``cap``; a game of four suits; about a million a second here).
DEFAULT_CAP = 45
#: Positions the beam solver generates when nothing is unseen.
DEFAULT_EXACT = 2_000_000
#: The second ply (``ply2``): the next decision's candidates scored, and the layouts each.
PLY2_CANDIDATES = 3
PLY2_SAMPLES = 3
#: The cheap beam of a screening score (``screen``): width and positions generated (each at
#: most the budget's own).
SCREEN_WIDTH = 1
SCREEN_NODES = 500
#: Positions of the closure of a worst-case score (``worst``).
WORST_CLOSURE = 500
#: The blind rollouts (``blind``): candidates tied at the top of the halving rolled out at most,
#: the positions of a rollout's closures at most, and the draws of a card a rank averages.
BLIND_TOP = 4
BLIND_CLOSURE = 500
BLIND_DRAWS = 2
#: Decisions between two searches that found nothing (a position with nothing unseen without a
#: win found, a closure without an event even listed 16 times larger); the wait doubles with
#: every search in a row that finds nothing, up to :data:`RETRY_MAX`.
RETRY_EVERY = 5
RETRY_MAX = 80

#: The scores' budget of a game of four suits (:func:`default_budget`): a 4-suit game rarely
#: offers a won line to a short beam, so the choice rests on many graded scores; a game takes
#: about 18 seconds (17.9 on average over 4-suit deals 0..199 with the cap; the bound: a minute).
#: ``cap``: at about a million positions a second here, a game's scores reach the cap after
#: about 42 seconds (without it, the longest game of deals 0..199 took 108 s).
FOUR_SUITS_BUDGET: dict[str, int] = {
    "evals": 768,
    "candidates": 24,
    "width": 4,
    "nodes": 16_000,
    "cap": DEFAULT_CAP,
}
#: The budget of a game of one suit beyond :data:`BUDGET`'s: the screen (measured better on
#: 1-suit deals; not on 2 suits, nor on 4: 24 against 25 of the ladder's 200), and
#: four times the scores once the stock is empty (late decisions on one suit mostly score wins,
#: so these scores are cheap).
ONE_SUIT_BUDGET: dict[str, int] = {"screen": DEFAULT_SCREEN, "late": DEFAULT_LATE}
#: The scores' budget of a game of two suits: four times :data:`BUDGET`'s scores and twice its
#: candidates (60.2% of 2-suit development deals 5000..5399 against 55.8%, then 58.8% of the
#: ladder's deals 0..999 against 53.8%, at twice the time: about 4.7 seconds a game;
#: docs/planner.md, "Four times the scores on two suits").
TWO_SUITS_BUDGET: dict[str, int] = {
    "evals": 4 * DEFAULT_EVALS,
    "candidates": 2 * DEFAULT_CANDIDATES,
}
#: The keys whose default depends on the game (:func:`default_budget`).
GAME_KEYS = tuple(dict.fromkeys((*FOUR_SUITS_BUDGET, *TWO_SUITS_BUDGET, *ONE_SUIT_BUDGET)))

#: The budget keys of ``planner:KEY=N,...`` and their (default, smallest, largest) values
#: (for the keys of :data:`GAME_KEYS`: the base that :data:`ONE_SUIT_BUDGET`,
#: :data:`TWO_SUITS_BUDGET` and :data:`FOUR_SUITS_BUDGET` change for their games).
BUDGET: dict[str, tuple[int, int, int]] = {
    "evals": (DEFAULT_EVALS, 1, 100_000),
    "candidates": (DEFAULT_CANDIDATES, 1, 1000),
    "width": (DEFAULT_WIDTH, 1, 1000),
    "nodes": (DEFAULT_NODES, 1, 10_000_000),
    "depth": (DEFAULT_DEPTH, 1, 10_000),
    "closure": (DEFAULT_CLOSURE, 1, 1_000_000),
    "exact": (DEFAULT_EXACT, 1, MAX_NODES),
    "deals": (1, 0, 2),
    "hold": (1, 0, 1),
    "ply2": (0, 0, 1000),
    "worst": (0, 0, 10_000),
    "screen": (0, 0, 100_000),
    "late": (1, 1, 100),
    "bandit": (0, 0, 1),
    "cap": (0, 0, 1_000_000),
    "blind": (0, 0, 1000),
    "power": (1, 1, 8),
}
BUDGET_KEYS = tuple(BUDGET)


def parse_planner_spec(spec: str) -> dict[str, int]:
    """The budget of an agent spec ``planner`` or ``planner:evals=96,width=3`` (keys
    :data:`BUDGET_KEYS`); ``ValueError`` naming what is wrong."""
    return parse_budget_spec(spec, "planner", BUDGET_KEYS)


def default_budget(variant: Variant | str) -> dict[str, int]:
    """The planner's budget when none is given, for ``variant`` (a :class:`Variant` or its
    name; ``ValueError``/``TypeError`` otherwise, from :func:`get_variant`): the defaults of
    :data:`BUDGET`, with :data:`FOUR_SUITS_BUDGET` for a game of four suits,
    :data:`TWO_SUITS_BUDGET` for a game of two and :data:`ONE_SUIT_BUDGET` for a game of one."""
    v = get_variant(variant)
    out = {key: default for key, (default, _, _) in BUDGET.items()}
    if v.suits == 4:
        out.update(FOUR_SUITS_BUDGET)
    elif v.suits == 2:
        out.update(TWO_SUITS_BUDGET)
    elif v.suits == 1:
        out.update(ONE_SUIT_BUDGET)
    return out


def _check(name: str, value: object) -> int:
    _, low, high = BUDGET[name]
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or not low <= value <= high
    ):
        raise ValueError(f"{name} must be an int in {low}..{high:,}, got {value!r}")
    return int(value)


def sharpen(scores: np.ndarray, power: int) -> np.ndarray:
    """``scores`` raised to ``power`` before they are averaged (``power=P``; ``scores``
    itself when P is 1; ``worst``'s term is added first). A win (1.0) stays 1.0 and a graded
    value (below 1) falls further below it, and for P > 1 the mean prefers the candidate whose
    scores vary (with P = 2, the mean of the squares is the square of the mean plus the
    variance)."""
    return scores if power == 1 else scores**power


def halving_schedule(n: int, evals: int) -> list[tuple[int, int]]:
    """Successive halving of ``n`` candidates within ``evals`` scores: ``(candidates, samples
    each)`` per round, every round the better half of the last (at least one sample each)."""
    if n <= 1:
        return []
    rounds = max(1, math.ceil(math.log2(n)))
    out = []
    alive = n
    for _ in range(rounds):
        out.append((alive, max(1, evals // (rounds * alive))))
        if alive <= 2:
            break
        alive = (alive + 1) // 2
    return out


class Decision(NamedTuple):
    """One decision the planner weighs: its search (:class:`~spider_env.search.plan.PlanSearch`),
    the slots of the cards it cannot see, its candidates (the closure node each is reached at,
    ``ev_node``, and the event that ends it, ``ev_action``), and whether every candidate is a
    deal (``dealing``: where to deal from). Made by :meth:`of`; its methods are the search's,
    with the decision's own arguments."""

    search: Any
    slots: np.ndarray
    ev_node: np.ndarray
    ev_action: np.ndarray
    dealing: bool

    @classmethod
    def of(
        cls, search: Any, slots: np.ndarray, ev_node: np.ndarray, ev_action: np.ndarray
    ) -> Decision:
        """The decision among the candidates ``ev_node``, ``ev_action`` of ``search``."""
        dealing = bool(np.isin(ev_action, deal_ids(search.variant)).all())
        return cls(search, slots, ev_node, ev_action, dealing)

    def evaluate(
        self, values: np.ndarray, cand: np.ndarray, sample: np.ndarray, **beam: int
    ) -> np.ndarray:
        """The score of candidate ``cand[i]`` on layout ``values[sample[i]]``, for each ``i``
        (:meth:`PlanSearch.evaluate <spider_env.search.plan.PlanSearch.evaluate>`)."""
        scores: np.ndarray = self.search.evaluate(
            self.slots, values, self.ev_node, self.ev_action, cand, sample, **beam
        )
        return scores

    def worst(
        self, values: np.ndarray, cand: np.ndarray, sample: np.ndarray, positions: int
    ) -> np.ndarray:
        """The same pairs' worst-case scores (:meth:`PlanSearch.worst
        <spider_env.search.plan.PlanSearch.worst>`)."""
        scores: np.ndarray = self.search.worst(
            self.slots, values, self.ev_node, self.ev_action, cand, sample, positions
        )
        return scores

    def blind(
        self,
        values: np.ndarray,
        cand: np.ndarray,
        sample: np.ndarray,
        seeds: np.ndarray,
        **rollout: Any,
    ) -> np.ndarray:
        """The same pairs' blind rollouts (:meth:`PlanSearch.blind
        <spider_env.search.plan.PlanSearch.blind>`)."""
        scores: np.ndarray = self.search.blind(
            self.slots, values, self.ev_node, self.ev_action, cand, sample, seeds, **rollout
        )
        return scores

    def static(self, values: np.ndarray) -> np.ndarray:
        """Each candidate's static rank on the layouts ``values`` (:meth:`PlanSearch.static
        <spider_env.search.plan.PlanSearch.static>`): after its event, or before it for a deal
        (what a deal brings is a guess; the position it is made from is not)."""
        events = np.full_like(self.ev_action, -1) if self.dealing else self.ev_action
        keys: np.ndarray = self.search.static(self.slots, values, self.ev_node, events)
        return keys


class PlannerAgent(BaseAgent):
    """Plans over what could be under the cards (see the module docstring).

    Args:
        variant: the game (or ``None``: read from ``info["variant"]``).
        seed: the RNG seed of the samples.
        evals: scores per planned decision (each a short beam search on one sample).
        candidates: candidates scored at most (the best by the beam's static rank, or by the
            screen).
        width, nodes, depth: the beam of one score.
        ``evals``, ``candidates``, ``width``, ``nodes``, ``screen``, ``late`` and ``cap`` left
        ``None`` take the game's default (:func:`default_budget`: more for four suits, with a
        cap, a screen and ``late=4`` for one).
        closure: positions listed per decision at most.
        exact: positions the beam solver generates when nothing is unseen.
        deals, hold: whether the scores' beams may deal, whether a deal waits until nothing
            turns a card up (see :data:`BUDGET`).
        ply2: 0, or the samples of a second ply between the two best candidates (the next
            decision scored as the player would see it, :meth:`_second_ply`).
        worst: 0, or W: every score plus W/100 times the candidate's worst case (the cards
            still unseen after its event blanked, :meth:`PlanSearch.worst
            <spider_env.search.plan.PlanSearch.worst>`).
        screen: 0, or N: with more than ``candidates`` candidates, the best N by the static
            rank are scored once each by a cheap beam (:data:`SCREEN_WIDTH` wide,
            :data:`SCREEN_NODES` positions, on one layout), and the best ``candidates`` of
            those go on to the halving (:meth:`_screen`); 0: the static rank alone chooses.
        late: L times ``evals`` for a decision made with the stock empty (1: no more).
        bandit: 0 (successive halving), or 1: UCB1 hands out the scores (:meth:`_bandit`).
        cap: 0, or C: once the scores of a game have generated C million positions, its later
            decisions spend at most :data:`DEFAULT_EVALS` scores (four times that where to
            deal from), each a beam at most :data:`DEFAULT_WIDTH` wide of
            :data:`DEFAULT_NODES` positions (:data:`DEFAULT_CAP` on four suits, else 0).
        blind: 0, or K: at a decision made with the stock empty, the candidates tied at the top
            of the halving's last round (at most :data:`BLIND_TOP`) are rolled out on K fresh
            layouts each by a player blind to the unseen cards, and the best mean is played
            (:meth:`_blind`).
        power: P: every score is raised to the power P before the candidates' scores are
            averaged (1: as they are; 2 rewards a candidate whose scores vary, a win more
            against the graded values below it; :func:`sharpen`).
    All ``ValueError`` outside their ranges (:data:`BUDGET`).

    Counters since the last :meth:`reset` (for reports): ``decisions`` (planned decisions),
    ``scores`` (scores spent, rollouts included), ``generated`` (positions the scores' beams
    and the rollouts' closures generated) and ``blinds`` (decisions that rolled out).
    """

    name = "planner"

    def __init__(
        self,
        variant: Variant | str | None = None,
        seed: int | None = None,
        *,
        evals: int | None = None,
        candidates: int | None = None,
        width: int | None = None,
        nodes: int | None = None,
        depth: int = DEFAULT_DEPTH,
        closure: int = DEFAULT_CLOSURE,
        exact: int = DEFAULT_EXACT,
        deals: int = 1,
        hold: int = 1,
        ply2: int = 0,
        worst: int = 0,
        screen: int | None = None,
        late: int | None = None,
        bandit: int = 0,
        cap: int | None = None,
        blind: int = 0,
        power: int = 1,
    ) -> None:
        super().__init__(variant, seed)
        given = {
            "evals": evals,
            "candidates": candidates,
            "width": width,
            "nodes": nodes,
            "depth": depth,
            "closure": closure,
            "exact": exact,
            "deals": deals,
            "hold": hold,
            "ply2": ply2,
            "worst": worst,
            "screen": screen,
            "late": late,
            "bandit": bandit,
            "cap": cap,
            "blind": blind,
            "power": power,
        }
        #: the budget as given (the keys of :data:`GAME_KEYS` left ``None`` take the game's
        #: default, :func:`default_budget`)
        self.given = {key: _check(key, value) for key, value in given.items() if value is not None}
        check_budget(self.given["exact"], None)
        named = [f"{k}={v}" for k, v in self.given.items() if k in GAME_KEYS or v != BUDGET[k][0]]
        if named:
            self.name = "planner:" + ",".join(named)
        #: the budget played with (known with the game: at construction or the first act)
        self.budget: dict[str, int] = {}
        if self.variant is not None:
            self.budget = default_budget(self.variant) | self.given
        self._fallback = LookaheadAgent(variant, seed)
        self._search: Any = None
        self._exact: Any = None
        self._wide: Any = None
        self._inner: Any = None
        self._plan: list[int] = []
        self._stuck = 0  # decisions left before searching again where a search found nothing
        self._wait = RETRY_EVERY  # the next such wait (doubles while searches find nothing)
        self._dead = False  # a closure showed that the game is lost: no more searches
        self.decisions = 0  # planned decisions since the last reset (for reports)
        self.scores = 0  # scores spent since the last reset
        self.generated = 0  # positions the scores' beams generated since the last reset
        self.blinds = 0  # decisions that rolled out tied candidates since the last reset

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._fallback.reset(seed)
        self._plan = []
        self._stuck = 0
        self._wait = RETRY_EVERY
        self._dead = False
        self.decisions = 0
        self.scores = 0
        self.generated = 0
        self.blinds = 0

    def replan(self) -> None:
        """Drop the plan being followed: the next :meth:`act` plans from what it is shown
        (for a caller whose table did not follow the agent's moves, e.g. ``play``'s hints)."""
        self._plan = []
        self._dead = False

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        # buffers: made again on first use
        state["_search"] = state["_exact"] = state["_wide"] = state["_inner"] = None
        return state

    # ------------------------------------------------------------------------------------
    def _generated(self) -> int:
        """Positions generated by the scores of the searches made so far."""
        return sum(s.generated for s in (self._search, self._wide, self._inner) if s is not None)

    def _searches(self, v: Variant, wide: bool = False) -> Any:
        """The searches of the budget, made on first use (``wide``: with :data:`WIDE_CLOSURE`
        times the closure)."""
        if (self._wide if wide else self._search) is None:
            try:
                from spider_env.search.plan import PlanSearch
            except ImportError as exc:  # pragma: no cover - numba missing
                raise ImportError(f"the planner needs numba (the compiled core): {exc}") from None
            b = self.budget
            search = PlanSearch(
                v,
                closure_nodes=b["closure"] * (WIDE_CLOSURE if wide else 1),
                width=b["width"],
                nodes=b["nodes"],
                max_depth=b["depth"],
                deals=b["deals"],
            )
            if wide:
                self._wide = search
            else:
                self._search = search
        return self._wide if wide else self._search

    def act(self, obs: Any, mask: np.ndarray, info: Mapping[str, Any] | None = None) -> int:
        v = self._variant(info)
        if not self.budget:
            self.budget = default_budget(v) | self.given
        legal = self._legal(mask, v)
        if self._plan and self._plan[0] in legal:
            return self._plan.pop(0)
        self._plan = []
        if len(legal) == 1:
            return legal[0]
        before = self._generated()
        plan = self._make_plan(v, obs, mask, info, legal)
        self.generated += self._generated() - before
        if not plan or plan[0] not in legal:  # pragma: no cover - a plan is made of legal ids
            raise AssertionError(f"the planner planned {plan} where {legal} are legal")
        self._plan = plan[1:]
        return plan[0]

    def _make_plan(
        self,
        v: Variant,
        obs: Any,
        mask: np.ndarray,
        info: Mapping[str, Any] | None,
        legal: list[int],
    ) -> list[int]:
        from spider_env.search.solver import without_undo

        if self._dead:
            return [int(self._fallback.act(obs, mask, info))]
        search = self._searches(v)
        game = search.game
        view = TableView.from_obs(v, obs)
        root = game.from_state(without_undo(self._guess(view)))
        slots = np.asarray(game.hidden_slots(root), dtype=np.int64)
        if slots.size == 0:
            return self._exact_plan(v, root) or [int(self._fallback.act(obs, mask, info))]
        won, ev_node, ev_action = search.closure(root)
        if won < 0 and ev_node.size == 0 and search.full:
            # nothing found in a closure that ran out of room: look further before giving up
            # (and, if that finds nothing either, not again for a while: _give_up)
            if self._stuck > 0:
                self._stuck -= 1
            else:
                search = self._searches(v, wide=True)
                won, ev_node, ev_action = search.closure(root)
                if won < 0 and ev_node.size == 0:
                    self._give_up()
        if won >= 0:
            return search.path(won)
        if ev_node.size == 0:
            # a whole closure without a win or an event: no move will ever turn a card up or
            # deal again, so the game is lost; the lookahead agent plays it out
            self._dead = not search.full
            fill = self._fill_for_deal(game, root) if search.full else []
            return fill or [int(self._fallback.act(obs, mask, info))]
        self._wait = RETRY_EVERY  # a search found something: the waits start again
        self.decisions += 1
        ev_node, ev_action = self._held(v, ev_node, ev_action)
        best = 0
        if ev_node.size > 1:
            best = self._choose(Decision.of(search, slots, ev_node, ev_action), root)
        return search.path(int(ev_node[best])) + [int(ev_action[best])]

    def _guess(self, view: TableView) -> State:
        """The table at a decision, its unseen cards one uniform draw (``view.to_state`` with
        the agent's RNG). With :meth:`_draw`, the one place the planner draws what it cannot
        see (``benchmarks/oracle.py`` overrides both to tell it part of the truth)."""
        return view.to_state(self.rng)

    def _draw(self, known: np.ndarray) -> np.ndarray:
        """One more layout of the unseen cards: a uniform permutation of ``known`` (their
        values in the hidden slots' order: face-down cards column by column, then the stock)."""
        return self.rng.permutation(known)

    def _choose(self, d: Decision, root: np.ndarray) -> int:
        """The index of the best candidate event of ``d`` (successive halving over the
        samples)."""
        from spider_env.fast.game import deals_left

        b = self.budget
        search, slots = d.search, d.slots
        known = root[slots]
        n = d.ev_node.size
        dealing = d.dealing
        evals, keep = b["evals"], b["candidates"]
        if dealing:
            # where to deal from: rarer than a reveal, and it decides more
            evals, keep = evals * DEAL_FACTOR, keep * 2
        elif b["late"] > 1 and deals_left(search.pr, root) == 0:
            evals *= b["late"]
        beam: dict[str, int] = {}
        if b["cap"] and self.generated >= b["cap"] * 1_000_000:
            # the game has spent its cap: the base budget's scores from here on
            evals = min(evals, DEFAULT_EVALS * (DEAL_FACTOR if dealing else 1))
            beam = {
                "width": min(DEFAULT_WIDTH, search.width),
                "nodes": min(DEFAULT_NODES, search.nodes),
            }
        if b["bandit"]:
            schedule = []
            total = max(1, evals - min(n, keep) + 1)  # the most scores one candidate can get
        else:
            schedule = halving_schedule(min(n, keep), evals)
            total = sum(each for _, each in schedule)
        values = np.empty((total, slots.size), dtype=root.dtype)
        values[0] = known
        for s in range(1, total):
            values[s] = self._draw(known)
        alive = self._first_sort(d, values[: min(total, 4)], max(keep, b["screen"]))
        if alive.size > keep:
            alive = self._screen(d, values, alive)[:keep]
        if b["bandit"]:
            return self._bandit(d, values, alive[:keep], evals, beam)
        sums = np.zeros(n)
        counts = np.zeros(n)
        first = 0
        for size, each in schedule:
            alive = alive[:size]
            samples = np.arange(first, first + each)
            first += each
            pair_cand = np.repeat(alive, each).astype(np.int64)
            pair_sample = np.tile(samples, alive.size).astype(np.int64)
            scores = d.evaluate(values, pair_cand, pair_sample, **beam)
            if b["worst"]:
                scores += (b["worst"] / 100) * d.worst(
                    values, pair_cand, pair_sample, WORST_CLOSURE
                )
            scores = sharpen(scores, b["power"])
            self.scores += scores.size
            np.add.at(sums, pair_cand, scores)
            np.add.at(counts, pair_cand, 1)
            means = sums[alive] / counts[alive]
            alive = alive[np.argsort(-means, kind="stable")]
        if b["blind"] and not dealing and deals_left(search.pr, root) == 0:
            tied = self._tied(sums, counts, alive)
            if len(tied) > 1:
                return self._blind(d, known, tied)
        if b["ply2"] and not dealing and alive.size >= 2:
            return self._second_ply(d, known, alive[:2])
        return int(alive[0])

    @staticmethod
    def _tied(sums: np.ndarray, counts: np.ndarray, alive: np.ndarray) -> list[int]:
        """The candidates tied at the top of the halving's last round (the best mean among the
        candidates scored most), at most :data:`BLIND_TOP`, the halving's choice first."""
        first = int(alive[0])  # the last round's best: scored most, the best mean
        top = sums[first] / counts[first]
        others = [
            int(k)
            for k in np.flatnonzero(counts == counts[first])
            if k != first and sums[k] / counts[k] >= top - 1e-9
        ]
        return [first, *others[: BLIND_TOP - 1]]

    def _blind(self, d: Decision, known: np.ndarray, tied: list[int]) -> int:
        """Of the ``tied`` candidates (:meth:`_tied`), the one whose ``blind`` rollouts on
        fresh layouts score best (:meth:`PlanSearch.blind
        <spider_env.search.plan.PlanSearch.blind>`: a player that sees only what a player
        sees plays each layout out); ties keep the order."""
        K = self.budget["blind"]
        values = np.empty((K, d.slots.size), dtype=known.dtype)
        for s in range(K):
            values[s] = self._draw(known)
        cand = np.asarray(tied, dtype=np.int64)
        pair_cand = np.repeat(cand, K)
        pair_sample = np.tile(np.arange(K, dtype=np.int64), cand.size)
        seeds = np.tile(self.rng.integers(0, 2**31 - 1, size=K), cand.size).astype(np.int64)
        scores = d.blind(
            values, pair_cand, pair_sample, seeds,
            positions=BLIND_CLOSURE, draws=BLIND_DRAWS, hold=bool(self.budget["hold"]),
        )  # fmt: skip
        self.scores += scores.size
        self.blinds += 1
        totals = scores.reshape(cand.size, K).mean(axis=1)
        return int(cand[int(np.argmax(totals))])

    def _screen(self, d: Decision, values: np.ndarray, alive: np.ndarray) -> np.ndarray:
        """``alive`` sorted by one cheap score each (a beam :data:`SCREEN_WIDTH` wide of
        :data:`SCREEN_NODES` positions, on the first layout; ties keep their order)."""
        pair_cand = alive.astype(np.int64)
        pair_sample = np.zeros(alive.size, dtype=np.int64)
        search = d.search
        scores = d.evaluate(
            values, pair_cand, pair_sample,
            width=min(SCREEN_WIDTH, search.width), nodes=min(SCREEN_NODES, search.nodes),
        )  # fmt: skip
        self.scores += scores.size
        return alive[np.argsort(-scores, kind="stable")]

    def _bandit(
        self, d: Decision, values: np.ndarray, alive: np.ndarray, evals: int, beam: dict[str, int]
    ) -> int:
        """UCB1 over the candidates ``alive`` (``bandit=1``): each is scored once on the first
        layout, then each of the other ``evals`` scores goes to the candidate with the highest
        mean + sqrt(2 ln t / n) (its n-th score on layout n, so candidates share layouts); the
        candidate scored most often (ties: the best mean) is chosen; one candidate costs
        nothing."""
        k = alive.size
        if k == 1:
            return int(alive[0])
        cand = alive.astype(np.int64)
        sums = sharpen(
            d.evaluate(values, cand, np.zeros(k, np.int64), **beam), self.budget["power"]
        )
        counts = np.ones(k, dtype=np.int64)
        self.scores += k
        for t in range(k, max(evals, k)):
            ucb = sums / counts + np.sqrt(2.0 * math.log(t) / counts)
            i = int(np.argmax(ucb))  # counts[i] <= t - (k - 1) < evals - k + 1 layouts
            score = d.evaluate(values, cand[i : i + 1], counts[i : i + 1].copy(), **beam)
            sums[i] += sharpen(score, self.budget["power"])[0]
            counts[i] += 1
            self.scores += 1
        return int(alive[np.lexsort((-sums / counts, -counts))[0]])

    def _second_ply(self, d: Decision, known: np.ndarray, top: np.ndarray) -> int:
        """Of the two best candidates ``top``, the one whose next decision scores better:
        on ``ply2`` samples, the candidate's event is played, and the best of the next
        decision's candidates is scored on fresh layouts of the cards still unseen (the new
        card kept), as a player would see it then."""
        from spider_env.fast.game import new_state
        from spider_env.search.plan import candidate_state

        search = d.search
        if self._inner is None:
            from spider_env.search.plan import PlanSearch

            b = self.budget
            self._inner = PlanSearch(
                search.variant, closure_nodes=b["closure"], width=b["width"],
                nodes=b["nodes"], max_depth=b["depth"], deals=b["deals"],
            )  # fmt: skip
        inner = self._inner
        K = self.budget["ply2"]
        samples = [self._draw(known) for _ in range(K)]
        totals = []
        for k in top:
            total = 0.0
            for values in samples:
                st = new_state(search.pr)
                candidate_state(
                    search.pr, search.recs[d.ev_node[k]], d.slots, values, int(d.ev_action[k]), st
                )
                total += self._inner_value(inner, st)
            totals.append(total)
        return int(top[int(np.argmax(totals))])

    def _inner_value(self, inner: Any, st: np.ndarray) -> float:
        """The best mean score of the decision at ``st`` over a few fresh layouts of its
        unseen cards."""
        game = inner.game
        won, ev_node, ev_action = inner.closure(st)
        if won >= 0:
            return 1.0
        slots = np.asarray(game.hidden_slots(st), dtype=np.int64)
        if ev_node.size == 0 or slots.size == 0:
            ev_node = np.zeros(1, dtype=np.int32)
            ev_action = np.full(1, -1, dtype=np.int32)
        else:
            ev_node, ev_action = self._held(inner.variant, ev_node, ev_action)
        known = st[slots]
        M, keep = PLY2_SAMPLES, PLY2_CANDIDATES
        values = np.empty((M, slots.size), dtype=st.dtype)
        for s in range(M):
            values[s] = self._draw(known)
        d = Decision.of(inner, slots, ev_node, ev_action)
        alive = self._first_sort(d, values, keep)
        pair_cand = np.repeat(alive, M).astype(np.int64)
        pair_sample = np.tile(np.arange(M), alive.size).astype(np.int64)
        scores = sharpen(d.evaluate(values, pair_cand, pair_sample), self.budget["power"])
        self.scores += scores.size
        return float(scores.reshape(alive.size, M).mean(axis=1).max())

    def _held(
        self, v: Variant, ev_node: np.ndarray, ev_action: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The candidates ``hold`` leaves: with ``hold=1``, no deal while a card can be turned
        up."""
        if self.budget["hold"]:
            reveal = ~np.isin(ev_action, self._deal_ids(v))
            if reveal.any() and not reveal.all():
                return ev_node[reveal], ev_action[reveal]
        return ev_node, ev_action

    def _first_sort(self, d: Decision, values: np.ndarray, keep: int) -> np.ndarray:
        """The indices of the ``keep`` candidates ranked best by the beam's static rank on the
        layouts ``values`` (all of them if there are no more): after the event, or before it
        for a deal (what a deal brings is a guess; the position it is made from is not)."""
        n = d.ev_node.size
        if n <= keep:
            return np.arange(n)
        return np.argsort(d.static(values), kind="stable")[:keep]

    @staticmethod
    def _fill_for_deal(game: Any, root: np.ndarray) -> list[int]:
        """Moves that fill every empty dealt column, so that the stock can be dealt, where the
        closure ran out of room before it reached such a position (many empty columns late in
        a game: the ways to fill them are too many to list): one card at a time, each the last
        card of the longest column with a face-up card above it, so no run is completed and no
        card turned up. ``[]`` when there is nothing to deal, no empty column, or such a move
        is not legal (the rules decide: ``legal_actions``)."""
        v = game.variant
        stock = any(game.pile(root, j).size for j in range(len(v.stock)))
        if not v.deal_needs_no_empty or not stock:
            return []
        st = game.copy(root)
        plan: list[int] = []
        for _ in range(v.dealt_columns):
            lengths = [game.column(st, c).size for c in range(v.n_columns)]
            empty = [c for c in range(v.dealt_columns) if lengths[c] == 0]
            if not empty:
                return plan
            sources = [c for c in range(v.n_columns) if lengths[c] - game.face_down(st, c) >= 2]
            if not sources:
                return []
            src = max(sources, key=lambda c: (lengths[c], -c))
            a = move_id(v, src, 1, empty[0])
            if a not in game.legal_actions(st):
                return []
            game.apply_inplace(st, a)
            plan.append(a)
        return []

    @staticmethod
    def _deal_ids(v: Variant) -> np.ndarray:
        return np.asarray(deal_ids(v))

    def _exact_plan(self, v: Variant, root: np.ndarray) -> list[int]:
        """With nothing unseen: the beam solver's winning line, or ``[]`` (then retried
        after a wait, :meth:`_give_up`)."""
        if self._stuck > 0:
            self._stuck -= 1
            return []
        if self._exact is None:
            from spider_env.search.beam import BeamSolver

            self._exact = BeamSolver(self._searches(v).variant, self.budget["exact"])
        code, line = self._exact.run(root)
        if code == 0 and line:
            return [int(a) for a in line]
        self._give_up()
        return []

    def _give_up(self) -> None:
        """A search found nothing: no such search for the next ``_wait`` decisions, and twice
        as long (up to :data:`RETRY_MAX`) if the next one finds nothing either."""
        self._stuck = self._wait
        self._wait = min(2 * self._wait, RETRY_MAX)


__all__ = [
    "BUDGET",
    "BUDGET_KEYS",
    "FOUR_SUITS_BUDGET",
    "GAME_KEYS",
    "ONE_SUIT_BUDGET",
    "TWO_SUITS_BUDGET",
    "Decision",
    "PlannerAgent",
    "default_budget",
    "halving_schedule",
    "parse_planner_spec",
    "sharpen",
]
