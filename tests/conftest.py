"""Shared helpers of the tests: hand-built positions from compact text, random play, and the
contract every player is held to (:func:`check_blind_to_hidden_cards`, the permutation test;
:func:`pickled_copy_plays_on`; :func:`evaluate_on_one_and_two_workers`;
:func:`after_another_game`).

``position`` builds a :class:`~spider_env.core.state.State` from one short string per column so that
a test shows exactly the cards that matter::

    s = position(["* 5S 4S", "6H", "-", ...], piles=1)

Column tokens: ``XX`` a face-up card, ``|XX`` a face-down card, ``*`` (first token only) "the
cards nobody mentioned, face down, here" (deepest, sorted by id), ``-`` or an empty string for
an empty column. Every position must still hold the whole deck (the engine validates that),
which is what ``*`` and the auto-filled stock piles are for.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import pickle
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ray_cluster import cluster, ray_env  # noqa: F401  (the Ray cluster fixtures)

import spider_env as se
from spider_env.core.cards import N_RANKS, card_str, parse_card
from spider_env.core.deals import deck
from spider_env.core.rules import apply, legal_actions
from spider_env.core.state import State
from spider_env.core.variants import Variant, get_variant

FILL = "*"


@pytest.fixture(autouse=True, scope="session")
def _sb3_logs_in_a_test_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """SB3's default logger (a model's ``learn()`` without one set) writes to ``SB3_LOGDIR``, or
    else to a new ``SB3-<time>`` folder in the system's temporary directory: keep the tests'
    (and the scripts they start, which inherit the variable) under pytest's own."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3")))
        yield


def cards(text: str) -> list[int]:
    """``"KS QS JS"`` -> card ids (no face-down marks)."""
    return [parse_card(t) for t in text.split()]


def run(suit: str, high: int, low: int = 1) -> str:
    """A suited descending run as text: ``run("S", 13)`` is ``"KS QS ... AS"``."""
    letters = "A23456789TJQK"
    return " ".join(letters[r - 1] + suit for r in range(high, low - 1, -1))


def position(
    cols: Sequence[str],
    *,
    variant: str | Variant = "spider-4suit",
    stock: Sequence[str] | None = None,
    piles: int = 0,
    completed: Sequence[int] = (0, 0, 0, 0),
    moves: int = 0,
    deals: int | None = None,
    undos: int = 0,
    reveals: int = 0,
    free_used: bool = False,
) -> State:
    """A validated State from compact column strings (see the module docstring).

    ``stock``: one string per stock pile (``"-"``/``""`` for a dealt pile), or ``piles``: the
    number of undealt piles (the last ones), filled from the unmentioned cards in sorted order.
    ``deals`` defaults to the number of dealt piles.
    """
    v = get_variant(variant)
    if len(cols) != v.n_columns:
        raise ValueError(f"{v.name} needs {v.n_columns} column strings, got {len(cols)}")
    left = Counter(deck(v))
    for s, n in enumerate(completed):
        for r in range(N_RANKS):
            left[s * N_RANKS + r] -= n
    parsed: list[tuple[bool, list[int], int]] = []
    for text in cols:
        toks = text.split()
        fill = bool(toks) and toks[0] == FILL
        if fill:
            toks = toks[1:]
        if toks == ["-"]:
            toks = []
        col: list[int] = []
        down = 0
        for tok in toks:
            if tok.startswith("|"):
                if down != len(col):
                    raise ValueError(f"face-down {tok} above a face-up card in {text!r}")
                down += 1
                tok = tok[1:]
            col.append(parse_card(tok))
        left.subtract(col)
        parsed.append((fill, col, down))
    pile_cards: list[tuple[int, ...]] = []
    if stock is not None:
        if len(stock) != len(v.stock):
            raise ValueError(f"{v.name} has {len(v.stock)} stock piles, got {len(stock)}")
        for p in stock:
            pc = tuple(cards(p)) if p.strip() not in ("", "-") else ()
            left.subtract(pc)
            pile_cards.append(pc)
    if any(n < 0 for n in left.values()):
        over = [card_str(c) for c, n in left.items() if n < 0]
        raise ValueError(f"more copies than the deck holds: {over}")
    rest = sorted(left.elements())
    if stock is None:
        n_dealt = len(v.stock) - piles
        pile_cards = [() for _ in range(n_dealt)]
        for j in range(n_dealt, len(v.stock)):
            need = v.stock[j]
            if len(rest) < need:
                raise ValueError("not enough unmentioned cards to fill the stock piles")
            pile_cards.append(tuple(rest[:need]))
            rest = rest[need:]
    fills = [i for i, (f, _, _) in enumerate(parsed) if f]
    if rest and not fills:
        raise ValueError(f"{len(rest)} cards unplaced and no '*' column to put them in")
    if len(fills) > 1:
        raise ValueError("at most one '*' column")
    out_cols, out_down = [], []
    for fill, col, down in parsed:
        if fill:
            col = rest + col
            down += len(rest)
        out_cols.append(tuple(col))
        out_down.append(down)
    if deals is None:
        deals = sum(1 for p in pile_cards if not p)
    return State(
        v,
        tuple(out_cols),
        tuple(out_down),
        tuple(pile_cards),
        tuple(completed),  # type: ignore[arg-type]
        moves,
        deals,
        undos,
        reveals,
        free_used,
    )


def up(state: State, c: int) -> str:
    """The face-up cards of column ``c`` as text (``""`` if none)."""
    return " ".join(card_str(x) for x in state.cols[c][state.down[c] :])


def act(state: State, text: str) -> int:
    """The action id whose description is ``text`` (e.g. ``"move 2 cards 0 -> 3"``, ``"deal"``)."""
    v = state.variant
    for a in range(v.n_actions):
        if se.describe(v, a) == text:
            return a
    raise ValueError(f"no action described as {text!r}")


def mv(state: State, k: int, src: int, dst: int) -> int:
    """Action id of moving ``k`` cards ``src -> dst`` (by the encoding formula, not the engine)."""
    v = state.variant
    C, R = v.n_columns, v.max_run
    return (src * R + (k - 1)) * C + dst


def moves_of(state: State) -> set[tuple[int, int, int]]:
    """Legal moves as ``(k, src, dst)`` triples."""
    return {
        (m.cards, m.src, m.dst)
        for m in map(partial(se.decode, state.variant), se.legal_actions(state))
        if m.kind == "move"
    }


def random_play(
    state: State, rng: random.Random, max_steps: int = 400
) -> Iterator[tuple[State, int, State]]:
    """Yield ``(before, action, after)`` along a random legal game."""
    for _ in range(max_steps):
        legal = legal_actions(state)
        if not legal:
            return
        a = rng.choice(legal)
        nxt = apply(state, a)
        yield state, a, nxt
        state = nxt


def random_position(state: State, rng: random.Random, steps: int) -> State:
    """The position after ``steps`` random legal actions from ``state`` (fewer if the game
    ends)."""
    last = state
    for _, _, after in random_play(state, rng, steps):
        last = after
    return last


def assert_same(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Two observations or infos: the same keys, equal values (arrays: same dtype too)."""
    assert a.keys() == b.keys()
    for key in a:
        x, y = np.asarray(a[key]), np.asarray(b[key])
        assert x.dtype == y.dtype and np.array_equal(x, y), key


def play(
    agent: Any, variant: str, deal: int, max_steps: int, seed: int = 0
) -> tuple[list[int], dict[str, Any]]:
    """Play ``deal`` with ``agent`` (reset with ``seed``): its actions, each checked legal, and
    the last info."""
    from spider_env.env import SpiderEnv

    env = SpiderEnv(variant=variant)
    obs, info = env.reset(options={"deal": deal})
    agent.reset(seed=seed)
    actions: list[int] = []
    for _ in range(max_steps):
        mask = info["action_mask"]
        if not mask.any():
            break
        a = agent.act(obs, mask, info)
        assert mask[a], f"illegal action {a} at step {len(actions)}"
        actions.append(a)
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            break
    return actions, info


def permute_hidden(state: State, rng: np.random.Generator) -> State:
    """The same visible table with the face-down and unseen stock cards shuffled."""
    v = state.variant
    hidden = [c for col, d in zip(state.cols, state.down) for c in col[:d]]
    skip = 1 if v.pile_top_visible else 0
    hidden += [c for p in state.stock if p for c in p[skip:]]
    for _ in range(20):
        perm = [hidden[i] for i in rng.permutation(len(hidden))]
        if perm != hidden or len(set(hidden)) <= 1:
            break
    it = iter(perm)
    cols = tuple(
        tuple(next(it) for _ in range(d)) + col[d:] for col, d in zip(state.cols, state.down)
    )
    stock = tuple(
        (p[:skip] + tuple(next(it) for _ in range(len(p) - skip))) if p else () for p in state.stock
    )
    return state.replace(cols=cols, stock=stock)


# --- the player contract: blind to hidden cards, pickling, evaluation on workers ----------------
@dataclass(frozen=True)
class BlindCheck:
    """What :func:`check_blind_to_hidden_cards` saw: positions checked, those whose hidden cards
    the permutation really changed, those with a face-down card it left unchanged, and whether
    the game ended."""

    checked: int
    permuted: int
    unchanged_face_down: int
    ended: bool


def check_blind_to_hidden_cards(
    agent: Any, variant: str, start: dict[str, Any], rng: np.random.Generator, steps: int = 60
) -> BlindCheck:
    """The issue's permutation test. On ``variant`` from ``start`` (reset options: a deal or a
    state), at every position of ``agent``'s game (``steps`` at most) a deep copy of it (the
    same memory and RNG state), given the same position with the hidden cards permuted
    (:func:`permute_hidden`), must choose the same action; the permuted env must show the same
    observation and info (the mask included). The agent must have been reset."""
    from spider_env.env import SpiderEnv

    env, twin = SpiderEnv(variant=variant), SpiderEnv(variant=variant)
    obs, info = env.reset(options=start)
    checked = permuted = unchanged_face_down = 0
    term = False
    for _ in range(steps):
        mask = info["action_mask"]
        if not mask.any():
            break
        state = env.state
        other = permute_hidden(state, rng)
        changed = other.key() != state.key()
        permuted += changed
        unchanged_face_down += not changed and any(state.down)
        obs2, info2 = twin.reset(options={"state": other})
        assert_same(obs, obs2)
        assert_same(info, info2)
        b = copy.deepcopy(agent).act(obs2, info2["action_mask"], info2)
        a = agent.act(obs, mask, info)
        assert a == b, f"step {checked}: {a} on the real table, {b} on the permuted one"
        checked += 1
        obs, _, term, _, info = env.step(a)
        if term:
            break
    return BlindCheck(checked, permuted, unchanged_face_down, bool(term))


def pickled_copy_plays_on(spec: str, variant: str = "spider-2suit") -> tuple[list[int], list[int]]:
    """``spec``'s agent plays 25 steps of deal 6 (seed 2), is pickled, then it and its copy play
    the next 40 steps on twin tables: both lists of actions."""
    from spider_env.agents import make_agent

    from spider_env.env import SpiderEnv

    env = SpiderEnv(variant=variant)
    obs, info = env.reset(options={"deal": 6})
    agent = make_agent(spec, variant, 2)
    agent.reset(seed=2)
    for _ in range(25):
        obs, _, _, _, info = env.step(agent.act(obs, info["action_mask"], info))
    copy_ = pickle.loads(pickle.dumps(agent))
    twin = SpiderEnv(variant=variant)
    obs2, info2 = twin.reset(options={"state": env.state})
    ours: list[int] = []
    theirs: list[int] = []
    for _ in range(40):
        ours.append(agent.act(obs, info["action_mask"], info))
        theirs.append(copy_.act(obs2, info2["action_mask"], info2))
        obs, _, term, _, info = env.step(ours[-1])
        obs2, *_, info2 = twin.step(theirs[-1])
        if term:
            break
    return ours, theirs


def records_of(result: Any) -> list[dict[str, Any]]:
    """An evaluation's records as dicts, without their times."""
    return [
        {k: v for k, v in dataclasses.asdict(r).items() if k != "seconds"} for r in result.records
    ]


def evaluate_on_one_and_two_workers(spec: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Evaluate ``spec`` on 1-suit deals 0 and 1 (300 steps) with one worker, then by spec and as
    an agent object (pickled to the workers) with two; checks all three give the same records
    and returns the first evaluation."""
    from spider_env.agents import make_agent

    from spider_env.apps.evaluation import evaluate

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    args: dict[str, Any] = {"variant": "spider-1suit", "max_steps": 300}
    one = evaluate([spec], "0:2", jobs=1, **args)
    two = evaluate([spec, make_agent(spec, "spider-1suit")], "0:2", jobs=2, **args)
    assert two.jobs == 2
    assert [r.agent for r in two.records] == [spec] * 2 + [f"{spec}#2"] * 2
    by_spec, by_object = records_of(two)[:2], records_of(two)[2:]
    assert records_of(one) == by_spec
    assert [{**r, "agent": spec} for r in by_object] == by_spec
    return one


def after_another_game(spec: str, variant: str = "spider-2suit") -> tuple[list[int], list[int]]:
    """``spec``'s agent plays 40 steps of deal 9, then 80 of deal 4 (reset with seed 5), and a
    fresh agent plays those 80: both lists of actions (equal when a reset forgets the game)."""
    from spider_env.agents import make_agent

    agent = make_agent(spec, variant, 5)
    play(agent, variant, 9, 40, seed=1)
    again, _ = play(agent, variant, 4, 80, seed=5)
    fresh, _ = play(make_agent(spec, variant, 5), variant, 4, 80, seed=5)
    return again, fresh


def unknown_flag_is_one_line(script: Path) -> None:
    """Running ``script`` with a flag it does not know prints one line, ``<name>: error: ...``,
    on stderr, nothing on stdout, and exits with status 2 (every script's contract)."""
    r = subprocess.run(
        [sys.executable, str(script), "--no-such-flag"], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{script.name}: error: "), r.stderr
