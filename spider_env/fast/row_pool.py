"""The action-set network's pools over each decision's rows, compiled: sums and maxima forward,
their gradients backward, each in one pass over the rows.

The critic of :class:`spider_env.agents.rl.action_set_net.ActionSetLayers` pools the embeddings
``h`` ``(M, H)`` of a batch's legal rows into each decision's mean and max (``rows[m]`` is the
decision of row ``m``). In torch that is an ``index_add`` and a ``scatter_reduce`` forward and,
backward, half a dozen passes over ``(M, H)`` tensors (gathers through ``rows``, a comparison, a
cast, a product), which took about a quarter of a PPO update's CPU time. These kernels compute
the same numbers in one pass each way, with the same roundings: each sum adds its rows in the
order of ``m`` as ``index_add`` does, a maximum is exact, and a gradient is the same quotient
added in the same order (the torch path is the specification: ``tests/test_batched_ppo.py``
checks the two agree bit for bit; they could differ only where a gradient is not finite, which
the torch path multiplies by 0 for the rows below a maximum). They run on one thread;
``float32`` or ``float64`` arrays, C-contiguous.
"""

from __future__ import annotations

import numpy as np

from spider_env.fast.jit import jit, refresh_cache


@jit
def pool_forward(h: np.ndarray, rows: np.ndarray, total: np.ndarray, top: np.ndarray) -> None:
    """``total[r] += h[m]`` and ``top[r] = max(top[r], h[m])`` for every row ``m`` of decision
    ``r = rows[m]``, in the order of ``m`` (``total`` starts at 0, ``top`` at the pool's value
    of a decision without rows); a NaN, once met, stays the maximum, as in torch."""
    width = h.shape[1]
    for m in range(h.shape[0]):
        r = rows[m]
        hm, tr, pr = h[m], total[r], top[r]
        for j in range(width):
            v = hm[j]
            tr[j] += v
            if v > pr[j] or (v != v and pr[j] == pr[j]):
                pr[j] = v


@jit
def pool_backward(
    h: np.ndarray,
    rows: np.ndarray,
    top: np.ndarray,
    g_total: np.ndarray,
    g_top: np.ndarray,
    empty: float,
    ties: np.ndarray,
    out: np.ndarray,
) -> None:
    """The gradient ``out`` ``(M, H)`` of ``h`` from the gradients of the sums (``g_total``)
    and of the maxima (``g_top``), both ``(B, H)``: each row gets its decision's ``g_total``,
    plus ``g_top / ties`` where it equals its decision's maximum. ``ties`` ``(B, H)`` (its
    values on entry unused) counts the rows at each maximum, plus one where the maximum is
    ``empty``, the value of a decision without rows, as the torch path counts them; it is left
    holding the quotients. Branch-free inner loops, which the compiler vectorises."""
    width = h.shape[1]
    for r in range(top.shape[0]):
        for j in range(width):
            ties[r, j] = 1.0 if top[r, j] == empty else 0.0
    for m in range(h.shape[0]):
        hm, pr, tr = h[m], top[rows[m]], ties[rows[m]]
        for j in range(width):
            tr[j] += hm[j] == pr[j]
    for r in range(top.shape[0]):
        for j in range(width):
            ties[r, j] = g_top[r, j] / ties[r, j]
    for m in range(h.shape[0]):
        r = rows[m]
        hm, pr, q, gt, om = h[m], top[r], ties[r], g_total[r], out[m]
        for j in range(width):
            om[j] = q[j] + gt[j] if hm[j] == pr[j] else gt[j]


refresh_cache(globals())
