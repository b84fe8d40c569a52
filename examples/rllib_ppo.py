"""Train Spider with RLlib's PPO, on this machine or on a Ray cluster, with action masking.

    python examples/rllib_ppo.py                                   # 1 suit, a private local Ray
    python examples/rllib_ppo.py --num-env-runners 2 --num-envs-per-env-runner 128
    python examples/rllib_ppo.py --torch-threads 1             # the most env-steps per CPU-second
    python examples/rllib_ppo.py --ray HEAD_HOST:6379 --num-env-runners 32 --num-learners 2 \\
        --suits 2 --timesteps 50000000 --out runs/rllib_2suit
    spider-env evaluate --agent runs/rllib/model.safetensors --agent greedy --suits 1 --deals 0:1000

Every env runner steps ``--num-envs-per-env-runner`` games in one ``SpiderVectorEnv`` (built
by RLlib through the env's vector entry point); the policy is the RL recipe's action-set
network (``--obs-mode rows``, the default: RLlib's action is a row of the per-action
observation, the env plays that row's action id; or ``--obs-mode actions``: the action an id)
or two MLPs over the flat observation (``--obs-mode flat``), its logits masked with the legal
actions the observation carries. The env raises on an
illegal action, so a finished run took none. At the end: RLlib's checkpoint
(``OUT/checkpoint``), the policy exported as a model file ``spider-env evaluate`` plays
(``OUT/model.safetensors``; ``OUT/model.zip`` + ``model.json`` beside it), ``progress.csv``,
and the validation deals 1000.. played by that model (``--eval-deals``). Needs the ``rllib``
extra: ``pip install 'spider-env[rllib]'`` (the cluster's nodes need spider-env installed too).
Training deals are >= 10000; deals 0..999 are the test set.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from spider_env.agents.rl.rllib import RLlibSettings, ray_address, train
from spider_env.agents.rl.settings import ArgumentParser, add_flags, parse_and_run


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_flags(p, RLlibSettings, parse={"ray": ray_address})
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    summary = parse_and_run(build_parser(), RLlibSettings, train, argv)
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
