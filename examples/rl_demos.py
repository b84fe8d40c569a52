"""Stage 1 of the RL recipe: record a strong player's games as demonstrations.

    python examples/rl_demos.py                                  # lookahead, 1 suit, 3,000 deals
    python examples/rl_demos.py --suits 2 --deals 100000:100500 --out runs/rl2/demos.npz

The teacher (``--teacher``, any agent of ``spider-env evaluate``: ``lookahead`` by default, the
strongest 1-suit player we ship) plays training deals (``--deals``, default 100000..102999; the
test deals 0..999 are never used for training). Each game is stored as its deal number and
action list (``spider_env.agents.rl.imitation``); ``examples/rl_bc.py`` replays them into
training data. Settings: ``spider_env.agents.rl.recipe.DemoSettings``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from spider_env.agents.rl.recipe import DemoSettings, record_demos
from spider_env.agents.rl.settings import ArgumentParser, add_flags, parse_and_run

from spider_env.apps.evaluation import parse_deals


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    add_flags(p, DemoSettings, parse={"deals": parse_deals})
    return p


def main(argv: Sequence[str] | None = None) -> int:
    r = parse_and_run(build_parser(), DemoSettings, record_demos, argv)
    print(
        f"{r['teacher']} on {r['variant']}: {r['games']} games, {r['won']} won "
        f"({100 * r['won'] / max(1, r['games']):.1f}%), {r['decisions']} decisions, "
        f"{r['seconds']:.0f} s wall -> {r['out']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
