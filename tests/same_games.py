"""Fingerprints of the project's behaviour, to show that a refactor changes no game.

    python tests/same_games.py --out before.json            # on the old code
    python tests/same_games.py --out after.json --check before.json

Plays, through the public API only:

* players (``spider-env evaluate``'s game loop and agent seeds): the actions of every game, for
  the players and deals of :data:`GAMES`;
* the solver (``spider-env solve``'s default method and budget): each deal's verdict and line;
* the envs: seeded random legal play in ``gymnasium.make("Spider-v0")`` (both backends) and in
  ``SpiderVectorEnv`` (both observation modes), hashing every observation, reward, flag and mask.

Each entry is a SHA-256 of what was played (and, for a game, its outcome in words). ``--check``
compares with an earlier file and exits 1 naming every entry that differs (2 on bad flags).
``--quick`` plays two deals of each row; ``--only TEXT`` the rows whose name contains TEXT
(``"game planner"``, ``"solve"``, ``"rollout"``); ``--check`` then compares those alone. Not a
test: the planner's games take minutes; run it before and after a change that must change no
game.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any

#: (player spec, variant, deals) played by ``evaluate``'s loop with seed 0.
GAMES: list[tuple[str, str, range]] = [
    ("random", "spider-1suit", range(0, 5)),
    ("greedy", "spider-1suit", range(0, 60)),
    ("greedy", "spider-2suit", range(0, 60)),
    ("greedy", "spider-4suit", range(0, 60)),
    ("greedy", "scorpion", range(0, 30)),
    ("greedy", "simple-simon", range(0, 30)),
    ("greedy", "spiderette-4suit", range(0, 30)),
    ("greedy", "spider-tournament-2suit", range(0, 20)),
    ("lookahead", "spider-1suit", range(0, 20)),
    ("lookahead", "spider-2suit", range(0, 10)),
    ("expert", "spider-1suit", range(0, 3)),
    ("expert", "scorpion", range(0, 3)),
    ("planner", "spider-1suit", range(0, 12)),
    ("planner", "spider-2suit", range(0, 6)),
    ("planner", "spider-4suit", range(0, 2)),
    ("planner", "scorpion", range(0, 6)),
    ("planner", "simple-simon", range(0, 6)),
    ("planner", "spiderette-2suit", range(0, 6)),
    ("planner", "spider-tournament-1suit", range(0, 4)),
    ("planner:evals=96,candidates=8,width=3,nodes=2000", "spider-1suit", range(0, 4)),
    ("planner:screen=0,late=1", "spider-1suit", range(0, 4)),
    ("planner:cap=1", "spider-4suit", range(0, 1)),
]
#: (variant, deals) solved with the default method and budget.
SOLVES: list[tuple[str, range]] = [
    ("spider-1suit", range(0, 10)),
    ("spider-2suit", range(0, 10)),
    ("spider-4suit", range(0, 6)),
    ("scorpion", range(0, 10)),
    ("simple-simon", range(0, 10)),
    ("spiderette-4suit", range(0, 10)),
    ("spider-relaxed-2suit", range(0, 5)),
]
#: (variant, backend or vector mode, steps) of seeded random legal play.
ROLLOUTS: list[tuple[str, str, int]] = [
    (v, mode, 3000)
    for v in ("spider-1suit", "spider-4suit", "scorpion", "spiderette-2suit")
    for mode in ("pure", "compiled", "vector-dict", "vector-actions")
]


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:24]


def play_games(spec: str, variant: str, deals: list[int]) -> dict[str, str]:
    from spider_env.agents import make_agent

    from spider_env.apps.evaluation.episode import make_env, play_episode
    from spider_env.core.variants import get_variant

    v = get_variant(variant)
    env = make_env(v, None)
    agent = make_agent(spec, v, seed=0)
    out = {}
    for deal in deals:
        rec, actions, rewards = play_episode(env, agent, deal, seed=0, name=spec)
        outcome = [rec.won, rec.completed_runs, rec.score, rec.moves, rec.steps, rec.truncated]
        out[f"game {spec} {variant} {deal}"] = _digest([actions, rewards, outcome])
    env.close()
    return out


def solve_deals(variant: str, deals: list[int]) -> dict[str, str]:
    from spider_env.core.deals import generate_deal
    from spider_env.core.state import State
    from spider_env.core.variants import get_variant
    from spider_env.search.solver import solve

    v = get_variant(variant)
    out = {}
    for deal in deals:
        r = solve(State.from_deal(generate_deal(v, deal)))
        out[f"solve {variant} {deal}"] = _digest([r.verdict, list(r.line)])
    return out


def roll_out(variant: str, mode: str, steps: int) -> dict[str, str]:
    import gymnasium
    import numpy as np

    import spider_env  # noqa: F401  (registers Spider-v0)

    rng = np.random.default_rng(12345)
    h = hashlib.sha256()

    def feed(*arrays: Any) -> None:
        for a in arrays:
            if isinstance(a, dict):
                for key in sorted(a):
                    feed(a[key])
            else:
                h.update(np.ascontiguousarray(np.asarray(a)).tobytes())

    if mode.startswith("vector"):
        from spider_env.vector import SpiderVectorEnv

        obs_mode = mode.partition("-")[2]
        env: Any = SpiderVectorEnv(4, variant=variant, obs_mode=obs_mode)
        obs, info = env.reset(seed=7)
        feed(obs, info["action_mask"])
        for _ in range(steps // 4):
            # a finished game's mask is empty (its next step resets it; the action is ignored)
            masks = info["action_mask"]
            acts = [int(rng.choice(np.flatnonzero(m))) if m.any() else 0 for m in masks]
            obs, r, term, trunc, info = env.step(np.asarray(acts))
            feed(obs, r, term, trunc, info["action_mask"])
    else:
        env = gymnasium.make("Spider-v0", variant=variant, backend=mode)
        obs, info = env.reset(seed=7)
        feed(obs, info["action_mask"])
        for _ in range(steps):
            legal = np.flatnonzero(info["action_mask"])
            if legal.size == 0:
                obs, info = env.reset()
                feed(obs, info["action_mask"])
                continue
            obs, r, term, trunc, info = env.step(int(rng.choice(legal)))
            feed(obs, r, term, trunc, info["action_mask"])
            if term or trunc:
                obs, info = env.reset()
                feed(obs, info["action_mask"])
    env.close()
    return {f"rollout {variant} {mode} {steps}": h.hexdigest()[:24]}


def tasks(quick: bool, only: str | None = None) -> list[tuple[Any, tuple[Any, ...]]]:
    """The work of a run: players' games, solves, rollouts (``only``: those whose name, e.g.
    ``"game planner"``, ``"solve"``, ``"rollout"``, contains it)."""
    out: list[tuple[Any, tuple[Any, ...]]] = []
    for spec, variant, deals in GAMES:
        if only and only not in f"game {spec} {variant}":
            continue
        ds = list(deals)[:2] if quick else list(deals)
        # one task per few deals, so that two workers share the long games
        step = 1 if spec.startswith(("planner", "expert")) else 10
        for k in range(0, len(ds), step):
            out.append((play_games, (spec, variant, ds[k : k + step])))
    for variant, deals in SOLVES:
        if only and only not in f"solve {variant}":
            continue
        ds = list(deals)[:2] if quick else list(deals)
        out.append((solve_deals, (variant, ds)))
    for variant, mode, steps in ROLLOUTS:
        if only and only not in f"rollout {variant} {mode}":
            continue
        out.append((roll_out, (variant, mode, steps)))
    return out


def _run(task: tuple[Any, tuple[Any, ...]]) -> dict[str, str]:
    fn, args = task
    result: dict[str, str] = fn(*args)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="the JSON file written")
    parser.add_argument("--check", help="an earlier file: exit 1 naming what differs")
    parser.add_argument("--jobs", type=int, default=2, choices=(1, 2))
    parser.add_argument("--quick", action="store_true", help="two deals of each row")
    parser.add_argument("--only", help='the rows whose name contains this ("game planner")')
    args = parser.parse_args(argv)
    work = tasks(args.quick, args.only)
    result: dict[str, str] = {}
    if args.jobs == 1:
        for t in work:
            result.update(_run(t))
    else:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(args.jobs, mp_context=ctx) as pool:
            for part in pool.map(_run, work):
                result.update(part)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1, sort_keys=True)
    print(f"{len(result)} fingerprints written to {args.out}")
    if args.check:
        with open(args.check, encoding="utf-8") as fh:
            before = json.load(fh)
        differ = sorted(k for k in result if k in before and before[k] != result[k])
        missing = sorted(set(result) - set(before))
        for k in differ:
            print(f"DIFFERS: {k}")
        for k in missing:
            print(f"not in {args.check}: {k}")
        same = len(result) - len(differ) - len(missing)
        print(f"{same} the same, {len(differ)} different, {len(missing)} not in {args.check}")
        return 1 if differ or missing else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
