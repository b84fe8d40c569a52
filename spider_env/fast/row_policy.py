"""The action-set network's rollout pass, compiled around its matrix products: the rows
gathered, their scores and pools, and each game's draw.

A PPO rollout asks the network for one decision per game and step, on a hundred games or so at a
time: about a thousand legal rows through two small layers. In torch that is some fifty
operations of a few microseconds each, most of it the cost of calling them, and each call takes
Python's lock from the env stepping on another thread. The matrix products (the two layers that
embed every row, the critic's layer) are what torch (its BLAS) does best, so they stay torch's;
the rest is three compiled calls that hold no lock:

* :func:`gather_rows` packs each game's legal rows and its globals into one matrix, as the
  network's packed pass does (``ActionSetLayers.packed_rows``, in the order of
  ``valid.nonzero()``);
* :func:`pool_rows` scores each embedded row and pools each game's rows (mean and max) beside
  its globals, the critic's input;
* :func:`draw_rows` draws each game's row as :func:`spider_env.agents.rl.ppo.sample_rows` does
  (the softmax's CDF inverted at ``u``) and gives its log-probability.

:class:`spider_env.agents.rl.ppo.CompiledChoice` puts them together. The specification is the
torch pass: ``tests/test_batched_ppo.py`` checks that the two draw the same rows at the same
log-probabilities and values, up to float32 rounding.
"""

from __future__ import annotations

import math

import numpy as np

from spider_env.fast.jit import jit, refresh_cache


@jit
def gather_rows(
    feats: np.ndarray, ids: np.ndarray, glob: np.ndarray, x: np.ndarray, count: np.ndarray
) -> int:
    """Game ``i``'s legal rows (``feats[i, r]`` for the first ``r`` with ``ids[i, r] >= 0``),
    each followed by the game's globals ``glob[i]``, as consecutive rows of ``x`` ``(at least
    the rows in all, F + G)``, game after game; ``count[i]`` their number. Returns the rows
    written."""
    n_games, n_slots, n_feat = feats.shape
    n_glob = glob.shape[1]
    m = 0
    for i in range(n_games):
        n = 0
        while n < n_slots and ids[i, n] >= 0:
            for f in range(n_feat):
                x[m, f] = feats[i, n, f]
            for g in range(n_glob):
                x[m, n_feat + g] = glob[i, g]
            n += 1
            m += 1
        count[i] = n
    return m


@jit
def pool_rows(
    h: np.ndarray,
    count: np.ndarray,
    glob: np.ndarray,
    ws: np.ndarray,
    bs: np.ndarray,
    scores: np.ndarray,
    critic_in: np.ndarray,
) -> None:
    """From the embeddings ``h`` of the rows :func:`gather_rows` packed (``count[i]`` rows of
    game ``i``, game after game): each row's score (``ws``, ``bs``: the score layer's weights
    and bias) into ``scores[i, r]``, and each game's critic input, the mean and the max of its
    rows' embeddings (0 without rows) and its globals, into ``critic_in[i]``."""
    hidden = h.shape[1]
    n_glob = glob.shape[1]
    m = 0
    for i in range(count.shape[0]):
        n = count[i]
        ci = critic_in[i]
        for j in range(hidden):
            ci[j] = 0
            ci[hidden + j] = -1e9
        for r in range(n):
            hr = h[m + r]
            s = bs[0]
            for j in range(hidden):
                s += hr[j] * ws[j]
                ci[j] += hr[j]
                if hr[j] > ci[hidden + j]:
                    ci[hidden + j] = hr[j]
            scores[i, r] = s
        m += n
        for j in range(hidden):
            ci[j] = ci[j] / max(n, 1)
            if n == 0:
                ci[hidden + j] = 0
        for g in range(n_glob):
            ci[2 * hidden + g] = glob[i, g]


@jit
def draw_rows(
    scores: np.ndarray,
    count: np.ndarray,
    u: np.ndarray,
    k_rows: int,
    rows: np.ndarray,
    logp: np.ndarray,
    p: np.ndarray,
) -> None:
    """Each game's row drawn from the softmax of its ``count[i]`` scores ``scores[i]``, by
    inverting the distribution's CDF at ``u[i]`` (uniform in ``[0, 1)``), into ``rows[i]``,
    and its log-probability into ``logp[i]``; ``p``: scratch of at least the most rows. A game
    without a legal row gets row 0 at the log-probability the torch pass gives it over
    ``k_rows`` masked rows, ``-log(k_rows)``."""
    for i in range(count.shape[0]):
        n = count[i]
        if n == 0:
            rows[i] = 0
            logp[i] = -math.log(k_rows)
            continue
        si = scores[i]
        top = si[0]
        for r in range(1, n):
            top = max(top, si[r])
        z = 0.0
        for r in range(n):
            p[r] = math.exp(si[r] - top)
            z += p[r]
        target = u[i] * z
        acc = 0.0
        pick = n - 1
        for r in range(n):
            acc += p[r]
            if acc > target:
                pick = r
                break
        rows[i] = pick
        logp[i] = si[pick] - top - math.log(z)


refresh_cache(globals())


__all__ = ["draw_rows", "gather_rows", "pool_rows"]
