"""The RL recipe, kept as an experiment: a teacher's games, behaviour cloning, then sb3-contrib's
MaskablePPO fine-tuning of the cloned policy (``docs/models/rl_1suit_recipe.safetensors``; the
record: ``research/rl/README.md``).

    python research/rl/recipe.py run --suits 1 --dir runs/rl_1suit     # all of it (make rl-recipe)
    python research/rl/recipe.py finetune --bc runs/rl_1suit/bc.zip --out runs/rl_1suit/ppo.zip
    python research/rl/recipe.py plot --dir runs/rl_1suit
    spider-env evaluate --agent runs/rl_1suit/model.safetensors --agent greedy --suits 1 \
        --deals 0:1000 --jobs 2

``run``: the first two stages are the product's (``spider_env.agents.rl.cloning``, as
``examples/clone_teacher.py``: the teacher, lookahead, plays ``--demo-deals`` training deals
into ``DIR/demos.npz`` unless that file exists, and ``ActionSetPolicy`` clones its choices into
``DIR/bc.zip``); the third is ``finetune``; then random, greedy and lookahead play the
validation deals (``baselines.json``) and ``plot`` draws both stages against them
(``learning_curves.png``). ``DIR/model.safetensors`` is the fine-tuned model (the model file
``spider-env evaluate`` plays; ``model.zip`` to train on from), the cloned one if no
fine-tuning checkpoint won more validation deals; ``recipe.json`` records each stage's wall
time. Every model a stage saves (``bc``, ``ppo``, each checkpoint) is a ``.zip`` with its
sidecar and, beside it, its ``.safetensors`` model file.

``finetune``: MaskablePPO trains the cloned policy and value further on random training deals
>= 10000 (``--n-envs`` envs with per-action features, the ``runs`` reward), with a small
learning rate and clip range so that the first updates do not undo the cloning. Every
``--eval-freq`` steps the policy plays the validation deals 1000.., most likely action and
sampled (``<stem>_curve.csv``); the model saved is the checkpoint and way of choosing that won
the most of them, the cloned policy included.

``plot``: the curves of a ``run`` (``bc_curve.csv`` by epoch, ``ppo_curve.csv`` by step)
against ``baselines.json`` (``--compute-baselines VARIANT:START:STOP`` plays them first).

The batched PPO of the product (``examples/batched_ppo.py --bc bc.zip``) is the product's way to
train a cloned policy further; this script keeps the recipe's own stage so that its record can
be reproduced. Deals 0..999 (the test set) are used by none of the stages.
"""

from __future__ import annotations

import csv
import json
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any

from spider_env.agents.model_format import Sidecar
from spider_env.agents.rl.cloning import CloneSettings, check_teacher, clone, record
from spider_env.agents.rl.envs import validation_deals
from spider_env.agents.rl.measure import baselines, win_rate
from spider_env.agents.rl.plots import BASELINE_STYLE, pyplot, read_curve, save_figure
from spider_env.agents.rl.settings import (
    ArgumentParser,
    InputDir,
    InputFile,
    Name,
    OutputDir,
    OutputFile,
    SettingsError,
    Text,
    above,
    add_flags,
    at_least,
    check,
    check_discounts,
    check_fields,
    check_paths,
    parse_and_run,
    path_problem,
    setting_up,
)

from spider_env.apps.evaluation import parse_deals
from spider_env.core.variants import classic, get_variant

BASELINES = ("random", "greedy", "lookahead")


# --- fine-tuning --------------------------------------------------------------------------------
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


def _write_curve(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def finetune(s: FinetuneSettings) -> dict[str, Any]:
    """Fine-tune the cloned model ``s.bc`` into ``s.out`` (see the module docstring); returns a
    summary. A setting that cannot be used (the paths, a model that is not a cloned one) is a
    :class:`SettingsError` before anything is trained or written."""
    check_paths(s)
    from spider_env.agents.rl.models import (
        action_set_model,
        action_set_sidecar,
        load_action_set_model,
        load_model,
        model_file_path,
        save_model,
    )
    from stable_baselines3.common.callbacks import BaseCallback

    with setting_up("bc"):
        bc_side, variant, bc = load_action_set_model(s.bc)
    rows_n = bc_side.env.action_rows
    model = action_set_model(variant, hidden=int(bc.policy.hidden), action_rows=rows_n,
                             seed=s.seed, n_envs=s.n_envs, **s.ppo_kwargs())  # fmt: skip
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
            side = action_set_sidecar(variant, det, rows_n)
            r = win_rate(model, side, eval_deals, jobs=s.jobs)
            row[f"win_rate_{'argmax' if det else 'sampled'}"] = r["win_rate"]
            row[f"runs_{'argmax' if det else 'sampled'}"] = r["runs"]
        path = ckpt_dir / f"step_{steps}.zip"
        save_model(model, path, action_set_sidecar(variant, True, rows_n))
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
    _write_curve(curve_path, rows)
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
    save_model(chosen, out, action_set_sidecar(variant, deterministic, rows_n, training))
    return {"model": str(model_file_path(out)), "checkpoint": str(out),
            "chosen_timesteps": steps, "deterministic": deterministic,
            "validation_win_rate": rate, "curve": str(curve_path), "seconds": wall}  # fmt: skip


# --- the curves ---------------------------------------------------------------------------------
def recipe_baselines(variant: Any, deals: range, jobs: int = 1) -> dict[str, Any]:
    """Random, greedy and lookahead on ``deals`` (the recipe's ``baselines.json``)."""
    played = baselines(BASELINES, variant, deals, jobs=jobs)
    return {
        "variant": get_variant(variant).name,
        "deals": f"{deals.start}:{deals.stop}",
        **{name: {"win_rate": r.win_rate, "runs": r.mean_runs} for name, r in played.items()},
    }


def recipe_curves(directory: str | Path) -> tuple[list[dict[str, float]], list[dict[str, float]]]:
    """The recipe's two curves in ``directory`` (``bc_curve.csv``, ``ppo_curve.csv``)."""
    d = Path(directory)
    return read_curve(d / "bc_curve.csv"), read_curve(d / "ppo_curve.csv")


def read_recipe_baselines(path: Path) -> dict[str, Any]:
    """The recipe's ``baselines.json``; ``ValueError`` if ``path`` is not one."""
    base = json.loads(path.read_text())
    if not isinstance(base, dict) or any(
        not isinstance(base[n], dict) or "win_rate" not in base[n] for n in BASELINES if n in base
    ):
        raise ValueError(f"{path} is not the recipe's baselines.json")
    return base


def plot_recipe(directory: str | Path, out: str | Path, title: str | None = None) -> Path:
    """Draw the recipe's curves in ``directory`` and its ``baselines.json`` into the PNG
    ``out``; returns it."""
    bc, ppo = recipe_curves(directory)
    base = read_recipe_baselines(Path(directory) / "baselines.json")
    fig, axes = pyplot().subplots(1, 2, figsize=(11, 4.2), sharey=True)
    panels = ((axes[0], bc, "epoch", "behaviour cloning (epochs)"),
              (axes[1], ppo, "timesteps", "MaskablePPO fine-tuning (env steps)"))  # fmt: skip
    for ax, rows, x, xlabel in panels:
        for key, label, marker in (("argmax", "most likely action", "o"),
                                   ("sampled", "sampled", "s")):  # fmt: skip
            pts = [(r[x], r[f"win_rate_{key}"]) for r in rows if f"win_rate_{key}" in r]
            ax.plot(
                [p[0] for p in pts], [p[1] for p in pts], marker=marker, label=f"model, {label}"
            )
        for name in BASELINES:
            if name in base:
                color, style = BASELINE_STYLE[name]
                ax.axhline(base[name]["win_rate"], color=color, linestyle=style, label=name)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"win rate, validation deals {base.get('deals', '')}")
    axes[1].legend(loc="lower right", fontsize=8)
    fig.suptitle(title or f"RL recipe on {base.get('variant', '')}")
    return save_figure(fig, Path(out))


def variant_deals(text: str) -> tuple[str, range]:
    """``"spider-1suit:1000:1200"`` -> ``("spider-1suit", range(1000, 1200))``."""
    parts = text.rsplit(":", 2)
    if len(parts) != 3 or not (parts[1].isdigit() and parts[2].isdigit()):
        raise ValueError(f"wants VARIANT:START:STOP (e.g. spider-1suit:1000:1200), got {text!r}")
    deals = range(int(parts[1]), int(parts[2]))
    if not deals:
        raise ValueError(f"{text!r}: STOP must be greater than START (STOP is excluded)")
    get_variant(parts[0])  # ValueError naming the known variants
    return parts[0], deals


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


@dataclass(frozen=True)
class PlotSettings:
    """The recipe's learning curves."""

    dir: Annotated[str, InputDir] = "runs/rl_1suit"
    """the recipe's output folder"""
    out: Annotated[str, OutputFile] | None = None
    """the PNG (default DIR/learning_curves.png)"""
    compute_baselines: str | None = None
    """VARIANT:START:STOP: first play random, greedy and lookahead on these deals
    (baselines.json; run writes it, the stages run one by one do not)"""
    title: Annotated[str, Text] | None = None
    """the figure's title"""

    def __post_init__(self) -> None:
        check_fields(self)
        if self.compute_baselines is not None:
            with setting_up("compute_baselines"):
                variant_deals(self.compute_baselines)

    def output(self) -> Path:
        """The PNG written."""
        return Path(self.out) if self.out else Path(self.dir) / "learning_curves.png"


def plot(s: PlotSettings) -> dict[str, Any]:
    """Draw the curves of ``s.dir`` (and first, with ``compute_baselines``, play the
    baselines); :class:`SettingsError` naming ``dir`` if it holds no curves or baselines."""
    check_paths(s)
    d, out = Path(s.dir), s.output()
    baselines_path = d / "baselines.json"
    written = [out] if s.out is None else []
    if s.compute_baselines:
        written.append(baselines_path)
    for path in written:
        problem = path_problem(OutputFile, path)
        check(problem is None, "dir", str(problem))
    with setting_up("dir"):
        recipe_curves(d)  # before the baselines' minutes
    if not s.compute_baselines and not baselines_path.exists():
        spec = validation_spec(d) or "VARIANT:START:STOP"
        raise SettingsError(
            "dir",
            f"{d} has no baselines.json (run writes it, the stages run one by one do not): "
            f"add --compute-baselines {spec} to play random, greedy and lookahead on the "
            "curves' validation deals first",
        )
    if s.compute_baselines:
        variant, deals = variant_deals(s.compute_baselines)
        data = recipe_baselines(variant, deals)
        baselines_path.write_text(json.dumps(data, indent=2) + "\n")
    with setting_up("dir"):
        plot_recipe(d, out, s.title)
    return {"plot": str(out)}


# --- the whole recipe ---------------------------------------------------------------------------
@dataclass(frozen=True)
class RecipeSettings:
    """The whole recipe in one run (each stage's other settings: its defaults)."""

    suits: int = field(default=1, metadata={"choices": (1, 2, 4)})
    """suits of classic Spider"""
    dir: Annotated[str, OutputDir] | None = None
    """output folder (default runs/rl_<suits>suit)"""
    teacher: Annotated[str, Name] = CloneSettings.teacher
    """the teacher of the demonstrations"""
    demo_deals: Sequence[int] = CloneSettings.deals
    """training deals the teacher plays (start:stop)"""
    jobs: int = 2
    """processes for the demonstrations and the evaluations"""
    epochs: int = CloneSettings.epochs
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
    """clone lost games' first decisions too (see clone_teacher.py)"""
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
            field = {"deals": "demo_deals"}.get(str(exc.field), exc.field)
            raise SettingsError(field, exc.problem) from None

    def folder(self) -> Path:
        """The output folder."""
        return Path(self.dir or f"runs/rl_{self.suits}suit")

    def stages(self) -> tuple[CloneSettings, FinetuneSettings]:
        """The settings of the stages: recording and cloning, fine-tuning."""
        d = self.folder()
        bc, ppo = str(d / "bc.zip"), str(d / "ppo.zip")
        stages = (
            CloneSettings(teacher=self.teacher, suits=self.suits, deals=self.demo_deals,
                          demos=str(d / "demos.npz"), out=bc, epochs=self.epochs,
                          eval_deals=self.eval_deals, jobs=self.jobs,
                          imitate_lost=self.imitate_lost, seed=self.seed, no_progress=True),
            FinetuneSettings(bc=bc, out=ppo, timesteps=self.timesteps, n_envs=self.n_envs,
                             eval_freq=self.eval_freq, eval_deals=self.eval_deals,
                             jobs=self.jobs, seed=self.seed),
        )  # fmt: skip
        if not self.tiny:
            return stages
        return (
            replace(stages[0], deals=range(100_000, 100_003), max_steps=200, epochs=1,
                    eval_deals=0),
            replace(stages[1], timesteps=128, n_envs=2, n_steps=64, batch_size=64,
                    eval_freq=128, eval_deals=1),
        )  # fmt: skip


def run_recipe(s: RecipeSettings) -> dict[str, Any]:
    """Every stage into ``s.folder()`` (see the module docstring); returns ``recipe.json``. A
    setting that cannot be used (the folder, the teacher) is a :class:`SettingsError` before
    anything is played or written."""
    d = s.folder()
    problem = path_problem(OutputDir, d)
    check(problem is None, "dir", str(problem))
    clone_s, ppo_s = s.stages()
    check_teacher(clone_s)
    d.mkdir(parents=True, exist_ok=True)
    walls: dict[str, float] = {}
    stages = [("behaviour cloning", lambda: clone(clone_s)),
              ("fine-tuning", lambda: finetune(ppo_s))]  # fmt: skip
    if not Path(clone_s.demos).exists():
        stages.insert(0, ("demonstrations", lambda: record(clone_s)))
    for name, run in stages:
        print(f"== {name}", flush=True)
        t = time.perf_counter()
        print(json.dumps(run(), default=str), flush=True)
        walls[name] = round(time.perf_counter() - t, 1)
    from spider_env.agents.rl.models import model_file_path

    ppo = Path(ppo_s.out)
    shutil.copyfile(ppo, d / "model.zip")
    shutil.copyfile(ppo.with_suffix(".json"), d / "model.json")
    shutil.copyfile(model_file_path(ppo), model_file_path(d / "model.zip"))
    t = time.perf_counter()
    base = recipe_baselines(classic(s.suits), validation_deals(ppo_s.eval_deals), s.jobs)
    (d / "baselines.json").write_text(json.dumps(base, indent=2) + "\n")
    walls["baselines"] = round(time.perf_counter() - t, 1)
    plot_recipe(d, d / "learning_curves.png")
    training = [k for k in ("demonstrations", "behaviour cloning", "fine-tuning") if k in walls]
    summary = {
        "suits": s.suits,
        "wall_time_s": walls,
        "training_wall_time_s": round(sum(walls[k] for k in training), 1),
        "model": str(model_file_path(d / "model.zip")),
        "checkpoint": str(d / "model.zip"),
        "curves": str(d / "learning_curves.png"),
    }
    (d / "recipe.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


# --- the command line ---------------------------------------------------------------------------
COMMANDS: dict[str, tuple[type, Any, dict[str, Any]]] = {
    "run": (RecipeSettings, run_recipe, {"demo_deals": parse_deals}),
    "finetune": (FinetuneSettings, finetune, {}),
    "plot": (PlotSettings, plot, {}),
}


def build_parser() -> ArgumentParser:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True, metavar="{run,finetune,plot}")
    for name, (cls, _, parse) in COMMANDS.items():
        doc = (cls.__doc__ or "").split("\n\n")[0]
        add_flags(sub.add_parser(name, help=doc, description=doc), cls, parse=parse)
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = build_parser()
    cls, work, _ = COMMANDS[p.parse_args(argv).command]
    summary: dict[str, Any] = parse_and_run(p, cls, work, argv)
    print(json.dumps(summary, indent=2, default=str))
    return summary


if __name__ == "__main__":
    main()
