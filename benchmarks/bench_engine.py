"""Engine throughput: ``legal_actions`` + ``apply`` per second on seeded random play.

One step = list the legal actions of the current state, pick one uniformly at random
(``random.Random(seed)``) and apply it. Games start from deal numbers ``seed, seed+1, ...`` and
end when nothing is legal or after ``--max-steps`` steps (random play rarely ends by itself).
Runs on one core, pure Python; prints a table.

    .venv/bin/python benchmarks/bench_engine.py                 # 5 s per suit count
    .venv/bin/python benchmarks/bench_engine.py --duration 20 --suits 4
"""

from __future__ import annotations

import json
import platform
import random
import sys
import time
from dataclasses import asdict, dataclass

from reference import cartpole_steps_per_second
from spider_env.agents.rl.settings import ArgumentParser

import spider_env as se
from spider_env.core.rules import apply, legal_actions


@dataclass
class Result:
    suits: int
    games: int
    steps: int
    seconds: float
    cpu_seconds: float
    steps_per_second: float
    steps_per_cpu_second: float
    mean_legal: float
    games_ended: int


def bench(suits: int, duration: float, seed: int, max_steps: int) -> Result:
    variant = se.classic(suits)
    rng = random.Random(seed)
    steps = games = ended = legal_total = 0
    number = seed
    choice = rng.choice
    start = time.perf_counter()
    cpu_start = time.process_time()
    deadline = start + duration
    while time.perf_counter() < deadline:
        state = se.new_game(variant, number)
        number += 1
        games += 1
        for _ in range(max_steps):
            legal = legal_actions(state)
            if not legal:
                ended += 1
                break
            legal_total += len(legal)
            state = apply(state, choice(legal))
            steps += 1
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    return Result(
        suits=suits,
        games=games,
        steps=steps,
        seconds=round(seconds, 3),
        cpu_seconds=round(cpu, 3),
        steps_per_second=round(steps / seconds),
        steps_per_cpu_second=round(steps / cpu) if cpu > 0 else 0,
        mean_legal=round(legal_total / max(steps, 1), 2),
        games_ended=ended,
    )


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--duration", type=float, default=5.0, help="seconds per suit count (default 5)"
    )
    parser.add_argument(
        "--suits", type=int, nargs="+", default=[1, 2, 4], choices=[1, 2, 4], help="suit counts"
    )
    parser.add_argument("--seed", type=int, default=0, help="first deal number and RNG seed")
    parser.add_argument(
        "--max-steps", type=int, default=1000, help="step cap per game (default 1000)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON lines instead")
    args = parser.parse_args(argv)
    if args.duration <= 0 or args.max_steps <= 0:
        parser.error("--duration and --max-steps must be positive")

    results = [bench(s, args.duration, args.seed, args.max_steps) for s in args.suits]
    ref = cartpole_steps_per_second()
    if args.json:
        for r in results:
            print(json.dumps({**asdict(r), "cartpole_steps_per_cpu_second": round(ref)}))
        return 0
    print(
        f"spider-env engine, random play, Python {platform.python_version()} "
        f"({platform.machine()}), {args.duration:g} s per row, seed {args.seed}, "
        f"cap {args.max_steps} steps/game"
    )
    header = f"{'suits':>5} {'games':>6} {'steps':>9} {'wall s':>7} {'steps/s':>9} "
    header += f"{'cpu s':>6} {'steps/cpu-s':>11} {'x CartPole':>10} {'mean legal':>10} {'ended':>6}"
    print(header)
    for r in results:
        print(
            f"{r.suits:>5} {r.games:>6} {r.steps:>9} {r.seconds:>7.2f} "
            f"{r.steps_per_second:>9,} {r.cpu_seconds:>6.2f} {r.steps_per_cpu_second:>11,} "
            f"{r.steps_per_cpu_second / ref:>10.2f} {r.mean_legal:>10.2f} {r.games_ended:>6}"
        )
    print("one step = legal_actions(state) + rng.choice + apply(state, action)")
    print(f"reference: CartPole-v1 through gymnasium.make, {ref:,.0f} steps/cpu-s (same run)")
    print("steps/cpu-s uses this process's CPU time: the fair figure on a shared machine")
    return 0


if __name__ == "__main__":
    sys.exit(main())
