"""A suit curriculum with MaskablePPO: 1 suit, then 2, then 4, moving on when the win rate of the
last ``--window`` training games of the current stage reaches ``--threshold``.

    python examples/curriculum.py --timesteps 5000000 --threshold 0.5 --window 200

The pieces are reusable and live in ``spider_env.agents.rl.curricula``:

* :class:`SuitCurriculum`: an env that plays classic Spider with the suit count of the current
  stage; all stages share one observation space (the feature encoding is widened to the 4-suit
  layout), so one network learns across stages;
* :class:`Curriculum`: the schedule (stages, threshold, window);
* :func:`sb3_curriculum_callback`: collects the finished games of all training envs, and when
  the curriculum advances calls ``set_stage`` on every env (works with ``DummyVecEnv`` and
  ``SubprocVecEnv``).

The settings (flags) are :class:`CurriculumSettings`, the training :func:`train_curriculum`.
At the end the model plays the validation deals (1000..) of every stage with masks, and the
results, the stage history and the model go to ``--out``. The saved model expects the widened
curriculum observation, so load it with ``SuitCurriculum`` (not ``spider-env evaluate``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from spider_env.agents.rl.curricula import UNUSED, CurriculumSettings, train_curriculum
from spider_env.agents.rl.settings import ArgumentParser, add_flags, parse_and_run


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_flags(p, CurriculumSettings, skip=UNUSED)
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    summary = parse_and_run(build_parser(), CurriculumSettings, train_curriculum, argv)
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
