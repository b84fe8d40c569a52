"""Settings dataclasses and their command line (CleanRL style: one dataclass per trainer, each
field documented by the string literal below it).

:func:`add_flags` gives a parser one flag per field (``--n-envs`` for ``n_envs``; the type and
default from the field, the help from its documentation); :func:`from_args` parses a command
line into the dataclass. Settings check themselves (``__post_init__``: :func:`check_fields`,
:func:`at_least`, :func:`check`) and raise :class:`SettingsError` naming the field; the work they
configure checks the paths they name (:func:`check_paths`) and turns what the library raises
while setting up into the same error (:func:`setting_up`), all before anything is trained or
written. :class:`ArgumentParser` turns those errors, and its own, into one line on stderr and
exit status 2 (:class:`UsageError`), as the ``spider-env`` command does; :func:`parse_and_run`
is a script's whole command line.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import inspect
import math
import os
import sys
import textwrap
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, NewType, NoReturn, TypeVar

T = TypeVar("T")
R = TypeVar("R")

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
READ = (InputFile, InputDir)
WRITTEN = (OutputFile, OutputDir, CacheFile)
TEXT_KINDS = (*READ, *WRITTEN, Name, Text)
MAX_SEED = 2**32 - 1  # NumPy's and SB3's seeds are 0 .. 2**32 - 1


class SettingsError(ValueError):
    """Settings that cannot be used: ``field`` names the setting (``None``: no single one),
    ``problem`` says why."""

    def __init__(self, field: str | None, problem: str) -> None:
        super().__init__(problem if field is None else f"{field}: {problem}")
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


def above(settings: Any, low: float, *names: str) -> None:
    """Every field in ``names`` is ``> low``."""
    for name in names:
        value = getattr(settings, name)
        check(value > low, name, f"must be > {low}, got {value}")


def check_discounts(settings: Any) -> None:
    """A return's discounts: ``gamma`` in (0, 1], ``gae_lambda`` in [0, 1] (every trainer's)."""
    check(0 < settings.gamma <= 1, "gamma", f"must be in (0, 1], got {settings.gamma}")
    lam = settings.gae_lambda
    check(0 <= lam <= 1, "gae_lambda", f"must be in [0, 1], got {lam}")


def check_fields(settings: Any) -> None:
    """What every settings dataclass checks first: each float field is a finite number, each
    field with ``metadata["choices"]`` one of them, and a ``seed`` field ``0 .. MAX_SEED``."""
    for f in dataclasses.fields(settings):
        value = getattr(settings, f.name)
        if isinstance(value, float):
            check(math.isfinite(value), f.name, f"must be a finite number, got {value}")
        choices = f.metadata.get("choices")
        if choices is not None:
            shown = ", ".join(map(str, choices))
            check(value in choices, f.name, f"must be one of {shown}, got {value!r}")
        if f.name == "seed":
            check(0 <= value <= MAX_SEED, f.name, f"must be in 0..{MAX_SEED}, got {value}")


def path_problem(kind: Any, path: str | Path) -> str | None:
    """What makes ``path`` unusable as a ``kind`` (:data:`READ` or :data:`WRITTEN`), or None:
    a file or folder read must be there; one written must be the right kind of thing if it is
    there, else the nearest folder above it must be one that can be written."""
    p = Path(path)
    if kind is InputFile:
        if p.is_dir():
            return f"{path} is a folder, not a file"
        return None if p.is_file() else f"no file {path}"
    if kind is InputDir:
        if p.exists() and not p.is_dir():
            return f"{path} is not a folder"
        return None if p.is_dir() else f"no folder {path}"
    if kind not in WRITTEN:
        raise TypeError(f"not a kind of path: {kind!r}")
    want_dir = kind is OutputDir
    if p.exists():
        if p.is_dir() != want_dir:
            return f"{path} is {'not a folder' if want_dir else 'a folder'}"
        return None if os.access(p, os.W_OK) else f"cannot write {path}: permission denied"
    above = next(a for a in p.absolute().parents if a.exists())
    if not above.is_dir():
        return f"cannot make {path}: {above} is not a folder"
    if not os.access(above, os.W_OK | os.X_OK):
        return f"cannot make {path}: {above} is not writable"
    return None


@cache
def text_kinds(cls: type) -> dict[str, Any]:
    """The kind (:data:`TEXT_KINDS`) of each field of ``cls`` that has one."""
    hints = typing.get_type_hints(cls, include_extras=True)
    return {name: kind for name, hint in hints.items() if (kind := _kind(hint)) is not None}


def check_paths(settings: Any, kinds: Sequence[Any] = (*WRITTEN, *READ)) -> None:
    """:class:`SettingsError` for the first path field of ``settings`` (a dataclass whose
    fields say their kind) that cannot be used: the kinds in the order of ``kinds`` (by default
    what is written first, then what is read), fields of one kind in order."""
    fields = text_kinds(settings.__class__)
    for kind in kinds:
        for name, k in fields.items():
            value = getattr(settings, name)
            if k is kind and value is not None:
                problem = path_problem(kind, value)
                check(problem is None, name, str(problem))


@contextmanager
def setting_up(field: str | None = None) -> Iterator[None]:
    """Inside, what the library raises for something it cannot use (``ValueError``,
    ``TypeError``, ``OSError``) becomes a :class:`SettingsError` naming ``field`` (``None``: no
    single setting). For the steps before the work starts: their errors come out as one line."""
    try:
        yield
    except SettingsError:
        raise
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        raise SettingsError(field, f"{where}{exc.strerror or exc}") from None
    except (ValueError, TypeError) as exc:
        raise SettingsError(field, str(exc)) from None


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
        self.error(exc.problem if exc.field is None else f"{flag_name(exc.field)}: {exc.problem}")


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


def flag_type(fn: Callable[[str], Any]) -> Callable[[str], Any]:
    """``fn`` as an argparse type: its ``ValueError`` is reported with its message (not
    "invalid value")."""

    @functools.wraps(fn)
    def parse(text: str) -> Any:
        try:
            return fn(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _unwrap(hint: Any) -> Any:
    """``X`` for ``X | None``."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        (hint,) = [k for k in typing.get_args(hint) if k is not type(None)]
    return hint


def _kind(hint: Any) -> Any:
    """The text kind of a field's type hint (``Annotated[str, InputFile]``), or None."""
    hint = _unwrap(hint)
    if typing.get_origin(hint) is typing.Annotated and hint.__metadata__[0] in TEXT_KINDS:
        return hint.__metadata__[0]
    return None


def _parser_of(kind: Any) -> Callable[[str], Any]:
    if _kind(kind) is not None:
        return _kind(kind)
    kind = _unwrap(kind)
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
            type=flag_type(parse[f.name]) if f.name in parse else _parser_of(hints[f.name]),
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


def parse_and_run(
    parser: ArgumentParser,
    cls: type[T],
    work: Callable[[T], R],
    argv: Sequence[str] | None = None,
) -> R:
    """A script's command line: ``argv`` parsed into ``cls`` (:func:`from_args`), then
    ``work(settings)``; a :class:`SettingsError` of the work (a path or setting it could not
    use, found before it started) exits as :meth:`ArgumentParser.fail` does."""
    settings = from_args(parser, cls, argv)
    try:
        return work(settings)
    except SettingsError as exc:
        parser.fail(exc)


__all__ = [
    "MAX_SEED",
    "READ",
    "TEXT_KINDS",
    "WRITTEN",
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
    "above",
    "add_flags",
    "at_least",
    "check",
    "check_discounts",
    "check_fields",
    "check_paths",
    "field_docs",
    "flag_name",
    "flag_type",
    "from_args",
    "ints",
    "parse_and_run",
    "path_problem",
    "setting_up",
    "text_kinds",
]
