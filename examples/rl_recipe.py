"""The whole RL recipe in one command: demonstrations, behaviour cloning, PPO fine-tuning.

    python examples/rl_recipe.py                          # 1 suit, into runs/rl_1suit
    python examples/rl_recipe.py --suits 2 --dir runs/rl_2suit
    spider-env evaluate --agent runs/rl_1suit/model.zip --agent greedy --deals 0:1000 --jobs 2

1. as ``rl_demos.py``: the teacher (lookahead) plays ``--demo-deals`` training deals;
2. as ``rl_bc.py``: the ``ActionSetPolicy`` clones its choices in the won games;
3. as ``rl_finetune.py``: MaskablePPO trains it further; the best validation checkpoint is kept;
4. random, greedy and lookahead play the validation deals (``baselines.json``) and
   ``learning_curves.png`` draws both stages against them.

``model.zip`` (+ ``model.json``) in ``--dir`` is the result: the fine-tuned model, which is the
cloned one if no fine-tuning checkpoint won more validation deals. ``recipe.json`` records each
stage's wall time. Deals 0..999 (the test set) are used by none of the stages. Settings:
``spider_env.agents.rl.recipe.RecipeSettings``; the stages: ``spider_env.agents.rl.recipe``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from spider_env.agents.rl.recipe import RecipeSettings, run_recipe
from spider_env.agents.rl.settings import ArgumentParser, add_flags, parse_and_run

from spider_env.apps.evaluation import evaluate, parse_deals


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    add_flags(p, RecipeSettings, parse={"demo_deals": parse_deals})
    return p


def main(argv: Sequence[str] | None = None) -> int:
    summary = parse_and_run(build_parser(), RecipeSettings, lambda s: run_recipe(s, evaluate), argv)
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
