"""The agents of an evaluation, from what the caller gave: baseline names, paths of trained
models (built with :func:`spider_env.agents.make_agent`) or agent objects."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from spider_env.agents import AGENT_NAMES, make_agent
from spider_env.core.variants import Variant

# The names make_agent knows; any other text is a model path (or an unknown name, refused).
_BASELINES = frozenset(AGENT_NAMES)


def is_model_spec(spec: Any) -> bool:
    """Whether ``spec`` names a trained model (a path), not a baseline or an object."""
    if not isinstance(spec, str):
        return False
    name = spec.lower()
    return name not in _BASELINES and not name.startswith("expert:")


def check_deterministic(specs: Sequence[Any], deterministic: object) -> None:
    """``deterministic`` (how trained models choose) must be None, or a bool when some agent
    is given as a model path; anything else is a clear ``TypeError`` / ``ValueError``."""
    if deterministic is None:
        return
    if not isinstance(deterministic, bool):
        raise TypeError(f"deterministic must be True, False or None, got {deterministic!r}")
    if not any(is_model_spec(s) for s in specs):
        raise ValueError(
            "deterministic applies to agents given as model paths (.safetensors, .zip), and "
            "none is (only trained models given as a path can sample or play their most "
            "likely action)"
        )


def build_agent(
    spec: Any,
    variant: Variant,
    deterministic: bool | None = None,
    allow_other_game: bool = False,
) -> Any:
    """An agent from a spec (name or model path) or the agent object itself.

    ``deterministic`` and ``allow_other_game`` are passed to
    :func:`~spider_env.agents.make_agent` for model paths only (``None``: what the model
    says; a model of another game is refused unless allowed); baselines and objects are used
    as made.
    """
    if isinstance(spec, str):
        if is_model_spec(spec):
            return make_agent(
                spec, variant, deterministic=deterministic, allow_other_game=allow_other_game
            )
        return make_agent(spec, variant)
    if callable(getattr(spec, "act", None)):
        own = getattr(spec, "variant", None)
        if own is None and hasattr(spec, "variant"):
            spec = copy.deepcopy(spec)  # the caller's object stays free for other variants
            spec.variant = variant
        elif own is not None and own != variant:
            name = getattr(own, "name", own)
            raise ValueError(
                f"agent {spec!r} was made for {name}, but the evaluation plays {variant.name}"
            )
        return spec
    raise TypeError(f"an agent must be a name, a model path or an object with act(); got {spec!r}")


def model_mode(agent: Any) -> bool | None:
    """How a trained model chooses: ``True`` most likely action, ``False`` sampled; ``None``
    for agents that are not models."""
    det = getattr(agent, "deterministic", None)
    return det if isinstance(det, bool) else None


def agent_names(specs: Sequence[Any], agents: Sequence[Any]) -> list[str]:
    """Display names: the baseline's name, the model agent's ``name`` (which says whether it
    samples: ``"model.safetensors (sampled)"``), or the object's ``name``; repeats get ``#2``,
    ``#3``."""
    names: list[str] = []
    for spec, agent in zip(specs, agents):
        if isinstance(spec, str) and not is_model_spec(spec):
            base = spec
        else:
            base = str(getattr(agent, "name", type(agent).__name__))
        name, k = base, 2
        while name in names:
            name, k = f"{base}#{k}", k + 1
        names.append(name)
    return names


__all__ = ["agent_names", "build_agent", "check_deterministic", "is_model_spec", "model_mode"]
