"""The action-set network in plain torch: one shared MLP scores every legal action's row.

The layers and the forward pass of :class:`~.policy.ActionSetPolicy`, without
Stable-Baselines3, so that every trainer uses the same network with the same parameter names:
sb3-contrib's MaskablePPO (:class:`~.policy.ActionSetExtractor`), the batched PPO (:mod:`.ppo`,
through that extractor) and RLlib (:mod:`.rllib_modules`). A model trained by one loads into
another by its ``state_dict``.

The observation is ``obs_mode="actions"``'s (:mod:`spider_env.observation.actions`):
``"actions"`` ``(B, K, F)`` (one row of features per legal action), ``"action_ids"`` ``(B, K)``
(the row's action id, ``-1`` past the legal actions) and ``"globals"`` ``(B, G)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch as th
from torch import nn
from torch.autograd.function import once_differentiable

from ..networks import NO_ROW_LOGIT  # the logit of a legal action without a row

#: The max pool's value of a decision without rows (then replaced by 0).
_NO_ROW_MAX = -1e9
#: Rows are padded to a multiple of this for the embedding's products in a lower precision
#: (:attr:`ActionSetLayers.row_dtype`): oneDNN builds a kernel for each new shape, and the packed
#: rows' count is new at nearly every call, which made bfloat16 slower than float32 unpadded.
ROW_BLOCK = 256


class MaxByRow(th.autograd.Function):
    """``out[r] = max(-1e9, max of h[m] over the m with rows[m] == r)`` per column, ``(b, H)``:
    ``scatter_reduce(..., "amax", include_self=True)``'s values and gradients bit for bit (a
    gradient shared evenly among tied maxima), computed by row index instead of through a
    ``(M, H)`` index tensor, which made the backward pass copy and gather ``M * H`` indices."""

    @staticmethod
    def forward(ctx: Any, h: th.Tensor, rows: th.Tensor, b: int) -> th.Tensor:
        width = h.shape[1]
        out = h.new_full((b, width), _NO_ROW_MAX).scatter_reduce(
            0, rows.unsqueeze(-1).expand(-1, width), h, reduce="amax", include_self=True
        )
        ctx.save_for_backward(h, rows, out)
        return out

    @staticmethod
    def backward(ctx: Any, grad: th.Tensor) -> tuple[th.Tensor, None, None]:
        h, rows, out = ctx.saved_tensors
        hit = (h == out.index_select(0, rows)).to(h.dtype)  # 1 where a maximum came from
        ties = (out == _NO_ROW_MAX).to(h.dtype).index_add_(0, rows, hit)
        return (grad / ties).index_select(0, rows).mul_(hit), None, None


class PoolByRow(th.autograd.Function):
    """``(total, top)``, both ``(b, H)``: the sum of ``h[m]`` over the ``m`` with ``rows[m] ==
    r`` (``index_add``'s, in the order of ``m``) and :class:`MaxByRow`'s maximum, forward and
    backward each in one compiled pass over the rows (:mod:`spider_env.fast.row_pool`): the
    same values and gradients as those two, bit for bit, at a fraction of their passes over
    ``(M, H)`` tensors (bit for bit in the network's order: there the rows are scored before
    they are pooled, so autograd adds the pools' gradients first either way). CPU tensors only
    (:func:`pool_by_row` chooses)."""

    @staticmethod
    def forward(ctx: Any, h: th.Tensor, rows: th.Tensor, b: int) -> tuple[th.Tensor, th.Tensor]:
        from spider_env.fast import row_pool_kernels

        kernels = row_pool_kernels()
        if h.dim() != 2 or rows.shape != h.shape[:1] or rows.dtype != th.int64:
            raise ValueError(
                f"PoolByRow takes h (M, H) and int64 rows (M,), got {tuple(h.shape)} and "
                f"{tuple(rows.shape)} {rows.dtype}"
            )
        if len(rows) and not (int(rows.min()) >= 0 and int(rows.max()) < b):
            raise IndexError(f"PoolByRow: rows must lie in 0..{b - 1} (b = {b})")
        h, rows = h.contiguous(), rows.contiguous()
        total = h.new_zeros((b, h.shape[1]))
        top = h.new_full((b, h.shape[1]), _NO_ROW_MAX)
        kernels.pool_forward(h.detach().numpy(), rows.numpy(), total.numpy(), top.numpy())
        ctx.save_for_backward(h, rows, top)
        return total, top

    @staticmethod
    @once_differentiable  # a compiled kernel: no graph of its own to differentiate again
    def backward(ctx: Any, g_total: th.Tensor, g_top: th.Tensor) -> tuple[th.Tensor, None, None]:
        from spider_env.fast import row_pool_kernels

        h, rows, top = ctx.saved_tensors
        out, ties = th.empty_like(h), th.empty_like(top)
        row_pool_kernels().pool_backward(
            h.detach().numpy(), rows.numpy(), top.numpy(), g_total.contiguous().numpy(),
            g_top.contiguous().numpy(), _NO_ROW_MAX, ties.numpy(), out.numpy(),
        )  # fmt: skip
        return out, None, None


def pool_by_row(h: th.Tensor, rows: th.Tensor, b: int) -> tuple[th.Tensor, th.Tensor]:
    """Each decision's sum and max of its rows' embeddings ``h`` ``(M, H)`` (``rows[m]`` the
    decision of row ``m``, ``b`` decisions; ``-1e9`` the max of a decision without rows):
    :class:`PoolByRow` on the CPU when numba is available, else ``index_add`` and
    :class:`MaxByRow` (the specification), the same numbers."""
    if h.device.type == "cpu" and h.dtype in (th.float32, th.float64) and _compiled_pool():
        return PoolByRow.apply(h, rows, b)
    return h.new_zeros((b, h.shape[1])).index_add(0, rows, h), MaxByRow.apply(h, rows, b)


def _compiled_pool() -> bool:
    from spider_env.fast import row_pool_kernels

    try:
        row_pool_kernels()
    except ImportError:
        return False
    return True


class ActionSetLayers:
    """The layers (``embed``, ``score``, ``value``) and forward pass of the action-set
    network, mixed into an ``nn.Module`` (:class:`ActionSetNet`, SB3's extractor).

    * **actor**: ``embed`` (two ReLU layers) embeds each row (its features and the globals) and
      ``score`` (linear) scores it; a score goes to its row's action id;
    * **critic latent**: the mean and max of the embeddings over the legal rows, with the
      globals, through ``value`` (one ReLU layer); a linear value head on top is the trainer's.
    """

    n_actions: int
    embed: nn.Sequential
    score: nn.Linear
    value: nn.Sequential
    row_dtype: th.dtype | None = None
    """The number format of the packed rows' embedding products (``th.bfloat16``: mixed
    precision, the weights, their gradients and the rest of the network in float32); ``None``,
    the default, is the weights' own. A trainer sets it for its update (the batched PPO's
    ``precision``); not saved with the weights."""

    def _build_layers(self, f: int, g: int, n_actions: int, hidden: int, value_hidden: int) -> None:
        """``f`` features per row, ``g`` globals, ``n_actions`` action ids."""
        self.n_actions = n_actions
        self.embed = nn.Sequential(
            nn.Linear(f + g, hidden),
            nn.ReLU(inplace=True),
            nn.Linear(hidden, hidden),
            nn.ReLU(inplace=True),
        )
        self.score = nn.Linear(hidden, 1)
        self.value = nn.Sequential(nn.Linear(2 * hidden + g, value_hidden), nn.ReLU())

    def slot_scores(
        self, obs: dict[str, th.Tensor], packed: bool = False
    ) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        """``(scores (B, K), valid (B, K), value latent (B, H))``; the scores of rows without an
        action are meaningless (mask them). ``packed``: the network sees only the rows with an
        action (the same values up to float rounding, at the cost of the legal actions rather
        than of ``K`` rows: what the batched trainers use)."""
        return self.row_scores(obs["actions"], obs["action_ids"] >= 0, obs["globals"], packed)

    def row_scores(
        self, feats: th.Tensor, valid: th.Tensor, glob: th.Tensor, packed: bool = False
    ) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        """:meth:`slot_scores` of the rows ``feats`` ``(B, K, F)`` whose ``valid`` ``(B, K)``
        is true (the rows with an action), with the globals ``glob`` ``(B, G)``."""
        b, k, _ = feats.shape
        if packed:
            return self._packed(feats, valid, glob)
        x = th.cat((feats, glob.unsqueeze(1).expand(b, k, glob.shape[-1])), dim=-1)
        h = self.embed(x)
        scores = self.score(h).squeeze(-1)
        vm = valid.unsqueeze(-1).to(h.dtype)
        count = vm.sum(dim=1).clamp(min=1.0)
        mean = (h * vm).sum(dim=1) / count
        mx = h.masked_fill(~valid.unsqueeze(-1), -1e9).max(dim=1).values
        mx = th.where(valid.any(dim=1, keepdim=True), mx, th.zeros_like(mx))
        return scores, valid, self.value(th.cat((mean, mx, glob), dim=-1))

    def _packed(
        self, feats: th.Tensor, valid: th.Tensor, glob: th.Tensor
    ) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        rows, cols = valid.nonzero(as_tuple=True)
        return self.packed_rows(feats[rows, cols], rows, cols, valid, glob)

    def packed_rows(
        self, x: th.Tensor, rows: th.Tensor, cols: th.Tensor, valid: th.Tensor, glob: th.Tensor
    ) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        """:meth:`row_scores` (``packed=True``) of the rows with an action given as they are
        packed: ``x`` ``(M, F)`` the features of row ``cols[m]`` of decision ``rows[m]``, in the
        order of ``valid.nonzero()`` (``valid`` ``(B, K)``); a trainer that keeps its rollout
        packed gathers only these rows."""
        b, k = valid.shape
        h = self.embed_rows(x, glob.index_select(0, rows))  # (M, H)
        scores = x.new_zeros((b, k)).index_put((rows, cols), self.score(h).squeeze(-1))
        count = valid.sum(dim=1).clamp(min=1).unsqueeze(-1).to(h.dtype)
        total, mx = pool_by_row(h, rows, b)
        mean = total / count
        mx = th.where(valid.any(dim=1, keepdim=True), mx, th.zeros_like(mx))
        return scores, valid, self.value(th.cat((mean, mx, glob), dim=-1))

    @contextmanager
    def rows_in(self, dtype: th.dtype | None) -> Iterator[None]:
        """Set :attr:`row_dtype` to ``dtype`` while the block runs, then put back what it was."""
        before, self.row_dtype = self.row_dtype, dtype
        try:
            yield
        finally:
            self.row_dtype = before

    def embed_rows(self, x: th.Tensor, glob_rows: th.Tensor) -> th.Tensor:
        """``embed`` of the rows ``x`` ``(M, F)`` beside their decisions' globals ``glob_rows``
        ``(M, G)``, its products in :attr:`row_dtype` (the rows written once into a buffer of
        that type, padded with zeros to a multiple of :data:`ROW_BLOCK`), as a tensor of the
        weights' dtype."""
        if self.row_dtype is None or self.row_dtype == x.dtype:
            return self.embed(th.cat((x, glob_rows), dim=-1))
        (m, f), pad = x.shape, -x.shape[0] % ROW_BLOCK
        inp = x.new_empty((m + pad, f + glob_rows.shape[1]), dtype=self.row_dtype)
        inp[:m, :f] = x
        inp[:m, f:] = glob_rows
        inp[m:] = 0
        with th.autocast(x.device.type, dtype=self.row_dtype):
            h = self.embed(inp)
        return h[:m].to(x.dtype)

    def logits_by_id(self, scores: th.Tensor, valid: th.Tensor, ids: th.Tensor) -> th.Tensor:
        """The logits over all ``n_actions`` ids ``(B, A)``: each row's score at its id,
        :data:`NO_ROW_LOGIT` at every id without a row."""
        b = scores.shape[0]
        index = th.where(valid, ids.long(), th.full_like(scores, self.n_actions).long())
        logits = th.full(
            (b, self.n_actions + 1), NO_ROW_LOGIT, dtype=scores.dtype, device=scores.device
        )
        logits = logits.scatter(
            1, index, th.where(valid, scores, th.full_like(scores, NO_ROW_LOGIT))
        )
        return logits[:, : self.n_actions]


class ActionSetNet(nn.Module, ActionSetLayers):
    """The action-set network as a plain ``nn.Module`` (:class:`ActionSetLayers`)."""

    def __init__(self, f: int, g: int, n_actions: int, hidden: int, value_hidden: int) -> None:
        super().__init__()
        self._build_layers(f, g, n_actions, hidden, value_hidden)

    def forward(
        self, obs: dict[str, th.Tensor], packed: bool = True
    ) -> tuple[th.Tensor, th.Tensor]:
        """``(logits over the action ids (B, A), value latent (B, H))``."""
        scores, valid, latent = self.slot_scores(obs, packed=packed)
        return self.logits_by_id(scores, valid, obs["action_ids"]), latent


__all__ = [
    "NO_ROW_LOGIT",
    "ROW_BLOCK",
    "ActionSetLayers",
    "ActionSetNet",
    "MaxByRow",
    "PoolByRow",
    "pool_by_row",
]
