"""The long differential run: random legal games through both engines, compared every step.

    python tests/differential.py [--steps 1000000] [--variants all] [--jobs 1] [--seed 12345]

For each registered variant (undo variants played with ``undo=false``: the compiled core refuses
undo histories) it plays deals 0, 1, 2, ... with uniformly random legal actions (a fixed seed per
variant, derived from ``--seed`` and printed), starting the next deal when a game ends or after
``--cap`` steps, until ``--steps`` steps. Every step compares the legal ids
(``kernel.legal_ids`` vs ``rules.legal_actions``), the whole state vector (``kernel.apply_action``
vs ``to_array(rules.apply_legal(...))``) and the score; each deal's start is compared too
(``kernel.reset_deal``). One line per variant: steps, games, differences (0 expected), seconds.
Exits 1 on any difference, printing the first one (variant, deal, step, action, state text).

Not collected by pytest (no ``test_`` prefix); ``tests/test_fast_differential.py`` is the quick
version that CI runs.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from spider_env.core import rules
from spider_env.core.actions import describe
from spider_env.core.deals import generate_deal
from spider_env.core.state import State
from spider_env.core.variants import VARIANTS, Variant
from spider_env.fast import layout, load_kernel
from spider_env.fast.layout import params, to_array

K = load_kernel()


@dataclass
class Result:
    name: str
    undo_note: bool
    steps: int = 0
    games: int = 0
    differences: int = 0
    seconds: float = 0.0
    first: str = ""
    seed: str = ""
    notes: list[str] = field(default_factory=list)


def playable(name: str) -> tuple[Variant, bool]:
    v = VARIANTS[name]
    return (v.with_options(undo=False), True) if v.undo else (v, False)


def run_variant(name: str, steps: int, cap: int, seed: int) -> Result:
    """Random games of ``name`` through both engines until ``steps`` steps are compared."""
    v, undo_note = playable(name)
    res = Result(name, undo_note, seed=f"{seed}:{name}")
    rng = random.Random(res.seed)
    pr = params(v)
    st = np.empty(int(pr[layout.P_SIZE]), dtype=np.int32)
    ids = np.empty(v.n_actions + 1, dtype=np.int32)
    keys = np.empty(64, dtype=np.int64)
    t0 = time.perf_counter()
    deal = 0

    def differ(what: str, t: int, a: int | None, s: State, extra: str = "") -> None:
        res.differences += 1
        if not res.first:
            act = "-" if a is None else f"{a} ({describe(v, a)})"
            res.first = (
                f"{what}: variant {v.spec_text()}, deal {deal}, step {t}, action {act}"
                f"{extra}\nstate before the step:\n{s.to_text()}"
            )

    while res.steps < steps:
        s = State.from_deal(generate_deal(v, deal))
        K.reset_deal(pr, st, np.uint64(deal))
        res.games += 1
        if not np.array_equal(st, to_array(s)):
            differ("reset_deal differs", 0, None, s)
            deal += 1
            continue
        for t in range(cap):
            legal = rules.legal_actions(s)
            n = K.legal_ids(pr, st, ids, keys)
            if ids[:n].tolist() != legal:
                differ(
                    "legal ids differ", t, None, s, f"\n kernel {ids[:n].tolist()}\n pure {legal}"
                )
                break
            if not legal or res.steps >= steps:
                break
            a = rng.choice(legal)
            nxt = rules.apply_legal(s, a)
            K.apply_action(pr, st, a)
            res.steps += 1
            ref = to_array(nxt)
            if not np.array_equal(st, ref):
                at = np.flatnonzero(st != ref).tolist()
                differ("next state differs", t, a, s, f" (state vector indices {at})")
                break
            if int(K.score(pr, st)) != nxt.score:
                differ("score differs", t, a, s)
                break
            s = nxt
        deal += 1
    res.seconds = time.perf_counter() - t0
    return res


def _job(args: tuple[str, int, int, int]) -> Result:
    return run_variant(*args)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=1_000_000, help="steps per variant")
    ap.add_argument("--variants", default="all", help="'all' or comma-separated names")
    ap.add_argument("--jobs", type=int, default=1, choices=(1, 2), help="processes (max 2)")
    ap.add_argument("--seed", type=int, default=12345, help="base seed of the random play")
    ap.add_argument("--cap", type=int, default=1000, help="steps per game at most")
    args = ap.parse_args(argv)
    names = sorted(VARIANTS) if args.variants == "all" else args.variants.split(",")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(sorted(VARIANTS))}")
    print(
        f"differential: {args.steps} steps per variant, games capped at {args.cap} steps, "
        f"seed {args.seed} (each variant's RNG: random.Random('<seed>:<variant>')), "
        f"jobs {args.jobs}",
        flush=True,
    )
    jobs = [(n, args.steps, args.cap, args.seed) for n in names]
    t0 = time.perf_counter()
    results: list[Result] = []

    def show(r: Result) -> None:
        note = "  (played with undo=false)" if r.undo_note else ""
        print(
            f"{r.name:26s} steps {r.steps:>9d}  games {r.games:>6d}  "
            f"differences {r.differences}  {r.seconds:8.1f} s{note}",
            flush=True,
        )
        results.append(r)

    if args.jobs == 2 and len(jobs) > 1:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(2) as pool:
            for r in pool.imap(_job, jobs):
                show(r)
    else:
        for job in jobs:
            show(_job(job))
    total = sum(r.steps for r in results)
    bad = [r for r in results if r.differences]
    print(
        f"total: {total} steps, {sum(r.games for r in results)} games, "
        f"{sum(r.differences for r in results)} differences, "
        f"{time.perf_counter() - t0:.1f} s",
        flush=True,
    )
    if bad:
        print(f"FIRST DIFFERENCE ({bad[0].name}):\n{bad[0].first}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
