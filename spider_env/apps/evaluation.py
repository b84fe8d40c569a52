"""Play agents on the same seeded deals and compare them.

:func:`evaluate` plays every agent on exactly the same deal numbers
(``env.reset(options={"deal": n})``) through ``gymnasium.make("Spider-v0", ...)`` and returns an
:class:`EvaluationResult`: one :class:`DealRecord` per (agent, deal), a :class:`AgentSummary` per
agent (win rate with a 95% Wilson interval, mean completed runs, score, moves, steps per second)
and a :class:`Comparison` per pair of agents (exact McNemar test on the deals only one of them
won). Agents are given as names (``"random"``, ``"greedy"``, ``"lookahead"``), paths of trained
Stable-Baselines3 models (``"model.zip"``) or agent objects (see :mod:`agents`).

Each agent is reset with a seed derived from ``(seed, deal)`` before each deal, so results do
not depend on ``jobs`` or on the order in which deals are played.
"""

from __future__ import annotations

import copy
import csv
import json
import math
import multiprocessing
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from spider_env.core.variants import Variant, resolve_variant

Z95 = 1.959963984540054
RECORD_FIELDS = (
    "agent",
    "deal",
    "won",
    "completed_runs",
    "score",
    "moves",
    "steps",
    "reward",
    "truncated",
    "seconds",
)


@dataclass
class DealRecord:
    """The outcome of one agent on one deal."""

    agent: str
    deal: int
    won: bool
    completed_runs: int
    score: int  # the variant's score at the end
    moves: int  # moves made (the game's move counter; deals not included)
    steps: int  # env steps (every action: moves, deals, ...)
    reward: float  # summed reward (the env's reward_mode)
    truncated: bool  # stopped by the step limit
    seconds: float


@dataclass
class AgentSummary:
    agent: str
    deals: int
    wins: int
    win_rate: float
    ci_low: float  # 95% Wilson interval of the win rate
    ci_high: float
    mean_runs: float
    mean_score: float
    mean_moves: float
    mean_steps: float
    steps_per_second: float
    seconds: float  # time spent playing (summed over processes)


@dataclass
class Comparison:
    """Paired comparison of two agents on the same deals (exact McNemar test on wins)."""

    agent_a: str
    agent_b: str
    both: int  # deals both won
    only_a: int
    only_b: int
    neither: int
    p_value: float  # two-sided exact binomial test on the discordant deals
    significant: bool  # p_value < alpha

    def verdict(self) -> str:
        if self.only_a == self.only_b == 0:
            return "identical wins"
        better = self.agent_a if self.only_a > self.only_b else self.agent_b
        if self.significant:
            return f"{better} wins significantly more"
        return "no significant difference"


@dataclass
class EvaluationResult:
    """Everything :func:`evaluate` measured (``to_json`` / ``write_csv`` keep it)."""

    variant: str
    variant_options: str
    deals: list[int]
    agents: list[str]
    max_steps: int | None
    seed: int
    records: list[DealRecord] = field(default_factory=list)
    summaries: list[AgentSummary] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    wall_seconds: float = 0.0
    jobs: int = 1
    alpha: float = 0.05

    def summary(self, agent: str) -> AgentSummary:
        for s in self.summaries:
            if s.agent == agent:
                return s
        raise KeyError(f"no agent {agent!r} in this result (agents: {self.agents})")

    def records_of(self, agent: str) -> list[DealRecord]:
        return [r for r in self.records if r.agent == agent]

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "variant_options": self.variant_options,
            "deals": self.deals,
            "agents": self.agents,
            "max_steps": self.max_steps,
            "seed": self.seed,
            "jobs": self.jobs,
            "alpha": self.alpha,
            "wall_seconds": round(self.wall_seconds, 3),
            "summaries": [asdict(s) for s in self.summaries],
            "comparisons": [asdict(c) for c in self.comparisons],
            "records": [asdict(r) for r in self.records],
        }

    def to_json(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh, indent=1)
            fh.write("\n")

    def write_csv(self, path: str) -> None:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(("variant", *RECORD_FIELDS))
            for r in self.records:
                w.writerow((self.variant, *(getattr(r, f) for f in RECORD_FIELDS)))

    def table(self) -> str:
        """The results as a text table (and the paired comparisons under it)."""
        head = (
            "agent",
            "deals",
            "wins",
            "win rate",
            "95% CI",
            "runs",
            "score",
            "moves",
            "steps/s",
        )
        rows = []
        for s in self.summaries:
            rows.append(
                (
                    s.agent,
                    str(s.deals),
                    str(s.wins),
                    f"{100 * s.win_rate:.1f}%",
                    f"{100 * s.ci_low:.1f}-{100 * s.ci_high:.1f}%",
                    f"{s.mean_runs:.2f}",
                    f"{s.mean_score:.1f}",
                    f"{s.mean_moves:.1f}",
                    f"{s.steps_per_second:,.0f}",
                )
            )
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]

        def line(cells: Sequence[str]) -> str:
            out = [cells[0].ljust(widths[0])]
            out += [c.rjust(w) for c, w in zip(cells[1:], widths[1:])]
            return "  ".join(out).rstrip()

        name = self.variant + (f" ({self.variant_options})" if self.variant_options else "")
        lines = [
            f"{name}: {len(self.deals)} deals ({describe_deals(self.deals)}), "
            f"max {self.max_steps} steps, seed {self.seed}",
            line(head),
            line(["-" * w for w in widths]),
        ]
        lines += [line(r) for r in rows]
        for c in self.comparisons:
            lines.append(
                f"{c.agent_a} vs {c.agent_b}: both won {c.both}, only {c.agent_a} {c.only_a}, "
                f"only {c.agent_b} {c.only_b}, McNemar exact p = {format_p(c.p_value)} -> "
                f"{c.verdict()} (alpha {self.alpha})"
            )
        return "\n".join(lines)


class AgentError(RuntimeError):
    """An agent broke the protocol (chose an illegal action)."""


# --- statistics ------------------------------------------------------------------------------
def wilson_interval(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (``(0, 1)`` for ``n = 0``)."""
    if n <= 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if wins == 0 else max(0.0, centre - half)
    hi = 1.0 if wins == n else min(1.0, centre + half)
    return lo, hi


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: binomial test of ``only_a`` in ``only_a + only_b``
    discordant pairs against p = 1/2 (1.0 when there are none)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    # P(X <= k) for X ~ Binomial(n, 1/2), summed in log space for large n.
    logs = [
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2)
        for i in range(k + 1)
    ]
    top = max(logs)
    tail = math.exp(top) * sum(math.exp(x - top) for x in logs)
    return min(1.0, 2 * tail)


def format_p(p: float) -> str:
    return f"{p:.3g}" if p >= 1e-4 else f"{p:.1e}"


# --- deal ranges ------------------------------------------------------------------------------
MAX_DEAL = 2**64 - 1


def parse_deals(text: str) -> list[int]:
    """``"0:1000"`` (start:stop, stop excluded), ``"0:1000:10"`` (with a step), ``"7"``, or a
    comma list of those (``"1,5,10:20"``). ``ValueError`` saying what is wrong otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("deals must be given like 0:1000 (start:stop), 7, or 1,5,10:20")
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise ValueError(f"empty item in deal list {text!r}")
        pieces = part.split(":")
        if len(pieces) > 3:
            raise ValueError(f"bad deal range {part!r}: use start:stop or start:stop:step")
        nums: list[int] = []
        for p in pieces:
            p = p.strip()
            if not p.isdigit():
                raise ValueError(
                    f"bad deal range {part!r}: {p!r} is not a non-negative integer "
                    "(use start:stop, e.g. 0:1000)"
                )
            nums.append(int(p))
        if len(nums) == 1:
            out.append(nums[0])
            continue
        start, stop = nums[0], nums[1]
        step = nums[2] if len(nums) == 3 else 1
        if step < 1:
            raise ValueError(f"bad deal range {part!r}: the step must be at least 1")
        if stop <= start:
            raise ValueError(
                f"bad deal range {part!r}: stop ({stop}) must be greater than start ({start}); "
                "the stop is excluded, so 0:1000 means deals 0..999"
            )
        out.extend(range(start, stop, step))
    for d in out:
        if d > MAX_DEAL:
            raise ValueError(f"deal number {d} is too large (deals are 0 .. 2**64-1)")
    if len(set(out)) != len(out):
        raise ValueError(f"deal list {text!r} names a deal more than once")
    return out


def describe_deals(deals: Sequence[int]) -> str:
    """``"0:1000"`` for a contiguous range, else the first numbers."""
    if not deals:
        return "none"
    if list(deals) == list(range(deals[0], deals[0] + len(deals))):
        return f"{deals[0]}:{deals[0] + len(deals)}"
    shown = ",".join(str(d) for d in deals[:8])
    return shown + (",..." if len(deals) > 8 else "")


# --- playing ----------------------------------------------------------------------------------
def agent_seed(seed: int, deal: int) -> int:
    """The agent's seed for one deal (independent of jobs and order)."""
    return int(np.random.SeedSequence([seed, deal]).generate_state(1, np.uint32)[0])


def make_env(variant: Variant, max_steps: int | None, **kwargs: Any) -> Any:
    """``gymnasium.make("Spider-v0", variant=..., max_episode_steps=...)``."""
    import gymnasium

    import spider_env  # noqa: F401  (registers Spider-v0)

    return gymnasium.make(
        "Spider-v0",
        variant=variant,
        max_episode_steps=max_steps,
        disable_env_checker=True,
        **kwargs,
    )


def build_agent(spec: Any, variant: Variant) -> Any:
    """An agent from a spec (name or path) or the agent itself."""
    if isinstance(spec, str):
        from spider_env.agents import make_agent

        return make_agent(spec, variant)
    if callable(getattr(spec, "act", None)):
        own = getattr(spec, "variant", None)
        if own is None and hasattr(spec, "variant"):
            spec = copy.deepcopy(spec)  # the caller's object stays free for other variants
            spec.variant = variant
        elif own is not None and own != variant:
            name = getattr(own, "name", own)
            raise ValueError(
                f"agent {spec!r} was made for {name}, but the evaluation plays {variant.name}"
            )
        return spec
    raise TypeError(f"an agent must be a name, a model path or an object with act(); got {spec!r}")


def play_episode(
    env: Any, agent: Any, deal: int, seed: int = 0, name: str = "agent"
) -> tuple[DealRecord, list[int], list[float]]:
    """Play one deal to its end; returns the record, the actions and the rewards."""
    t0 = time.perf_counter()
    if hasattr(agent, "reset"):
        agent.reset(seed=agent_seed(seed, deal))
    obs, info = env.reset(options={"deal": deal})
    actions: list[int] = []
    rewards: list[float] = []
    terminated = truncated = not info["action_mask"].any()
    while not (terminated or truncated):
        mask = info["action_mask"]
        a = int(agent.act(obs, mask, info))
        if not (0 <= a < mask.size and mask[a]):
            raise AgentError(
                f"agent {name!r} chose illegal action {a} on deal {deal} at step {len(actions)}"
            )
        obs, r, terminated, truncated, info = env.step(a)
        actions.append(a)
        rewards.append(float(r))
    rec = DealRecord(
        agent=name,
        deal=deal,
        won=bool(info["is_success"]),
        completed_runs=int(info["completed_runs"]),
        score=int(info["score"]),
        moves=int(info["moves"]),
        steps=len(actions),
        reward=round(float(sum(rewards)), 6),
        truncated=bool(truncated and not terminated),
        seconds=round(time.perf_counter() - t0, 6),
    )
    return rec, actions, rewards


def _play_chunk(
    task: tuple[int, str, Any, Variant, list[int], int | None, int, dict[str, Any]],
) -> tuple[int, list[DealRecord]]:
    idx, name, spec, variant, deals, max_steps, seed, env_kwargs = task
    env = make_env(variant, max_steps, **env_kwargs)
    agent = build_agent(spec, variant)
    out = [play_episode(env, agent, d, seed, name)[0] for d in deals]
    env.close()
    return idx, out


class _Progress:
    """tqdm when installed, else a plain progress line on stderr."""

    def __init__(self, total: int, enabled: bool, desc: str) -> None:
        self.total, self.n, self.enabled = total, 0, enabled
        self.bar: Any = None
        self.last = 0.0
        if not enabled:
            return
        try:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit="deal", file=sys.stderr)
        except ImportError:
            self.desc = desc

    def update(self, n: int) -> None:
        self.n += n
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(n)
            return
        now = time.monotonic()
        if now - self.last > 0.5 or self.n == self.total:
            self.last = now
            print(f"\r{self.desc}: {self.n}/{self.total} deals", end="", file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            print(file=sys.stderr)


def agent_names(specs: Sequence[Any]) -> list[str]:
    """Display names: the spec string or the agent's ``name``; repeats get ``#2``, ``#3``."""
    names: list[str] = []
    for spec in specs:
        base = spec if isinstance(spec, str) else str(getattr(spec, "name", type(spec).__name__))
        name, k = base, 2
        while name in names:
            name, k = f"{base}#{k}", k + 1
        names.append(name)
    return names


def evaluate(
    agents: Any,
    deals: Iterable[int] | str = "0:1000",
    *,
    variant: str | Variant | None = None,
    suits: int | None = None,
    undo: bool = False,
    jobs: int = 1,
    max_steps: int | None = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    progress: bool = False,
    env_kwargs: dict[str, Any] | None = None,
    on_record: Callable[[DealRecord], None] | None = None,
) -> EvaluationResult:
    """Play each agent on the same deals and summarise (see the module docstring).

    Args:
        agents: one agent or a list: names (``"random"``, ``"greedy"``, ``"lookahead"``),
            paths of SB3 ``.zip`` models, or agent objects (objects must pickle for ``jobs > 1``).
        deals: deal numbers, or a range text like ``"0:1000"`` (see :func:`parse_deals`).
        variant / suits / undo: the game (default classic 4-suit Spider).
        jobs: worker processes (``multiprocessing``); results do not depend on it.
        max_steps: the env's step limit (``TimeLimit``); ``None`` for none.
        seed: base of the per-deal agent seeds.
        alpha: significance level of the paired comparisons.
        progress: show a progress bar (tqdm if installed).
        env_kwargs: more ``SpiderEnv`` arguments (e.g. ``reward_mode``).
    """
    v = resolve_variant(variant, suits, undo)
    specs = list(agents) if isinstance(agents, (list, tuple)) else [agents]
    if not specs:
        raise ValueError("give at least one agent")
    deal_list = parse_deals(deals) if isinstance(deals, str) else [int(d) for d in deals]
    if not deal_list:
        raise ValueError("give at least one deal")
    if len(set(deal_list)) != len(deal_list):
        raise ValueError("a deal is listed more than once")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive int, got {jobs!r}")
    if max_steps is not None and (not isinstance(max_steps, int) or max_steps < 1):
        raise ValueError(f"max_steps must be a positive int or None, got {max_steps!r}")
    env_kwargs = dict(env_kwargs or {})
    names = agent_names(specs)
    # Fail early (unknown names, missing model files) before starting any process.
    built = [build_agent(s, v) for s in specs]

    t0 = time.perf_counter()
    per_agent: list[list[DealRecord]] = [[] for _ in specs]
    bar = _Progress(len(specs) * len(deal_list), progress, f"{v.name}")
    try:
        if jobs == 1:
            env = make_env(v, max_steps, **env_kwargs)
            for i, agent in enumerate(built):
                for d in deal_list:
                    rec = play_episode(env, agent, d, seed, names[i])[0]
                    per_agent[i].append(rec)
                    if on_record:
                        on_record(rec)
                    bar.update(1)
            env.close()
        else:
            chunk = max(1, min(50, len(deal_list) // (jobs * 4) or 1))
            tasks = []
            for i, spec in enumerate(specs):
                for k in range(0, len(deal_list), chunk):
                    part = deal_list[k : k + chunk]
                    tasks.append((i, names[i], spec, v, part, max_steps, seed, env_kwargs))
            ctx = multiprocessing.get_context("spawn")
            with ctx.Pool(jobs) as pool:
                for i, recs in pool.imap_unordered(_play_chunk, tasks):
                    per_agent[i].extend(recs)
                    if on_record:
                        for rec in recs:
                            on_record(rec)
                    bar.update(len(recs))
    finally:
        bar.close()
    order = {d: k for k, d in enumerate(deal_list)}
    for recs in per_agent:
        recs.sort(key=lambda r: order[r.deal])
    result = EvaluationResult(
        variant=v.name,
        variant_options=v.options_text() if v.name in _registered() else "",
        deals=deal_list,
        agents=names,
        max_steps=max_steps,
        seed=seed,
        records=[r for recs in per_agent for r in recs],
        wall_seconds=time.perf_counter() - t0,
        jobs=jobs,
        alpha=alpha,
    )
    result.summaries = [summarise(names[i], per_agent[i]) for i in range(len(specs))]
    for i in range(len(specs)):
        for j in range(i + 1, len(specs)):
            result.comparisons.append(compare(per_agent[i], per_agent[j], alpha))
    return result


def _registered() -> set[str]:
    from spider_env.core.variants import VARIANTS

    return set(VARIANTS)


def summarise(name: str, recs: Sequence[DealRecord]) -> AgentSummary:
    n = len(recs)
    wins = sum(r.won for r in recs)
    lo, hi = wilson_interval(wins, n)
    steps = sum(r.steps for r in recs)
    secs = sum(r.seconds for r in recs)

    def mean(xs: Iterable[float]) -> float:
        xs = list(xs)
        return sum(xs) / len(xs) if xs else 0.0

    return AgentSummary(
        agent=name,
        deals=n,
        wins=wins,
        win_rate=wins / n if n else 0.0,
        ci_low=lo,
        ci_high=hi,
        mean_runs=mean(r.completed_runs for r in recs),
        mean_score=mean(r.score for r in recs),
        mean_moves=mean(r.moves for r in recs),
        mean_steps=mean(r.steps for r in recs),
        steps_per_second=steps / secs if secs > 0 else 0.0,
        seconds=round(secs, 3),
    )


def compare(a: Sequence[DealRecord], b: Sequence[DealRecord], alpha: float = 0.05) -> Comparison:
    """Paired comparison of two agents' records on the same deals."""
    wa = {r.deal: r.won for r in a}
    wb = {r.deal: r.won for r in b}
    if set(wa) != set(wb):
        raise ValueError("the two agents were not played on the same deals")
    both = sum(1 for d in wa if wa[d] and wb[d])
    only_a = sum(1 for d in wa if wa[d] and not wb[d])
    only_b = sum(1 for d in wa if wb[d] and not wa[d])
    neither = len(wa) - both - only_a - only_b
    p = mcnemar_exact(only_a, only_b)
    name_a = a[0].agent if a else "a"
    name_b = b[0].agent if b else "b"
    return Comparison(name_a, name_b, both, only_a, only_b, neither, p, p < alpha)


__all__ = [
    "AgentError",
    "AgentSummary",
    "Comparison",
    "DealRecord",
    "EvaluationResult",
    "compare",
    "describe_deals",
    "evaluate",
    "mcnemar_exact",
    "parse_deals",
    "play_episode",
    "wilson_interval",
]
