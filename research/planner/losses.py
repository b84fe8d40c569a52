"""Where a player's losses come from: replay the lost deals of an evaluation and say how each
game ended.

    python research/planner/losses.py docs/ladder/spider-1suit-0_1000-planner-evaluate.csv \
        --agent planner --limit 30

Each lost deal of ``--agent`` in the evaluation CSV (``spider-env evaluate --csv``) is played
again exactly as the evaluation played it (same agent seed, ``agent_seed(seed, deal)``, same step
limit; the replay checks it ends as the CSV says), and the script prints per deal: the step of
the first and the last deal, the cards still face down then and at the end, the runs
completed, and how the game ended (step limit, or no legal action); then a summary.

``--known N`` also asks how many cards the player could have turned up before its first deal:
with every card known, the fewest face-down cards reachable from the deal's start by moves
alone (an exhaustive search of at most ``N`` positions; ``known_exhausted`` says whether it
finished, else the figure is only what it reached). ``--games won`` replays won games instead
(the same figures, to compare against).

``--solve N`` asks where a game stopped being winnable: at the start and after every event of
the replay (a card turned up, a deal) the solver (:func:`spider_env.search.solver.solve`, the
variant's default method: the beam, depth-first search on Scorpion; at most ``N`` positions)
searches the true position with every card known. The last event after which it still found a
win, and the next one (``lost_at_*``: the step, deals made, cards face down, and whether it was
a deal), say where the game was lost (``lost_at_step`` 0: no win found even at the start,
``win_found_at_start`` false); "no win found" is not a proof of loss (but on Scorpion, where
the search proves losses), so the figure is the last win found, not the first miss.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Sequence
from typing import Any

from spider_env.agents import make_agent
from spider_env.agents.rl.settings import ArgumentParser

from spider_env.apps.evaluation.episode import agent_seed, make_env
from spider_env.core.actions import deal_ids
from spider_env.core.variants import Variant, get_variant
from spider_env.fast.game import FastGame
from spider_env.search.budget import MAX_NODES
from spider_env.search.solver import solve


def replay(
    spec: str, variant: str, deal: int, seed: int, max_steps: int, solve_nodes: int = 0
) -> dict[str, Any]:
    """Play ``deal`` again as the evaluation did and say how the game went (module docstring;
    ``solve_nodes``: the solver's budget after every event, 0: not solved)."""
    v = get_variant(variant)
    env = make_env(v, max_steps)
    agent = make_agent(spec, v, seed=agent_seed(seed, deal))
    agent.reset(seed=agent_seed(seed, deal))
    obs, info = env.reset(options={"deal": deal})
    steps = 0
    last_deal, down_at_deal = -1, -1
    first_deal, down_at_first = -1, -1
    deals = deal_ids(v)
    events: list[dict[str, Any]] = []  # with --solve: every event, and whether a win was found
    down_before = sum(env.unwrapped.state.down)
    if solve_nodes:
        start = env.unwrapped.state
        events.append(
            {
                "step": 0,
                "deal": False,
                "deals_made": start.deals,
                "down": down_before,
                "win_found": start.won or solve(start, solve_nodes).verdict == "won",
            }
        )
    while True:
        a = agent.act(obs, info["action_mask"], info)
        obs, _, term, trunc, info = env.step(a)
        steps += 1
        state = env.unwrapped.state
        if solve_nodes and (a in deals or sum(state.down) < down_before):
            events.append(
                {
                    "step": steps,
                    "deal": a in deals,
                    "deals_made": state.deals,
                    "down": sum(state.down),
                    "win_found": state.won or solve(state, solve_nodes).verdict == "won",
                }
            )
        down_before = sum(state.down)
        if a in deals:
            last_deal, down_at_deal = steps, sum(state.down)
            if first_deal < 0:
                first_deal, down_at_first = steps, down_at_deal
        if term or trunc:
            break
    state = env.unwrapped.state
    where: dict[str, Any] = {}
    if solve_nodes:
        found = [i for i, e in enumerate(events) if e["win_found"]]
        last = found[-1] if found else -1
        lost = events[last + 1] if last + 1 < len(events) else None
        where = {
            "events": len(events) - 1,
            "win_found_at_start": events[0]["win_found"],
            "last_win_found_step": events[last]["step"] if found else 0,
            "lost_at_step": lost["step"] if lost else -1,
            "lost_at_deal": lost["deal"] if lost else False,
            "lost_at_deals_made": lost["deals_made"] if lost else -1,
            "lost_after_last_deal": lost is not None and lost["deals_made"] == len(v.stock),
            "lost_at_down": lost["down"] if lost else -1,
            "events_without_win_before_it": sum(
                1 for e in events[: last + 1] if not e["win_found"]
            ),
        }
    return where | {
        "deal": deal,
        "won": bool(info["is_success"]),
        "steps": steps,
        "runs": sum(state.completed),
        "first_deal_step": first_deal,
        "down_before_first_deal": down_at_first,
        "last_deal_step": last_deal,
        "deals_made": state.deals,
        "down_at_last_deal": down_at_deal,
        "down_at_end": sum(state.down),
        "end": "won" if info["is_success"] else ("step limit" if trunc else "no legal action"),
    }


def fewest_down_known(v: Variant, deal: int, cap: int) -> tuple[int, bool]:
    """With every card of ``deal`` known: the fewest face-down cards reachable from its start
    without dealing (breadth first, at most ``cap`` positions), and whether the search
    finished."""
    game = FastGame(v.with_options(undo=False) if v.undo else v)
    deals = deal_ids(v)

    def down(st: Any) -> int:
        return sum(game.face_down(st, c) for c in range(v.n_columns))

    root = game.initial(deal)
    seen = {game.key(root)}
    queue = [root]
    fewest = down(root)
    i = 0
    while i < len(queue) and len(seen) < cap:
        st = queue[i]
        i += 1
        for a in game.legal_actions(st):
            if int(a) in deals:
                continue
            child = game.apply(st, int(a))
            key = game.key(child)
            if key not in seen:
                seen.add(key)
                fewest = min(fewest, down(child))
                queue.append(child)
    return fewest, i >= len(queue)


def main(argv: Sequence[str] | None = None) -> int:
    ap = ArgumentParser(
        prog="losses.py", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    ap.add_argument("csv")
    ap.add_argument("--agent", required=True, help="the agent's name in the CSV (and its spec)")
    ap.add_argument("--limit", type=int, default=30, help="lost deals replayed at most")
    ap.add_argument("--seed", type=int, default=0, help="the evaluation's --seed")
    ap.add_argument("--max-steps", type=int, default=1000, help="the evaluation's --max-steps")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--games", choices=("lost", "won"), default="lost", help="which games")
    ap.add_argument(
        "--known",
        type=int,
        default=0,
        metavar="N",
        help="also the fewest face-down cards reachable before the first deal with every card\n"
        "known (a search of at most N positions; 0: not computed)",
    )
    ap.add_argument(
        "--solve",
        type=int,
        default=0,
        metavar="N",
        help="also where each game stopped being winnable: the true position solved after\n"
        "every event, with every card known (the variant's default solver, at most N\n"
        "positions; 0: not computed)",
    )
    a = ap.parse_args(argv)
    if a.limit < 1:
        ap.error(f"--limit must be at least 1, got {a.limit}")
    if a.known < 0:
        ap.error(f"--known must be at least 0, got {a.known}")
    if not 0 <= a.solve <= MAX_NODES:
        ap.error(f"--solve must be in 0..{MAX_NODES:,}, got {a.solve}")
    need = {"variant", "agent", "deal", "won", "steps"}
    try:
        with open(a.csv, newline="") as f:
            reader = csv.DictReader(f)
            missing = need - set(reader.fieldnames or ())
            if missing:
                cols = ", ".join(sorted(missing))
                ap.error(f"{a.csv} is not an evaluation CSV: no column {cols}")
            rows = [r for r in reader if r["agent"] == a.agent]
    except (OSError, UnicodeDecodeError) as exc:
        ap.error(f"cannot read {a.csv}: {exc}")
    if not rows:
        ap.error(f"no games of {a.agent!r} in {a.csv}")
    want_won = a.games == "won"
    chosen = [r for r in rows if (r["won"] in ("True", "true", "1")) == want_won][: a.limit]
    if not chosen:
        ap.error(f"no {a.games} games of {a.agent!r} in {a.csv}")
    out = []
    for r in chosen:
        res = replay(a.agent, r["variant"], int(r["deal"]), a.seed, a.max_steps, a.solve)
        if res["won"] != want_won or res["steps"] != int(r["steps"]):
            raise SystemExit(f"losses.py: deal {r['deal']} did not replay as recorded: {res}")
        if a.known:
            fewest, done = fewest_down_known(get_variant(r["variant"]), int(r["deal"]), a.known)
            res["known_fewest_before_first_deal"] = fewest
            res["known_exhausted"] = done
        out.append(res)
        print(json.dumps(res), flush=True)
    n = len(out)
    print(f"{n} {a.games} deals of {len(rows)} replayed ({a.agent}):")
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
    dealt = [x for x in out if x["first_deal_step"] > 0]
    if dealt:
        mid = len(dealt) // 2
        step = sorted(x["first_deal_step"] for x in dealt)[mid]
        down = sorted(x["down_before_first_deal"] for x in dealt)[mid]
        print(f"  first deal at step (median) {step}, face-down cards before it (median) {down}")
    if a.known:
        gaps = [
            x["down_before_first_deal"] - x["known_fewest_before_first_deal"]
            for x in dealt
            if x["known_exhausted"]
        ]
        if gaps:
            print(
                f"  cards it left face down before the first deal that could have been turned "
                f"up with every card known (exhausted searches: {len(gaps)}): mean "
                f"{sum(gaps) / len(gaps):.1f}, median {sorted(gaps)[len(gaps) // 2]}, "
                f"none left: {sum(1 for g in gaps if g == 0)}"
            )
    if a.solve:
        lost = [x for x in out if x["lost_at_step"] > 0]
        never = sum(1 for x in out if not x["win_found_at_start"])
        print(f"  no win found (every card known) even at the start: {never}")
        print(f"  a win found (every card known) until an event, never after: {len(lost)}")
        if lost:
            mid = len(lost) // 2
            after = sum(1 for x in lost if x["lost_after_last_deal"])
            print(
                f"    lost after the last deal: {after}; at a deal: "
                f"{sum(1 for x in lost if x['lost_at_deal'])}; at step (median) "
                f"{sorted(x['lost_at_step'] for x in lost)[mid]}, with (median) "
                f"{sorted(x['lost_at_down'] for x in lost)[mid]} cards face down"
            )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
