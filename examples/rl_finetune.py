"""Stage 3 of the RL recipe: MaskablePPO fine-tuning of the behaviour-cloned policy.

    python examples/rl_finetune.py                 # runs/rl_1suit/bc.zip -> runs/rl_1suit/ppo.zip
    spider-env evaluate --agent runs/rl_1suit/ppo.zip --suits 1 --deals 0:1000 --jobs 2

The cloned policy and value (``examples/rl_bc.py``) are trained further by sb3-contrib's
``MaskablePPO`` on random training deals >= 10000 (``--n-envs`` envs with per-action
features, the ``"runs"`` reward: +1 per completed run, +10 on the win; 1,000-step limit), with
a small learning rate and clip range so that the first updates do not undo the cloning. Every
``--eval-freq`` steps the policy plays the validation deals 1000.. (``--eval-deals`` of them),
most likely action and sampled: ``ppo_curve.csv`` is the learning curve. The model saved is the
one (checkpoint and choice of action) that won the most validation deals, the cloned policy
included, so fine-tuning never ships a worse policy than it started from; the sidecar says
which checkpoint it is. Settings: ``spider_env.agents.rl.recipe.FinetuneSettings``; the stage:
``recipe.finetune``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from spider_env.agents.rl.recipe import FinetuneSettings, finetune
from spider_env.agents.rl.settings import ArgumentParser, add_flags, parse_and_run

from spider_env.apps.evaluation import evaluate


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    add_flags(p, FinetuneSettings)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    r = parse_and_run(build_parser(), FinetuneSettings, lambda s: finetune(s, evaluate), argv)
    print(
        f"saved {r['model']}: checkpoint at {r['chosen_timesteps']} steps, "
        f"{'most likely' if r['deterministic'] else 'sampled'} actions, validation win rate "
        f"{r['validation_win_rate']:.1%}; curve {r['curve']}; {r['seconds']:.0f} s wall"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
