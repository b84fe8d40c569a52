"""Terminal play: redraw in place on a terminal, plain text elsewhere, cards as on the table."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from typing import Any

import pytest
from spider_env.agents.planner import PlannerAgent

from spider_env.apps.episodes import CLEAR_SCREEN, redraws_in_place
from spider_env.apps.play import HINT_BUDGET, NO_NUMBA_NOTE, TerminalGame
from spider_env.core.actions import decode, describe
from spider_env.core.cards import card_str
from spider_env.core.variants import VARIANTS

ONE_SUIT = VARIANTS["spider-1suit"]


class FakeTerminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _illegal_pair(game: TerminalGame) -> tuple[int, int]:
    """Two columns whose exposed cards cannot be moved one onto the other (a card message)."""
    st = game.env.state
    mask = game.env.action_masks()
    for src in range(len(st.cols)):
        for dst in range(len(st.cols)):
            if src != dst and st.cols[src] and st.cols[dst]:
                try:
                    game.parse(f"{src} {dst}")
                except ValueError:
                    return src, dst
    raise AssertionError(f"every pair is legal? {mask.sum()}")


def _legal_move(game: TerminalGame) -> str:
    for a in game.env.action_masks().nonzero()[0]:
        m = decode(game.variant, int(a))
        if m.kind == "move":
            return f"{m.src} {m.dst} {m.cards}"
    raise AssertionError("no legal move")


@pytest.mark.parametrize("ascii", [False, True])
def test_messages_write_cards_as_the_table_does(ascii: bool) -> None:
    game = TerminalGame(ONE_SUIT, deal=7, ascii=ascii)
    src, dst = _illegal_pair(game)
    top, under = game.env.state.cols[src][-1], game.env.state.cols[dst][-1]
    out = io.StringIO()
    game.run(io.StringIO(f"{src} {dst}\nq\n"), out)
    text = out.getvalue()
    shown = f"{card_str(top, ascii=ascii)} cannot go on {card_str(under, ascii=ascii)}"
    assert shown in text
    assert card_str(top, ascii=ascii) in game.frame()  # the table writes it the same way
    if not ascii:
        assert card_str(top, ascii=True) + " cannot" not in text


def test_redraws_in_place_only_on_a_terminal(monkeypatch: Any) -> None:
    monkeypatch.setenv("TERM", "xterm")
    master, slave = os.openpty()
    try:
        with open(slave, "w", closefd=False) as tty:
            assert redraws_in_place(tty)
            monkeypatch.setenv("TERM", "dumb")
            assert not redraws_in_place(tty)
    finally:
        os.close(master)
        os.close(slave)
    monkeypatch.setenv("TERM", "xterm")
    assert not redraws_in_place(io.StringIO())
    r, w = os.pipe()
    with open(w, "w") as pipe:
        assert not redraws_in_place(pipe)
    os.close(r)


def test_on_a_terminal_each_command_redraws_the_table_with_its_message(monkeypatch: Any) -> None:
    monkeypatch.setenv("TERM", "xterm")
    game = TerminalGame(ONE_SUIT, deal=7)
    src, dst = _illegal_pair(game)
    move = _legal_move(game)
    out = FakeTerminal()
    game.run(io.StringIO(f"{src} {dst}\n{move}\nq\n"), out)
    screens = out.getvalue().split(CLEAR_SCREEN)
    assert screens[0] == ""  # the screen is cleared before the first table
    screens = screens[1:]
    assert len(screens) == 3  # the start, after the refused move, after the move
    for screen in screens:
        assert screen.startswith("spider-1suit, deal 7.") and "last action:" in screen
    table, _, below = screens[1].partition("\n! ")
    assert "cannot go on" in below and "cannot go on" not in table
    assert "moves 1" in screens[2] and "! " not in screens[2]


def test_into_a_pipe_the_output_is_plain_text() -> None:
    game = TerminalGame(ONE_SUIT, deal=7)
    move = _legal_move(game)
    out = io.StringIO()
    game.run(io.StringIO(f"9 9\n{move}\nq\n"), out)
    text = out.getvalue()
    assert "\x1b" not in text
    assert text.count("last action:") == 2 and "! source and target" in text


def test_play_command_redraws_on_a_pseudo_terminal() -> None:
    master, slave = os.openpty()
    env = {**os.environ, "TERM": "xterm"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "spider_env.apps.cli", "play", "--suits", "1", "--deal", "7"],
        stdin=subprocess.PIPE,
        stdout=slave,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    assert proc.stdin is not None
    proc.stdin.write(b"0 0\nq\n")
    proc.stdin.close()
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # the terminal closed (Linux: EIO)
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=60) == 0
    text = b"".join(chunks).decode()
    assert text.startswith(CLEAR_SCREEN)
    assert text.count(CLEAR_SCREEN) == 2  # the start, then the refused "0 0"
    assert "! source and target are the same column" in text and "Bye." in text


def test_quit_and_end_of_input_are_recorded_as_quit() -> None:
    for commands in ("q\n", ""):
        game = TerminalGame(ONE_SUIT, deal=3)
        game.run(io.StringIO(commands), io.StringIO())
        outcome = game.episode().outcome
        assert outcome["result"] == "quit"
        assert not outcome["terminated"] and not outcome["truncated"] and not outcome["won"]


# --- hints -------------------------------------------------------------------------------------
def _legal_descriptions(game: TerminalGame) -> dict[str, int]:
    v = game.variant
    return {describe(v, int(a)): int(a) for a in game.env.action_masks().nonzero()[0]}


@pytest.mark.parametrize("name", ["spider-1suit", "spider-4suit", "spider-tournament-2suit"])
def test_hint_is_the_planners_legal_move_and_the_same_when_asked_again(name: str) -> None:
    game = TerminalGame(VARIANTS[name], deal=7)
    planner = PlannerAgent(game.variant, seed=0, **HINT_BUDGET)
    first = planner.act(game.obs, game.env.action_masks(), game.info)
    assert game.hint() == describe(game.variant, first)
    for _ in range(6):  # following the hints (the planner keeps its plan) or not
        hint = game.hint()
        legal = _legal_descriptions(game)
        assert hint in legal
        assert game.hint() == hint  # asked again before a move: the same hint
        game.step(legal[hint] if len(game.actions) % 2 else min(legal.values()))


def test_the_h_command_prints_the_hint() -> None:
    game = TerminalGame(ONE_SUIT, deal=7)
    out = io.StringIO()
    game.run(io.StringIO("h\nq\n"), out)
    [line] = [x for x in out.getvalue().splitlines() if "hint: " in x]  # after the prompt
    assert line.partition("hint: ")[2] == game.hint()
    assert game.hint() in _legal_descriptions(game)


def test_without_numba_the_hint_comes_from_greedy_with_a_note() -> None:
    script = (
        "import sys\n"
        "sys.modules['numba'] = None  # as if numba were not installed\n"
        "from spider_env.apps.play import TerminalGame\n"
        "from spider_env.agents import GreedyAgent\n"
        "from spider_env.core.actions import describe\n"
        "from spider_env.core.variants import VARIANTS\n"
        "game = TerminalGame(VARIANTS['spider-1suit'], deal=7)\n"
        "greedy = GreedyAgent(game.variant, seed=0)\n"
        "a = greedy.act(game.obs, game.env.action_masks(), game.info)\n"
        "print(describe(game.variant, a))\n"
        "print(game.hint())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    greedy_move, hint = proc.stdout.splitlines()[-2:]
    assert hint == f"{greedy_move} {NO_NUMBA_NOTE}"
    assert "numba" in NO_NUMBA_NOTE
