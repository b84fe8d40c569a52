"""ANSI rendering: the properties every render must have.

The render's golden files (``tests/golden/render/``) are written by ``tests/golden/regenerate.py``
(``make golden``) and checked by ``tests/test_golden.py``.
"""

from __future__ import annotations

import re

import numpy as np

import spider_env  # noqa: F401  (registers Spider-v0)
from spider_env.core.rules import apply, legal_actions
from spider_env.core.state import State
from spider_env.env import SpiderEnv
from spider_env.render import render_text

ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")


def _play_last_legal(env: SpiderEnv, steps: int) -> None:
    for _ in range(steps):
        env.step(int(np.flatnonzero(env.action_masks())[-1]))


def test_render_content_of_a_deal():
    env = SpiderEnv(render_mode="ansi")
    env.reset(options={"deal": 0})
    text = env.render()
    lines = text.splitlines()
    assert lines[0].startswith("spider-4suit | deals left 5 | completed 0/8 | score 500 | moves 0")
    assert text.count("▒▒") == 44  # 54 dealt, 10 face up
    st = env.state
    from spider_env.core.cards import card_str

    for col, d in zip(st.cols, st.down):
        assert card_str(col[-1], ascii=False) in text
        assert d == len(col) - 1
    plain = SpiderEnv(render_mode="ansi", ascii=True)
    plain.reset(options={"deal": 0})
    ascii_text = plain.render()
    assert ascii_text.isascii() and ascii_text.count("##") == 44
    assert "10" not in ascii_text.split("\n", 3)[3]  # tens are "T" in plain ASCII


def test_color_only_marks_red_suits():
    env = SpiderEnv(render_mode="ansi", color=True)
    env.reset(options={"deal": 0})
    text = env.render()
    colored = re.findall(r"\x1b\[31m\s*([^\x1b]+)\x1b\[0m", text)
    assert colored and all(c.strip()[-1] in "♥♦" for c in colored)
    stripped = ANSI_CODE.sub("", text)
    env2 = SpiderEnv(render_mode="ansi")
    env2.reset(options={"deal": 0})
    assert stripped == env2.render()


def test_columns_line_up():
    env = SpiderEnv(render_mode="ansi", suits=2)
    env.reset(options={"deal": 3})
    _play_last_legal(env, 40)
    rows = env.render().splitlines()[3:]  # the column labels, then the cards
    assert rows[0].split() == [str(c) for c in range(10)]
    for row in rows:
        if row.startswith("***"):
            continue
        # every cell is 3 characters, right-aligned, then a space
        assert all(row[i] == " " for i in range(3, len(row), 4)), row


def test_render_text_depends_only_on_the_position():
    env = SpiderEnv()
    env.reset(options={"deal": 2})
    st = env.state
    text = st.to_text()
    out = render_text(st)
    assert render_text(State.from_text(text)) == out  # an equal state, another object
    assert st.to_text() == text  # rendering changed nothing
    assert render_text(apply(st, legal_actions(st)[0])) != out
    assert "last action: -" in out.splitlines()
    shown = render_text(st, last_action="move 1 card 0 -> 1").splitlines()
    assert "last action: move 1 card 0 -> 1" in shown
