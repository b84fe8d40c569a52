"""The action-set policy: one shared network scores every legal action's features.

:class:`ActionSetPolicy` is a ``MaskableActorCriticPolicy`` for sb3-contrib's ``MaskablePPO``
over the ``obs_mode="actions"`` observation (:mod:`spider_env.observation.actions`):

* **actor**: the same MLP embeds each action's row (its features and the position's globals)
  and a linear head scores it; the scores go to the actions' ids, so the logits over all of
  Spider's actions are a function of *what each move does*, not of its id. Actions without a
  row get a logit of ``-1e8`` (the mask removes the illegal ones anyway);
* **critic**: a pooled summary of the embeddings (mean and max over the legal actions) with the
  globals, through one hidden layer, gives the value.

Everything else (distribution, masking, saving and loading) is sb3-contrib's. torch and
sb3-contrib are the ``train`` extra, imported here only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from spider_env.core.checks import check_int, check_number

from .action_set_net import NO_ROW_LOGIT, ActionSetLayers


class ActionSetExtractor(BaseFeaturesExtractor, ActionSetLayers):
    """Dict observation -> ``[logits over all actions, value latent]`` (one flat tensor); the
    network is :class:`~.action_set_net.ActionSetLayers` (shared with the other trainers)."""

    def __init__(
        self,
        observation_space: spaces.Dict,
        n_actions: int,
        hidden: int = 128,
        value_hidden: int = 128,
    ) -> None:
        super().__init__(observation_space, features_dim=n_actions + value_hidden)
        f = int(np.prod(observation_space["actions"].shape or (0,))) // int(
            (observation_space["action_ids"].shape or (1,))[0]
        )
        g = int(np.prod(observation_space["globals"].shape or (0,)))
        self._build_layers(f, g, n_actions, hidden, value_hidden)

    def forward(self, obs: dict[str, th.Tensor]) -> th.Tensor:
        scores, valid, latent_vf = self.slot_scores(obs)
        return th.cat((self.logits_by_id(scores, valid, obs["action_ids"]), latent_vf), dim=-1)


class _Split(nn.Module):
    """The "MLP extractor": splits the extractor's output into actor logits and value latent."""

    def __init__(self, n_actions: int, value_hidden: int) -> None:
        super().__init__()
        self.latent_dim_pi = n_actions
        self.latent_dim_vf = value_hidden

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        return features[:, : self.latent_dim_pi]

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        return features[:, self.latent_dim_pi :]


class ActionSetPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy over per-action features (see the module docstring).

    ``policy_kwargs``: ``hidden`` (width of the shared action network, 128) and
    ``value_hidden`` (the value layer, 128); the usual optimizer arguments.
    """

    def __init__(
        self,
        observation_space: spaces.Dict,
        action_space: spaces.Discrete,
        lr_schedule: Any,
        hidden: int = 128,
        value_hidden: int = 128,
        **kwargs: Any,
    ) -> None:
        if (
            not isinstance(observation_space, spaces.Dict)
            or "actions" not in observation_space.spaces
        ):
            raise ValueError("ActionSetPolicy needs the obs_mode='actions' observation")
        self.hidden = hidden
        self.value_hidden = value_hidden
        kwargs.pop("features_extractor_class", None)
        kwargs.pop("features_extractor_kwargs", None)
        kwargs.setdefault("ortho_init", False)
        super().__init__(
            observation_space,
            action_space,
            lr_schedule,
            features_extractor_class=ActionSetExtractor,
            features_extractor_kwargs={
                "n_actions": int(action_space.n),
                "hidden": hidden,
                "value_hidden": value_hidden,
            },
            **kwargs,
        )

    def _build_mlp_extractor(self) -> None:
        n = int(self.action_space.n)  # type: ignore[attr-defined]
        self.mlp_extractor = _Split(n, self.value_hidden)  # type: ignore[assignment]

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the extractor's first n outputs are the logits
        self.optimizer = self.optimizer_class(
            self.parameters(),
            lr=lr_schedule(1),  # type: ignore[call-arg]
            **self.optimizer_kwargs,
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.pop("features_extractor_class", None)
        data.pop("features_extractor_kwargs", None)
        data.update(hidden=self.hidden, value_hidden=self.value_hidden)
        return data


def _batch(data: Any, index: Any, slots: int) -> tuple[dict[str, th.Tensor], th.Tensor, th.Tensor]:
    """A training batch of a :class:`~spider_env.agents.rl.imitation.BCDataset`, rows padded
    to ``slots``."""
    k = data.actions.shape[1]
    feats = th.zeros((len(index), slots, data.actions.shape[2]))
    feats[:, :k] = th.from_numpy(data.actions[index].astype("float32"))
    ids = th.full((len(index), slots), -1.0)
    ids[:, :k] = th.from_numpy(data.action_ids[index].astype("float32"))
    obs = {"actions": feats, "action_ids": ids, "globals": th.from_numpy(data.globals[index])}
    return obs, th.from_numpy(data.target[index]), th.from_numpy(data.returns[index])


def score_targets(scores: th.Tensor, temperature: float) -> tuple[th.Tensor, th.Tensor]:
    """``(distribution (B, K), has_scores (B,))`` from a teacher's row scores (``nan``: not
    scored): a softmax of the scored rows' scores over ``temperature``, 0 on the others; a
    decision with no scored row has a zero row and ``has_scores`` False."""
    scored = th.isfinite(scores)
    z = th.where(scored, scores / temperature, th.full_like(scores, -th.inf))
    has = scored.any(dim=1)
    dist = th.softmax(th.where(has[:, None], z, th.zeros_like(z)), dim=1)
    return th.where(scored, dist, th.zeros_like(dist)), has


def behaviour_clone(
    policy: ActionSetPolicy,
    train: Any,
    valid: Any | None = None,
    *,
    epochs: int = 6,
    batch_size: int = 512,
    lr: float = 1e-3,
    value_coef: float = 0.05,
    soft: float = 0.0,
    temperature: float = 0.01,
    seed: int = 0,
    log: Any = None,
) -> list[dict[str, float]]:
    """Train ``policy`` to play the demonstrations' actions (cross-entropy over the legal
    actions of the decisions marked ``imitate``) and their returns (mean squared error, scaled
    by ``value_coef``, on every decision). Returns one dict per epoch (losses, and the share of
    ``valid``'s cloned decisions where the policy's most likely action is the teacher's).

    ``soft`` > 0 (a data set with the teacher's ``scores``): at a decision the teacher scored,
    the target is ``1 - soft`` of its choice and ``soft`` of :func:`score_targets` (a softmax
    of its scores over ``temperature``).
    """
    check_int("epochs", epochs, 1)
    check_int("batch_size", batch_size, 1)
    check_number("lr", lr, 0, low_open=True)
    check_number("soft", soft, 0, 1)
    check_number("temperature", temperature, 0, low_open=True)
    if soft > 0 and getattr(train, "scores", None) is None:
        raise ValueError("soft targets need a data set with the teacher's scores")
    if len(train) == 0:
        raise ValueError("no decisions to clone")
    gen = th.Generator().manual_seed(seed)
    ext = policy.features_extractor
    assert isinstance(ext, ActionSetExtractor)
    params = list(ext.parameters()) + list(policy.value_net.parameters())
    opt = th.optim.Adam(params, lr=lr)
    slots = policy.observation_space["actions"].shape[0]  # type: ignore[index]
    history = []
    n = len(train)
    steps = max(1, (n + batch_size - 1) // batch_size) * epochs
    sched = th.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    imitate_all = th.from_numpy(train.imitate)
    for epoch in range(epochs):
        policy.train()
        order = th.randperm(n, generator=gen).numpy()
        tot = {"policy_loss": 0.0, "value_loss": 0.0}
        batches = 0
        for lo in range(0, n, batch_size):
            idx = order[lo : lo + batch_size]
            obs, target, ret = _batch(train, idx, slots)
            scores, valid_rows, latent = ext.slot_scores(obs)
            scores = scores.masked_fill(~valid_rows, NO_ROW_LOGIT)
            ce = nn.functional.cross_entropy(scores, target, reduction="none")
            if soft > 0:
                teacher = th.full((len(idx), scores.shape[1]), th.nan)
                teacher[:, : train.scores.shape[1]] = th.from_numpy(train.scores[idx])
                dist, has = score_targets(teacher, temperature)
                soft_ce = -(dist * th.log_softmax(scores, dim=1)).sum(dim=1)
                ce = th.where(has, (1 - soft) * ce + soft * soft_ce, ce)
            w = imitate_all[idx].float()
            pl = (ce * w).sum() / w.sum().clamp(min=1.0)
            vl = nn.functional.mse_loss(policy.value_net(latent).squeeze(-1), ret)
            loss = pl + value_coef * vl
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            tot["policy_loss"] += pl.item()
            tot["value_loss"] += vl.item()
            batches += 1
        row = {k: v / batches for k, v in tot.items()}
        row["epoch"] = epoch + 1
        if valid is not None:
            row.update(bc_accuracy(policy, valid))
        history.append(row)
        if log is not None:
            log(row)
    policy.eval()
    return history


def bc_accuracy(policy: ActionSetPolicy, data: Any, batch_size: int = 2048) -> dict[str, float]:
    """Share of ``data``'s cloned decisions where ``policy`` ranks the teacher's action first
    (or an action with exactly the same features, which it cannot tell apart), and the value
    loss on all of them."""
    ext = policy.features_extractor
    assert isinstance(ext, ActionSetExtractor)
    slots = policy.observation_space["actions"].shape[0]  # type: ignore[index]
    hits = total = 0
    vl = 0.0
    policy.eval()
    with th.no_grad():
        for lo in range(0, len(data), batch_size):
            idx = list(range(lo, min(lo + batch_size, len(data))))
            obs, target, ret = _batch(data, idx, slots)
            scores, valid_rows, latent = ext.slot_scores(obs)
            pick = scores.masked_fill(~valid_rows, NO_ROW_LOGIT).argmax(dim=1)
            w = th.from_numpy(data.imitate[idx])
            rows = th.arange(len(idx))
            # a row with the same features as the teacher's is the same choice to the policy
            same = (obs["actions"][rows, pick] == obs["actions"][rows, target]).all(dim=1)
            hits += int(((pick == target) | same)[w].sum())
            total += int(w.sum())
            vl += float(((policy.value_net(latent).squeeze(-1) - ret) ** 2).sum())
    return {"valid_accuracy": hits / max(1, total), "valid_value_loss": vl / max(1, len(data))}


__all__ = [
    "NO_ROW_LOGIT",
    "ActionSetExtractor",
    "ActionSetPolicy",
    "bc_accuracy",
    "behaviour_clone",
    "score_targets",
]
