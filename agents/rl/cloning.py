"""Behaviour cloning of a teacher: the first stage of the batched-PPO path
(``examples/clone_teacher.py``, then ``examples/batched_ppo.py --bc bc.zip``).

:func:`clone` (settings: :class:`CloneSettings`):

1. **demonstrations** (:func:`record`): the teacher (any player of ``spider-env evaluate``)
   plays training deals; its games are stored as action lists (:mod:`.imitation`). A
   demonstrations file that exists already is read instead (its teacher and game must be the
   settings');
2. **cloning**: the games are replayed into per-action features and
   :class:`~.policy.ActionSetPolicy` learns the teacher's choices in the won games (and, with
   ``imitate_lost``, the first decisions of lost ones) and every decision's return
   (:func:`~.policy.behaviour_clone`); a tenth of the games (by deal) is held out to measure
   agreement with the teacher. Every ``eval_every`` epochs and after the last one the policy
   plays the validation deals, most likely action and sampled (``<stem>_curve.csv``); the model
   (a MaskablePPO ``.zip`` with its sidecar, to train on from, and beside it the model file
   ``<stem>.safetensors``, which ``spider-env evaluate`` plays and is shared) plays the choice
   that won more after the last epoch.

Deals: :mod:`.envs` (demonstrations on training deals, never the test deals 0..999).
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np

from spider_env.core.variants import Variant, get_variant, resolve_variant
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS

from .envs import overlaps_test_deals, validation_deals
from .settings import (
    WRITTEN,
    CacheFile,
    Name,
    OutputFile,
    SettingsError,
    above,
    at_least,
    check,
    check_fields,
    check_paths,
    setting_up,
)

if TYPE_CHECKING:
    from .imitation import BCDataset, Demonstration


@dataclass(frozen=True)
class CloneSettings:
    """Recording a teacher's games and cloning them into an action-set model (one flag each)."""

    teacher: Annotated[str, Name] = "lookahead"
    """the teacher: any player of spider-env evaluate"""
    suits: int = field(default=1, metadata={"choices": (1, 2, 4)})
    """suits of classic Spider"""
    variant: Annotated[str, Name] | None = None
    """a variant name instead of --suits"""
    deals: Sequence[int] = range(100_000, 103_000)
    """training deals the teacher plays (start:stop; never the test deals 0..999)"""
    max_steps: int = DEFAULT_MAX_EPISODE_STEPS
    """step limit of a teacher's game"""
    demos: Annotated[str, CacheFile] = "runs/bc/demos.npz"
    """the teacher's games: read if the file exists, else recorded into it"""
    out: Annotated[str, OutputFile] = "runs/bc/bc.zip"
    """the cloned model (beside it: <stem>.safetensors to play and share, <stem>_curve.csv)"""
    epochs: int = 6
    """passes over the decisions"""
    batch_size: int = 512
    """decisions per gradient step"""
    lr: float = 1e-3
    """Adam's learning rate (cosine-annealed)"""
    hidden: int = 128
    """width of the shared action network"""
    eval_deals: int = 200
    """validation deals per evaluation (0: none)"""
    eval_every: int = 2
    """epochs between evaluations (and after the last one)"""
    jobs: int = 1
    """worker processes that record the games and play the evaluations"""
    cache: Annotated[str, CacheFile] | None = None
    """keep the replayed data set in this .npz"""
    imitate_lost: bool = False
    """also clone the first 400 decisions of lost games (where the teacher rarely wins)"""
    seed: int = 0
    """seed of the network and of the held-out games"""
    no_progress: bool = False
    """hide the progress bar of the recording"""

    def __post_init__(self) -> None:
        check_fields(self)
        at_least(self, 1, "max_steps", "epochs", "batch_size", "hidden", "eval_every", "jobs")
        at_least(self, 0, "eval_deals")
        above(self, 0, "lr")
        check(not overlaps_test_deals(self.deals), "deals",
              "deals 0..999 are the test set: record demonstrations on others")  # fmt: skip
        with setting_up("variant"):
            self.game()

    def game(self) -> Variant:
        """The variant played."""
        return resolve_variant(self.variant, None if self.variant else self.suits)


def check_teacher(s: CloneSettings) -> None:
    """:class:`SettingsError` if the teacher cannot play ``s.game()`` (here, not in a worker)."""
    from spider_env.agents import make_agent

    try:
        make_agent(s.teacher, s.game())
    except (ValueError, TypeError, OSError, ImportError) as exc:
        raise SettingsError("teacher", str(exc)) from None


def record(s: CloneSettings) -> dict[str, Any]:
    """Play the teacher on ``s.deals`` and save its games to ``s.demos``; a summary. A setting
    that cannot be used is a :class:`SettingsError` before anything is played or written."""
    from .imitation import record_demonstrations, save_demonstrations

    check_paths(s, WRITTEN)
    check_teacher(s)
    variant = s.game()
    t0 = time.perf_counter()
    demos = list(
        record_demonstrations(s.deals, variant, s.teacher, max_steps=s.max_steps, jobs=s.jobs,
                              progress=not s.no_progress)
    )  # fmt: skip
    Path(s.demos).parent.mkdir(parents=True, exist_ok=True)
    save_demonstrations(s.demos, demos, variant, s.teacher)
    return {
        "teacher": s.teacher,
        "variant": variant.name,
        "games": len(demos),
        "won": sum(d.won for d in demos),
        "decisions": sum(len(d.actions) for d in demos),
        "seconds": round(time.perf_counter() - t0, 1),
        "demos": s.demos,
    }


def _read_demos(s: CloneSettings) -> tuple[list[Demonstration], Variant]:
    """The games of an existing ``s.demos``: :class:`SettingsError` naming ``demos`` if it is
    not a demonstrations file or holds another teacher's games or another game."""
    from .imitation import load_demonstrations

    with setting_up("demos"):
        demos, meta = load_demonstrations(s.demos)
    variant = get_variant(meta["variant"])
    if (meta["teacher"], variant) != (s.teacher, s.game()):
        raise SettingsError(
            "demos",
            f"{s.demos} holds {meta['teacher']}'s games of {variant.name}, not "
            f"{s.teacher}'s of {s.game().name} (give another file to record them)",
        )
    return demos, variant


def _read_cache(path: str) -> BCDataset:
    """The data set cached in ``path`` by :func:`clone`; :class:`SettingsError` if it is not one."""
    from .imitation import BCDataset

    try:
        with np.load(path, allow_pickle=False) as npz:
            return BCDataset(**dict(npz))
    except (OSError, ValueError, TypeError):
        problem = f"{path} is not a cache of clone_teacher.py (an .npz of the replayed decisions)"
        raise SettingsError("cache", problem) from None


def _write_curve(path: Path, rows: list[dict[str, Any]]) -> None:
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k != "epoch", k))
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def clone(s: CloneSettings) -> dict[str, Any]:
    """The teacher's games (:func:`record`, unless ``s.demos`` exists) cloned into ``s.out``
    (see the module docstring); returns a summary. A setting that cannot be used (the paths,
    the teacher, the demonstrations, the cache) is a :class:`SettingsError` before anything is
    played, trained or written."""
    from .imitation import build_bc_dataset

    check_paths(s, WRITTEN)  # first: the demonstrations and the cache may be read after
    recorded: dict[str, Any] | None = None
    if Path(s.demos).exists():
        demos, variant = _read_demos(s)
    else:
        check_teacher(s)
    data = _read_cache(s.cache) if s.cache and Path(s.cache).exists() else None
    if not Path(s.demos).exists():
        recorded = record(s)
        demos, variant = _read_demos(s)
    import torch  # (once the inputs are good)

    from .measure import win_rate
    from .models import action_set_model, action_set_sidecar, model_file_path, save_model
    from .policy import behaviour_clone

    torch.set_num_threads(1)
    torch.manual_seed(s.seed)
    t0 = time.perf_counter()
    if data is None:
        data = build_bc_dataset(demos, variant, imitate_lost=s.imitate_lost)
        if s.cache:
            Path(s.cache).parent.mkdir(parents=True, exist_ok=True)
            arrays = {f.name: getattr(data, f.name) for f in fields(data)}
            np.savez(s.cache, **{k: v for k, v in arrays.items() if v is not None})
    deals = np.unique(data.deal)
    held = set(deals[np.random.default_rng(s.seed).permutation(len(deals))[: len(deals) // 10]])
    is_valid = np.array([d in held for d in data.deal])
    train, valid = data.subset(np.flatnonzero(~is_valid)), data.subset(np.flatnonzero(is_valid))
    print(
        f"{len(demos)} {s.teacher} games ({sum(d.won for d in demos)} won): "
        f"{len(train)} training and {len(valid)} held-out decisions, "
        f"{time.perf_counter() - t0:.0f} s to build"
    )
    model = action_set_model(variant, hidden=s.hidden, seed=s.seed)
    eval_deals = validation_deals(s.eval_deals)
    out = Path(s.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    curve_path = out.with_name(out.stem + "_curve.csv")
    rows: list[dict[str, float]] = []

    def log(row: dict[str, float]) -> None:
        epoch = int(row["epoch"])
        if s.eval_deals and (epoch % s.eval_every == 0 or epoch == s.epochs):
            for det in (True, False):
                side = action_set_sidecar(variant, det)
                r = win_rate(model, side, eval_deals, jobs=s.jobs)
                row[f"win_rate_{'argmax' if det else 'sampled'}"] = r["win_rate"]
        row["seconds"] = time.perf_counter() - t0
        rows.append(dict(row))
        print(json.dumps({k: round(v, 4) for k, v in row.items()}), flush=True)

    behaviour_clone(model.policy, train, valid, epochs=s.epochs, batch_size=s.batch_size,
                    lr=s.lr, seed=s.seed, log=log)  # fmt: skip
    _write_curve(curve_path, rows)
    last = rows[-1]
    deterministic = last.get("win_rate_argmax", 1.0) >= last.get("win_rate_sampled", 0.0)
    wall = time.perf_counter() - t0
    training = {
        "stage": "behaviour cloning",
        "demonstrations": s.demos,
        "teacher": s.teacher,
        "epochs": s.epochs,
        "imitate_lost": s.imitate_lost,
        "wall_time_s": round(wall, 1),
        "validation_deals": f"{eval_deals.start}:{eval_deals.stop}",
    }
    save_model(model, out, action_set_sidecar(variant, deterministic, training=training))
    return {"recorded": recorded, "model": str(model_file_path(out)), "checkpoint": str(out),
            "deterministic": deterministic, "curve": str(curve_path),
            "seconds": round(wall, 1)}  # fmt: skip


__all__ = ["CloneSettings", "check_teacher", "clone", "record"]
