"""The trainers' torch threads (``spider_env.agents.rl.threads``): the cores this process may use
less those other processes keep busy, at least one, and said in the output."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from spider_env.agents.rl import threads
from spider_env.agents.rl.threads import (
    ThreadChoice,
    cgroup_quota,
    choose_threads,
    cpu_times,
    set_torch_threads,
    threads_line,
    usable_cores,
)

STAT = """cpu  300 0 100 600 0 0 0 0 0 0
cpu0 100 0 50 300 10 0 0 0 0 0
cpu1 200 0 50 300 20 0 0 5 7 0
intr 1 2 3
"""


def test_proc_stat_counts_busy_and_total_jiffies_of_the_cpus_asked_for() -> None:
    # cpu0: busy 150 of 460 (idle 300 and iowait 10 are not busy); cpu1: busy 255 of 575
    # (steal counts, guest is inside user already and is not added again)
    assert cpu_times(STAT) == (150 + 255, 460 + 575)
    assert cpu_times(STAT, {1}) == (255, 575)
    assert cpu_times(STAT, set()) == (0, 0)


@pytest.mark.parametrize(
    "text, cores",
    [("max 100000\n", None), ("150000 100000\n", 1.5), ("200000 100000", 2.0), ("junk", None)],
)
def test_a_cgroup_quota_is_read_in_cores(tmp_path: Path, text: str, cores: float | None) -> None:
    path = tmp_path / "cpu.max"
    path.write_text(text)
    assert cgroup_quota(path) == cores
    assert cgroup_quota(tmp_path / "missing") is None


@pytest.mark.parametrize(
    "usable, busy, chosen",
    [(2, 0.0, 2), (2, 0.3, 2), (2, 1.0, 1), (2, 0.9, 1), (2, 3.5, 1), (4, None, 4), (8, 2.2, 6)],
)
def test_threads_are_the_usable_cores_less_those_busy_elsewhere(
    monkeypatch: pytest.MonkeyPatch, usable: int, busy: float | None, chosen: int
) -> None:
    monkeypatch.setattr(threads, "usable_cores", lambda: usable)
    monkeypatch.setattr(threads, "busy_elsewhere", lambda interval=0.25: busy)
    choice = choose_threads()
    assert choice == ThreadChoice(chosen, usable, busy)
    shown = "load not measurable" if busy is None else f"{busy:.1f} busy elsewhere"
    assert choice.describe() == f"{chosen} ({usable} cores usable, {shown})"


@pytest.mark.skipif(not Path("/proc/stat").exists(), reason="needs Linux's /proc/stat")
def test_a_process_spinning_on_a_core_is_counted_busy_and_this_one_is_not() -> None:
    usable = usable_cores()
    assert usable >= 1
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        busy = threads.busy_elsewhere(0.5)
    finally:
        spin.kill()
        spin.wait()
    assert busy is not None and 0.5 <= busy <= usable + 0.5
    start = time.process_time()
    while time.process_time() - start < 0.2:  # this process busy: not counted as elsewhere
        pass
    assert choose_threads(0.2).threads >= 1


def test_torch_gets_a_given_count_as_given_and_else_the_chosen_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    try:
        assert set_torch_threads(1) == (1, "given")
        assert torch.get_num_threads() == 1
        monkeypatch.setattr(threads, "usable_cores", lambda: 2)
        monkeypatch.setattr(threads, "busy_elsewhere", lambda interval=0.25: 0.0)
        assert set_torch_threads(0) == (2, "2 (2 cores usable, 0.0 busy elsewhere)")
        assert torch.get_num_threads() == 2
        assert threads_line(1, "given") == "torch threads: 1 (given)"
        assert threads_line(2, "2 (2 cores usable, 0.0 busy elsewhere)") == (
            "torch threads: 2 (2 cores usable, 0.0 busy elsewhere)"
        )
    finally:
        torch.set_num_threads(before)
