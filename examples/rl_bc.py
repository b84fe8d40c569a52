"""Stage 2 of the RL recipe: behaviour cloning of the demonstrations into a MaskablePPO policy.

    python examples/rl_bc.py                       # runs/rl_1suit/demos.npz -> runs/rl_1suit/bc.zip
    spider-env evaluate --agent runs/rl_1suit/bc.zip --suits 1 --deals 0:1000 --jobs 2

The demonstrations (``examples/rl_demos.py``) are replayed into the per-action features of
``spider_env.observation.actions``; the policy (``spider_env.agents.rl.policy.ActionSetPolicy``:
one shared network scores every legal action, the value comes from a pooled summary) learns to
pick the teacher's action in the won games (cross-entropy over the legal actions) and the
discounted return of every decision (the value, so that PPO fine-tuning starts with a critic).
A tenth of the games (by deal) is held out to measure how often the policy agrees with the
teacher. Every ``--eval-every`` epochs and after the last one the policy plays the validation
deals 1000.. (``--eval-deals`` of them), most likely action and sampled: ``bc_curve.csv`` is
the learning curve. The model
is a ``MaskablePPO`` ``.zip`` with its sidecar, evaluable with ``spider-env evaluate``; it
plays the choice (most likely or sampled) that won more validation deals after the last epoch.
Settings: ``spider_env.agents.rl.recipe.BCSettings``; the stage: ``recipe.clone``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from spider_env.agents.rl.recipe import BCSettings, clone
from spider_env.agents.rl.settings import ArgumentParser, add_flags, parse_and_run

from spider_env.apps.evaluation import evaluate


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    add_flags(p, BCSettings)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    r = parse_and_run(build_parser(), BCSettings, lambda s: clone(s, evaluate), argv)
    print(
        f"saved {r['model']} ({'most likely' if r['deterministic'] else 'sampled'} actions), "
        f"curve {r['curve']}, {r['seconds']:.0f} s wall"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
