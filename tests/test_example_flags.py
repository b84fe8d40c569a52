"""Every flag of every example script, given a bad value, is refused as the ``spider-env`` CLI
refuses bad input: one line on stderr naming the flag, exit status 2, no traceback, and nothing
trained or written.

The cases are generated from the scripts' parsers (each script's ``build_parser()``), so a new
flag is covered without a new test. A flag's bad values come from its argparse action:

* a switch: given a value (``--flag=1``);
* choices: a value that is none of them;
* ``int`` / ``float``: a non-number and ``-1`` (no number flag of the examples takes a negative
  value), for a float also ``nan`` and ``inf``; comma-separated ints: a non-number item and
  ``-1``;
* a deal range (``parse_deals``): malformed ranges;
* any other parse function: text it cannot parse;
* a text kind of :mod:`spider_env.agents.rl.settings`, by what it names: a file read: missing,
  corrupt, a folder; a folder read: missing, a file; a file or folder written: below a regular
  file (it cannot be made), or the wrong kind of thing already there; a cache file: both; a
  name: an unknown one; free text: nothing.

Each script runs in this process (``main(argv)``), in an empty folder with a few fixture files
(relative paths, the scripts' defaults included, land there), with the work itself (SB3's
``learn``, the batched trainer's games, recording (either store) and cloning demonstrations,
evaluating,
plotting) replaced by
:class:`Reached`: a bad value that gets past the script's checks fails its case at once
instead of training.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sb3_contrib", reason="the training examples need the 'train' extra")

from sb3_contrib.common.maskable import evaluation as sb3_evaluation
from spider_env.agents.rl import imitation, planner_demos, plots, policy, ppo
from spider_env.agents.rl import settings as kinds
from stable_baselines3.common.base_class import BaseAlgorithm

from spider_env.apps import evaluation
from spider_env.apps.evaluation import parse_deals

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))  # the example scripts, imported to call their main()
SCRIPTS = sorted(p.stem for p in EXAMPLES.glob("*.py"))

#: The fixture files (text, so corrupt whatever they are taken for), each alone in its folder:
#: a model's sidecar next to it would be read first.
FIXTURES = ("a-file", "zip/corrupt.zip", "npz/corrupt.npz", "json/corrupt.json")
FOLDER = "a-folder"  # an empty folder, also a fixture
#: Bad values of each text kind (relative to the fixtures' folder; ``{suffix}``: the default's).
KIND_VALUES: dict[Any, tuple[str, ...]] = {
    kinds.InputFile: ("missing.zip", "{suffix}/corrupt.{suffix}", FOLDER),
    kinds.InputDir: ("missing-folder", "a-file"),
    kinds.OutputFile: ("a-file/out.zip", FOLDER),
    kinds.OutputDir: ("a-file/out", "a-file"),
    kinds.CacheFile: ("a-file/cache.npz", FOLDER, "npz/corrupt.npz"),
    kinds.Name: ("no-such-name",),
    kinds.Text: (),
}


def _script(name: str) -> Any:
    return importlib.import_module(name)


def _flag(action: argparse.Action) -> str:
    """How the script's error names the flag: its long option, or a positional's name."""
    if action.option_strings:
        return max(action.option_strings, key=len)
    return str(action.metavar or action.dest)


def _is_switch(action: argparse.Action) -> bool:
    return action.nargs == 0 and not isinstance(action, argparse._HelpAction)


def bad_values(action: argparse.Action) -> tuple[str, ...] | None:
    """The bad values of a flag that takes one (``None``: the flag's kind is not known)."""
    kind: Any = action.type
    values: list[str] = []
    if action.choices is not None:
        choices = list(action.choices)
        if all(isinstance(c, int) for c in choices):
            values.append(str(max(choices) + 1))
        else:
            values.append("no-such-choice")
        if kind in (None, str):
            return tuple(values)
    if kind is int:
        return (*values, "x", "-1")
    if kind is float:
        return (*values, "x", "-1", "nan", "inf")
    if kind is kinds.ints:
        return (*values, "1,x", "-1")
    if getattr(kind, "__wrapped__", None) is parse_deals:
        return (*values, "5:x", "10:5")
    if kind in KIND_VALUES:
        suffix = Path(str(action.default)).suffix[1:] if action.default else "zip"
        return tuple(v.format(suffix=suffix) for v in KIND_VALUES[kind])
    if callable(kind) and kind is not str:
        return (*values, "?")
    return None


def _value_actions(name: str) -> Iterator[argparse.Action]:
    for action in _script(name).build_parser()._actions:
        if not isinstance(action, argparse._HelpAction) and not _is_switch(action):
            yield action


def cases() -> Iterator[Any]:
    for name in SCRIPTS:
        for action in _script(name).build_parser()._actions:
            flag = _flag(action)
            if _is_switch(action):
                yield pytest.param(name, [f"{flag}=1"], flag, id=f"{name} {flag}=1")
                continue
            for value in bad_values(action) or ():
                argv = [flag, value] if action.option_strings else [value]
                yield pytest.param(name, argv, flag, id=f"{name} {' '.join(argv)}")


class Reached(Exception):
    """A script got past its checks to its work."""


def _stop(what: str) -> Callable[..., Any]:
    def stop(*args: Any, **kwargs: Any) -> Any:
        raise Reached(what)

    return stop


WORK = (evaluation.evaluate, plots.plot_runs)  # as the scripts name them


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current folder: the fixtures, and the work replaced by :class:`Reached`."""
    for file in FIXTURES:
        (tmp_path / file).parent.mkdir(exist_ok=True)
        (tmp_path / file).write_text("not what the script expects\n")
    (tmp_path / FOLDER).mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(BaseAlgorithm, "_setup_learn", _stop("training"))  # every learn()
    monkeypatch.setattr(imitation, "record_demonstrations", _stop("recording demonstrations"))
    monkeypatch.setattr(planner_demos, "fill_store", _stop("recording demonstrations"))
    monkeypatch.setattr(policy, "behaviour_clone", _stop("behaviour cloning"))
    monkeypatch.setattr(sb3_evaluation, "evaluate_policy", _stop("playing"))
    monkeypatch.setattr(ppo, "make_envs", _stop("training"))  # the batched trainer's games
    monkeypatch.setattr(evaluation, "evaluate", _stop("evaluating"))  # as the library calls it
    for name in SCRIPTS:
        module = _script(name)
        for attr, value in vars(module).items():
            if any(value is work for work in WORK):
                monkeypatch.setattr(module, attr, _stop(attr))
    return tmp_path


def _snapshot(root: Path) -> list[tuple[str, int, float]]:
    return sorted(
        (str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1, p.stat().st_mtime)
        for p in root.rglob("*")
    )


@pytest.mark.parametrize(("script", "argv", "flag"), list(cases()))
def test_a_bad_value_is_one_line_with_status_2_and_nothing_done(
    script: str, argv: list[str], flag: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _snapshot(folder)
    try:
        _script(script).main(argv)
    except SystemExit as exc:
        status = exc.code
    except Reached as exc:
        pytest.fail(f"accepted: got to {exc}")
    except Exception as exc:
        pytest.fail(f"traceback: {type(exc).__name__}: {exc}")
    else:
        pytest.fail("accepted: main() returned")
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert flag in lines[0], f"the error does not name {flag}: {lines[0]}"
    assert _snapshot(folder) == before, "something was written"


def test_every_flag_has_a_known_kind_of_value() -> None:
    unknown = [
        f"{name} {_flag(a)} (type {getattr(a.type, '__name__', a.type)})"
        for name in SCRIPTS
        for a in _value_actions(name)
        if bad_values(a) is None
    ]
    assert not unknown, "give these flags a type (a kind of spider_env.agents.rl.settings)"


def test_the_generated_cases_cover_every_script_and_are_many() -> None:
    generated = list(cases())
    assert {c.values[0] for c in generated} == set(SCRIPTS)
    assert len(generated) > 10 * len(SCRIPTS)
