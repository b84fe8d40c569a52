"""Copy a trained model file into docs/models with its model card, from its measured test record.

    python research/rl/ship_model.py --model runs/planner-spider-2suit/ppo/model.safetensors \
        --out docs/models/planner_2suit.safetensors --record docs/rl/test_planner_2suit.json \
        --title "planner_2suit: ..." --trained "..." --training-command "make rl-planner-2suit"

The card's test figures are read from ``--record`` (a ``spider-env evaluate --json`` file whose
first agent is the model as shipped), never typed in; the evaluation command is rebuilt from the
record (its agents, game, deals). A maintainer's tool: it uses the package's public API only.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any, NoReturn

from spider_env.agents.model_file import SavedModel


def card(record: dict[str, Any], out: str, args: argparse.Namespace) -> dict[str, Any]:
    """The model card of ``out`` from its test ``record``."""
    first = record["summaries"][0]
    agents = " ".join(f"--agent {a.split(' (')[0]}" for a in record["agents"])
    suits = record["variant"].removeprefix("spider-").removesuffix("suit")
    deals = record["deals"]
    lo, hi = min(deals), max(deals) + 1
    if list(deals) != list(range(lo, hi)):
        raise ValueError("the record's deals are not one range start:stop")
    command = f"spider-env evaluate {agents} --suits {suits} --deals {lo}:{hi} --jobs 2"
    return {
        "title": args.title,
        "variant": record["variant"],
        "trained": args.trained,
        "training_command": args.training_command,
        "validation_deals": args.validation_deals,
        "test_deals": f"{lo}:{hi}",
        "test_win_rate": first["win_rate"],
        "test_win_rate_ci95": [round(first["ci_low"], 4), round(first["ci_high"], 4)],
        "test_mean_completed_runs": round(first["mean_runs"], 2),
        "test_record": args.record,
        "measured_with": f"{command} --json {args.record}",
        "evaluation_command": command,
        "paired": [
            {k: c[k] for k in ("agent_a", "agent_b", "only_a", "only_b", "p_value")}
            for c in record.get("comparisons", [])
        ],
    }


def build_parser() -> argparse.ArgumentParser:
    """The command line (every flag required but ``--validation-deals``)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="the trained model file")
    p.add_argument("--out", required=True, help="docs/models/NAME.safetensors")
    p.add_argument("--record", required=True, help="its test record (spider-env evaluate --json)")
    p.add_argument("--title", required=True)
    p.add_argument("--trained", required=True, help="how it was trained, in one sentence")
    p.add_argument("--training-command", required=True)
    p.add_argument("--validation-deals", default="1000:1200")

    def one_line(message: str) -> NoReturn:  # errors in one line, status 2, as the CLI's
        p.exit(2, f"{p.prog}: error: {message}\n")

    p.error = one_line  # type: ignore[method-assign]
    return p


def main(argv: list[str] | None = None) -> None:
    p = build_parser()
    args = p.parse_args(argv)
    try:
        saved = SavedModel.read(args.model)
        record = json.loads(Path(args.record).read_text())
    except (OSError, ValueError) as exc:
        p.exit(2, f"{p.prog}: error: {exc}\n")
    if not record["agents"][0].startswith(args.out):
        p.exit(2, f"{p.prog}: error: the record's first agent is not {args.out}\n")
    try:
        new = card(record, args.out, args)
    except (KeyError, ValueError) as exc:
        p.exit(2, f"{p.prog}: error: {args.record} is not a test record: {exc}\n")
    dataclasses.replace(saved, card=new).write(args.out)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
