"""Stage 1 of the RL recipe: record a strong player's games as demonstrations.

    python examples/rl_demos.py                                  # lookahead, 1 suit, 3,000 deals
    python examples/rl_demos.py --suits 2 --deals 100000:100500 --out runs/rl2/demos.npz

The teacher (``--teacher``, any agent of ``spider-env evaluate``: ``lookahead`` by default, the
strongest 1-suit player we ship) plays training deals (``--deals``, default 100000..102999; the
test deals 0..999 are never used for training). Each game is stored as its deal number and
action list (``spider_env.agents.rl.imitation``); ``examples/rl_bc.py`` replays them into
training data.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from spider_env.agents import make_agent
from spider_env.agents.rl.imitation import record_demonstrations, save_demonstrations

from spider_env.apps.evaluation.deals import parse_deals
from spider_env.core.variants import resolve_variant


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--teacher", default="lookahead", help="agent spec (default lookahead)")
    p.add_argument("--suits", type=int, choices=(1, 2, 4), default=1)
    p.add_argument("--variant", default=None, help="a variant name instead of --suits")
    p.add_argument("--deals", default="100000:103000", help="training deals (start:stop)")
    p.add_argument("--max-steps", type=int, default=1000)
    p.add_argument("--jobs", type=int, default=1, help="worker processes")
    p.add_argument("--out", default="runs/rl_1suit/demos.npz")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    try:
        variant = resolve_variant(args.variant, None if args.variant else args.suits, False)
        deals = parse_deals(args.deals)
        if set(deals) & set(range(1000)):
            raise ValueError("deals 0..999 are the test set: record demonstrations on others")
        for name in ("max_steps", "jobs"):
            if getattr(args, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 1")
        make_agent(args.teacher, variant)  # an unknown teacher fails here, not in a worker
    except (ValueError, FileNotFoundError, ImportError) as exc:
        print(f"rl_demos.py: error: {exc}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    demos = list(
        record_demonstrations(
            deals,
            variant,
            args.teacher,
            max_steps=args.max_steps,
            jobs=args.jobs,
            progress=not args.no_progress,
        )
    )
    import os

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    save_demonstrations(args.out, demos, variant, args.teacher)
    won = sum(d.won for d in demos)
    steps = sum(len(d.actions) for d in demos)
    print(
        f"{args.teacher} on {variant.name}: {len(demos)} games, {won} won "
        f"({100 * won / max(1, len(demos)):.1f}%), {steps} decisions, "
        f"{time.perf_counter() - t0:.0f} s wall -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
