"""Playing an evaluation in worker processes (``jobs > 1``).

The deals are cut into chunks; each worker process (``spawn``: the same in every OS) builds
its own env and agent and plays whole chunks. Worker processes start by re-importing the
caller's main script, so a script that calls ``evaluate(..., jobs=2)`` at its top level,
without ``if __name__ == "__main__":``, makes every worker fail to start: that is detected
and reported (:class:`WorkerError`), never retried.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from spider_env.apps.evaluation.batch import BATCH, play_batched, plays_in_batches
from spider_env.apps.evaluation.episode import make_env, play_episode
from spider_env.apps.evaluation.players import build_agent
from spider_env.apps.evaluation.results import DealRecord
from spider_env.core.variants import Variant

MAX_CHUNK = 50  # deals per task: small enough to balance the load, large enough to be cheap
MAX_BATCH_CHUNK = 4 * BATCH  # deals per task of an agent that plays in batches


class WorkerError(RuntimeError):
    """A worker process ended without finishing its work (e.g. it could not start)."""


@dataclass(frozen=True)
class Chunk:
    """One task: an agent (by its index in the evaluation) on some of the deals."""

    index: int
    name: str
    spec: Any
    variant: Variant
    deals: list[int]
    max_steps: int
    seed: int
    env_kwargs: dict[str, Any]
    deterministic: bool | None
    allow_other_game: bool = False


def usable_jobs(jobs: int, work: int) -> int:
    """``jobs`` capped to the amount of work (``work`` games) and to the cores."""
    return max(1, min(jobs, work, os.cpu_count() or 1))


def make_chunks(
    specs: Sequence[Any],
    names: Sequence[str],
    deals: Sequence[int],
    jobs: int,
    batched: Sequence[bool] | None = None,
    **common: Any,
) -> list[Chunk]:
    """The tasks of an evaluation: about four chunks of deals per job and agent; an agent that
    plays in batches (``batched[i]``) gets one chunk per job, of at most ``MAX_BATCH_CHUNK``
    deals (its games are played side by side: a chunk is a batch)."""
    small = max(1, min(MAX_CHUNK, len(deals) // (jobs * 4) or 1))
    large = max(1, min(MAX_BATCH_CHUNK, -(-len(deals) // jobs)))
    sizes = [large if batched and batched[i] else small for i in range(len(specs))]
    return [
        Chunk(i, names[i], spec, deals=list(deals[k : k + sizes[i]]), **common)
        for i, spec in enumerate(specs)
        for k in range(0, len(deals), sizes[i])
    ]


def play_chunk(chunk: Chunk) -> tuple[int, list[DealRecord]]:
    """Play one chunk (in a worker process); the agent's index and its records."""
    env = make_env(chunk.variant, chunk.max_steps, **chunk.env_kwargs)
    try:
        agent = build_agent(chunk.spec, chunk.variant, chunk.deterministic, chunk.allow_other_game)
        if plays_in_batches(agent):
            recs: list[DealRecord] = []
            play_batched(
                agent, chunk.variant, chunk.deals, chunk.max_steps, chunk.seed, chunk.name,
                recs.append, chunk.env_kwargs,
            )  # fmt: skip
        else:
            recs = [play_episode(env, agent, d, chunk.seed, chunk.name)[0] for d in chunk.deals]
    finally:
        env.close()
    return chunk.index, recs


def play_in_workers(
    chunks: Sequence[Chunk], jobs: int, done: Callable[[int, list[DealRecord]], None]
) -> None:
    """Play ``chunks`` in ``jobs`` processes; ``done(index, records)`` as each chunk ends.

    An exception of a chunk (e.g. ``AgentError``) is raised here; a worker process that dies
    (or cannot start) is a :class:`WorkerError` saying what to do.
    """
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"))
    try:
        futures = [pool.submit(play_chunk, c) for c in chunks]
        for fut in as_completed(futures):
            done(*fut.result())
        pool.shutdown(wait=True)
    except BrokenProcessPool:
        raise WorkerError(
            f"a worker process of evaluate(jobs={jobs}) ended without finishing its work "
            "(its own error, if any, is printed above). Worker processes start by importing "
            "the main script again: if evaluate() is called at the top level of a script, put "
            'the call under `if __name__ == "__main__":`, or use jobs=1.'
        ) from None
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


__all__ = ["Chunk", "WorkerError", "make_chunks", "play_chunk", "play_in_workers", "usable_jobs"]
