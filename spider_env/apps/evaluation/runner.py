"""The evaluation itself: :func:`evaluate` checks its arguments, builds the agents, plays every
agent on every deal (in this process, in worker processes or on Ray) and summarises."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from typing import Any

from spider_env.apps.evaluation.batch import play_batched, plays_in_batches
from spider_env.apps.evaluation.deals import deal_list
from spider_env.apps.evaluation.episode import make_env, play_episode, step_limit
from spider_env.apps.evaluation.players import (
    agent_names,
    build_agent,
    check_deterministic,
    model_mode,
)
from spider_env.apps.evaluation.progress import Progress
from spider_env.apps.evaluation.ray_backend import (
    check_address,
    play_on_ray,
    ray_session,
    require_ray,
)
from spider_env.apps.evaluation.results import DealRecord, EvaluationResult, compare, summarise
from spider_env.apps.evaluation.workers import make_chunks, play_in_workers, usable_jobs
from spider_env.core.checks import check_bool, check_int, check_number
from spider_env.core.variants import VARIANTS, Variant, resolve_variant


def evaluate(
    agents: Any,
    deals: Iterable[int] | str = "0:1000",
    *,
    variant: str | Variant | None = None,
    suits: int | None = None,
    undo: bool = False,
    jobs: int = 1,
    max_steps: int | None = None,
    seed: int = 0,
    alpha: float = 0.05,
    progress: bool = False,
    env_kwargs: dict[str, Any] | None = None,
    on_record: Callable[[DealRecord], None] | None = None,
    deterministic: bool | None = None,
    ray: str | None = None,
    allow_other_game: bool = False,
) -> EvaluationResult:
    """Play each agent on the same deals and summarise (see :mod:`spider_env.apps.evaluation`).

    Args:
        agents: one agent or a list: names (``"random"``, ``"greedy"``, ``"lookahead"``),
            paths of trained models (``.safetensors`` model files, Stable-Baselines3 ``.zip``;
            played in batches on the vector env), or agent objects (objects must pickle for
            ``jobs > 1`` and ``ray``).
        deals: deal numbers (a ``range`` or an iterable of ints in ``0 .. 2**64-1``), or a
            range text like ``"0:1000"`` (see :func:`parse_deals`); at most ``MAX_DEALS``
            (1,000,000) deals, none twice.
        variant / suits / undo: the game (default classic 4-suit Spider).
        jobs: worker processes (``multiprocessing``, spawn), capped to the number of games
            and to ``os.cpu_count()`` (``result.jobs`` is the number used); results do not
            depend on it. With ``jobs > 1``, call ``evaluate`` under
            ``if __name__ == "__main__":`` in a script: the workers import the script again
            (``WorkerError`` otherwise).
        max_steps: the step limit of every game (``TimeLimit``); ``None``: the env's default
            limit (that of ``gymnasium.make("Spider-v0")``, 1000). There is no unlimited
            play (a lost game never ends); ``result.max_steps`` is the limit used.
        seed: base of the per-deal agent seeds.
        alpha: significance level of the paired comparisons.
        progress: show a progress bar (tqdm if installed).
        env_kwargs: more ``SpiderEnv`` arguments (e.g. ``reward_mode``).
        on_record: called with each :class:`DealRecord` as it is played.
        deterministic: for agents given as model paths: ``True`` plays the most likely
            action, ``False`` samples actions, ``None`` does what the model file says. The
            agent's name in the result says which (e.g. ``model.safetensors (sampled)``), as
            does ``AgentSummary.deterministic``.
        ray: play on Ray instead (the ``ray`` extra: ``pip install 'spider-env[ray]'``):
            ``"local"`` starts a private Ray instance on this machine (at most
            ``os.cpu_count()`` CPUs, no dashboard) and shuts it down afterwards; ``"auto"``,
            ``"host:port"`` or ``"ray://host:port"`` joins that cluster (whose nodes need
            spider-env installed; with token authentication, also ``RAY_AUTH_MODE=token``)
            and disconnects afterwards. A process already connected to Ray (``ray.init``
            called) uses that connection and keeps it. Results are the same as with
            ``jobs=1``; ``result.backend`` says ``"ray ADDRESS"``, ``result.jobs`` the Ray CPUs
            used. Not with ``jobs > 1`` (``ValueError``); an address where no cluster answers
            is a ``ConnectionError``.
        allow_other_game: play trained models on this game even where they were trained on
            another (after a one-line warning each); by default such a model is refused.
    """
    v = resolve_variant(variant, suits, undo)
    specs = list(agents) if isinstance(agents, (list, tuple)) else [agents]
    if not specs:
        raise ValueError("give at least one agent")
    games = deal_list(deals)
    if not games:
        raise ValueError("give at least one deal")
    jobs = check_int("jobs", jobs, 1)
    if ray is not None:
        check_address(ray)
        if jobs > 1:
            raise ValueError(
                f"give either jobs > 1 (worker processes) or ray (a Ray cluster), not both: "
                f"jobs={jobs}, ray={ray!r}"
            )
        require_ray()  # ImportError saying how to install it, before any work
    limit = step_limit(max_steps)
    check_number("alpha", alpha, 0, 1, low_open=True, high_open=True)
    check_deterministic(specs, deterministic)
    env_kwargs = dict(env_kwargs or {})
    # Fail early (unknown names, missing model files) before starting any process.
    check_bool("allow_other_game", allow_other_game)
    built = [build_agent(s, v, deterministic, allow_other_game) for s in specs]
    names = agent_names(specs, built)
    batched = [plays_in_batches(a) for a in built]
    work = len(specs) * len(games)
    jobs = usable_jobs(jobs, work)
    backend = "local" if jobs == 1 else "processes"

    t0 = time.perf_counter()
    per_agent: list[list[DealRecord]] = [[] for _ in specs]
    common: dict[str, Any] = {
        "variant": v,
        "max_steps": limit,
        "seed": seed,
        "env_kwargs": env_kwargs,
        "deterministic": deterministic,
        "allow_other_game": allow_other_game,
    }
    with ExitStack() as stack:
        if ray is not None:  # connect first: no progress bar before a connection error
            session = stack.enter_context(ray_session(ray))
            backend, jobs = session.backend, min(session.cpus, work)
        bar = Progress(work, progress, f"{v.name}")

        def done(i: int, recs: list[DealRecord]) -> None:
            per_agent[i].extend(recs)
            if on_record:
                for rec in recs:
                    on_record(rec)
            bar.update(len(recs))

        def done_one(i: int, rec: DealRecord) -> None:
            done(i, [rec])

        try:
            if ray is not None:
                play_on_ray(make_chunks(specs, names, games, jobs, batched, **common), jobs, done)
            elif jobs == 1:
                env = make_env(v, limit, **env_kwargs)
                try:
                    for i, agent in enumerate(built):
                        if plays_in_batches(agent):
                            one = functools.partial(done_one, i)
                            play_batched(agent, v, games, limit, seed, names[i], one, env_kwargs)
                        else:
                            for d in games:
                                done(i, [play_episode(env, agent, d, seed, names[i])[0]])
                finally:
                    env.close()
            else:
                play_in_workers(
                    make_chunks(specs, names, games, jobs, batched, **common), jobs, done
                )
        finally:
            bar.close()
        wall = time.perf_counter() - t0
    order = {d: k for k, d in enumerate(games)}
    for recs in per_agent:
        recs.sort(key=lambda r: order[r.deal])
    result = EvaluationResult(
        variant=v.name,
        variant_options=v.options_text() if v.name in VARIANTS else "",
        deals=games,
        agents=names,
        max_steps=limit,
        seed=seed,
        records=[r for recs in per_agent for r in recs],
        wall_seconds=wall,
        jobs=jobs,
        alpha=alpha,
        backend=backend,
    )
    result.summaries = [
        summarise(names[i], per_agent[i], model_mode(built[i])) for i in range(len(specs))
    ]
    for i in range(len(specs)):
        for j in range(i + 1, len(specs)):
            result.comparisons.append(compare(per_agent[i], per_agent[j], alpha))
    return result


__all__ = ["evaluate"]
