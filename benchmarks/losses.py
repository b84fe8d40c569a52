"""Where a player's losses come from: replay the lost deals of an evaluation and say how each
game ended.

    python benchmarks/losses.py docs/ladder/spider-1suit-0_1000-planner-evaluate.csv \
        --agent planner --limit 30

Each lost deal of ``--agent`` in the evaluation CSV (``spider-env evaluate --csv``) is played
again exactly as the evaluation played it (same agent seed, ``agent_seed(seed, deal)``, same step
limit; the replay checks it ends as the CSV says), and the script prints per deal: the step of
the last deal, the cards still face down then and at the end, the runs completed, and how the
game ended (step limit, or no legal action); then a summary.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from typing import Any

from spider_env.agents import make_agent

from spider_env.apps.evaluation.episode import agent_seed, make_env
from spider_env.core.variants import get_variant


def replay(spec: str, variant: str, deal: int, seed: int, max_steps: int) -> dict[str, Any]:
    v = get_variant(variant)
    env = make_env(v, max_steps)
    agent = make_agent(spec, v, seed=agent_seed(seed, deal))
    agent.reset(seed=agent_seed(seed, deal))
    obs, info = env.reset(options={"deal": deal})
    steps = 0
    last_deal, down_at_deal = -1, -1
    deals = range(v.n_move_actions, v.n_move_actions + v.n_deal_actions)
    while True:
        a = agent.act(obs, info["action_mask"], info)
        obs, _, term, trunc, info = env.step(a)
        steps += 1
        state = env.unwrapped.state
        if a in deals:
            last_deal, down_at_deal = steps, sum(state.down)
        if term or trunc:
            break
    state = env.unwrapped.state
    return {
        "deal": deal,
        "won": bool(info["is_success"]),
        "steps": steps,
        "runs": sum(state.completed),
        "last_deal_step": last_deal,
        "deals_made": state.deals,
        "down_at_last_deal": down_at_deal,
        "down_at_end": sum(state.down),
        "end": "won" if info["is_success"] else ("step limit" if trunc else "no legal action"),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--agent", required=True, help="the agent's name in the CSV (and its spec)")
    ap.add_argument("--limit", type=int, default=30, help="lost deals replayed at most")
    ap.add_argument("--seed", type=int, default=0, help="the evaluation's --seed")
    ap.add_argument("--max-steps", type=int, default=1000, help="the evaluation's --max-steps")
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args()
    if a.limit < 1:
        ap.error(f"--limit must be at least 1, got {a.limit}")
    with open(a.csv, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["agent"] == a.agent]
    if not rows:
        ap.error(f"no games of {a.agent!r} in {a.csv}")
    lost = [r for r in rows if r["won"] not in ("True", "true", "1")][: a.limit]
    out = []
    for r in lost:
        res = replay(a.agent, r["variant"], int(r["deal"]), a.seed, a.max_steps)
        if res["won"] or res["steps"] != int(r["steps"]):
            raise SystemExit(f"losses.py: deal {r['deal']} did not replay as recorded: {res}")
        out.append(res)
        print(json.dumps(res), flush=True)
    n = len(out)
    print(f"{n} lost deals of {len(rows)} replayed ({a.agent}):")
    for key in ("step limit", "no legal action"):
        print(f"  ended by {key}: {sum(1 for x in out if x['end'] == key)}")
    full = [x for x in out if x["deals_made"] == max(y["deals_made"] for y in out)]
    print(
        f"  every deal made: {len(full)}; their last deal at step (median) "
        f"{sorted(x['last_deal_step'] for x in full)[len(full) // 2] if full else '-'}"
    )
    print(
        f"  face-down cards at the last deal (median): "
        f"{sorted(x['down_at_last_deal'] for x in out)[n // 2]}; at the end (median): "
        f"{sorted(x['down_at_end'] for x in out)[n // 2]}"
    )
    print(f"  runs completed (mean): {sum(x['runs'] for x in out) / n:.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
