"""The spider-env command: evaluate, show, replay, play, demo, and bad input everywhere."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

import pytest

from spider_env.apps.cli import main


def run_cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_evaluate_prints_the_table_and_writes_files(capsys: Any, tmp_path: Any) -> None:
    code, out, err = run_cli(
        capsys,
        "evaluate",
        "--agent", "random",
        "--agent", "greedy",
        "--suits", "1",
        "--deals", "0:3",
        "--max-steps", "200",
        "--json", str(tmp_path / "r.json"),
        "--csv", str(tmp_path / "r.csv"),
        "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    assert "spider-1suit: 3 deals (0:3)" in out
    assert "win rate" in out and "95% CI" in out and "McNemar" in out
    data = json.loads((tmp_path / "r.json").read_text())
    assert [r["deal"] for r in data["records"]] == [0, 1, 2, 0, 1, 2]
    assert (tmp_path / "r.csv").read_text().startswith("variant,agent,deal,won")


def test_evaluate_variant_and_progress_line(capsys: Any) -> None:
    code, out, err = run_cli(
        capsys, "evaluate", "--agent", "greedy", "--variant", "simple-simon", "--deals", "4",
        "--max-steps", "100",
    )  # fmt: skip
    assert code == 0
    assert "simple-simon" in out and "1 deals" in out
    assert "4" in err or "deal" in err  # progress output goes to stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["evaluate", "--deals", "10:5"], "--deals: bad deal range '10:5': stop (5) must be"),
        (["evaluate", "--deals", "x"], "is not a non-negative integer"),
        (["evaluate", "--agent", "smart"], "unknown agent 'smart'"),
        (["evaluate", "--agent", "missing.zip"], "model file not found: missing.zip"),
        (["evaluate", "--variant", "spider-3suit"], "unknown variant 'spider-3suit'"),
        (["evaluate", "--variant", "spider-1suit", "--suits", "4"], "contradicts"),
        (["evaluate", "--deals", "0:1", "--json", "/no/such/dir/r.json"], "does not exist"),
        (["show", "--agent", "nobody"], "unknown agent 'nobody'"),
        (["replay", "/no/such/episode.jsonl"], "episode file not found"),
        (["play", "--variant", "freecell"], "unknown variant 'freecell'"),
    ],
)
def test_bad_input_gives_a_clear_message_and_status_2(
    capsys: Any, argv: list[str], message: str
) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert message in err
    assert "Traceback" not in err + out


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--jobs", "0"],
        ["evaluate", "--suits", "3"],
        ["evaluate", "--max-steps", "-5"],
        ["show", "--deal", "-1"],
        ["replay", "x.jsonl", "--delay", "soon"],
        ["frobnicate"],
    ],
)
def test_argument_errors_exit_2(capsys: Any, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err


def test_no_command_prints_help(capsys: Any) -> None:
    code, out, _ = run_cli(capsys)
    assert code == 2 and "evaluate" in out and "replay" in out


def test_show_save_and_replay(capsys: Any, tmp_path: Any) -> None:
    path = str(tmp_path / "ep.jsonl")
    code, out, _ = run_cli(
        capsys, "show", "--deal", "5", "--suits", "1", "--max-steps", "60", "--save", path,
        "--ascii",
    )  # fmt: skip
    assert code == 0
    assert out.count("last action:") == 61
    assert "greedy on spider-1suit deal 5" in out and "episode saved" in out
    code, out2, _ = run_cli(capsys, "replay", path, "--delay", "0", "--ascii")
    assert code == 0 and out2.count("last action:") == 61
    code, out3, _ = run_cli(capsys, "replay", path, "--final", "--ascii")
    assert code == 0 and out3.count("last action:") == 1
    code, out4, _ = run_cli(capsys, "show", "--deal", "5", "--suits", "1", "--final")
    assert code == 0 and out4.count("last action:") == 1


def test_replay_refuses_corrupt_files(capsys: Any, tmp_path: Any) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "spider-env episode", "version": 1}\n')
    code, _, err = run_cli(capsys, "replay", str(bad))
    assert code == 2 and "variant" in err and "Traceback" not in err
    bad.write_text("garbage\n")
    code, _, err = run_cli(capsys, "replay", str(bad))
    assert code == 2 and "line 1: not valid JSON" in err


def play(monkeypatch: Any, capsys: Any, text: str, *argv: str) -> str:
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    code, out, err = run_cli(capsys, "play", *argv)
    assert code == 0, err
    return out


def test_play_survives_bad_input(monkeypatch: Any, capsys: Any) -> None:
    junk = "\n".join(
        ["", "hello", "3", "3 7 2 9", "99 1", "-1 2", "3 3", "0 1 0", "0 1 abc", "d 9", "x 2",
         "u", "F", "F99 1", "\x00\x01", "1 2 100", "?", "h", "q"]
    )  # fmt: skip
    out = play(monkeypatch, capsys, junk + "\n", "--suits", "2", "--deal", "3", "--ascii")
    assert out.count("! ") >= 14
    assert "column 99 does not exist (columns are 0..9)" in out
    assert "did not understand 'hello'" in out
    assert "source and target are the same column" in out
    assert "cannot undo" in out
    assert "hint: " in out
    assert "commands:" in out
    assert "Bye." in out


def test_play_deal_undo_rule_and_end_of_input(monkeypatch: Any, capsys: Any) -> None:
    out = play(monkeypatch, capsys, "d\nu\nd\n", "--suits", "1", "--deal", "8", "--ascii")
    # A deal turns cards up, so it cannot be undone (the engine's undo rule).
    assert "deals left 4" in out and "cannot undo" in out and "deals left 3" in out
    assert "(end of input)" in out


def _two_moves() -> tuple[int, str, str]:
    """A deal, a first move, and a second move that turns up no card (so undo is legal)."""
    import spider_env as se

    for deal in range(50):
        st = se.new_game("spider-1suit", deal)
        for a in se.legal_actions(st):
            m = se.decode(st.variant, a)
            if m.kind != "move":
                continue
            s1 = se.apply(st, a)
            for b in se.legal_actions(s1):
                n = se.decode(st.variant, b)
                if n.kind == "move" and len(s1.cols[n.src]) - n.cards > s1.down[n.src]:
                    return deal, f"{m.src} {m.dst} {m.cards}", f"{n.src} {n.dst} {n.cards}"
    raise AssertionError("no plain move in 50 deals")


def test_play_undo_after_a_plain_move(monkeypatch: Any, capsys: Any) -> None:
    deal, first, second = _two_moves()
    text = f"{first}\nu\n{second}\nu\nq\n"
    out = play(monkeypatch, capsys, text, "--suits", "1", "--deal", str(deal))
    assert out.count("cannot undo") == 1  # the first move turned a card up
    assert "last action: undo" in out
    assert "moves 2" in out


def test_play_save_then_replay(monkeypatch: Any, capsys: Any, tmp_path: Any) -> None:
    path = str(tmp_path / "mine.jsonl")
    out = play(monkeypatch, capsys, "h\nd\nd\nq\n", "--suits", "4", "--deal", "1", "--save", path)
    assert "game saved" in out
    code, out, _ = run_cli(capsys, "replay", path, "--final")
    assert code == 0 and "deals left 3" in out and "player on spider-4suit deal 1" in out


def test_play_variants_with_pile_choice_and_discard(monkeypatch: Any, capsys: Any) -> None:
    out = play(
        monkeypatch,
        capsys,
        "d 7\nd 2\nd\nq\n",
        "--variant",
        "spider-tournament-1suit",
        "--deal",
        "2",
    )
    assert "stock piles are 0..4" in out
    assert "last action: deal pile 2" in out
    out = play(monkeypatch, capsys, "x 3\nq\n", "--variant", "spider-culbertson", "--deal", "2")
    assert "cannot discard" in out
    out = play(monkeypatch, capsys, "d\nq\n", "--variant", "simple-simon", "--deal", "2")
    assert "has no stock" in out


def test_demo_runs(capsys: Any) -> None:
    code, out, _ = run_cli(capsys, "demo")
    assert code == 0
    assert "random" in out and "greedy" in out and "win rate" in out
    assert "final position" in out


def test_console_script_has_no_traceback_on_bad_input() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "spider_env.apps.cli", "evaluate", "--deals", "5:1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "spider-env: error: --deals" in proc.stderr
    assert "Traceback" not in proc.stderr
