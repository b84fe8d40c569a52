"""Write (or check) every golden file that pins the deal generator, the rules and the render.

Run from the repository root::

    .venv/bin/python tests/golden/regenerate.py          # rewrite every golden file
    .venv/bin/python tests/golden/regenerate.py --check  # exit 1 naming the first difference

(``make golden`` and ``make golden-check``.) Only regenerate on purpose (a deliberate change of
the rules, the generator or the render) and say so in the commit message: the files exist so
that such a change cannot happen by accident. ``tests/test_golden.py`` compares the same texts,
made in memory by this module, so ``make test`` fails on any difference too.

Files written under ``tests/golden/``:

* ``deals.txt``: ``generate_deal(variant, N)`` as deal text
  (:func:`~spider_env.core.deals.deal_to_text`) for several deal numbers of the 1-, 2- and
  4-suit games, each block headed ``=== <variant> <N>``.
* ``variants/<variant>.txt``: the starting layouts (deals 0, 1, 2) of every other variant, after
  a ``# <description>`` line.
* ``playthrough-<variant>[-<options>]-<policy>-<N>.jsonl``: one game per file, OpenSpiel/pgx
  style, for classic Spider and every variant. The first line is a header
  ``{"game": {"variant", "options", "deal", "policy", "seed", "steps"}}``; every following line
  is one step: ``step``, ``state_before`` (``State.to_text()``, undo history included; only
  on step 0, later steps start from the previous ``state_after``), ``legal_actions``,
  ``action``, ``description``, ``state_after``,
  ``score_after``, ``terminal_after``, ``won_after``.
* ``render/<case>.txt``: ``SpiderEnv(render_mode="ansi").render()`` of fixed positions.
* ``render/<case>.image.txt``: the shape and SHA-256 of ``SpiderEnv(render_mode="rgb_array")
  .render()`` of some of those positions (:data:`IMAGE_CASES`); ``--png DIR`` writes the
  images themselves as PNG files to look at.

``variants/pysolfc-spider-deals.txt`` is an input (deals printed by PySolFC, see
``tests/test_interop.py``), not written here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

import spider_env as se
from spider_env.core.deals import deal_to_text
from spider_env.core.rules import apply, is_terminal, legal_actions
from spider_env.core.state import State
from spider_env.core.variants import VARIANTS, get_variant, parse_options
from spider_env.env import SpiderEnv

HERE = Path(__file__).resolve().parent
DEAL_NUMBERS = (0, 1, 2, 3, 42, 1000, 123456789, 2**32, 2**63, 2**64 - 1)
DEAL_VARIANTS = ("spider-1suit", "spider-2suit", "spider-4suit")
OTHER_VARIANTS = tuple(name for name in VARIANTS if name not in DEAL_VARIANTS)
LAYOUT_DEALS = (0, 1, 2)
INPUTS = frozenset({"variants/pysolfc-spider-deals.txt"})  # golden inputs, not generated

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


def policy_special(state: State, legal: list[int], rng: random.Random, seen: set[Any]) -> int:
    """Prefers the variant's special actions: the first discard when one is legal; else undo
    with probability 1/4 when legal; else uniform over the legal actions."""
    v = state.variant
    discards = [a for a in legal if se.decode(v, a).kind == "discard"]
    if discards:
        return discards[0]
    if v.undo and v.n_actions - 1 in legal and rng.random() < 0.25:
        return v.n_actions - 1
    return rng.choice(legal)


POLICIES: dict[str, Policy] = {
    "random": policy_random,
    "first": policy_first,
    "greedy": policy_greedy,
    "special": policy_special,
}


class Game(NamedTuple):
    variant: str
    options: str  # variant options text ("undo=true"), "" for none
    deal: int
    policy: str
    seed: int | str  # random.Random(seed) of the policy
    max_steps: int


GAMES: tuple[Game, ...] = (
    Game("spider-1suit", "", 0, "greedy", 0, 450),  # won at step 406
    Game("spider-1suit", "", 1, "random", 1, 150),
    Game("spider-2suit", "", 2, "random", 2, 150),
    Game("spider-2suit", "", 0, "first", 0, 40),
    Game("spider-2suit", "undo=true", 3, "random", 3, 40),  # undo chains make long texts
    Game("spider-4suit", "", 4, "random", 4, 150),  # random play gets stuck after 42 steps
    Game("spider-4suit", "", 0, "first", 0, 40),
    Game("spider-4suit", "", 5, "greedy", 0, 150),
) + tuple(
    # every other variant with undo on, deal 7, seeded with the variant's name
    # (60 steps: every state text carries its undo chain, so a file grows with steps squared)
    Game(name, "" if VARIANTS[name].undo else "undo=true", 7, "special", name, 60)
    for name in OTHER_VARIANTS
)


def game_file(game: Game) -> str:
    tag = game.variant + ("-" + game.options.replace("=", "-") if game.options else "")
    return f"playthrough-{tag}-{game.policy}-{game.deal}.jsonl"


def start_state(variant: str, options: str, number: int) -> State:
    v = get_variant(variant)
    if options:
        v = parse_options(v, options)
    return State.from_deal(se.generate_deal(v, number))


def playthrough(game: Game) -> str:
    """The golden file text of one game."""
    rng = random.Random(game.seed)
    choose = POLICIES[game.policy]
    state = start_state(game.variant, game.options, game.deal)
    seen = {state.key()}
    records: list[dict[str, Any]] = []
    for step in range(game.max_steps):
        legal = legal_actions(state)
        if not legal:
            break
        a = choose(state, list(legal), rng, seen)
        after = apply(state, a)
        records.append(
            {
                "step": step,
                # the first step carries the starting text; later ones start from the
                # previous step's state_after (the same text, not written twice)
                **({"state_before": state.to_text()} if step == 0 else {}),
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
            "variant": game.variant,
            "options": game.options,
            "deal": game.deal,
            "policy": game.policy,
            "seed": game.seed,
            "steps": len(records),
        }
    }
    lines = [json.dumps(header, sort_keys=True)]
    lines += [json.dumps(r, sort_keys=True) for r in records]
    return "\n".join(lines) + "\n"


def deals_text() -> str:
    """The golden deals file text (classic Spider)."""
    blocks = []
    for name in DEAL_VARIANTS:
        for n in DEAL_NUMBERS:
            blocks.append(f"=== {name} {n}\n" + deal_to_text(se.generate_deal(name, n)))
    return "".join(blocks)


def layouts_text(name: str) -> str:
    """The starting layouts of a variant: its description, then deals 0, 1, 2 as deal text."""
    v = get_variant(name)
    parts = [f"# {v.description}\n"]
    for n in LAYOUT_DEALS:
        parts.append(f"# deal {n}\n" + deal_to_text(se.generate_deal(v, n)))
    return "\n".join(parts)


# --- render ------------------------------------------------------------------------------------


def _play_last_legal(env: SpiderEnv, steps: int) -> None:
    for _ in range(steps):
        env.step(int(np.flatnonzero(env.action_masks())[-1]))


def _win(env: SpiderEnv) -> None:
    text = "\n".join(
        [
            "spider-env state 1",
            "variant: spider-1suit",
            "counters: moves=300 deals=5 undos=0 reveals=44 free_used=false",
            "completed: S=7 H=0 D=0 C=0",
            "col0: KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S",
            "col1: AS",
            *[f"col{c}: -" for c in range(2, 10)],
            *[f"pile{j}: -" for j in range(5)],
        ]
    )
    env.reset(options={"state_text": text + "\n"})
    env.step(env.encode_action(1, 1, 0))


# case -> (env kwargs, reset options, what to do before rendering)
RENDER_CASES: dict[str, tuple[dict[str, Any], dict[str, Any] | None, Any]] = {
    "spider-4suit-deal0": ({}, {"deal": 0}, None),
    "spider-4suit-deal0-ascii": ({"ascii": True}, {"deal": 0}, None),
    "spider-4suit-deal0-color": ({"color": True}, {"deal": 0}, None),
    "spider-2suit-deal3-play": ({"suits": 2}, {"deal": 3}, lambda e: _play_last_legal(e, 40)),
    "spider-4suit-deal5-illegal": (
        {"ascii": True},
        {"deal": 5},
        lambda e: e.step(e.encode_action(0, 1, 0)),
    ),
    "tournament-2suit-deal1-ascii": (
        {"variant": "spider-tournament-2suit", "ascii": True},
        {"deal": 1},
        lambda e: _play_last_legal(e, 3),
    ),
    "spider-1suit-won": ({"suits": 1}, None, _win),
}


# the render cases whose images (render_mode="rgb_array") are pinned as checksums
IMAGE_CASES = (
    "spider-4suit-deal0",
    "spider-2suit-deal3-play",
    "spider-4suit-deal5-illegal",
    "tournament-2suit-deal1-ascii",
    "spider-1suit-won",
)


def _render_case(name: str, render_mode: str) -> Any:
    """``env.render()`` of one render case in ``render_mode``."""
    kwargs, options, before = RENDER_CASES[name]
    env = SpiderEnv(render_mode=render_mode, **kwargs)
    env.reset(options=options)
    if before is not None:
        before(env)
    return env.render()


def render_case(name: str) -> str:
    """``env.render()`` (ANSI mode) of one render case."""
    text = _render_case(name, "ansi")
    assert isinstance(text, str)
    return text


def render_image_case(name: str) -> np.ndarray:
    """``env.render()`` (``rgb_array`` mode) of one render case."""
    image = _render_case(name, "rgb_array")
    assert isinstance(image, np.ndarray)
    return image


def image_text(name: str) -> str:
    """The golden text of a render case's image: its shape and the SHA-256 of its pixels."""
    image = render_image_case(name)
    h, w, bands = image.shape
    digest = hashlib.sha256(np.ascontiguousarray(image).tobytes()).hexdigest()
    return (
        f"# SpiderEnv(render_mode='rgb_array').render() of render case {name}: {image.dtype},\n"
        "# SHA-256 of its pixels row by row; see it: python tests/golden/regenerate.py --png DIR\n"
        f"shape: {h} {w} {bands}\nsha256: {digest}\n"
    )


def write_pngs(folder: Path) -> list[str]:
    """Write the images of :data:`IMAGE_CASES` to ``folder`` as PNG files; their paths."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in IMAGE_CASES:
        path = folder / f"{name}.png"
        Image.fromarray(render_image_case(name)).save(path)
        paths.append(str(path))
    return paths


# --- all files -----------------------------------------------------------------------------


@cache
def expected_files() -> dict[str, str]:
    """Every golden file (path relative to ``tests/golden``) and its text as the code makes it
    now (made once per process)."""
    out = {"deals.txt": deals_text()}
    for name in OTHER_VARIANTS:
        out[f"variants/{name}.txt"] = layouts_text(name)
    for game in GAMES:
        out[game_file(game)] = playthrough(game)
    for case in RENDER_CASES:
        out[f"render/{case}.txt"] = render_case(case)
    for case in IMAGE_CASES:
        out[f"render/{case}.image.txt"] = image_text(case)
    return out


def golden_files_on_disk(root: Path) -> set[str]:
    """The golden files present under ``root`` (inputs excluded), relative paths."""
    found = set()
    for pattern in ("*.txt", "*.jsonl", "variants/*.txt", "render/*.txt"):
        found |= {p.relative_to(root).as_posix() for p in root.glob(pattern)}
    return found - INPUTS


def first_difference(path: str, old: str | None, new: str) -> str | None:
    """``None`` when ``old == new``, else one line naming the file and the first line that
    differs (with both versions, cut short)."""
    if old == new:
        return None
    if old is None:
        return f"{path}: missing"
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))

    def cut(lines: list[str]) -> str:
        return repr(lines[i][:100]) if i < len(lines) else "<end of file>"

    return f"{path}:{i + 1}: differs: file has {cut(a)}, the code makes {cut(b)}"


def check(root: Path = HERE) -> list[str]:
    """Every difference between the golden files under ``root`` and what the code makes now
    (one line each, in file order): changed, missing, and stale files."""
    problems = []
    for rel, text in expected_files().items():
        path = root / rel
        old = path.read_text(encoding="utf-8") if path.exists() else None
        diff = first_difference(rel, old, text)
        if diff:
            problems.append(diff)
    for rel in sorted(golden_files_on_disk(root) - set(expected_files())):
        problems.append(f"{rel}: not made by regenerate.py (stale golden file)")
    return problems


def write(root: Path = HERE) -> list[str]:
    """Rewrite the golden files under ``root``, delete stale ones; what changed."""
    changed = []
    for rel, text in expected_files().items():
        path = root / rel
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        changed.append(f"wrote {rel}")
    for rel in sorted(golden_files_on_disk(root) - set(expected_files())):
        (root / rel).unlink()
        changed.append(f"deleted {rel}")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 naming the first difference"
    )
    parser.add_argument("--dir", type=Path, default=HERE, help="golden folder (default: here)")
    parser.add_argument(
        "--png", type=Path, metavar="DIR", help="only write the pinned images as PNG files to DIR"
    )
    args = parser.parse_args(argv)
    if args.png:
        for path in write_pngs(args.png):
            print(f"wrote {path}")
        return 0
    if args.check:
        problems = check(args.dir)
        if problems:
            print(problems[0], file=sys.stderr)
            if len(problems) > 1:
                print(f"... and {len(problems) - 1} more golden file(s) differ", file=sys.stderr)
            return 1
        print(f"all {len(expected_files())} golden files are up to date")
        return 0
    changes = write(args.dir)
    for line in changes:
        print(line)
    print(f"{len(changes)} golden file(s) changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
