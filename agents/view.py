"""What a player sees, parsed from the env's observation: the only input agents have.

:class:`TableView` reads the ``dict`` observation (``tableau``, ``deals_left``, ``completed`` and,
where the variant shows them, ``pile_tops``) into columns of face-up card ids and face-down
counts. It never sees a face-down card or the order of the stock.

For look-ahead an agent needs a full :class:`~spider_env.core.state.State` to run the one rules
engine (:mod:`spider_env.core.rules`) on. :meth:`TableView.to_state` builds one by *filling* every
unseen slot
(face-down tableau cards, hidden stock cards) with the cards the player has not seen, in a fixed
order or in an order drawn from a given RNG (a "determinization"). Everything visible in that
state, and every legal move, is exact; only the filled-in cards are guesses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from spider_env.core.cards import N_RANKS
from spider_env.core.state import State
from spider_env.core.variants import Variant, get_variant

FACE_DOWN = 1
CARD_OFFSET = 2


def _scalar(x: Any) -> int:
    return int(np.asarray(x).reshape(-1)[0])


@dataclass(frozen=True)
class TableView:
    """A player's view of one position.

    Attributes:
        variant: the game being played.
        down: face-down cards per column.
        up: face-up card ids per column, deepest first (the last one is exposed).
        deals_left: stock piles still to deal.
        completed: completed (removed) runs per suit, S H D C.
        pile_tops: card id of each undealt pile's visible top, ``-1`` for a dealt pile, or
            ``None`` where the variant does not show pile tops.
    """

    variant: Variant
    down: tuple[int, ...]
    up: tuple[tuple[int, ...], ...]
    deals_left: int
    completed: tuple[int, int, int, int]
    pile_tops: tuple[int, ...] | None = None

    @classmethod
    def from_obs(cls, variant: Variant | str, obs: Mapping[str, Any]) -> TableView:
        """Parse a ``dict`` observation of ``variant`` (``ValueError`` if it does not fit)."""
        v = get_variant(variant)
        if not isinstance(obs, Mapping) or "tableau" not in obs:
            raise ValueError(
                "agents need the env's dict observation (with a 'tableau' key); got "
                f"{type(obs).__name__}. Use obs_mode='dict' (the default) for baseline agents."
            )
        tab = np.asarray(obs["tableau"])
        if tab.ndim != 2 or tab.shape[0] != v.n_columns:
            raise ValueError(
                f"tableau of shape {tab.shape} does not fit {v.name} ({v.n_columns} columns)"
            )
        down: list[int] = []
        up: list[tuple[int, ...]] = []
        for row in tab.tolist():
            d = 0
            cards: list[int] = []
            for x in row:
                if x == 0:
                    break
                if x == FACE_DOWN:
                    d += 1
                else:
                    cards.append(x - CARD_OFFSET)
            down.append(d)
            up.append(tuple(cards))
        comp = [int(x) for x in np.asarray(obs["completed"]).reshape(-1)[:4]]
        tops: tuple[int, ...] | None = None
        if "pile_tops" in obs:
            tops = tuple(int(x) - CARD_OFFSET if x else -1 for x in np.asarray(obs["pile_tops"]))
        return cls(
            v,
            tuple(down),
            tuple(up),
            _scalar(obs["deals_left"]),
            (comp[0], comp[1], comp[2], comp[3]),
            tops,
        )

    @classmethod
    def from_state(cls, state: State) -> TableView:
        """The player's view of a state (for tools and tests; agents get observations)."""
        v = state.variant
        tops = None
        if v.pile_top_visible:
            tops = tuple(p[0] if p else -1 for p in state.stock)
        return cls(
            v,
            state.down,
            tuple(col[d:] for col, d in zip(state.cols, state.down)),
            state.deals_left,
            state.completed,
            tops,
        )

    # ------------------------------------------------------------------------------------
    def key(self) -> tuple[Any, ...]:
        """Hashable visible position (to recognise repeated positions)."""
        return (self.down, self.up, self.deals_left, self.completed, self.pile_tops)

    @property
    def n_hidden(self) -> int:
        return sum(self.down)

    def remaining_piles(self) -> list[int]:
        """Indices of the stock piles not yet dealt."""
        v = self.variant
        n = len(v.stock)
        if self.pile_tops is not None:
            return [j for j in range(n) if self.pile_tops[j] >= 0]
        # Piles go in order (or, for chosen piles without visible tops, we cannot tell which:
        # assume the last ones; only the sizes matter for a fill).
        return list(range(n - self.deals_left, n))

    def unseen_cards(self) -> list[int]:
        """The cards the player has not seen (face-down and hidden stock cards), sorted."""
        v = self.variant
        counts: Counter[int] = Counter(
            {s * N_RANKS + r: v.copies_per_suit for s in v.suit_ids for r in range(N_RANKS)}
        )
        for col in self.up:
            counts.subtract(col)
        for s in range(4):
            if self.completed[s]:
                for r in range(N_RANKS):
                    counts[s * N_RANKS + r] -= self.completed[s]
        if self.pile_tops is not None:
            counts.subtract(t for t in self.pile_tops if t >= 0)
        if any(n < 0 for n in counts.values()):
            raise ValueError("observation shows more copies of a card than the deck holds")
        return sorted(counts.elements())

    def to_state(self, rng: np.random.Generator | None = None) -> State:
        """A full state consistent with this view: unseen slots filled with the unseen cards.

        Without ``rng`` the fill is a fixed function of the view (sorted cards); with ``rng`` it
        is a random permutation (one determinization). Either way nothing hidden is read.
        """
        v = self.variant
        hidden = self.unseen_cards()
        piles = self.remaining_piles()
        need = sum(self.down) + sum(v.stock[j] for j in piles)
        if self.pile_tops is not None:
            need -= len(piles)
        if need != len(hidden):
            raise ValueError(
                f"observation inconsistent with {v.name}: {need} hidden slots but "
                f"{len(hidden)} unseen cards"
            )
        if rng is not None:
            hidden = [hidden[i] for i in rng.permutation(len(hidden))]
        it = iter(hidden)
        cols = []
        for d, up in zip(self.down, self.up):
            cols.append(tuple(next(it) for _ in range(d)) + up)
        stock: list[tuple[int, ...]] = [() for _ in v.stock]
        for j in piles:
            size = v.stock[j]
            if self.pile_tops is not None:
                stock[j] = (self.pile_tops[j], *(next(it) for _ in range(size - 1)))
            else:
                stock[j] = tuple(next(it) for _ in range(size))
        deals = sum(1 for p in stock if not p)
        return State(v, tuple(cols), self.down, tuple(stock), self.completed, deals=deals)


__all__ = ["TableView"]
