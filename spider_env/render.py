"""Text rendering of a position (pure functions, no Gymnasium).

:func:`render_text` draws the whole table: a header (variant, deals left, completed runs, score,
moves), the columns side by side (deepest card at the top, like on a real table), face-down cards
as a back (``▒▒``, or ``##`` in plain ASCII), face-up cards as ``K♠ 10♥`` (or ``KS TH``), red
suits in colour when ``color=True`` (ANSI escape codes), the visible tops of stock piles where the
variant shows them, and the last action in words.
"""

from __future__ import annotations

from spider_env.core.cards import SUIT_LETTERS, SUIT_SYMBOLS, card_str, is_red
from spider_env.core.rules import legal_actions
from spider_env.core.state import State
from spider_env.core.variants import Variant

RED = "\x1b[31m"
RESET = "\x1b[0m"
BACK_UNICODE = "▒▒"
BACK_ASCII = "##"
CELL = 4  # characters per column ("10♥" plus a space)


def _cell(card: int | None, face_up: bool, ascii: bool, color: bool) -> str:
    if card is None:
        return " " * CELL
    if not face_up:
        text = BACK_ASCII if ascii else BACK_UNICODE
        return text.rjust(CELL - 1) + " "
    text = card_str(card, ascii).rjust(CELL - 1)
    if color and is_red(card):
        text = RED + text + RESET
    return text + " "


def column_label(variant: Variant, c: int) -> str:
    """Column ``c``'s label: its number, ``F`` before it for a free column (never dealt to)."""
    return f"F{c}" if c >= variant.dealt_columns else str(c)


def header_text(state: State) -> str:
    """The one-line summary: variant, deals left, completed runs, score, moves."""
    v = state.variant
    done = sum(state.completed)
    return (
        f"{v.name} | deals left {state.deals_left} | completed {done}/{v.runs_to_win} | "
        f"score {state.score} | moves {state.moves}"
    )


def render_text(
    state: State,
    *,
    ascii: bool = False,
    color: bool = False,
    last_action: str | None = None,
) -> str:
    """The table as text (ends with a newline). ``last_action`` is shown in words if given."""
    v = state.variant
    lines = [header_text(state)]
    suits = "".join(
        f" {(SUIT_LETTERS if ascii else SUIT_SYMBOLS)[s]}{state.completed[s]}" for s in v.suit_ids
    )
    stock_line = f"stock: {state.stock_cards} cards in {state.deals_left} deal(s)"
    if v.pile_top_visible:
        tops = [card_str(p[0], ascii) if p else "--" for p in state.stock]
        stock_line += " | pile tops: " + " ".join(tops)
    lines.append(f"runs by suit:{suits} | {stock_line}")
    lines.append(f"last action: {last_action if last_action is not None else '-'}")
    C = v.n_columns
    labels = []
    for c in range(C):
        labels.append(column_label(v, c).rjust(CELL - 1) + " ")
    lines.append("".join(labels).rstrip())
    depth = max((len(col) for col in state.cols), default=0)
    for i in range(max(depth, 1)):
        cells = []
        for c in range(C):
            col = state.cols[c]
            if i < len(col):
                cells.append(_cell(col[i], i >= state.down[c], ascii, color))
            elif i == 0:
                cells.append("--".rjust(CELL - 1) + " ")
            else:
                cells.append(" " * CELL)
        lines.append("".join(cells).rstrip())
    if state.won:
        lines.append("*** won ***")
    elif not legal_actions(state):
        lines.append("*** no legal action: game over ***")
    return "\n".join(lines) + "\n"


__all__ = ["column_label", "header_text", "render_text"]
