"""evaluate(..., ray=ADDRESS) and `spider-env evaluate --ray`: the same results as one process,
on a real Ray cluster (one `ray start --head --block` for the module, always stopped), and
one-line errors for bad input (with --jobs, an unreachable address, Ray not installed)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import asdict
from typing import Any

import pytest
from ray_cluster import free_port

from spider_env.apps.cli import main
from spider_env.apps.evaluation import EvaluationResult, evaluate

pytest.importorskip("ray")  # installed by the dev extra; skipped only where it is missing

GAME = {"suits": 1, "max_steps": 400}  # spider-1suit, short games
DEALS = range(6)
TIMING = ("seconds", "steps_per_second")  # the only fields that may differ between runs
pytestmark = pytest.mark.usefixtures("ray_env")


@pytest.fixture(scope="module")
def reference() -> EvaluationResult:
    """Greedy and random on the deals, in this process (jobs=1)."""
    return evaluate(["greedy", "random"], DEALS, **GAME)


def without_timing(items: list[Any]) -> list[dict[str, Any]]:
    rows = [asdict(x) for x in items]
    for row in rows:
        for key in TIMING:
            row.pop(key, None)
    return rows


def assert_same_results(a: EvaluationResult, b: EvaluationResult) -> None:
    assert a.agents == b.agents and a.deals == b.deals
    assert without_timing(a.records) == without_timing(b.records)
    assert without_timing(a.summaries) == without_timing(b.summaries)
    assert a.comparisons == b.comparisons


def table_rows(out: str) -> list[str]:
    """The printed table without the timing column and the wall-time line."""
    lines = [line for line in out.splitlines() if not line.startswith("(")]
    return [
        line.rsplit(None, 1)[0] if line.startswith(("greedy", "random")) else line for line in lines
    ]


# --- same results as one process -------------------------------------------------------------
def test_ray_cluster_gives_the_records_of_one_process(
    cluster: str, reference: EvaluationResult
) -> None:
    import ray

    result = evaluate(["greedy", "random"], DEALS, ray=cluster, **GAME)
    assert_same_results(result, reference)
    assert result.backend == f"ray {cluster}" and 1 <= result.jobs <= 2
    assert result.to_dict()["backend"] == f"ray {cluster}"
    assert reference.backend == "local" and reference.to_dict()["backend"] == "local"
    assert not ray.is_initialized()  # disconnected


def test_ray_local_starts_a_private_instance_and_shuts_it_down(
    reference: EvaluationResult,
) -> None:
    import ray

    result = evaluate(["greedy", "random"], DEALS, ray="local", **GAME)
    assert_same_results(result, reference)
    assert result.backend == "ray local" and 1 <= result.jobs <= (os.cpu_count() or 1)
    assert not ray.is_initialized()


def test_an_error_in_a_ray_task_is_raised_as_itself_without_cancelling_the_others(
    cluster: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every chunk fails; the first failure is raised while others are still submitted, and
    none is cancelled (``ray.cancel`` racing a finishing task aborted the test process once,
    ray 2.60): disconnecting ends them."""
    import ray

    cancelled: list[Any] = []
    monkeypatch.setattr(ray, "cancel", lambda *a, **k: cancelled.append(a))
    with pytest.raises(ValueError, match="reward_mode"):
        evaluate("random", range(8), ray=cluster, env_kwargs={"reward_mode": "nope"}, **GAME)
    assert cancelled == [] and not ray.is_initialized()


def test_cli_ray_prints_the_table_rows_of_one_process(capsys: Any, cluster: str) -> None:
    argv = ["evaluate", "--agent", "greedy", "--agent", "random", "--suits", "1"]
    argv += ["--deals", "0:6", "--max-steps", "400", "--no-progress"]
    assert main(argv) == 0
    local = capsys.readouterr().out
    assert main([*argv, "--ray", cluster]) == 0
    out = capsys.readouterr().out
    assert table_rows(out) == table_rows(local)
    assert len(table_rows(out)) == 6  # title, head, rule, two agents, comparison
    assert f"ray {cluster}, " in out.splitlines()[-1] and "CPU(s))" in out


# --- bad input: one line, exit status 2 --------------------------------------------------------
def run_cli(capsys: Any, *argv: str) -> tuple[int, str]:
    code = main(["evaluate", "--suits", "1", "--deals", "0:2", "--no-progress", *argv])
    err = capsys.readouterr().err
    return code, err


def test_ray_with_jobs_is_refused_naming_both(capsys: Any) -> None:
    with pytest.raises(ValueError, match=r"jobs.*ray.*not both"):
        evaluate("random", range(2), ray="local", jobs=2)
    code, err = run_cli(capsys, "--ray", "local", "--jobs", "2")
    assert code == 2 and err.count("\n") == 1
    assert "--ray local and --jobs 2" in err


def test_unreachable_address_is_a_one_line_connection_error(capsys: Any) -> None:
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    with pytest.raises(ConnectionError, match=address):
        evaluate("random", range(2), ray=address)
    code, err = run_cli(capsys, "--ray", address)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("spider-env: error: cannot reach a Ray cluster at " + address)


def test_bad_address_value_is_refused() -> None:
    with pytest.raises(ValueError, match="ray must be"):
        evaluate("random", range(2), ray="")
    with pytest.raises(TypeError, match="ray must be"):
        evaluate("random", range(2), ray=6379)  # type: ignore[arg-type]


def test_ray_not_installed_says_how_to_install_it(capsys: Any, monkeypatch: Any) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ImportError, match=r"pip install 'spider-env\[ray\]'"):
        evaluate("random", range(2), ray="local")
    code, err = run_cli(capsys, "--ray", "local")
    assert code == 2 and err.count("\n") == 1
    assert "pip install 'spider-env[ray]'" in err


def test_importing_spider_env_does_not_import_ray() -> None:
    code = (
        "import sys, spider_env, spider_env.apps.cli, spider_env.apps.evaluation; "
        "from spider_env.apps.evaluation import ray_backend; "
        "sys.exit('ray' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_planner_demonstrations_on_a_ray_cluster_are_the_shards_of_one_process(
    cluster: str, tmp_path: Any
) -> None:
    """The demonstration store (spider_env.agents.rl.planner_demos) filled by Ray tasks holds
    the games one process records, move for move."""
    import numpy as np
    from spider_env.agents.rl.planner_demos import (
        StoreSpec,
        fill_store,
        read_shard,
        shard_paths,
    )

    tiny = "planner:evals=6,candidates=3,nodes=300,screen=0,late=1,exact=20000"
    spec = StoreSpec("spider-1suit", tiny, tiny, max_steps=60)
    deals = range(100_000, 100_004)
    local = fill_store(tmp_path / "local", spec, deals, shard=2)
    remote = fill_store(tmp_path / "ray", spec, deals, shard=2, ray=cluster)
    assert remote["played"]["games"] == local["played"]["games"] == 4
    pairs = list(zip(shard_paths(tmp_path / "local"), shard_paths(tmp_path / "ray")))
    assert len(pairs) == 2
    for a, b in pairs:
        x, y = read_shard(a, spec), read_shard(b, spec)
        for key in x:
            if key != "cpu_seconds":
                assert np.array_equal(x[key], y[key], equal_nan=key == "scores"), key


def test_a_budget_curve_on_a_ray_cluster_plays_the_games_of_one_process(
    cluster: str, tmp_path: Any, capsys: Any
) -> None:
    """benchmarks/budget_curve.py --ray ADDRESS (large budgets on a cluster): the same games,
    deal for deal, as --jobs 1."""
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "budget_curve.py"
    spec = importlib.util.spec_from_file_location("budget_curve_ray", path)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    flags = ["--suits", "1", "--budgets", "2", "--deals", "3:5", "--max-steps", "40"]
    assert script.main([*flags, "--jobs", "1", "--out-dir", str(tmp_path / "local")]) == 0
    assert script.main([*flags, "--ray", cluster, "--out-dir", str(tmp_path / "ray")]) == 0
    assert f"--ray {cluster}" in capsys.readouterr().out
    local, remote = (
        json.loads((tmp_path / where / "spider-1suit-budget-2.json").read_text())
        for where in ("local", "ray")
    )
    assert remote["backend"] == f"ray {cluster}" and local["backend"] == "local"
    assert without_timing_rows(remote["records"]) == without_timing_rows(local["records"])


def without_timing_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k not in TIMING} for row in rows]
