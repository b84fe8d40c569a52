"""How many threads a trainer gives torch: the cores this process may use that other processes
are not using.

A default of "every core" oversubscribes a busy machine, where torch's threads then wait on each
other (the training guide's "Threads" paragraph measures it). :func:`choose_threads` counts the
cores this process may use (its CPU affinity, capped by a cgroup CPU quota where one is set) and
subtracts what other processes kept busy on them over a short interval (``/proc/stat`` on Linux;
elsewhere nothing is subtracted). The trainers' env work runs on the main thread between torch's
calls, so it needs no core of its own.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

#: Where the kernel reports CPU time per CPU, and a cgroup v2 CPU quota.
PROC_STAT = Path("/proc/stat")
CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


@dataclass(frozen=True)
class ThreadChoice:
    """The threads chosen, and what they were chosen from."""

    threads: int
    """threads for torch: at least 1"""
    usable: int
    """cores this process may use"""
    busy: float | None
    """cores other processes kept busy among those (``None``: not measurable here)"""

    def describe(self) -> str:
        """One line for a trainer's output, e.g. ``1 (2 cores usable, 1.0 busy elsewhere)``."""
        busy = "load not measurable" if self.busy is None else f"{self.busy:.1f} busy elsewhere"
        return f"{self.threads} ({self.usable} cores usable, {busy})"


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity (``os.cpu_count()`` where there is
    none), at most the cgroup's CPU quota rounded up."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    quota = cgroup_quota()
    return max(1, min(cores, math.ceil(quota)) if quota is not None else cores)


def cgroup_quota(path: Path = CGROUP_CPU_MAX) -> float | None:
    """The cgroup v2 CPU quota in cores (``cpu.max``: ``"200000 100000"`` is 2.0), or ``None``
    where there is none (``"max ..."``) or it cannot be read."""
    try:
        quota, period = path.read_text(encoding="ascii").split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        return None


def cpu_times(text: str, cpus: set[int] | None = None) -> tuple[int, int]:
    """``(busy, total)`` jiffies of ``/proc/stat``'s per-CPU lines ``cpuN`` (those in ``cpus``;
    all if ``None``); idle and iowait are not busy."""
    busy = total = 0
    for line in text.splitlines():
        name, *fields = line.split()
        if not name.startswith("cpu") or name == "cpu":
            continue
        if cpus is not None and int(name[3:]) not in cpus:
            continue
        values = [int(x) for x in fields[:8]]
        idle = values[3] + (values[4] if len(values) > 4 else 0)
        busy += sum(values) - idle
        total += sum(values)
    return busy, total


def busy_elsewhere(interval: float = 0.25) -> float | None:
    """Cores that other processes kept busy, among those this process may use, over
    ``interval`` seconds (its own CPU time left out); ``None`` without ``/proc/stat``."""
    try:
        cpus: set[int] | None = set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = None
    try:
        before = cpu_times(PROC_STAT.read_text(encoding="ascii"), cpus)
        own = time.process_time()
        time.sleep(interval)
        after = cpu_times(PROC_STAT.read_text(encoding="ascii"), cpus)
        own = time.process_time() - own
    except (OSError, ValueError):
        return None
    busy, total = after[0] - before[0], after[1] - before[1]
    if total <= 0:
        return None
    n = len(cpus) if cpus is not None else os.cpu_count() or 1
    cores = busy / total * n - own / interval
    return max(0.0, cores)


def choose_threads(interval: float = 0.25) -> ThreadChoice:
    """Threads for torch: the usable cores less those busy elsewhere (rounded), at least 1."""
    usable = usable_cores()
    busy = busy_elsewhere(interval)
    free = usable if busy is None else usable - round(busy)
    return ThreadChoice(max(1, min(usable, free)), usable, busy)


def set_torch_threads(given: int) -> tuple[int, str]:
    """Give torch ``given`` CPU threads, or :func:`choose_threads`'s count where ``given`` is 0;
    returns the count and how it was chosen (``"given"``, or :meth:`ThreadChoice.describe`)."""
    import torch

    if given:
        threads, chosen = given, "given"
    else:
        choice = choose_threads()
        threads, chosen = choice.threads, choice.describe()
    torch.set_num_threads(threads)
    return threads, chosen


def threads_line(threads: int, chosen: str) -> str:
    """A trainer's first line of output for :func:`set_torch_threads`'s answer, e.g. ``torch
    threads: 1 (given)`` or ``torch threads: 2 (2 cores usable, 0.0 busy elsewhere)``."""
    return f"torch threads: {threads} (given)" if chosen == "given" else f"torch threads: {chosen}"
