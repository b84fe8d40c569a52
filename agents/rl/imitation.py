"""Demonstrations for imitation learning: games of a strong player, recorded as action lists.

A demonstration is a deal number and the actions a teacher (any agent spec of
:func:`spider_env.agents.make_agent`: ``lookahead`` by default) played on it. Replaying the
actions from the deal rebuilds every observation exactly, so the file is small (a few bytes per
decision) and any observation encoding can be computed from it later (:func:`replay`). The
teacher sees only what a player sees; the recorder reads nothing hidden either (it keeps the
deal number, which is the data set's key, never the agent's input).

``record_demonstrations`` plays the deals (in worker processes with ``jobs``), and
:func:`save_demonstrations` / :func:`load_demonstrations` store them as ``.npz`` with the
variant and teacher named in it.
"""

from __future__ import annotations

import json
import multiprocessing as mp
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from spider_env.core.checks import check_int
from spider_env.core.variants import Variant, get_variant
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS, SpiderEnv
from spider_env.rewards import RunsReward


@dataclass(frozen=True)
class Demonstration:
    """One game of the teacher: the deal, its actions in order, and whether it was won."""

    deal: int
    actions: tuple[int, ...]
    won: bool


def _play(args: tuple[str, str, int, int, int]) -> Demonstration:
    from spider_env.agents import make_agent

    spec, variant_name, deal, max_steps, seed = args
    env = SpiderEnv(variant=variant_name)
    agent = make_agent(spec, env.variant, seed=seed)
    obs, info = env.reset(options={"deal": deal})
    agent.reset(seed)
    actions: list[int] = []
    won = False
    for _ in range(max_steps):
        a = int(agent.act(obs, info["action_mask"], info))
        actions.append(a)
        obs, _, terminated, truncated, info = env.step(a)
        if terminated or truncated:
            won = bool(info["is_success"])
            break
    return Demonstration(deal, tuple(actions), won)


def record_demonstrations(
    deals: Iterable[int],
    variant: Variant | str = "spider-1suit",
    teacher: str = "lookahead",
    *,
    max_steps: int = DEFAULT_MAX_EPISODE_STEPS,
    seed: int = 0,
    jobs: int = 1,
    progress: bool = False,
) -> Iterator[Demonstration]:
    """Play ``teacher`` on each deal (seeded ``seed + deal``) and yield its games in deal order.

    ``jobs`` worker processes play in parallel; the games do not depend on ``jobs``.
    """
    v = get_variant(variant)
    check_int("jobs", jobs, 1)
    tasks = [(teacher, v.name, int(d), max_steps, seed + int(d)) for d in deals]
    bar: Any = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks), desc=f"{teacher} demonstrations", unit="game")
    if jobs == 1:
        for t in tasks:
            demo = _play(t)
            if bar is not None:
                bar.update()
            yield demo
    else:
        with mp.get_context("spawn").Pool(jobs) as pool:
            for demo in pool.imap(_play, tasks, chunksize=4):
                if bar is not None:
                    bar.update()
                yield demo
    if bar is not None:
        bar.close()


def save_demonstrations(
    path: str, demos: list[Demonstration], variant: Variant | str, teacher: str
) -> None:
    """Write ``demos`` to ``path`` (``.npz``: deals, won, action offsets, actions, meta)."""
    lengths = np.array([len(d.actions) for d in demos], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    actions = np.fromiter((a for d in demos for a in d.actions), dtype=np.int32)
    meta = json.dumps({"variant": get_variant(variant).name, "teacher": teacher})
    np.savez_compressed(
        path,
        deals=np.array([d.deal for d in demos], dtype=np.uint64),
        won=np.array([d.won for d in demos], dtype=bool),
        offsets=offsets,
        actions=actions,
        meta=np.array(meta),
    )


def load_demonstrations(path: str) -> tuple[list[Demonstration], dict[str, str]]:
    """``(demonstrations, meta)`` from a file written by :func:`save_demonstrations`.

    ``ValueError`` if the file is not one.
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            deals, won = data["deals"], data["won"]
            offsets, actions = data["offsets"], data["actions"]
            meta = json.loads(str(data["meta"]))
    except (KeyError, OSError, ValueError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise ValueError(f"no demonstrations file {path}") from None
        raise ValueError(
            f"{path} is not a demonstrations file (an .npz written by save_demonstrations)"
        ) from None
    if len(offsets) != len(deals) + 1 or len(won) != len(deals) or offsets[-1] != len(actions):
        raise ValueError(f"{path} is not a demonstrations file: inconsistent arrays")
    demos = [
        Demonstration(int(d), tuple(int(a) for a in actions[lo:hi]), bool(w))
        for d, w, lo, hi in zip(deals, won, offsets[:-1], offsets[1:])
    ]
    return demos, meta


def replay(
    demo: Demonstration, variant: Variant | str
) -> Iterator[tuple[dict[str, Any], dict[str, Any], int]]:
    """``(obs, info, action)`` at every decision of ``demo``, rebuilt by replaying it.

    ``ValueError`` if an action is not legal where the demonstration played it (the file does
    not belong to this variant or engine).
    """
    env = SpiderEnv(variant=variant)
    obs, info = env.reset(options={"deal": demo.deal})
    for i, a in enumerate(demo.actions):
        if not info["action_mask"][a]:
            raise ValueError(f"deal {demo.deal}: action {a} at step {i} is illegal there")
        yield obs, info, a
        obs, _, terminated, truncated, info = env.step(a)
        if (terminated or truncated) and i + 1 < len(demo.actions):
            raise ValueError(f"deal {demo.deal}: the game ended before step {i + 1}")


def discounted_returns(rewards: np.ndarray, gamma: float) -> np.ndarray:
    """Each step's discounted return (float32) from the rewards of a game's steps."""
    out = np.zeros(len(rewards), np.float32)
    acc = 0.0
    for i in range(len(rewards) - 1, -1, -1):
        acc = float(rewards[i]) + gamma * acc
        out[i] = acc
    return out


@dataclass
class BCDataset:
    """Decisions of demonstrations in the ``obs_mode="actions"`` encoding, for cloning.

    ``actions``/``action_ids``/``globals`` are the encoder's arrays (rows cut to the most any
    decision uses), ``target`` the row of the action played, ``returns`` the discounted return
    from there under the ``"runs"`` reward (:class:`~spider_env.rewards.RunsReward`: +1 per
    run, +10 on the win), ``imitate`` whether the decision is cloned (decisions of won games)
    or only teaches the value, ``deal`` its deal; ``scores`` (a teacher's demonstrations store,
    :mod:`.planner_demos`) the teacher's score of each row, ``nan`` where it scored none.
    """

    actions: np.ndarray
    action_ids: np.ndarray
    globals: np.ndarray
    target: np.ndarray
    returns: np.ndarray
    imitate: np.ndarray
    deal: np.ndarray
    scores: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.target)

    def subset(self, index: np.ndarray) -> BCDataset:
        """The decisions at ``index``."""
        parts: list[Any] = [getattr(self, f) for f in self.__dataclass_fields__]
        picked: list[Any] = [None if x is None else x[index] for x in parts]
        return BCDataset(*picked)


def build_bc_dataset(
    demos: Iterable[Demonstration],
    variant: Variant | str,
    slots: int = 128,
    *,
    gamma: float = 0.995,
    lost_decisions: int = 400,
    imitate_lost: bool = False,
) -> BCDataset:
    """Replay ``demos`` into a :class:`BCDataset` (``slots``: the encoder's rows).

    Won games give decisions to clone; a lost game gives its first ``lost_decisions`` decisions
    (a lost game ends in moves back and forth until the step limit), for the value only unless
    ``imitate_lost`` (for games where the teacher rarely wins, such as 2-suit Spider).
    """
    from spider_env.observation.actions import N_ACTION_FEATURES, ActionFeatureEncoder

    v = get_variant(variant)
    enc = ActionFeatureEncoder(v, slots)
    feats: list[np.ndarray] = []
    ids: list[np.ndarray] = []
    globs: list[np.ndarray] = []
    target: list[int] = []
    rets: list[np.ndarray] = []
    imitate: list[bool] = []
    deal: list[int] = []
    used = 1
    for demo in demos:
        enc.reset()
        rewards: list[float] = []
        runs_before = 0
        n = 0
        for obs, info, a in replay(demo, v):
            if not demo.won and n >= lost_decisions:
                break
            out = enc.encode(obs, info["action_mask"])
            row = enc.row_of.get(a)
            if row is None:
                continue  # the action had no row (more legal actions than slots)
            k = int((out["action_ids"] >= 0).sum())
            used = max(used, k)
            feats.append(out["actions"][:k].astype(np.float16))  # rows past k are padding
            ids.append(out["action_ids"][:k].astype(np.int16))
            globs.append(out["globals"])
            target.append(row)
            imitate.append(demo.won or imitate_lost)
            deal.append(demo.deal)
            runs = int(info["completed_runs"])
            if rewards:
                rewards[-1] += runs - runs_before
            runs_before = runs
            rewards.append(0.0)
            n += 1
        if demo.won and rewards:
            rewards[-1] += 1.0 + RunsReward().win_bonus  # it completes the last run and wins
        ret = discounted_returns(np.asarray(rewards, np.float64), gamma)
        rets.append(ret)
    if not target:
        raise ValueError("no decisions in the demonstrations")
    all_feats = np.zeros((len(feats), used, N_ACTION_FEATURES), np.float16)
    all_ids = np.full((len(ids), used), -1, np.int16)
    for i, (rows, row_ids) in enumerate(zip(feats, ids)):
        all_feats[i, : len(rows)] = rows
        all_ids[i, : len(row_ids)] = row_ids
    return BCDataset(
        all_feats,
        all_ids,
        np.stack(globs),
        np.array(target, np.int64),
        np.concatenate(rets),
        np.array(imitate, bool),
        np.array(deal, np.uint64),
    )


__all__ = [
    "BCDataset",
    "Demonstration",
    "build_bc_dataset",
    "discounted_returns",
    "load_demonstrations",
    "record_demonstrations",
    "replay",
    "save_demonstrations",
]
