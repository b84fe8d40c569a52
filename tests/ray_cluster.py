"""A real Ray cluster for the tests that need one (pytest fixtures, imported by those tests).

``cluster``: the address of a 2-CPU cluster started with ``ray start --head --block`` for the
test module (its own process group, always stopped); ``ray_env``: Ray's token authentication
off for the cluster and this process's drivers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def ray_env() -> Iterator[None]:
    """Token authentication off for the test cluster and its drivers (this process)."""
    old = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"
    yield
    if old is None:
        os.environ.pop("RAY_AUTH_MODE", None)
    else:
        os.environ["RAY_AUTH_MODE"] = old


def _stop_with_parent() -> None:
    """In the child, before exec (Linux): SIGTERM when the process that started it dies, so
    a test process that crashes (no teardown) does not leave the cluster running."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


@pytest.fixture(scope="module")
def cluster(ray_env: None) -> Iterator[str]:
    """The address of a 2-CPU Ray cluster on this machine (`ray start --block`, its own
    process group), stopped after the module: SIGTERM to `ray start` (which stops its
    processes; no drain wait), then SIGKILL to whatever of the group is left. If this process
    dies first, `ray start` gets SIGTERM too (:func:`_stop_with_parent`)."""
    ray_cli = Path(sys.executable).with_name("ray")
    port = free_port()
    proc = subprocess.Popen(
        [str(ray_cli), "start", "--head", "--block", "--port", str(port), "--num-cpus", "2"]
        + ["--include-dashboard=false", "--disable-usage-stats"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=_stop_with_parent,
        env={**os.environ, "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0"},
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the test Ray cluster did not start") from None
                time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
