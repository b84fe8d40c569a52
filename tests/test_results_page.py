"""docs/results.md is what docs/_scripts/results.py prints from the stored result files, line for
line; the script's pieces (the interval, the deal ranges, the players' names) are right; a
missing or malformed result file is one line naming it, exit status 2; every command the page
gives parses; and the README's results table is the script's ``--readme`` table."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "docs" / "_scripts" / "results.py"
PAGE = ROOT / "docs" / "results.md"
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("results_page_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


results = load_script()


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300
    )


def test_the_page_is_what_the_script_prints() -> None:
    """A re-run of a result that is not followed by `make results` fails here."""
    done = run()
    assert done.returncode == 0, done.stderr
    page = PAGE.read_text(encoding="utf-8")
    assert done.stdout == page, "docs/results.md is stale: run `make results`"
    assert page.splitlines()[0] == results.GENERATED


def test_out_writes_the_page(tmp_path: Path) -> None:
    out = tmp_path / "results.md"
    assert results.main(["--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == PAGE.read_text(encoding="utf-8")


def test_interval_is_wilsons_in_percent() -> None:
    assert results.interval(634, 1000) == "63.4% (60.4-66.3)"
    assert results.interval(0, 1000) == "0.0% (0.0-0.4)"
    assert results.interval(1000, 1000) == "100.0% (99.6-100.0)"
    assert results.interval(25, 200) == "12.5% (8.6-17.8)"
    assert results.interval(0, 0) == "-"


def test_deal_ranges_and_player_names() -> None:
    assert results.deal_range(tuple(range(1000))) == "0..999"
    assert results.deals_arg(tuple(range(1000))) == "0:1000"
    assert results.deal_range((5, 1, 9)) == "3 deals"
    assert results.deals_arg((5, 1, 9)) == "1,5,9"
    assert results.spec_of("planner") == "planner"
    assert results.spec_of("expert_width=10") == "expert:width=10"
    assert results.spec_of("planner_evals=48_nodes=4000") == "planner:evals=48,nodes=4000"
    assert results.agent_name("docs/models/x.safetensors (most likely)") == (
        "docs/models/x.safetensors"
    )


def docs_copy(tmp_path: Path, target: str) -> tuple[Path, Path]:
    """A docs/ folder of links to the real result files, in which ``target`` (a path under
    docs/) is a file of its own, or absent; returns the folder and the target's path."""
    docs = tmp_path / "docs"
    parts = Path(target).parts
    here, source = docs, ROOT / "docs"
    for part in parts[:-1]:  # the folders leading to the target: real folders of links
        here.mkdir()
        for entry in source.iterdir():
            if entry.name != part:
                (here / entry.name).symlink_to(entry)
        here, source = here / part, source / part
    here.mkdir()
    for entry in source.iterdir():
        if entry.name != parts[-1]:
            (here / entry.name).symlink_to(entry)
    return docs, here / parts[-1]


BAD_FILES = {
    "bench_fast.json": None,  # missing
    "rl/test_fast_1suit.json": None,  # missing: the test record a model's card names
    "ladder/spider-1suit.json": "{",
    "ladder/spider-1suit-0_1000-planner-evaluate.csv": "variant,agent,deal,won,seconds\n"
    "spider-1suit,greedy,0,maybe,0.1\n",
    "solver/spider-2suit-0_1000.csv": "deal,verdict\n0,won\n",
    "solver/bench-spider-4suit-0_100.json": '{"variant": "spider-4suit"}',
    "rl/test_baselines_1suit.json": "[]",
    "models/rl_1suit.safetensors": "not a model",
}


@pytest.mark.parametrize("target", sorted(BAD_FILES))
def test_a_missing_or_malformed_result_file_is_one_line_naming_it(
    target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs, path = docs_copy(tmp_path, target)
    content = BAD_FILES[target]
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert results.main(["--docs", str(docs)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("results.py: error: "), err
    assert f"docs/{target}" in err, err


@pytest.mark.parametrize(
    "args, says",
    [
        (["--docs", "/nonexistent/docs"], "--docs /nonexistent/docs: no such folder"),
        (["--out", "/nonexistent/dir/results.md"], "--out /nonexistent/dir/results.md: cannot be"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_a_bad_flag_is_one_line_and_status_2(args: list[str], says: str) -> None:
    done = run(*args)
    assert done.returncode == 2 and done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]  # argparse prints its usage line first
    assert last.startswith("results.py: error: ") and says in last, done.stderr


def test_out_writes_the_readme_table_too(tmp_path: Path) -> None:
    out = tmp_path / "table.md"
    done = run("--readme", "--out", str(out))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert out.read_text(encoding="utf-8") == run("--readme").stdout


def test_the_same_folder_of_links_makes_the_same_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bad-file test's folder of links, with nothing changed, reads as docs/ does (so each
    failure there is the planted file's)."""
    docs, path = docs_copy(tmp_path, "bench_fast.json")
    path.symlink_to(ROOT / "docs" / "bench_fast.json")
    assert results.main(["--docs", str(docs)]) == 0
    assert capsys.readouterr().out == PAGE.read_text(encoding="utf-8")


def test_every_command_on_the_page_parses() -> None:
    from spider_env.apps.cli import build_parser

    page = PAGE.read_text(encoding="utf-8")
    commands = re.findall(r"`(spider-env [^`]+)`", page)
    assert len(commands) > 20
    for command in set(commands):
        argv = shlex.split(command)[1:]
        try:
            build_parser().parse_args(argv)
        except SystemExit as exc:
            pytest.fail(f"`{command}` exits {exc.code}")
    for command in set(re.findall(r"`(python [^`]+)`", page)):
        script = shlex.split(command)[1]
        assert (ROOT / script).is_file(), command


def test_every_shipped_model_and_player_has_a_row() -> None:
    page = PAGE.read_text(encoding="utf-8")
    for model in (ROOT / "docs" / "models").glob("*.safetensors"):
        assert f"`{model.name}` (model)" in page, model.name
    for player in ("random", "greedy", "lookahead", "expert", "planner"):
        assert f"| `{player}` |" in page, player


def test_the_rows_agree_with_the_ladders_own_summaries() -> None:
    """The wins the page counts in the per-deal files are those the ladder's JSON rows recorded
    when they were written (docs/ladder/V.json, V-expert.json, V-width10.json)."""
    rows = results.player_rows(results.Files(ROOT / "docs"))
    wins = {(r.game, r.player, r.games): r.wins for r in rows}
    checked = 0
    for path in sorted((ROOT / "docs" / "ladder").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        game, n = data["variant"], data["n"]
        if path.stem == game:
            for player, entry in data["players"].items():
                assert wins[game, player, n] == entry["wins"], (path.name, player)
                checked += 1
        else:
            expert = results.PAIRED_EXPERT if path.stem.endswith("-expert") else "expert:width=10"
            assert wins[game, expert, n] == data["expert_wins"], path.name
            assert wins[game, "greedy", n] == data["greedy_wins"], path.name
            checked += 2
    assert checked >= 50


def test_the_readme_table_is_the_scripts_readme_table() -> None:
    """The README's results table, between the markers, is `results.py --readme`'s output."""
    done = run("--readme")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert 8 <= len(lines) - 2 <= 14, "about ten rows"
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert BEGIN in readme and END in readme, f"README.md has no {BEGIN} ... {END} table"
    table = readme[readme.index(BEGIN) + 1 : readme.index(END)]
    assert [line for line in table if line.strip()] == lines, (
        "README.md's results table is not `python docs/_scripts/results.py --readme`"
    )
