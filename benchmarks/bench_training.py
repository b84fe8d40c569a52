"""End-to-end training throughput (rollout + update) on the same policy, in one run:

* ``batched``: the batched masked PPO of ``spider_env.agents.rl.ppo`` over
  ``SpiderVectorEnv(obs_mode="actions")`` (``--num-envs`` games, ``--n-steps`` each per update);
* ``sb3-compiled``: sb3-contrib's ``MaskablePPO`` with the same ``ActionSetPolicy`` over the same
  compiled vector env (``spider_env.sb3.SpiderSB3VecEnv``, ``--num-envs`` games);
* ``sb3-recipe``: ``MaskablePPO`` as the RL recipe (``research/rl/recipe.py``) trains it (8
  ``Spider-v0`` envs in a ``DummyVecEnv``, per-action features encoded in Python by the
  ``ActionFeatures`` wrapper);
* CartPole-v1 through ``gym.make`` (``reference.py``), the speed reference of every benchmark.

Every figure is env-steps (decisions of all games) per second of wall time and per CPU-second
of this process (torch uses ``--threads`` threads, so CPU time can exceed wall time), after a
warm-up (numba compiling, the first update). For the batched trainer also where the time goes
(CPU-seconds by part; with its pipelined rollout, two threads or more, a part's CPU time is the
whole process's while that part runs: the env stepping on the second thread counts towards the
policy's part while torch chooses actions, and "env step" is the time spent waiting for it),
and per step of the rollout the env's own time (the CPU of the thread stepping it) beside the
policy's choice of actions, the two sides of the pipeline, and the update's precision
(``--precision``, the trainer's: ``auto`` is bfloat16 on a CPU that multiplies it natively).
Not a test; run it as

    .venv/bin/python benchmarks/bench_training.py [--suits 1] [--hidden 64] [--num-envs 256]
        [--n-steps 32] [--updates 4] [--precision auto] [--sb3-steps 8192]
        [--recipe-steps 2048] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reference import cartpole_steps_per_second
from spider_env.agents.rl.ppo import PRECISIONS
from spider_env.agents.rl.settings import ArgumentParser

#: The batched PPO's speed target: env-steps per wall-second on 2 cores, 1 suit, hidden 64.
TARGET_STEPS_PER_WALL_S = 45_000


def _clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def bench_batched(a: argparse.Namespace) -> dict[str, Any]:
    from spider_env.agents.rl.ppo import BatchedPPOSettings, train

    common = dict(
        suits=a.suits, num_envs=a.num_envs, n_steps=a.n_steps, hidden=a.hidden,
        eval_deals=8, eval_envs=8, torch_threads=a.threads, precision=a.precision,
        no_progress=True,
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        batch = a.num_envs * a.n_steps
        warm = BatchedPPOSettings(**common, timesteps=batch, out=tmp)  # type: ignore[arg-type]
        train(warm)  # numba compiling, torch warming up
        s = BatchedPPOSettings(
            **common,  # type: ignore[arg-type]
            timesteps=batch * a.updates,
            eval_every=10 * batch * a.updates,
            out=tmp,
        )
        summary = train(s)
    return {
        "steps": summary["timesteps"],
        "steps_per_wall_s": summary["train_steps_per_wall_s"],
        "steps_per_cpu_s": summary["train_steps_per_cpu_s"],
        "cpu_s_by_part": summary["cpu_s_by_part"],
        "wall_s_by_part": summary["wall_s_by_part"],
        "rollout_sides": summary["rollout_sides"],
        "malloc": summary["malloc"],
        "update_precision": summary["update_precision"],
    }


def _sb3_model(venv: Any, a: argparse.Namespace, n_steps: int) -> Any:
    from sb3_contrib import MaskablePPO
    from spider_env.agents.rl.policy import ActionSetPolicy

    return MaskablePPO(
        ActionSetPolicy,
        venv,
        n_steps=n_steps,
        batch_size=max(64, venv.num_envs * n_steps // 4),
        n_epochs=2,
        policy_kwargs={"hidden": a.hidden, "value_hidden": a.hidden},
        device="cpu",
        verbose=0,
        seed=0,
    )


def _learn(model: Any, steps: int) -> dict[str, Any]:
    model.learn(model.n_steps * model.env.num_envs)  # warm-up
    w0, c0 = _clocks()
    model.learn(steps, reset_num_timesteps=False)
    w1, c1 = _clocks()
    return {
        "steps": steps,
        "steps_per_wall_s": round(steps / (w1 - w0)),
        "steps_per_cpu_s": round(steps / (c1 - c0)),
    }


def bench_sb3_compiled(a: argparse.Namespace) -> dict[str, Any]:
    from spider_env.core.variants import classic
    from spider_env.sb3 import SpiderSB3VecEnv

    venv = SpiderSB3VecEnv(
        a.num_envs, variant=classic(a.suits), obs_mode="actions", reward_mode="runs",
        max_episode_steps=1000,
    )  # fmt: skip
    return _learn(_sb3_model(venv, a, max(1, a.sb3_steps // (2 * a.num_envs))), a.sb3_steps)


def bench_sb3_recipe(a: argparse.Namespace) -> dict[str, Any]:
    from spider_env.agents.rl.envs import env_factories
    from spider_env.agents.rl.models import action_set_sidecar
    from stable_baselines3.common.vec_env import DummyVecEnv

    from spider_env.core.variants import classic

    env = action_set_sidecar(classic(a.suits), True).env
    venv = DummyVecEnv(env_factories(env, 8, seed=0))
    return _learn(_sb3_model(venv, a, 128), a.recipe_steps)


def main() -> None:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suits", type=int, default=1, choices=(1, 2, 4))
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--n-steps", type=int, default=32)
    p.add_argument("--updates", type=int, default=4)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--precision", default="auto", choices=PRECISIONS,
        help="the batched PPO's update precision (its --precision)",
    )  # fmt: skip
    p.add_argument("--sb3-steps", type=int, default=8192)
    p.add_argument("--recipe-steps", type=int, default=2048)
    p.add_argument("--sections", nargs="+", default=["batched", "sb3-compiled", "sb3-recipe"])
    p.add_argument("--json", type=Path)
    a = p.parse_args()
    import torch

    torch.set_num_threads(a.threads)
    out: dict[str, Any] = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "settings": vars(a) | {"json": str(a.json)},
    }
    cart = cartpole_steps_per_second()
    out["cartpole_steps_per_cpu_s"] = round(cart)
    print(f"CartPole-v1 (gym.make, random actions): {cart:,.0f} steps/CPU-s")
    runs = {"batched": bench_batched, "sb3-compiled": bench_sb3_compiled,
            "sb3-recipe": bench_sb3_recipe}  # fmt: skip
    for name in a.sections:
        res = runs[name](a)
        out[name] = res
        print(
            f"{name:>13}: {res['steps_per_wall_s']:>8,} env-steps/wall-s  "
            f"{res['steps_per_cpu_s']:>8,} per CPU-s  ({res['steps']:,} steps)"
        )
        if "cpu_s_by_part" in res:
            train = {k: v for k, v in res["cpu_s_by_part"].items() if k != "evaluation"}
            total = sum(train.values())
            parts = ", ".join(f"{k} {v / total:.0%}" for k, v in train.items())
            print(f"{'':>15}CPU by part: {parts}")
        if "malloc" in res:
            print(f"{'':>15}malloc: {res['malloc']}")
        if "update_precision" in res:
            print(f"{'':>15}update precision: {res['update_precision']}")
        if "rollout_sides" in res:
            sides = res["rollout_sides"]
            calls = max(1, sides["calls"])
            print(
                f"{'':>15}rollout, per step of {sides['games_per_call']:g} games: the env "
                f"{sides['env_cpu_s'] / calls * 1e3:.2f} ms (CPU of the thread stepping it), "
                f"the policy choosing {sides['policy_wall_s'] / calls * 1e3:.2f} ms (wall); "
                "pipelined, the slower bounds the rollout"
            )
    if "batched" in out:
        rate = out["batched"]["steps_per_wall_s"]
        this = f"{a.suits} suit(s), hidden {a.hidden}, {a.threads} thread(s)"
        verdict = "met" if rate >= TARGET_STEPS_PER_WALL_S else "NOT met"
        print(
            f"target: the batched PPO >= {TARGET_STEPS_PER_WALL_S:,} env-steps per wall-second "
            f"(2 cores, 1 suit, hidden 64, 2 threads); this run ({this}): {rate:,.0f} -> {verdict}"
        )
    if a.json:
        a.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
