"""The planner's demonstrations, stored for the network that learns from it.

A **demonstration store** is a folder of shards (``shard-<first>-<stop>.npz``, one per range of
deals, each written whole under a temporary name and renamed, so a shard that exists is
complete) and a ``store.json`` naming the game, the teacher and the encoding. A shard holds
games; each game holds, at every decision with more than one legal action:

* the **rows the policy sees**: the per-action features of ``obs_mode="actions"``
  (:class:`~spider_env.observation.actions.ActionFeatureEncoder`, the legal rows only, as
  float16), the rows' action ids and the position's globals;
* the **label**: the row of the action the teacher played;
* the teacher's **scores**, where it weighed several candidates: the planner's mean score of
  the best candidate that starts with each row's action (``nan`` for a row it did not score);
  decisions inside a plan it is following have none;
* whether the teacher **scored** candidates there (``planned``), and the step it was made at.

and per game its deal, whether it was won, every action played and the completed runs after
it (the value's targets are computed from them with any discount: :func:`returns`; replaying
the actions from the deal rebuilds every position), and the CPU seconds it cost. Nothing read
from the game is hidden from a player: the features are computed from the observation, the
scores are the planner's own (it sees what a player sees).

Two kinds of games fill a store, with the same format:

* :func:`record_shard`: the teacher plays a deal from the start (the demonstrations);
* :func:`label_shard`: a **network** plays a deal and the teacher labels the positions the
  network reaches (one decision in ``every``), without taking over (DAgger). The actions are
  then the network's, the labels and scores the teacher's.

:func:`fill_store` plays the shards that are missing (``jobs`` local processes, or Ray tasks
with ``ray=ADDRESS``), so an interrupted run resumes where it stopped; :func:`load_store` reads
a store into a :class:`~.imitation.BCDataset` for cloning. Test deals 0..999 are refused.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from spider_env.core.checks import check_int
from spider_env.core.variants import Variant, get_variant
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS, SpiderEnv
from spider_env.observation.actions import ActionFeatureEncoder
from spider_env.observation.spaces import (
    DEFAULT_ACTION_ROWS,
    N_ACTION_FEATURES,
    N_GLOBAL_FEATURES,
)
from spider_env.rewards import RunsReward

from .envs import overlaps_test_deals

#: The store's format version (``store.json`` and every shard say it).
STORE_FORMAT = 1
STORE_META = "store.json"
#: The arrays of a shard: per game, per step, per stored decision, per stored row.
GAME_KEYS = ("deal", "won", "cpu_seconds", "step_offsets", "decision_offsets")
STEP_KEYS = ("actions", "runs")
DECISION_KEYS = ("step", "planned", "target", "row_offsets", "globals")
ROW_KEYS = ("features", "ids", "scores")


class StoreError(ValueError):
    """A demonstration store (or one of its shards) that cannot be used, named in the message."""


@dataclass(frozen=True)
class StoreSpec:
    """What a store holds: the game, who played (``teacher``: the player that labels;
    ``player``: who chose the moves, the teacher itself or a network's file) and the encoding."""

    variant: str
    teacher: str
    player: str
    action_rows: int = DEFAULT_ACTION_ROWS
    max_steps: int = DEFAULT_MAX_EPISODE_STEPS
    every: int = 1

    def meta(self) -> dict[str, Any]:
        """The ``store.json`` of this spec."""
        return {
            "format": STORE_FORMAT,
            "variant": self.variant,
            "teacher": self.teacher,
            "player": self.player,
            "action_rows": self.action_rows,
            "max_steps": self.max_steps,
            "every": self.every,
            "features": N_ACTION_FEATURES,
            "globals": N_GLOBAL_FEATURES,
        }


def shard_name(deals: Sequence[int]) -> str:
    """The file name of the shard of ``deals`` (a contiguous range)."""
    return f"shard-{deals[0]:010d}-{deals[-1] + 1:010d}.npz"


def shards_of(deals: Sequence[int], size: int) -> list[range]:
    """``deals`` (a ``range`` of step 1) cut into ranges of ``size`` deals."""
    check_int("shard", size, 1)
    if not isinstance(deals, range) or deals.step != 1 or len(deals) == 0:
        raise ValueError(f"deals must be a non-empty range start:stop, got {deals!r}")
    return [range(lo, min(lo + size, deals.stop)) for lo in range(deals.start, deals.stop, size)]


# --- one game ----------------------------------------------------------------------------------
class _Game:
    """The arrays of one game being recorded."""

    def __init__(self, deal: int) -> None:
        self.deal = deal
        self.actions: list[int] = []
        self.runs: list[int] = []
        self.step: list[int] = []
        self.planned: list[bool] = []
        self.target: list[int] = []
        self.globals: list[np.ndarray] = []
        self.features: list[np.ndarray] = []
        self.ids: list[np.ndarray] = []
        self.scores: list[np.ndarray] = []
        self.won = False
        self.cpu = 0.0

    def add(
        self,
        step: int,
        out: dict[str, np.ndarray],
        target: int,
        scores: np.ndarray | None,
    ) -> None:
        ids = out["action_ids"]
        k = int((ids >= 0).sum())
        if scores is not None and not np.isfinite(scores[:k]).any():
            scores = None  # a decision with one candidate: nothing was scored
        self.step.append(step)
        self.planned.append(scores is not None)
        self.target.append(target)
        self.globals.append(out["globals"].astype(np.float16))
        self.features.append(out["actions"][:k].astype(np.float16))
        self.ids.append(ids[:k].astype(np.int16))
        s = np.full(k, np.nan, np.float32) if scores is None else scores[:k].astype(np.float32)
        self.scores.append(s)


def _row_scores(decision: Any, row_of: dict[int, int], k: int) -> np.ndarray:
    """Each row's score at a planned decision: the best mean of the candidates whose first move
    is the row's action (``nan``: no scored candidate starts with it)."""
    scores = np.full(k, np.nan, np.float32)
    for plan, mean, count in zip(decision.plans, decision.means, decision.counts):
        row = row_of.get(int(plan[0]))
        if row is None or row >= k or count <= 0 or not np.isfinite(mean):
            continue
        if not np.isfinite(scores[row]) or mean > scores[row]:
            scores[row] = mean
    return scores


class _Labeller:
    """A teacher (a planner spec) whose :class:`~spider_env.agents.planner.PlannedDecision` of
    each call is kept."""

    def __init__(self, spec: str, variant: Variant) -> None:
        from spider_env.agents import make_agent

        self.agent = make_agent(spec, variant)
        self.last: Any = None
        if hasattr(self.agent, "observer"):
            self.agent.observer = self._keep

    def _keep(self, decision: Any) -> None:
        self.last = decision

    def act(self, obs: Any, mask: np.ndarray, info: dict[str, Any]) -> tuple[int, Any]:
        """The teacher's action and its planned decision (``None``: it followed a plan, or
        had nothing to weigh)."""
        self.last = None
        a = int(self.agent.act(obs, mask, info))
        return a, self.last


def _play_game(
    variant: Variant,
    deal: int,
    teacher: _Labeller,
    player: Callable[[Any, np.ndarray, dict[str, Any]], int] | None,
    *,
    action_rows: int,
    max_steps: int,
    every: int,
    seed: int,
) -> _Game:
    """One game of ``deal``: the teacher plays it (``player`` None) or ``player`` does and the
    teacher labels one decision in ``every`` (from a fresh start of its own: ``reset``)."""
    env = SpiderEnv(variant=variant)  # no limit of its own: the loop stops at max_steps
    enc = ActionFeatureEncoder(variant, action_rows)
    game = _Game(deal)
    t0 = time.process_time()
    obs, info = env.reset(options={"deal": deal})
    teacher.agent.reset(seed)
    choices = 0
    for step in range(max_steps):
        mask = info["action_mask"]
        out = enc.encode(obs, mask)
        several = int(mask.sum()) > 1
        if player is None:
            a, decision = teacher.act(obs, mask, info)
            label = a
        else:
            a = int(player(obs, mask, info))
            label, decision = -1, None
            if several:
                choices += 1
                if choices % every == 0:
                    teacher.agent.reset(seed + step)  # a fresh teacher: no plan of its own
                    label, decision = teacher.act(obs, mask, info)
        row = enc.row_of.get(label)
        if several and row is not None:
            k = int((out["action_ids"] >= 0).sum())
            scores = None if decision is None else _row_scores(decision, enc.row_of, k)
            game.add(step, out, row, scores)
        obs, _, terminated, truncated, info = env.step(a)
        game.actions.append(a)
        game.runs.append(int(info["completed_runs"]))
        if terminated or truncated:
            game.won = bool(info["is_success"])
            break
    game.cpu = time.process_time() - t0
    return game


# --- shards ------------------------------------------------------------------------------------
def _pack(games: list[_Game]) -> dict[str, np.ndarray]:
    """The arrays of a shard of ``games``."""

    def offsets(lengths: list[int]) -> np.ndarray:
        return np.concatenate(([0], np.cumsum(lengths, dtype=np.int64))).astype(np.int64)

    rows = [len(f) for g in games for f in g.features]
    return {
        "deal": np.array([g.deal for g in games], np.uint64),
        "won": np.array([g.won for g in games], bool),
        "cpu_seconds": np.array([g.cpu for g in games], np.float64),
        "step_offsets": offsets([len(g.runs) for g in games]),
        "decision_offsets": offsets([len(g.step) for g in games]),
        "actions": np.array([a for g in games for a in g.actions], np.int16),
        "runs": np.array([r for g in games for r in g.runs], np.int8),
        "step": np.array([s for g in games for s in g.step], np.int16),
        "planned": np.array([p for g in games for p in g.planned], bool),
        "target": np.array([t for g in games for t in g.target], np.int16),
        "row_offsets": offsets(rows),
        "globals": _stack([x for g in games for x in g.globals], (0, N_GLOBAL_FEATURES)),
        "features": _stack(
            [x for g in games for x in g.features], (0, N_ACTION_FEATURES), cat=True
        ),
        "ids": _stack([x for g in games for x in g.ids], (0,), cat=True, dtype=np.int16),
        "scores": _stack([x for g in games for x in g.scores], (0,), cat=True, dtype=np.float32),
    }


def _stack(
    parts: list[np.ndarray], empty: tuple[int, ...], cat: bool = False, dtype: Any = np.float16
) -> np.ndarray:
    if not parts:
        return np.zeros(empty, dtype)
    return np.concatenate(parts) if cat else np.stack(parts)


@dataclass(frozen=True)
class ShardTask:
    """One shard to play: the store's spec, its deals, the player (``None``: the teacher plays;
    else a model file the network plays from), the path to write, the seed."""

    spec: StoreSpec
    deals: tuple[int, int]
    model: str | None
    path: str
    seed: int = 0


def play_shard(task: ShardTask) -> dict[str, Any]:
    """Play ``task``'s deals and write its shard (atomically); a summary of it."""
    from spider_env.agents import make_agent

    variant = get_variant(task.spec.variant)
    teacher = _Labeller(task.spec.teacher, variant)
    player: Any = None
    if task.model is not None:
        net = make_agent(task.model, variant, seed=task.seed)
        player = net.act
    games = []
    for deal in range(*task.deals):
        if player is not None:
            net.reset(task.seed + deal)
        games.append(
            _play_game(variant, deal, teacher, player, action_rows=task.spec.action_rows,
                       max_steps=task.spec.max_steps, every=task.spec.every,
                       seed=task.seed + deal)
        )  # fmt: skip
    arrays: dict[str, Any] = _pack(games)
    arrays["meta"] = np.array(json.dumps(task.spec.meta()))
    path = Path(task.path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp.npz")
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)
    return summarise(arrays)


def summarise(arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """Games, wins, decisions, labels scored, CPU seconds of a shard's (or store's) arrays."""
    return {
        "games": len(arrays["deal"]),
        "won": int(arrays["won"].sum()),
        "steps": len(arrays["runs"]),
        "decisions": len(arrays["target"]),
        "planned": int(arrays["planned"].sum()),
        "cpu_seconds": float(arrays["cpu_seconds"].sum()),
    }


def read_shard(path: str | Path, spec: StoreSpec | None = None) -> dict[str, np.ndarray]:
    """The arrays of a shard; :class:`StoreError` naming it if it is not a shard of this
    format (or, given ``spec``, of another store)."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in (*GAME_KEYS, *STEP_KEYS, *DECISION_KEYS, *ROW_KEYS)}
            meta = json.loads(str(npz["meta"]))
    except (KeyError, OSError, ValueError, EOFError) as exc:
        raise StoreError(f"{path} is not a demonstration shard ({type(exc).__name__})") from None
    if not isinstance(meta, dict) or meta.get("format") != STORE_FORMAT:
        raise StoreError(f"{path}: a shard of another format ({meta!r})")
    if spec is not None and meta != spec.meta():
        raise StoreError(f"{path} belongs to another store: {meta} (this one: {spec.meta()})")
    _check_consistent(path, arrays)
    return arrays


def _check_consistent(path: str | Path, a: dict[str, np.ndarray]) -> None:
    n, d, r = len(a["deal"]), len(a["target"]), len(a["ids"])
    ok = (
        len(a["won"]) == n == len(a["cpu_seconds"])
        and len(a["step_offsets"]) == n + 1 == len(a["decision_offsets"])
        and a["step_offsets"][-1] == len(a["runs"]) == len(a["actions"])
        and a["decision_offsets"][-1] == d
        and len(a["step"]) == d == len(a["planned"]) == len(a["globals"])
        and len(a["row_offsets"]) == d + 1
        and a["row_offsets"][-1] == r == len(a["features"]) == len(a["scores"])
        and (d == 0 or bool((a["target"] < np.diff(a["row_offsets"])).all()))
    )
    if not ok:
        raise StoreError(f"{path} is not a demonstration shard: inconsistent arrays")


# --- the store ---------------------------------------------------------------------------------
def check_store(folder: str | Path, spec: StoreSpec) -> None:
    """:class:`StoreError` if ``folder`` exists and is not a store of ``spec`` (nothing is
    written)."""
    folder = Path(folder)
    if not folder.exists():
        return
    meta_path = folder / STORE_META
    if not folder.is_dir():
        raise StoreError(f"{folder} is not a folder")
    if not meta_path.exists():
        if any(folder.iterdir()):
            raise StoreError(f"{folder} is not a demonstration store (no {STORE_META})")
        return
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError):
        raise StoreError(f"{meta_path} is not a store's description (JSON)") from None
    if meta != spec.meta():
        raise StoreError(
            f"{folder} holds another store: {meta} (asked for: {spec.meta()}); give another folder"
        )


def open_store(folder: str | Path, spec: StoreSpec) -> Path:
    """The store folder (made, with its ``store.json``, if new); :class:`StoreError` if it
    holds another store."""
    check_store(folder, spec)
    folder = Path(folder)
    meta_path = folder / STORE_META
    if not meta_path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        meta_path.write_text(json.dumps(spec.meta(), indent=1) + "\n")
    return folder


def fill_store(
    folder: str | Path,
    spec: StoreSpec,
    deals: range,
    *,
    shard: int = 25,
    model: str | None = None,
    jobs: int = 1,
    ray: str | None = None,
    seed: int = 0,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Play the shards of ``deals`` missing from the store ``folder`` (``model``: a network
    plays and the teacher labels; else the teacher plays), in ``jobs`` processes or as Ray
    tasks (``ray``: an address, ``"local"`` for a private instance); ``progress`` is called
    with each new shard's summary. Returns what was played now and what the store holds."""
    if overlaps_test_deals(deals):
        raise ValueError("deals 0..999 are the test set: demonstrations use other deals")
    check_int("jobs", jobs, 1)
    root = open_store(folder, spec)
    tasks = [
        ShardTask(spec, (r.start, r.stop), model, str(root / shard_name(r)), seed)
        for r in shards_of(deals, shard)
        if not (root / shard_name(r)).exists()
    ]
    t0 = time.perf_counter()
    played = []
    for summary in _run(tasks, jobs, ray):
        played.append(summary)
        if progress is not None:
            progress(summary)
    now = total(played)
    now["wall_seconds"] = round(time.perf_counter() - t0, 1)
    return {"played": now, "store": store_summary(root)}


def _run(tasks: list[ShardTask], jobs: int, ray: str | None) -> Iterator[dict[str, Any]]:
    if ray is not None:
        yield from _run_on_ray(tasks, ray)
    elif jobs == 1 or len(tasks) <= 1:
        for t in tasks:
            yield play_shard(t)
    else:
        with mp.get_context("spawn").Pool(min(jobs, len(tasks))) as pool:
            yield from pool.imap_unordered(play_shard, tasks)


def _run_on_ray(tasks: list[ShardTask], address: str) -> Iterator[dict[str, Any]]:
    from spider_env.apps.evaluation.ray_backend import ray_map, ray_session

    with ray_session(address) as session:
        yield from ray_map(play_shard, tasks, session.cpus)


def total(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """The sums of shards' summaries (:func:`summarise`)."""
    keys = ("games", "won", "steps", "decisions", "planned", "cpu_seconds")
    return {k: sum(s[k] for s in summaries) for k in keys}


def shard_paths(folder: str | Path) -> list[Path]:
    """The shards of a store, in deal order."""
    return sorted(Path(folder).glob("shard-*.npz"))


def read_spec(folder: str | Path) -> StoreSpec:
    """The spec of the store ``folder`` (:class:`StoreError` if it has none)."""
    path = Path(folder) / STORE_META
    try:
        meta = json.loads(path.read_text())
        if meta.get("format") != STORE_FORMAT:
            raise ValueError
        keys = ("variant", "teacher", "player", "action_rows", "max_steps", "every")
        return StoreSpec(**{k: meta[k] for k in keys})
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise StoreError(f"{folder} is not a demonstration store (no valid {STORE_META})") from None


def store_summary(folder: str | Path) -> dict[str, Any]:
    """Shards, games, wins, decisions, CPU seconds and bytes on disk of a store."""
    spec = read_spec(folder)
    paths = shard_paths(folder)
    out = total([summarise(read_shard(p, spec)) for p in paths])
    out["shards"] = len(paths)
    out["bytes"] = sum(p.stat().st_size for p in paths)
    if out["games"]:
        out["cpu_seconds_per_game"] = round(out["cpu_seconds"] / out["games"], 2)
        out["bytes_per_decision"] = round(out["bytes"] / max(1, out["decisions"]), 1)
    return out


def returns(
    won: bool, runs: np.ndarray, gamma: float, win_bonus: float | None = None
) -> np.ndarray:
    """Every step's discounted return under the ``"runs"`` reward (+1 per completed run,
    ``win_bonus`` on the winning step) from a game's completed runs after each step."""
    bonus = RunsReward().win_bonus if win_bonus is None else win_bonus
    r = np.diff(np.concatenate(([0], runs.astype(np.float64))))
    if won and len(r):
        r[-1] += bonus
    from .imitation import discounted_returns

    return discounted_returns(r, gamma)


def load_store(
    folders: Sequence[str | Path],
    *,
    gamma: float = 0.995,
    lost_decisions: int = 400,
    max_decisions: int | None = None,
) -> Any:
    """The decisions of the stores ``folders`` (one game) as a :class:`~.imitation.BCDataset`
    with the teacher's ``scores``: every decision of a won game, the first ``lost_decisions``
    of a lost one (a lost game ends in moves back and forth), each with its discounted return
    (``gamma``). ``max_decisions`` keeps the first ones (deal order). :class:`StoreError` if a
    folder is not a store, its stores play different games, or they hold nothing."""
    from .imitation import BCDataset

    specs = [read_spec(f) for f in folders]
    if len({(s.variant, s.action_rows) for s in specs}) > 1:
        raise StoreError(f"the stores {list(map(str, folders))} hold different games or encodings")
    parts: list[tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray]] = []
    total = 0
    for folder, spec in zip(folders, specs):
        for path in shard_paths(folder):
            a = read_shard(path, spec)
            keep: list[np.ndarray] = []
            game_returns: list[np.ndarray] = []
            game_deals: list[np.ndarray] = []
            for g in range(len(a["deal"])):
                lo, hi = a["step_offsets"][g], a["step_offsets"][g + 1]
                r = returns(bool(a["won"][g]), a["runs"][lo:hi], gamma)
                dlo, dhi = a["decision_offsets"][g], a["decision_offsets"][g + 1]
                n = dhi - dlo if a["won"][g] else min(dhi - dlo, lost_decisions)
                keep.append(np.arange(dlo, dlo + n))
                game_returns.append(r[a["step"][dlo : dlo + n].astype(np.int64)])
                game_deals.append(np.full(n, a["deal"][g], np.uint64))
            if keep:
                parts.append((a, np.concatenate(keep), np.concatenate(game_returns),
                              np.concatenate(game_deals)))  # fmt: skip
                total += len(parts[-1][1])
            if max_decisions is not None and total >= max_decisions:
                break
    if total == 0:
        raise StoreError(f"no decisions in the stores {list(map(str, folders))}")
    width = max(int(np.diff(a["row_offsets"])[idx].max()) for a, idx, _, _ in parts if len(idx))
    feats = np.zeros((total, width, N_ACTION_FEATURES), np.float16)
    ids = np.full((total, width), -1, np.int16)
    scores = np.full((total, width), np.nan, np.float32)
    globs = np.zeros((total, N_GLOBAL_FEATURES), np.float32)
    target = np.zeros(total, np.int64)
    rets_all = np.zeros(total, np.float32)
    deals = np.zeros(total, np.uint64)
    at = 0
    for a, idx, rets, deal in parts:
        n = len(idx)
        first = a["row_offsets"][idx]
        lengths = a["row_offsets"][idx + 1] - first
        col = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        src = np.repeat(first, lengths) + col
        dst = np.repeat(np.arange(at, at + n), lengths)
        feats[dst, col] = a["features"][src]
        ids[dst, col] = a["ids"][src]
        scores[dst, col] = a["scores"][src]
        globs[at : at + n] = a["globals"][idx]
        target[at : at + n] = a["target"][idx]
        rets_all[at : at + n] = rets
        deals[at : at + n] = deal
        at += n
    data = BCDataset(feats, ids, globs, target, rets_all, np.ones(total, bool), deals, scores)
    if max_decisions is not None:
        data = data.subset(np.arange(min(total, max_decisions)))
    return data


__all__ = [
    "STORE_FORMAT",
    "ShardTask",
    "StoreError",
    "StoreSpec",
    "check_store",
    "fill_store",
    "load_store",
    "open_store",
    "play_shard",
    "read_shard",
    "read_spec",
    "returns",
    "shard_name",
    "shard_paths",
    "shards_of",
    "store_summary",
    "summarise",
    "total",
]
