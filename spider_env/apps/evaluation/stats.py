"""The statistics of an evaluation: Wilson intervals of win rates, exact McNemar tests."""

from __future__ import annotations

import math

Z95 = 1.959963984540054


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
    """A p-value for a table: three significant digits, scientific below 1e-4."""
    return f"{p:.3g}" if p >= 1e-4 else f"{p:.1e}"


__all__ = ["Z95", "format_p", "mcnemar_exact", "wilson_interval"]
