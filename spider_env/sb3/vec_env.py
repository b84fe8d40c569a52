"""A Stable-Baselines3 ``VecEnv`` over :class:`~spider_env.vector.SpiderVectorEnv`.

``SpiderSB3VecEnv(num_envs=N, suits=2, obs_mode="flat")`` is what ``MaskablePPO`` (sb3-contrib)
and the other SB3 algorithms train on directly: N games per compiled call, exact masks through
``env_method("action_masks")`` (how sb3-contrib's ``get_action_masks`` reads them), SB3's
step API (``dones``, a list of info dicts with ``"terminal_observation"`` and
``"TimeLimit.truncated"``, games reset inside the step that ended them). Needs
Stable-Baselines3 (the ``train`` extra); importing this module without it is an
``ImportError`` that says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

try:
    from stable_baselines3.common.vec_env import VecEnv
except ImportError as exc:  # pragma: no cover - exercised only without the train extra
    raise ImportError(
        "spider_env.sb3 needs stable-baselines3: pip install 'spider-env[train]' "
        f"(or stable-baselines3) ({exc})"
    ) from None

from spider_env.env import DEFAULT_MAX_EPISODE_STEPS, INFO_KEYS
from spider_env.vector import SpiderVectorEnv


class SpiderSB3VecEnv(VecEnv):
    """SB3's ``VecEnv`` API over a same-step-autoreset :class:`SpiderVectorEnv`.

    Build it from ``SpiderVectorEnv`` arguments (``SpiderSB3VecEnv(num_envs=8, suits=1,
    obs_mode="flat")``; ``max_episode_steps`` defaults to the registered ids' limit,
    ``DEFAULT_MAX_EPISODE_STEPS``) or wrap an existing ``SpiderVectorEnv`` made with
    ``autoreset_mode=AutoresetMode.SAME_STEP`` (``SpiderSB3VecEnv(venv=envs)``).

    - ``reset()`` uses the seeds of ``seed(s)`` (game ``i`` gets ``s + i``) and the options of
      ``set_options(...)`` once, as SB3's own vector envs do.
    - ``step_wait()`` returns ``(obs, rewards (float32), dones, infos)``; ``infos[i]`` is game
      ``i``'s ``SpiderEnv`` info (with ``is_success`` for SB3's success rate) of that step;
      for an ended game it is the info of its last step, plus ``"terminal_observation"`` and
      ``"TimeLimit.truncated"`` (truncated by the step limit and not terminated), while the
      returned observation is already the next game's.
    - ``env_method("action_masks")`` gives the ``num_envs`` masks; :meth:`action_masks` the
      ``(num_envs, A)`` array.
    """

    def __init__(
        self,
        num_envs: int = 1,
        *,
        venv: SpiderVectorEnv | None = None,
        max_episode_steps: int | None = DEFAULT_MAX_EPISODE_STEPS,
        **kwargs: Any,
    ) -> None:
        if venv is None:
            venv = SpiderVectorEnv(
                num_envs,
                max_episode_steps=max_episode_steps,
                autoreset_mode=AutoresetMode.SAME_STEP,
                **kwargs,
            )
        elif kwargs:
            raise TypeError(f"give either venv= or SpiderVectorEnv arguments, not both: {kwargs}")
        if venv.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError(
                "SB3's VecEnv API resets games inside the step that ended them: make the "
                "SpiderVectorEnv with autoreset_mode=AutoresetMode.SAME_STEP"
            )
        self.venv = venv
        self._actions: np.ndarray | None = None
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

    # --- SB3 VecEnv API ----------------------------------------------------------------------
    def reset(self) -> Any:
        seeds = list(self._seeds)
        seed: list[int | None] | None = None if all(s is None for s in seeds) else seeds
        options = self._merged_options()
        obs, info = self.venv.reset(seed=seed, options=options)
        self.reset_infos = _split(info, self.num_envs)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async(actions)")
        actions, self._actions = self._actions, None
        obs, rewards, terminated, truncated, info = self.venv.step(actions)
        dones = terminated | truncated
        infos = _split(info, self.num_envs)
        if dones.any():
            final_infos = _split(info["final_info"], self.num_envs)
            for i in np.flatnonzero(dones).tolist():
                infos[i] = final_infos[i]
                infos[i]["terminal_observation"] = info["final_obs"][i]
        time_limit = truncated & ~terminated
        for info_i, flag in zip(infos, time_limit.tolist()):
            info_i["TimeLimit.truncated"] = flag
        return obs, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        idx = list(self._get_indices(indices))
        if attr_name in ("render_mode", "variant", "n_actions"):
            return [getattr(self.venv, attr_name)] * len(idx)
        values = self.venv.get_attr(attr_name)
        return [values[i] for i in idx]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(
            f"SpiderSB3VecEnv cannot set {attr_name!r} on its games: they share one compiled "
            "batch; make a new env with the arguments you need"
        )

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.venv.action_masks()
            return [masks[i] for i in idx]
        values = self.venv.call(method_name, *method_args, **method_kwargs)
        return [values[i] for i in idx]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs

    # --- helpers -----------------------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """``(num_envs, A)`` bool array of the games' masks."""
        return self.venv.action_masks()

    def _merged_options(self) -> dict[str, Any] | None:
        opts = self._options
        if all(not o for o in opts):
            return None
        keys = {k for o in opts for k in o}
        if len(keys) != 1 or not all(opts):
            raise ValueError(
                "set_options: give every game the same one reset option (e.g. {'deal': n}), "
                f"got {opts}"
            )
        (key,) = keys
        values = [o[key] for o in opts]
        return {key: values}


def _split(info: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """SyncVectorEnv-style batched info -> one dict per game (only the keys it was given)."""
    out: list[dict[str, Any]] = [{} for _ in range(n)]
    for key in INFO_KEYS:
        if key not in info:
            continue
        values, given = info[key], info["_" + key]
        listed = values if key == "action_mask" else values.tolist()
        for i in _indices(given):
            out[i][key] = listed[i]
    return out


def _indices(mask: np.ndarray) -> Iterable[int]:
    indices: list[int] = np.flatnonzero(mask).tolist()
    return indices


__all__ = ["SpiderSB3VecEnv"]
