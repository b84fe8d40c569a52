"""Rewrite the golden files that pin the deal generator and the rules.

Run from the repository root::

    .venv/bin/python tests/golden/regenerate.py          # rewrite every golden file
    .venv/bin/python tests/golden/regenerate.py --check  # exit 1 if a file would change

Only regenerate on purpose (a deliberate change of the rules or the generator) and say so in the
commit message: the files exist so that such a change cannot happen by accident.

Files written next to this script:

* ``deals.txt``: ``generate_deal(variant, N)`` as text
  (:func:`~spider_env.core.deals.deal_to_text`) for
  several deal numbers of the 1-, 2- and 4-suit games, each block headed ``=== <variant> <N>``.
* ``playthrough-<variant>-<policy>-<N>.jsonl``: one game per file, OpenSpiel/pgx style. The first
  line is a header ``{"game": {"variant", "options", "deal", "policy", "seed", "steps"}}``; every
  following line is one step: ``step``, ``state_before`` (``State.to_text()``), ``legal_actions``
  (of ``state_before``), ``action``, ``description``, ``state_after``, ``score_after``,
  ``terminal_after``, ``won_after``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import spider_env as se
from spider_env.core.deals import deal_to_text
from spider_env.core.rules import apply, is_terminal, legal_actions
from spider_env.core.state import State
from spider_env.core.variants import get_variant, parse_options

HERE = Path(__file__).resolve().parent
DEAL_NUMBERS = (0, 1, 2, 3, 42, 1000, 123456789, 2**32, 2**63, 2**64 - 1)
DEAL_VARIANTS = ("spider-1suit", "spider-2suit", "spider-4suit")

Policy = Callable[[State, list[int], random.Random, set[Any]], int]


def policy_random(state: State, legal: list[int], rng: random.Random, seen: set[Any]) -> int:
    """Uniform over the legal actions (``random.Random(seed).choice``)."""
    return rng.choice(legal)


def policy_first(state: State, legal: list[int], rng: random.Random, seen: set[Any]) -> int:
    """The lowest legal action id."""
    return legal[0]


def policy_greedy(state: State, legal: list[int], rng: random.Random, seen: set[Any]) -> int:
    """A small deterministic heuristic (to reach run removals and wins in the goldens):
    completed runs, then reveals, then longer suited runs and empty columns; repeated positions
    and deals are avoided while anything else is left. Ties go to the lowest id."""
    best, best_val = legal[0], -(10**9)
    deal_ids = set(range(state.variant.n_move_actions, state.variant.n_actions))
    for a in legal:
        t = apply(state, a)
        val = 1000 * (t.completed_runs - state.completed_runs)
        val += 50 * (t.reveals - state.reveals)
        val += 5 * (sum(t.run_lengths) - sum(state.run_lengths))
        val += 3 * (sum(1 for c in t.cols if not c) - sum(1 for c in state.cols if not c))
        if t.key() in seen:
            val -= 10_000
        if a in deal_ids:
            val -= 500
        if val > best_val:
            best, best_val = a, val
    return best


POLICIES: dict[str, Policy] = {
    "random": policy_random,
    "first": policy_first,
    "greedy": policy_greedy,
}

# (variant, options, deal number, policy, rng seed, max steps)
GAMES: tuple[tuple[str, str, int, str, int, int], ...] = (
    ("spider-1suit", "", 0, "greedy", 0, 450),  # won at step 406
    ("spider-1suit", "", 1, "random", 1, 150),
    ("spider-2suit", "", 2, "random", 2, 150),
    ("spider-2suit", "", 0, "first", 0, 40),
    ("spider-2suit", "undo=true", 3, "random", 3, 40),  # undo chains make long texts
    ("spider-4suit", "", 4, "random", 4, 150),  # random play gets stuck after 42 steps
    ("spider-4suit", "", 0, "first", 0, 40),
    ("spider-4suit", "", 5, "greedy", 0, 150),
)


def game_file(variant: str, options: str, number: int, policy: str) -> Path:
    tag = variant + ("-" + options.replace("=", "-") if options else "")
    return HERE / f"playthrough-{tag}-{policy}-{number}.jsonl"


def start_state(variant: str, options: str, number: int) -> State:
    v = get_variant(variant)
    if options:
        v = parse_options(v, options)
    return State.from_deal(se.generate_deal(v, number))


def playthrough(
    variant: str, options: str, number: int, policy: str, seed: int, max_steps: int
) -> str:
    """The golden file text of one game."""
    rng = random.Random(seed)
    choose = POLICIES[policy]
    state = start_state(variant, options, number)
    seen = {state.key()}
    records: list[dict[str, Any]] = []
    for step in range(max_steps):
        legal = legal_actions(state)
        if not legal:
            break
        a = choose(state, list(legal), rng, seen)
        after = apply(state, a)
        records.append(
            {
                "step": step,
                "state_before": state.to_text(),
                "legal_actions": list(legal),
                "action": a,
                "description": se.describe(state.variant, a),
                "state_after": after.to_text(),
                "score_after": after.score,
                "terminal_after": is_terminal(after),
                "won_after": after.won,
            }
        )
        seen.add(after.key())
        state = after
    header = {
        "game": {
            "variant": variant,
            "options": options,
            "deal": number,
            "policy": policy,
            "seed": seed,
            "steps": len(records),
        }
    }
    lines = [json.dumps(header, sort_keys=True)]
    lines += [json.dumps(r, sort_keys=True) for r in records]
    return "\n".join(lines) + "\n"


def deals_text() -> str:
    """The golden deals file text."""
    blocks = []
    for name in DEAL_VARIANTS:
        for n in DEAL_NUMBERS:
            blocks.append(f"=== {name} {n}\n" + deal_to_text(se.generate_deal(name, n)))
    return "".join(blocks)


def expected_files() -> dict[Path, str]:
    out = {HERE / "deals.txt": deals_text()}
    for variant, options, number, policy, seed, max_steps in GAMES:
        path = game_file(variant, options, number, policy)
        out[path] = playthrough(variant, options, number, policy, seed, max_steps)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report files that differ")
    args = parser.parse_args(argv)
    changed = 0
    for path, text in expected_files().items():
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old == text:
            continue
        changed += 1
        if args.check:
            print(f"differs: {path.name}")
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.name}")
    if args.check:
        print("golden files up to date" if not changed else f"{changed} golden file(s) differ")
        return 1 if changed else 0
    print(f"{changed} file(s) written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
