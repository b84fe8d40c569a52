"""RLlib's PPO against the project's batched PPO, same policy, same batch, in one run.

* ``batched``: ``spider_env.agents.rl.ppo`` (``bench_training.py``'s ``batched`` row): one
  ``SpiderVectorEnv`` of ``--num-envs`` games, the update in the same process;
* ``rllib-M-R``: RLlib's PPO (``spider_env.agents.rl.rllib.ppo_config``) over the RLlib env's
  ``obs_mode`` ``M`` (``rows``, the default: RLlib's action a row of the per-action
  observation; ``actions``: the Gymnasium env's per-action observation with the mask over the
  1,301 action ids, RLlib's action an id) with ``R`` remote env runners (``0``: the driver
  samples itself), each stepping one ``SpiderVectorEnv`` of ``--num-envs / max(R, 1)`` games
  (over rows, ``--env-runner``: spider-env's ``ArrayEnvRunner``, the default, or RLlib's own),
  the learner in the driver (``num_learners=0``); the same network (the action-set network,
  ``--hidden``), ``--n-steps`` steps per game per update, so every row updates on
  ``num_envs * n_steps`` decisions, both learners' row embeddings in ``--precision`` (``auto``:
  bfloat16 on a CPU that multiplies it natively, as both trainers' default); the driver keeps
  the memory it frees, blocks of every size, as ``rllib_ppo.py`` trains
  (``keep_freed_memory(every_size=True)``; remote array runners do so themselves), and after
  its first update the objects alive are out of the garbage collector's full collections
  (``setup_frozen``, as ``rllib_ppo.py`` trains; ``--gc as-is`` leaves the collector as it is);
* CartPole-v1 through ``gym.make`` (``reference.py``), the speed reference of every benchmark.

Each row runs at every count of ``--threads``, the torch threads of this process (the batched
PPO's ``--torch-threads``; RLlib's driver, whose learner updates the network), and its ratios
are to the batched PPO at the same count. Env-steps (decisions) per wall second and per
CPU-second, after a warm-up update (numba, torch, Ray's actors): the CPU time is this
process's plus, for RLlib, every env runner's (each runner's own ``time.process_time()``,
asked through Ray), so it counts the work on every core; and the wall time of an RLlib update
in two parts, timed over the timed updates: the learner's update (``learner_group.update``)
and the rest (the sampling, which alternates with it, and the weights sent to the runners).
RLlib's own timers are not used: they are exponential averages (coefficient 0.01) that the
warm-up update dominates. Needs the ``rllib`` extra (``make test-rllib`` builds its venv). Not
a test; run it as

    .venv/rllib/bin/python benchmarks/bench_rllib.py [--suits 1] [--hidden 64]
        [--num-envs 256] [--n-steps 32] [--updates 4] [--threads 1,2] [--runners 0,1,2]
        [--precision auto] [--obs-modes rows,actions] [--action-rows 96]
        [--env-runner arrays] [--gc frozen] [--json PATH] [--profile N]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import platform
import pstats
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_training import bench_batched
from reference import cartpole_steps_per_second
from spider_env.agents.rl.ppo import PRECISIONS
from spider_env.agents.rl.rllib import DEFAULT_ENV_RUNNER, ENV_RUNNERS, OBS_MODES
from spider_env.agents.rl.rllib import ROWS_MODE as ROWS
from spider_env.agents.rl.settings import ArgumentParser

from spider_env.observation.actions import DEFAULT_ACTION_ROWS

#: The speed target: RLlib's env-steps per CPU-second as a share of the batched PPO's.
TARGET_VS_BATCHED = 0.5


def _runner_cpu(algo: Any) -> float:
    """CPU-seconds used so far by the remote env runners (0 without any)."""
    group = algo.env_runner_group
    if group.num_remote_env_runners() == 0:
        return 0.0
    return float(
        sum(group.foreach_env_runner(lambda r: time.process_time(), local_env_runner=False))
    )


def _timed(f: Any, spent: list[float]) -> Any:
    """``f``, adding the wall time of each call to ``spent[0]``."""

    def timed(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return f(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - t

    return timed


def bench_rllib(a: argparse.Namespace, runners: int, obs_mode: str) -> dict[str, Any]:
    import ray
    import torch
    from spider_env.agents.rl.memory import keep_freed_memory, setup_frozen
    from spider_env.agents.rl.rllib import RLlibSettings, ppo_config

    torch.set_num_threads(a.threads)
    s = RLlibSettings(
        suits=a.suits, hidden=a.hidden, num_env_runners=runners, obs_mode=obs_mode,
        action_rows=a.action_rows, env_runner=a.env_runner,
        num_envs_per_env_runner=a.num_envs // max(1, runners), n_steps=a.n_steps,
        precision=a.precision,
    )  # fmt: skip
    ray.init(
        address="local", num_cpus=max(2, runners), include_dashboard=False, logging_level="ERROR"
    )
    memory = ExitStack()
    try:
        memory.enter_context(keep_freed_memory(every_size=True))  # as rllib_ppo.py trains
        algo = ppo_config(s).build_algo()
        algo.train()  # warm-up: numba, torch, the actors
        if a.gc == "frozen":
            memory.enter_context(setup_frozen())  # as rllib_ppo.py trains, after an update
        steps0 = _steps(algo.train())
        learner = [0.0]
        algo.learner_group.update = _timed(algo.learner_group.update, learner)
        w0, c0, r0 = time.perf_counter(), time.process_time(), _runner_cpu(algo)
        profile = cProfile.Profile() if a.profile else None
        if profile:
            profile.enable()
        for _ in range(a.updates):
            result = algo.train()
        wall = time.perf_counter() - w0
        if profile:
            profile.disable()
            print(f"rllib-{obs_mode}-{runners}: cProfile of the timed updates (this process)")
            pstats.Stats(profile).sort_stats("cumulative").print_stats(a.profile)
        cpu = time.process_time() - c0 + _runner_cpu(algo) - r0
        steps = _steps(result) - steps0
        timers = {
            "wall": round(wall / a.updates, 3),
            "learner_update": round(learner[0] / a.updates, 3),
            "sampling_and_rest": round((wall - learner[0]) / a.updates, 3),
        }
        algo.stop()
    finally:
        memory.close()
        ray.shutdown()
    return {
        "steps": steps, "batch": s.batch, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
        "steps_per_wall_s": round(steps / wall, 1), "steps_per_cpu_s": round(steps / cpu, 1),
        "seconds_per_update": timers,
    }  # fmt: skip


def _steps(result: Any) -> int:
    return int(result["env_runners"]["num_env_steps_sampled_lifetime"])


def main() -> None:
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--suits", type=int, default=1, choices=(1, 2, 4))
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--n-steps", type=int, default=32)
    p.add_argument("--updates", type=int, default=4)
    p.add_argument(
        "--threads", default="1,2",
        help="torch threads of this process (the batched PPO's, RLlib's driver's), comma "
        "separated: every row at each count",
    )  # fmt: skip
    p.add_argument("--runners", default="0,1,2", help="env runner counts, comma separated")
    p.add_argument(
        "--precision", default="auto", choices=PRECISIONS,
        help="the learners' row embeddings, both trainers' (their --precision)",
    )  # fmt: skip
    p.add_argument(
        "--obs-modes",
        default="rows,actions",
        help="the RLlib env's obs_mode of each RLlib row (rows, actions, flat), comma separated",
    )
    p.add_argument(
        "--action-rows",
        type=int,
        default=DEFAULT_ACTION_ROWS,
        help="rows of RLlib's per-action observation (obs_modes rows and actions; the batched "
        "PPO keeps its default: it stores only the rows with an action)",
    )
    p.add_argument(
        "--env-runner",
        default=DEFAULT_ENV_RUNNER,
        choices=ENV_RUNNERS,
        help="how RLlib's env runners sample obs_mode rows: arrays (spider-env's ArrayEnvRunner) "
        "or rllib (RLlib's SingleAgentEnvRunner)",
    )
    p.add_argument(
        "--gc",
        default="frozen",
        choices=("frozen", "as-is"),
        help="the objects alive after the first update out of the garbage collector's full "
        "collections, as the trainer runs (frozen), or the collector as it is (as-is)",
    )
    p.add_argument("--json", help="also write the results here")
    p.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="print the N costliest functions of RLlib's timed updates (cProfile)",
    )
    a = p.parse_args()
    try:
        counts = [int(x) for x in a.runners.split(",")]
    except ValueError:
        p.error(f"--runners: comma-separated integers, got {a.runners!r}")
    try:
        thread_counts = [int(x) for x in a.threads.split(",")]
    except ValueError:
        p.error(f"--threads: comma-separated integers, got {a.threads!r}")
    if any(t < 1 for t in thread_counts):
        p.error(f"--threads: counts must be >= 1, got {a.threads!r}")
    if a.updates < 1:
        p.error(f"--updates: must be >= 1, got {a.updates}")
    if a.action_rows < 1:
        p.error(f"--action-rows: must be >= 1, got {a.action_rows}")
    if any(c < 0 for c in counts):
        p.error(f"--runners: counts must be >= 0, got {a.runners!r}")
    modes = a.obs_modes.split(",")
    bad = [m for m in modes if m not in OBS_MODES]
    if bad:
        p.error(f"--obs-modes: {bad[0]!r} is not one of {', '.join(OBS_MODES)}")
    out: dict[str, Any] = {"machine": platform.platform(), "settings": vars(a)}
    out["cartpole_steps_per_cpu_s"] = round(cartpole_steps_per_second(), 1)
    for threads in thread_counts:
        at = argparse.Namespace(**{**vars(a), "threads": threads})  # the settings at this count
        batched = bench_batched(at)
        out[f"batched-t{threads}"] = batched
        print(f"batched-t{threads}   {batched['steps_per_wall_s']:>10,.0f} steps/wall-s "
              f"{batched['steps_per_cpu_s']:>10,.0f} steps/CPU-s", flush=True)  # fmt: skip
        for mode in modes:
            for r in counts:
                row = bench_rllib(at, r, mode)
                for unit in ("wall", "cpu"):
                    row[f"vs_batched_{unit}"] = round(
                        row[f"steps_per_{unit}_s"] / batched[f"steps_per_{unit}_s"], 4
                    )
                out[f"rllib-{mode}-{r}-t{threads}"] = row
                t = row["seconds_per_update"]
                print(f"rllib-{mode}-{r}-t{threads} {row['steps_per_wall_s']:>10,.0f} steps/wall-s "
                      f"{row['steps_per_cpu_s']:>10,.0f} steps/CPU-s  "
                      f"({row['vs_batched_cpu']:.3f} of batched per CPU-s, "
                      f"{row['vs_batched_wall']:.3f} per wall-s; per update {t['wall']} s: "
                      f"learner {t['learner_update']} s, sampling and the rest "
                      f"{t['sampling_and_rest']} s)", flush=True)  # fmt: skip
    print(f"CartPole-v1 (gym.make) {out['cartpole_steps_per_cpu_s']:,.0f} steps/CPU-s")
    rows = [k for k in out if k.startswith("rllib-")]
    if rows:
        best = max(rows, key=lambda k: out[k]["vs_batched_cpu"])
        ratio = out[best]["vs_batched_cpu"]
        print(f"target: RLlib >= {TARGET_VS_BATCHED} of the batched PPO per CPU-second: {best} "
              f"{ratio:.2f} -> {'met' if ratio >= TARGET_VS_BATCHED else 'NOT met'}")  # fmt: skip
        for r in counts:
            runs = [k for k in rows if k.startswith(f"rllib-{ROWS}-{r}-")]
            if runs:
                shown = ", ".join(f"{k} {out[k]['vs_batched_cpu']:.2f}" for k in runs)
                print(f"  over rows, {r} env runner{'' if r == 1 else 's'}: {shown}")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
