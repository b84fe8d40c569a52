"""Suit curricula with MaskablePPO, kept as an experiment: 1 suit, then 2, then 4, moving on
when the win rate of the last ``--window`` training games of the current stage reaches
``--threshold`` (the record: ``research/rl/README.md``).

    python research/rl/curriculum.py --timesteps 5000000 --threshold 0.5 --window 200

Never measured beyond a smoke run: the flat MaskablePPO it trains wins no 1-suit game, so it
would never leave the first stage. The pieces, usable with any RL library (only the SB3
callback and the trainer need Stable-Baselines3, imported when you ask for them):

* :class:`Curriculum`: the schedule, pure Python. Stages are suit counts (default 1, then 2,
  then 4); :meth:`Curriculum.record` takes episode outcomes and moves on to the next stage
  when the win rate of the last ``window`` episodes of the current stage reaches
  ``threshold``.
* :class:`SuitCurriculum`: a Gymnasium env that plays classic Spider with the suit count of
  the current stage. All stages share one observation space (the feature encodings of
  :mod:`spider_env.observation` are widened to the suit one-hot of the widest stage), so one
  network learns across stages. Stage changes take effect at the next ``reset``.
  With ``curriculum=`` the env advances itself from its own episodes; in a vectorised setup
  pass none and let :func:`sb3_curriculum_callback` decide from the episodes of *all* envs and
  call ``set_stage`` on each of them.

Example (one env, no framework)::

    env = SuitCurriculum(curriculum=Curriculum(threshold=0.5, window=100),
                         obs_mode="flat", reward_mode="shaped", train_deals=TRAIN_DEALS)

:func:`train_curriculum` trains MaskablePPO through a suit curriculum (settings:
:class:`CurriculumSettings`, the PPO settings of ``examples/train_maskable_ppo.py`` and the
schedule). At the end the model plays the validation deals (1000..) of every stage with masks,
and the results, the stage history and the model go to ``--out``. The saved model expects the
widened curriculum observation, so load it with :class:`SuitCurriculum` (not ``spider-env
evaluate``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import gymnasium as gym
import numpy as np
from spider_env.agents.rl.envs import TRAIN_DEALS, monitored, validation_deals
from spider_env.agents.rl.sb3_train import PPOSettings, new_model, set_logger
from spider_env.agents.rl.settings import (
    ArgumentParser,
    OutputDir,
    add_flags,
    check,
    check_paths,
    parse_and_run,
    setting_up,
)

from spider_env.core.cards import N_RANKS
from spider_env.core.checks import check_int, check_number, is_int
from spider_env.core.variants import classic
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS, SpiderEnv
from spider_env.observation import DEFAULT_FEATURE_SLOTS, card_slot_width, feature_width
from spider_env.wrappers import DealRange


class Curriculum:
    """When to move on: stages of suit counts and a win-rate threshold.

    ``record(won, stage)`` adds one finished episode of ``stage`` (episodes of other stages,
    e.g. games that were still running when the stage changed, are ignored) and returns True
    when that made the curriculum advance. It advances when at least ``window`` episodes of
    the current stage have been recorded and the win rate of the last ``window`` of them is
    ``>= threshold``; the window starts empty at every stage. The last stage never ends.
    """

    def __init__(
        self, stages: Sequence[int] = (1, 2, 4), threshold: float = 0.5, window: int = 100
    ) -> None:
        stages = tuple(stages)
        if not stages:
            raise ValueError("a curriculum needs at least one stage")
        for s in stages:
            if not (is_int(s) and s in (1, 2, 4)):
                raise ValueError(f"curriculum stages are suit counts 1, 2 or 4, got {s!r}")
        self.stages = stages
        self.threshold = check_number("threshold", threshold, 0, 1, low_open=True)
        self.window = check_int("window", window, 1)
        self.stage = 0
        self.history: list[tuple[int, int]] = []  # (stage, episodes recorded when it ended)
        self.episodes = 0
        self._results: deque[bool] = deque(maxlen=window)

    @property
    def suits(self) -> int:
        """Suit count of the current stage."""
        return self.stages[self.stage]

    @property
    def is_last(self) -> bool:
        return self.stage == len(self.stages) - 1

    @property
    def win_rate(self) -> float:
        """Win rate over the last ``window`` episodes of the current stage (0 if none)."""
        return float(np.mean(self._results)) if self._results else 0.0

    def record(self, won: bool, stage: int | None = None) -> bool:
        if stage is not None and stage != self.stage:
            return False
        self.episodes += 1
        self._results.append(bool(won))
        if (
            not self.is_last
            and len(self._results) == self.window
            and self.win_rate >= self.threshold
        ):
            self.history.append((self.stage, self.episodes))
            self.stage += 1
            self._results.clear()
            return True
        return False

    def __repr__(self) -> str:
        return (
            f"Curriculum(stages={self.stages}, threshold={self.threshold}, window={self.window}, "
            f"stage={self.stage})"
        )


def _widen_columns(cols: np.ndarray, slots: int, from_suits: int, to_suits: int) -> np.ndarray:
    """Re-lay feature columns encoded for ``from_suits`` as if for ``to_suits`` (same cards)."""
    from_w = card_slot_width(classic(from_suits))
    to_w = card_slot_width(classic(to_suits))
    if from_w == to_w:
        return cols
    out = np.zeros((cols.shape[0], feature_width(classic(to_suits), slots)), dtype=cols.dtype)
    out[:, :4] = cols[:, :4]
    for i in range(slots + 1):
        src = 4 + i * from_w
        dst = 4 + i * to_w
        ranks = cols[:, src : src + N_RANKS]
        out[:, dst : dst + N_RANKS] = ranks
        if from_w > N_RANKS:
            out[:, dst + N_RANKS : dst + from_w] = cols[:, src + N_RANKS : src + from_w]
        else:  # one suit: every card is a spade
            out[:, dst + N_RANKS] = ranks.max(axis=1)
    return out


class SuitCurriculum(gym.Env[Any, np.int64]):
    """Classic Spider whose suit count follows a curriculum (see the module docstring).

    Arguments: ``curriculum`` (a :class:`Curriculum` that this env advances from its own
    episodes, or ``None`` to be driven from outside with :meth:`set_stage`), ``stages`` (suit
    counts, used when ``curriculum`` is None), ``obs_mode`` (``"flat"`` or ``"features"``, the
    learning encodings), ``train_deals`` (deal numbers to play, random order; ``None``: the
    env's own RNG), ``max_episode_steps`` (step limit per episode, default the registered
    one), and any other :class:`~spider_env.env.SpiderEnv` argument (``reward_mode``,
    ``illegal_action``, ``feature_slots``...). ``info`` gains ``suits`` and
    ``curriculum_stage``.
    """

    metadata = dict(SpiderEnv.metadata)  # noqa: RUF012  (render modes: the stages' envs')

    def __init__(
        self,
        curriculum: Curriculum | None = None,
        stages: Sequence[int] = (1, 2, 4),
        obs_mode: str = "flat",
        train_deals: Sequence[int] | range | None = None,
        max_episode_steps: int | None = DEFAULT_MAX_EPISODE_STEPS,
        **env_kwargs: Any,
    ) -> None:
        if obs_mode not in ("flat", "features"):
            raise ValueError(
                f"SuitCurriculum needs a learning encoding, obs_mode 'flat' or 'features'; got "
                f"{obs_mode!r} (the table encoding differs between suit counts)"
            )
        for key in ("suits", "variant", "mask_in_obs"):
            if key in env_kwargs:
                raise ValueError(f"SuitCurriculum chooses {key!r} itself; do not pass it")
        self.curriculum = curriculum
        self.stages = tuple(curriculum.stages if curriculum is not None else stages)
        if curriculum is None:
            Curriculum(self.stages)  # validates the stages
        self.obs_mode = obs_mode
        self.slots = int(env_kwargs.get("feature_slots", DEFAULT_FEATURE_SLOTS))
        self.max_episode_steps = max_episode_steps
        self.render_mode = env_kwargs.get("render_mode")
        self._envs: list[gym.Env[Any, Any]] = []
        for s in self.stages:
            e: gym.Env[Any, Any] = SpiderEnv(suits=s, obs_mode=obs_mode, **env_kwargs)
            if max_episode_steps is not None:
                e = gym.wrappers.TimeLimit(e, max_episode_steps)
            if train_deals is not None:
                e = DealRange(e, train_deals, order="random")
            self._envs.append(e)
        self.widest = max(self.stages)
        widest_env = self._envs[self.stages.index(self.widest)]
        self.observation_space = widest_env.observation_space
        self.action_space = widest_env.action_space
        for s, e in zip(self.stages, self._envs):
            if e.action_space != self.action_space:
                raise ValueError(f"stage with {s} suit(s) has another action space")
            probe = self._widen(e.observation_space.sample(), s)
            if not self.observation_space.contains(probe):
                raise ValueError(
                    f"the {obs_mode!r} observation of {s} suit(s) cannot be widened to "
                    f"{self.widest} suits (unexpected feature layout)"
                )
        self.stage = curriculum.stage if curriculum is not None else 0
        self._pending: int | None = None
        self._active = self.stage
        self._seeded = False

    @property
    def suits(self) -> int:
        """Suit count of the game being played."""
        return self.stages[self._active]

    def set_stage(self, stage: int) -> None:
        """Play stage ``stage`` (an index into ``stages``) from the next ``reset`` on."""
        self.stage = check_int("stage", stage, 0, len(self.stages) - 1)

    def action_masks(self) -> np.ndarray:
        return np.asarray(self._envs[self._active].get_wrapper_attr("action_masks")())

    def _widen(self, obs: Any, suits: int) -> Any:
        if suits == self.widest:
            return obs
        if self.obs_mode == "features":
            cols = _widen_columns(obs["columns"], self.slots, suits, self.widest)
            return {"columns": cols, "globals": obs["globals"]}
        v = classic(suits)
        n_cols = v.n_columns * feature_width(v, self.slots)
        cols = obs[:n_cols].reshape(v.n_columns, -1)
        wide = _widen_columns(cols, self.slots, suits, self.widest)
        return np.concatenate((wide.ravel(), obs[n_cols:]))

    def _info(self, info: dict[str, Any]) -> dict[str, Any]:
        info["suits"] = self.suits
        info["curriculum_stage"] = self._active
        return info

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self._active = self.stage
        env = self._envs[self._active]
        if seed is not None or not self._seeded:
            # seed every stage once, each from the env's RNG, so stages are reproducible
            for e in self._envs:
                e.reset(seed=int(self.np_random.integers(0, 2**31)))
            self._seeded = True
        obs, info = env.reset(options=options)
        return self._widen(obs, self.suits), self._info(info)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self._envs[self._active].step(action)
        ended = terminated or truncated
        c = self.curriculum
        if ended and c is not None and c.record(bool(info.get("is_success")), self._active):
            self.stage = c.stage
        return self._widen(obs, self.suits), float(reward), terminated, truncated, self._info(info)

    def render(self) -> Any:
        return self._envs[self._active].render()

    def close(self) -> None:
        for e in self._envs:
            e.close()


def sb3_curriculum_callback(
    curriculum: Curriculum,
    on_advance: Callable[[Curriculum], None] | None = None,
    verbose: int = 0,
) -> Any:
    """A Stable-Baselines3 callback that drives :class:`SuitCurriculum` training envs.

    It records every finished training episode of every env (``info["is_success"]`` and
    ``info["curriculum_stage"]``) in ``curriculum``; when that advances, it calls
    ``set_stage`` on all training envs (``VecEnv.env_method``, so it works with
    ``DummyVecEnv`` and ``SubprocVecEnv``) and then ``on_advance(curriculum)``. It logs
    ``curriculum/stage``, ``curriculum/suits`` and ``curriculum/win_rate``. Needs
    ``stable-baselines3`` (the ``train`` extra).
    """
    from stable_baselines3.common.callbacks import BaseCallback

    class CurriculumCallback(BaseCallback):
        def _on_training_start(self) -> None:
            self.training_env.env_method("set_stage", curriculum.stage)

        def _on_step(self) -> bool:
            dones = self.locals.get("dones")
            infos = self.locals.get("infos", [])
            if dones is None:
                return True
            for done, info in zip(dones, infos):
                if not done or "curriculum_stage" not in info:
                    continue
                if curriculum.record(bool(info.get("is_success")), info["curriculum_stage"]):
                    self.training_env.env_method("set_stage", curriculum.stage)
                    if self.verbose:
                        print(
                            f"curriculum: {self.num_timesteps} steps, moving on to "
                            f"{curriculum.suits} suit(s)"
                        )
                    if on_advance is not None:
                        on_advance(curriculum)
            self.logger.record("curriculum/stage", curriculum.stage)
            self.logger.record("curriculum/suits", curriculum.suits)
            self.logger.record("curriculum/win_rate", curriculum.win_rate)
            return True

    return CurriculumCallback(verbose)


@dataclass(frozen=True)
class CurriculumSettings(PPOSettings):
    """MaskablePPO through a suit curriculum: the PPO settings (those of :data:`UNUSED` unused)
    and the schedule."""

    out: Annotated[str, OutputDir] = "runs/curriculum"
    """output folder (logs, checkpoints, model)"""
    stages: tuple[int, ...] = (1, 2, 4)
    """suit counts, in order"""
    threshold: float = 0.5
    """win rate to move on"""
    window: int = 200
    """games the win rate is taken over"""

    def __post_init__(self) -> None:
        super().__post_init__()
        check(self.vec != "spider", "vec", "the curriculum changes each env's suits: use "
              "dummy or subproc, not spider")  # fmt: skip
        for name in ("stages", "threshold", "window"):  # Curriculum's rules, field by field
            with setting_up(name):
                Curriculum(**{name: getattr(self, name)})


#: The PPO settings a curriculum run does not read (the stages choose the suits; the model is
#: validated at the end only, on its own envs; no baselines; no resuming; masks always; it prints
#: its stages, not the trainer's progress).
UNUSED = ("suits", "no_masks", "illegal_action", "eval_freq", "eval_envs", "baselines", "resume",
          "no_progress")  # fmt: skip


def curriculum_env(s: CurriculumSettings, stage: int | None = None) -> gym.Env[Any, Any]:
    """A monitored :class:`SuitCurriculum` env: training deals, or (``stage`` given) the
    validation deals of that stage, in order."""
    env: gym.Env[Any, Any] = SuitCurriculum(
        stages=s.stages,
        obs_mode=s.obs_mode,
        train_deals=TRAIN_DEALS if stage is None else None,
        max_episode_steps=s.max_episode_steps,
        reward_mode=s.reward_mode,
        feature_slots=s.feature_slots,
    )
    if stage is None:
        return monitored(env)
    env.unwrapped.set_stage(stage)  # type: ignore[attr-defined]
    return monitored(env, validation_deals(s.eval_episodes), order="cycle")


def validate(model: Any, s: CurriculumSettings, stage: int) -> dict[str, Any]:
    """Win rate and mean completed runs of ``model`` (masks applied) on the validation deals
    of ``stage``."""
    import functools

    from sb3_contrib.common.maskable.evaluation import evaluate_policy
    from stable_baselines3.common.vec_env import DummyVecEnv

    eval_env = DummyVecEnv([functools.partial(curriculum_env, s, stage)])
    successes: list[bool] = []
    runs: list[int] = []

    def on_step(locals_: dict[str, Any], _globals: dict[str, Any]) -> None:
        if locals_["done"]:
            successes.append(bool(locals_["info"].get("is_success")))
            runs.append(int(locals_["info"].get("completed_runs", 0)))

    evaluate_policy(
        model,
        eval_env,
        n_eval_episodes=s.eval_episodes,
        deterministic=s.deterministic,
        callback=on_step,
        warn=False,
    )
    eval_env.close()
    deals = validation_deals(s.eval_episodes)
    return {
        "win_rate": float(np.mean(successes)),
        "mean_completed_runs": float(np.mean(runs)),
        "deals": f"{deals.start}:{deals.stop}",
    }


def train_curriculum(s: CurriculumSettings) -> dict[str, Any]:
    """Train MaskablePPO through the curriculum of ``s``; at the end the model plays the
    validation deals of every stage. A setting that cannot be used is a :class:`SettingsError`
    before anything is trained or written. Writes ``model.zip``, logs, checkpoints and
    ``summary.json`` (returned) to ``s.out``. The model expects the widened curriculum
    observation: load it with :class:`SuitCurriculum` (not ``spider-env evaluate``)."""
    check_paths(s)
    import functools

    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    curriculum = Curriculum(s.stages, threshold=s.threshold, window=s.window)
    fns: list[Callable[[], gym.Env[Any, Any]]] = [
        functools.partial(curriculum_env, s) for _ in range(s.n_envs)
    ]
    with ExitStack() as on_error, setting_up():
        env = SubprocVecEnv(fns) if s.vec == "subproc" and s.n_envs > 1 else DummyVecEnv(fns)
        on_error.callback(env.close)
        model = new_model(MaskablePPO, env, s)
        on_error.pop_all()
    torch.set_num_threads(s.torch_threads)
    out = Path(s.out)
    with setting_up("out"):
        out.mkdir(parents=True, exist_ok=True)
    set_logger(model, out, s.verbose)
    stage_log: list[dict[str, Any]] = []

    def advanced(c: Curriculum) -> None:
        stage_log.append({"timesteps": int(model.num_timesteps), "now_suits": c.suits})
        print(f"curriculum: moving on to {c.suits} suit(s) at {model.num_timesteps} steps")

    callbacks: list[Any] = [sb3_curriculum_callback(curriculum, on_advance=advanced)]
    if s.checkpoint_freq:
        callbacks.append(
            CheckpointCallback(
                save_freq=max(s.checkpoint_freq // s.n_envs, 1),
                save_path=str(out / "checkpoints"),
                name_prefix="curriculum",
            )
        )
    t0 = time.time()
    model.learn(total_timesteps=s.timesteps, callback=CallbackList(callbacks))
    wall = time.time() - t0
    model.save(str(out / "model.zip"))
    env.close()
    summary = {
        "timesteps": int(model.num_timesteps),
        "wall_time_s": round(wall, 1),
        "stages": list(s.stages),
        "threshold": s.threshold,
        "window": s.window,
        "final_stage_suits": curriculum.suits,
        "stage_changes": stage_log,
        "validation": {f"{n} suit(s)": validate(model, s, i) for i, n in enumerate(s.stages)},
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_flags(p, CurriculumSettings, skip=UNUSED)
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    summary = parse_and_run(build_parser(), CurriculumSettings, train_curriculum, argv)
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
