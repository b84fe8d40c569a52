"""Model files made in the tests (never the shipped ones): a :class:`SavedModel` of each
architecture with random weights, and a pickle that would leave a marker file if it ran
(the planted payload of tests/test_model_safety.py)."""

from __future__ import annotations

import pathlib
import pickle
from pathlib import Path

import numpy as np
from spider_env.agents.model_file import ActionSetArchitecture, MLPArchitecture, SavedModel
from spider_env.agents.model_format import EnvSettings

from spider_env.core.variants import get_variant
from spider_env.observation import flat_width
from spider_env.observation.actions import N_ACTION_FEATURES, N_GLOBAL_FEATURES

ARCHITECTURES = ("action-set", "mlp")


def env_settings(variant: str, architecture: str, size: int | None = None) -> EnvSettings:
    """The env an ``architecture`` model of ``variant`` is trained on (``size``: its
    ``action_rows`` or ``feature_slots``)."""
    if architecture == "action-set":
        return EnvSettings(variant, "actions", action_rows=size or 96, reward_mode="runs")
    return EnvSettings(variant, "flat", feature_slots=6 if size is None else size,
                       reward_mode="shaped")  # fmt: skip


def random_model(
    variant: str = "spider-1suit",
    architecture: str = "action-set",
    *,
    seed: int = 0,
    hidden: int = 16,
    size: int | None = None,
    deterministic: bool = True,
) -> SavedModel:
    """A model of ``architecture`` for ``variant`` with random weights (``hidden`` wide)."""
    game = get_variant(variant)
    env = env_settings(game.spec_text(), architecture, size)
    arch: ActionSetArchitecture | MLPArchitecture
    if architecture == "action-set":
        arch = ActionSetArchitecture(
            N_ACTION_FEATURES, N_GLOBAL_FEATURES, hidden, game.n_actions, value_hidden=hidden
        )
    else:
        inputs = flat_width(game, env.feature_slots)
        arch = MLPArchitecture(inputs, (hidden, hidden), "tanh", game.n_actions, (hidden,))
    rng = np.random.default_rng(seed)
    weights = {
        name: rng.normal(0.0, 0.5, size=shape).astype(np.float32)
        for name, shape in arch.tensors().items()
    }
    model = SavedModel(arch, env, weights, deterministic, {"seed": seed}, {"title": "test"})
    model.check("the test model")
    return model


class Payload:
    """An object whose unpickling creates the file ``marker`` (what a hostile pickle does:
    any code could run instead)."""

    def __init__(self, marker: Path) -> None:
        self.marker = Path(marker)

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (pathlib.Path.touch, (self.marker,))


def payload(marker: Path) -> bytes:
    """The pickle of a :class:`Payload` (``pickle.loads`` of it creates ``marker``)."""
    return pickle.dumps(Payload(marker))
