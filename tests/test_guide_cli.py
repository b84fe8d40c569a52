"""The CLI guide (docs/guide/cli.md) covers every command the parser has: a command added to
``spider_env.apps.cli.build_parser()`` fails here until the guide shows it in use (its options are
documented by the generated reference; the guide goes task by task)."""

from __future__ import annotations

import argparse
from pathlib import Path

from spider_env.apps.cli import build_parser

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "cli.md"


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> list[str]:
    """Every command line's leading words: ``evaluate``, ..., ``model show``, ``model convert``."""
    out: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append(prefix + name)
                out += _commands(sub, prefix + name + " ")
    return out


def test_the_cli_guide_shows_every_command_in_use() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    commands = _commands(build_parser())
    assert {"evaluate", "model show"} <= set(commands)
    missing = [c for c in commands if f"spider-env {c}" not in text]
    assert not missing, f"docs/guide/cli.md never shows: {missing}"
