"""``spider-env model``: what a trained model file says, and converting other formats to it.

    spider-env model show runs/ppo/model.safetensors
    spider-env model convert runs/ppo/model.zip runs/ppo/model.safetensors
    spider-env model convert --trust-pickle CHECKPOINT model.safetensors --suits 1

``convert`` reads a Stable-Baselines3 ``.zip`` as data (its pickled entries are never decoded;
the weights through ``torch.load(..., weights_only=True)``: torch needed). With
``--trust-pickle`` it unpickles what it is given (a zip SB3 must load itself, an RLlib checkpoint
folder): only for a file whose maker you trust, as unpickling runs whatever code the file holds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TextIO

from spider_env.agents.model import load_model
from spider_env.agents.model_file import SUFFIX, SavedModel, is_model_file
from spider_env.core.variants import Variant


def describe(model: SavedModel, path: str, game_known: bool = True) -> str:
    """What a model is, in a few lines: its game, network, how it chooses, its card and what
    training recorded."""
    env, arch = model.env, model.architecture
    sizes = ", ".join(f"{k}={v}" for k, v in arch.to_json().items() if k != "name")
    size = ", ".join(f"{k}={v}" for k, v in env.input_size().items())
    params = sum(int(w.size) for w in model.weights.values())
    lines = [
        f"{path}",
        f"  game: {env.variant}" + ("" if game_known else " (not named by the file: assumed)"),
        f"  observation: obs_mode={env.obs_mode}" + (f", {size}" if size else "")
        + f"; reward_mode={env.reward_mode}; max_episode_steps={env.max_episode_steps}",
        f"  network: {arch.name} ({sizes}), {params:,} parameters",
        f"  plays: {'its most likely action' if model.deterministic else 'sampled actions'}",
    ]  # fmt: skip
    for key, value in model.card.items():
        lines.append(f"  {key}: {_text(value)}")
    record = model.training
    for key in ("trainer", "timesteps", "validation_deals", "validation_win_rate", "source"):
        if key in record:
            lines.append(f"  training {key}: {_text(record[key])}")
    return "\n".join(lines)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def show(path: str, variant: Variant | None, out: TextIO) -> None:
    """Print what the model in ``path`` is (:func:`describe`)."""
    model, known = load_model(path, variant)
    print(describe(model, path, known), file=out)


def convert(
    source: str, target: str, variant: Variant | None, trust_pickle: bool, out: TextIO
) -> SavedModel:
    """Write the model of ``source`` (an SB3 zip; with ``trust_pickle`` also an RLlib
    checkpoint folder, and unpickled) as the model file ``target``."""
    if not target.endswith(SUFFIX):
        raise ValueError(f"the converted model's name must end in {SUFFIX}, got {target!r}")
    if is_model_file(source):
        raise ValueError(f"{source} is a model file already")
    if not os.path.exists(source):
        raise FileNotFoundError(f"model file not found: {source}")
    try:
        from spider_env.agents.rl.model_import import convert_trusted, read_sb3_zip
    except ImportError as exc:
        raise ImportError(
            f"converting needs torch (the 'train' extra: pip install 'spider-env[train]'): {exc}"
        ) from None
    if trust_pickle:
        model = convert_trusted(source, variant)
        how = "unpickled (--trust-pickle)"
    elif os.path.isdir(source):
        raise ValueError(
            f"{source} is a folder: an RLlib checkpoint can only be read by unpickling it; "
            "if you trust it, add --trust-pickle"
        )
    else:
        model, _ = read_sb3_zip(source, variant)
        how = "read as data: nothing was unpickled"
    written = model.write(Path(target))
    print(f"{written} written ({how})", file=out)
    print(describe(model, str(written)), file=out)
    return model


__all__ = ["convert", "describe", "show"]
