"""Settings dataclasses and their command line (CleanRL style: one dataclass per trainer, each
field documented by the string literal below it).

Settings check themselves in ``__post_init__`` through :mod:`spider_env.core.checks`
(:func:`check_fields`: each field's type, choices and seed; :func:`at_least`, :func:`above`,
:func:`check`: bounds and the rest) and raise :class:`SettingsError` naming the field. A trainer
checks the paths they name (:func:`check_paths`) and turns what the library refuses while
setting up into the same error (:func:`setting_up`), before anything is trained or written.
:func:`add_flags` gives a parser one flag per field (``--n-envs`` for ``n_envs``, help from the
field's documentation), and :func:`parse_and_run` is a script's ``main``: every error is one
line on stderr naming the flag, exit status 2 (:class:`ArgumentParser`), as ``spider-env`` does.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import inspect
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

from spider_env.core.checks import check_bool, check_int, check_number, is_int

T = TypeVar("T")
R = TypeVar("R")

# What a text setting names: a field says it in its annotation (``Annotated[str, InputFile]``), a
# flag added by hand in ``type=InputFile``. The flag passes the text through unchanged; what it
# names is checked where it is used (:func:`path_problem`).
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


@contextmanager
def setting_up(field: str | None = None) -> Iterator[None]:
    """Inside, what the library raises for something it cannot use (``ValueError``,
    ``TypeError``, ``OSError``) becomes a :class:`SettingsError` naming ``field`` (``None``: no
    single setting); a check's message (``"n_envs must be ..."``) loses the name the flag says."""
    try:
        yield
    except SettingsError:
        raise
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        raise SettingsError(field, f"{where}{exc.strerror or exc}") from None
    except (ValueError, TypeError) as exc:
        text = str(exc)
        if field is not None and text.startswith(f"{field} must "):
            text = text[len(field) + 1 :]
        raise SettingsError(field, text) from None


def at_least(settings: Any, low: int, *names: str) -> None:
    """Every field in ``names`` is ``>= low`` (an int field as an int)."""
    for name in names:
        value = getattr(settings, name)
        with setting_up(name):
            if is_int(value):
                check_int(name, value, low)
            else:
                check_number(name, value, low)


def above(settings: Any, low: float, *names: str) -> None:
    """Every field in ``names`` is a number ``> low``."""
    for name in names:
        with setting_up(name):
            check_number(name, getattr(settings, name), low, low_open=True)


def check_discounts(settings: Any) -> None:
    """A return's discounts: ``gamma`` in (0, 1], ``gae_lambda`` in [0, 1] (every trainer's)."""
    with setting_up("gamma"):
        check_number("gamma", settings.gamma, 0, 1, low_open=True)
    with setting_up("gae_lambda"):
        check_number("gae_lambda", settings.gae_lambda, 0, 1)


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


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


def check_fields(settings: Any) -> None:
    """What every settings dataclass checks first: each int, float and bool field has its type
    (a float a finite number; ``None`` where the annotation allows it), each field with
    ``metadata["choices"]`` is one of them, and a ``seed`` is in ``0 .. MAX_SEED``."""
    for f in dataclasses.fields(settings):
        value, hint = getattr(settings, f.name), _hints(settings.__class__)[f.name]
        kind = _unwrap(hint)
        with setting_up(f.name):
            if value is None and kind is not hint:
                continue
            if kind is int:
                check_int(f.name, value, *((0, MAX_SEED) if f.name == "seed" else ()))
            elif kind is float:
                check_number(f.name, value)
            elif kind is bool:
                check_bool(f.name, value)
        choices = f.metadata.get("choices")
        if choices is not None:
            shown = ", ".join(map(str, choices))
            check(value in choices, f.name, f"must be one of {shown}, got {value!r}")


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


def check_paths(settings: Any, kinds: Sequence[Any] = (*WRITTEN, *READ)) -> None:
    """:class:`SettingsError` for the first path field of ``settings`` (a dataclass whose
    fields say their kind) that cannot be used: the kinds in the order of ``kinds`` (by default
    what is written first, then what is read), fields of one kind in order."""
    fields = {name: _kind(hint) for name, hint in _hints(settings.__class__).items()}
    for kind in kinds:
        for name, k in fields.items():
            value = getattr(settings, name)
            if k is kind and value is not None:
                problem = path_problem(kind, value)
                check(problem is None, name, str(problem))


# --- the command line ---------------------------------------------------------------------------
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


def _show(value: Any) -> str:
    if isinstance(value, range):
        return f"{value.start}:{value.stop}"
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    return str(value)


def _parser_of(hint: Any) -> Callable[[str], Any]:
    if _kind(hint) is not None:
        return _kind(hint)
    kind = _unwrap(hint)
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
    parse: Mapping[str, Callable[[str], Any]] | None = None,
) -> None:
    """One flag per field of the dataclass ``cls`` except ``skip``: ``--name`` of the field's
    type (``parse[name]`` turns the text into the value; a bool field, False by default, is a
    switch); a field's ``metadata["choices"]`` limits its values."""
    docs, parse = field_docs(cls), parse or {}
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        help_text = docs.get(f.name, "")
        if _hints(cls)[f.name] is bool:
            if f.default:
                raise TypeError(f"{cls.__name__}.{f.name}: a switch must default to False")
            parser.add_argument(flag_name(f.name), action="store_true", help=help_text)
            continue
        parser.add_argument(
            flag_name(f.name),
            dest=f.name,
            type=flag_type(parse[f.name]) if f.name in parse else _parser_of(_hints(cls)[f.name]),
            choices=f.metadata.get("choices"),
            default=f.default,
            help=f"{help_text} (default: {_show(f.default)})",
        )


def parse_and_run(
    parser: ArgumentParser,
    cls: type[T],
    work: Callable[[T], R],
    argv: Sequence[str] | None = None,
) -> R:
    """A script's command line: ``argv`` (default: ``sys.argv``) parsed into ``cls`` (fields
    without a flag keep their defaults), then ``work(settings)``. A bad value, or a
    :class:`SettingsError` of the work (a path or setting it could not use, found before it
    started), exits as :meth:`ArgumentParser.fail` does."""
    args = parser.parse_args(argv)
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    try:
        settings = cls(**{k: v for k, v in vars(args).items() if k in names})
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
    "ints",
    "parse_and_run",
    "path_problem",
    "setting_up",
]
