"""RLlib's PPO learner over spider-env's row layout, its batch made from arrays (the ``rllib``
extra).

Before a PPO update, RLlib's learner turns the sampled episode chunks into a batch through its
connector pieces: ``AddOneTsToEpisodesAndTruncate`` lengthens every chunk by a copy of its last
step (the step whose value bootstraps the returns, out of the loss) by appending to each of its
arrays; :class:`~.rllib_runner.EvenRows` gives every chunk the same rows; the next pieces add
each chunk's columns to per-episode lists, terminal flags item by item; and
``BatchIndividualItems`` concatenates them: a copy of every array more than needed, and Python
work per chunk and per step (the training record, research/rl/README.md, has the measurements).

:class:`EpisodesToBatch` makes the same batch, column by column, dtype by dtype and in the same
order, in one pass: each column written once into an array of the batch's length, the
observations cut or padded to the rows any chunk uses as they are copied. It leaves the
episodes as those pieces leave what is read of them after (each chunk's id with its index, its
length one more, a chunk that did not end marked truncated), without copying their arrays to
lengthen them: the pipeline's last pieces read the batch and only the chunks' lengths.
Episodes it cannot batch so (multi-agent episodes, a stateful module, observations that are not
one array, a batch already begun) go through RLlib's pieces, unchanged.

Each epoch RLlib's minibatch iterator shuffles the batch (``SampleBatch.shuffle``), indexing
every torch column with a NumPy permutation (``v[permutation]``), which goes through torch's
general indexing, slower than ``index_select`` over the observations. :class:`GatherShuffledBatch`
draws the same permutation and moves the rows with ``index_select``: the same batch.

:class:`RowsPPOLearner` is RLlib's torch PPO learner with those pieces replaced by
:class:`EpisodesToBatch` and its train batches shuffled as :class:`GatherShuffledBatch`; the
same batches and weights, bit for bit. :func:`~.rllib.ppo_config` sets it for
``obs_mode="rows"``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.connectors.common.numpy_to_tensor import NumpyToTensor
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.policy.sample_batch import MultiAgentBatch, SampleBatch

from .rllib import resize_rows, rows_used, rows_width, width_rows
from .rllib_runner import resize_logits

#: What ``AddOneTsToEpisodesAndTruncate`` tells the pieces after it (RLlib's key).
LOSS_MASK_ADDED = "_added_loss_mask_for_valid_episode_ts"


class EpisodesToBatch(ConnectorV2):
    """RLlib's learner pieces from ``AddOneTsToEpisodesAndTruncate`` to ``BatchIndividualItems``
    (``fallback``, a list of pieces, in order) in one pass over arrays (module docstring)."""

    def __init__(
        self,
        input_observation_space: Any = None,
        input_action_space: Any = None,
        *,
        fallback: list[ConnectorV2] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self.fallback = list(fallback or [])

    def arrays(self, rl_module: Any, batch: dict[str, Any], episodes: list[Any]) -> str | None:
        """``None`` if ``episodes`` can be batched from arrays, else why not."""
        if batch:
            return "a batch already begun"
        if not episodes:
            return "no episodes"
        if not all(type(e) is SingleAgentEpisode and e.is_numpy for e in episodes):
            return "episodes other than numpy'd single-agent ones"
        if not all(e.module_id is None for e in episodes):
            return "episodes of a multi-agent run"
        if DEFAULT_MODULE_ID not in rl_module or rl_module[DEFAULT_MODULE_ID].is_stateful():
            return "no default module, or a stateful one"
        if any(not isinstance(e.observations.data, np.ndarray) for e in episodes):
            return "observations that are not one array"
        if any(not _is_rows(e.observations.data) for e in episodes):
            return "observations not of obs_mode='rows'"
        keys = list(episodes[0].extra_model_outputs)
        if any(list(e.extra_model_outputs) != keys for e in episodes):
            return "episodes with different model outputs"
        if any(len(e) == 0 for e in episodes):
            return "an empty chunk"
        return None

    def __call__(
        self,
        *,
        rl_module: Any,
        batch: dict[str, Any],
        episodes: list[Any],
        explore: bool | None = None,
        shared_data: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        if self.arrays(rl_module, batch, episodes) is not None:
            for piece in self.fallback:
                batch = piece(rl_module=rl_module, batch=batch, episodes=episodes,
                              explore=explore, shared_data=shared_data, **kwargs)  # fmt: skip
            return batch
        shared = shared_data if shared_data is not None else {}
        lens = np.array([len(e) for e in episodes], np.int64)
        ends = np.cumsum(lens + 1)  # each chunk's rows end here (its steps, then the extra one)
        starts = ends - lens - 1
        total = int(ends[-1])
        last = ends - 2  # each chunk's last real step
        out: dict[str, Any] = {}
        # AddOneTsToEpisodesAndTruncate: the loss mask and the flags, the extra step out of both
        mask = np.ones(total, bool)
        mask[ends - 1] = False
        out[Columns.LOSS_MASK] = mask
        terminated = np.zeros(total, bool)
        terminated[last] = [e.is_terminated for e in episodes]
        truncated = np.zeros(total, bool)
        truncated[last] = [e.is_truncated or not e.is_done for e in episodes]
        out[Columns.TERMINATEDS], out[Columns.TRUNCATEDS] = terminated, truncated
        # EvenRows and AddObservationsFromEpisodesToBatch: every observation of the chunk, cut
        # or padded to the most rows any chunk uses, into the batch's array
        n_list = lens.tolist()
        obs = [e.get_observations(slice(0, n + 1)) for e, n in zip(episodes, n_list)]
        rows = max(1, max(rows_used(e.observations.data) for e in episodes))
        first = obs[0]
        out[Columns.OBS] = o = np.empty((total, rows_width(rows)), first.dtype)
        for a, b, x in zip(starts.tolist(), ends.tolist(), obs):
            if width_rows(x.shape[-1]) == rows:
                o[a:b] = x
            else:
                resize_rows(x, rows, out=o[a:b], used=rows)
        # AddColumnsFromEpisodesToTrainBatch: actions, rewards (0 at the extra step) and the
        # model's outputs, the extra step's a copy of the last
        actions = [e.get_actions(slice(0, n)) for e, n in zip(episodes, n_list)]
        out[Columns.ACTIONS] = _with_extra_step(actions, starts, total)
        rewards = [e.get_rewards(slice(0, n)) for e, n in zip(episodes, n_list)]
        out[Columns.REWARDS] = _with_extra_step(rewards, starts, total, fill=0.0)
        for key in episodes[0].extra_model_outputs:
            parts = [e.get_extra_model_outputs(key=key, indices=slice(0, n))
                     for e, n in zip(episodes, n_list)]  # fmt: skip
            if key == Columns.ACTION_DIST_INPUTS:
                parts = [resize_logits(z, rows) for z in parts]
            out[key] = _with_extra_step(parts, starts, total)
        # what those pieces leave of the episodes that is read after: ids, lengths, flags
        for i, e in enumerate(episodes):
            e.id_ += "_" + str(i)
            e.t += 1
            if not e.is_done:
                e.is_truncated = True
        shared[LOSS_MASK_ADDED] = True
        shared["memorized_map_structure"] = [
            e.id_ for e, n in zip(episodes, n_list) for _ in range(n + 1)
        ]
        return {DEFAULT_MODULE_ID: out}


def _is_rows(obs: np.ndarray) -> bool:
    """Whether ``obs`` ``(..., L)`` are ``obs_mode="rows"`` observations."""
    try:
        width_rows(obs.shape[-1])
    except ValueError:
        return False
    return obs.ndim == 2


def _with_extra_step(
    parts: list[np.ndarray], starts: np.ndarray, total: int, fill: float | None = None
) -> np.ndarray:
    """The chunks' ``parts`` one after another, each followed by its extra step: a copy of its
    last item, or ``fill`` (in the dtype RLlib's batching gives an array with that Python float
    appended)."""
    first = parts[0]
    dtype = first.dtype if fill is None else np.result_type(first.dtype, np.asarray([fill]).dtype)
    out = np.empty((total, *first.shape[1:]), dtype)
    for a, p in zip(starts.tolist(), parts):
        n = len(p)
        out[a : a + n] = p
        out[a + n] = p[-1] if fill is None else fill
    return out


class GatherShuffledBatch(SampleBatch):
    """RLlib's ``SampleBatch`` whose :meth:`shuffle` draws the same permutation
    (``np.random.permutation`` of its rows, once) and moves every tensor column's rows with
    ``index_select``: the same batch as RLlib's ``v[permutation]``, which indexes a torch tensor
    with a NumPy array through torch's general indexing (module docstring)."""

    def shuffle(self) -> SampleBatch:
        columns = dict(self)
        if (
            self.get(SampleBatch.SEQ_LENS) is not None
            or Columns.INFOS in columns
            or not all(isinstance(v, (torch.Tensor, np.ndarray)) for v in columns.values())
        ):
            return super().shuffle()  # time-major, infos or nested columns: RLlib's own
        permutation = np.random.permutation(self.count)
        index = torch.from_numpy(permutation)
        for key, v in columns.items():
            if isinstance(v, torch.Tensor):
                columns[key] = v.index_select(0, index.to(v.device))
            else:
                columns[key] = v[permutation]
        self.update(columns)
        self.intercepted_values = {}
        return self


class RowsPPOLearner(PPOTorchLearner):
    """RLlib's torch PPO learner whose learner connector batches episodes with
    :class:`EpisodesToBatch`, and whose train batches shuffle as :class:`GatherShuffledBatch`
    (module docstring)."""

    def _make_batch_if_necessary(self, training_data: Any) -> Any:
        batch = super()._make_batch_if_necessary(training_data)
        if isinstance(batch, MultiAgentBatch):
            for b in batch.policy_batches.values():
                if type(b) is SampleBatch:
                    b.__class__ = GatherShuffledBatch  # the same object, the shuffle replaced
        return batch

    def build(self) -> None:
        super().build()
        pipe = self._learner_connector
        if pipe is None:
            return
        pieces = pipe.connectors
        cut = next((i for i, c in enumerate(pieces) if isinstance(c, NumpyToTensor)), None)
        if cut is None or cut == 0:
            return
        piece = EpisodesToBatch(
            pieces[0].input_observation_space, pieces[0].input_action_space,
            fallback=pieces[:cut],
        )  # fmt: skip
        pipe.connectors = [piece, *pieces[cut:]]


__all__ = ["EpisodesToBatch", "GatherShuffledBatch", "RowsPPOLearner"]
