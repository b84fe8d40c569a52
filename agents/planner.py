"""The planner: a hidden-information player that chooses among the positions it can reach before
the next card turns up, scored over sampled layouts of the cards it cannot see.

:class:`PlannerAgent`'s docstring is its one description (what it sees, how it decides, its
options and their defaults per game, its hooks, determinism); docs/guide/players.md is the
user's guide and research/planner/ the lab record.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from spider_env.core.actions import deal_ids, move_id
from spider_env.core.checks import check_int
from spider_env.core.variants import Variant, get_variant
from spider_env.observation.view import TableView
from spider_env.search.budget import MAX_NODES

from .base import BaseAgent, parse_budget_spec
from .lookahead import LookaheadAgent

#: Scores spent per planned decision (successive halving over the candidates).
DEFAULT_EVALS = 48
#: Candidates kept for scoring, after a first sort by the beam's static rank.
DEFAULT_CANDIDATES = 12
#: The beam of one score: positions kept per depth (and count of deals left).
DEFAULT_WIDTH = 2
#: The beam of one score: positions generated at most.
DEFAULT_NODES = 4000
#: Positions the beam solver generates when nothing is unseen.
DEFAULT_EXACT = 2_000_000
#: Candidates screened by one cheap score each on a game of one suit (``screen``).
DEFAULT_SCREEN = 256
#: The scores' factor of a decision made with the stock empty on a game of one suit (``late``).
DEFAULT_LATE = 4
#: Millions of positions a 4-suit game's scores generate before the base budget (``cap``).
DEFAULT_CAP = 45
#: The beam of one score: depths at most.
DEPTH = 200
#: Positions of one closure at most.
CLOSURE = 4000
#: A closure that found no event and ran out of room is listed again this many times larger.
WIDE_CLOSURE = 16
#: A choice among deals only (where to deal from) gets this many times the scores, and twice
#: the candidates.
DEAL_FACTOR = 4
#: The cheap beam of a screening score: width and positions generated (each at most the
#: budget's own).
SCREEN_WIDTH = 1
SCREEN_NODES = 500
#: Layouts the static rank averages over in the first sort of the candidates.
SORT_LAYOUTS = 4
#: Decisions without a search after the first search in a row that found nothing; each later
#: one doubles the wait, up to :data:`RETRY_MAX` (:func:`retry_wait`).
RETRY_EVERY = 5
RETRY_MAX = 80

#: The budget of a game of four suits (:func:`default_budget`): many graded scores (a short beam
#: rarely finds a win there), with a cap per game.
FOUR_SUITS_BUDGET: dict[str, int] = {
    "evals": 768,
    "candidates": 24,
    "width": 4,
    "nodes": 16_000,
    "cap": DEFAULT_CAP,
}
#: The budget of a game of two suits: four times the base scores over twice its candidates.
TWO_SUITS_BUDGET: dict[str, int] = {
    "evals": 4 * DEFAULT_EVALS,
    "candidates": 2 * DEFAULT_CANDIDATES,
}
#: The budget of a game of one suit: the screen, and more scores once the stock is empty.
ONE_SUIT_BUDGET: dict[str, int] = {"screen": DEFAULT_SCREEN, "late": DEFAULT_LATE}
#: The keys whose default depends on the game (:func:`default_budget`).
GAME_KEYS = tuple(dict.fromkeys((*FOUR_SUITS_BUDGET, *TWO_SUITS_BUDGET, *ONE_SUIT_BUDGET)))

#: The options of ``planner:KEY=N,...`` and their (base default, smallest, largest) values;
#: :data:`ONE_SUIT_BUDGET`, :data:`TWO_SUITS_BUDGET` and :data:`FOUR_SUITS_BUDGET` change the
#: defaults of the keys of :data:`GAME_KEYS` for their games.
BUDGET: dict[str, tuple[int, int, int]] = {
    "evals": (DEFAULT_EVALS, 1, 100_000),
    "candidates": (DEFAULT_CANDIDATES, 1, 1000),
    "width": (DEFAULT_WIDTH, 1, 1000),
    "nodes": (DEFAULT_NODES, 1, 10_000_000),
    "exact": (DEFAULT_EXACT, 1, MAX_NODES),
    "screen": (0, 0, 100_000),
    "late": (1, 1, 100),
    "cap": (0, 0, 1_000_000),
}
BUDGET_KEYS = tuple(BUDGET)
#: The dial ``budget``'s smallest and largest settings (scores per planned decision).
DIAL = (1, 100_000)
#: The keys of a spec ``planner:KEY=N,...``: the dial and the options.
SPEC_KEYS = ("budget", *BUDGET_KEYS)
#: The options the dial scales (:func:`dial_budget`); the others keep the game's default.
DIAL_KEYS = ("evals", "candidates", "screen", "cap")


def parse_planner_spec(spec: str) -> dict[str, int]:
    """The budget of an agent spec ``planner``, ``planner:budget=3072`` or
    ``planner:evals=96,width=3`` (keys :data:`SPEC_KEYS`: the dial and :data:`BUDGET_KEYS`);
    ``ValueError`` naming what is wrong."""
    return parse_budget_spec(spec, "planner", SPEC_KEYS)


def default_budget(variant: Variant | str) -> dict[str, int]:
    """The planner's budget when none is given, for ``variant`` (a :class:`Variant` or its
    name; ``ValueError``/``TypeError`` otherwise, from :func:`get_variant`): the defaults of
    :data:`BUDGET`, with :data:`FOUR_SUITS_BUDGET` for a game of four suits,
    :data:`TWO_SUITS_BUDGET` for a game of two and :data:`ONE_SUIT_BUDGET` for a game of one
    (the dial's settings at its default, the game's ``evals``: :func:`dial_budget`)."""
    v = get_variant(variant)
    out = {key: default for key, (default, _, _) in BUDGET.items()}
    if v.suits == 4:
        out.update(FOUR_SUITS_BUDGET)
    elif v.suits == 2:
        out.update(TWO_SUITS_BUDGET)
    elif v.suits == 1:
        out.update(ONE_SUIT_BUDGET)
    return out


def dial_budget(variant: Variant | str, budget: int) -> dict[str, int]:
    """The planner's settings on ``variant`` at the dial ``budget``: ``budget`` scores per
    planned decision, the game's other settings scaled from its default
    (:func:`default_budget`, whose ``evals`` is the dial's setting there) by the ratio ``r`` =
    ``budget`` / default ``evals``: ``candidates`` by the square root of ``r`` (at least 2),
    ``screen`` (where the game screens) by the square root of ``r`` (at least the candidates),
    ``cap`` (where the game caps) by ``r`` (at least 1); the beam (``width``, ``nodes``),
    ``late`` and ``exact`` stay the game's. At the game's default ``evals`` every setting is
    the default; each setting is a non-decreasing function of ``budget``, and so is the CPU
    time of a game (docs/guide/players.md has the measured seconds)."""
    budget = check_int("budget", budget, *DIAL)
    out = default_budget(variant)
    r = budget / out["evals"]
    out["evals"] = budget
    out["candidates"] = min(
        BUDGET["candidates"][2], max(2, round(out["candidates"] * math.sqrt(r)))
    )
    if out["screen"]:
        screen = max(out["candidates"], round(out["screen"] * math.sqrt(r)))
        out["screen"] = min(BUDGET["screen"][2], screen)
    if out["cap"]:
        out["cap"] = min(BUDGET["cap"][2], max(1, round(out["cap"] * r)))
    return out


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


def retry_wait(failures: int) -> int:
    """Decisions the planner lets pass without a search after ``failures`` (at least 1) searches
    in a row found nothing (a table with nothing unseen and no win found, a closure without an
    event even listed larger): :data:`RETRY_EVERY`, doubled with each failure after the first,
    at most :data:`RETRY_MAX`."""
    failures = check_int("failures", failures, 1)
    return min(RETRY_EVERY << min(failures - 1, 16), RETRY_MAX)


def uniform_layouts(view: TableView, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """The planner's own layouts of the cards ``view`` does not show: uniform draws with
    ``rng``. A *layout* is the unseen cards (:meth:`TableView.unseen_cards
    <spider_env.observation.view.TableView.unseen_cards>`) in the order
    :meth:`TableView.to_state <spider_env.observation.view.TableView.to_state>` fills the
    unseen slots: each column's face-down cards, column by column, deepest first, then each
    stock pile's hidden cards. The first layout is the one ``view.to_state(rng)`` draws, each
    later one a uniform permutation of the first."""
    cards = np.asarray(view.unseen_cards(), dtype=np.int64)
    first = cards[rng.permutation(cards.size)]
    yield first
    while True:
        yield rng.permutation(first)


def true_layout(state: Any) -> np.ndarray:
    """The layout (:func:`uniform_layouts`) of the cards a player cannot see in ``state``, a
    :class:`~spider_env.core.state.State`: the truth, which no player holds. For diagnostics
    that tell the planner part of it through its ``layouts`` hook."""
    view = TableView.from_state(state)
    down = [card for col, d in zip(state.cols, state.down) for card in col[:d]]
    first = 1 if view.pile_tops is not None else 0
    stock = [card for j in view.remaining_piles() for card in state.stock[j][first:]]
    return np.asarray(down + stock, dtype=np.int64)


def fill_for_deal(game: Any, root: np.ndarray) -> list[int]:
    """Moves that fill every empty dealt column of the compiled ``game``'s position ``root``, so
    that the stock can be dealt, where a closure ran out of room before it reached such a
    position (many empty columns late in a game: the ways to fill them are too many to list):
    one card at a time, each the last card of the longest column with a face-up card above it,
    so no run is completed and no card turned up. ``[]`` when there is nothing to deal, no empty
    column, or such a move is not legal (the rules decide: ``legal_actions``)."""
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


@dataclass(frozen=True)
class PlannedDecision:
    """One planned decision, as the planner's ``observer`` is given it: ``deals_left`` when it
    was made; each candidate's ``plans`` entry (its moves, then its event: action ids); each
    candidate's mean score in the successive halving, ``means`` (``nan``: not scored), and its
    number of scores there, ``counts`` (the screen's cheap scores are not counted); the index of
    the candidate played, ``chosen``."""

    deals_left: int
    plans: tuple[tuple[int, ...], ...]
    means: tuple[float, ...]
    counts: tuple[int, ...]
    chosen: int

    @property
    def plan(self) -> tuple[int, ...]:
        """The plan played: the chosen candidate's moves and event."""
        return self.plans[self.chosen]


#: The ``layouts`` hook (:func:`uniform_layouts` is the default).
Layouts = Callable[[TableView, np.random.Generator], Iterator[np.ndarray]]
#: The ``observer`` hook.
Observer = Callable[[PlannedDecision], None]


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

    def static(self, values: np.ndarray) -> np.ndarray:
        """Each candidate's static rank on the layouts ``values`` (:meth:`PlanSearch.static
        <spider_env.search.plan.PlanSearch.static>`): after its event, or before it for a deal
        (what a deal brings is a guess; the position it is made from is not)."""
        events = np.full_like(self.ev_action, -1) if self.dealing else self.ev_action
        keys: np.ndarray = self.search.static(self.slots, values, self.ev_node, events)
        return keys

    def plan(self, k: int) -> list[int]:
        """Candidate ``k``'s moves, then its event."""
        path: list[int] = self.search.path(int(self.ev_node[k]))
        return [*path, int(self.ev_action[k])]


class PlannerAgent(BaseAgent):
    """A hidden-information player that chooses among the positions it can reach before the
    next card turns up, each scored over sampled layouts of the cards it cannot see.

    **What it sees** is what every player sees: the observation and the mask (the table read
    through :class:`~spider_env.observation.view.TableView`), never a face-down card, the stock
    or the deal.

    **How it decides.** At a decision with no plan left it:

    1. draws layouts of the unseen cards (face-down cards and the stock), by default uniform
       draws of the cards not in view with the agent's RNG (:func:`uniform_layouts`);
    2. lists every distinct position it can reach by moves that turn no card up, and the
       irreversible *events* that end them: a move that turns a card up, a deal
       (:func:`spider_env.search.plan.closure`, at most :data:`CLOSURE` positions; those moves
       never touch an unseen card, so the list is the same for every layout). Each event, with
       the moves that lead to it, is a *candidate*; a deal is one only when no candidate turns
       a card up. A reachable won position is simply played;
    3. keeps the best ``candidates`` by the beam's static rank (with ``screen=N``: of the best
       N by that rank, those best by one cheap score each, a beam :data:`SCREEN_WIDTH` wide of
       :data:`SCREEN_NODES` positions on one layout) and spends ``evals`` scores on them by
       successive halving (:func:`halving_schedule`): every candidate on a few layouts, the
       better half on more, and so on, all candidates of a round on the same layouts. A score
       plays the candidate on one layout, then a beam search ``width`` wide of at most
       ``nodes`` positions and :data:`DEPTH` depths that deals only where nothing else is
       legal (:func:`spider_env.search.plan.beam_value`): 1.0 if it wins, else a graded value
       below 1 of the best position it reached, 0 for a table that can never be dealt on again
       (:func:`spider_env.search.plan.starved`). Where to deal from gets :data:`DEAL_FACTOR`
       times the scores and twice the candidates; a decision made with the stock empty gets
       ``late`` times the scores; once the scores of a game have generated ``cap`` million
       positions (``cap`` > 0), its later decisions spend at most :data:`DEFAULT_EVALS` scores
       (:data:`DEAL_FACTOR` times that where to deal from), each a beam at most
       :data:`DEFAULT_WIDTH` wide of :data:`DEFAULT_NODES` positions;
    4. plays the best candidate's moves and its event, and plans again once the event has shown
       a card. A decision with one candidate costs no score.

    With nothing unseen (Simple Simon, the end of a game) the beam solver
    (:class:`spider_env.search.beam.BeamSolver`, at most ``exact`` positions) searches the table
    and its winning line is played. Where no candidate exists the lookahead agent moves: a
    closure out of room is first listed again :data:`WIDE_CLOSURE` times larger, or its empty
    columns filled one card at a time so that the stock can be dealt (:func:`fill_for_deal`); a
    search that finds nothing is not tried again for a while (:func:`retry_wait`). A whole
    closure without a win or an event is listed again by every legal move (the closure follows
    the moves the beam's filter keeps); if that finds none either, the game is lost (no card
    will turn up, no deal come: :attr:`lost`) and is played out without another search, along
    the closure to its position with the most runs completed, then by the first legal move (the
    outcome and the runs are settled; the step limit ends the game).

    **The dial** ``budget`` (``planner:budget=N``): one number sets the strength, ``N`` scores
    per planned decision, and the settings below are derived from it (:func:`dial_budget`: the
    candidates and the screen grow as its square root, the cap in proportion, the beam stays
    the game's). Its default is the game's ``evals`` (48 / 192 / 768 on 1 / 2 / 4 suits), where
    ``planner:budget=N`` plays exactly as ``planner``; a game's CPU time grows about in
    proportion to ``N`` (the measured seconds per game and win rates at each budget are in
    docs/guide/players.md). Keys given with it override what it derives.

    **Options** (``planner:KEY=N,...``, or keyword arguments; ``None`` takes the game's default,
    :func:`default_budget`, or the dial's; each an int in its range of :data:`BUDGET`, else
    ``TypeError`` / ``ValueError`` naming it). Defaults on games of 1 / 2 / 4 suits:

    * ``evals``: scores per planned decision (48 / 192 / 768);
    * ``candidates``: candidates scored at most (12 / 24 / 24);
    * ``width``, ``nodes``: the beam of one score, positions kept per depth and count of deals
      left, and positions generated (2 and 4,000 / 2 and 4,000 / 4 and 16,000);
    * ``screen``: 0, or N: the candidates screened by a cheap score as above (256 / 0 / 0);
    * ``late``: the scores' factor of a decision made with the stock empty (4 / 1 / 1);
    * ``cap``: 0, or C: the millions of positions a game's scores generate before the base
      budget (0 / 0 / 45);
    * ``exact``: positions of the beam solver when nothing is unseen (2,000,000 on every game).

    A spec's name says what plays: the dial, the options that differ from :data:`BUDGET`'s base
    and those of :data:`GAME_KEYS` are named (``planner:evals=96,nodes=8000``,
    ``planner:budget=3072``).

    **Hooks** (attributes set after construction, e.g. on an agent of :func:`make_agent
    <spider_env.agents.make_agent>`; no spec key, not in the name):

    * :attr:`observer`: called once per planned decision (each time :attr:`decisions` grows) with a
      :class:`PlannedDecision` (its candidates' plans, their scores in the halving, the one
      played), before its first move is returned; ``None`` (the default) costs nothing.
    * :attr:`layouts`: draws the layouts of the unseen cards at a decision (:data:`Layouts`: called
      with the view and the agent's RNG, it returns an iterator of layouts, of which the first
      is the table the closure is listed on). The default, :func:`uniform_layouts`, is the
      player's. **A player must not use this hook to read hidden cards**: it exists for
      diagnostics, such as research/planner/oracle.py telling the planner part of the truth
      (:func:`true_layout`). A layout that is not an ordering of the unseen cards is a
      ``ValueError``.

    **Determinism.** All randomness is the agent's RNG (seeded by :meth:`reset`) and what it
    keeps is a function of the observations, so the same seed and the same game give the same
    moves; nothing hidden is read, so permuting the face-down cards and the stock changes no
    choice (``tests/test_planner.py`` checks both, and that a pickled planner plays on the
    same).

    Counters since the last :meth:`reset` (for reports): :attr:`decisions` (planned decisions),
    :attr:`scores` (scores spent, the screen's included) and :attr:`generated` (positions the
    scores' beams generated).
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
        exact: int | None = None,
        screen: int | None = None,
        late: int | None = None,
        cap: int | None = None,
        budget: int | None = None,
    ) -> None:
        super().__init__(variant, seed)
        given = {
            "evals": evals,
            "candidates": candidates,
            "width": width,
            "nodes": nodes,
            "exact": exact,
            "screen": screen,
            "late": late,
            "cap": cap,
        }
        #: the budget as given (the keys left ``None`` take the game's default,
        #: :func:`default_budget`)
        self.given = {
            key: check_int(key, value, *BUDGET[key][1:])
            for key, value in given.items()
            if value is not None
        }
        #: the dial as given (``None``: the game's default, its ``evals``; :attr:`dial`)
        self.given_dial = None if budget is None else check_int("budget", budget, *DIAL)
        named = [f"{k}={v}" for k, v in self.given.items() if k in GAME_KEYS or v != BUDGET[k][0]]
        if self.given_dial is not None:
            named.insert(0, f"budget={self.given_dial}")
        if named:
            self.name = "planner:" + ",".join(named)
        self._observer: Observer | None = None
        self._layouts: Layouts = uniform_layouts
        #: the budget played with (known with the game: at construction or the first act)
        self.budget: dict[str, int] = {}
        if self.variant is not None:
            self.budget = self._settings(self.variant)
        self._fallback = LookaheadAgent(variant, seed)
        self._search: Any = None
        self._exact: Any = None
        self._wide: Any = None
        self._every: Any = None
        self._plan: list[int] = []
        self._stuck = 0  # decisions left before searching again where a search found nothing
        self._failures = 0  # searches in a row that found nothing (:func:`retry_wait`)
        self._lost = False
        self.decisions = 0
        self.scores = 0
        self.generated = 0

    def _settings(self, v: Variant) -> dict[str, int]:
        """The settings played with on ``v``: the game's default, or those of the dial
        ``budget`` if it was given (:func:`dial_budget`), then the options given."""
        dial = self.given_dial
        base = default_budget(v) if dial is None else dial_budget(v, dial)
        return base | self.given

    @property
    def dial(self) -> int | None:
        """The dial's setting (``budget``): as given, else the game's default ``evals``
        (``None`` until the game is known)."""
        if self.given_dial is not None:
            return self.given_dial
        return self.budget["evals"] if self.budget and "evals" not in self.given else None

    @property
    def observer(self) -> Observer | None:
        """The hook called with each planned decision (``None``: none; see the class
        docstring)."""
        return self._observer

    @observer.setter
    def observer(self, hook: Observer | None) -> None:
        if hook is not None and not callable(hook):
            raise TypeError(f"observer must be a callable or None, got {hook!r}")
        self._observer = hook

    @property
    def layouts(self) -> Layouts:
        """The hook that draws the layouts of the unseen cards (see the class docstring;
        ``None`` sets the default, :func:`uniform_layouts`)."""
        return self._layouts

    @layouts.setter
    def layouts(self, hook: Layouts | None) -> None:
        if hook is not None and not callable(hook):
            raise TypeError(f"layouts must be a callable or None, got {hook!r}")
        self._layouts = uniform_layouts if hook is None else hook

    @property
    def lost(self) -> bool:
        """Whether a whole closure has shown this game lost (then played out without a search;
        cleared by :meth:`reset` and :meth:`replan`)."""
        return self._lost

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._fallback.reset(seed)
        self._plan = []
        self._stuck = 0
        self._failures = 0
        self._lost = False
        self.decisions = 0
        self.scores = 0
        self.generated = 0

    def replan(self) -> None:
        """Drop the plan being followed: the next :meth:`act` plans from what it is shown
        (for a caller whose table did not follow the agent's moves, e.g. ``play``'s hints)."""
        self._plan = []
        self._lost = False

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        # buffers: made again on first use
        state["_search"] = state["_exact"] = state["_wide"] = state["_every"] = None
        return state

    # ------------------------------------------------------------------------------------
    def _generated(self) -> int:
        """Positions generated by the scores of the searches made so far."""
        searches = (self._search, self._wide, self._every)
        return sum(s.generated for s in searches if s is not None)

    def _searches(self, v: Variant, wide: bool = False, every: bool = False) -> Any:
        """The search of the budget, made on first use (``wide``: with :data:`WIDE_CLOSURE`
        times the closure; ``every``: that closure over every legal move, not only the
        filtered ones)."""
        key = "_every" if every else "_wide" if wide else "_search"
        if getattr(self, key) is None:
            try:
                from spider_env.search.plan import PlanSearch
            except ImportError as exc:  # pragma: no cover - numba missing
                raise ImportError(f"the planner needs numba (the compiled core): {exc}") from None
            b = self.budget
            search = PlanSearch(
                v,
                closure_nodes=CLOSURE * (WIDE_CLOSURE if wide or every else 1),
                width=b["width"],
                nodes=b["nodes"],
                max_depth=DEPTH,
                every_move=every,
            )
            setattr(self, key, search)
        return getattr(self, key)

    def act(self, obs: Any, mask: np.ndarray, info: Mapping[str, Any] | None = None) -> int:
        v = self._variant(info)
        if not self.budget:
            self.budget = self._settings(v)
        legal = self._legal(mask, v)
        if self._plan and self._plan[0] in legal:
            return self._plan.pop(0)
        self._plan = []
        if len(legal) == 1:
            return legal[0]
        before = self._generated()
        plan = self._make_plan(v, obs, mask, info)
        self.generated += self._generated() - before
        if not plan or plan[0] not in legal:  # pragma: no cover - a plan is made of legal ids
            raise AssertionError(f"the planner planned {plan} where {legal} are legal")
        self._plan = plan[1:]
        return plan[0]

    def _make_plan(
        self, v: Variant, obs: Any, mask: np.ndarray, info: Mapping[str, Any] | None
    ) -> list[int]:
        from spider_env.search.solver import without_undo

        if self._lost:
            return self._idle(v, mask)
        search = self._searches(v)
        game = search.game
        view = TableView.from_obs(v, obs)
        root = game.from_state(without_undo(view.to_state()))
        slots = np.asarray(game.hidden_slots(root), dtype=np.int64)
        if slots.size == 0:
            return self._exact_plan(v, root) or [int(self._fallback.act(obs, mask, info))]
        draws = self._draws(view)
        root[slots] = next(draws)
        won, ev_node, ev_action = search.closure(root)
        if won < 0 and ev_node.size == 0 and search.full:
            # nothing found in a closure that ran out of room: look further before giving up
            # (and, if that finds nothing either, not again for a while)
            if self._stuck > 0:
                self._stuck -= 1
            else:
                search = self._searches(v, wide=True)
                won, ev_node, ev_action = search.closure(root)
                if won < 0 and ev_node.size == 0:
                    self._give_up()
        if won < 0 and ev_node.size == 0 and not search.full:
            # a whole closure without a win or an event: listed again by every legal move (the
            # filter leaves out moves that rarely still lead to a card turned up)
            every = self._searches(v, every=True)
            won, ev_node, ev_action = every.closure(root)
            if won >= 0 or ev_node.size > 0:
                search = every
            else:
                # no move will ever turn a card up or deal again (unless even that closure ran
                # out of room): the game is lost, played out to the position with the most runs
                # completed, then by any legal move
                self._lost = True
                most = search if every.full else every
                return most.path(most.most_runs()) or self._idle(v, mask)
        if won >= 0:
            return search.path(won)
        if ev_node.size == 0:
            fill = fill_for_deal(game, root)
            return fill or [int(self._fallback.act(obs, mask, info))]
        self._failures = 0  # a search found something: the waits start again
        self.decisions += 1
        ev_node, ev_action = self._held(v, ev_node, ev_action)
        d = Decision.of(search, slots, ev_node, ev_action)
        best, sums, counts = 0, np.zeros(ev_node.size), np.zeros(ev_node.size)
        if ev_node.size > 1:
            best, sums, counts = self._choose(d, root, draws)
        if self._observer is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                means = sums / counts
            self._observer(
                PlannedDecision(
                    deals_left=view.deals_left,
                    plans=tuple(tuple(d.plan(k)) for k in range(ev_node.size)),
                    means=tuple(float(m) for m in means),
                    counts=tuple(int(c) for c in counts),
                    chosen=best,
                )
            )
        return d.plan(best)

    def _draws(self, view: TableView) -> Iterator[np.ndarray]:
        """The layouts of this decision (the ``layouts`` hook), each checked unless it is the
        planner's own."""
        draws = self._layouts(view, self.rng)
        if self._layouts is uniform_layouts:
            return draws
        return _checked(draws, np.asarray(view.unseen_cards(), dtype=np.int64))

    def _choose(
        self, d: Decision, root: np.ndarray, draws: Iterator[np.ndarray]
    ) -> tuple[int, np.ndarray, np.ndarray]:
        """The index of the best candidate of ``d`` by successive halving over layouts drawn
        from ``draws`` (the first is ``root``'s), with each candidate's sum and count of
        scores in the halving."""
        from spider_env.fast.game import deals_left

        b = self.budget
        search, slots = d.search, d.slots
        n = d.ev_node.size
        evals, keep = b["evals"], b["candidates"]
        if d.dealing:
            # where to deal from: rarer than a reveal, and it decides more
            evals, keep = evals * DEAL_FACTOR, keep * 2
        elif b["late"] > 1 and deals_left(search.pr, root) == 0:
            evals *= b["late"]
        beam: dict[str, int] = {}
        if b["cap"] and self.generated >= b["cap"] * 1_000_000:
            # the game has spent its cap: the base budget's scores from here on
            evals = min(evals, DEFAULT_EVALS * (DEAL_FACTOR if d.dealing else 1))
            beam = {
                "width": min(DEFAULT_WIDTH, search.width),
                "nodes": min(DEFAULT_NODES, search.nodes),
            }
        schedule = halving_schedule(min(n, keep), evals)
        total = max(1, sum(each for _, each in schedule))
        values = np.empty((total, slots.size), dtype=root.dtype)
        values[0] = root[slots]
        for s in range(1, total):
            values[s] = next(draws)
        alive = self._first_sort(d, values[: min(total, SORT_LAYOUTS)], max(keep, b["screen"]))
        if alive.size > keep:
            alive = self._screen(d, values, alive)[:keep]
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
            self.scores += scores.size
            np.add.at(sums, pair_cand, scores)
            np.add.at(counts, pair_cand, 1)
            means = sums[alive] / counts[alive]
            alive = alive[np.argsort(-means, kind="stable")]
        return int(alive[0]), sums, counts

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

    def _held(
        self, v: Variant, ev_node: np.ndarray, ev_action: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The candidates left once deals wait: no deal while a card can be turned up."""
        reveal = ~np.isin(ev_action, np.asarray(deal_ids(v)))
        if reveal.any() and not reveal.all():
            return ev_node[reveal], ev_action[reveal]
        return ev_node, ev_action

    def _first_sort(self, d: Decision, values: np.ndarray, keep: int) -> np.ndarray:
        """The indices of the ``keep`` candidates ranked best by the beam's static rank on the
        layouts ``values`` (all of them if there are no more)."""
        n = d.ev_node.size
        if n <= keep:
            return np.arange(n)
        return np.argsort(d.static(values), kind="stable")[:keep]

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

    def _idle(self, v: Variant, mask: np.ndarray) -> list[int]:
        """A move of a lost game once it has reached the most runs its closure holds: the
        first legal move (the first legal id if no move is legal)."""
        legal = self._legal(mask, v)
        return [next((a for a in legal if a < v.n_move_actions), legal[0])]

    def _give_up(self) -> None:
        """A search found nothing: no such search for the next :func:`retry_wait` decisions."""
        self._failures += 1
        self._stuck = retry_wait(self._failures)


def _checked(draws: Iterator[np.ndarray], cards: np.ndarray) -> Iterator[np.ndarray]:
    """``draws``, each checked to be an ordering of ``cards`` (sorted)."""
    for layout in draws:
        out = np.asarray(layout)
        if out.shape != cards.shape or not np.array_equal(np.sort(out), cards):
            raise ValueError(
                f"layouts must give orderings of the {cards.size} unseen cards, got "
                f"{out.tolist() if out.size <= 20 else f'an array of shape {out.shape}'}"
            )
        yield out


__all__ = [
    "BUDGET",
    "BUDGET_KEYS",
    "DIAL",
    "DIAL_KEYS",
    "FOUR_SUITS_BUDGET",
    "GAME_KEYS",
    "ONE_SUIT_BUDGET",
    "SPEC_KEYS",
    "TWO_SUITS_BUDGET",
    "Decision",
    "Layouts",
    "Observer",
    "PlannedDecision",
    "PlannerAgent",
    "default_budget",
    "dial_budget",
    "fill_for_deal",
    "halving_schedule",
    "parse_planner_spec",
    "retry_wait",
    "true_layout",
    "uniform_layouts",
]
