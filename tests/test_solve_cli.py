"""``spider-env solve``: the verdict, the line in words and ids, the replay through the env, deal
files, the batch summary and CSV, worker processes, and one-line errors with exit status 2."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pytest

from spider_env.apps import solve as solve_app
from spider_env.apps.cli import main
from spider_env.apps.evaluation.stats import wilson_interval
from spider_env.core import rules
from spider_env.core.actions import describe
from spider_env.core.cards import parse_card
from spider_env.core.deals import Deal, deal_to_text, deck, generate_deal
from spider_env.core.state import State
from spider_env.core.variants import get_variant
from spider_env.search import solver
from spider_env.search.solver import MAX_NODES, SolveResult


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["solve", *args])
    out, err = capsys.readouterr()
    return code, out, err


def one_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run a command that must fail: exit 2, nothing on stdout, one line on stderr."""
    try:
        code = main(["solve", *args])
    except SystemExit as exc:  # argparse's own errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert code == 2, (args, out, err)
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    return err


LINE_RE = re.compile(r"^\s+(\d+)\. (.+?)\s+\(id (\d+)\)$")


def listed_line(out: str) -> list[tuple[int, str, int]]:
    return [
        (int(m[1]), m[2], int(m[3])) for m in map(LINE_RE.match, out.splitlines()) if m is not None
    ]


# --- one deal -----------------------------------------------------------------------------------
def test_solve_prints_verdict_line_in_words_and_the_replay(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, "--suits", "1", "--deal", "1", "--nodes", "1000000")
    assert code == 0 and err == ""
    expected = solver.solve(State.from_deal(generate_deal("spider-1suit", 1)), 1_000_000)
    assert expected.won
    n = len(expected.line)
    first = out.splitlines()[0]
    assert first.startswith(f"spider-1suit deal 1: won in {n} moves (")
    steps = listed_line(out)
    assert [i for i, _, _ in steps] == list(range(1, n + 1))
    assert tuple(a for _, _, a in steps) == expected.line
    v = get_variant("spider-1suit")
    assert [w for _, w, _ in steps] == [describe(v, a) for a in expected.line]
    assert out.rstrip().endswith(f"replayed through the env: won in {n} moves")


def test_quiet_prints_only_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--suits", "1", "--deal", "1", "--nodes", "1000000", "--quiet")
    assert code == 0
    assert len(out.splitlines()) == 1
    assert out.startswith("spider-1suit deal 1: won in ")
    code, undo_out, _ = run_cli(
        capsys, "--suits", "1", "--deal", "1", "--nodes", "1000000", "--quiet", "--undo"
    )
    assert code == 0
    assert undo_out.startswith("spider-1suit undo=true deal 1: won in ")
    assert undo_out.split(": ", 1)[1].split(" (")[0] == out.split(": ", 1)[1].split(" (")[0]


def test_deal_zero_is_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--suits", "1", "--nodes", "1000000", "--quiet")
    assert code == 0
    assert out.startswith("spider-1suit deal 0: won in ")


def test_unknown_verdict_says_which_budget_ran_out(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--suits", "4", "--deal", "0", "--nodes", "1000")
    assert code == 0
    assert out.startswith("spider-4suit deal 0: unknown: the node budget ran out (")
    assert "line:" not in out and "replayed" not in out
    code, out, _ = run_cli(
        capsys, "--suits", "4", "--deal", "0", "--nodes", "5000000", "--seconds", "0.05"
    )
    assert code == 0
    assert out.startswith("spider-4suit deal 0: unknown: the time budget ran out (")


def test_variant_with_undo_is_solved_and_replayed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "--variant", "spider-tournament-1suit", "--deal", "0", "--nodes", "1000000"
    )
    assert code == 0
    n = len(listed_line(out))
    assert n > 0
    assert f"spider-tournament-1suit deal 0: won in {n} moves" in out
    assert f"replayed through the env: won in {n} moves" in out


def test_env_refusing_a_line_is_reported_with_exit_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = solver.solve

    def short_line(state: State, *a: Any, **kw: Any) -> SolveResult:
        r = real(state, *a, **kw)
        return SolveResult("won", r.line[:-1], r.nodes, r.expansions, r.seconds)

    monkeypatch.setattr(solver, "solve", short_line)
    code, out, err = run_cli(capsys, "--suits", "1", "--deal", "1", "--nodes", "1000000")
    assert code == 1
    assert "won in" in out.splitlines()[0]
    assert "the env refused the won line: the game is not won after the line" in err


# --- deal files -----------------------------------------------------------------------------------
def test_deal_file_is_solved_like_the_deal_it_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    f = tmp_path / "deal.txt"
    f.write_text(deal_to_text(generate_deal("spider-1suit", 2)))
    code, out, _ = run_cli(capsys, "--deal-file", str(f), "--nodes", "1000000")
    assert code == 0
    assert out.startswith(f"spider-1suit deal from {f}: won in ")
    by_number = run_cli(capsys, "--suits", "1", "--deal", "2", "--nodes", "1000000")[1]
    assert listed_line(out) == listed_line(by_number)
    assert "replayed through the env: won in" in out


def test_deal_file_without_variant_line_takes_the_given_variant(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    f = tmp_path / "deal.txt"
    f.write_text(deal_to_text(generate_deal("spiderette-1suit", 0), with_variant=False))
    code, out, _ = run_cli(
        capsys, "--deal-file", str(f), "--variant", "spiderette-1suit", "--quiet"
    )
    assert code == 0
    assert out.startswith("spiderette-1suit deal from ")


def stuck_simple_simon() -> Deal:
    """A Simple Simon deal with no legal move: the tops are kings, jacks and nines, none on
    the card of its own suit one rank higher."""
    v = get_variant("simple-simon")
    tops = [parse_card(t) for t in ["KS", "KH", "KD", "KC", "JS", "JH", "JD", "JC", "9S", "9H"]]
    rest = list(deck(v))
    for t in tops:
        rest.remove(t)
    cols = []
    for top, n in zip(tops, v.layout):
        under: list[int] = []
        for _ in range(n - 1):
            last = len(under) == n - 2  # the card right under the top
            pick = next(c for c in rest if not (last and c == top + 1))
            rest.remove(pick)
            under.append(pick)
        cols.append((*under, top))
    assert not rest
    return Deal(v, tuple(cols), ())


def test_deal_without_moves_is_lost(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    deal = stuck_simple_simon()
    assert rules.legal_actions(State.from_deal(deal)) == []
    f = tmp_path / "stuck.txt"
    f.write_text(deal_to_text(deal))
    code, out, err = run_cli(capsys, "--deal-file", str(f))
    assert (code, err) == (0, "")
    assert out.startswith(
        f"simple-simon deal from {f}: lost: every reachable position was searched, none wins"
    )
    assert len(out.splitlines()) == 1


def test_deal_file_of_another_variant_is_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    f = tmp_path / "deal.txt"
    f.write_text(deal_to_text(generate_deal("spider-1suit", 2)))
    err = one_error(capsys, "--deal-file", str(f), "--suits", "2")
    assert "spider-1suit" in err and "spider-2suit" in err


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda t: t.replace("Play9: ", "Play9: |AS ", 1), "face-down"),  # a mark too many
        (lambda t: t.replace(" KS", " AS", 1), "missing: KS"),  # a card swapped for another
        (lambda t: "\n".join(t.splitlines()[:-1]) + "\n", "Deal0..Deal4"),  # a pile missing
        (lambda t: t + "Deal0: AS\n", "given twice"),
        (lambda t: t + "nonsense\n", "expected"),
    ],
)
def test_bad_deal_text_is_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, change: Any, words: str
) -> None:
    good = deal_to_text(generate_deal("spider-1suit", 2))
    bad = change(good)
    assert bad != good
    f = tmp_path / "deal.txt"
    f.write_text(bad)
    err = one_error(capsys, "--deal-file", str(f))
    assert str(f) in err and words in err


def test_unreadable_deal_files_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert "not found" in one_error(capsys, "--deal-file", str(tmp_path / "none.txt"))
    assert "directory" in one_error(capsys, "--deal-file", str(tmp_path))
    binary = tmp_path / "deal.bin"
    binary.write_bytes(b"\xff\xfe\x00\x81" * 10)
    assert "UTF-8" in one_error(capsys, "--deal-file", str(binary))


# --- bad arguments --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--nodes", "0"], "--nodes"),
        (["--nodes", "-5"], "--nodes"),
        (["--nodes", str(MAX_NODES + 1)], "--nodes"),
        (["--nodes", "1e6"], "--nodes"),
        (["--seconds", "-1"], "--seconds"),
        (["--seconds", "0"], "--seconds"),
        (["--seconds", "nan"], "--seconds"),
        (["--seconds", "inf"], "--seconds"),
        (["--seconds", "soon"], "--seconds"),
        (["--variant", "spider-9suit"], "unknown variant"),
        (["--suits", "3"], "--suits"),
        (["--suits", "1", "--variant", "spider-2suit"], "contradicts"),
        (["--deal", "1", "--deals", "0:5"], "not allowed with"),
        (["--deal", "1", "--deal-file", "x.txt"], "not allowed with"),
        (["--deal", "-1"], "--deal"),
        (["--deals", "5:2"], "--deals"),
        (["--deals", "a:b"], "--deals"),
        (["--deal", "1", "--csv", "out.csv"], "--csv"),
        (["--deals", "0:2", "--csv", "/no/such/dir/out.csv"], "cannot write"),
        (["--deals", "0:2", "--jobs", "0"], "--jobs"),
        (["--method", "bfs"], "--method"),
        (["--method", ""], "--method"),
    ],
)
def test_bad_arguments_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], args: list[str], words: str
) -> None:
    assert words in one_error(capsys, *args)


def test_solve_is_listed_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    assert "solve" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["solve", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for option in ("--deal", "--deals", "--deal-file", "--nodes", "--seconds", "--jobs", "--csv"):
        assert option in text


# --- batches --------------------------------------------------------------------------------------
def summary(out: str) -> dict[str, str]:
    """The batch summary's rows: ``{"won": "3 (100.0%; ...)", ...}``."""
    rows = [re.match(r"^(\S.*?)\s{2,}(\S.*)$", line) for line in out.splitlines()]
    return {m[1]: m[2] for m in rows if m is not None}


def read_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_batch_prints_summary_and_writes_csv(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out_csv = tmp_path / "solved.csv"
    code, out, _ = run_cli(
        capsys, "--suits", "4", "--deals", "0:3", "--nodes", "2000", "--csv", str(out_csv)
    )
    assert code == 0
    rows = read_rows(out_csv)
    assert [r["deal"] for r in rows] == ["0", "1", "2"]
    assert list(rows[0]) == ["deal", "verdict", "moves", "nodes", "seconds", "budget"]
    assert all(r["verdict"] == "unknown" and r["budget"] == "nodes" for r in rows)
    table = summary(out)
    assert table["unknown"] == "3 (nodes 3)"
    assert table["won"].startswith("0 (0.0%;")
    assert table["budget per deal"] == "beam: 2,000 nodes"
    assert "replayed through the env" not in table
    assert f"per-deal results: {out_csv}" in out

    code, out, _ = run_cli(
        capsys, "--suits", "1", "--deals", "1,2,4", "--nodes", "1000000", "--csv", str(out_csv)
    )
    assert code == 0
    rows = read_rows(out_csv)
    for r in rows:
        deal = generate_deal("spider-1suit", int(r["deal"]))
        expected = solver.solve(State.from_deal(deal), 1_000_000)
        assert r["verdict"] == expected.verdict == "won"
        assert int(r["moves"]) == len(expected.line)
        assert int(r["nodes"]) == expected.nodes
        assert float(r["seconds"]) > 0
    lo, hi = wilson_interval(3, 3)
    table = summary(out)
    assert table["won"] == f"3 (100.0%; 95% CI {lo:.1%} .. {hi:.1%})"
    assert table["lost"] == "0"
    assert table["unknown"] == "0"
    assert table["replayed through the env"] == "3 of 3 won lines"
    assert table["deals"] == "3 (1,2,4)"
    assert table["variant"] == "spider-1suit"
    nodes = sum(int(r["nodes"]) for r in rows)
    assert table["nodes used"].startswith(f"{nodes:,} ")
    secs = [float(r["seconds"]) for r in rows]
    m = re.fullmatch(r"mean ([\d.]+), max ([\d.]+)", table["seconds per deal"])
    assert m is not None
    assert float(m[1]) == pytest.approx(sum(secs) / 3, abs=6e-4)
    assert float(m[2]) == pytest.approx(max(secs), abs=6e-4)


def test_batch_quiet_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--suits", "4", "--deals", "0:2", "--nodes", "500", "--quiet")
    assert code == 0
    assert out.splitlines() == [
        "spider-4suit deals 0:2: won 0/2 (0.0%; 95% CI 0.0% .. 65.8%), lost 0, unknown 2"
    ]


def test_batch_in_a_worker_process_matches_one_process(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--jobs 2 goes through a spawned process pool (held to one worker here: the test machine
    is shared) and gives the same rows as --jobs 1, seconds aside."""
    made: list[int] = []

    def one_worker(jobs: int, mp_context: Any) -> ProcessPoolExecutor:
        made.append(jobs)
        return ProcessPoolExecutor(1, mp_context=mp_context)

    monkeypatch.setattr(solve_app, "ProcessPoolExecutor", one_worker)
    monkeypatch.setattr("spider_env.apps.evaluation.workers.os.cpu_count", lambda: 2)
    rows = {}
    for jobs in ("1", "2"):
        f = tmp_path / f"jobs{jobs}.csv"
        code, _, _ = run_cli(
            capsys, "--suits", "2", "--deals", "0:3", "--nodes", "30000", "--jobs", jobs,
            "--csv", str(f),
        )  # fmt: skip
        assert code == 0
        rows[jobs] = [{k: v for k, v in r.items() if k != "seconds"} for r in read_rows(f)]
    assert made == [2]
    assert rows["1"] == rows["2"]


def test_jobs_are_capped_to_the_cores(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_pool(*a: Any, **kw: Any) -> None:
        raise AssertionError("no process pool on a one-core machine")

    monkeypatch.setattr(solve_app, "ProcessPoolExecutor", no_pool)
    monkeypatch.setattr("spider_env.apps.evaluation.workers.os.cpu_count", lambda: 1)
    code, out, _ = run_cli(
        capsys, "--suits", "4", "--deals", "0:2", "--nodes", "500", "--jobs", "8", "--quiet"
    )
    assert code == 0 and "unknown 2" in out


def test_replay_refuses_illegal_actions_and_actions_after_the_end() -> None:
    v = get_variant("spider-1suit")
    r = solver.solve(State.from_deal(generate_deal(v, 1)), 1_000_000)
    options = {"deal": 1}
    assert solve_app.replay_in_env(v, r.line, options) == len(r.line)
    legal = set(rules.legal_actions(State.from_deal(generate_deal(v, 1))))
    illegal = next(a for a in range(v.n_actions) if a not in legal)
    with pytest.raises(solve_app.ReplayError, match=r"action 1 \(.*\) is not legal in the env"):
        solve_app.replay_in_env(v, (illegal, *r.line), options)
    with pytest.raises(solve_app.ReplayError, match="ended before action"):
        solve_app.replay_in_env(v, (*r.line, r.line[-1]), options)
    with pytest.raises(solve_app.ReplayError, match="not won"):
        solve_app.replay_in_env(v, r.line[:5], options)


def test_without_numba_solve_is_a_one_line_error() -> None:
    script = (
        "import sys\n"
        "sys.modules['numba'] = None  # as if numba were not installed\n"
        "from spider_env.apps.cli import main\n"
        "sys.exit(main(['solve', '--suits', '1']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "numba" in proc.stderr and "Traceback" not in proc.stderr


def test_dead_worker_process_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class DeadPool:
        def __init__(self, *a: Any, **kw: Any) -> None:
            pass

        def __enter__(self) -> DeadPool:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def submit(self, *a: Any, **kw: Any) -> Future[Any]:
            fut: Future[Any] = Future()
            fut.set_exception(BrokenProcessPool("a worker died"))
            return fut

    monkeypatch.setattr(solve_app, "ProcessPoolExecutor", DeadPool)
    monkeypatch.setattr("spider_env.apps.evaluation.workers.os.cpu_count", lambda: 2)
    err = one_error(capsys, "--suits", "4", "--deals", "0:2", "--nodes", "500", "--jobs", "2")
    assert "worker process of --jobs 2" in err and "--jobs 1" in err


# --- methods --------------------------------------------------------------------------------------
def test_method_best_first_runs_the_first_solver(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys, "--suits", "1", "--deal", "1", "--nodes", "100000", "--method", "best-first"
    )
    assert code == 0 and err == ""
    expected = solver.solve(
        State.from_deal(generate_deal("spider-1suit", 1)), 100_000, method="best-first"
    )
    assert expected.won
    assert f"won in {len(expected.line)} moves ({expected.nodes:,} nodes" in out


def test_default_method_is_the_beam_with_its_own_budget(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out_csv = tmp_path / "b.csv"
    code, out, _ = run_cli(capsys, "--suits", "2", "--deals", "0:1", "--csv", str(out_csv))
    assert code == 0
    assert "beam: 20,000,000 nodes" in out
    expected = solver.solve(State.from_deal(generate_deal("spider-2suit", 0)), method="beam")
    with out_csv.open() as f:
        row = next(csv.DictReader(f))
    assert (row["verdict"], int(row["moves"]), int(row["nodes"])) == (
        "won",
        len(expected.line),
        expected.nodes,
    )


def test_depth_first_search_is_a_method_with_its_own_budget(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--method dfs``: Scorpion's default (it proves losses there), budget 3,000,000
    positions; more than 20,000,000 is refused (it keeps every position it generates)."""
    code, out, _ = run_cli(capsys, "--variant", "scorpion", "--deals", "0:2")
    assert code == 0 and "dfs: 3,000,000 nodes" in out
    assert "won                       1" in out and "lost                      1" in out
    err = one_error(capsys, "--variant", "scorpion", "--method", "dfs", "--nodes", "20000001")
    assert "--nodes must be at most 20,000,000 for the depth-first search" in err
    code, out, _ = run_cli(capsys, "--suits", "1", "--method", "dfs", "--nodes", "1000", "--quiet")
    assert code == 0 and "unknown" in out  # no loss claimed on Spider
