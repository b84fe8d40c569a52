"""Batched masked PPO over :class:`~spider_env.vector.SpiderVectorEnv`, in one file.

The algorithm is CleanRL's PPO (clipped surrogate, GAE, value clipping, advantage
normalisation, a linearly annealed learning rate) written for Spider's action sets:

* the env is ``SpiderVectorEnv(obs_mode="actions")``: ``num_envs`` games stepped in one compiled
  call, whose observation describes every legal action by one row of features (computed in the
  compiled core too); the trainer reads the env's own buffers (``copy=False``), nothing is
  encoded in Python;
* the policy is :class:`~.policy.ActionSetPolicy` (:mod:`.action_set_net`): one shared scorer
  over the rows and a pooled value. The distribution is a categorical over the **rows**,
  masked to the rows that stand for legal actions (id ``>= 0``); its entropy is the masked
  entropy. Each row stands for one action id, so this is exactly the
  policy's distribution over Spider's action ids that ``spider-env evaluate`` plays;
* the masks (which rows are legal actions, the ``action_ids`` rows) are stored with the
  rollout, so the update scores exactly the choices the rollout had;
* games that end by the step limit are bootstrapped with the value of their last observation
  (``autoreset_mode="same-step"``: the env gives it in ``info["final_obs"]``);
* the network sees only the rows that stand for an action (``slot_scores(packed=True)``), so a
  decision costs what its legal actions cost, not ``action_rows``;
* with two threads or more the rollout is pipelined: the games are two halves, each its own
  env, and one half's env steps on a second thread while the policy chooses the other half's
  actions. Actions are drawn by :func:`sample_rows` from one uniform number per game and step,
  drawn at the start of the rollout, so the split changes no draw; on the CPU the choice is
  :class:`CompiledChoice` (the same draws, torch's matrix products inside compiled calls that
  hold no lock), elsewhere torch's own pass;
* a minibatch's gradient is the sum of its two halves' gradients (:func:`minibatch_loss` of
  each, weighted by its share of the decisions, so that the two add up to the minibatch's
  loss): with two threads or more the halves run at once, one on each thread, each on half of
  torch's threads, where torch's own threads shared out one pass over the whole minibatch less
  well. With one thread they run one after the other;
* on a CPU that multiplies bfloat16 natively the update's row embeddings multiply in bfloat16
  (``precision``, mixed precision: the weights, gradients and everything else in float32, the
  rows padded to a multiple of ``ROW_BLOCK``); the rollout and the evaluations are float32.

Every ``eval_every`` steps the policy (most likely action) plays the validation deals, all at
once in a second vector env (:func:`play_deals`), which is a row of ``eval.csv`` and a
checkpoint: a MaskablePPO zip with its sidecar (to train on from) and, beside it, the model file
``spider-env evaluate --agent MODEL`` plays (``.safetensors``,
:func:`~.models.save_model`): the checkpoint that won the most validation deals (ties: the
later) is saved as ``model.safetensors`` (and ``model.zip``). ``bc`` starts from a cloned model
(:mod:`.cloning`, ``examples/clone_teacher.py``) instead of a fresh network.
:class:`BatchedPPOSettings` is every setting, one line of documentation each.
"""

from __future__ import annotations

import csv
import functools
import itertools
import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import numpy as np
from spider_env.agents.model_format import ACTIONS_MODE

from spider_env.core.variants import Variant, resolve_variant
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS
from spider_env.observation.actions import DEFAULT_ACTION_ROWS
from spider_env.rewards import REWARD_MODES

from .envs import TRAIN_DEALS, validation_deals
from .memory import keep_freed_memory
from .settings import (
    InputFile,
    Name,
    OutputDir,
    SettingsError,
    above,
    at_least,
    check,
    check_discounts,
    check_fields,
    check_paths,
    setting_up,
)
from .threads import set_torch_threads, threads_line

DEVICES = ("cpu", "cuda")
#: The update's number formats (:attr:`BatchedPPOSettings.precision`).
PRECISIONS = ("auto", "float32", "bfloat16")
#: The logit of a row that stands for no legal action (its probability is exactly 0).
MASKED_LOGIT = -1e8
#: The statistics of an update's last minibatch, in the summary's ``last_update``.
STAT_NAMES = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "bc_kl")


@dataclass(frozen=True)
class BatchedPPOSettings:
    """Every setting of a run of :func:`train` (flags of ``examples/batched_ppo.py``)."""

    suits: int = field(default=1, metadata={"choices": (1, 2, 4)})
    """classic Spider with this many suits (unless --variant)"""
    variant: Annotated[str, Name] | None = None
    """any registered variant instead of classic Spider"""
    num_envs: int = 256
    """games stepped together (one compiled call)"""
    n_steps: int = 32
    """steps per game between updates (a rollout is num_envs * n_steps decisions)"""
    timesteps: int = 2_000_000
    """env steps in all (decisions of all games)"""
    learning_rate: float = 3e-4
    """Adam's learning rate at the start"""
    constant_lr: bool = False
    """keep the learning rate (default: lowered linearly to 0 over the run)"""
    gamma: float = 0.995
    """discount factor"""
    gae_lambda: float = 0.95
    """GAE's lambda"""
    update_epochs: int = 2
    """passes over each rollout"""
    minibatches: int = 4
    """minibatches per pass"""
    clip_coef: float = 0.2
    """PPO's clip range of the probability ratio (and of the value change)"""
    ent_coef: float = 0.01
    """weight of the (masked) entropy bonus"""
    vf_coef: float = 0.5
    """weight of the value loss"""
    max_grad_norm: float = 0.5
    """gradient norm clip"""
    target_kl: float = 0.0
    """stop an update's passes once the approximate KL exceeds this (0: never)"""
    hidden: int = 64
    """width of the shared action network and of the value layer"""
    action_rows: int = DEFAULT_ACTION_ROWS
    """rows of per-action features (actions beyond them: the highest one-step gains)"""
    reward_mode: str = field(default="runs", metadata={"choices": tuple(sorted(REWARD_MODES))})
    """the env's reward_mode (runs: +1 per completed run, +10 on the win)"""
    max_episode_steps: int = DEFAULT_MAX_EPISODE_STEPS
    """step limit per game"""
    bc: Annotated[str, InputFile] | None = None
    """start from this cloned model (clone_teacher.py's) instead of a fresh network"""
    bc_coef: float = 0.0
    """weight of the KL divergence from the --bc model's policy, which keeps PPO near the
    teacher it cloned at first; lowered linearly to 0 over --bc-steps (0: none)"""
    bc_steps: int = 1_000_000
    """env steps over which --bc-coef falls to 0"""
    eval_every: int = 250_000
    """env steps between evaluations on the validation deals"""
    eval_deals: int = 200
    """validation deals per evaluation (1000, 1001, ...)"""
    eval_envs: int = 200
    """games of the evaluation played at once"""
    seed: int = 0
    """seed of the network, the sampling and the training deals"""
    device: str = field(default="cpu", metadata={"choices": DEVICES})
    """where the network runs"""
    precision: str = field(default="auto", metadata={"choices": PRECISIONS})
    """number format of the update's row embeddings: bfloat16 is mixed precision (weights,
    gradients and the rest in float32) at about twice float32's matrix speed on a CPU that
    multiplies it natively (AVX512-BF16 or AMX), auto: bfloat16 there, else float32"""
    torch_threads: int = 0
    """torch's CPU threads (0: the cores this process may use that other processes are not
    using, measured at the start and printed; see agents/rl/threads.py)"""
    out: Annotated[str, OutputDir] = "runs/ppo"
    """output folder: eval.csv, checkpoints/, model.safetensors + model.zip, summary.json"""
    no_progress: bool = False
    """print nothing while training"""

    def __post_init__(self) -> None:
        check_fields(self)
        at_least(self, 1, "num_envs", "n_steps", "timesteps", "update_epochs", "minibatches")
        at_least(self, 1, "hidden", "action_rows", "max_episode_steps", "eval_every")
        at_least(self, 1, "eval_deals", "eval_envs")
        at_least(self, 0, "torch_threads")
        at_least(self, 0, "ent_coef", "vf_coef", "target_kl", "bc_coef")
        at_least(self, 1, "bc_steps")
        check(self.bc_coef == 0 or self.bc is not None, "bc_coef",
              "keeps the policy near a cloned model: give it with --bc")  # fmt: skip
        above(self, 0, "learning_rate", "clip_coef", "max_grad_norm")
        check_discounts(self)
        check(
            self.minibatches <= self.num_envs * self.n_steps,
            "minibatches",
            f"must be at most num_envs * n_steps ({self.num_envs * self.n_steps}), "
            f"got {self.minibatches}",
        )
        with setting_up("variant"):
            self.game()

    def game(self) -> Variant:
        """The variant played."""
        return resolve_variant(self.variant, None if self.variant else self.suits)

    @property
    def batch(self) -> int:
        """Decisions per rollout."""
        return self.num_envs * self.n_steps


# --- the environment ----------------------------------------------------------------------------
def make_envs(
    variant: Variant, s: BatchedPPOSettings, num_envs: int, deals: Any = None, **kwargs: Any
) -> Any:
    """A ``SpiderVectorEnv`` of ``num_envs`` games with the per-action observation, whose
    observations are views of its buffers (``copy=False``)."""
    from spider_env.vector import SpiderVectorEnv

    return SpiderVectorEnv(
        num_envs,
        variant=variant,
        obs_mode=ACTIONS_MODE,
        action_rows=s.action_rows,
        reward_mode=s.reward_mode,
        max_episode_steps=s.max_episode_steps,
        deal_numbers=deals,
        copy=False,
        **kwargs,
    )


# --- the policy ---------------------------------------------------------------------------------
def _torch() -> Any:
    import torch

    return torch


def native_bfloat16() -> bool:
    """Whether this CPU multiplies bfloat16 natively (AVX512-BF16 or AMX tiles), as torch's
    CPU feature checks report it (``False`` where torch cannot tell)."""
    cpu = _torch().cpu
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(cpu, name, lambda: False)()) for name in checks)


def update_precision(precision: str, device: str) -> tuple[Any, str]:
    """``(row_dtype, a line saying why)`` of a ``precision`` setting on ``device``: ``auto``
    is bfloat16 on a CPU that multiplies it natively, else float32 (``row_dtype`` ``None``);
    ``ValueError`` for a name not in :data:`PRECISIONS`."""
    torch = _torch()
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if precision == "auto":
        native = device == "cpu" and native_bfloat16()
        precision = "bfloat16" if native else "float32"
        why = "auto: " + ("the CPU multiplies bfloat16 natively" if native else
                          "no native bfloat16 on this device")  # fmt: skip
    else:
        why = "given"
    return (torch.bfloat16 if precision == "bfloat16" else None), f"{precision} ({why})"


class CompiledChoice:
    """The rollout's choices on the CPU: the torch pass of :meth:`RowPolicy.forward`,
    ``log_softmax`` and :func:`sample_rows` as three compiled calls around the network's matrix
    products (:mod:`spider_env.fast.row_policy`; the same draws, log-probabilities and values
    up to float32 rounding), for games of at most ``slots`` rows of ``n_feat`` features and
    ``n_glob`` globals, ``n_games`` at a time. :meth:`refresh` after the weights change."""

    def __init__(self, policy: Any, n_games: int, slots: int, n_feat: int, n_glob: int) -> None:
        from spider_env.fast import row_policy_kernels

        torch = _torch()
        self.kernels = row_policy_kernels()
        ext = policy.features_extractor
        embed = ext.embed  # Linear, ReLU, Linear, ReLU
        self.layers = (embed[0], embed[2])
        self.score_layer = ext.score
        self.critic = (ext.value[0], policy.value_net)  # Linear (then ReLU), the value head
        hidden = embed[2].out_features
        self.x = np.empty((n_games * slots, n_feat + n_glob), np.float32)
        self.x_t = torch.from_numpy(self.x)
        self.scores = np.empty((n_games, slots), np.float32)
        self.critic_in = np.empty((n_games, 2 * hidden + n_glob), np.float32)
        self.critic_in_t = torch.from_numpy(self.critic_in)
        self.count = np.empty(n_games, np.int64)
        self.p = np.empty(slots, np.float64)
        self.refresh()

    def refresh(self) -> None:
        """Take the policy's weights as they are now (the score layer's as NumPy views)."""
        layer = self.score_layer
        self.score = tuple(p.detach().numpy().reshape(-1) for p in (layer.weight, layer.bias))

    def __call__(
        self, obs: dict[str, np.ndarray], u: np.ndarray, k: int, rows: np.ndarray,
        logp: np.ndarray, value: np.ndarray,
    ) -> None:  # fmt: skip
        """Each game's row drawn at ``u`` (``(n,)`` float32), its log-probability and value,
        written into ``rows``, ``logp`` and ``value``; ``k``: :func:`rows_used` of the games
        (what a game without a legal row is given, as the torch pass gives it). The kernels
        index without bounds checks, so shapes other than those it was made for are a
        ``ValueError`` first."""
        torch, kernels, n = _torch(), self.kernels, len(u)
        feats, ids, glob = obs["actions"], obs["action_ids"], obs["globals"]
        games, slots = self.scores.shape
        if not (
            n <= games and feats.ndim == 3 and feats.shape[:2] == ids.shape
            and feats.shape[1] <= slots and len(feats) == len(glob) == n
            and feats.shape[2] + glob.shape[-1] == self.x.shape[1]
            and len(rows) == len(logp) == len(value) == n and k >= 1
        ):  # fmt: skip
            raise ValueError(
                f"CompiledChoice of at most {games} games of {slots} rows and "
                f"{self.x.shape[1]} features with globals got actions {feats.shape}, ids "
                f"{ids.shape}, globals {glob.shape}, {n} uniforms, outputs of "
                f"{len(rows)}, {len(logp)}, {len(value)}, k={k}"
            )
        count = self.count[:n]
        m = kernels.gather_rows(feats, ids, glob, self.x, count)
        with torch.no_grad():
            h = self.x_t[:m]
            for layer in self.layers:
                h = torch.nn.functional.linear(h, layer.weight, layer.bias).relu_()
            kernels.pool_rows(h.numpy(), count, glob, *self.score, self.scores, self.critic_in)
            latent, head = self.critic
            v = latent(self.critic_in_t[:n]).relu_()
            torch.from_numpy(value).copy_(head(v)[:, 0])
        kernels.draw_rows(self.scores, count, u, k, rows, logp, self.p)


def compiled_choice(
    policy: Any, device: Any, n_games: int, slots: int, n_feat: int, n_glob: int
) -> CompiledChoice | None:
    """:class:`CompiledChoice` on the CPU, else ``None`` (another device, or no numba): then
    torch chooses."""
    if getattr(device, "type", device) != "cpu":
        return None
    try:
        return CompiledChoice(policy, n_games, slots, n_feat, n_glob)
    except ImportError:
        return None


def rows_used(ids: np.ndarray) -> int:
    """The most rows any position of ``ids`` (``(..., K)``, ``-1`` past the legal actions)
    uses: the rows with an id come first, so ``[..., :rows_used]`` keeps every one."""
    return max(1, int((ids >= 0).sum(axis=-1).max()))


class RowPolicy:
    """The distribution over the rows of an ``ActionSetPolicy`` (a wrapper, no weights of
    its own): ``forward`` gives masked logits and values of a batch of observations."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.extractor = policy.features_extractor

    def forward(self, feats: Any, ids: Any, glob: Any) -> tuple[Any, Any, Any]:
        """``(logits (B, K), valid (B, K), value (B,))`` (``logits`` masked: rows without a
        legal action get :data:`MASKED_LOGIT`)."""
        obs = {"actions": feats, "action_ids": ids, "globals": glob}
        return self._out(*self.extractor.slot_scores(obs, packed=True))

    def forward_packed(self, rollout: PackedRows, i: Any, k: int) -> tuple[Any, Any, Any]:
        """:meth:`forward` of the decisions ``i`` of a packed rollout, over ``k`` rows (at
        least the most rows a decision of ``i`` uses): the same values, bit for bit, without
        gathering the rows that stand for no action."""
        x, rows, cols, valid = rollout.select(i, k)
        glob = rollout.glob.index_select(0, i)
        return self._out(*self.extractor.packed_rows(x, rows, cols, valid, glob))

    def _out(self, scores: Any, valid: Any, latent: Any) -> tuple[Any, Any, Any]:
        logits = scores.masked_fill(~valid, MASKED_LOGIT)
        return logits, valid, self.policy.value_net(latent).squeeze(-1)


class PackedRows:
    """A rollout's observations ``(B, K, F)`` / ``(B, K)`` / ``(B, G)`` (the rows with an id
    first in each decision), read by minibatches as the rows that stand for an action only
    (:meth:`select`): no copy of the padding."""

    def __init__(self, feats: Any, ids: Any, glob: Any) -> None:
        self.k = feats.shape[1]
        self.flat = feats.reshape(-1, feats.shape[-1])  # (B * K, F), a view
        self.count = (ids >= 0).sum(dim=1)  # rows of each decision
        self.glob = glob

    def select(self, i: Any, k: int) -> tuple[Any, Any, Any, Any]:
        """The rows of decisions ``i`` as :meth:`ActionSetLayers.packed_rows` takes them:
        ``(x (M, F), rows (M,), cols (M,), valid (len(i), k))``."""
        torch = _torch()
        count = self.count.index_select(0, i)
        first = torch.cumsum(count, 0) - count  # each decision's first row in x
        rows = torch.repeat_interleave(torch.arange(len(count), device=count.device), count)
        cols = torch.arange(len(rows), device=count.device) - first.index_select(0, rows)
        # (index_select copies whole rows: a third of the time of indexing by a tensor here)
        x = self.flat.index_select(0, i.index_select(0, rows) * self.k + cols)
        valid = torch.arange(k, device=count.device) < count[:, None]
        return x, rows, cols, valid


def sample_rows(logp: Any, valid: Any, u: Any, valid_first: bool = True) -> Any:
    """One row per decision drawn from its log-probabilities ``logp`` ``(B, K)`` by inverting
    the distribution's CDF at ``u`` ``(B,)`` (uniform in ``[0, 1)``): a row without a legal
    action (``valid`` False, probability 0) is never drawn, and a decision's draw depends on its
    own ``u`` only, so the trainer draws every game's ``u`` of a rollout at once and the samples
    do not depend on how the games are split between calls. A decision without a legal row
    (a game dealt with none, which ends at its next step) gets row 0. ``valid_first``: each
    decision's valid rows come first (the rows of an action set); ``False``: anywhere (a mask
    over action ids)."""
    torch = _torch()
    cdf = legal_exp(logp, valid).mul_(valid).cumsum(dim=-1)
    row = torch.searchsorted(cdf, (u * cdf[:, -1])[:, None], right=True)[:, 0]
    if valid_first:
        last = valid.sum(dim=-1) - 1
    else:  # u * total can round up to total: then the last valid row, wherever it is
        last = valid.shape[-1] - 1 - valid.flip(-1).to(torch.uint8).argmax(dim=-1)
        last = torch.where(valid.any(dim=-1), last, -1)
    return torch.minimum(row, last).clamp(min=0)


def legal_exp(logp: Any, valid: Any) -> Any:
    """``exp(logp)`` at the legal rows (``valid``), 1 at the others: the same values where it
    matters, without taking the exponential of a masked row's log-probability (about
    ``MASKED_LOGIT``), which the vectorised ``exp`` computes on a slow path."""
    torch = _torch()
    return torch.where(valid, logp, torch.zeros((), dtype=logp.dtype, device=logp.device)).exp()


def masked_log_probs(logits: Any, valid: Any) -> tuple[Any, Any]:
    """``(log-probabilities (B, K), masked entropy (B,))`` of the rows' categorical: the
    entropy sums over the legal rows only (a masked row's ``p log p`` is exactly 0 but its
    log-probability is not finite enough to multiply)."""
    logp = _torch().log_softmax(logits, dim=-1)
    return logp, masked_entropy(logp, valid)


def masked_entropy(logp: Any, valid: Any) -> Any:
    """The entropy ``(B,)`` of the categorical of log-probabilities ``logp`` ``(B, K)``, summed
    over the legal rows ``valid`` only (:func:`masked_log_probs`)."""
    torch = _torch()
    plogp = torch.where(valid, legal_exp(logp, valid) * logp, torch.zeros_like(logp))
    return -plogp.sum(dim=-1)


class LossTerms(NamedTuple):
    """The clipped PPO objective's parts for a minibatch (:func:`clipped_losses`)."""

    logp: Any
    """log-probabilities of every row ``(B, K)``"""
    log_ratio: Any
    """log of the new over the old probability of the row played ``(B,)``"""
    ratio: Any
    """that ratio ``(B,)``"""
    policy_loss: Any
    """the clipped surrogate, negated, averaged over the decisions"""
    value_loss: Any
    """half the clipped squared value error, averaged"""
    entropy: Any
    """the masked entropy, averaged"""


def clipped_losses(
    logits: Any, valid: Any, value: Any, rows: Any, old_logp: Any, adv: Any, old_value: Any,
    returns: Any, clip: float,
) -> LossTerms:  # fmt: skip
    """PPO's clipped losses of a minibatch: the masked ``logits`` ``(B, K)`` and ``value``
    ``(B,)`` of the policy now, the rows played, their log-probabilities and values when they
    were played, the advantages (normalised already) and returns; ``clip`` bounds the ratio and
    the value's change. The trainer's loss is ``policy_loss - ent_coef * entropy + vf_coef *
    value_loss``."""
    torch = _torch()
    logp, entropy = masked_log_probs(logits, valid)
    log_ratio = logp.gather(1, rows[:, None])[:, 0] - old_logp
    ratio = log_ratio.exp()
    policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip)).mean()
    v_clipped = old_value + (value - old_value).clamp(-clip, clip)
    value_loss = 0.5 * torch.max((value - returns) ** 2, (v_clipped - returns) ** 2).mean()
    return LossTerms(logp, log_ratio, ratio, policy_loss, value_loss, entropy.mean())


def kl_from(anchor_logp: Any, logp: Any, valid: Any) -> Any:
    """``KL(anchor || policy)`` per decision over the legal rows ``(B,)``, from both
    distributions' log-probabilities ``(B, K)``."""
    torch = _torch()
    terms = legal_exp(anchor_logp, valid) * (anchor_logp - logp)
    return torch.where(valid, terms, torch.zeros_like(terms)).sum(dim=-1)


def gae_advantages(
    rewards: Any, values: Any, dones: Any, next_value: Any, next_done: Any, gamma: float,
    lam: float,
) -> Any:  # fmt: skip
    """GAE(lambda) advantages of a rollout of ``T`` steps of ``N`` games (``(T, N)`` tensors;
    ``dones[t]``: the game started anew at step ``t``; ``next_value``, ``next_done``: after the
    last step). Each step's terms are computed for all steps at once and only the recursion runs
    step by step: the same numbers, bit for bit, as CleanRL's loop."""
    torch = _torch()
    nonterminal = 1.0 - torch.cat([dones[1:], next_done[None]])
    later = torch.cat([values[1:], next_value[None]])
    delta = rewards + gamma * later * nonterminal - values
    carry = gamma * lam * nonterminal
    advantages = torch.empty_like(rewards)
    gae = torch.zeros_like(next_value)
    for t in reversed(range(len(rewards))):
        gae = delta[t] + carry[t] * gae
        advantages[t] = gae
    return advantages


def _anchor(policy: Any) -> RowPolicy:
    """A frozen copy of ``policy`` (the cloned model PPO starts from), as a :class:`RowPolicy`."""
    import copy

    frozen = copy.deepcopy(policy)
    frozen.eval()
    for p in frozen.parameters():
        p.requires_grad_(False)
    return RowPolicy(frozen)


def minibatch_loss(
    rp: RowPolicy, packed: PackedRows, i: Any, played: Any, old_logp: Any, adv: Any,
    old_value: Any, returns: Any, s: BatchedPPOSettings, n: int | None = None,
    anchor: RowPolicy | None = None, coef: float = 0.0,
) -> tuple[Any, Any]:  # fmt: skip
    """The PPO loss of the decisions ``i`` of a packed rollout (a scalar) and its statistics
    (:data:`STAT_NAMES`, a tensor): the rows ``played`` with their log-probabilities and
    values then, the advantages ``adv`` (normalised already) and the returns, all of ``i``;
    with an ``anchor`` and ``coef > 0``, plus ``coef`` times the KL divergence from it. ``i``
    is a part of a minibatch of ``n`` decisions (default: all of it): both are weighted by its
    share, ``len(i) / n``, so the parts' sums are the minibatch's loss and statistics."""
    torch = _torch()
    k = max(1, int(packed.count.index_select(0, i).max()))  # the most rows a decision uses
    logits, valid, value = rp.forward_packed(packed, i, k)
    terms = clipped_losses(
        logits, valid, value, played, old_logp, adv, old_value, returns, s.clip_coef
    )
    loss = terms.policy_loss - s.ent_coef * terms.entropy + s.vf_coef * terms.value_loss
    bc_kl = torch.zeros(())
    if anchor is not None and coef > 0:
        with torch.no_grad():
            a_logp = masked_log_probs(anchor.forward_packed(packed, i, k)[0], valid)[0]
        bc_kl = kl_from(a_logp, terms.logp, valid).mean()
        loss = loss + coef * bc_kl
    with torch.no_grad():
        approx_kl = ((terms.ratio - 1) - terms.log_ratio).mean()
        clipfrac = ((terms.ratio - 1.0).abs() > s.clip_coef).float().mean()
        stats = (terms.policy_loss, terms.value_loss, terms.entropy, approx_kl, clipfrac, bc_kl)
    share = 1.0 if n is None else len(i) / n
    return loss * share, torch.stack(stats) * share


# --- evaluation ---------------------------------------------------------------------------------
def play_deals(
    policy: Any, variant: Variant, s: BatchedPPOSettings, deals: range, device: Any = "cpu"
) -> list[dict[str, Any]]:
    """The policy's most likely legal action (as the saved model plays) on every deal of
    ``deals`` once, ``s.eval_envs`` games at a time: one record per deal (deal, won, runs,
    steps), in deal order."""
    from gymnasium.vector import AutoresetMode

    torch = _torch()
    rp = RowPolicy(policy)
    n = min(s.eval_envs, len(deals))
    envs = make_envs(variant, s, n, autoreset_mode=AutoresetMode.DISABLED)
    queue = list(deals)
    playing = queue[:n]
    queue = queue[n:]
    obs, info = envs.reset(options={"deal": playing})
    steps = np.zeros(n, dtype=np.int64)
    active = np.ones(n, dtype=bool)
    records: list[dict[str, Any]] = []
    with torch.no_grad():
        while active.any():
            k = rows_used(obs["action_ids"])
            feats = torch.as_tensor(obs["actions"][:, :k], device=device)
            ids = torch.as_tensor(obs["action_ids"][:, :k], device=device)
            glob = torch.as_tensor(obs["globals"], device=device)
            logits, _, _ = rp.forward(feats, ids, glob)
            row = logits.argmax(dim=-1).cpu().numpy()
            actions = np.maximum(obs["action_ids"][np.arange(n), row], 0).astype(np.int64)
            obs, _, terminated, truncated, info = envs.step(np.where(active, actions, 0))
            steps += active
            done = np.flatnonzero(active & (terminated | truncated))
            if not len(done):
                continue
            for i in done.tolist():
                records.append(
                    {"deal": playing[i], "won": bool(info["is_success"][i]),
                     "runs": int(info["completed_runs"][i]), "steps": int(steps[i])}
                )  # fmt: skip
            restart = np.zeros(n, dtype=bool)
            restart[done] = True  # (an ended game cannot be stepped: an idle one replays)
            for i in done.tolist():
                if queue:
                    playing[i] = queue.pop(0)
                    steps[i] = 0
                else:
                    active[i] = False
            if active.any():
                obs, info = envs.reset(options={"reset_mask": restart, "deal": list(playing)})
    envs.close()
    records.sort(key=lambda r: r["deal"])
    return records


# --- training -----------------------------------------------------------------------------------
def _new_model(variant: Variant, s: BatchedPPOSettings) -> Any:
    """The MaskablePPO whose policy is trained (and which saves it): the cloned model of
    ``s.bc``, else a fresh :class:`~.policy.ActionSetPolicy` of width ``s.hidden``."""
    from .models import action_set_model, load_action_set_model

    if s.bc is None:
        return action_set_model(variant, hidden=s.hidden, action_rows=s.action_rows, seed=s.seed)
    side, bc_variant, bc = load_action_set_model(s.bc)
    check(bc_variant == variant, "bc", f"{s.bc} plays {bc_variant.name}, not {variant.name}")
    check(side.env.action_rows == s.action_rows, "bc",
          f"{s.bc} has {side.env.action_rows} action rows, not {s.action_rows}")  # fmt: skip
    model = action_set_model(variant, hidden=int(bc.policy.hidden), action_rows=s.action_rows,
                             seed=s.seed)  # fmt: skip
    model.policy.load_state_dict(bc.policy.state_dict())
    return model


def _sidecar(variant: Variant, s: BatchedPPOSettings, training: dict[str, Any]) -> Any:
    from .models import action_set_sidecar

    side = action_set_sidecar(variant, True, s.action_rows, training=training)
    return side.replace(reward_mode=s.reward_mode, max_episode_steps=s.max_episode_steps)


class Timer:
    """CPU and wall seconds spent in named parts of the run."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self.wall: dict[str, float] = {}

    def add(self, name: str, cpu0: float, wall0: float) -> None:
        self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - cpu0
        self.wall[name] = self.wall.get(name, 0.0) + time.perf_counter() - wall0


def train(s: BatchedPPOSettings) -> dict[str, Any]:
    """Train as ``s`` says; returns the summary (also ``summary.json``). A setting that cannot
    be used (the paths, the cloned model, the device) is a :class:`SettingsError` before
    anything is trained or written. glibc's malloc keeps the memory freed while it runs
    (:func:`~.memory.keep_freed_memory`)."""
    check_paths(s)
    with keep_freed_memory() as malloc:
        return _train(s, malloc)


def _train(s: BatchedPPOSettings, malloc: str) -> dict[str, Any]:
    torch = _torch()
    from gymnasium.vector import AutoresetMode

    from .models import model_file_path, save_model

    if s.device == "cuda" and not torch.cuda.is_available():
        raise SettingsError("device", "cuda is not available here (torch.cuda.is_available())")
    variant = s.game()
    threads, chosen = set_torch_threads(s.torch_threads)
    torch.manual_seed(s.seed)
    with setting_up("bc" if s.bc else None):
        model = _new_model(variant, s)
    device = torch.device(s.device)
    policy = model.policy.to(device)
    rp = RowPolicy(policy)
    anchor = _anchor(policy) if s.bc_coef > 0 else None
    params = list(policy.parameters())
    # fused: one kernel over every weight, not a loop over them (the training record's "serial
    # steps between the halves")
    optimizer = torch.optim.Adam(params, lr=s.learning_rate, eps=1e-5, fused=True)
    out = Path(s.out)
    with setting_up("out"):
        (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    say = (lambda *a: None) if s.no_progress else print
    say(threads_line(threads, chosen))
    say(f"malloc: {malloc}")
    row_dtype, precision = update_precision(s.precision, s.device)
    say(f"update precision: {precision}")

    N, T, K = s.num_envs, s.n_steps, s.action_rows
    # With two threads or more the games are two halves, each its own env: one half's env step
    # (compiled, without the GIL, on a second thread) runs while the policy chooses the other
    # half's actions on this one (torch on one thread meanwhile, so the two never wait on each
    # other).
    # Game i is seeded s.seed + i in either case, as one env of N games seeds it.
    pipelined = threads >= 2 and N >= 2
    # the update's minibatches are two parts: on two threads (half the threads each) if pipelined
    part_threads = max(1, threads // 2) if pipelined else threads
    cuts = [0, N // 2, N] if pipelined else [0, N]
    halves = [slice(lo, hi) for lo, hi in itertools.pairwise(cuts)]
    envs_of = [
        make_envs(variant, s, h.stop - h.start, TRAIN_DEALS, autoreset_mode=AutoresetMode.SAME_STEP)
        for h in halves
    ]
    F = envs_of[0].single_observation_space["actions"].shape[-1]
    G = envs_of[0].single_observation_space["globals"].shape[-1]
    # the rollout, on the device
    feats = torch.zeros((T, N, K, F), device=device)
    ids = torch.zeros((T, N, K), device=device)
    glob = torch.zeros((T, N, G), device=device)
    rows = torch.zeros((T, N), dtype=torch.long, device=device)
    logprobs = torch.zeros((T, N), device=device)
    values = torch.zeros((T, N), device=device)
    rewards = torch.zeros((T, N), device=device)
    dones = torch.zeros((T, N), device=device)

    obs_of = [e.reset(seed=s.seed + h.start)[0] for e, h in zip(envs_of, halves)]
    # on the CPU the rollout chooses with the compiled pass (the training guide's "The
    # rollout's choices, compiled")
    chooser = compiled_choice(policy, device, max(h.stop - h.start for h in halves), K, F, G)
    stepper = ThreadPoolExecutor(1, thread_name_prefix="ppo-env") if pipelined else None
    next_done = torch.zeros(N, device=device)
    updates = max(1, -(-s.timesteps // s.batch))
    deals = validation_deals(s.eval_deals)
    curve: list[dict[str, Any]] = []
    best: tuple[int, int] = (-1, -1)  # (wins, step) of the saved model
    timer = Timer()
    # the env's own steps, timed in the thread that runs them (the stepping thread when
    # pipelined): with "policy (rollout)" per call, which of the two bounds the rollout
    env_own = {"calls": 0, "cpu_s": 0.0, "wall_s": 0.0}
    illegal = 0
    episodes = {"games": 0, "won": 0, "runs": 0}
    global_step = 0
    t_start = time.perf_counter()
    cpu_start = time.process_time()

    def evaluate(step: int) -> None:
        nonlocal best
        c0, w0 = time.process_time(), time.perf_counter()
        policy.eval()
        recs = play_deals(policy, variant, s, deals, device)
        wins = sum(r["won"] for r in recs)
        row = {"timesteps": step, "win_rate": wins / len(recs),
               "mean_completed_runs": sum(r["runs"] for r in recs) / len(recs),
               "wall_s": round(time.perf_counter() - t_start, 1)}  # fmt: skip
        curve.append(row)
        with open(out / "eval.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(row))
            w.writeheader()
            w.writerows(curve)
        training = {"trainer": "spider_env.agents.rl.ppo", "timesteps": step,
                    "validation_deals": f"{deals.start}:{deals.stop}",
                    "validation_win_rate": row["win_rate"], "settings": asdict(s)}  # fmt: skip
        side = _sidecar(variant, s, training)
        policy.to("cpu")
        save_model(model, out / "checkpoints" / f"model_{step}.zip", side)
        if wins >= best[0]:
            best = (wins, step)
            save_model(model, out / "model.zip", side)
        policy.to(device)
        timer.add("evaluation", c0, w0)
        say(f"step {step:>10,}  validation win rate {row['win_rate']:.3f}  "
            f"runs {row['mean_completed_runs']:.2f}")  # fmt: skip

    def value_of(o: dict[str, np.ndarray]) -> Any:
        """The values of a batch of observations."""
        k = rows_used(o["action_ids"])
        with torch.no_grad():
            return rp.forward(
                torch.as_tensor(o["actions"][:, :k], device=device),
                torch.as_tensor(o["action_ids"][:, :k], device=device),
                torch.as_tensor(o["globals"], device=device),
            )[2]

    def act(t: int, h: int) -> np.ndarray:
        """Half ``h``'s actions at step ``t``, its observation and choices recorded."""
        c0, w0 = time.process_time(), time.perf_counter()
        o, g = obs_of[h], halves[h]
        # only the rows some game uses: the rest have id -1 and the packed network never
        # reads their features (a row past them keeps an older rollout's)
        k = rows_used(o["action_ids"])
        feats[t, g, :k].copy_(torch.from_numpy(o["actions"][:, :k]))
        ids[t, g].copy_(torch.from_numpy(o["action_ids"]))
        glob[t, g].copy_(torch.from_numpy(o["globals"]))
        dones[t, g] = next_done[g]
        if chooser is not None:  # written into the rollout's rows, log-probabilities and values
            r = rollout[0][t, g]
            chooser(o, rollout[3][t, g], k, r, rollout[1][t, g], rollout[2][t, g])
        else:
            with torch.no_grad():
                logits, valid, value = rp.forward(feats[t, g, :k], ids[t, g, :k], glob[t, g])
                logp = torch.log_softmax(logits, -1)
                row = sample_rows(logp, valid, uniforms[t, g])
                logprobs[t, g] = logp.gather(1, row[:, None])[:, 0]
            values[t, g] = value
            rows[t, g] = row
            r = row.cpu().numpy()
        actions = o["action_ids"][np.arange(len(r)), r].astype(np.int64)
        timer.add("policy (rollout)", c0, w0)
        return np.maximum(actions, 0)  # a game dealt with no legal action ends anyway

    def env_step(h: int, actions: np.ndarray) -> tuple[Any, ...]:
        """Half ``h``'s env step, its own time counted (one thread at a time runs it)."""
        c0, w0 = time.thread_time(), time.perf_counter()
        out = envs_of[h].step(actions)
        env_own["cpu_s"] += time.thread_time() - c0
        env_own["wall_s"] += time.perf_counter() - w0
        env_own["calls"] += 1
        return out

    def record(t: int, h: int, out: tuple[Any, ...]) -> None:
        """Half ``h``'s step ``t`` as its env returned it."""
        nonlocal illegal
        c0, w0 = time.process_time(), time.perf_counter()
        obs_of[h], reward, terminated, truncated, info = out
        g = halves[h]
        illegal += int(info["illegal_action"].sum())
        rew = torch.as_tensor(reward, dtype=torch.float32, device=device)
        ended = terminated | truncated
        cut = np.flatnonzero(truncated & ~terminated)
        if len(cut):  # bootstrap a game stopped by the step limit with its last value
            last = [info["final_obs"][i] for i in cut.tolist()]
            stacked = {key: np.stack([o[key] for o in last]) for key in last[0]}
            rew[torch.as_tensor(cut, device=device)] += s.gamma * value_of(stacked)
        rewards[t, g] = rew
        next_done[g] = torch.as_tensor(ended, dtype=torch.float32, device=device)
        if ended.any():
            fin = info["final_info"]
            for i in np.flatnonzero(ended).tolist():
                episodes["games"] += 1
                episodes["won"] += bool(fin["is_success"][i])
                episodes["runs"] += int(fin["completed_runs"][i])
        timer.add("bookkeeping", c0, w0)

    def finish(pending: tuple[int, int, Any]) -> None:
        """Wait for half ``h``'s step ``t`` under way (``pending``: ``(t, h, future)``; the
        time not hidden is the env's) and record it."""
        t, h, future = pending
        c0, w0 = time.process_time(), time.perf_counter()
        stepped = future.result()
        timer.add("env step", c0, w0)
        record(t, h, stepped)

    def part_grads(j: Any, adv: Any, n: int, coef: float) -> tuple[tuple[Any, ...], Any]:
        """The gradients of the loss of the decisions ``j``, a part of a minibatch of ``n``
        (their advantages ``adv``, normalised over the minibatch), and its statistics, both
        weighted by the part's share (:func:`minibatch_loss`)."""
        if torch.get_num_threads() != part_threads:  # (the stepping thread's own setting)
            torch.set_num_threads(part_threads)
        rows_of, logp_of, val_of, ret_of = (b.index_select(0, j) for b in per_decision)
        loss, stats = minibatch_loss(
            rp, packed, j, rows_of, logp_of, adv, val_of, ret_of, s, n, anchor, coef
        )
        return torch.autograd.grad(loss, params, allow_unused=True), stats

    def minibatch_grads(i: Any, adv: Any, coef: float) -> list[tuple[tuple[Any, ...], Any]]:
        """:func:`part_grads` of the two halves of minibatch ``i``, in order: the second on the
        stepping thread while this one computes the first when the rollout is pipelined."""
        n = len(i)
        if n < 2:
            return [part_grads(i, adv, n, coef)]
        first, second = slice(0, n // 2), slice(n // 2, n)
        other = stepper.submit(part_grads, i[second], adv[second], n, coef) if stepper else None
        mine = part_grads(i[first], adv[first], n, coef)
        return [mine, other.result() if other else part_grads(i[second], adv[second], n, coef)]

    try:
        next_eval = 0
        for update in range(updates):
            if global_step >= next_eval:
                evaluate(global_step)
                next_eval += s.eval_every
            if not s.constant_lr:
                optimizer.param_groups[0]["lr"] = s.learning_rate * (1.0 - update / updates)
            policy.eval()
            # --- rollout
            torch.set_num_threads(1 if pipelined else threads)
            uniforms = torch.rand((T, N), device=device)  # every game's draws (sample_rows)
            if chooser is not None:  # the weights now, and where it writes (NumPy views)
                chooser.refresh()
                rollout = (rows.numpy(), logprobs.numpy(), values.numpy(), uniforms.numpy())

            pending: tuple[int, int, Any] | None = None  # a half's step under way (t, h, future)
            for t in range(T):
                for h in range(len(halves)):
                    actions = act(t, h)  # meanwhile the other half's env steps
                    if stepper is None:
                        c0, w0 = time.process_time(), time.perf_counter()
                        stepped = env_step(h, actions)
                        timer.add("env step", c0, w0)
                        record(t, h, stepped)
                        continue
                    if pending is not None:
                        finish(pending)
                    pending = (t, h, stepper.submit(env_step, h, actions))
            if pending is not None:
                finish(pending)
            torch.set_num_threads(threads)
            global_step += N * T
            # --- advantages
            c0, w0 = time.process_time(), time.perf_counter()
            with torch.no_grad():
                advantages = gae_advantages(
                    rewards,
                    values,
                    dones,
                    torch.cat([value_of(o) for o in obs_of]),
                    next_done,
                    s.gamma,
                    s.gae_lambda,
                )
                returns = advantages + values
            # --- update
            policy.train()
            # the rows that stand for an action, gathered once (a minibatch takes only those)
            packed = PackedRows(feats.reshape(-1, K, F), ids.reshape(-1, K), glob.reshape(-1, G))
            b_rows, b_logp = rows.reshape(-1), logprobs.reshape(-1)
            b_adv, b_ret, b_val = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)
            per_decision = (b_rows, b_logp, b_val, b_ret)  # what a part reads of its decisions
            mb = max(1, s.batch // s.minibatches)
            # a minibatch is two parts, each its own forward and backward pass: on two threads
            # when the rollout is pipelined (torch on part_threads each), else one after the other
            torch.set_num_threads(part_threads)
            stats: dict[str, float] = {}
            with rp.extractor.rows_in(row_dtype):  # (the rollout and evaluations: float32)
                for _epoch in range(s.update_epochs):
                    order = torch.randperm(s.batch)
                    approx_kl = 0.0
                    for lo in range(0, s.batch, mb):
                        i = order[lo : lo + mb]
                        adv = b_adv.index_select(0, i)
                        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                        coef = s.bc_coef * max(0.0, 1.0 - global_step / s.bc_steps)
                        parts = minibatch_grads(i, adv, coef)
                        for param, *grads in zip(params, *(g for g, _ in parts)):
                            given = [g for g in grads if g is not None]
                            param.grad = None if not given else functools.reduce(torch.add, given)
                        torch.nn.utils.clip_grad_norm_(params, s.max_grad_norm)
                        optimizer.step()
                        stats = dict(zip(STAT_NAMES, sum(t for _, t in parts).tolist()))
                        approx_kl = stats["approx_kl"]
                    if s.target_kl and approx_kl > s.target_kl:
                        break
            torch.set_num_threads(threads)
            if not all(np.isfinite(list(stats.values()))):
                raise FloatingPointError(f"update {update}: a loss is not finite: {stats}")
            timer.add("update", c0, w0)
            if (update + 1) % 10 == 0 or update == updates - 1:
                cpu = time.process_time() - cpu_start
                say(f"step {global_step:>10,}  {global_step / cpu:,.0f} steps/CPU-s  "
                    f"games {episodes['games']:,} won {episodes['won']:,}  "
                    + "  ".join(f"{k} {v:.4g}" for k, v in stats.items()))  # fmt: skip
        evaluate(global_step)
    finally:  # the envs and the stepping thread, also when training fails
        for e in envs_of:
            e.close()
        if stepper is not None:
            stepper.shutdown()
    wall = time.perf_counter() - t_start
    cpu = time.process_time() - cpu_start
    train_cpu = sum(v for k, v in timer.cpu.items() if k != "evaluation")
    train_wall = sum(v for k, v in timer.wall.items() if k != "evaluation")
    summary = {
        "variant": variant.name,
        "timesteps": global_step,
        "model": str(model_file_path(out / "model.zip")),
        "checkpoint": str(out / "model.zip"),
        "chosen_at": best[1],
        "validation_win_rate": best[0] / len(deals),
        "illegal_actions": illegal,
        "training_games": episodes,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "train_steps_per_wall_s": round(global_step / max(train_wall, 1e-9)),
        "train_steps_per_cpu_s": round(global_step / max(train_cpu, 1e-9)),
        "torch_threads": threads,
        "torch_threads_chosen": chosen,
        "malloc": malloc,
        "update_precision": precision,
        "cpu_s_by_part": {k: round(v, 1) for k, v in timer.cpu.items()},
        "wall_s_by_part": {k: round(v, 1) for k, v in timer.wall.items()},
        "rollout_sides": {  # per env step of a part of the games: which side bounds the rollout
            "calls": env_own["calls"],
            "games_per_call": N / len(halves),
            "env_cpu_s": round(env_own["cpu_s"], 3),
            "env_wall_s": round(env_own["wall_s"], 3),
            "policy_wall_s": round(timer.wall.get("policy (rollout)", 0.0), 3),
        },
        "last_update": stats,
        "settings": asdict(s),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


__all__ = [
    "DEVICES",
    "MASKED_LOGIT",
    "STAT_NAMES",
    "BatchedPPOSettings",
    "CompiledChoice",
    "LossTerms",
    "RowPolicy",
    "clipped_losses",
    "compiled_choice",
    "gae_advantages",
    "kl_from",
    "make_envs",
    "masked_entropy",
    "masked_log_probs",
    "minibatch_loss",
    "play_deals",
    "rows_used",
    "sample_rows",
    "train",
]
