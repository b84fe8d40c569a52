"""The spider-env command: evaluate, show, replay, play, demo, and bad input everywhere."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from typing import Any

import numpy as np
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
    args = ["evaluate", "--agent", "greedy", "--variant", "simple-simon", "--deals", "4:6"]
    code, out, err = run_cli(capsys, *args, "--max-steps", "100")
    assert code == 0
    assert out.startswith("simple-simon: 2 deals (4:6), max 100 steps") and "2/2" not in out
    # the progress goes to stderr, redrawn with \r: a tqdm bar, or a plain line without tqdm
    last = err.split("\r")[-1].strip()
    assert re.fullmatch(r"simple-simon: (100%\|.*\| 2/2 \[.*\]|2/2 deals)", last), err
    code, _out, err = run_cli(capsys, *args, "--max-steps", "100", "--no-progress")
    assert code == 0 and err == ""


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


def test_show_gif_writes_one_frame_per_step_and_holds_the_last(capsys: Any, tmp_path: Any) -> None:
    from PIL import Image, ImageSequence

    from spider_env.apps.cli import GIF_FINAL_MS
    from spider_env.apps.episodes import Episode, replay_images
    from spider_env.env import SpiderEnv

    gif, saved = tmp_path / "ep.gif", str(tmp_path / "ep.jsonl")
    code, out, err = run_cli(
        capsys, "show", "--deal", "5", "--suits", "1", "--max-steps", "12", "--final",
        "--gif", str(gif), "--save", saved,
    )  # fmt: skip
    assert code == 0 and err == ""
    assert f"GIF saved: {gif} (13 frames)" in out  # the start and one per step
    with Image.open(gif) as image:
        frames = [
            (np.asarray(f.convert("RGB")), f.info["duration"])
            for f in ImageSequence.all_frames(image)
        ]
    step_ms = 1000 / SpiderEnv.metadata["render_fps"]  # one step at the env's frame rate
    assert [ms for _, ms in frames] == [step_ms] * 12 + [GIF_FINAL_MS]
    for (pixels, _), expected in zip(frames, replay_images(Episode.load(saved)), strict=True):
        assert np.array_equal(pixels, expected)


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


# What `make demo` does not install (it installs the package and the cli extra only): the demo
# must not import any of them, even where they are installed.
NOT_FOR_THE_DEMO = ("torch", "stable_baselines3", "sb3_contrib", "ray", "tensorboard",
                    "matplotlib", "PIL", "moviepy", "pytest", "mypy")  # fmt: skip
DEMO_IMPORTS = f"""
import sys
from spider_env.apps.cli import main
code = main(["demo"])
print("imported:", *sorted({{m.split(".")[0] for m in sys.modules}} & set({NOT_FOR_THE_DEMO!r})))
sys.exit(code)
"""


def test_demo_runs_and_says_it_prepares_the_compiled_core_first() -> None:
    # in a fresh process, to see what the demo imports
    proc = subprocess.run(
        [sys.executable, "-c", DEMO_IMPORTS], capture_output=True, text=True, timeout=300
    )
    code, out = proc.returncode, proc.stdout
    assert code == 0, proc.stderr
    assert out.splitlines()[-1] == "imported:"  # none of NOT_FOR_THE_DEMO
    assert "random" in out and "greedy" in out and "win rate" in out
    assert "final position" in out
    # the first run's compile time is announced and timed before the games, not hidden in them
    prepared = re.search(r"preparing the compiled core .* ready in (\d+\.\d) s", out)
    assert prepared and out.index("preparing") < out.index("win rate")


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


# --- one-line errors, exit status 2 ------------------------------------------------------------
@pytest.fixture(scope="module")
def episode_file(tmp_path_factory: Any) -> str:
    from spider_env.agents import GreedyAgent

    from spider_env.apps.episodes import record_episode

    path = str(tmp_path_factory.mktemp("ep") / "ep.jsonl")
    record_episode(GreedyAgent(), "spider-1suit", 5, max_steps=30, agent_name="greedy").save(path)
    return path


def _one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["show", "--deal", str(2**64)], "argument --deal: must be a deal number 0 .. 2**64-1"),
        (["play", "--deal", str(2**64)], "argument --deal: must be a deal number 0 .. 2**64-1"),
        (["show", "--deal", "-1"], "argument --deal: must be 0 or more, got -1"),
        (["play", "--deal", "seven"], "argument --deal: 'seven' is not an integer"),
        (["replay", "FILE", "--delay", "inf"], "argument --delay: must be 0 .. 3600 seconds"),
        (["replay", "FILE", "--delay", "1e400"], "argument --delay: must be 0 .. 3600 seconds"),
        (["replay", "FILE", "--delay", "nan"], "argument --delay: must be 0 .. 3600 seconds"),
        (["replay", "FILE", "--delay", "-1"], "argument --delay: must be 0 .. 3600 seconds"),
        (["replay", "FILE", "--delay", "soon"], "argument --delay: 'soon' is not a number"),
        (["evaluate", "--alpha", "nan"], "argument --alpha: must be between 0 and 1"),
        (["evaluate", "--alpha", "x"], "argument --alpha: 'x' is not a number"),
        (["evaluate", "--suits", "3"], "argument --suits: invalid choice: 3"),
        (["show", "--deterministic", "--sample"], "not allowed with argument"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_argument_errors_are_one_line_with_status_2(
    capsys: Any, episode_file: str, argv: list[str], message: str
) -> None:
    argv = [episode_file if a == "FILE" else a for a in argv]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    line = _one_line_error(capsys.readouterr().err)
    assert message in line
    assert line.startswith("spider-env")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["evaluate", "--deals", "0:100000000000", "--agent", "random"], "--deals: "),
        (["show", "--save", "/"], "cannot write /: it is a directory"),
        (["show", "--gif", "/"], "cannot write /: it is a directory"),
        (["show", "--gif", "/no/such/dir/ep.gif"], "directory /no/such/dir does not exist"),
        (["show", "--agent", "greedy", "--deterministic"], "trained models"),
        (["replay", "/"], "is a directory"),
        (["play", "--variant", "spider-1suit", "--suits", "2"], "contradicts"),
    ],
)
def test_errors_of_the_library_are_one_line_with_status_2(
    capsys: Any, argv: list[str], message: str
) -> None:
    code, _, err = run_cli(capsys, *argv)
    assert code == 2
    assert message in _one_line_error(err)


@pytest.mark.parametrize("error", [ValueError, TypeError])
def test_evaluate_turns_value_and_type_errors_into_one_line(
    capsys: Any, monkeypatch: Any, error: type[Exception]
) -> None:
    import spider_env.apps.evaluation as evaluation

    def fails(*args: Any, **kwargs: Any) -> Any:
        raise error("the library says no")

    monkeypatch.setattr(evaluation, "evaluate", fails)
    code, _, err = run_cli(capsys, "evaluate", "--agent", "random", "--deals", "0")
    assert code == 2
    assert _one_line_error(err) == "spider-env: error: the library says no"


# --- trained models: most likely or sampled actions --------------------------------------------
@pytest.mark.parametrize(
    ("flags", "expected"), [([], None), (["--deterministic"], True), (["--sample"], False)]
)
def test_evaluate_passes_the_model_mode_to_evaluate(
    capsys: Any, monkeypatch: Any, flags: list[str], expected: bool | None
) -> None:
    import spider_env.apps.evaluation as evaluation

    seen: dict[str, Any] = {}

    def capture(*args: Any, **kwargs: Any) -> Any:
        seen.update(kwargs)
        raise ValueError("stop here")

    monkeypatch.setattr(evaluation, "evaluate", capture)
    run_cli(capsys, "evaluate", "--agent", "random", "--deals", "0", *flags)
    assert "deterministic" in seen and seen["deterministic"] is expected


MODEL = "docs/models/maskable_ppo_1suit.safetensors"


@pytest.mark.parametrize(
    ("flag", "label"), [("--deterministic", "most likely"), ("--sample", "sampled")]
)
def test_show_plays_a_model_in_the_chosen_mode(
    capsys: Any, tmp_path: Any, flag: str, label: str
) -> None:
    import os

    from spider_env.apps.episodes import Episode

    model = os.path.join(os.path.dirname(__file__), "..", MODEL)
    path = str(tmp_path / "m.jsonl")
    code, out, err = run_cli(
        capsys, "show", "--agent", model, "--suits", "1", "--max-steps", "20", "--final",
        "--save", path, flag,
    )  # fmt: skip
    assert code == 0, err
    assert f"maskable_ppo_1suit.safetensors ({label}) on spider-1suit deal 0" in out
    assert Episode.load(path).agent.endswith(f"({label})")


# --- how a game ended --------------------------------------------------------------------------
def test_show_reports_the_step_limit_not_a_loss(capsys: Any, tmp_path: Any) -> None:
    from spider_env.apps.episodes import Episode

    path = str(tmp_path / "t.jsonl")
    code, out, _ = run_cli(
        capsys, "show", "--suits", "1", "--deal", "5", "--max-steps", "30", "--final",
        "--save", path,
    )  # fmt: skip
    assert code == 0
    assert "deal 5: stopped at the step limit," in out and "lost" not in out
    assert Episode.load(path).outcome["result"] == "step limit"
    code, out, _ = run_cli(capsys, "replay", path, "--final")
    assert code == 0 and "stopped at the step limit" in out and "lost" not in out


def test_show_reports_a_game_with_no_legal_action_left_as_lost(capsys: Any) -> None:
    from spider_env.apps.episodes import record_episode

    # Random play on Simple Simon soon runs out of legal actions (deal 0 with seed 0 today).
    deal = next(
        d
        for d in range(50)
        if record_episode("random", "simple-simon", d, max_steps=300).outcome["terminated"]
    )
    code, out, _ = run_cli(
        capsys, "show", "--agent", "random", "--variant", "simple-simon", "--deal", str(deal),
        "--max-steps", "300", "--final",
    )  # fmt: skip
    assert code == 0
    assert f"deal {deal}: lost (no legal action left)," in out


def test_quitting_play_is_reported_as_quit(monkeypatch: Any, capsys: Any, tmp_path: Any) -> None:
    from spider_env.apps.episodes import Episode

    path = str(tmp_path / "q.jsonl")
    out = play(monkeypatch, capsys, "d\nq\n", "--suits", "1", "--deal", "3", "--save", path)
    assert "Bye." in out
    outcome = Episode.load(path).outcome
    assert outcome["result"] == "quit"
    assert outcome["terminated"] is False and outcome["truncated"] is False
    code, out, _ = run_cli(capsys, "replay", path, "--final")
    assert code == 0 and "player on spider-1suit deal 3: quit," in out and "lost" not in out


def test_replay_refuses_a_move_text_that_disagrees_with_its_action(
    capsys: Any, tmp_path: Any, episode_file: str
) -> None:
    with open(episode_file, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    step = json.loads(lines[3])
    step["move"] = "deal"
    lines[3] = json.dumps(step)
    bad = tmp_path / "edited.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(capsys, "replay", str(bad), "--final")
    assert code == 2
    line = _one_line_error(err)
    assert "line 4: step 2: the move text 'deal' does not match action" in line


# --- help and variants -------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["evaluate", "show", "replay", "play", "demo", "variants"])
def test_every_command_has_a_help_description(capsys: Any, command: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    usage, _, rest = out.partition("\n\n")
    description = rest.split("\n\n")[0]
    assert usage.startswith("usage:")
    assert description and not description.startswith(("options:", "positional")), out
    assert "%%" not in out


def test_evaluate_help_writes_the_percent_sign_once(capsys: Any) -> None:
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    out = capsys.readouterr().out
    assert "95% Wilson" in out.replace("\n", " ")


def test_play_help_explains_the_move_syntax(capsys: Any) -> None:
    from spider_env.apps.play import HELP

    with pytest.raises(SystemExit):
        main(["play", "--help"])
    out = capsys.readouterr().out
    for command in ("S D ", "S D K", "x C", "u ", "h ", "q "):
        assert any(line.strip().startswith(command.strip()) for line in out.splitlines()), command
    assert HELP.splitlines()[1] in out


def test_variants_lists_ids_that_gymnasium_makes_into_that_variant(capsys: Any) -> None:
    import gymnasium

    from spider_env.core.variants import VARIANTS
    from spider_env.registration import ENV_IDS

    code, out, _ = run_cli(capsys, "variants")
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    for name in VARIANTS:
        assert name in rows, name
    seen = set()
    for name in VARIANTS:
        words = rows[name].split()
        env_id = words[1]
        kwargs = {}
        if words[2].startswith("suits="):
            kwargs["suits"] = int(words[2].removeprefix("suits="))
        env = gymnasium.make(env_id, **kwargs)
        assert env.unwrapped.variant.name == name
        env.close()
        seen.add(env_id)
    assert seen == set(ENV_IDS)
