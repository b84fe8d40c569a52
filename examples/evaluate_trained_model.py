"""Evaluate a trained model on held-out deals, fast: many envs in one batch, the model's own
observation encoding straight from the env (no re-encoding of the table).

    python examples/evaluate_trained_model.py --model runs/maskable_ppo/model.zip --deals 0:1000

The env settings (the game, obs_mode, feature_slots or action_rows, reward mode) come from the
sidecar ``model.json`` the training examples write next to ``model.zip``. A MaskablePPO model plays
with masks; a model trained without them (plain PPO) plays *without* masks, illegal actions
being penalised by the env as in training, which is the honest measure of what it learned
(``spider-env evaluate --agent model.zip`` instead restricts its choice to legal actions).
Each deal is played once; the result is the same as ``spider-env evaluate`` would measure
for a masked model (same deals, same step limit, same env), only the random draws of the
sampled actions differ. Prints win rate with a 95% Wilson interval and mean completed runs;
``--json`` writes the summary and per-deal results.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spider_env.agents.rl.measure import evaluate_batched
from spider_env.agents.rl.sb3_train import PPOSettings
from spider_env.agents.rl.settings import (
    MAX_SEED,
    ArgumentParser,
    InputFile,
    OutputFile,
    flag_type,
    path_problem,
)

from spider_env.apps.evaluation import parse_deals, wilson_interval


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--model",
        type=InputFile,
        default=str(Path(PPOSettings.out) / "model.zip"),  # train_maskable_ppo.py's
        help="model.zip with its model.json sidecar (default: %(default)s)",
    )
    p.add_argument(
        "--deals",
        type=flag_type(parse_deals),
        default="0:1000",
        help="deal numbers, e.g. 0:1000 (held out)",
    )
    p.add_argument("--n-envs", type=int, default=8)
    p.add_argument("--deterministic", action="store_true", help="argmax instead of sampling")
    p.add_argument("--max-episode-steps", type=int, help="default: the training step limit")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=OutputFile, help="write summary and per-deal results here")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = build_parser()
    args = p.parse_args(argv)
    if args.n_envs < 1:
        p.error(f"--n-envs: must be >= 1, got {args.n_envs}")
    if args.max_episode_steps is not None and args.max_episode_steps < 1:
        p.error(f"--max-episode-steps: must be >= 1, got {args.max_episode_steps}")
    if not 0 <= args.seed <= MAX_SEED:
        p.error(f"--seed: must be in 0..{MAX_SEED}, got {args.seed}")
    for flag, kind, path in (("--json", OutputFile, args.json), ("--model", InputFile, args.model)):
        if path is not None and (problem := path_problem(kind, path)):
            p.error(f"{flag}: {problem}")
    try:
        played = evaluate_batched(
            args.model,
            args.deals,
            n_envs=args.n_envs,
            deterministic=True if args.deterministic else None,
            max_episode_steps=args.max_episode_steps,
            seed=args.seed,
        )
    except (OSError, ValueError) as exc:  # no sidecar, or not a model of it
        p.error(f"--model: {exc}")
    res = played.summary(args.model, wilson_interval)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps({k: v for k, v in res.items() if k != "records"}, indent=2))
    return res


if __name__ == "__main__":
    main()
