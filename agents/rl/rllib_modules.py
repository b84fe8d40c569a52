"""RLlib RLModules with action masking for Spider (the ``rllib`` extra; imports ray and torch).

They read the mask from the observation (``"action_mask"``, beside the observation proper, as
:mod:`.rllib`'s env gives it, or the row flags of ``obs_mode="rows"``) and give every illegal
action the logit ``FLOAT_MIN``, so RLlib's categorical never samples one, in training and in
inference alike; PPO's value comes from
:class:`~ray.rllib.core.rl_module.apis.ValueFunctionAPI`. Their action distribution is
:class:`MaskedCategorical`: the batched PPO's over the legal actions, RLlib's interface.

* :class:`ActionRowsRLModule`: the action-set network over ``obs_mode="rows"`` (the default),
  whose action is a row of the observation: the same parameters as the next;
* :class:`ActionSetRLModule`: the action-set network (:class:`~.action_set_net.ActionSetNet`)
  over ``obs_mode="actions"`` with ``mask_in_obs=True``; its parameters are named as in
  sb3-contrib's ``ActionSetPolicy`` (``features_extractor.*``, ``value_net.*``), so that
  :func:`~.rllib.export_model` saves it as a model ``spider-env evaluate --agent`` plays;
* :class:`FlatRLModule`: two MLPs (actor and critic, ``tanh``) over the ``"flat"`` observation,
  named as SB3's ``MlpPolicy`` (``mlp_extractor.policy_net.*``, ``action_net.*``...), also
  exported as a MaskablePPO model.

``model_config``: ``{"hidden": H}`` (the width of every hidden layer, 64 by default) and
``"precision"`` (the batched PPO's ``precision``: ``auto``, ``float32``, the default, or
``bfloat16``): the number format of the action-set network's row embeddings in the learner's
passes (``forward_train``), resolved where the module runs; sampling and the values of the
advantages stay float32.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import torch as th
from gymnasium import spaces
from ray.rllib.core.columns import Columns
from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN
from torch import nn

from spider_env.core.checks import check_int
from spider_env.observation.spaces import N_ACTION_FEATURES, N_GLOBAL_FEATURES

from .action_set_net import ActionSetLayers, ActionSetNet

DEFAULT_HIDDEN = 64
MASK = "action_mask"
OBSERVATIONS = "observations"  # the flat observation's key beside the mask


def _hidden(module: TorchRLModule) -> int:
    config = module.model_config or {}
    hidden = config.get("hidden", DEFAULT_HIDDEN) if isinstance(config, dict) else DEFAULT_HIDDEN
    return check_int("model_config['hidden']", hidden, 1)


def _dict_space(module: TorchRLModule, keys: tuple[str, ...], obs_mode: str) -> spaces.Dict:
    space = module.observation_space
    if not isinstance(space, spaces.Dict) or not set(keys) <= set(space.spaces):
        raise ValueError(
            f"{type(module).__name__} needs the observation of spider-env's RLlib env with "
            f"obs_mode={obs_mode!r}: a Dict with keys {sorted(keys)}, got {space}"
        )
    n = _n_actions(module)
    if space[MASK].shape != (n,):
        raise ValueError(f"the action mask's shape {space[MASK].shape} is not ({n},)")
    return space


def _n_actions(module: TorchRLModule) -> int:
    space = module.action_space
    if not isinstance(space, spaces.Discrete):
        raise ValueError(f"{type(module).__name__} needs a Discrete action space, got {space}")
    return int(space.n)


def masked(logits: th.Tensor, mask: th.Tensor) -> th.Tensor:
    """``logits`` with ``FLOAT_MIN`` wherever ``mask`` is 0."""
    return logits.masked_fill(mask == 0, FLOAT_MIN)


def _select(obs: Any, index: th.Tensor) -> Any:
    """The observations ``index`` of ``obs`` (a tensor or a dict of them, batch first)."""
    if isinstance(obs, dict):
        return {key: _select(value, index) for key, value in obs.items()}
    return th.as_tensor(obs).index_select(0, index)


class MaskedCategorical(TorchCategorical):
    """RLlib's categorical over the modules' logits, whose illegal actions are ``FLOAT_MIN``,
    computed as the batched PPO computes its own (:func:`~.ppo.masked_log_probs`,
    :func:`~.ppo.sample_rows`): the same distribution, whose log-probabilities, entropy and KL
    sum over the legal actions only, and whose draw inverts the CDF at one uniform number per
    decision from torch's generator (RLlib's ``TorchCategorical`` draws with
    ``torch.multinomial``). Torch's ``Categorical`` is never built: its normalisation takes a
    ``logsumexp`` over the masked logits on a slow path (``research/rl/rllib_parts.py --draws``
    times the two; the training guide has the figures). The entropy is computed when asked (the
    loss). Logits only (no ``probs``); no reparameterised sample."""

    def __init__(self, logits: th.Tensor | None = None, probs: th.Tensor | None = None) -> None:
        if logits is None or probs is not None:
            raise ValueError("MaskedCategorical takes logits (FLOAT_MIN where illegal) only")
        self.logits, self.probs, self._one_hot = logits, None, None
        self.valid = logits > FLOAT_MIN
        self.log_probs = th.log_softmax(logits, dim=-1)
        self._entropy: th.Tensor | None = None  # when asked (the loss), not to sample

    def logp(self, value: Any, **kwargs: Any) -> Any:
        index, logp = th.broadcast_tensors(value.long().unsqueeze(-1), self.log_probs)
        return logp.gather(-1, index[..., :1]).squeeze(-1)

    def entropy(self, **kwargs: Any) -> Any:
        if self._entropy is None:
            from .ppo import masked_entropy

            self._entropy = masked_entropy(self.log_probs, self.valid)
        return self._entropy

    def kl(self, other: Any, **kwargs: Any) -> Any:
        """``KL(self || other)`` over the legal actions of ``self`` (:func:`~.ppo.kl_from`)."""
        from .ppo import kl_from

        return kl_from(self.log_probs, other.log_probs, self.valid)

    def sample(self, *, sample_shape: Any = None, **kwargs: Any) -> Any:
        from .ppo import sample_rows

        if sample_shape:
            raise ValueError(f"MaskedCategorical draws one sample per decision, not {sample_shape}")
        k = self.logits.shape[-1]
        logp, valid = self.log_probs.reshape(-1, k), self.valid.reshape(-1, k)
        u = th.rand(len(logp), device=logp.device)
        return sample_rows(logp, valid, u, valid_first=False).reshape(self.logits.shape[:-1])

    def rsample(self, *args: Any, **kwargs: Any) -> th.Tensor:
        raise NotImplementedError("MaskedCategorical has no reparameterised sample")


class _MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """What the modules share: masked logits, the value from the latent of the same pass,
    :class:`MaskedCategorical`."""

    def get_inference_action_dist_cls(self) -> type[MaskedCategorical]:
        return MaskedCategorical

    def get_exploration_action_dist_cls(self) -> type[MaskedCategorical]:
        return MaskedCategorical

    def get_train_action_dist_cls(self) -> type[MaskedCategorical]:
        return MaskedCategorical

    def _logits_latent(self, obs: Any) -> tuple[th.Tensor, th.Tensor]:
        raise NotImplementedError

    def _masked_logits_latent(self, obs: Any) -> tuple[th.Tensor, th.Tensor]:
        logits, latent = self._logits_latent(obs)
        return masked(logits, obs[MASK]), latent

    def _value(self, latent: th.Tensor) -> th.Tensor:
        raise NotImplementedError

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        logits, latent = self._masked_logits_latent(batch[Columns.OBS])
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.VF_PREDS: self._value(latent)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        layers = getattr(self, "features_extractor", None)
        with (
            layers.rows_in(self._train_row_dtype())
            if isinstance(layers, ActionSetLayers)
            else nullcontext()
        ):
            logits, latent = self._masked_logits_latent(batch[Columns.OBS])
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: latent}

    def _train_row_dtype(self) -> th.dtype | None:
        """The row embeddings' number format in training (``model_config["precision"]`` on
        the device of this module's weights; resolved once per device)."""
        from .ppo import update_precision

        device = next(self.parameters()).device.type
        chosen: dict[str, th.dtype | None] = self.__dict__.setdefault("_row_dtypes", {})
        if device not in chosen:
            config = self.model_config if isinstance(self.model_config, dict) else {}
            chosen[device] = update_precision(config.get("precision", "float32"), device)[0]
        return chosen[device]

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> th.Tensor:
        """The values of ``batch``'s observations (from ``embeddings``, the latent of the
        learner's pass, if given). A batch whose steps carry the values the env runner's pass
        gave them (``VF_PREDS``, which :meth:`_forward` adds to every step sampled) takes
        those, and computes only those of the steps it has none for: RLlib's extra step at
        the end of each episode chunk (``LOSS_MASK`` false), whose value bootstraps the
        returns. That is how PPO's advantages are computed here (RLlib's GAE connector asks
        for every step's value). The values are the learner's: PPO samples and updates in
        turn, the runners' weights those of the last update (as the batched PPO's rollout
        gives its values)."""
        if embeddings is not None:
            return self._value(embeddings)
        obs = batch[Columns.OBS]
        sampled = batch.get(Columns.VF_PREDS)
        if sampled is None:
            return self._value(self._logits_latent(obs)[1])
        values = th.as_tensor(sampled).clone()
        mask = batch.get(Columns.LOSS_MASK)
        if mask is not None:
            extra = th.as_tensor(mask).logical_not().nonzero()[:, 0]
            if len(extra):
                some = _select(obs, extra)
                values[extra] = self._value(self._logits_latent(some)[1]).to(values.dtype)
        return values


class ActionSetRLModule(_MaskedPPOModule):
    """The action-set network for RLlib's PPO (see the module docstring)."""

    def setup(self) -> None:
        space = _dict_space(self, ("actions", "action_ids", "globals", MASK), "actions")
        hidden = _hidden(self)
        _, f = space["actions"].shape  # type: ignore[misc]
        g = int(space["globals"].shape[0])  # type: ignore[index]
        self.features_extractor = ActionSetNet(int(f), g, _n_actions(self), hidden, hidden)
        self.value_net = nn.Linear(hidden, 1)

    def _logits_latent(self, obs: dict[str, th.Tensor]) -> tuple[th.Tensor, th.Tensor]:
        return self.features_extractor(obs, packed=True)

    def _value(self, latent: th.Tensor) -> th.Tensor:
        return self.value_net(latent).squeeze(-1)


class ActionRowsRLModule(_MaskedPPOModule):
    """The action-set network over ``obs_mode="rows"``: the observation one array per game
    (:func:`~.rllib.split_rows`), the action a row; a row's logit is its score, ``FLOAT_MIN``
    where the row holds no action. The same parameters as :class:`ActionSetRLModule`."""

    def setup(self) -> None:
        from .rllib import rows_width

        k = _n_actions(self)
        space = self.observation_space
        if not isinstance(space, spaces.Box) or space.shape != (rows_width(k),):
            raise ValueError(
                f"{type(self).__name__} needs the observation of spider-env's RLlib env with "
                f"obs_mode='rows' of {k} rows: a Box of shape ({rows_width(k)},), got {space}"
            )
        hidden = _hidden(self)
        self.features_extractor = ActionSetNet(N_ACTION_FEATURES, N_GLOBAL_FEATURES, k, hidden,
                                               hidden)  # fmt: skip
        self.value_net = nn.Linear(hidden, 1)
        self._rows = k

    def _masked_logits_latent(self, obs: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        from .rllib import split_rows, width_rows

        k = width_rows(obs.shape[-1])  # fewer rows than the space's in training: ArrayEnvRunner
        if k > self._rows:
            raise ValueError(f"an observation of {k} rows for a module of {self._rows}")
        feats, glob, flags = split_rows(obs, k)
        valid = flags > 0.5
        scores, _, latent = self.features_extractor.row_scores(feats, valid, glob, packed=True)
        return scores.masked_fill(~valid, FLOAT_MIN), latent

    def _logits_latent(self, obs: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self._masked_logits_latent(obs)

    def _value(self, latent: th.Tensor) -> th.Tensor:
        return self.value_net(latent).squeeze(-1)


class _MlpExtractor(nn.Module):
    """SB3's ``MlpExtractor`` layout: ``policy_net`` and ``value_net``, two tanh layers each."""

    def __init__(self, width: int, hidden: int) -> None:
        super().__init__()
        self.policy_net = nn.Sequential(
            nn.Linear(width, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh()
        )
        self.value_net = nn.Sequential(
            nn.Linear(width, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh()
        )


class FlatRLModule(_MaskedPPOModule):
    """Actor and critic MLPs over the flat observation (see the module docstring)."""

    def setup(self) -> None:
        space = _dict_space(self, (OBSERVATIONS, MASK), "flat")
        hidden = _hidden(self)
        width = int(space[OBSERVATIONS].shape[0])  # type: ignore[index]
        self.mlp_extractor = _MlpExtractor(width, hidden)
        self.action_net = nn.Linear(hidden, _n_actions(self))
        self.value_net = nn.Linear(hidden, 1)

    def _logits_latent(self, obs: dict[str, th.Tensor]) -> tuple[th.Tensor, th.Tensor]:
        x = obs[OBSERVATIONS]
        return self.action_net(self.mlp_extractor.policy_net(x)), self.mlp_extractor.value_net(x)

    def _value(self, latent: th.Tensor) -> th.Tensor:
        return self.value_net(latent).squeeze(-1)


__all__ = [
    "DEFAULT_HIDDEN",
    "ActionRowsRLModule",
    "ActionSetRLModule",
    "FlatRLModule",
    "MaskedCategorical",
    "masked",
]
