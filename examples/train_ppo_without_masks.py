"""Train plain PPO (Stable-Baselines3) on Spider *without* action masks, to see what masking buys.

    python examples/train_ppo_without_masks.py                 # same defaults as the masked run
    python examples/plot_learning_curves.py --run "MaskablePPO=runs/maskable_ppo" \\
        --run "PPO, no masks=runs/ppo_no_masks" --baselines runs/maskable_ppo/baselines.json

Same envs, encoding, reward, deals, network and budget as ``train_maskable_ppo.py``; the only
difference is that the policy chooses among all 1301 action ids, of which only a handful are
legal in a position. The env's ``illegal_action="penalize"`` policy (its default) answers an
illegal id by leaving the game unchanged and giving ``illegal_reward`` (-1.0), and the step
still counts toward the step limit. Evaluation runs without masks too (``use_masking=False``);
``eval.csv`` records the share of illegal actions.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from spider_env.agents.rl.sb3_train import PPOSettings, train
from spider_env.agents.rl.settings import ArgumentParser, add_flags, parse_and_run

from spider_env.apps.evaluation import evaluate


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_flags(p, PPOSettings, skip=("illegal_action",), defaults={"out": "runs/ppo_no_masks"})
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    summary = parse_and_run(
        build_parser(), PPOSettings, lambda s: train(s, "PPO", "PPO, no masks", evaluate), argv
    )
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
