"""The RL recipe, stage by stage: demonstrations, behaviour cloning, MaskablePPO fine-tuning.

Each stage is a function of one settings dataclass (the flags of its example script):

1. :func:`record_demos` (:class:`DemoSettings`, ``examples/rl_demos.py``): the teacher plays
   training deals; its games are stored as action lists (:mod:`.imitation`);
2. :func:`clone` (:class:`BCSettings`, ``rl_bc.py``): :class:`~.policy.ActionSetPolicy` learns
   the teacher's choices in the won games and the returns (``bc.zip``, ``bc_curve.csv``);
3. :func:`finetune` (:class:`FinetuneSettings`, ``rl_finetune.py``): MaskablePPO trains it
   further on random training deals; the checkpoint (and way of choosing actions) that wins
   the most validation deals is kept (``ppo.zip``, ``ppo_curve.csv``);
4. :func:`run_recipe` (:class:`RecipeSettings`, ``rl_recipe.py``): all of them, then random,
   greedy and lookahead on the validation deals (``baselines.json``) and the curves.

The stages that measure take an :class:`~.measure.Evaluate` (the caller passes
``spider_env.apps.evaluation.evaluate``). Deals: :mod:`.envs` (no stage plays the test deals).
"""

from __future__ import annotations

import csv
import json
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
from spider_env.agents.model_format import ACTIONS_MODE, EnvSettings, Sidecar

from spider_env.core.variants import Variant, classic, get_variant, resolve_variant
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS
from spider_env.observation.actions import DEFAULT_ACTION_ROWS

from .envs import env_factories, overlaps_test_deals, validation_deals
from .plots import RECIPE_BASELINES, plot_recipe
from .settings import (
    READ,
    WRITTEN,
    CacheFile,
    InputFile,
    Name,
    OutputDir,
    OutputFile,
    SettingsError,
    above,
    at_least,
    check,
    check_discounts,
    check_fields,
    check_paths,
    path_problem,
    setting_up,
)

if TYPE_CHECKING:
    from .imitation import BCDataset
    from .measure import Evaluate

REWARD_MODE = "runs"  # +1 per completed run, +10 on the win (what the cloned value learns too)
SUITS = {"choices": (1, 2, 4)}


def recipe_sidecar(
    variant: Variant | str,
    deterministic: bool,
    action_rows: int = DEFAULT_ACTION_ROWS,
    training: dict[str, Any] | None = None,
) -> Sidecar:
    """The sidecar of a recipe model: MaskablePPO, :class:`~.policy.ActionSetPolicy`, per-action
    features, the ``"runs"`` reward."""
    from .models import ACTION_SET_POLICY

    env = EnvSettings(
        variant=get_variant(variant).spec_text(),
        obs_mode=ACTIONS_MODE,
        action_rows=action_rows,
        reward_mode=REWARD_MODE,
    )
    return Sidecar(
        env=env,
        algo="MaskablePPO",
        policy=ACTION_SET_POLICY,
        deterministic=deterministic,
        training=training or {},
    )


# --- 1. demonstrations --------------------------------------------------------------------------
@dataclass(frozen=True)
class DemoSettings:
    """Recording the teacher's games."""

    teacher: Annotated[str, Name] = "lookahead"
    """the teacher: any agent of spider-env evaluate"""
    suits: int = field(default=1, metadata=SUITS)
    """suits of classic Spider"""
    variant: Annotated[str, Name] | None = None
    """a variant name instead of --suits"""
    deals: Sequence[int] = range(100_000, 103_000)
    """training deals (start:stop; never the test deals 0..999)"""
    max_steps: int = DEFAULT_MAX_EPISODE_STEPS
    """step limit of a game"""
    jobs: int = 1
    """worker processes"""
    out: Annotated[str, OutputFile] = "runs/rl_1suit/demos.npz"
    """the demonstrations file"""
    no_progress: bool = False
    """hide the progress bar"""

    def __post_init__(self) -> None:
        check_fields(self)
        at_least(self, 1, "max_steps", "jobs")
        check(not overlaps_test_deals(self.deals), "deals",
              "deals 0..999 are the test set: record demonstrations on others")  # fmt: skip
        try:
            self.game()
        except ValueError as exc:
            raise SettingsError("variant", str(exc)) from None

    def game(self) -> Variant:
        """The variant played."""
        return resolve_variant(self.variant, None if self.variant else self.suits)


def check_teacher(s: DemoSettings) -> None:
    """:class:`SettingsError` if the teacher cannot play ``s.game()`` (here, not in a worker)."""
    from spider_env.agents import make_agent

    try:
        make_agent(s.teacher, s.game())
    except (ValueError, TypeError, OSError, ImportError) as exc:
        raise SettingsError("teacher", str(exc)) from None


def record_demos(s: DemoSettings) -> dict[str, Any]:
    """Play the teacher on ``s.deals`` and save its games to ``s.out``; a summary. A setting
    that cannot be used is a :class:`SettingsError` before anything is played or written."""
    from .imitation import record_demonstrations, save_demonstrations

    check_paths(s)
    check_teacher(s)
    variant = s.game()
    t0 = time.perf_counter()
    progress = not s.no_progress
    demos = list(
        record_demonstrations(
            s.deals, variant, s.teacher, max_steps=s.max_steps, jobs=s.jobs, progress=progress
        )
    )
    Path(s.out).parent.mkdir(parents=True, exist_ok=True)
    save_demonstrations(s.out, demos, variant, s.teacher)
    return {
        "teacher": s.teacher,
        "variant": variant.name,
        "games": len(demos),
        "won": sum(d.won for d in demos),
        "decisions": sum(len(d.actions) for d in demos),
        "seconds": time.perf_counter() - t0,
        "out": s.out,
    }


# --- 2. behaviour cloning ------------------------------------------------------------------------
@dataclass(frozen=True)
class BCSettings:
    """Behaviour cloning of the demonstrations into an ActionSetPolicy."""

    demos: Annotated[str, InputFile] = "runs/rl_1suit/demos.npz"
    """the demonstrations file"""
    out: Annotated[str, OutputFile] = "runs/rl_1suit/bc.zip"
    """the cloned model (its curve goes beside it: <stem>_curve.csv)"""
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
    jobs: int = 2
    """processes for the evaluations"""
    cache: Annotated[str, CacheFile] | None = None
    """keep the replayed data set in this .npz"""
    imitate_lost: bool = False
    """also clone the first 400 decisions of lost games (where the teacher rarely wins)"""
    seed: int = 0
    """seed of the network and of the held-out games"""

    def __post_init__(self) -> None:
        check_fields(self)
        at_least(self, 1, "epochs", "batch_size", "hidden", "eval_every", "jobs")
        at_least(self, 0, "eval_deals")
        check(self.lr > 0, "lr", f"must be > 0, got {self.lr}")


def _write_curve(path: Path, rows: list[dict[str, Any]], keys: list[str]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def _read_cache(path: str) -> BCDataset:
    """The data set cached in ``path`` by :func:`clone`; :class:`SettingsError` if it is not one."""
    from .imitation import BCDataset

    try:
        with np.load(path, allow_pickle=False) as npz:
            return BCDataset(**dict(npz))
    except (OSError, ValueError, TypeError):
        problem = f"{path} is not a cache of rl_bc.py (an .npz of the replayed decisions)"
        raise SettingsError("cache", problem) from None


def clone(s: BCSettings, evaluate: Evaluate) -> dict[str, Any]:
    """Clone the demonstrations ``s.demos`` into ``s.out`` (MaskablePPO ``.zip`` + sidecar):
    a tenth of the games (by deal) is held out to measure agreement with the teacher; every
    ``eval_every`` epochs and after the last one the policy plays the validation deals, most
    likely action and sampled (``<stem>_curve.csv``); the model plays the choice that won more
    after the last epoch. Returns a summary. A setting that cannot be used (the paths, the
    demonstrations, the cache) is a :class:`SettingsError` before anything is trained or
    written."""
    from .imitation import build_bc_dataset, load_demonstrations

    check_paths(s, WRITTEN)  # then the cache (which may be written), then what is read
    data = _read_cache(s.cache) if s.cache and Path(s.cache).exists() else None
    check_paths(s, READ)
    with setting_up("demos"):
        demos, meta = load_demonstrations(s.demos)
    import torch  # (once the inputs are good)

    from .measure import win_rate
    from .models import save_model
    from .policy import behaviour_clone

    torch.set_num_threads(1)
    torch.manual_seed(s.seed)
    variant = meta["variant"]
    t0 = time.perf_counter()
    if data is None:
        data = build_bc_dataset(demos, variant, imitate_lost=s.imitate_lost)
        if s.cache:
            Path(s.cache).parent.mkdir(parents=True, exist_ok=True)
            np.savez(s.cache, **{f.name: getattr(data, f.name) for f in fields(data)})
    deals = np.unique(data.deal)
    held = set(deals[np.random.default_rng(s.seed).permutation(len(deals))[: len(deals) // 10]])
    is_valid = np.array([d in held for d in data.deal])
    train, valid = data.subset(np.flatnonzero(~is_valid)), data.subset(np.flatnonzero(is_valid))
    print(
        f"{len(demos)} {meta['teacher']} games ({sum(d.won for d in demos)} won): "
        f"{len(train)} training and {len(valid)} held-out decisions, "
        f"{time.perf_counter() - t0:.0f} s to build"
    )
    model = new_model(variant, FinetuneSettings(n_envs=1, seed=s.seed), hidden=s.hidden)
    eval_deals = validation_deals(s.eval_deals)
    out = Path(s.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    curve_path = out.with_name(out.stem + "_curve.csv")
    rows: list[dict[str, float]] = []

    def log(row: dict[str, float]) -> None:
        epoch = int(row["epoch"])
        if s.eval_deals and (epoch % s.eval_every == 0 or epoch == s.epochs):
            for det in (True, False):
                side = recipe_sidecar(variant, det)
                r = win_rate(model, side, eval_deals, evaluate, jobs=s.jobs)
                row[f"win_rate_{'argmax' if det else 'sampled'}"] = r["win_rate"]
        row["seconds"] = time.perf_counter() - t0
        rows.append(dict(row))
        print(json.dumps({k: round(v, 4) for k, v in row.items()}), flush=True)

    behaviour_clone(
        model.policy,
        train,
        valid,
        epochs=s.epochs,
        batch_size=s.batch_size,
        lr=s.lr,
        seed=s.seed,
        log=log,
    )
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k != "epoch", k))
    _write_curve(curve_path, rows, keys)
    last = rows[-1]
    deterministic = last.get("win_rate_argmax", 1.0) >= last.get("win_rate_sampled", 0.0)
    wall = time.perf_counter() - t0
    training = {
        "stage": "behaviour cloning",
        "demonstrations": s.demos,
        "teacher": meta["teacher"],
        "epochs": s.epochs,
        "imitate_lost": s.imitate_lost,
        "wall_time_s": round(wall, 1),
        "validation_deals": f"{eval_deals.start}:{eval_deals.stop}",
    }
    save_model(model, out, recipe_sidecar(variant, deterministic, training=training))
    return {"model": str(out), "deterministic": deterministic, "curve": str(curve_path),
            "seconds": wall}  # fmt: skip


# --- 3. fine-tuning ------------------------------------------------------------------------------
@dataclass(frozen=True)
class FinetuneSettings:
    """MaskablePPO fine-tuning of the cloned policy (small steps, so that the first updates do
    not undo the cloning)."""

    bc: Annotated[str, InputFile] = "runs/rl_1suit/bc.zip"
    """the cloned model"""
    out: Annotated[str, OutputFile] = "runs/rl_1suit/ppo.zip"
    """the fine-tuned model (curve: <stem>_curve.csv, checkpoints: <stem>_checkpoints/)"""
    timesteps: int = 500_000
    """training steps"""
    n_envs: int = 8
    """parallel training games"""
    n_steps: int = 256
    """rollout steps per env between updates"""
    batch_size: int = 256
    """minibatch size"""
    n_epochs: int = 4
    """passes over each rollout"""
    learning_rate: float = 5e-5
    """Adam's learning rate"""
    clip_range: float = 0.1
    """PPO's clip range"""
    ent_coef: float = 0.0
    """entropy bonus"""
    gamma: float = 0.995
    """discount factor"""
    gae_lambda: float = 0.95
    """GAE's lambda"""
    target_kl: float = 0.02
    """stop an update's epochs when the policy moved this far (KL)"""
    eval_freq: int = 100_000
    """steps between evaluations"""
    eval_deals: int = 200
    """validation deals per evaluation"""
    jobs: int = 2
    """processes for the evaluations"""
    seed: int = 0
    """seed of the model and of the training games"""

    def __post_init__(self) -> None:
        check_fields(self)
        at_least(self, 1, "timesteps", "n_envs", "n_steps", "batch_size", "n_epochs")
        at_least(self, 1, "eval_freq", "eval_deals", "jobs")
        at_least(self, 0, "ent_coef")
        above(self, 0, "learning_rate", "clip_range", "target_kl")
        check_discounts(self)

    def ppo_kwargs(self) -> dict[str, Any]:
        """MaskablePPO's arguments."""
        keys = ("n_steps", "batch_size", "n_epochs", "learning_rate", "gamma", "gae_lambda",
                "clip_range", "ent_coef", "target_kl")  # fmt: skip
        return {k: v for k, v in asdict(self).items() if k in keys}


def new_model(
    variant: Variant | str,
    s: FinetuneSettings | None = None,
    *,
    hidden: int = 128,
    action_rows: int = DEFAULT_ACTION_ROWS,
) -> Any:
    """A ``MaskablePPO`` with :class:`~.policy.ActionSetPolicy` (``hidden`` wide) on
    ``s.n_envs`` training envs, with the PPO settings of ``s`` (default
    :class:`FinetuneSettings`)."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import DummyVecEnv

    from .policy import ActionSetPolicy

    s = s or FinetuneSettings()
    env = recipe_sidecar(variant, True, action_rows).env
    model = MaskablePPO(
        ActionSetPolicy,
        DummyVecEnv(env_factories(env, s.n_envs, seed=s.seed)),
        policy_kwargs={"hidden": hidden, "value_hidden": hidden},
        seed=s.seed,
        device="cpu",
        verbose=0,
        **s.ppo_kwargs(),
    )
    # the recipe keeps its own curve: no SB3 log (without one, every learn() leaves an empty
    # SB3-<time> folder in the temporary directory)
    model.set_logger(Logger(folder=None, output_formats=[]))
    return model


def _cloned_model(path: str) -> tuple[Sidecar, Variant, Any]:
    """The sidecar, game and model of a cloned model (``rl_bc.py``'s): :class:`SettingsError` naming
    ``bc`` if ``path`` is not one (no sidecar naming its game, another kind of model, a file
    that does not load)."""
    from .models import ACTION_SET_POLICY, load_model

    with setting_up("bc"):
        side = Sidecar.read(path)
    variant = side.env.game() if side is not None else None
    if side is None or variant is None:
        raise SettingsError("bc", f"{path} has no sidecar naming its game")
    if side.env.obs_mode != ACTIONS_MODE or side.policy != ACTION_SET_POLICY:
        raise SettingsError(
            "bc",
            f"{path} is not an action-set model (its sidecar has obs_mode "
            f"{side.env.obs_mode!r} and policy {side.policy!r}, not {ACTIONS_MODE!r} and "
            f"{ACTION_SET_POLICY}): give a model cloned by rl_bc.py",
        )
    with setting_up("bc"):
        return side, variant, load_model(path, side)


def finetune(s: FinetuneSettings, evaluate: Evaluate) -> dict[str, Any]:
    """Fine-tune the cloned model ``s.bc`` into ``s.out``: evaluations every ``eval_freq``
    steps (and of the cloned policy first), each a checkpoint; the one that won the most
    validation deals (ties: the later) is saved, so fine-tuning never ships a worse policy
    than it started from. Returns a summary. A setting that cannot be used (the paths, a model
    that is not a cloned one) is a :class:`SettingsError` before anything is trained or
    written."""
    check_paths(s)
    from stable_baselines3.common.callbacks import BaseCallback

    from .measure import win_rate
    from .models import load_model, save_model

    bc_side, variant, bc = _cloned_model(s.bc)
    rows_n = bc_side.env.action_rows
    model = new_model(variant, s, hidden=int(bc.policy.hidden), action_rows=rows_n)
    model.policy.load_state_dict(bc.policy.state_dict())
    out = Path(s.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    ckpt_dir = out.with_name(out.stem + "_checkpoints")
    ckpt_dir.mkdir(exist_ok=True)
    curve_path = out.with_name(out.stem + "_curve.csv")
    eval_deals = validation_deals(s.eval_deals)
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    train_seconds = [0.0]

    def evaluate_now(steps: int) -> None:
        t = time.perf_counter()
        row: dict[str, Any] = {"timesteps": steps}
        for det in (True, False):
            side = recipe_sidecar(variant, det, rows_n)
            r = win_rate(model, side, eval_deals, evaluate, jobs=s.jobs)
            row[f"win_rate_{'argmax' if det else 'sampled'}"] = r["win_rate"]
            row[f"runs_{'argmax' if det else 'sampled'}"] = r["runs"]
        path = ckpt_dir / f"step_{steps}.zip"
        save_model(model, path, recipe_sidecar(variant, True, rows_n))
        row["checkpoint"] = str(path)
        row["train_seconds"] = round(train_seconds[0], 1)
        row["eval_seconds"] = round(time.perf_counter() - t, 1)
        rows.append(row)
        print(json.dumps(row), flush=True)

    class Every(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.next = s.eval_freq
            self.t = time.perf_counter()

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next:
                train_seconds[0] += time.perf_counter() - self.t
                evaluate_now(self.num_timesteps)
                self.next += s.eval_freq
                self.t = time.perf_counter()
            return True

        def _on_training_end(self) -> None:
            train_seconds[0] += time.perf_counter() - self.t

    evaluate_now(0)
    model.learn(s.timesteps, callback=Every())
    if model.num_timesteps - rows[-1]["timesteps"] >= s.n_steps * s.n_envs:
        evaluate_now(model.num_timesteps)  # (not again for the end of the last rollout)
    _write_curve(curve_path, rows, list(rows[0]))
    # The best checkpoint and way of choosing actions on the validation deals (ties: later).
    rate, steps, deterministic, row = max(
        (
            (r[f"win_rate_{m}"], r["timesteps"], m == "argmax", r)
            for r in rows
            for m in ("argmax", "sampled")
        ),
        key=lambda t: (t[0], t[1]),
    )
    chosen = load_model(row["checkpoint"])
    wall = time.perf_counter() - t0
    keys = ("n_envs", "n_steps", "batch_size", "n_epochs", "learning_rate", "clip_range",
            "ent_coef", "gamma")  # fmt: skip
    training = {
        "stage": "MaskablePPO fine-tuning",
        "from": s.bc,
        "bc": {k: bc_side.training.get(k) for k in ("teacher", "demonstrations", "epochs")},
        "timesteps": model.num_timesteps,
        "chosen_timesteps": steps,
        "validation_deals": f"{eval_deals.start}:{eval_deals.stop}",
        "validation_win_rate": rate,
        "wall_time_s": round(wall, 1),
        "train_time_s": round(train_seconds[0], 1),
        "hyperparameters": {k: getattr(s, k) for k in keys},
        "seed": s.seed,
    }
    save_model(chosen, out, recipe_sidecar(variant, deterministic, rows_n, training))
    return {"model": str(out), "chosen_timesteps": steps, "deterministic": deterministic,
            "validation_win_rate": rate, "curve": str(curve_path), "seconds": wall}  # fmt: skip


# --- the whole recipe ---------------------------------------------------------------------------
#: The recipe's name of a field of its stages where it differs (errors name the recipe's flag).
STAGE_FIELDS = {"deals": "demo_deals"}


@dataclass(frozen=True)
class RecipeSettings:
    """The whole recipe in one run (each stage's other settings: its defaults)."""

    suits: int = field(default=1, metadata=SUITS)
    """suits of classic Spider"""
    dir: Annotated[str, OutputDir] | None = None
    """output folder (default runs/rl_<suits>suit)"""
    teacher: Annotated[str, Name] = DemoSettings.teacher
    """the teacher of the demonstrations"""
    demo_deals: Sequence[int] = DemoSettings.deals
    """training deals the teacher plays (start:stop)"""
    jobs: int = 2
    """processes for the demonstrations and the evaluations"""
    epochs: int = BCSettings.epochs
    """behaviour cloning's epochs"""
    timesteps: int = FinetuneSettings.timesteps
    """fine-tuning's steps"""
    n_envs: int = FinetuneSettings.n_envs
    """fine-tuning's parallel games"""
    eval_freq: int = FinetuneSettings.eval_freq
    """fine-tuning's steps between evaluations"""
    eval_deals: int = FinetuneSettings.eval_deals
    """validation deals per evaluation (and for the baselines)"""
    imitate_lost: bool = False
    """clone lost games' first decisions too (see rl_bc.py)"""
    seed: int = 0
    """seed of every stage"""
    tiny: bool = False
    """a smoke run (seconds): tiny budgets everywhere"""

    def __post_init__(self) -> None:
        check_fields(self)
        at_least(self, 1, "jobs", "epochs", "timesteps", "n_envs", "eval_freq", "eval_deals")
        try:
            self.stages()  # the recipe's settings are good if its stages' are
        except SettingsError as exc:
            raise SettingsError(STAGE_FIELDS.get(str(exc.field), exc.field), exc.problem) from None

    def folder(self) -> Path:
        """The output folder."""
        return Path(self.dir or f"runs/rl_{self.suits}suit")

    def stages(self) -> tuple[DemoSettings, BCSettings, FinetuneSettings]:
        """The settings of the three stages."""
        d = self.folder()
        demos, bc, ppo = str(d / "demos.npz"), str(d / "bc.zip"), str(d / "ppo.zip")
        stages = (
            DemoSettings(teacher=self.teacher, suits=self.suits, deals=self.demo_deals,
                         jobs=self.jobs, out=demos, no_progress=True),
            BCSettings(demos=demos, out=bc, epochs=self.epochs, eval_deals=self.eval_deals,
                       jobs=self.jobs, imitate_lost=self.imitate_lost, seed=self.seed),
            FinetuneSettings(bc=bc, out=ppo, timesteps=self.timesteps, n_envs=self.n_envs,
                             eval_freq=self.eval_freq, eval_deals=self.eval_deals,
                             jobs=self.jobs, seed=self.seed),
        )  # fmt: skip
        if not self.tiny:
            return stages
        return (
            replace(stages[0], deals=range(100_000, 100_003), max_steps=200),
            replace(stages[1], epochs=1, eval_deals=2),
            replace(stages[2], timesteps=128, n_envs=2, n_steps=64, batch_size=64,
                    eval_freq=128, eval_deals=2),
        )  # fmt: skip


def recipe_baselines(
    evaluate: Evaluate, variant: Variant | str, deals: range, jobs: int = 1
) -> dict[str, Any]:
    """Random, greedy and lookahead on ``deals`` (the recipe's ``baselines.json``)."""
    from .measure import baselines

    played = baselines(evaluate, RECIPE_BASELINES, variant, deals, jobs=jobs)
    return {
        "variant": get_variant(variant).name,
        "deals": f"{deals.start}:{deals.stop}",
        **{name: {"win_rate": r.win_rate, "runs": r.mean_runs} for name, r in played.items()},
    }


def validation_spec(directory: str | Path) -> str | None:
    """``VARIANT:START:STOP``: the game and validation deals of the recipe's curves in
    ``directory`` (as the sidecar of ``ppo.zip``, else ``bc.zip``, records them), or None."""
    for name in ("ppo.zip", "bc.zip"):
        try:
            side = Sidecar.read(Path(directory) / name)
        except ValueError:  # a sidecar that cannot be read says nothing
            continue
        deals = side.training.get("validation_deals") if side is not None else None
        if side is not None and side.env.variant is not None and isinstance(deals, str):
            return f"{side.env.variant}:{deals}"
    return None


def run_recipe(s: RecipeSettings, evaluate: Evaluate) -> dict[str, Any]:
    """Every stage into ``s.folder()``, then ``model.zip`` (+ ``model.json``: the fine-tuned
    model, which is the cloned one if no checkpoint won more validation deals),
    ``baselines.json``, ``learning_curves.png`` and ``recipe.json`` (each stage's wall time,
    returned). A setting that cannot be used (the folder, the teacher) is a
    :class:`SettingsError` before anything is played or written."""
    d = s.folder()
    problem = path_problem(OutputDir, d)
    check(problem is None, "dir", str(problem))
    demo_s, bc_s, ppo_s = s.stages()
    check_teacher(demo_s)
    d.mkdir(parents=True, exist_ok=True)
    walls: dict[str, float] = {}
    for name, run in (
        ("demonstrations", lambda: record_demos(demo_s)),
        ("behaviour cloning", lambda: clone(bc_s, evaluate)),
        ("fine-tuning", lambda: finetune(ppo_s, evaluate)),
    ):
        print(f"== {name}", flush=True)
        t = time.perf_counter()
        print(json.dumps(run(), default=str), flush=True)
        walls[name] = round(time.perf_counter() - t, 1)
    ppo = Path(ppo_s.out)
    shutil.copyfile(ppo, d / "model.zip")
    shutil.copyfile(ppo.with_suffix(".json"), d / "model.json")
    t = time.perf_counter()
    base = recipe_baselines(evaluate, classic(s.suits), validation_deals(ppo_s.eval_deals), s.jobs)
    (d / "baselines.json").write_text(json.dumps(base, indent=2) + "\n")
    walls["baselines"] = round(time.perf_counter() - t, 1)
    plot_recipe(d, d / "learning_curves.png")
    training = ("demonstrations", "behaviour cloning", "fine-tuning")
    summary = {
        "suits": s.suits,
        "wall_time_s": walls,
        "training_wall_time_s": round(sum(walls[k] for k in training), 1),
        "model": str(d / "model.zip"),
        "curves": str(d / "learning_curves.png"),
    }
    (d / "recipe.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


__all__ = [
    "REWARD_MODE",
    "BCSettings",
    "DemoSettings",
    "FinetuneSettings",
    "RecipeSettings",
    "check_teacher",
    "clone",
    "finetune",
    "new_model",
    "recipe_baselines",
    "recipe_sidecar",
    "record_demos",
    "run_recipe",
    "validation_spec",
]
