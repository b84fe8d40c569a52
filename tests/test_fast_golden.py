"""The golden playthroughs (``tests/golden/playthrough-*.jsonl``) replayed through the compiled
core (:class:`spider_env.fast.FastGame`).

The compiled core refuses undo histories, so every file is replayed in its variant with
``undo=false``: the action ids are the same (undo is the last id of an undo variant), the undo
id is left out of the recorded legal list, a step that plays undo is skipped, and the next step
starts again from the state text of the file (without its undo history). Every other step is
checked against the file: the state before it, the legal ids, the state after it (as state
vectors, counters included), the score, won and terminal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from spider_env.core import rules
from spider_env.core.state import State
from spider_env.core.variants import Variant, get_variant, parse_options
from spider_env.fast import FastGame
from spider_env.fast.layout import to_array

GOLDEN = Path(__file__).resolve().parent / "golden"
PLAYTHROUGHS = sorted(GOLDEN.glob("playthrough-*.jsonl"))


def read_playthrough(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0])["game"], [json.loads(x) for x in lines[1:]]


def without_undo(text: str, v: Variant) -> State:
    """The position of a state text in ``v`` (the variant without undo), history dropped."""
    s = State.from_text(text)
    return State(
        v,
        s.cols,
        s.down,
        s.stock,
        s.completed,
        s.moves,
        s.deals,
        s.undos,
        s.reveals,
        s.free_used,
    )


def test_every_playthrough_file_is_replayed() -> None:
    assert len(PLAYTHROUGHS) >= 20


@pytest.mark.parametrize("path", PLAYTHROUGHS, ids=[p.stem for p in PLAYTHROUGHS])
def test_playthrough_replays_through_the_compiled_core(path: Path) -> None:
    header, records = read_playthrough(path)
    v = get_variant(header["variant"])
    if header["options"]:
        v = parse_options(v, header["options"])
    undo = v.n_actions - 1 if v.undo else -1
    vf = v.with_options(undo=False) if v.undo else v
    g = FastGame(vf)
    st = g.initial(header["deal"])
    synced = True  # st follows from the previous step (not after a skipped undo)
    checked = skipped = 0
    for i, rec in enumerate(records):
        where = f"{path.name} step {i}"
        before = without_undo(rec["state_before"] if i == 0 else records[i - 1]["state_after"], vf)
        if synced:
            assert np.array_equal(st, to_array(before)), where
        else:
            st = g.from_state(before)
        assert g.to_state(st) == before, where
        want = [a for a in rec["legal_actions"] if a != undo]
        assert g.legal_actions(st).tolist() == want, where
        a = rec["action"]
        if a == undo:
            skipped += 1
            synced = False
            continue
        kept = st.copy()
        out = g.apply(st, a)
        assert np.array_equal(st, kept), where
        after = without_undo(rec["state_after"], vf)
        assert np.array_equal(out, to_array(after)), where
        assert g.to_state(out) == after, where
        assert g.score(out) == rec["score_after"], where
        assert g.won(out) == rec["won_after"], where
        assert g.is_terminal(out) == rules.is_terminal(after), where
        if not v.undo:
            assert g.is_terminal(out) == rec["terminal_after"], where
        st = out
        synced = True
        checked += 1
    assert checked > 0
    assert skipped == 0 or v.undo
