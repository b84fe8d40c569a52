"""A dense layer whose every output is a fixed sum: the same bits for a row alone or in a batch.

A BLAS matrix product rounds a row's outputs differently with the size of the batch (other
kernels for small matrices, other tiles at the edges), so a model's choice between two nearly
equal actions (and equal feature rows do occur: equal moves to two empty columns) would depend on
how many games are scored together. :func:`dense` computes ``out[r, j] = b[j] + x[r, 0] * w[0, j]
+ x[r, 1] * w[1, j] + ...`` in that order, each product and sum rounded in ``float32`` (no fused
multiply-add: numba contracts nothing without ``fastmath``): a row's outputs depend on that row
alone. It runs on one thread (a BLAS product of this size starts threads that cost more CPU than
they save). :func:`spider_env.agents.networks.dense_sum` is the same sum in NumPy (the
specification, and what plays without numba); ``tests/test_model_batch.py`` checks that the two
agree bit for bit.
"""

from __future__ import annotations

import numpy as np

from spider_env.fast.jit import jit, refresh_cache


@jit
def dense(x: np.ndarray, w: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out[r] = b + sum_k x[r, k] * w[k]`` for every row ``r`` (``float32``; ``w`` ``(K, J)``
    C-contiguous), summed in the order of ``k``. Four rows at a time share each load of
    ``w[k]`` (the same sums: each output still adds its terms in the order of ``k``)."""
    n_rows, n_in = x.shape
    n_out = w.shape[1]
    r = 0
    while r + 4 <= n_rows:
        a0, a1, a2, a3 = out[r], out[r + 1], out[r + 2], out[r + 3]
        for j in range(n_out):
            a0[j] = a1[j] = a2[j] = a3[j] = b[j]
        for k in range(n_in):
            x0, x1, x2, x3 = x[r, k], x[r + 1, k], x[r + 2, k], x[r + 3, k]
            wk = w[k]
            for j in range(n_out):
                wj = wk[j]
                a0[j] += x0 * wj
                a1[j] += x1 * wj
                a2[j] += x2 * wj
                a3[j] += x3 * wj
        r += 4
    while r < n_rows:
        acc = out[r]
        for j in range(n_out):
            acc[j] = b[j]
        for k in range(n_in):
            xk = x[r, k]
            wk = w[k]
            for j in range(n_out):
                acc[j] += xk * wk[j]
        r += 1


refresh_cache(globals())

__all__ = ["dense"]
