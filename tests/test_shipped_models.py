"""The models shipped in docs/models: model files only (no pickles, no sidecars), each with a model
card that says what it is and how it was measured, none naming a folder of the machine that
made it, each listed in docs/models/README.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from spider_env.agents.model_file import SavedModel

MODELS = Path(__file__).resolve().parents[1] / "docs" / "models"
SHIPPED = sorted(MODELS.glob("*.safetensors"))
CARD_KEYS = {
    "title", "variant", "trained", "training_command", "validation_deals", "test_deals",
    "test_win_rate", "test_win_rate_ci95", "test_record", "measured_with", "evaluation_command",
}  # fmt: skip
LOCAL = re.compile(rb"/(tmp|work|home|Users|root)/|[A-Za-z]:\\\\")


def test_docs_models_holds_model_files_and_their_readme_only() -> None:
    assert [p.name for p in SHIPPED] == [
        "maskable_ppo_1suit.safetensors", "planner_2suit.safetensors", "rl_1suit.safetensors",
        "rl_1suit_recipe.safetensors", "rl_2suit.safetensors",
    ]  # fmt: skip
    assert sorted(p.name for p in MODELS.iterdir()) == sorted(
        [p.name for p in SHIPPED] + ["README.md"]
    )


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_a_shipped_model_has_its_card_and_names_no_local_folder(path: Path) -> None:
    saved = SavedModel.read(path)
    card = saved.card
    assert set(card) >= CARD_KEYS, sorted(CARD_KEYS - set(card))
    assert card["variant"] == saved.env.variant
    low, high = card["test_win_rate_ci95"]
    assert low <= card["test_win_rate"] <= high
    assert card["evaluation_command"].startswith(
        f"spider-env evaluate --agent docs/models/{path.name}"
    )
    assert (MODELS.parent.parent / card["test_record"]).is_file(), card["test_record"]
    data = path.read_bytes()
    header = data[8 : 8 + int.from_bytes(data[:8], "little")]  # safetensors: the JSON header
    assert not LOCAL.search(header), "a local path in the file"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_the_models_readme_lists_each_model_with_its_measure(path: Path) -> None:
    text = (MODELS / "README.md").read_text()
    card = SavedModel.read(path).card
    assert f"`{path.name}`" in text
    assert card["evaluation_command"] in text
