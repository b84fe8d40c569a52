"""Train MaskablePPO (sb3-contrib) on Spider Solitaire, with exact action masks.

    python examples/train_maskable_ppo.py                      # 1 suit, 1M steps, 8 envs
    python examples/train_maskable_ppo.py --suits 2 --timesteps 3000000 --out runs/ppo2
    python examples/train_maskable_ppo.py --no-masks --out runs/ppo_no_masks   # plain PPO
    spider-env evaluate --agent runs/maskable_ppo/model.safetensors --suits 1 --deals 0:1000

What it does:

* ``--n-envs`` copies of ``Spider-v0`` (default 1 suit) in a ``DummyVecEnv`` (``--vec subproc``
  for a ``SubprocVecEnv``; on this project's 2-core machine the single process is faster, see
  docs/guide/training.md; ``--vec spider`` for all of them in one compiled ``SpiderVectorEnv``
  through ``spider_env.sb3.SpiderSB3VecEnv``), each playing random training deals >= 10000, with the
  learning-oriented encoding ``obs_mode="flat"`` (per-column features) and the ``"shaped"``
  reward;
* the mask comes from ``env.action_masks()``, so the policy only ever picks legal actions;
* every ``--eval-freq`` steps and once more at the end (so a run shorter than ``--eval-freq``
  still draws its curve, of one point), ``MaskableEvalCallback`` (masks applied) plays the
  held-out validation deals 1000.. and logs win rate and completed runs (``eval.csv``,
  TensorBoard);
  actions are sampled from the policy (``--deterministic`` for the most likely action, which
  tends to shuttle cards back and forth until the step limit); the best model by mean reward
  goes to ``best_model/``;
* TensorBoard (``tensorboard --logdir OUT``) and CSV logs (``progress.csv``), checkpoints
  (``checkpoints/``), the final model as ``model.safetensors`` (the model file ``spider-env
  evaluate`` plays and you share: weights and the game, obs_mode, feature_slots... as data) and
  as ``model.zip`` with ``model.json`` (to train on from), ``learning_curve.png`` with random and
  greedy on the same deals as horizontal lines, and ``summary.json``.

While it trains it prints a line saying what the run will do (its steps and when it
evaluates), a line per evaluation (validation win rate, completed runs, time so far) and, on a
terminal, a progress bar on stderr; ``--no-progress`` prints only the final summary (JSON).

``--no-masks`` trains Stable-Baselines3's plain PPO on the same envs, encoding, reward, deals,
network and budget, to see what masking buys: the policy chooses among all action ids, the env
answers an illegal one as ``--illegal-action`` says (``penalize``: the game unchanged, a reward
of -1, the step counted), and the evaluations run without masks too (``eval.csv`` records the
share of illegal actions). The trainer: ``spider_env.agents.rl.sb3_train``.

Deals 0..999 are never used for training or validation: they are the test set of
``spider-env evaluate``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from spider_env.agents.rl.sb3_train import PPOSettings, train
from spider_env.agents.rl.settings import ArgumentParser, add_flags, parse_and_run


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_flags(p, PPOSettings)
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    summary = parse_and_run(build_parser(), PPOSettings, train, argv)
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
