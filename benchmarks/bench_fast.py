"""Speed of the compiled core (numba): single env, vector env, where the time goes, the cache
hints and the masks of large batches, import and compile times, search operations; every rate in
steps per CPU-second of this process.

Sections (``--sections``, default all: about 1-2 minutes; ``--quick``: a smoke run of about
25-45 s wall, of which 10-15 s is numba compiling, in the ``import`` subprocesses and the
``search`` loops, and does not shrink with ``--quick``):

* ``single``: ``gymnasium.make("Spider-v0", suits=s, backend="pure"|"compiled")``, random
  legal play reading ``info["action_mask"]`` each step (reset at episode end), for 1, 2, 4
  suits; CartPole-v1 (``reference.py``) measured in the same run, and the ratios to it.
  Target: compiled, 4 suits >= 100k steps/s and >= 0.75x CartPole-v1.
* ``vector``: ``gymnasium.make_vec("Spider-v0", num_envs=N,
  vectorization_mode="vector_entry_point")`` (``SpiderVectorEnv``) at N = 1, 16, 256, 4096
  with ``copy=True`` and ``copy=False``, actions from ``envs.sample_legal_actions()`` (the
  batched legal ids, the mask's twin); references in the same run: gymnasium's
  ``SyncVectorEnv`` of 8 compiled single envs (``vectorization_mode="sync"``, masks read from
  the stacked ``info``) and the pure-backend ``SpiderVectorEnv`` at N = 16.
  Target: >= 2M env-steps per CPU-second at N = 256.
* ``where``: at N = 256 and 4096 (``--where-n``), CPU time of an engine's batched step
  (``spider_env.engine.make_engine("compiled", ...)``, the vector env's settings, timed alone:
  one compiled call and its bookkeeping, with the masks kept as ``copy=False`` steps it and
  without as ``copy=True`` does) vs the whole ``envs.step`` (the env around it = the
  difference), per-env engine cost in ns, action sampling alone, the new arrays ``copy=True``
  makes and the rest (info dict, checks; as ``copy=False`` steps).
* ``hints``: the cache hints a large batch is stepped with (``spider_env.engine.PREFETCH_FROM``
  games or more), paired: at each N of ``--hints-n`` (256, 1024, 4096) two ``SpiderVectorEnv``
  of 4 suits, one with the hints and one without (the switch set around their making), timed
  in alternation, ``copy=True`` and ``copy=False``; ns per env-step, best of ``2 * --repeats``
  alternations.
* ``masks``: the masks of ``copy=True`` made new from the legal ids, the engine keeping no mask
  buffer (``spider_env.vector.FRESH_MASKS_FROM`` games or more), paired as ``hints`` is: at
  each N of ``--masks-n`` (16, 64, 256, 1024, 4096) two ``SpiderVectorEnv`` of 4 suits with
  ``copy=True``, one making its masks from the legal ids and one copying the buffer its engine
  keeps; ns per env-step.
* ``import``: fresh subprocesses with ``NUMBA_CACHE_DIR`` set to a new empty directory: cold
  (``import spider_env`` + make + reset + one step, numba compiles everything; then the same
  for the vector env), warm (the same with the filled cache) and ``import spider_env`` alone.
  WALL-clock seconds, measured inside the subprocess (interpreter start-up not included; the
  whole subprocess is shown too), with numba's cache-miss/hit counts; a warning if the warm
  run compiled anything (e.g. ``spider_env/fast/*.py`` edited meanwhile). Target: warm import
  < 0.5 s.
* ``search``: ``FastGame`` ``legal_actions`` + ``apply`` from Python vs the pure engine
  (``rules.legal_actions`` + ``rules.apply_legal``), and random playouts in numba code
  (``rules.legal_ids`` + ``rules.apply_action`` on a copied state), expansions per second;
  and, over a fixed sample of positions, ``legal_ids`` alone, copy + ``apply_action``, and
  the state copy alone.

Each figure is the best of ``--repeats`` runs of about ``--seconds`` CPU-seconds each (the
machine may be shared); the vector env's (``vector``, ``where``) time whole rounds of its games,
from a deal to the next (:data:`ROUND` steps), however long that takes at a large N. Not a
test; run it as

    .venv/bin/python benchmarks/bench_fast.py [--quick] [--sections single vector ...]
                                              [--repeats 3] [--seconds 0.4] [--json PATH]
                                              [--vector-n 1 16 256 4096] [--where-n 256 4096]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from reference import best, cartpole_steps_per_second
from spider_env.agents.rl.settings import ArgumentParser

import spider_env
from spider_env import new_game
from spider_env.core.rules import apply_legal, legal_actions
from spider_env.core.variants import get_variant
from spider_env.engine import make_engine
from spider_env.fast import FastGame, load_kernel
from spider_env.observation import DEFAULT_FEATURE_SLOTS
from spider_env.rewards import get_reward_fn

CLOCK = time.process_time
SECTIONS = ("single", "vector", "where", "hints", "masks", "import", "search")
SUITS = (1, 2, 4)
VECTOR_N = (1, 16, 256, 4096)
MAX_STEPS = 1000  # the registered ids' step limit; the playouts below use it too
#: The batched steps of one round of the vector env's games: each plays to the step limit and
#: is dealt again at its next step (next-step autoreset). Random play rarely ends a game
#: before the limit, so the games of a batch keep the phase they started in, and a step costs
#: more in a game's first hundred steps and at the autoreset than in between: timing whole
#: rounds times every N over the same mix of steps (timing a few hundred steps from the deal,
#: as a large N otherwise gets in the same seconds, times it over the dearest ones).
ROUND = MAX_STEPS + 1


def measure(chunk: Callable[[], int], seconds: float) -> float:
    """Units per CPU-second: call ``chunk`` (returns how many units it did) until ``seconds`` of
    CPU time have passed (at least once)."""
    done = 0
    t0 = CLOCK()
    while True:
        done += chunk()
        dt = CLOCK() - t0
        if dt >= seconds:
            return done / dt


# --- 1. single env ---------------------------------------------------------------------------


def single_env_rate(suits: int, backend: str, seconds: float) -> float:
    """Random legal play on ``gym.make`` (all its default wrappers), mask read from ``info``."""
    env = gym.make("Spider-v0", suits=suits, backend=backend)
    _obs, info = env.reset(seed=0)
    u = np.random.default_rng(0).random(4096).tolist()
    state = {"info": info}

    def chunk() -> int:
        info = state["info"]
        step, reset = env.step, env.reset
        for x in u:
            legal = np.flatnonzero(info["action_mask"])
            _obs, _r, term, trunc, info = step(legal[int(x * len(legal))])
            if term or trunc:
                _obs, info = reset()
        state["info"] = info
        return len(u)

    chunk()  # warm-up (and the env checker's first-step checks)
    rate = measure(chunk, seconds)
    env.close()
    return rate


def policy_rate(seconds: float) -> float:
    """The random legal policy alone (``flatnonzero`` of a 4-suit mask + one pick), per second."""
    env = gym.make("Spider-v0", suits=4, backend="compiled")
    _obs, info = env.reset(seed=0)
    mask = info["action_mask"].copy()
    env.close()
    u = np.random.default_rng(0).random(4096).tolist()

    def chunk() -> int:
        for x in u:
            legal = np.flatnonzero(mask)
            legal[int(x * len(legal))]
        return len(u)

    return measure(chunk, seconds)


def section_single(a: argparse.Namespace, out: dict[str, Any]) -> None:
    print("\n## 1. single env: gym.make, random legal play, mask from info (steps/CPU-s)")
    ref = best(a.repeats, lambda: cartpole_steps_per_second(a.cartpole_steps, CLOCK))
    res: dict[str, Any] = {"cartpole_v1": ref}
    print(f"reference CartPole-v1 (gym.make, random actions): {ref:>12,.0f}")
    print(
        f"{'suits':>5} {'pure':>10} {'compiled':>10} {'speed-up':>9} {'pure/CP':>8} {'comp/CP':>8}"
    )
    for suits in SUITS:
        pure = best(a.repeats, lambda s=suits: single_env_rate(s, "pure", a.seconds))
        comp = best(a.repeats, lambda s=suits: single_env_rate(s, "compiled", a.seconds))
        res[f"{suits}suit"] = {
            "pure": pure,
            "compiled": comp,
            "speedup": comp / pure,
            "pure_vs_cartpole": pure / ref,
            "compiled_vs_cartpole": comp / ref,
        }
        print(
            f"{suits:>5} {pure:>10,.0f} {comp:>10,.0f} {comp / pure:>8.1f}x "
            f"{pure / ref:>7.2f}x {comp / ref:>7.2f}x"
        )
    pol = best(a.repeats, lambda: policy_rate(a.seconds))
    res["policy_alone"] = pol
    print(f"the random legal policy alone (flatnonzero + pick, 4 suits): {pol:,.0f}/s")
    c4 = res["4suit"]["compiled"]
    print(
        f"target: compiled 4 suits >= 100,000/s and >= 0.75x CartPole: {c4:,.0f}/s, "
        f"{c4 / ref:.2f}x -> {'met' if c4 >= 1e5 and c4 / ref >= 0.75 else 'NOT met'}"
    )
    out["single"] = res


# --- 2. vector env ---------------------------------------------------------------------------


def vector_rate(n: int, seconds: float, **kwargs: Any) -> float:
    """Env-steps/CPU-s of ``SpiderVectorEnv`` (``make_vec``, vector_entry_point), 4 suits,
    over whole rounds of its games (:data:`ROUND` steps each, at least ``seconds``)."""
    envs = gym.make_vec(
        "Spider-v0", num_envs=n, vectorization_mode="vector_entry_point", suits=4, **kwargs
    )
    envs.reset(seed=0)
    sample, step = envs.sample_legal_actions, envs.step  # type: ignore[attr-defined]

    def chunk() -> int:
        for _ in range(ROUND):
            step(sample())
        return ROUND * n

    for _ in range(4):  # compiled on first use
        step(sample())
    rate = measure(chunk, seconds)
    envs.close()
    return rate


def sync_rate(n: int, seconds: float) -> float:
    """Env-steps/CPU-s of gymnasium's ``SyncVectorEnv`` of ``n`` compiled single envs, masks
    from the stacked ``info``, a random legal action per row (0 where none: autoreset next)."""
    envs = gym.make_vec(
        "Spider-v0", num_envs=n, vectorization_mode="sync", suits=4, backend="compiled"
    )
    _obs, info = envs.reset(seed=0)
    u = np.random.default_rng(0).random((512, n))
    actions = np.zeros(n, dtype=np.int64)
    state = {"info": info}

    def chunk() -> int:
        info = state["info"]
        for row in u:
            for i, mask in enumerate(info["action_mask"]):
                legal = np.flatnonzero(mask)
                actions[i] = legal[int(row[i] * len(legal))] if len(legal) else 0
            _obs, _r, _te, _tr, info = envs.step(actions)
        state["info"] = info
        return len(u) * n

    chunk()
    rate = measure(chunk, seconds)
    envs.close()
    return rate


def section_vector(a: argparse.Namespace, out: dict[str, Any]) -> None:
    print("\n## 2. vector env scaling, 4 suits, env-steps per CPU-second")
    print("SpiderVectorEnv (make_vec vector_entry_point), actions = envs.sample_legal_actions()")
    ref = out.get("single", {}).get("cartpole_v1") or best(
        a.repeats, lambda: cartpole_steps_per_second(a.cartpole_steps, CLOCK)
    )
    res: dict[str, Any] = {"spider_vector": {}, "cartpole_v1": ref}
    print(f"reference CartPole-v1 (gym.make, random actions), same run: {ref:,.0f}")
    print(f"{'N':>6} {'copy=True':>12} {'x CartPole':>10} {'copy=False':>12} {'x CartPole':>10}")
    for n in a.vector_n:
        t = best(a.repeats, lambda n=n: vector_rate(n, a.seconds, copy=True))
        f = best(a.repeats, lambda n=n: vector_rate(n, a.seconds, copy=False))
        res["spider_vector"][str(n)] = {
            "copy": t,
            "no_copy": f,
            "copy_vs_cartpole": t / ref,
            "no_copy_vs_cartpole": f / ref,
        }
        print(f"{n:>6} {t:>12,.0f} {t / ref:>9.1f}x {f:>12,.0f} {f / ref:>9.1f}x")
    sync8 = best(a.repeats, lambda: sync_rate(8, a.seconds))
    pure16 = best(a.repeats, lambda: vector_rate(16, a.seconds, backend="pure"))
    res["sync_x8_compiled"] = sync8
    res["spider_vector_pure_16"] = pure16
    print("references, same run:")
    print(f"  SyncVectorEnv x 8 of compiled single envs (mode 'sync'): {sync8:>12,.0f}")
    print(f"  SpiderVectorEnv backend='pure', N = 16:                  {pure16:>12,.0f}")
    if "256" in res["spider_vector"]:
        r = res["spider_vector"]["256"]
        print(
            f"target: >= 15x CartPole at N = 256: copy=True "
            f"{r['copy_vs_cartpole']:.1f}x, copy=False {r['no_copy_vs_cartpole']:.1f}x -> "
            f"{'met' if r['copy_vs_cartpole'] >= 15 else 'NOT met'} (copy=True)"
        )
    if "256" in res["spider_vector"] and "4096" in res["spider_vector"]:
        lo, hi = res["spider_vector"]["256"], res["spider_vector"]["4096"]
        print(
            f"N = 4096 against N = 256: copy=True {hi['copy'] / lo['copy']:.2f}, "
            f"copy=False {hi['no_copy'] / lo['no_copy']:.2f} (target: >= 0.9 with copy=True)"
        )
    out["vector"] = res


# --- 3. where the time goes ------------------------------------------------------------------


def section_where(a: argparse.Namespace, out: dict[str, Any]) -> None:
    out["where"] = {str(n): where_at(n, a) for n in a.where_n}


def where_at(n: int, a: argparse.Namespace) -> dict[str, Any]:
    """The step of ``n`` games split into its parts, each timed alone through public API: the
    engine's batched step (:meth:`spider_env.engine.Engine.step`: one compiled call and its
    bookkeeping; with ``copy=True`` the env steps it with ``keep_masks=False``, with
    ``copy=False`` keeping them), drawing the actions, and the rest (the info dict, the
    checks); the new arrays of ``copy=True`` are what its step takes beyond those of
    ``copy=False``'s rest."""
    print(f"\n## 3. where the time goes at N = {n} (4 suits, copy=True), CPU time")
    envs: Any = gym.make_vec(
        "Spider-v0", num_envs=n, vectorization_mode="vector_entry_point", suits=4
    )
    envs.reset(seed=0)
    calls = ROUND  # whole rounds of the games (see ROUND)

    def whole() -> int:
        for _ in range(calls):
            envs.step(envs.sample_legal_actions())
        return calls * n

    def sample_only() -> int:
        for _ in range(calls):
            envs.sample_legal_actions()
        return calls * n

    # The engine alone, made as the vector env makes its own (the same settings), its games
    # started from deals; a game that ended is given a new deal at its next step, as the env's
    # next-step autoreset does.
    variant = get_variant("spider-4suit")
    engine = make_engine(
        "compiled", variant, n, obs_mode="dict", feature_slots=DEFAULT_FEATURE_SLOTS,
        reward_fn=get_reward_fn("score"), illegal_reward=-1.0, terminate_illegal=False,
        episode_steps=MAX_STEPS,
    )  # fmt: skip
    rows_all = np.arange(n)
    engine.start_deals(rows_all, rows_all)
    rng = np.random.default_rng(1)
    resets = np.full(n, -1, dtype=np.int64)
    engine_time = [0.0]
    keep = [True]

    def engine_step() -> int:
        for _ in range(calls):
            acts = engine.sample_legal(int(rng.integers(0, 2**63)))
            np.maximum(acts, 0, out=acts)
            resets[:] = -1
            ended = engine.ended
            if ended.any():
                resets[ended] = rng.integers(0, 2**32, size=int(ended.sum()))
            t0 = CLOCK()
            engine.step(acts, resets, MAX_STEPS, keep[0])
            engine_time[0] += CLOCK() - t0
        return calls * n

    def engine_rate(keep_masks: bool) -> float:
        keep[0] = keep_masks
        engine_time[0] = 0.0
        done = 0
        t0 = CLOCK()
        while CLOCK() - t0 < a.seconds:
            done += engine_step()
        return done / engine_time[0]

    whole()
    engine_step()
    step_rate = best(a.repeats, lambda: measure(whole, a.seconds))
    eng_rate = best(a.repeats, lambda: engine_rate(True))
    fresh_rate = best(a.repeats, lambda: engine_rate(False))
    samp_rate = best(a.repeats, lambda: measure(sample_only, a.seconds / 2))
    nocopy_rate = best(a.repeats, lambda: vector_rate(n, a.seconds, copy=False))
    step_us = 1e6 * n / step_rate
    eng_us = 1e6 * n / eng_rate
    fresh_us = 1e6 * n / fresh_rate
    samp_us = 1e6 * n / samp_rate
    nocopy_us = 1e6 * n / nocopy_rate
    rest_us = nocopy_us - eng_us - samp_us
    rows = {
        "envs.step(envs.sample_legal_actions()), copy=True": step_us,
        "  Engine.step, masks not kept (as copy=True steps it)": fresh_us,
        "  sample_legal_actions()": samp_us,
        "  the new arrays of copy=True (what is left less the rest)": (
            step_us - fresh_us - samp_us - rest_us
        ),
        "  rest: the info dict, checks, bookkeeping (as copy=False)": rest_us,
        "envs.step(envs.sample_legal_actions()), copy=False": nocopy_us,
        "  Engine.step, masks kept (as copy=False steps it)": eng_us,
    }
    res = {
        "n": n,
        "whole_step_env_steps_per_s": step_rate,
        "whole_step_no_copy_env_steps_per_s": nocopy_rate,
        "engine_env_steps_per_s": eng_rate,
        "engine_masks_not_kept_env_steps_per_s": fresh_rate,
        "us_per_call": rows,
        "engine_ns_per_env_step": 1e9 / eng_rate,
        "engine_masks_not_kept_ns_per_env_step": 1e9 / fresh_rate,
        "python_overhead_us_per_call": step_us - fresh_us,
        "python_overhead_share": 1 - fresh_us / step_us,
    }
    print(f"{'':58} {'us/call':>9} {'ns/env':>7} {'share':>6}")
    for name, us in rows.items():
        print(f"{name:58} {us:>9.1f} {1e3 * us / n:>7.0f} {us / step_us:>6.0%}")
    print(
        f"engine alone: {eng_rate:,.0f} env-steps/CPU-s ({1e9 / eng_rate:.0f} ns per env; "
        f"{1e9 / fresh_rate:.0f} without keeping the masks); whole step: {step_rate:,.0f}; the "
        f"env around it {step_us - fresh_us:.1f} us per call ({1 - fresh_us / step_us:.0%} of "
        "the step)"
    )
    envs.close()
    return res


# --- 4. the cache hints, paired ---------------------------------------------------------------


def switched_envs(n: int, copy: bool, module: Any, name: str, on: bool) -> Any:
    """A 4-suit ``SpiderVectorEnv`` of ``n`` games made with the size threshold ``name`` of
    ``module`` (``PREFETCH_FROM``, ``FRESH_MASKS_FROM``) set around its making so that the
    switch it guards is ``on`` or off, warmed up."""
    saved = getattr(module, name)
    setattr(module, name, 1 if on else 2**62)
    try:
        envs: Any = gym.make_vec(
            "Spider-v0", num_envs=n, vectorization_mode="vector_entry_point", suits=4, copy=copy
        )
    finally:
        setattr(module, name, saved)
    envs.reset(seed=0)
    for _ in range(30):
        envs.step(envs.sample_legal_actions())
    return envs


def paired_ns(a: argparse.Namespace, n: int, copy: bool, module: Any, name: str) -> list[float]:
    """ns per env-step of two envs of ``n`` games, the switch ``name`` off and on
    (:func:`switched_envs`), stepped in alternation: the best of ``2 * a.repeats`` each."""
    envs = [switched_envs(n, copy, module, name, on) for on in (False, True)]
    calls = max(2, int(65536 * a.seconds / 0.4) // n)
    best = [float("inf"), float("inf")]
    for _ in range(2 * a.repeats):
        for k, e in enumerate(envs):
            t0 = CLOCK()
            for _ in range(calls):
                e.step(e.sample_legal_actions())
            best[k] = min(best[k], (CLOCK() - t0) / (calls * n) * 1e9)
    for e in envs:
        e.close()
    return best


def section_hints(a: argparse.Namespace, out: dict[str, Any]) -> None:
    import spider_env.engine as engine_module

    print(
        f"\n## 4. cache hints ({engine_module.PREFETCH_AHEAD} games ahead; on by default from "
        f"N = {engine_module.PREFETCH_FROM}), paired, 4 suits: ns per env-step, best of "
        f"{2 * a.repeats}"
    )
    print(f"{'N':>6} {'copy':>5} {'without':>9} {'with':>9} {'change':>7}")
    res: dict[str, Any] = {}
    for n in a.hints_n:
        for copy in (False, True):
            without, with_ = paired_ns(a, n, copy, engine_module, "PREFETCH_FROM")
            res[f"{n}_{'copy' if copy else 'no_copy'}"] = {
                "without_ns": without, "with_ns": with_
            }  # fmt: skip
            print(f"{n:>6} {copy!s:>5} {without:>9.0f} {with_:>9.0f} {with_ / without - 1:>+7.0%}")
    out["hints"] = res


# --- 5. the masks made new from the legal ids, paired ------------------------------------------


def section_masks(a: argparse.Namespace, out: dict[str, Any]) -> None:
    import spider_env.vector as vector_module

    print(
        f"\n## 5. copy=True's masks made from the legal ids (by default from N = "
        f"{vector_module.FRESH_MASKS_FROM}) or copied from the engine's, paired, 4 suits: ns "
        f"per env-step, best of {2 * a.repeats}"
    )
    print(f"{'N':>6} {'copied':>9} {'made':>9} {'change':>7}")
    res: dict[str, Any] = {}
    for n in a.masks_n:
        copied, made = paired_ns(a, n, True, vector_module, "FRESH_MASKS_FROM")
        res[str(n)] = {"copied_ns": copied, "made_ns": made}
        print(f"{n:>6} {copied:>9.0f} {made:>9.0f} {made / copied - 1:>+7.0%}")
    out["masks"] = res


# --- 6. import and compile -------------------------------------------------------------------

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import spider_env
t1 = time.perf_counter()
out = {"import_spider_env": t1 - t0}
if sys.argv[1] == "full":
    import gymnasium as gym
    import numpy as np
    t1 = time.perf_counter()
    import numba
    from spider_env.fast import deals, observe, rewards, rules, step
    tn = time.perf_counter()
    out["import_numba_and_kernel"] = tn - t1
    t1 = tn
    env = gym.make("Spider-v0", suits=4, backend="compiled")
    _obs, info = env.reset(seed=0)
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    t2 = time.perf_counter()
    envs = gym.make_vec("Spider-v0", num_envs=4, vectorization_mode="vector_entry_point",
                        suits=4)
    envs.reset(seed=0)
    envs.step(envs.sample_legal_actions())
    t3 = time.perf_counter()
    out.update(single_make_reset_step=t2 - t1, vector_make_reset_step=t3 - t2,
               total=t3 - t0)
    from numba.core.registry import CPUDispatcher
    hits = misses = 0
    for module in (rules, deals, observe, rewards, step):
        for name, f in vars(module).items():
            if isinstance(f, CPUDispatcher) and f.py_func.__module__ == module.__name__:
                hits += sum(f.stats.cache_hits.values())
                misses += sum(f.stats.cache_misses.values())
    out.update(cache_hits=hits, cache_misses=misses, cache_path=rules.legal_ids.stats.cache_path)
print(json.dumps(out))
"""


def _child(kind: str, cache: str) -> dict[str, float]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, kind], env=env, capture_output=True, text=True
    )
    if proc.returncode:
        raise RuntimeError(f"the {kind} subprocess failed:\n{proc.stderr}")
    res: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    res["process_wall"] = time.perf_counter() - t0
    return res


def section_import(a: argparse.Namespace, out: dict[str, Any]) -> None:
    print("\n## 6. import and compile, fresh subprocesses, WALL-clock seconds (4 suits)")
    from spider_env.fast.jit import sources_digest

    load_kernel()
    source = Path(spider_env.fast.__file__).parent  # the compiled sources (fast/, search/)
    stamp = sources_digest()
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        print(f"NUMBA_CACHE_DIR={cache} (new, empty)")
        cold = _child("full", cache)
        files = [p for p in Path(cache).rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        warm = min((_child("full", cache) for _ in range(a.repeats)), key=lambda r: r["total"])
        imp = min(
            (_child("import", cache) for _ in range(a.repeats)),
            key=lambda r: r["import_spider_env"],
        )
    default_cache = source / "__pycache__"
    sources_digest.cache_clear()
    changed = sources_digest() != stamp
    res = {
        "cold": cold,
        "warm": warm,
        "import_only": imp,
        "cache_files": len(files),
        "cache_bytes": size,
        "default_cache_dir": str(default_cache),
        "NUMBA_CACHE_DIR_now": os.environ.get("NUMBA_CACHE_DIR"),
        "kernel_source_changed_during_section": changed,
    }
    print(
        f"{'':34} {'import':>7} {'numba':>7} {'single':>7} {'vector':>7} {'total':>7} "
        f"{'process':>8} "
        f"{'compiled':>8} {'loaded':>6}"
    )
    for name, r in (("(a) cold (empty cache: compiles)", cold), ("(b) warm (filled cache)", warm)):
        print(
            f"{name:34} {r['import_spider_env']:>7.2f} {r['import_numba_and_kernel']:>7.2f} "
            f"{r['single_make_reset_step']:>7.2f} "
            f"{r['vector_make_reset_step']:>7.2f} {r['total']:>7.2f} {r['process_wall']:>8.2f} "
            f"{r['cache_misses']:>8} {r['cache_hits']:>6}"
        )
    print(
        f"{'(c) import spider_env alone':34} {imp['import_spider_env']:>7.2f} {'':>7} {'':>7} "
        f"{'':>7} {'':>7} {imp['process_wall']:>8.2f}"
    )
    print(
        "columns: import = `import spider_env`; numba = `import numba` + the kernel module "
        "(no compiling: numba compiles lazily); single = gym.make(backend='compiled') + reset + "
        "step; vector = make_vec(N=4) + reset + step; process = the whole subprocess incl. "
        "interpreter start-up; compiled / loaded = kernel functions numba compiled / loaded "
        "from the cache (its cache-miss / cache-hit counts)"
    )
    print(
        f"the cold run wrote {len(files)} cache files ({size / 1e6:.1f} MB); without "
        f"NUMBA_CACHE_DIR the cache lives in {default_cache} (numba's fallback is a user-wide "
        "directory if that one is not writable)"
    )
    if changed or warm["cache_misses"]:
        print(
            f"WARNING: the warm run compiled {warm['cache_misses']} functions"
            + (f" ({source} changed during this section)" if changed else "")
            + ": its figures are not warm ones; re-run this section"
        )
    ok = imp["import_spider_env"] < 0.5
    print(f"target: warm import < 0.5 s -> {'met' if ok else 'NOT met'}")
    out["import"] = res


# --- 7. search operations --------------------------------------------------------------------


def _numba_loops() -> tuple[Callable[..., int], Callable[..., int], Callable[..., int]]:
    """njit loops over the kernel functions (compiled on first call): random playouts
    (``legal_ids`` + copy + ``apply_action``), and ``legal_ids`` alone and copy +
    ``apply_action`` alone over a fixed sample of positions."""
    from numba import njit

    k = load_kernel()
    legal_ids, apply_action = k.legal_ids, k.apply_action
    n_act = int(FastGame("spider-4suit").n_actions)

    @njit(cache=False)
    def playouts(pr: Any, root: Any, expansions: int, seed: int, max_len: int) -> int:
        np.random.seed(seed)
        ids = np.empty(n_act + 1, dtype=np.int32)
        keys = np.zeros(64, dtype=np.int64)
        st = root.copy()
        child = np.empty_like(root)
        depth = 0
        done = 0
        while done < expansions:
            n = legal_ids(pr, st, ids, keys)
            if n == 0 or depth >= max_len:
                st[:] = root
                depth = 0
                continue
            child[:] = st  # expand: copy the state, play a random legal action on the copy
            apply_action(pr, child, ids[np.random.randint(0, n)])
            st, child = child, st
            depth += 1
            done += 1
        return done

    @njit(cache=False)
    def legal_only(pr: Any, states: Any, reps: int) -> int:
        ids = np.empty(n_act + 1, dtype=np.int32)
        keys = np.zeros(64, dtype=np.int64)
        total = 0
        for _ in range(reps):
            for i in range(states.shape[0]):
                total += legal_ids(pr, states[i], ids, keys)
        return reps * states.shape[0] + 0 * total

    @njit(cache=False)
    def apply_only(pr: Any, states: Any, acts: Any, reps: int) -> int:
        child = np.empty_like(states[0])
        total = 0
        for _ in range(reps):
            for i in range(states.shape[0]):
                child[:] = states[i]
                if acts[i] >= 0:  # -1: the copy alone
                    total += apply_action(pr, child, acts[i])
        return reps * states.shape[0] + 0 * total

    return playouts, legal_only, apply_only


def section_search(a: argparse.Namespace, out: dict[str, Any]) -> None:
    print("\n## 7. search operations, 4 suits: random playouts from deal 0 (per CPU-second)")
    g = FastGame("spider-4suit")
    u = np.random.default_rng(0).random(4096).tolist()

    def fast_chunk(inplace: bool) -> Callable[[], int]:
        def chunk() -> int:
            st, depth = g.initial(0), 0
            for x in u:
                ids = g.legal_actions(st)
                if len(ids) == 0 or depth >= MAX_STEPS:
                    st, depth = g.initial(0), 0
                    ids = g.legal_actions(st)
                act = ids[int(x * len(ids))]
                if inplace:
                    st = st.copy()
                    g.apply_inplace(st, act)
                else:
                    st = g.apply(st, act)
                depth += 1
            return len(u)

        return chunk

    root = new_game("spider-4suit", 0)

    def pure_chunk() -> int:
        st, depth = root, 0
        for x in u:
            legal = legal_actions(st)
            if not legal or depth >= MAX_STEPS:
                st, depth = root, 0
                legal = legal_actions(st)
            st = apply_legal(st, legal[int(x * len(legal))])
            depth += 1
        return len(u)

    # A fixed sample of positions from random play (deals 0, 1, ...), with a legal action each.
    rng = np.random.default_rng(2)
    sample, acts = [], []
    deal, st, depth = 0, g.initial(0), 0
    while len(sample) < 256:
        ids = g.legal_actions(st)
        if len(ids) == 0 or depth >= MAX_STEPS // 4:
            deal, depth = deal + 1, 0
            st = g.initial(deal)
            continue
        act = int(ids[rng.integers(len(ids))])
        sample.append(st.copy())
        acts.append(act)
        g.apply_inplace(st, act)
        depth += 1
    states, actions = np.stack(sample), np.array(acts, dtype=np.int64)
    no_acts = np.full_like(actions, -1)

    playouts, legal_only, apply_only = _numba_loops()
    pr, st0 = g.params, g.initial(0)
    t0 = time.perf_counter()
    playouts(pr, st0, 10, 0, MAX_STEPS)
    legal_only(pr, states[:2], 1)
    apply_only(pr, states[:2], actions[:2], 1)
    jit_s = time.perf_counter() - t0
    batch = 200_000

    res = {
        "pure_legal_actions+apply_legal": best(a.repeats, lambda: measure(pure_chunk, a.seconds)),
        "fastgame_legal_actions+apply": best(
            a.repeats, lambda: measure(fast_chunk(False), a.seconds)
        ),
        "fastgame_legal_actions+copy+apply_inplace": best(
            a.repeats, lambda: measure(fast_chunk(True), a.seconds)
        ),
        "numba_legal_ids+apply_action": best(
            a.repeats, lambda: measure(lambda: playouts(pr, st0, batch, 1, MAX_STEPS), a.seconds)
        ),
        "numba_legal_ids_alone": best(
            a.repeats, lambda: measure(lambda: legal_only(pr, states, 400), a.seconds)
        ),
        "numba_copy+apply_action_alone": best(
            a.repeats, lambda: measure(lambda: apply_only(pr, states, actions, 400), a.seconds)
        ),
        "numba_copy_alone": best(
            a.repeats, lambda: measure(lambda: apply_only(pr, states, no_acts, 400), a.seconds)
        ),
        "numba_loops_compile_wall_s": jit_s,
    }
    pure = res["pure_legal_actions+apply_legal"]
    for name, r in res.items():
        if name.endswith("_s"):
            continue
        print(f"{name:44} {r:>12,.0f}/s {1e9 / r:>7.0f} ns {r / pure:>7.1f}x pure")
    print(
        f"(numba rows: njit loops in this file; the last three over {len(states)} positions from "
        f"random play; compiling those loops took {jit_s:.1f} s wall)"
    )
    out["search"] = res


# --- main ------------------------------------------------------------------------------------


def main() -> None:
    p = ArgumentParser(description=" ".join((__doc__ or "").split("\n\n")[0].split()))
    p.add_argument(
        "--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS), help="default: all"
    )
    p.add_argument("--quick", action="store_true", help="smoke run: 1 repeat of ~0.1 CPU-s")
    p.add_argument("--repeats", type=int, default=None, help="runs per figure, best shown (3)")
    p.add_argument("--seconds", type=float, default=None, help="CPU-s per run (0.4)")
    p.add_argument("--vector-n", type=int, nargs="+", default=list(VECTOR_N), help="N of 'vector'")
    p.add_argument("--where-n", type=int, nargs="+", default=[256, 4096], help="N of 'where'")
    p.add_argument("--hints-n", type=int, nargs="+", default=[256, 1024, 4096], help="N of 'hints'")
    p.add_argument(
        "--masks-n", type=int, nargs="+", default=[16, 64, 256, 1024, 4096], help="N of 'masks'"
    )
    p.add_argument("--json", type=Path, default=None, help="write every figure to this file")
    a = p.parse_args()
    for flag in ("vector_n", "where_n", "hints_n", "masks_n"):
        bad = [n for n in getattr(a, flag) if n < 1]
        if bad:
            p.error(f"--{flag.replace('_', '-')}: every N must be at least 1, got {bad[0]}")
    if a.repeats is not None and a.repeats < 1:
        p.error(f"--repeats must be at least 1, got {a.repeats}")
    if a.seconds is not None and not a.seconds > 0:
        p.error(f"--seconds must be more than 0, got {a.seconds}")
    a.repeats = a.repeats or (1 if a.quick else 3)
    a.seconds = a.seconds or (0.1 if a.quick else 0.4)
    a.cartpole_steps = 10_000 if a.quick else 50_000
    import numba

    print("$ " + shlex.join([sys.executable, *sys.argv]))
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, "
        f"gymnasium {gym.__version__}, {platform.machine()}, {os.cpu_count()} cpus; "
        f"rates per CPU-second (time.process_time), best of {a.repeats} x ~{a.seconds} CPU-s"
    )
    out: dict[str, Any] = {
        "command": shlex.join([sys.executable, *sys.argv]),
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "gymnasium": gym.__version__,
        "repeats": a.repeats,
        "seconds_per_run": a.seconds,
    }
    funcs = {
        "single": section_single,
        "vector": section_vector,
        "where": section_where,
        "hints": section_hints,
        "masks": section_masks,
        "import": section_import,
        "search": section_search,
    }
    t0, c0 = time.perf_counter(), CLOCK()
    for name in SECTIONS:
        if name in a.sections:
            funcs[name](a, out)
            sys.stdout.flush()
    wall, cpu = time.perf_counter() - t0, CLOCK() - c0
    out["run_wall_s"], out["run_cpu_s"] = wall, cpu
    print(f"\n(run: {wall:.0f} s wall, {cpu:.0f} s CPU of this process)")
    if a.json:
        a.json.write_text(json.dumps(out, indent=2) + "\n")
        print(f"figures written to {a.json}")


if __name__ == "__main__":
    main()
