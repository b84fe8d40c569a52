"""What a player sees, parsed from the env's observation: the only input agents have.

:class:`TableView` reads the ``dict`` observation (``tableau``, ``deals_left``, ``completed`` and,
where the variant shows them, ``pile_tops``) into columns of face-up card ids and face-down counts,
decoding the tableau codes of :mod:`spider_env.observation.spaces`. It never sees a face-down card
or the order of the stock. An agent parses each observation once; what the env produced is taken as
it is (only the form is checked: a dict with a tableau of the variant's shape), and legality always
comes from the env's mask.

For look-ahead an agent needs a :class:`~spider_env.core.state.State` to run the one rules engine
(:mod:`spider_env.core.rules`) on. :meth:`TableView.to_state` builds one by *filling* every unseen
slot (face-down tableau cards, hidden stock cards) with the cards the player has not seen, in a
fixed order or in an order drawn from a given RNG (a "determinization"). Everything visible in
that state, and every legal move, is exact; only the filled-in cards are guesses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from spider_env.core.cards import N_CARD_IDS, N_RANKS
from spider_env.core.state import State
from spider_env.core.variants import Variant, get_variant
from spider_env.observation.spaces import CARD_OFFSET, FACE_DOWN, NO_CARD

# bytes.translate table: tableau code -> card id (face-up codes are CARD_OFFSET + card id)
_CODE_TO_CARD = bytes((i - CARD_OFFSET) & 0xFF for i in range(256))
_FACE_DOWN_BYTE = bytes([FACE_DOWN])
_NO_CARD_BYTE = bytes([NO_CARD])


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
        """Parse a ``dict`` observation of ``variant``.

        ``ValueError`` if it is not one (not a dict with a tableau, or a tableau of the wrong
        shape); the cards in it are taken as the env wrote them, not checked.
        """
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
        raw = tab.astype(np.int8, copy=False).tobytes()
        length = tab.shape[1]
        down: list[int] = []
        up: list[tuple[int, ...]] = []
        for start in range(0, len(raw), length):
            row = raw[start : start + length]
            n = row.find(_NO_CARD_BYTE)
            if n >= 0:
                row = row[:n]
            face_up = row.lstrip(_FACE_DOWN_BYTE)  # face-down cards come first in a column
            down.append(len(row) - len(face_up))
            up.append(tuple(face_up.translate(_CODE_TO_CARD)))
        c0, c1, c2, c3 = np.asarray(obs["completed"]).tolist()
        tops: tuple[int, ...] | None = None
        if "pile_tops" in obs:
            tops = tuple(
                x - CARD_OFFSET if x != NO_CARD else -1
                for x in np.asarray(obs["pile_tops"]).tolist()
            )
        return cls(v, tuple(down), tuple(up), _scalar(obs["deals_left"]), (c0, c1, c2, c3), tops)

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

    def remaining_piles(self) -> list[int]:
        """Indices of the stock piles not yet dealt."""
        n = len(self.variant.stock)
        if self.pile_tops is not None:
            return [j for j in range(n) if self.pile_tops[j] >= 0]
        # Piles go in order (or, for chosen piles without visible tops, we cannot tell which:
        # assume the last ones; only the sizes matter for a fill).
        return list(range(n - self.deals_left, n))

    def unseen_cards(self) -> list[int]:
        """The cards the player has not seen (face-down and hidden stock cards), sorted.

        ``ValueError`` if the view shows more copies of a card than the deck holds.
        """
        v = self.variant
        counts = [0] * N_CARD_IDS
        for s in v.suit_ids:
            left = v.copies_per_suit - self.completed[s]
            counts[s * N_RANKS : (s + 1) * N_RANKS] = [left] * N_RANKS
        for col in self.up:
            for card in col:
                counts[card] -= 1
        if self.pile_tops is not None:
            for card in self.pile_tops:
                if card >= 0:
                    counts[card] -= 1
        if min(counts) < 0:
            raise ValueError(
                f"the observation shows more copies of a card than the {v.name} deck holds"
            )
        return [card for card in range(N_CARD_IDS) for _ in range(counts[card])]

    def to_state(self, rng: np.random.Generator | None = None) -> State:
        """A state consistent with this view: unseen slots filled with the unseen cards.

        Without ``rng`` the fill is a fixed function of the view (sorted cards); with ``rng`` it
        is a random permutation (one determinization). Either way nothing hidden is read. The
        state is built unvalidated (``trusted``, from what the env showed; ``validate()``
        checks it); ``ValueError`` if the view's hidden slots and unseen cards differ in number.
        """
        v = self.variant
        hidden = self.unseen_cards()
        piles = self.remaining_piles()
        tops = self.pile_tops
        need = sum(self.down) + sum(v.stock[j] for j in piles) - (len(piles) if tops else 0)
        if need != len(hidden):
            raise ValueError(
                f"observation inconsistent with {v.name}: {need} hidden slots but "
                f"{len(hidden)} unseen cards"
            )
        if rng is not None:
            hidden = [hidden[i] for i in rng.permutation(len(hidden))]
        cols = []
        i = 0
        for d, up in zip(self.down, self.up):
            cols.append(tuple(hidden[i : i + d]) + up)
            i += d
        stock: list[tuple[int, ...]] = [()] * len(v.stock)
        for j in piles:
            size = v.stock[j]
            if tops is not None:
                stock[j] = (tops[j], *hidden[i : i + size - 1])
                i += size - 1
            else:
                stock[j] = tuple(hidden[i : i + size])
                i += size
        return State(
            v,
            tuple(cols),
            self.down,
            tuple(stock),
            self.completed,
            deals=len(v.stock) - len(piles),
            trusted=True,
        )


__all__ = ["TableView"]
