"""Probes of the batched PPO's rollout (the training record's "Which side of the rollout waits").

* ``encoder``: CPU microseconds per game-step of ``SpiderVectorEnv(obs_mode="actions")``
  (``copy=False``, same-step autoreset, training deals) in random legal play, N games; run it
  on main and with a patch of ``patches/`` applied to compare the per-action encoder's cost.
* ``rows``: how many rows of the per-action observation a decision uses (its legal actions,
  one move into empty columns counted once) in random legal play, N games: the most, the 99th
  and 99.9th percentiles and the share of decisions above 32, 48 and 64 rows (what an
  ``action_rows`` that small would leave out: the rows of least gain).
* ``split``: the rollout's wall time per step of 256 games, torch choosing actions on one thread
  while a second steps the env, two ways in alternation: two halves both stepped by the second
  thread (the trainer's way), or three parts of which the thread choosing the actions steps the
  last (``--main-part`` games) itself.

Not a test; run it as

    .venv/bin/python research/rl/rollout_probes.py encoder [--suits 1] [--n 128]
    .venv/bin/python research/rl/rollout_probes.py rows [--suits 1] [--n 256] [--steps 400]
    .venv/bin/python research/rl/rollout_probes.py split [--suits 1] [--hidden 64] [--main-part 32]
"""

from __future__ import annotations

import itertools
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from spider_env.agents.rl.envs import TRAIN_DEALS
from spider_env.agents.rl.settings import ArgumentParser

from spider_env.core.variants import classic


def random_play(suits: int, n: int) -> tuple[Any, dict[str, np.ndarray], Any]:
    """``SpiderVectorEnv(obs_mode="actions")`` of ``n`` games (``copy=False``, same-step
    autoreset, the training deals) just reset, its observation, and ``actions(obs)``: a
    uniformly random legal action of each game."""
    from spider_env.vector import SpiderVectorEnv

    envs = SpiderVectorEnv(
        n, variant=classic(suits), obs_mode="actions", copy=False,
        autoreset_mode=AutoresetMode.SAME_STEP, deal_numbers=TRAIN_DEALS,
    )  # fmt: skip
    obs, _ = envs.reset(seed=0)
    rng = np.random.default_rng(0)

    def actions(o: dict[str, np.ndarray]) -> np.ndarray:
        ids = o["action_ids"]
        rows = np.maximum((ids >= 0).sum(1), 1)
        pick = ids[np.arange(n), (rng.random(n) * rows).astype(int)]
        return np.maximum(pick, 0).astype(np.int64)

    return envs, obs, actions


def encoder(suits: int, n: int, steps: int = 400) -> float:
    """CPU microseconds per game-step in random legal play, after 50 warm-up steps."""
    envs, obs, actions = random_play(suits, n)
    for _ in range(50):
        obs = envs.step(actions(obs))[0]
    spent = 0.0
    for _ in range(steps):
        a = actions(obs)
        t0 = time.thread_time()
        obs = envs.step(a)[0]
        spent += time.thread_time() - t0
    return spent / steps / n * 1e6


def rows_used_in_play(suits: int, n: int, steps: int) -> np.ndarray:
    """The rows each decision of ``steps`` steps of ``n`` games of random legal play used (the
    rows with an action id, of the default ``action_rows``)."""
    envs, obs, actions = random_play(suits, n)
    used = np.empty((steps, n), dtype=np.int64)
    for t in range(steps):
        used[t] = (obs["action_ids"] >= 0).sum(1)
        obs = envs.step(actions(obs))[0]
    envs.close()
    return used.ravel()


def split(suits: int, hidden: int, main_part: int, n: int = 256, steps: int = 64) -> None:
    """Print the rollout's ms per step of ``n`` games, two halves against three parts, three
    alternations."""
    import torch
    from spider_env.agents.rl.models import action_set_model
    from spider_env.agents.rl.ppo import (
        BatchedPPOSettings,
        RowPolicy,
        make_envs,
        rows_used,
        sample_rows,
    )

    torch.set_num_threads(1)
    variant = classic(suits)
    s = BatchedPPOSettings(suits=suits, hidden=hidden, out="runs/probe")
    policy = RowPolicy(action_set_model(variant, hidden=hidden).policy)
    policy.policy.eval()
    stepper = ThreadPoolExecutor(1)

    def parts(cuts: list[int]) -> tuple[list[Any], list[Any]]:
        envs = [
            make_envs(variant, s, hi - lo, TRAIN_DEALS, autoreset_mode=AutoresetMode.SAME_STEP)
            for lo, hi in itertools.pairwise(cuts)
        ]
        return envs, [e.reset(seed=lo)[0] for e, lo in zip(envs, cuts)]

    def act(o: dict[str, np.ndarray]) -> np.ndarray:
        k = rows_used(o["action_ids"])
        with torch.no_grad():
            logits, valid, _ = policy.forward(
                torch.from_numpy(o["actions"][:, :k]), torch.from_numpy(o["action_ids"][:, :k]),
                torch.from_numpy(o["globals"]),
            )  # fmt: skip
            row = sample_rows(torch.log_softmax(logits, -1), valid, torch.rand(len(logits)))
        r = row.numpy()
        return np.maximum(o["action_ids"][np.arange(len(r)), r].astype(np.int64), 0)

    def run(envs: list[Any], obs: list[Any], count: int) -> float:
        """ms per step; the thread choosing the actions steps part 2 itself, if there is one."""
        t0 = time.perf_counter()
        futures: list[Any] = [None, None]
        for _ in range(count):
            for h in (0, 1):
                if futures[h] is not None:
                    obs[h] = futures[h].result()[0]
                futures[h] = stepper.submit(envs[h].step, act(obs[h]))
            if len(envs) == 3:
                obs[2] = envs[2].step(act(obs[2]))[0]
        for h in (0, 1):
            obs[h] = futures[h].result()[0]
        return (time.perf_counter() - t0) / count * 1e3

    a = (n - main_part) // 2
    halves, three = parts([0, n // 2, n]), parts([0, a, n - main_part, n])
    run(*halves, 20)
    run(*three, 20)
    for _ in range(3):
        print(
            f"two halves {run(*halves, steps):.3f} ms, three parts (main {main_part}) "
            f"{run(*three, steps):.3f} ms per step of {n} games"
        )
    stepper.shutdown()


def build_parser() -> ArgumentParser:
    """The probes' flags (one subcommand each)."""
    p = ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    sub = p.add_subparsers(dest="probe", required=True)
    enc = sub.add_parser("encoder", help="CPU microseconds per game-step of obs_mode='actions'")
    enc.add_argument("--suits", type=int, default=1, choices=(1, 2, 4))
    enc.add_argument("--n", type=int, default=128, help="games stepped together")
    rows = sub.add_parser("rows", help="rows of the per-action observation a decision uses")
    rows.add_argument("--suits", type=int, default=1, choices=(1, 2, 4))
    rows.add_argument("--n", type=int, default=256, help="games stepped together")
    rows.add_argument("--steps", type=int, default=400, help="steps of random legal play")
    spl = sub.add_parser("split", help="the rollout's two halves against three parts")
    spl.add_argument("--suits", type=int, default=1, choices=(1, 2, 4))
    spl.add_argument("--hidden", type=int, default=64, help="width of the policy's layers")
    spl.add_argument(
        "--main-part", type=int, default=32, help="games the choosing thread steps (of 256)"
    )
    return p


def main(argv: list[str] | None = None) -> None:
    p = build_parser()
    a = p.parse_args(argv)
    if a.probe == "encoder":
        if a.n < 1:
            p.error(f"--n must be at least 1, got {a.n}")
        print(f"{a.suits} suit(s), N = {a.n}: {encoder(a.suits, a.n):.2f} us per game-step")
        return
    if a.probe == "rows":
        for flag in ("n", "steps"):
            if getattr(a, flag) < 1:
                p.error(f"--{flag} must be at least 1, got {getattr(a, flag)}")
        used = rows_used_in_play(a.suits, a.n, a.steps)
        above = ", ".join(f"> {k}: {(used > k).mean():.4%}" for k in (32, 48, 64))
        print(f"{a.suits} suit(s), {used.size:,} decisions: rows used at most {used.max()}, "
              f"99th percentile {np.percentile(used, 99):.0f}, 99.9th "
              f"{np.percentile(used, 99.9):.0f}; share of decisions {above}")  # fmt: skip
        return
    if not 1 <= a.main_part <= 254:
        p.error(f"--main-part must be in 1..254, got {a.main_part}")
    if a.hidden < 1:
        p.error(f"--hidden must be at least 1, got {a.hidden}")
    split(a.suits, a.hidden, a.main_part)


if __name__ == "__main__":
    main()
