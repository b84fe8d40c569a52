"""benchmarks/values.py: what a player sees of a position, as features, and how well the graded
value and a learned one predict the outcome (the features, the AUC and the fit pinned, the
script end to end, its bad flags one line and status 2)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from spider_env import new_game
from spider_env.core.variants import get_variant
from spider_env.observation.view import TableView

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "values.py"
_spec = importlib.util.spec_from_file_location("values_bench", SCRIPT)
assert _spec is not None and _spec.loader is not None
values = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(values)


def test_features_of_an_opening_count_what_a_player_sees() -> None:
    view = TableView.from_state(new_game("spider-1suit", 0))
    f = dict(zip(values.FEATURES, values.features(view).tolist()))
    assert f["one"] == 1.0
    assert f["face_down"] == pytest.approx(44 / 104) and f["stock"] == pytest.approx(50 / 104)
    assert f["out_of_order"] == f["empty_columns"] == f["runs"] == f["clear_columns"] == 0
    assert f["one_down_columns"] == 0 and f["king_bases"] == 0
    assert f["down_squared"] == pytest.approx((4 * 25 + 6 * 16) / 100)
    assert f["ready"] == pytest.approx(10 / 104) and f["longest"] == pytest.approx(6 / 30)
    # every card is face down, in the stock or a column's only face-up card: nothing graded
    assert values.graded_order(view) == pytest.approx(0.0)


def test_a_suited_run_is_ready_and_in_order_and_a_break_is_not() -> None:
    v = get_variant("spider-1suit")
    # column 0: 9 8 7 face up on nothing (a clear column), column 1: 5 on a face-down card, 3
    up = ((8, 7, 6), (4, 2)) + ((),) * 8
    view = TableView(v, (0, 1) + (0,) * 8, up, 0, (0, 0, 0, 0))
    f = dict(zip(values.FEATURES, values.features(view).tolist()))
    assert f["out_of_order"] == pytest.approx(1 / 104)  # 3 on 5
    assert f["ready"] == pytest.approx((3 + 1) / 104)
    assert f["empty_columns"] == pytest.approx(0.8) and f["clear_columns"] == pytest.approx(0.1)
    assert f["one_down_columns"] == pytest.approx(0.1)


def test_auc_counts_pairs_and_ties_and_the_fit_finds_the_sign() -> None:
    won = np.array([1, 1, 0, 0])
    assert values.auc(np.array([3.0, 4, 1, 2]), won) == 1.0
    assert values.auc(np.array([1.0, 2, 3, 4]), won) == 0.0
    assert values.auc(np.ones(4), won) == 0.5
    rng = np.random.default_rng(0)
    z = rng.normal(size=2000)
    y = (rng.random(2000) < 1 / (1 + np.exp(-2 * z))).astype(float)
    w = values.fit(np.c_[np.ones(2000), z], y)
    assert 1.5 < w[1] < 2.5 and abs(w[0]) < 0.3


def test_values_script_records_fits_and_reloads_the_same_report(tmp_path: Path) -> None:
    out = tmp_path / "v.npz"
    cmd = [sys.executable, str(SCRIPT), "--agent", "greedy", "--deals", "0:40", "--jobs", "1"]
    done = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "positions of 40 games" in done.stdout and "AUC learned" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("weights (every game): ")
    again = subprocess.run([sys.executable, str(SCRIPT), "--load", str(out)],
                           capture_output=True, text=True, timeout=600)  # fmt: skip
    assert again.returncode == 0 and again.stdout == done.stdout
    with np.load(out) as z:
        assert z["x"].shape == (z["deal"].size, len(values.FEATURES)) == (z["graded"].size, 13)
        assert set(np.unique(z["won"]).tolist()) == {0.0, 1.0}
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    bad_flags = [(["--jobs", "3"], "--jobs must be 1 or 2"),
                 (["--deals", "x"], "--deals:"),
                 (["--agent", "nobody"], "--agent: unknown agent"),
                 (["--variant", "nope"], "--variant:"),
                 (["--max-steps", "0"], "--max-steps must be at least 1"),
                 (["--load", str(tmp_path / "missing.npz")], "--load: cannot read"),
                 (["--load", str(tmp_path / "other.npz")], "--load: cannot read"),
                 (["--out", str(tmp_path / "no" / "dir.npz")], "--out: cannot write")]  # fmt: skip
    for extra, message in bad_flags:
        bad = subprocess.run([sys.executable, str(SCRIPT), *extra], capture_output=True,
                             text=True, timeout=600)  # fmt: skip
        assert bad.returncode == 2 and bad.stdout == "", (extra, bad.stderr)
        assert bad.stderr.count("\n") == 1 and message in bad.stderr, (extra, bad.stderr)
