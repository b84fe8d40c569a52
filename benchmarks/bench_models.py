"""What a trained model costs to evaluate: ``spider-env evaluate --agent MODEL`` against
``--agent greedy`` on the same deals (CPU seconds of each command, one job), and the model
player's decisions per CPU-second in batches (the vector env, as ``evaluate`` plays it) and
alone (``play_episode``, one game at a time), with CartPole-v1 measured in the same run. Each
figure is the best of ``--repeats`` measurements (3; the commands' least CPU, the rates' most):
on a shared machine the best one is the least disturbed.
Not a test; run it as ``.venv/bin/python benchmarks/bench_models.py`` (``--json FILE`` keeps
the figures).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reference import best, cartpole_steps_per_second
from spider_env.agents.model import load_model_agent
from spider_env.agents.rl.settings import ArgumentParser

from spider_env.apps.evaluation import evaluate, parse_deals
from spider_env.apps.evaluation.episode import make_env, play_episode
from spider_env.core.variants import resolve_variant

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "docs" / "models" / "rl_1suit.safetensors"


def command_cpu(args: list[str]) -> float:
    """CPU seconds (user + system) of one ``spider-env`` command, run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cli = Path(sys.executable).parent / "spider-env"
    subprocess.run([str(cli), *args], check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def batched_rate(model: str, suits: int, deals: list[int]) -> tuple[float, int]:
    """Decisions per CPU-second of ``evaluate`` (in batches; after a warm-up game) and the
    decisions made."""
    evaluate([model], deals[:1], suits=suits)
    t0 = time.process_time()
    result = evaluate([model], deals, suits=suits)
    steps = sum(r.steps for r in result.records)
    return steps / (time.process_time() - t0), steps


def single_rate(model: str, suits: int, deals: list[int]) -> float:
    """Decisions per CPU-second of the model player alone (one env, one game at a time)."""
    v = resolve_variant(None, suits, False)
    agent = load_model_agent(model, v)
    env = make_env(v, None)
    play_episode(env, agent, deals[0])  # warm-up
    t0, steps = time.process_time(), 0
    for d in deals:
        steps += play_episode(env, agent, d)[0].steps
    return steps / (time.process_time() - t0)


def main(argv: list[str] | None = None) -> None:
    p = ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--model", default=str(MODEL), help="the model file (default: %(default)s)")
    p.add_argument("--suits", type=int, choices=(1, 2, 4), default=1, help="the game's suits")
    p.add_argument("--deals", default="0:100", help="deals of the commands (default: 0:100)")
    p.add_argument("--alone", default="0:10", help="deals played alone (default: 0:10)")
    p.add_argument("--json", help="write the figures to this file")
    p.add_argument("--repeats", type=int, default=3, help="measurements per figure, best kept (3)")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error(f"--repeats must be at least 1, got {args.repeats}")
    try:
        load_model_agent(args.model, resolve_variant(None, args.suits, False))
    except (OSError, ValueError) as exc:  # a missing, malformed or other game's model
        p.error(f"--model: {exc}")
    try:
        deals, alone_deals = parse_deals(args.deals), parse_deals(args.alone)
    except ValueError as exc:
        p.error(f"--deals/--alone: {exc}")
    common = ["--suits", str(args.suits), "--deals", args.deals, "--jobs", "1", "--no-progress"]
    r, deals, alone_deals = args.repeats, list(deals), list(alone_deals)
    cart = best(r, cartpole_steps_per_second)
    # a command's least CPU is its least disturbed run
    model_cpu = min(command_cpu(["evaluate", "--agent", args.model, *common]) for _ in range(r))
    greedy_cpu = min(command_cpu(["evaluate", "--agent", "greedy", *common]) for _ in range(r))
    batched, steps = max(batched_rate(args.model, args.suits, deals) for _ in range(r))
    alone = best(r, lambda: single_rate(args.model, args.suits, alone_deals))
    figures = {
        "model": os.path.relpath(args.model, ROOT),
        "suits": args.suits,
        "deals": args.deals,
        "repeats": args.repeats,
        "cartpole_steps_per_cpu_second": round(cart),
        "evaluate_model_cpu_seconds": round(model_cpu, 2),
        "evaluate_greedy_cpu_seconds": round(greedy_cpu, 2),
        "model_over_greedy": round(model_cpu / greedy_cpu, 3),
        "decisions": steps,
        "batched_decisions_per_cpu_second": round(batched),
        "alone_decisions_per_cpu_second": round(alone),
        "batched_over_alone": round(batched / alone, 2),
        "batched_over_cartpole": round(batched / cart, 3),
    }
    print(f"CartPole-v1: {cart:,.0f} steps/CPU-s")
    ratio = model_cpu / greedy_cpu
    print(f"spider-env evaluate {args.deals}, {args.suits} suit(s), one job: model "
          f"{model_cpu:.1f} CPU-s, greedy {greedy_cpu:.1f} CPU-s ({ratio:.2f}x)")  # fmt: skip
    print(f"model in batches: {batched:,.0f} decisions/CPU-s ({batched / cart:.3f}x CartPole); "
          f"alone: {alone:,.0f} ({batched / alone:.1f}x)")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
