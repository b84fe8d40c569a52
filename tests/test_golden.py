"""Golden files: pinned deals and replayed playthroughs (see tests/golden/regenerate.py).

A failure here means the deal generator or the rules changed behaviour. If that was deliberate,
run ``.venv/bin/python tests/golden/regenerate.py`` and say why in the commit; otherwise it is a
bug.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import spider_env as se
from spider_env.core.deals import deal_from_text, deal_to_text
from spider_env.core.rules import apply, is_terminal, legal_actions
from spider_env.core.state import State
from spider_env.core.variants import get_variant, parse_options

GOLDEN = Path(__file__).resolve().parent / "golden"
PLAYTHROUGHS = sorted(GOLDEN.glob("playthrough-*.jsonl"))


def golden_deals() -> list[tuple[str, int, str]]:
    out = []
    block: list[str] = []
    head = ""
    for line in (GOLDEN / "deals.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("=== "):
            if head:
                out.append((head, block))
            head, block = line, []
        else:
            block.append(line)
    out.append((head, block))
    result = []
    for h, b in out:
        _, name, number = h.split()
        result.append((name, int(number), "\n".join(b) + "\n"))
    return result


DEALS = golden_deals()


def test_golden_deals_cover_every_suit_count() -> None:
    names = {name for name, _n, _t in DEALS}
    assert names == {"spider-1suit", "spider-2suit", "spider-4suit"}
    for name in names:
        assert sum(1 for n, _x, _t in DEALS if n == name) >= 5


@pytest.mark.parametrize(("name", "number", "text"), DEALS, ids=[f"{n}-{k}" for n, k, _ in DEALS])
def test_deal_matches_golden_text(name: str, number: int, text: str) -> None:
    d = se.generate_deal(name, number)
    assert deal_to_text(d) == text
    back = deal_from_text(text)
    assert back.columns == d.columns and back.stock == d.stock
    assert se.new_game(name, number) == State.from_deal(back)


def read_playthrough(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])["game"]
    return header, [json.loads(x) for x in lines[1:]]


def test_playthroughs_exist() -> None:
    assert len(PLAYTHROUGHS) >= 6
    variants = {read_playthrough(p)[0]["variant"] for p in PLAYTHROUGHS}
    assert variants == {"spider-1suit", "spider-2suit", "spider-4suit"}


@pytest.mark.parametrize("path", PLAYTHROUGHS, ids=[p.stem for p in PLAYTHROUGHS])
def test_playthrough_replays(path: Path) -> None:
    header, records = read_playthrough(path)
    assert header["steps"] == len(records) > 0
    v = get_variant(header["variant"])
    if header["options"]:
        v = parse_options(v, header["options"])
    state = State.from_deal(se.generate_deal(v, header["deal"]))
    for i, rec in enumerate(records):
        where = f"{path.name} step {i}"
        assert rec["step"] == i, where
        # the chain of states, played from the deal, matches the file
        assert state.to_text() == rec["state_before"], where
        # the text alone gives the same position and the same legal actions
        loaded = State.from_text(rec["state_before"])
        assert loaded == state, where
        assert legal_actions(state) == rec["legal_actions"], where
        assert legal_actions(loaded) == rec["legal_actions"], where
        assert se.describe(v, rec["action"]) == rec["description"], where
        after = apply(loaded, rec["action"])
        assert after.to_text() == rec["state_after"], where
        state = apply(state, rec["action"])
        assert state == after, where
        assert state.score == rec["score_after"], where
        assert is_terminal(state) == rec["terminal_after"], where
        assert state.won == rec["won_after"], where


def test_special_playthroughs_reach_their_ends() -> None:
    """The goldens include a won game and a stuck game (guards against silent regeneration)."""
    ends = {}
    for p in PLAYTHROUGHS:
        _h, recs = read_playthrough(p)
        ends[p.stem] = recs[-1]
    won = ends["playthrough-spider-1suit-greedy-0"]
    assert won["won_after"] and won["terminal_after"]
    assert "completed: S=8 H=0 D=0 C=0" in won["state_after"]
    stuck = ends["playthrough-spider-4suit-random-4"]
    assert stuck["terminal_after"] and not stuck["won_after"]
    assert "pile4: -" in stuck["state_after"]


def test_regenerate_check_is_clean() -> None:
    """``regenerate.py --check`` finds nothing to rewrite (the files are what it makes)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("golden_regenerate", GOLDEN / "regenerate.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    expected = mod.expected_files()
    for path, text in expected.items():
        assert path.read_text(encoding="utf-8") == text, path.name
