"""Settings dataclasses and their command line (CleanRL style: one dataclass per trainer, each
field documented by the string literal below it).

:func:`add_flags` gives a parser one flag per field (``--n-envs`` for ``n_envs``; the type and
default from the field, the help from its documentation); :func:`from_args` parses a command
line into the dataclass. Settings check themselves (``__post_init__``) and raise
:class:`SettingsError` naming the field; :class:`ArgumentParser` turns that, and its own
errors, into one line on stderr and exit status 2 (:class:`UsageError`).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import inspect
import sys
import textwrap
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any, NewType, NoReturn, TypeVar

T = TypeVar("T")

# What a text setting names: a field says it in its annotation (``Annotated[str, InputFile]``), a
# flag added by hand in ``type=InputFile``. The flag passes the text through unchanged; what it
# names is checked where it is used.
InputFile = NewType("InputFile", str)  # a file read (it must exist)
InputDir = NewType("InputDir", str)  # a folder read (it must exist)
OutputFile = NewType("OutputFile", str)  # a file written (its folder is made if need be)
OutputDir = NewType("OutputDir", str)  # a folder written into (made if need be)
CacheFile = NewType("CacheFile", str)  # a file read if it exists, else written
Name = NewType("Name", str)  # a name looked up (an agent, a variant): an unknown one is refused
Text = NewType("Text", str)  # any text (a title)
TEXT_KINDS = (InputFile, InputDir, OutputFile, OutputDir, CacheFile, Name, Text)


class SettingsError(ValueError):
    """A setting that cannot be used: ``field`` names it, ``problem`` says why."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


def check(ok: bool, field: str, problem: str) -> None:
    """:class:`SettingsError` ``(field, problem)`` unless ``ok``."""
    if not ok:
        raise SettingsError(field, problem)


def at_least(settings: Any, low: float, *names: str) -> None:
    """Every field in ``names`` is ``>= low``."""
    for name in names:
        value = getattr(settings, name)
        check(value >= low, name, f"must be >= {low}, got {value}")


class UsageError(SystemExit):
    """A bad command line: exit status 2; ``str()`` is the line printed on stderr."""

    def __init__(self, message: str) -> None:
        super().__init__(2)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ArgumentParser(argparse.ArgumentParser):
    """``argparse`` whose errors are one line on stderr (``prog: error: ...``) and status 2."""

    def error(self, message: str) -> NoReturn:
        line = f"{self.prog}: error: {message}"
        print(line, file=sys.stderr)
        raise UsageError(line)

    def fail(self, exc: SettingsError) -> NoReturn:
        """Report a :class:`SettingsError` under the field's flag."""
        self.error(f"{flag_name(exc.field)}: {exc.problem}")


def flag_name(field: str) -> str:
    """``--n-envs`` for ``n_envs``."""
    return "--" + field.replace("_", "-")


@cache
def field_docs(cls: type) -> dict[str, str]:
    """Each field's documentation: the string literal right below it in the class body (of
    ``cls`` or a base class)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0]
        assert isinstance(body, ast.ClassDef)
        for node, after in zip(body.body, body.body[1:]):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def ints(text: str) -> tuple[int, ...]:
    """``"256,256"`` -> ``(256, 256)``."""
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated ints, got {text!r}") from None


def _show(value: Any) -> str:
    if isinstance(value, range):
        return f"{value.start}:{value.stop}"
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    return str(value)


def _keep_message(fn: Callable[[str], Any]) -> Callable[[str], Any]:
    """``fn`` whose ``ValueError`` argparse reports with its message (not "invalid value")."""

    @functools.wraps(fn)
    def parse(text: str) -> Any:
        try:
            return fn(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _parser_of(kind: Any) -> Callable[[str], Any]:
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        (kind,) = [k for k in typing.get_args(kind) if k is not type(None)]
    if typing.get_origin(kind) is typing.Annotated:
        return kind.__metadata__[0]
    if typing.get_origin(kind) is tuple:
        return ints
    if kind in (int, float, str):
        return kind
    raise TypeError(f"no command-line parser for {kind!r}: give one in parse=")


def add_flags(
    parser: argparse.ArgumentParser,
    cls: type,
    *,
    skip: Iterable[str] = (),
    defaults: Mapping[str, Any] | None = None,
    parse: Mapping[str, Callable[[str], Any]] | None = None,
) -> None:
    """One flag per field of the dataclass ``cls`` except ``skip``: ``--name`` of the field's
    type (``parse[name]`` turns the text into the value; a bool field, False by default, is a
    switch); ``defaults`` replaces fields' defaults; a field's ``metadata["choices"]`` limits
    its values."""
    hints = typing.get_type_hints(cls, include_extras=True)
    docs = field_docs(cls)
    defaults, parse = defaults or {}, parse or {}
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        default = defaults.get(f.name, f.default)
        help_text = docs.get(f.name, "")
        if hints[f.name] is bool:
            if default:
                raise TypeError(f"{cls.__name__}.{f.name}: a switch must default to False")
            parser.add_argument(flag_name(f.name), action="store_true", help=help_text)
            continue
        parser.add_argument(
            flag_name(f.name),
            dest=f.name,
            type=_keep_message(parse[f.name]) if f.name in parse else _parser_of(hints[f.name]),
            choices=f.metadata.get("choices"),
            default=default,
            help=f"{help_text} (default: {_show(default)})",
        )


def from_args(parser: ArgumentParser, cls: type[T], argv: Sequence[str] | None = None) -> T:
    """Parse ``argv`` (default: ``sys.argv``) into ``cls`` (fields without a flag keep their
    defaults). A bad value exits as :meth:`ArgumentParser.error` does."""
    args = parser.parse_args(argv)
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    values = {k: v for k, v in vars(args).items() if k in names}
    try:
        return cls(**values)
    except SettingsError as exc:
        parser.fail(exc)


__all__ = [
    "TEXT_KINDS",
    "ArgumentParser",
    "CacheFile",
    "InputDir",
    "InputFile",
    "Name",
    "OutputDir",
    "OutputFile",
    "SettingsError",
    "Text",
    "UsageError",
    "add_flags",
    "at_least",
    "check",
    "field_docs",
    "flag_name",
    "from_args",
    "ints",
]
