"""Where RLlib's PPO over rows spends its CPU, part by part (the training record's "RLlib: speed
and learning"): the CPU time per update of the learner's update and its parts (the learner
connectors, one by one and in all; the batch's shuffles; the forward passes, losses, backward
passes and optimizer steps of its minibatches) and of the env runner's sample and its parts
(the env's steps, the compiled choices or, without them, the module's forward passes and the
draws, and the rest), with the driver sampling (``num_env_runners=0``), as
``benchmarks/bench_rllib.py --runners 0 --obs-modes rows`` trains. With ``--runners N`` the env
runners are N processes of their own: the learner's parts are timed as before, and the runners'
CPU per update in all (``remote runners (all)``) beside the driver's (``driver (all)``), split
into their ``sample`` calls and the rest (Ray's calls, serialising each sample into its object
store, the weights they are sent).

Each part is timed by wrapping the public method that does it, on its class
(``time.process_time``: every thread of the process, so a learner on two torch threads counts
both); a part inside another counts in both. ``--memory as-is`` leaves glibc's malloc as it is
instead of keeping freed blocks of every size for reuse, as the trainer does
(``keep_freed_memory(every_size=True)``); ``--gc as-is`` leaves the garbage collector as it is
instead of freezing the objects alive after the first update, as the trainer does
(``setup_frozen``). The driver's garbage collections, of every generation, are a part of their
own. ``--learner rllib`` trains with RLlib's own torch PPO learner instead of the one
``ppo_config`` sets over rows (``RowsPPOLearner``: the batch made from arrays by one connector
piece, ``EpisodesToBatch``, and shuffled by ``index_select``), to pair the two. Needs the
``rllib`` extra. Not a test; run it as

    .venv/rllib/bin/python research/rl/rllib_parts.py [--updates 8] [--memory as-is] [--runners 1]
                                                      [--learner rllib] [--gc as-is]
    .venv/rllib/bin/python research/rl/rllib_parts.py --draws

``--draws`` times the action distributions alone instead: a draw and its log-probability for
256 decisions of up to 48 rows, through RLlib's ``TorchCategorical`` and the modules'
``MaskedCategorical``.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

from spider_env.agents.rl.settings import ArgumentParser

MEMORY = ("kept", "as-is")
#: ``--learner``: the learner :func:`ppo_config` sets over rows (its batch made from arrays, the
#: shuffle by ``index_select``), or RLlib's own torch PPO learner (as before they were).
LEARNERS = ("rows", "rllib")
#: ``--gc``: the objects alive after the first update frozen (``setup_frozen``, as the trainer
#: runs), or not.
COLLECTOR = ("frozen", "as-is")


def _timed(owner: Any, name: str, key: str, totals: dict[str, float], stack: ExitStack) -> None:
    """Replace ``owner.name`` (a class's method) by a wrapper adding its CPU time to
    ``totals[key]`` until ``stack`` closes."""
    inner: Callable[..., Any] = getattr(owner, name)
    if name in vars(owner):
        stack.callback(setattr, owner, name, vars(owner)[name])
    else:  # inherited: the parent's again after
        stack.callback(delattr, owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            totals[key] += time.process_time() - t0

    setattr(owner, name, wrapper)


def measure(
    updates: int,
    threads: int,
    num_envs: int,
    n_steps: int,
    memory: str,
    runners: int = 0,
    learner: str = "rows",
    collector: str = "frozen",
) -> dict[str, Any]:
    """CPU milliseconds per update by part (``parts``) and in all (``total``, the remote env
    runners' included). A ``memory``, ``learner`` or ``collector`` not among the flag's choices
    is a ``ValueError`` naming it."""
    for name, value, choices in (
        ("memory", memory, MEMORY),
        ("learner", learner, LEARNERS),
        ("collector", collector, COLLECTOR),
    ):
        if value not in choices:
            raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    import gc

    import ray
    import torch
    from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
    from ray.rllib.connectors.common import (
        AddObservationsFromEpisodesToBatch,
        AddStatesFromEpisodesToBatch,
        AddTimeDimToBatchAndZeroPad,
        BatchIndividualItems,
        NumpyToTensor,
    )
    from ray.rllib.connectors.learner import (
        AddColumnsFromEpisodesToTrainBatch,
        AddOneTsToEpisodesAndTruncate,
        GeneralAdvantageEstimation,
    )
    from ray.rllib.connectors.learner.learner_connector_pipeline import LearnerConnectorPipeline
    from ray.rllib.core.learner.learner import Learner
    from ray.rllib.core.learner.torch.torch_learner import TorchLearner
    from ray.rllib.policy.sample_batch import SampleBatch
    from spider_env.agents.rl.memory import keep_freed_memory, setup_frozen
    from spider_env.agents.rl.ppo import CompiledChoice
    from spider_env.agents.rl.rllib import RLlibSettings, RLlibVectorEnv, ppo_config
    from spider_env.agents.rl.rllib_learner import EpisodesToBatch, GatherShuffledBatch
    from spider_env.agents.rl.rllib_modules import ActionRowsRLModule
    from spider_env.agents.rl.rllib_runner import ArrayEnvRunner, EvenRows

    torch.set_num_threads(threads)
    s = RLlibSettings(suits=1, hidden=64, num_env_runners=runners, obs_mode="rows",
                      num_envs_per_env_runner=num_envs // max(1, runners),
                      n_steps=n_steps)  # fmt: skip
    totals: dict[str, float] = defaultdict(float)
    ray.init(
        address="local", num_cpus=max(2, runners), include_dashboard=False, logging_level="ERROR"
    )

    def remote_cpu() -> tuple[float, float]:
        """The remote runners' CPU-seconds so far: in all, and inside their ``sample`` calls."""
        if not runners:
            return 0.0, 0.0
        group = algo.env_runner_group
        each = group.foreach_env_runner(
            lambda r: (time.process_time(), getattr(r, "probe_sample_cpu", 0.0)),
            local_env_runner=False,
        )
        return float(sum(c for c, _ in each)), float(sum(c for _, c in each))

    def count_samples(runner: Any) -> None:
        """In a remote runner's process: its ``sample`` calls' CPU time added up on it."""
        cls = type(runner)
        if "sample" in vars(cls) and getattr(cls.sample, "probe_wrapped", False):
            return
        inner = cls.sample

        def sample(self: Any, *args: Any, **kwargs: Any) -> Any:
            t0 = time.process_time()
            try:
                return inner(self, *args, **kwargs)
            finally:
                self.probe_sample_cpu = getattr(self, "probe_sample_cpu", 0.0) + (
                    time.process_time() - t0
                )

        sample.probe_wrapped = True  # type: ignore[attr-defined]
        cls.sample = sample

    with ExitStack() as stack:
        stack.callback(ray.shutdown)
        if memory == "kept":
            stack.enter_context(keep_freed_memory(every_size=True))
        config = ppo_config(s)
        if learner == "rllib":
            config = config.learners(learner_class=PPOTorchLearner)
        algo = config.build_algo()
        stack.callback(algo.stop)
        algo.train()  # warm-up: numba, torch
        if collector == "frozen":  # as the trainer, after its first update
            stack.enter_context(setup_frozen())
        draws = algo.get_module().get_exploration_action_dist_cls()  # the modules' own
        for piece in (
            EpisodesToBatch,
            AddOneTsToEpisodesAndTruncate,
            EvenRows,
            AddObservationsFromEpisodesToBatch,
            AddColumnsFromEpisodesToTrainBatch,
            AddTimeDimToBatchAndZeroPad,
            AddStatesFromEpisodesToBatch,
            BatchIndividualItems,
            NumpyToTensor,
            GeneralAdvantageEstimation,
        ):  # fmt: skip  (PPO's learner connector)
            _timed(piece, "__call__", f"learner connector {piece.__name__}", totals, stack)
        for owner, name, key in (
            (Learner, "update", "learner update (all)"),
            (LearnerConnectorPipeline, "__call__", "learner: connectors (all)"),
            (SampleBatch, "shuffle", "learner: the batch's shuffles"),
            # (its own, which calls RLlib's only for a batch with time or infos: not over rows)
            (GatherShuffledBatch, "shuffle", "learner: the batch's shuffles"),
            (ActionRowsRLModule, "forward_train", "learner: forward passes"),
            (Learner, "compute_losses", "learner: losses"),
            (TorchLearner, "compute_gradients", "learner: backward passes"),
            (TorchLearner, "apply_gradients", "learner: optimizer steps"),
            (ArrayEnvRunner, "sample", "runner sample (all)"),
            (RLlibVectorEnv, "step", "runner: env steps"),
            (ActionRowsRLModule, "forward_exploration", "runner: forward passes"),
            (draws, "sample", "runner: draws"),
            (CompiledChoice, "__call__", "runner: compiled choices"),
        ):
            _timed(owner, name, key, totals, stack)
        if runners:  # (the runners' processes end with the algorithm: nothing to undo)
            algo.env_runner_group.foreach_env_runner(count_samples, local_env_runner=False)
        started: list[float] = []

        def collections(phase: str, info: dict[str, int]) -> None:  # the collector's CPU
            if phase == "start":
                started.append(time.process_time())
            elif started:
                totals["driver: garbage collections"] += time.process_time() - started.pop()

        t0, (r0, s0) = time.process_time(), remote_cpu()
        gc.callbacks.append(collections)
        try:
            for _ in range(updates):
                algo.train()
        finally:
            gc.callbacks.remove(collections)
        driver = time.process_time() - t0
        r1, s1 = remote_cpu()
        remote, sampling = r1 - r0, s1 - s0
    if runners:  # (the runners' parts ran in their own processes: not timed here)
        totals["driver (all)"], totals["remote runners (all)"] = driver, remote
        totals["remote runners: sample()"] = sampling
        totals["remote runners: the rest (Ray's calls, shipping the sample, weights)"] = (
            remote - sampling
        )
    else:
        inside = (
            "runner: env steps", "runner: forward passes", "runner: draws",
            "runner: compiled choices",
        )  # fmt: skip
        totals["runner: the rest (bookkeeping, cutting the sample)"] = totals[
            "runner sample (all)"
        ] - sum(totals[k] for k in inside)
    return {
        "parts": {k: round(v / updates * 1e3, 1) for k, v in totals.items() if v},
        "total": round((driver + remote) / updates * 1e3, 1),
    }


def draw_times(decisions: int = 256, rows: int = 48, calls: int = 2000) -> dict[str, float]:
    """CPU milliseconds of a draw and its log-probability for ``decisions`` decisions of up to
    ``rows`` legal rows (``FLOAT_MIN`` past them), on one torch thread, through RLlib's
    ``TorchCategorical`` and through the modules' ``MaskedCategorical``."""
    import torch
    from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical
    from ray.rllib.utils.torch_utils import FLOAT_MIN
    from spider_env.agents.rl.rllib_modules import MaskedCategorical

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)
    legal = torch.arange(rows) < torch.randint(1, rows, (decisions, 1), generator=gen)
    logits = torch.randn(decisions, rows, generator=gen).masked_fill(~legal, FLOAT_MIN)
    out = {}
    try:
        for cls in (TorchCategorical, MaskedCategorical):
            for i in range(2 + calls):  # two warm-up calls
                if i == 2:
                    t0 = time.process_time()
                dist = cls.from_logits(logits)
                dist.logp(dist.sample())
            out[cls.__name__] = round((time.process_time() - t0) / calls * 1e3, 3)
    finally:
        torch.set_num_threads(threads)
    return out


def build_parser() -> ArgumentParser:
    """The probe's flags."""
    p = ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--updates", type=int, default=8, help="timed updates, after one warm-up")
    p.add_argument("--threads", type=int, default=2, help="torch threads of the driver")
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--n-steps", type=int, default=32)
    p.add_argument(
        "--memory",
        choices=MEMORY,
        default="kept",
        help="keep freed blocks of every size (the trainer's), or leave malloc as-is",
    )
    p.add_argument(
        "--runners",
        type=int,
        default=0,
        help="remote env runners, the games shared among them (0: the driver samples)",
    )
    p.add_argument(
        "--learner",
        choices=LEARNERS,
        default="rows",
        help="the learner over rows as trained (rows) or RLlib's own PPO learner (rllib)",
    )
    p.add_argument(
        "--gc",
        choices=COLLECTOR,
        default="frozen",
        help="the objects alive after the first update out of the garbage collector's full "
        "collections, as the trainer runs (frozen), or the collector as it is (as-is)",
    )
    p.add_argument(
        "--draws",
        action="store_true",
        help="time the action distributions' draws instead (256 decisions of up to 48 rows)",
    )
    return p


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = build_parser()
    a = p.parse_args(argv)
    for name in ("updates", "threads", "num_envs", "n_steps"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(a, name)}")
    if not 0 <= a.runners <= a.num_envs:
        p.error(f"--runners must be between 0 and --num-envs ({a.num_envs}), got {a.runners}")
    try:
        import ray.rllib  # noqa: F401
    except ImportError:
        p.error("needs the rllib extra (make test-rllib builds .venv/rllib)")
    if a.draws:
        times = draw_times()
        for name, ms in times.items():
            print(f"{name:50s} {ms:8.3f} ms CPU per draw and log-probability")
        return times
    out = measure(a.updates, a.threads, a.num_envs, a.n_steps, a.memory, a.runners, a.learner, a.gc)
    for key, ms in sorted(out["parts"].items(), key=lambda kv: -kv[1]):
        print(f"{key:50s} {ms:8.1f} ms CPU per update")
    print(f"{'in all':50s} {out['total']:8.1f} ms CPU per update")
    return out


if __name__ == "__main__":
    main()
