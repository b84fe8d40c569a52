"""Golden files: pinned deals, starting layouts, playthroughs and renders (tests/golden/).

Every file is compared with the text ``tests/golden/regenerate.py`` makes now, in memory: a
failure means the deal generator, the rules or the render changed behaviour. If that was
deliberate, run ``make golden`` (``python tests/golden/regenerate.py``) and say why in the
commit; otherwise it is a bug. The playthroughs are also replayed through the engine from their
state texts.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import spider_env as se
from spider_env.core.deals import deal_from_text, deal_to_text
from spider_env.core.rules import apply, is_terminal, legal_actions
from spider_env.core.state import State
from spider_env.core.variants import VARIANTS, get_variant, parse_options

GOLDEN = Path(__file__).resolve().parent / "golden"


def load_regenerate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("golden_regenerate", GOLDEN / "regenerate.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


REGEN = load_regenerate()
FILES = sorted(REGEN.expected_files())
PLAYTHROUGHS = sorted(GOLDEN.glob("playthrough-*.jsonl"))


# --- the files are what the code makes ---------------------------------------------------------


@pytest.mark.parametrize("rel", FILES)
def test_golden_file_is_what_the_code_makes(rel: str) -> None:
    path = GOLDEN / rel
    old = path.read_text(encoding="utf-8") if path.exists() else None
    diff = REGEN.first_difference(rel, old, REGEN.expected_files()[rel])
    assert diff is None, f"{diff} (after a deliberate change: make golden)"


def test_no_stale_golden_file() -> None:
    assert REGEN.golden_files_on_disk(GOLDEN) - set(FILES) == set()


def test_goldens_cover_every_variant_and_render_case() -> None:
    layouts = {rel.removeprefix("variants/").removesuffix(".txt") for rel in FILES}
    assert set(VARIANTS) - {"spider-1suit", "spider-2suit", "spider-4suit"} <= layouts
    played = {read_playthrough(p)[0]["variant"] for p in PLAYTHROUGHS}
    assert played == set(VARIANTS)
    assert len([rel for rel in FILES if rel.startswith("render/")]) >= 7


def test_check_mode_names_the_first_differing_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "golden"
    shutil.copytree(GOLDEN, copy, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    assert REGEN.main(["--check", "--dir", str(copy)]) == 0
    lines = (copy / "deals.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2].replace("|", "", 1)
    (copy / "deals.txt").write_text("".join(lines), encoding="utf-8")
    (copy / "render" / "spider-1suit-won.txt").unlink()
    (copy / "variants" / "old.txt").write_text("x", encoding="utf-8")
    capsys.readouterr()
    assert REGEN.main(["--check", "--dir", str(copy)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("deals.txt:3: differs")
    assert err[1] == "... and 2 more golden file(s) differ"
    assert REGEN.check(copy)[1:] == [
        "render/spider-1suit-won.txt: missing",
        "variants/old.txt: not made by regenerate.py (stale golden file)",
    ]
    # writing repairs all three (and leaves the inputs alone)
    assert REGEN.main(["--dir", str(copy)]) == 0
    assert REGEN.check(copy) == []
    assert (copy / "variants" / "pysolfc-spider-deals.txt").exists()


# --- deals -------------------------------------------------------------------------------------


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
def test_deal_text_reads_back_to_the_same_game(name: str, number: int, text: str) -> None:
    d = se.generate_deal(name, number)
    assert deal_to_text(d) == text
    back = deal_from_text(text)
    assert back.columns == d.columns and back.stock == d.stock
    assert se.new_game(name, number) == State.from_deal(back)


# --- playthroughs ------------------------------------------------------------------------------


def read_playthrough(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])["game"]
    return header, [json.loads(x) for x in lines[1:]]


@pytest.mark.parametrize("path", PLAYTHROUGHS, ids=[p.stem for p in PLAYTHROUGHS])
def test_playthrough_replays_from_its_state_texts(path: Path) -> None:
    header, records = read_playthrough(path)
    assert header["steps"] == len(records) > 0
    v = get_variant(header["variant"])
    if header["options"]:
        v = parse_options(v, header["options"])
    state = State.from_deal(se.generate_deal(v, header["deal"]))
    assert "state_before" in records[0]
    for i, rec in enumerate(records):
        where = f"{path.name} step {i}"
        assert rec["step"] == i, where
        before = rec["state_before"] if i == 0 else records[i - 1]["state_after"]
        assert i == 0 or "state_before" not in rec, where
        # the chain of states, played from the deal, matches the file
        assert state.to_text() == before, where
        # the text alone (undo history included) gives the same position and legal actions
        loaded = State.from_text(before)
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
    """The goldens include a won game, a stuck game, deals and undos (guards against a
    regeneration that silently loses them). (No golden game discards: the Culbertson game
    completes no run in its 120 steps; hand-built tests and test_properties cover discards.)"""
    ends = {}
    kinds: set[str] = set()
    for p in PLAYTHROUGHS:
        _h, recs = read_playthrough(p)
        ends[p.stem] = recs[-1]
        kinds |= {rec["description"].split()[0] for rec in recs}
    won = ends["playthrough-spider-1suit-greedy-0"]
    assert won["won_after"] and won["terminal_after"]
    assert "completed: S=8 H=0 D=0 C=0" in won["state_after"]
    stuck = ends["playthrough-spider-4suit-random-4"]
    assert stuck["terminal_after"] and not stuck["won_after"]
    assert "pile4: -" in stuck["state_after"]
    assert {"move", "deal", "undo"} <= kinds
