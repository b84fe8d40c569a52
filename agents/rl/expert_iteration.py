"""Expert iteration with the planner as the teacher: a network that plays Spider without search.

The stages (:class:`PipelineSettings`, ``examples/planner_rl.py --stage STAGE``; ``all`` runs the
ones not done yet, in order), each writing into ``out``:

1. ``demos``: the planner plays training deals (``demo_deals``, never the test deals 0..999)
   into the demonstration store ``demos/`` (:mod:`.planner_demos`: the rows the policy sees,
   the planner's choice and its scores of the candidates it weighed); a shard at a time in
   ``jobs`` processes or on Ray (``ray``), so an interrupted run resumes;
2. ``clone``: behaviour cloning (:func:`~.policy.behaviour_clone`): cross-entropy on the
   planner's choice, mixed (``soft``) with a softmax of its scores where it scored several
   candidates; the critic learns every decision's discounted return in the planner's games (a
   **value from outcomes**, so PPO does not start from a random baseline). A tenth of the
   games (by deal) is held out for the agreement; the validation deals are played after every
   epoch (``clone_curve.csv``). Model: ``clone.zip`` / ``clone.safetensors``;
3. ``dagger``: the cloned network plays other training deals (``dagger_deals``) on its own and
   the planner labels one of its decisions in ``dagger_every`` (store ``dagger/``); the network
   is trained further on the demonstrations and those labels together (``dagger.zip``);
4. ``ppo``: the batched PPO (:mod:`.ppo`) from the last network, with a KL term towards it
   (``bc_coef``, lowered to 0 over ``bc_steps``) that keeps it near the teacher early on
   (``ppo/``: ``eval.csv``, ``model.safetensors``);
5. ``test``: every stage's model and the ``baseline`` (the model trained from scratch) on the
   test deals, paired (``test.json``: win rates, intervals, McNemar).

``pipeline.json`` records each stage's wall and CPU seconds; ``curve.csv`` is the validation
win rate against the training stages' wall time (from cloning), stage by stage
(:func:`pipeline_curve`, plotted by ``examples/planner_rl.py --stage plot``).
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np

from spider_env.core.variants import Variant, resolve_variant
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS

from .envs import TEST_DEALS, overlaps_test_deals, validation_deals
from .settings import (
    InputFile,
    Name,
    OutputDir,
    Text,
    above,
    at_least,
    check,
    check_fields,
    check_paths,
    setting_up,
)

STAGES = ("demos", "clone", "dagger", "ppo", "test")


def deal_range(text: str) -> range:
    """``"start:stop"`` as a range (``start == stop``: none); ``ValueError`` otherwise."""
    parts = text.split(":")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"deals must be given as start:stop, got {text!r}")
    lo, hi = (int(p) for p in parts)
    if hi < lo:
        raise ValueError(f"deals {text!r}: stop is below start")
    return range(lo, hi)


@dataclass(frozen=True)
class PipelineSettings:
    """Every setting of the planner-to-network pipeline (flags of ``examples/planner_rl.py``)."""

    stage: str = field(default="all", metadata={"choices": ("all", *STAGES, "plot")})
    """the stage to run (all: every stage not done yet, in order; plot: curve.png)"""
    suits: int = field(default=2, metadata={"choices": (1, 2, 4)})
    """suits of classic Spider"""
    variant: Annotated[str, Name] | None = None
    """a variant name instead of --suits"""
    out: Annotated[str, OutputDir] | None = None
    """the run's folder (default runs/planner-<variant>)"""
    teacher: Annotated[str, Name] = "planner"
    """the teacher (a player of spider-env evaluate; the planner's scores are kept)"""
    demo_deals: range = range(100_000, 101_000)
    """training deals the teacher plays (start:stop; never the test deals 0..999)"""
    shard: int = 25
    """games per shard of a store (the unit of resumption and of a worker's task)"""
    jobs: int = 2
    """worker processes (recording, labelling, test games)"""
    ray: Annotated[str, Text] | None = None
    """record and label on Ray instead (local, auto or HOST:PORT)"""
    hidden: int = 128
    """width of the network (shared action scorer and value layer)"""
    epochs: int = 4
    """cloning: passes over the demonstrations"""
    lr: float = 1e-3
    """cloning: Adam's learning rate (cosine-annealed)"""
    soft: float = 0.5
    """cloning: weight of the teacher's scores in the target where it scored candidates"""
    temperature: float = 0.01
    """cloning: temperature of the softmax of the teacher's scores"""
    dagger_deals: range = range(200_000, 200_060)
    """DAgger: training deals the network plays and the teacher labels (0:0 to skip)"""
    dagger_every: int = 10
    """DAgger: the teacher labels one decision of the network in this many"""
    dagger_epochs: int = 2
    """DAgger: passes over the demonstrations and labels together"""
    dagger_share: float = 0.25
    """DAgger: the labels' share of the decisions trained on (repeated to reach it; 0: as many
    as they are)"""
    ppo_timesteps: int = 8_000_000
    """PPO: env steps (0 to skip)"""
    ppo_lr: float = 1e-4
    """PPO: Adam's learning rate at the start"""
    bc_coef: float = 0.2
    """PPO: weight of the KL divergence from the cloned network"""
    bc_steps: int = 2_000_000
    """PPO: env steps over which --bc-coef falls to 0"""
    eval_deals: int = 200
    """validation deals (1000, 1001, ...) played after each epoch and PPO evaluation"""
    test_deals: Sequence[int] = TEST_DEALS
    """deals of the test stage"""
    baseline: Annotated[str, InputFile] | None = None
    """the model trained from scratch the test pairs against (default: the shipped one)"""
    max_steps: int = DEFAULT_MAX_EPISODE_STEPS
    """step limit of a game"""
    seed: int = 0
    """seed of the networks, the teacher's games and the held-out games"""
    no_progress: bool = False
    """print one line per shard and epoch only"""

    def __post_init__(self) -> None:
        check_fields(self)
        at_least(self, 1, "shard", "jobs", "hidden", "epochs", "dagger_every", "dagger_epochs")
        at_least(self, 1, "bc_steps", "eval_deals", "max_steps")
        at_least(self, 0, "ppo_timesteps", "bc_coef")
        above(self, 0, "lr", "ppo_lr", "temperature")
        check(0 <= self.soft <= 1, "soft", f"must be in 0..1, got {self.soft}")
        check(0 <= self.dagger_share < 1, "dagger_share",
              f"must be in 0..1 (1 excluded), got {self.dagger_share}")  # fmt: skip
        for name in ("demo_deals", "dagger_deals"):
            deals = getattr(self, name)
            check(isinstance(deals, range) and deals.step == 1, name, "must be a range start:stop")
            check(not overlaps_test_deals(deals), name,
                  "deals 0..999 are the test set: train on others")  # fmt: skip
        check(len(self.demo_deals) > 0, "demo_deals", "no deals")
        demo, dag = self.demo_deals, self.dagger_deals
        overlap = len(dag) > 0 and dag.start < demo.stop and demo.start < dag.stop
        problem = "must not overlap --demo-deals (the network plays deals the teacher did not)"
        check(not overlap, "dagger_deals", problem)
        with setting_up("variant"):
            self.game()

    def game(self) -> Variant:
        """The variant played."""
        return resolve_variant(self.variant, None if self.variant else self.suits)

    def folder(self) -> Path:
        """The run's folder."""
        return Path(self.out or f"runs/planner-{self.game().name}")


# --- bookkeeping --------------------------------------------------------------------------------
class _Record:
    """``pipeline.json``: each stage's wall and CPU seconds and summary, kept across runs."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "pipeline.json"
        self.data: dict[str, Any] = {}
        if self.path.exists():
            with setting_up("out"):
                self.data = json.loads(self.path.read_text())

    def done(self, stage: str) -> bool:
        return stage in self.data.get("stages", {})

    def save(self, stage: str, summary: dict[str, Any], wall: float, cpu: float) -> None:
        stages = self.data.setdefault("stages", {})
        stages[stage] = {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), **summary}
        self.path.write_text(json.dumps(self.data, indent=1) + "\n")


def _say(s: PipelineSettings, text: str) -> None:
    print(text, flush=True)  # one line per shard, epoch and stage (the runs are long)


def _spec(s: PipelineSettings, player: str, every: int = 1) -> Any:
    from .planner_demos import StoreSpec

    return StoreSpec(s.game().name, s.teacher, player, max_steps=s.max_steps, every=every)


def _ppo_settings(s: PipelineSettings, **kw: Any) -> Any:
    from .ppo import BatchedPPOSettings

    return BatchedPPOSettings(
        variant=s.game().name, eval_deals=s.eval_deals, max_episode_steps=s.max_steps,
        seed=s.seed, torch_threads=min(2, s.jobs), no_progress=s.no_progress, **kw
    )  # fmt: skip


def validation_win_rate(policy: Any, s: PipelineSettings) -> float:
    """The policy's most likely action on the validation deals (batched)."""
    from .ppo import play_deals

    policy.eval()
    recs = play_deals(policy, s.game(), _ppo_settings(s), validation_deals(s.eval_deals))
    return sum(r["won"] for r in recs) / len(recs)


# --- the stages ---------------------------------------------------------------------------------
def stage_demos(s: PipelineSettings, shards: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The teacher's games into ``demos/`` (the missing shards; each new shard's summary is
    appended to ``shards``)."""
    from .planner_demos import fill_store

    def progress(summary: dict[str, Any]) -> None:
        if shards is not None:
            shards.append(summary)
        _say(s, "demos shard: " + json.dumps(summary))

    with setting_up("demo_deals"):
        return fill_store(s.folder() / "demos", _spec(s, s.teacher), s.demo_deals,
                          shard=s.shard, jobs=s.jobs, ray=s.ray, seed=s.seed,
                          progress=progress)  # fmt: skip


def _split(data: Any, seed: int) -> tuple[Any, Any]:
    deals = np.unique(data.deal)
    held = deals[np.random.default_rng(seed).permutation(len(deals))[: max(1, len(deals) // 10)]]
    is_valid = np.isin(data.deal, held)
    if is_valid.all():
        return data, data.subset(np.flatnonzero(is_valid))
    return data.subset(np.flatnonzero(~is_valid)), data.subset(np.flatnonzero(is_valid))


def oversample(data: Any, extra: range, share: float) -> Any:
    """``data`` with its decisions of the deals ``extra`` repeated until they are about
    ``share`` of it (``share`` 0, or none of them: ``data`` as it is)."""
    mine = np.isin(data.deal, np.arange(extra.start, extra.stop, dtype=np.uint64))
    n_extra, n_rest = int(mine.sum()), int((~mine).sum())
    if share == 0 or n_extra == 0 or n_rest == 0:
        return data
    times = max(1, round(share / (1 - share) * n_rest / n_extra))
    index = np.concatenate([np.flatnonzero(~mine), np.repeat(np.flatnonzero(mine), times)])
    return data.subset(np.sort(index))


def _fit(
    s: PipelineSettings, model: Any, stores: list[Path], name: str, epochs: int, lr: float
) -> dict[str, Any]:
    """Clone the stores' decisions into ``model`` (``epochs`` at ``lr``; the DAgger labels
    oversampled to ``s.dagger_share``), playing the validation deals after each epoch; saves
    ``<name>.zip`` / ``.safetensors`` / ``_curve.csv``."""
    import torch

    from .models import action_set_sidecar, save_model
    from .planner_demos import load_store
    from .policy import behaviour_clone

    t0 = time.perf_counter()
    with setting_up("out"):
        data = load_store(stores)
    train, valid = _split(data, s.seed)
    train = oversample(train, s.dagger_deals, s.dagger_share)
    _say(s, f"{name}: {len(train):,} training and {len(valid):,} held-out decisions "
            f"({time.perf_counter() - t0:.0f} s to read)")  # fmt: skip
    torch.set_num_threads(min(2, s.jobs))
    torch.manual_seed(s.seed)
    rows: list[dict[str, float]] = []
    start = time.perf_counter()

    def log(row: dict[str, float]) -> None:
        row["win_rate"] = validation_win_rate(model.policy, s)
        row["wall_s"] = round(time.perf_counter() - start, 1)
        rows.append(dict(row))
        _say(s, f"{name} " + json.dumps({k: round(v, 4) for k, v in row.items()}))

    if name != "clone":  # the starting point, for the curve
        log({"epoch": 0})
    behaviour_clone(model.policy, train, valid, epochs=epochs, lr=lr, soft=s.soft,
                    temperature=s.temperature, seed=s.seed, log=log)  # fmt: skip
    folder = s.folder()
    with (folder / f"{name}_curve.csv").open("w", newline="") as fh:
        keys = sorted({k for r in rows for k in r}, key=lambda k: (k != "epoch", k))
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    training = {
        "stage": f"planner pipeline: {name}",
        "teacher": s.teacher,
        "stores": [p.name for p in stores],
        "decisions": len(data),
        "epochs": epochs,
        "soft": s.soft,
        "temperature": s.temperature,
        "validation_deals": f"{validation_deals(s.eval_deals).start}:"
        f"{validation_deals(s.eval_deals).stop}",
        "validation_win_rate": rows[-1]["win_rate"],
    }
    save_model(model, folder / f"{name}.zip", action_set_sidecar(s.game(), True, training=training))
    return {"decisions": len(data), "validation_win_rate": rows[-1]["win_rate"],
            "valid_accuracy": rows[-1].get("valid_accuracy")}  # fmt: skip


def stage_clone(s: PipelineSettings) -> dict[str, Any]:
    """Behaviour cloning of ``demos/`` into ``clone.zip``."""
    from .models import action_set_model

    model = action_set_model(s.game(), hidden=s.hidden, seed=s.seed)
    return _fit(s, model, [s.folder() / "demos"], "clone", s.epochs, s.lr)


def stage_dagger(s: PipelineSettings) -> dict[str, Any]:
    """The cloned network's own games labelled by the teacher (``dagger/``), then training on
    the demonstrations and the labels (``dagger.zip``)."""
    from .models import load_action_set_model
    from .planner_demos import fill_store

    folder = s.folder()
    model_file = folder / "clone.safetensors"
    check(model_file.exists(), "stage", f"{model_file} is missing: run --stage clone first")

    def progress(summary: dict[str, Any]) -> None:
        _say(s, "dagger shard: " + json.dumps(summary))

    # the player is named by its file in the run's folder (a store is one network's games)
    labelled = fill_store(folder / "dagger", _spec(s, model_file.name, s.dagger_every),
                          s.dagger_deals, shard=s.shard, model=str(model_file), jobs=s.jobs,
                          ray=s.ray, seed=s.seed, progress=progress)  # fmt: skip
    _, _, model = load_action_set_model(folder / "clone.zip")
    fit = _fit(s, model, [folder / "demos", folder / "dagger"], "dagger", s.dagger_epochs,
               s.lr / 3)  # fmt: skip
    return {"labelled": labelled, **fit}


def stage_ppo(s: PipelineSettings) -> dict[str, Any]:
    """The batched PPO from the last network (``ppo/``)."""
    from .ppo import train

    folder = s.folder()
    start = folder / ("dagger.zip" if (folder / "dagger.zip").exists() else "clone.zip")
    check(start.exists(), "stage", f"{start} is missing: run --stage clone first")
    ps = _ppo_settings(s, bc=str(start), bc_coef=s.bc_coef, bc_steps=s.bc_steps,
                       timesteps=s.ppo_timesteps, learning_rate=s.ppo_lr,
                       out=str(folder / "ppo"),
                       eval_every=max(1, s.ppo_timesteps // 10))  # fmt: skip
    summary = train(ps)
    return {k: summary[k] for k in ("timesteps", "chosen_at", "validation_win_rate",
                                    "train_steps_per_wall_s")}  # fmt: skip


def stage_models(s: PipelineSettings) -> list[str]:
    """The models of the stages done, in order."""
    folder = s.folder()
    paths = [folder / "clone.safetensors", folder / "dagger.safetensors",
             folder / "ppo" / "model.safetensors"]  # fmt: skip
    return [str(p) for p in paths if p.exists()]


def default_baseline(s: PipelineSettings) -> str | None:
    """The shipped model trained from scratch on this game, if there is one."""
    path = Path("docs/models") / f"rl_{s.suits}suit.safetensors"
    return str(path) if s.variant is None and path.exists() else None


def stage_test(s: PipelineSettings) -> dict[str, Any]:
    """Every stage's model and the baseline on the test deals (``test.json``)."""
    from spider_env.apps.evaluation import evaluate

    agents = stage_models(s)
    check(bool(agents), "stage", "no model to test: run the other stages first")
    baseline = s.baseline or default_baseline(s)
    if baseline:
        agents.append(baseline)
    result = evaluate(agents, s.test_deals, variant=s.game(), jobs=s.jobs,
                      max_steps=s.max_steps, progress=not s.no_progress)  # fmt: skip
    result.to_json(str(s.folder() / "test.json"))
    _say(s, result.table())
    return {x.agent: x.win_rate for x in result.summaries}


def pipeline_curve(folder: str | Path) -> list[dict[str, Any]]:
    """The validation win rate against the wall time of the training stages (from the start
    of cloning; the demonstrations' cost is their own, in ``pipeline.json``), stage by stage,
    from ``pipeline.json`` and the stages' curves."""
    folder = Path(folder)
    stages = json.loads((folder / "pipeline.json").read_text()).get("stages", {})
    at = 0.0
    rows: list[dict[str, Any]] = []
    for stage, path in (("clone", folder / "clone_curve.csv"),
                        ("dagger", folder / "dagger_curve.csv"),
                        ("ppo", folder / "ppo" / "eval.csv")):  # fmt: skip
        if stage not in stages or not path.exists():
            continue
        # the labelling came before the DAgger stage's epochs
        before = stages[stage].get("labelled", {}).get("played", {}).get("wall_seconds", 0.0)
        with path.open() as fh:
            for row in csv.DictReader(fh):
                rows.append({"stage": stage, "wall_s": round(at + before + float(row["wall_s"]), 1),
                             "win_rate": float(row["win_rate"])})  # fmt: skip
        at += float(stages[stage]["wall_s"])
    return rows


def plot_pipeline(folder: str | Path, out: str | Path | None = None) -> Path:
    """``curve.png`` (and ``curve.csv``): :func:`pipeline_curve` drawn stage by stage."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    rows = pipeline_curve(folder)
    with (folder / "curve.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["stage", "wall_s", "win_rate"])
        w.writeheader()
        w.writerows(rows)
    fig, ax = plt.subplots(figsize=(7, 4))
    for stage in ("clone", "dagger", "ppo"):
        pts = [r for r in rows if r["stage"] == stage]
        if pts:
            ax.plot([p["wall_s"] / 3600 for p in pts], [p["win_rate"] for p in pts], "o-",
                    label=stage)  # fmt: skip
    ax.set_xlabel("wall time of training from the planner's games (hours, from cloning)")
    ax.set_ylabel("validation win rate (most likely action)")
    ax.grid(alpha=0.3)
    ax.legend()
    path = Path(out) if out else folder / "curve.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


RUNNERS = {
    "demos": stage_demos,
    "clone": stage_clone,
    "dagger": stage_dagger,
    "ppo": stage_ppo,
    "test": stage_test,
}


def skipped(s: PipelineSettings, stage: str) -> bool:
    """Whether ``all`` leaves ``stage`` out by the settings (no DAgger deals, no PPO steps)."""
    return (stage == "dagger" and len(s.dagger_deals) == 0) or (
        stage == "ppo" and s.ppo_timesteps == 0
    )


def check_inputs(s: PipelineSettings) -> None:
    """:class:`SettingsError` naming the first setting that cannot be used (the paths, the
    teacher, the baseline, Ray, a store of another run in the folder), before anything is
    played or written."""
    from spider_env.agents import make_agent

    from .planner_demos import check_store

    check_paths(s)
    with setting_up("out"):
        check(s.folder().is_dir() or not s.folder().exists(), "out",
              f"{s.folder()} is not a folder")  # fmt: skip
    with setting_up("teacher"):
        make_agent(s.teacher, s.game())
    if s.baseline is not None:
        with setting_up("baseline"):
            make_agent(s.baseline, s.game())
    if s.ray is not None:
        from spider_env.apps.evaluation.ray_backend import check_address, require_ray

        with setting_up("ray"):
            check_address(s.ray)
            require_ray()
    with setting_up("out"):
        check_store(s.folder() / "demos", _spec(s, s.teacher))
        check_store(s.folder() / "dagger", _spec(s, "clone.safetensors", s.dagger_every))


def _save(record: _Record, stage: str, summary: dict[str, Any], wall: float, c0: float) -> None:
    """Record ``stage``: its wall seconds and CPU seconds (the workers' included; the
    demonstrations' added to those of earlier runs, which they resumed)."""
    cpu_s = time.process_time() - c0
    if stage in ("demos", "dagger"):  # the workers' CPU, not only this process's
        played = summary.get("played", summary.get("labelled", {}).get("played", {}))
        cpu_s += float(played.get("cpu_seconds", 0.0))
    if stage == "demos" and record.done("demos"):
        prev = record.data["stages"]["demos"]
        wall += prev["wall_s"]
        cpu_s += prev["cpu_s"]
    record.save(stage, summary, wall, cpu_s)


def run(s: PipelineSettings) -> dict[str, Any]:
    """Run ``s.stage`` (``all``: every stage not recorded as done in ``pipeline.json``; the
    demonstrations and labels always resume their missing shards). Returns the record. A
    setting that cannot be used is a :class:`SettingsError` before anything is done
    (:func:`check_inputs`)."""
    check_inputs(s)
    folder = s.folder()
    with setting_up("out"):
        folder.mkdir(parents=True, exist_ok=True)
    if s.stage == "plot":
        return {"plot": str(plot_pipeline(folder))}
    record = _Record(folder)
    record.data["settings"] = {k: (f"{v.start}:{v.stop}" if isinstance(v, range) else v)
                               for k, v in asdict(s).items()}  # fmt: skip
    todo = [s.stage] if s.stage != "all" else [
        st for st in STAGES
        if not skipped(s, st) and (st in ("demos",) or not record.done(st))
    ]  # fmt: skip
    for stage in todo:
        _say(s, f"--- stage {stage}")
        c0, w0 = time.process_time(), time.perf_counter()
        shards: list[dict[str, Any]] = []
        try:
            summary = stage_demos(s, shards) if stage == "demos" else RUNNERS[stage](s)
        except KeyboardInterrupt:
            if stage == "demos":  # what was played counts: the next run adds to it
                from .planner_demos import store_summary, total

                played = {"played": total(shards), "interrupted": True,
                          "store": store_summary(folder / "demos")}  # fmt: skip
                _save(record, stage, played, time.perf_counter() - w0, c0)
            raise
        _save(record, stage, summary, time.perf_counter() - w0, c0)
    if any(record.done(st) for st in ("clone", "dagger", "ppo")):
        try:
            plot_pipeline(folder)
        except (OSError, ValueError, KeyError) as exc:  # the curve is a report, not the run
            _say(s, f"no curve: {exc}")
    return record.data


__all__ = [
    "STAGES",
    "PipelineSettings",
    "deal_range",
    "oversample",
    "pipeline_curve",
    "plot_pipeline",
    "run",
    "stage_models",
]
