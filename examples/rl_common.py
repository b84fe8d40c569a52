"""Shared by the RL recipe's examples: a model's win rate on held-out deals, played as
``spider-env evaluate`` plays a saved model."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spider_env.agents.rl.recipe import model_agent, save_model

from spider_env.apps.evaluation import evaluate
from spider_env.core.variants import Variant


def win_rate(
    model: Any,
    variant: Variant | str,
    deals: Sequence[int] | range,
    *,
    deterministic: bool,
    jobs: int = 1,
) -> dict[str, float]:
    """The model's win rate and mean completed runs on ``deals``, played as ``spider-env
    evaluate`` plays a saved model (``jobs`` worker processes)."""
    t0 = time.perf_counter()
    if jobs == 1:
        agent: Any = model_agent(model, variant, deterministic)
        res = evaluate(agent, deals, variant=variant)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            path = save_model(model, Path(tmp) / "model.zip", variant, deterministic=deterministic)
            res = evaluate(str(path), deals, variant=variant, jobs=jobs)
    s = res.summaries[0]
    return {
        "win_rate": s.win_rate,
        "wins": s.wins,
        "runs": s.mean_runs,
        "seconds": time.perf_counter() - t0,
    }
