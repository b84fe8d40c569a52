"""Train the action-set policy with batched masked PPO at the speed of the environment.

    python examples/batched_ppo.py                                  # 1 suit, 2M steps
    python examples/batched_ppo.py --suits 2 --timesteps 20000000 --out runs/ppo_2suit
    python examples/batched_ppo.py --bc runs/bc/bc.zip              # from clone_teacher.py's model
    spider-env evaluate --agent runs/ppo/model.safetensors --agent greedy --deals 0:1000 --jobs 2

``--num-envs`` games (256) step together in one ``SpiderVectorEnv`` whose per-action
observation (``obs_mode="actions"``) is computed in the compiled core; the algorithm is one
readable file, ``spider_env.agents.rl.ppo`` (CleanRL's PPO over the legal actions' rows, masks
stored with the rollout, masked entropy). Every ``--eval-every`` steps the most likely action
plays the validation deals 1000.. (``eval.csv``) and the policy is saved as a checkpoint: a
model file that ``spider-env evaluate --agent`` plays (``.safetensors``) beside the zip to train
on from; ``model.safetensors`` is the one that won the most.
Training deals are >= 10000; deals 0..999 are the test set.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from spider_env.agents.rl.ppo import BatchedPPOSettings, train
from spider_env.agents.rl.settings import ArgumentParser, add_flags, parse_and_run


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_flags(p, BatchedPPOSettings)
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    summary = parse_and_run(build_parser(), BatchedPPOSettings, train, argv)
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
