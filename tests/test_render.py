"""ANSI rendering: golden files of fixed deals, plus the properties every render must have.

Regenerate the golden files after an intended change of the render (and review the diff):

    .venv/bin/python tests/test_render.py --update
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import spider_env  # noqa: F401  (registers Spider-v0)
from spider_env.env import SpiderEnv
from spider_env.render import render_text

GOLDEN = Path(__file__).parent / "golden" / "render"
ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")


def _first_legal_play(env: SpiderEnv, steps: int) -> None:
    for _ in range(steps):
        env.step(int(np.flatnonzero(env.action_masks())[-1]))


def _won(env: SpiderEnv) -> None:
    text = "\n".join(
        [
            "spider-env state 1",
            "variant: spider-1suit",
            "counters: moves=300 deals=5 undos=0 reveals=44 free_used=false",
            "completed: S=7 H=0 D=0 C=0",
            "col0: KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S",
            "col1: AS",
            *[f"col{c}: -" for c in range(2, 10)],
            *[f"pile{j}: -" for j in range(5)],
        ]
    )
    env.reset(options={"state_text": text + "\n"})
    env.step(env.encode_action(1, 1, 0))


# name -> (env kwargs, reset options, what to do before rendering)
CASES = {
    "spider-4suit-deal0": ({}, {"deal": 0}, None),
    "spider-4suit-deal0-ascii": ({"ascii": True}, {"deal": 0}, None),
    "spider-4suit-deal0-color": ({"color": True}, {"deal": 0}, None),
    "spider-2suit-deal3-play": ({"suits": 2}, {"deal": 3}, lambda e: _first_legal_play(e, 40)),
    "spider-4suit-deal5-illegal": (
        {"ascii": True},
        {"deal": 5},
        lambda e: e.step(e.encode_action(0, 1, 0)),
    ),
    "tournament-2suit-deal1-ascii": (
        {"variant": "spider-tournament-2suit", "ascii": True},
        {"deal": 1},
        lambda e: _first_legal_play(e, 3),
    ),
    "spider-1suit-won": ({"suits": 1}, None, _won),
}


def render_case(name: str) -> str:
    kwargs, options, before = CASES[name]
    env = SpiderEnv(render_mode="ansi", **kwargs)  # type: ignore[arg-type]
    env.reset(options=options)
    if before is not None:
        before(env)
    text = env.render()
    assert isinstance(text, str)
    return text


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_render(name):
    path = GOLDEN / f"{name}.txt"
    assert path.exists(), f"missing {path}; run: python tests/test_render.py --update"
    assert render_case(name) == path.read_text(encoding="utf-8")


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
    _first_legal_play(env, 40)
    rows = env.render().splitlines()[3:]  # the column labels, then the cards
    assert rows[0].split() == [str(c) for c in range(10)]
    for row in rows:
        if row.startswith("***"):
            continue
        # every cell is 3 characters, right-aligned, then a space
        assert all(row[i] == " " for i in range(3, len(row), 4)), row


def test_render_text_is_pure():
    env = SpiderEnv()
    env.reset(options={"deal": 2})
    st = env.state
    assert render_text(st) == render_text(st)
    assert "last action: move" in render_text(st, last_action="move 1 card 0 -> 1")


def update() -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name in sorted(CASES):
        path = GOLDEN / f"{name}.txt"
        path.write_text(render_case(name), encoding="utf-8")
        print("wrote", path)


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        update()
    else:
        print(__doc__)
