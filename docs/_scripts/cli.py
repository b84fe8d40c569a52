"""Write the CLI reference (``docs/reference/cli.md``) from the parser itself.

Walks ``spider_env.apps.cli.build_parser()``: every subcommand (nested ones too), its
description, usage, and every argument with its help, default and choices. A flag added to the
parser is documented by the next build. Run by the docs build (``docs/conf.py``); by hand:
``python docs/_scripts/cli.py OUT.md``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def _cell(text: str) -> str:
    """Text safe in one Markdown table cell."""
    text = re.sub(r"\s+", " ", text or "").strip()
    return text.replace("|", "\\|")


def _help(action: argparse.Action, parser: argparse.ArgumentParser) -> str:
    if action.help is None or action.help == argparse.SUPPRESS:
        return ""
    params = {**vars(action), "prog": parser.prog}
    for name in list(params):
        if params[name] is argparse.SUPPRESS:
            del params[name]
    if params.get("choices") is not None:
        params["choices"] = ", ".join(str(c) for c in params["choices"])
    try:
        return action.help % params
    except (KeyError, TypeError, ValueError):
        return action.help


def _default(action: argparse.Action) -> str:
    if isinstance(
        action,
        argparse._HelpAction | argparse._VersionAction | argparse._StoreConstAction,
    ) or action.default in (None, argparse.SUPPRESS):
        return ""
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        return ""
    if isinstance(action, argparse.BooleanOptionalAction):
        return "on" if action.default else "off"
    if isinstance(action.default, list | tuple):
        return " ".join(str(x) for x in action.default) if action.default else ""
    return str(action.default)


def _names(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    metavar = ""
    if action.nargs != 0:
        m = action.metavar or action.dest.upper()
        metavar = " " + (" ".join(m) if isinstance(m, tuple) else str(m))
    return ", ".join(f"`{s}{metavar}`" for s in action.option_strings)


def _prose(text: str) -> list[str]:
    """A description or epilog as Markdown: plain text stays a paragraph, text with indented
    lines keeps its layout in a text block, and ``example: CMD; CMD`` becomes a block of the
    example commands."""
    text = text.strip()
    if not text:
        return []
    lines = text.splitlines()
    if all(line.startswith("example: ") for line in lines):
        commands = [c.strip() for line in lines for c in line[9:].split(";")]
        return ["Example:", "", "```console", *commands, "```", ""]
    if any(line[:1].isspace() for line in lines):
        return ["```text", *lines, "```", ""]
    return [" ".join(line.strip() for line in lines), ""]


def _usage(parser: argparse.ArgumentParser) -> str:
    usage = parser.format_usage().strip()
    return re.sub(r"^usage:\s*", "", usage)


def section(parser: argparse.ArgumentParser, name: str, level: int, summary: str) -> list[str]:
    """The Markdown of one (sub)command and the commands under it."""
    lines = [f"{'#' * level} `{name}`", ""]
    if summary:
        lines += [summary[0].upper() + summary[1:] + ("" if summary.endswith(".") else "."), ""]
    lines += _prose(parser.description or "")
    lines += ["```text", _usage(parser), "```", ""]
    rows = []
    sub = _subparsers(parser)
    for action in parser._actions:
        if action is sub or isinstance(action, argparse._HelpAction):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        text = _help(action, parser)
        if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
            choices = ", ".join(f"`{c}`" for c in action.choices)
            text += f" (one of {choices})"
        default = _default(action)
        rows.append(
            f"| {_names(action)} | {_cell(text)} | {f'`{_cell(default)}`' if default else ''} |"
        )
    if rows:
        lines += ["| argument | what it does | default |", "|---|---|---|", *rows, ""]
    lines += _prose(parser.epilog or "")
    if sub is not None:
        helps = {a.dest: a.help or "" for a in sub._choices_actions}
        for child_name, child in sub.choices.items():
            lines += section(child, f"{name} {child_name}", min(level + 1, 6), helps[child_name])
    return lines


def render() -> str:
    import os

    from spider_env.apps.cli import build_parser

    os.environ["COLUMNS"] = "100"  # argparse wraps usage at the terminal's width: fix it

    parser = build_parser()
    lines = [
        "# CLI reference",
        "",
        "Every command of `spider-env`, every option with its help and default, generated from the"
        " command's parser when this site is built (so it is always the installed command's)."
        " The same text is in `spider-env COMMAND --help`; the"
        " [CLI guide](../guide/cli.md) shows the commands task by task.",
        "",
    ]
    body = section(parser, parser.prog, 2, "")
    return "\n".join(lines + body).rstrip() + "\n"


def generate(out: Path) -> None:
    text = render()
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.exists() or out.read_text(encoding="utf-8") != text:
        out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    generate(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/reference/cli.md"))
