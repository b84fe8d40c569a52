"""Game state: immutable, cheap to copy, with an exact text form.

No code changes a :class:`State` after it is made (its fields are read-only by convention:
plain slots holding tuples and ints): :func:`spider_env.core.rules.apply` returns a new one that
shares every untouched column tuple with the old, so keeping a state for look-ahead costs nothing
and "copying" is just keeping a reference.

Fields of a state (Python tuples and ints, read one state at a time by the pure-Python engine):

* ``cols[c]``: tuple of card ids of column ``c``, deepest card first, exposed card last;
* ``down[c]``: how many of the deepest cards of column ``c`` are face down;
* ``run_lengths[c]``: length of the suited descending run at the end of column ``c`` (derived
  from ``cols`` and ``down``, computed when the state is made);
* ``stock[j]``: tuple of the cards of stock pile ``j`` (card ``i`` goes onto column ``i``);
  a dealt pile is an empty tuple;
* ``completed[s]``: completed runs of suit ``s`` (spades, hearts, diamonds, clubs);
* counters ``moves``, ``deals``, ``undos``, ``reveals`` (face-down tableau cards turned up) and
  ``free_used`` (a card was ever put on a free column); counters never go back, not even on undo;
* ``prev``: the state an undo returns to (only where the variant has undo and the last action
  revealed no card), else ``None``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from spider_env.core.cards import KING, N_RANKS, SUIT_LETTERS, card_str, parse_card, suit_of
from spider_env.core.deals import Deal
from spider_env.core.variants import Variant, get_variant, parse_options

TEXT_HEADER = "spider-env state 1"


def run_length(col: tuple[int, ...], down: int) -> int:
    """Length of the suited descending run at the end of ``col`` (face-up cards only)."""
    n = len(col)
    if n <= down:
        return 0
    i = n - 1
    prev = col[i]
    i -= 1
    while i >= down:
        c = col[i]
        if c != prev + 1 or prev % N_RANKS == KING:
            break
        prev = c
        i -= 1
    return n - 1 - i


class State:
    """One position of a Spider-family game (immutable; see the module docstring)."""

    __slots__ = (
        "_legal",
        "cols",
        "completed",
        "deals",
        "down",
        "free_used",
        "moves",
        "prev",
        "reveals",
        "run_lengths",
        "stock",
        "undos",
        "variant",
    )

    variant: Variant
    cols: tuple[tuple[int, ...], ...]
    down: tuple[int, ...]
    run_lengths: tuple[int, ...]
    stock: tuple[tuple[int, ...], ...]
    completed: tuple[int, int, int, int]
    moves: int
    deals: int
    undos: int
    reveals: int
    free_used: bool
    prev: State | None
    _legal: list[int] | None

    def __init__(
        self,
        variant: Variant,
        cols: tuple[tuple[int, ...], ...],
        down: tuple[int, ...],
        stock: tuple[tuple[int, ...], ...],
        completed: tuple[int, int, int, int] = (0, 0, 0, 0),
        moves: int = 0,
        deals: int = 0,
        undos: int = 0,
        reveals: int = 0,
        free_used: bool = False,
        prev: State | None = None,
        *,
        run_lengths: tuple[int, ...] | None = None,
        trusted: bool = False,
    ) -> None:
        """Build a state; the one definition of one (use :meth:`from_deal` for a new game).

        Anything that is not a valid position raises ``ValueError`` naming the problem (see
        :meth:`validate`). ``trusted=True`` is for the rules engine only, which builds each next
        state from a valid one: the arguments are then taken as they are (tuples,
        ``run_lengths`` precomputed) and not validated.
        """
        if not trusted:
            cols = tuple(tuple(c) for c in cols)
            down = tuple(down)
            stock = tuple(tuple(p) for p in stock)
            completed = tuple(completed)  # type: ignore[assignment]
        self.variant = variant
        self.cols = cols
        self.down = down
        self.run_lengths = (
            run_lengths if run_lengths is not None else tuple(map(run_length, cols, down))
        )
        self.stock = stock
        self.completed = completed
        self.moves, self.deals, self.undos, self.reveals = moves, deals, undos, reveals
        self.free_used = free_used
        self.prev = prev
        self._legal = None
        if not trusted:
            self.validate()

    def cached_legal(self, compute: Callable[[State], list[int]]) -> list[int]:
        """``compute(self)`` on the first call, the same list after (the rules' legal-action
        cache; a state never changes, so neither do its legal actions). Do not mutate it."""
        legal = self._legal
        if legal is None:
            legal = self._legal = compute(self)
        return legal

    # --- construction ------------------------------------------------------------------
    @classmethod
    def from_deal(cls, deal: Deal) -> State:
        """The starting position of a :class:`spider_env.core.deals.Deal`."""
        v = deal.variant
        return cls(v, deal.columns, v.face_down, deal.stock)

    def replace(self, **changes: Any) -> State:
        """A validated copy with some fields changed (for tests and tools, not the hot path)."""
        fields = {
            name: getattr(self, name)
            for name in (
                "variant",
                "cols",
                "down",
                "stock",
                "completed",
                "moves",
                "deals",
                "undos",
                "reveals",
                "free_used",
                "prev",
            )
        }
        unknown = set(changes) - set(fields)
        if unknown:
            raise ValueError(f"unknown state field(s): {', '.join(sorted(unknown))}")
        fields.update(changes)
        return State(**fields)

    # --- derived -----------------------------------------------------------------------
    @property
    def completed_runs(self) -> int:
        return sum(self.completed)

    @property
    def won(self) -> bool:
        return sum(self.completed) >= self.variant.runs_to_win

    @property
    def deals_left(self) -> int:
        return sum(1 for p in self.stock if p)

    @property
    def stock_cards(self) -> int:
        return sum(len(p) for p in self.stock)

    @property
    def score(self) -> int:
        """The variant's score (see ``Variant.scoring``)."""
        runs = sum(self.completed)
        if self.variant.scoring == "windows":
            return 500 - self.moves - self.deals - self.undos + 100 * runs
        bonus = 100 if runs >= self.variant.runs_to_win and not self.free_used else 0
        return 25 * self.reveals + 100 * runs + bonus

    def key(self) -> tuple[Any, ...]:
        """The position (cards only, no counters or undo history), hashable.

        Equal keys mean the same table; use it to detect repeated positions.
        """
        return (self.cols, self.down, self.stock, self.completed)

    def __hash__(self) -> int:
        return hash(self.key())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        return (
            self.key() == other.key()
            and self.variant == other.variant
            and (self.moves, self.deals, self.undos, self.reveals, self.free_used)
            == (other.moves, other.deals, other.undos, other.reveals, other.free_used)
            and _history(self) == _history(other)
        )

    def __repr__(self) -> str:
        return (
            f"<State {self.variant.name} moves={self.moves} deals={self.deals} "
            f"completed={sum(self.completed)} score={self.score}>"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (State.from_text, (self.to_text(),))

    # --- validation --------------------------------------------------------------------
    def validate(self) -> None:
        """Raise ``ValueError`` if the state is not a consistent position of its variant."""
        errs = _problems(self)
        if errs:
            raise ValueError("invalid state: " + "; ".join(errs))

    # --- text form ---------------------------------------------------------------------
    def to_text(self) -> str:
        """Exact, readable text form; :meth:`from_text` reads it back to an equal state.

        ``|`` marks a face-down card; cards are rank (A 2-9 T J Q K) then suit (S H D C).
        """
        v = self.variant
        lines = [TEXT_HEADER, f"variant: {v.name}"]
        opts = v.options_text()
        if opts:
            lines.append(f"options: {opts}")
        lines.append(
            f"counters: moves={self.moves} deals={self.deals} undos={self.undos} "
            f"reveals={self.reveals} free_used={'true' if self.free_used else 'false'}"
        )
        lines.extend(_table_lines(self))
        depth, p = 0, self.prev
        while p is not None:
            depth += 1
            lines.append(f"undo {depth}:")
            lines.extend(_table_lines(p))
            p = p.prev
        return "\n".join(lines) + "\n"

    @classmethod
    def from_text(cls, text: str) -> State:
        """Parse :meth:`to_text` output; ``ValueError`` naming the line and reason if bad."""
        if not isinstance(text, str):
            raise TypeError(f"state text must be a str, got {type(text).__name__}")
        lines = text.splitlines()
        pos = 0

        def fail(lineno: int, why: str) -> ValueError:
            shown = lines[lineno - 1] if 0 < lineno <= len(lines) else "<end of text>"
            return ValueError(f"corrupt state text, line {lineno} ({shown!r}): {why}")

        def take(prefix: str) -> tuple[int, str]:
            nonlocal pos
            if pos >= len(lines):
                raise fail(pos + 1, f"expected a line starting {prefix!r}, text ended")
            line = lines[pos]
            pos += 1
            if not line.startswith(prefix):
                raise fail(pos, f"expected a line starting {prefix!r}")
            return pos, line[len(prefix) :].strip()

        n, head = take("spider-env state ")
        if head != "1":
            raise fail(n, f"unsupported state text version {head!r}")
        n, name = take("variant:")
        try:
            variant = get_variant(name)
        except ValueError as exc:
            raise fail(n, str(exc)) from None
        if pos < len(lines) and lines[pos].startswith("options:"):
            n, opts = take("options:")
            try:
                variant = parse_options(variant, opts)
            except ValueError as exc:
                raise fail(n, str(exc)) from None
        n, raw = take("counters:")
        counters = _parse_fields(raw, ("moves", "deals", "undos", "reveals", "free_used"))
        if counters is None:
            raise fail(n, "expected moves=N deals=N undos=N reveals=N free_used=true|false")
        ints: dict[str, int] = {}
        for key in ("moves", "deals", "undos", "reveals"):
            val = counters[key]
            if not (val.isascii() and val.isdigit()):
                raise fail(n, f"{key} must be a non-negative integer, got {val!r}")
            ints[key] = int(val)
        if counters["free_used"] not in ("true", "false"):
            raise fail(n, "free_used must be true or false")
        free_used = counters["free_used"] == "true"

        tables = []
        while True:
            start = pos
            try:
                completed, cols, down, stock, pos = _parse_table(lines, pos, variant)
            except _LineError as exc:
                raise fail(exc.lineno, exc.why) from None
            tables.append((start, completed, cols, down, stock))
            if pos < len(lines) and lines[pos].strip():
                n, label = take("undo ")
                if label != f"{len(tables)}:":
                    raise fail(n, f"expected 'undo {len(tables)}:'")
                continue
            extra = next((i for i in range(pos, len(lines)) if lines[i].strip()), None)
            if extra is not None:
                raise fail(extra + 1, "unexpected text after the state")
            break

        prev: State | None = None
        for start, completed, cols, down, stock in reversed(tables):
            try:
                st = State(
                    variant,
                    tuple(cols),
                    tuple(down),
                    tuple(stock),
                    completed,
                    ints["moves"],
                    ints["deals"],
                    ints["undos"],
                    ints["reveals"],
                    free_used,
                    prev,
                )
            except ValueError as exc:
                found = _deck_error(variant, start + 1, completed, cols, stock)
                if found is None:
                    raise fail(start + 1, str(exc)) from None
                lineno, why = found
                if lineno is not None:
                    raise fail(lineno, why) from None
                last = start + 1 + len(cols) + len(stock)
                raise ValueError(
                    f"corrupt state text, the position on lines {start + 1}-{last}: {why}"
                ) from None
            prev = st
        assert prev is not None
        return prev


def _history(st: State) -> tuple[Any, ...]:
    keys = []
    p = st.prev
    while p is not None:
        keys.append(p.key())
        p = p.prev
    return tuple(keys)


def _problems(st: State) -> list[str]:
    v = st.variant
    errs: list[str] = []
    if not isinstance(v, Variant):
        return [f"variant must be a Variant, got {type(v).__name__}"]
    C = v.n_columns
    if len(st.cols) != C or len(st.down) != C:
        return [f"{v.name} has {C} columns, got {len(st.cols)} columns and {len(st.down)} counts"]
    if len(st.stock) != len(v.stock):
        return [f"{v.name} has {len(v.stock)} stock piles, got {len(st.stock)}"]
    if len(st.completed) != 4 or any(not isinstance(x, int) or x < 0 for x in st.completed):
        return ["completed must be four non-negative counts (S, H, D, C)"]
    for name in ("moves", "deals", "undos", "reveals"):
        val = getattr(st, name)
        if type(val) is not int or val < 0:  # a record's field: a Python int exactly
            errs.append(f"{name} must be a non-negative int, got {val!r}")
    counts: Counter[int] = Counter()
    allowed = set(v.suit_ids)
    for c, (col, d) in enumerate(zip(st.cols, st.down)):
        for card in col:
            if not isinstance(card, int) or not 0 <= card < 52:
                errs.append(f"column {c} holds {card!r}, not a card id")
                return errs
        if not isinstance(d, int) or d < 0 or d > len(col):
            errs.append(f"column {c}: {d!r} face-down cards in a column of {len(col)}")
        elif col and d == len(col):
            errs.append(f"column {c}: its exposed card is face down")
        counts.update(col)
        if c >= v.dealt_columns and d:
            errs.append(f"free column {c} cannot hold face-down cards")
    for j, pile in enumerate(st.stock):
        if pile and len(pile) != v.stock[j]:
            errs.append(f"stock pile {j} holds {len(pile)} cards, expected {v.stock[j]} or 0")
        for card in pile:
            if not isinstance(card, int) or not 0 <= card < 52:
                errs.append(f"stock pile {j} holds {card!r}, not a card id")
                return errs
        counts.update(pile)
    for card in counts:
        if suit_of(card) not in allowed:
            errs.append(f"{card_str(card)} is of a suit {v.name} does not use")
    for s in range(4):
        if st.completed[s] and s not in allowed:
            errs.append(f"completed runs of {SUIT_LETTERS[s]}, a suit {v.name} does not use")
        for r in range(N_RANKS):
            counts[s * N_RANKS + r] += st.completed[s]
    expected = Counter({s * N_RANKS + r: v.copies_per_suit for s in allowed for r in range(13)})
    if not errs and counts != expected:
        extra = sorted((counts - expected).elements())
        missing = sorted((expected - counts).elements())
        parts = []
        if extra:
            parts.append("too many " + " ".join(card_str(c) for c in extra[:8]))
        if missing:
            parts.append("missing " + " ".join(card_str(c) for c in missing[:8]))
        errs.append(f"cards do not make up the {v.n_cards}-card deck: " + ", ".join(parts))
    empty_piles = sum(1 for p in st.stock if not p)
    if not v.choose_pile and any(st.stock[j] for j in range(empty_piles)):
        errs.append("stock piles are dealt in order: the dealt (empty) piles must come first")
    if empty_piles != st.deals:
        errs.append(f"{st.deals} deals made but {empty_piles} stock piles are empty")
    if v.auto_discard:
        for c, r in enumerate(st.run_lengths):
            if r >= N_RANKS:
                errs.append(f"column {c} ends in a complete run that should have been removed")
    if sum(st.completed) > v.runs_to_win:
        errs.append(f"{sum(st.completed)} runs completed, the game ends at {v.runs_to_win}")
    if st.prev is not None:
        if not v.undo:
            errs.append("an undo history in a variant without undo")
        elif st.prev.variant != v:
            errs.append("undo history of another variant")
    return errs


def _deck_error(
    v: Variant,
    first_line: int,
    completed: tuple[int, int, int, int],
    cols: list[tuple[int, ...]],
    stock: list[tuple[int, ...]],
) -> tuple[int | None, str] | None:
    """The line to blame when a position read from text has the wrong cards.

    Completed runs are on ``first_line``, column ``c`` on ``first_line + 1 + c``, then the
    piles. In this order: a stock pile of the wrong size (its line); a card of a suit the
    variant does not use (its line); completed runs counted while all their cards are still on
    the other lines (the ``completed:`` line); the first surplus copy of a card in text order
    (its line). ``(None, why)`` when cards are only missing; ``None`` when the cards make up the
    deck and the piles have their sizes."""
    allowed = set(v.suit_ids)
    copies = v.copies_per_suit
    expected = Counter({s * N_RANKS + r: copies for s in allowed for r in range(N_RANKS)})
    pile_line = first_line + 1 + len(cols)
    for j, pile in enumerate(stock):
        if pile and len(pile) != v.stock[j]:
            return pile_line + j, f"stock pile {j} holds {len(pile)} cards, expected {v.stock[j]}"
    lines = [(first_line + 1 + c, col) for c, col in enumerate(cols)]
    lines += [(pile_line + j, pile) for j, pile in enumerate(stock)]
    for lineno, cards in lines:
        for card in cards:
            if suit_of(card) not in allowed:
                return lineno, f"{card_str(card)} is of a suit {v.name} does not use"
    on_lines = Counter(card for _, cards in lines for card in cards)
    for s in range(4):
        if completed[s] and s not in allowed:
            return first_line, f"completed runs of {SUIT_LETTERS[s]}, a suit {v.name} does not use"
        spare = min(on_lines[s * N_RANKS + r] for r in range(N_RANKS)) + completed[s] - copies
        if completed[s] and spare > 0:
            return first_line, (
                f"{SUIT_LETTERS[s]}={completed[s]} with the cards still on the other lines "
                f"makes {copies + spare} of every {SUIT_LETTERS[s]} card, the deck has {copies}"
            )
    total = on_lines + Counter(
        {s * N_RANKS + r: completed[s] for s in range(4) for r in range(N_RANKS)}
    )
    missing = sorted((expected - total).elements())
    also = f"; missing {_cards_text(missing)}" if missing else ""
    counts = Counter({s * N_RANKS + r: completed[s] for s in range(4) for r in range(N_RANKS)})
    where: dict[int, list[int]] = {card: [first_line] for card, n in counts.items() if n}
    for lineno, cards in lines:
        for card in cards:
            counts[card] += 1
            if counts[card] > copies:
                before = ", ".join(str(n) for n in dict.fromkeys(where.get(card, [])))
                return lineno, (
                    f"one {card_str(card)} too many: the {v.n_cards}-card deck has {copies} of "
                    f"each card, this is number {counts[card]} (earlier ones on lines "
                    f"{before or 'none'}){also}"
                )
            where.setdefault(card, []).append(lineno)
    if missing:
        return (
            None,
            f"cards do not make up the {v.n_cards}-card deck: missing {_cards_text(missing)}",
        )
    return None


def _cards_text(cards: list[int], most: int = 8) -> str:
    shown = " ".join(card_str(c) for c in cards[:most])
    return shown + (f" and {len(cards) - most} more" if len(cards) > most else "")


def _table_lines(st: State) -> list[str]:
    lines = ["completed: " + " ".join(f"{SUIT_LETTERS[s]}={st.completed[s]}" for s in range(4))]
    for c, (col, d) in enumerate(zip(st.cols, st.down)):
        cards = ["|" + card_str(x) for x in col[:d]] + [card_str(x) for x in col[d:]]
        lines.append(f"col{c}: " + (" ".join(cards) if cards else "-"))
    for j, pile in enumerate(st.stock):
        lines.append(f"pile{j}: " + (" ".join(card_str(x) for x in pile) if pile else "-"))
    return lines


class _LineError(Exception):
    def __init__(self, lineno: int, why: str) -> None:
        super().__init__(why)
        self.lineno, self.why = lineno, why


def _parse_fields(raw: str, keys: tuple[str, ...]) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for part in raw.split():
        k, eq, val = part.partition("=")
        if not eq or k in out:
            return None
        out[k] = val
    return out if set(out) == set(keys) else None


def _parse_table(
    lines: list[str], pos: int, v: Variant
) -> tuple[tuple[int, int, int, int], list[tuple[int, ...]], list[int], list[tuple[int, ...]], int]:
    def line_at(prefix: str) -> str:
        if pos >= len(lines):
            raise _LineError(pos + 1, f"expected {prefix!r}, text ended")
        line = lines[pos]
        if not line.startswith(prefix):
            raise _LineError(pos + 1, f"expected a line starting {prefix!r}")
        return line[len(prefix) :].strip()

    raw = line_at("completed:")
    fields = _parse_fields(raw, tuple(SUIT_LETTERS))
    if fields is None or not all(x.isascii() and x.isdigit() for x in fields.values()):
        raise _LineError(pos + 1, "expected S=N H=N D=N C=N")
    completed = (int(fields["S"]), int(fields["H"]), int(fields["D"]), int(fields["C"]))
    pos += 1
    cols: list[tuple[int, ...]] = []
    down: list[int] = []
    for c in range(v.n_columns):
        raw = line_at(f"col{c}:")
        cards: list[int] = []
        d = 0
        if raw != "-":
            for tok in raw.split():
                hidden = tok.startswith("|")
                try:
                    card = parse_card(tok[1:] if hidden else tok)
                except ValueError as exc:
                    raise _LineError(pos + 1, str(exc)) from None
                if hidden:
                    if d != len(cards):
                        raise _LineError(pos + 1, f"face-down {tok} lies on a face-up card")
                    d += 1
                cards.append(card)
        cols.append(tuple(cards))
        down.append(d)
        pos += 1
    stock: list[tuple[int, ...]] = []
    for j in range(len(v.stock)):
        raw = line_at(f"pile{j}:")
        pile: list[int] = []
        if raw != "-":
            for tok in raw.split():
                try:
                    pile.append(parse_card(tok))
                except ValueError as exc:
                    raise _LineError(pos + 1, str(exc)) from None
        stock.append(tuple(pile))
        pos += 1
    return completed, cols, down, stock, pos
