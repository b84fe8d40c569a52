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
import os
import sys
from collections.abc import Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from training_utils import add_common_args, train


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_common_args(p, out_default="runs/ppo_no_masks")
    args = p.parse_args(argv)
    args.illegal_action = "penalize"
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    return train(parse_args(argv), algo="PPO", label="PPO, no masks")


if __name__ == "__main__":
    main()
