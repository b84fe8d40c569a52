"""A network that learns from the planner: expert iteration, stage by stage or all at once.

    python examples/planner_rl.py --suits 2                     # every stage not done yet
    python examples/planner_rl.py --suits 2 --stage demos       # one stage (resumes its shards)
    python examples/planner_rl.py --suits 2 --stage plot        # curve.png of the run
    spider-env evaluate --agent runs/planner-spider-2suit/ppo/model.safetensors --suits 2

The stages (``--stage``): ``demos`` (the planner's games on training deals, stored with the rows
the policy sees and the planner's scores), ``clone`` (behaviour cloning, the critic from the
games' outcomes), ``dagger`` (the network's own games labelled by the planner, then more
cloning), ``ppo`` (the batched PPO from the cloned network, kept near it at first by a KL term)
and ``test`` (every stage's model and the model trained from scratch on the test deals 0..999,
paired). Everything goes into ``--out`` (default ``runs/planner-<variant>``); ``pipeline.json``
records each stage's time. The stages: ``spider_env.agents.rl.expert_iteration``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from spider_env.agents.rl.expert_iteration import PipelineSettings, deal_range, run
from spider_env.agents.rl.settings import ArgumentParser, add_flags, parse_and_run

from spider_env.apps.evaluation import parse_deals


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_flags(p, PipelineSettings,
              parse={"demo_deals": deal_range, "dagger_deals": deal_range,
                     "test_deals": parse_deals})  # fmt: skip
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    record = parse_and_run(build_parser(), PipelineSettings, run, argv)
    print(json.dumps(record.get("stages", record), indent=1))
    return record


if __name__ == "__main__":
    main()
