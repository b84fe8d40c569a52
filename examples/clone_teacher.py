"""Record a teacher's games and clone them into an action-set model: the first stage of the
batched-PPO path.

    python examples/clone_teacher.py                               # lookahead, 1 suit, 3,000 deals
    python examples/clone_teacher.py --teacher planner --deals 100000:100500 --out runs/bc/bc.zip
    python examples/batched_ppo.py --bc runs/bc/bc.zip             # PPO from the cloned model
    spider-env evaluate --agent runs/bc/bc.safetensors --agent greedy --deals 0:1000 --jobs 2

The teacher (``--teacher``, any player of ``spider-env evaluate``) plays training deals
(``--deals``, default 100000..102999; the test deals 0..999 are never used) into ``--demos``
(each game its deal number and action list; a file that exists is read instead). The games are
replayed into the per-action features of ``obs_mode="actions"``, and ``ActionSetPolicy`` learns
the teacher's choices in the won games and every decision's discounted return (so that PPO
starts with a critic); a tenth of the games (by deal) is held out to measure how often it
agrees with the teacher. Every ``--eval-every`` epochs and after the last one the policy plays
the validation deals 1000.. (``--eval-deals``), most likely action and sampled
(``bc_curve.csv``). The model is a model file (``bc.safetensors``), played by ``spider-env
evaluate`` (the way of choosing that won more), and a MaskablePPO ``.zip`` with its sidecar,
trained further by ``batched_ppo.py --bc``. The stage: ``spider_env.agents.rl.cloning``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from spider_env.agents.rl.cloning import CloneSettings, clone
from spider_env.agents.rl.settings import ArgumentParser, add_flags, parse_and_run

from spider_env.apps.evaluation import parse_deals


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_flags(p, CloneSettings, parse={"deals": parse_deals})
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    summary = parse_and_run(build_parser(), CloneSettings, clone, argv)
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
