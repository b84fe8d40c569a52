"""Every code snippet of README.md and of the docs site's pages (docs/**/*.md) works as written.

* Each ```` ```python ```` block runs as a script of its own (the venv's Python, a temporary
  working directory, where ``docs`` leads to the repository's docs/ so the shipped models are at
  ``docs/models/``), so a snippet must be self-contained: imports included, ``jobs=2`` under
  ``if __name__ == "__main__":``.
* Each ``spider-env ...`` command line of the other fenced blocks parses with the CLI's own
  argument parser (usage lines with ``[optional]`` parts are synopses and are skipped); the
  Quick start's ``show`` command also runs.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\S*)\s*$")


def fenced_blocks(text: str) -> list[tuple[str, int, str]]:
    """``(language, first line number, code)`` of every fenced block of a Markdown text."""
    blocks: list[tuple[str, int, str]] = []
    lang: str | None = None
    start, lines = 0, []
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if lang is None:
            if match:
                lang, start, lines = match.group(1), number + 1, []
        elif line.strip() == "```":
            blocks.append((lang, start, "\n".join(lines) + "\n"))
            lang = None
        else:
            lines.append(line)
    if lang is not None:
        raise ValueError(f"the block opened at line {start - 1} is never closed")
    return blocks


def cli_commands(text: str) -> list[tuple[int, list[str]]]:
    """``(line number, argv)`` of every ``spider-env`` command in non-Python fenced blocks."""
    out = []
    for lang, start, code in fenced_blocks(text):
        if lang == "python":
            continue
        for offset, line in enumerate(code.splitlines()):
            if not line.lstrip().startswith("spider-env "):
                continue  # prose and other commands (a tree, make lines) are not parsed
            argv = shlex.split(line, comments=True)
            if argv[:1] == ["spider-env"] and not any("[" in a for a in argv):
                out.append((start + offset, argv[1:]))
    return out


TEXT = README.read_text(encoding="utf-8")
#: The pages whose snippets run: the README and the site's hand-written pages (docs/_build and
#: the pages the docs build generates are not sources).
DOC_PAGES = [
    p
    for p in sorted((ROOT / "docs").glob("**/*.md"))
    if not any(part.startswith("_") for part in p.relative_to(ROOT / "docs").parts)
]
PAGES = [README, *DOC_PAGES]
#: The first line of a snippet that needs the rllib extra: tests/test_rllib.py runs those (in
#: RLlib's venv, ``make test-rllib``), this file the others.
RLLIB_SNIPPET = "# needs the rllib extra"


def where(page: Path, line: int) -> str:
    """``page:line``, the id of a snippet (the page relative to the repository)."""
    return f"{page.relative_to(ROOT)}:{line}"


SNIPPETS = [
    (where(page, start), code)
    for page in PAGES
    for lang, start, code in fenced_blocks(page.read_text(encoding="utf-8"))
    if lang == "python"
]
PYTHON = [(at, code) for at, code in SNIPPETS if not code.startswith(RLLIB_SNIPPET)]
RLLIB_PYTHON = [(at, code) for at, code in SNIPPETS if code.startswith(RLLIB_SNIPPET)]
COMMANDS = [
    (where(page, n), argv)
    for page in PAGES
    for n, argv in cli_commands(page.read_text(encoding="utf-8"))
]


def test_readme_has_snippets() -> None:
    readme = [at for at, _ in SNIPPETS if at.startswith("README.md:")]
    assert len(readme) >= 3
    assert any(argv[0] == "evaluate" for _, argv in COMMANDS)


@pytest.mark.slow
@pytest.mark.parametrize(("at", "code"), PYTHON, ids=[at for at, _ in PYTHON])
def test_python_snippet_runs(at: str, code: str, tmp_path: Path) -> None:
    run_snippet(at, code, tmp_path)


def run_snippet(at: str, code: str, tmp_path: Path) -> None:
    """Run the snippet at ``at`` (``page:line``) as a script of its own in ``tmp_path``; fail with
    its output. (Not with ``TMPDIR`` there: Ray's sockets under a path that long exceed AF_UNIX's
    107 bytes.)"""
    script = tmp_path / "snippet.py"
    (tmp_path / "docs").symlink_to(ROOT / "docs", target_is_directory=True)
    script.write_text(code, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"{at}:\n{code}\n{proc.stdout}\n{proc.stderr}"


@pytest.mark.parametrize(("at", "argv"), COMMANDS, ids=[at for at, _ in COMMANDS])
def test_cli_command_parses(at: str, argv: list[str]) -> None:
    from spider_env.apps.cli import build_parser

    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse's answer to a bad command line, or to --version
        if exc.code == 0 and argv == ["--version"]:
            return
        pytest.fail(f"{at}: `spider-env {shlex.join(argv)}` exits {exc.code}")
    assert args.command == argv[0]
    if args.command == "evaluate":
        from spider_env.apps.evaluation import parse_deals

        assert parse_deals(args.deals)  # the --deals text is valid, not only a string


def test_quick_start_show_command_runs(tmp_path: Path) -> None:
    [argv] = [a for at, a in COMMANDS if a[:1] == ["show"] and "--deal" in a][:1]
    exe = Path(sys.executable).with_name("spider-env")
    proc = subprocess.run(
        [str(exe), *argv, "--final"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "deals left" in proc.stdout  # a rendered table


def test_block_reader_finds_blocks_and_refuses_an_unclosed_one() -> None:
    text = "x\n```python\nprint(1)\n```\n"
    text += "```\nspider-env demo  # c\nspider-env show [--final]\n```\n"
    assert fenced_blocks(text) == [
        ("python", 3, "print(1)\n"),
        ("", 6, "spider-env demo  # c\nspider-env show [--final]\n"),
    ]
    assert cli_commands(text) == [(6, ["demo"])]
    with pytest.raises(ValueError, match="never closed"):
        fenced_blocks("```python\nprint(1)\n")
