"""What an evaluation measured: per-deal records, per-agent summaries, paired comparisons, and
their reports (text table, JSON, CSV)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from spider_env.apps.evaluation.deals import describe_deals
from spider_env.apps.evaluation.stats import format_p, mcnemar_exact, wilson_interval

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
    """One agent's results over all the deals."""

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
    # Trained models: True = most likely action, False = sampled actions; None: not a model.
    deterministic: bool | None = None


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
        """The comparison in words (``"greedy wins significantly more"``...)."""
        if self.only_a == self.only_b == 0:
            return "identical wins"
        better = self.agent_a if self.only_a > self.only_b else self.agent_b
        if self.significant:
            return f"{better} wins significantly more"
        return "no significant difference"


@dataclass
class EvaluationResult:
    """Everything :func:`~spider_env.apps.evaluation.evaluate` measured (``to_json`` /
    ``write_csv`` keep it). ``max_steps`` is the step limit the games were played with,
    ``jobs`` the number of processes (or Ray CPUs) actually used, ``backend`` where the games
    ran: ``"local"`` (this process), ``"processes"`` (``jobs`` worker processes) or
    ``"ray ADDRESS"`` (Ray tasks; ``ADDRESS`` as given, e.g. ``"ray local"``)."""

    variant: str
    variant_options: str
    deals: list[int]
    agents: list[str]
    max_steps: int
    seed: int
    records: list[DealRecord] = field(default_factory=list)
    summaries: list[AgentSummary] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    wall_seconds: float = 0.0
    jobs: int = 1
    alpha: float = 0.05
    backend: str = "local"

    def summary(self, agent: str) -> AgentSummary:
        """The summary of ``agent`` (``KeyError`` naming the agents if there is none)."""
        for s in self.summaries:
            if s.agent == agent:
                return s
        raise KeyError(f"no agent {agent!r} in this result (agents: {self.agents})")

    def records_of(self, agent: str) -> list[DealRecord]:
        """The records of ``agent``, in deal order."""
        return [r for r in self.records if r.agent == agent]

    def to_dict(self) -> dict[str, Any]:
        """Everything, as JSON-ready data."""
        return {
            "variant": self.variant,
            "variant_options": self.variant_options,
            "deals": self.deals,
            "agents": self.agents,
            "max_steps": self.max_steps,
            "seed": self.seed,
            "jobs": self.jobs,
            "backend": self.backend,
            "alpha": self.alpha,
            "wall_seconds": round(self.wall_seconds, 3),
            "summaries": [asdict(s) for s in self.summaries],
            "comparisons": [asdict(c) for c in self.comparisons],
            "records": [asdict(r) for r in self.records],
        }

    def to_json(self, path: str) -> None:
        """Write :meth:`to_dict` to ``path``."""
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh, indent=1)
            fh.write("\n")

    def write_csv(self, path: str) -> None:
        """Write one CSV row per (agent, deal) to ``path``."""
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


def summarise(
    name: str, recs: Sequence[DealRecord], deterministic: bool | None = None
) -> AgentSummary:
    """The summary of one agent's records."""
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
        deterministic=deterministic,
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
    "RECORD_FIELDS",
    "AgentSummary",
    "Comparison",
    "DealRecord",
    "EvaluationResult",
    "compare",
    "summarise",
]
