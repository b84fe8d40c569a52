"""Evaluate a trained model on held-out deals, fast: many envs in one batch, the model's own
observation encoding straight from the env (no re-encoding of the table).

    python examples/evaluate_trained_model.py --model runs/maskable_ppo/model.zip --deals 0:1000

The env settings (the game, obs_mode, feature_slots or action_rows, reward mode) come from the
sidecar ``model.json`` the trainers write next to ``model.zip``. A MaskablePPO model plays with
masks; a model trained without them (plain PPO) plays *without* masks, illegal actions being
penalised by the env as in training, which is the honest measure of what it learned
(``spider-env evaluate --agent model.zip`` instead restricts its choice to legal actions).
Each deal is played once; the result is the same as ``spider-env evaluate`` would measure
for a masked model (same deals, same step limit, same env), only the random draws of the
sampled actions differ. Prints win rate with a 95% Wilson interval and mean completed runs;
``--json`` writes the summary and per-deal results. The work:
``spider_env.agents.rl.measure.evaluate_model``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from spider_env.agents.rl.measure import EvaluationSettings, evaluate_model
from spider_env.agents.rl.settings import ArgumentParser, add_flags, parse_and_run

from spider_env.apps.evaluation import parse_deals


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_flags(p, EvaluationSettings, parse={"deals": parse_deals})
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    res = parse_and_run(build_parser(), EvaluationSettings, evaluate_model, argv)
    print(json.dumps({k: v for k, v in res.items() if k != "records"}, indent=2))
    return res


if __name__ == "__main__":
    main()
