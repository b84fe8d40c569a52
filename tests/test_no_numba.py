"""Without numba the package still works, on the pure engine, and says so in one line."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import sys
    sys.modules["numba"] = None  # as if numba were not installed
    import gymnasium as gym
    import numpy as np
    import spider_env
    from spider_env.fast import available

    assert not available()
    env = gym.make("Spider-v0", suits=1)
    assert env.unwrapped.backend == "pure", env.unwrapped.backend
    obs, info = env.reset(seed=0)
    obs, *_ = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    gym.make("Spider-v0")  # a second env does not warn again
    envs = gym.make_vec("Spider-v0", num_envs=2, vectorization_mode="vector_entry_point")
    assert envs.backend == "pure"
    envs.reset(seed=0)
    envs.step(envs.sample_legal_actions())
    try:
        gym.make("Spider-v0", backend="compiled")
    except ValueError as exc:
        print("refused:", exc)
    else:
        raise AssertionError("backend='compiled' without numba was accepted")
    print("ok")
    """
)


def run_without_numba() -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )


def test_without_numba_envs_run_on_the_pure_engine_with_one_warning_line() -> None:
    proc = run_without_numba()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "ok"
    warnings = [line for line in proc.stderr.splitlines() if "numba" in line]
    assert len(warnings) == 1, proc.stderr
    assert "pure-Python engine" in warnings[0]
    assert "pip install numba" in warnings[0]
    assert proc.stderr.count("\n") == 1, proc.stderr  # the warning is the only line


def test_without_numba_backend_compiled_is_refused_naming_numba() -> None:
    proc = run_without_numba()
    refused = [line for line in proc.stdout.splitlines() if line.startswith("refused:")]
    assert refused and "numba" in refused[0], proc.stdout
