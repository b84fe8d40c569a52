"""Gymnasium registration: ``Spider-v0`` and one id per variant.

Every id is ``Name-vN``; the version policy and history are the ``Version History`` of
:class:`~spider_env.env.SpiderEnv` (a change that can change learning results registers the next
version, and the old id stays registered and warns). :func:`registered_versions` lists what is
registered, for the test that holds the two together.

``import spider_env`` calls :func:`register_envs`, which registers every id of
:data:`ENV_IDS` (idempotent). To give a new variant its own id, add it to the table or call
:func:`register_variant_env` (e.g. ``register_variant_env("Spiderette-v0", "spiderette-4suit")``);
``gymnasium.make(env_id, **kwargs)`` then builds a :class:`~spider_env.env.SpiderEnv` of that
variant under a ``TimeLimit`` of ``max_episode_steps`` (default
:data:`~spider_env.env.DEFAULT_MAX_EPISODE_STEPS` = 1000, see the ``SpiderEnv`` docstring) and,
outermost, the thin :class:`~spider_env.wrappers.SpiderMethods`, so that ``env.action_masks()``,
``env.state``, ``env.describe_action(a)``... work on the env ``gymnasium.make`` returns.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import gymnasium
from gymnasium.envs.registration import EnvSpec, WrapperSpec, parse_env_id

from spider_env.core.variants import get_variant
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS

ENTRY_POINT = "spider_env.env:SpiderEnv"
VECTOR_ENTRY_POINT = "spider_env.vector:make_vector_env"
# Outermost wrapper of every made env: forwards action_masks(), state, describe_action()...
METHODS_WRAPPER = WrapperSpec("SpiderMethods", "spider_env.wrappers:SpiderMethods", {})

# env id -> variant name (None: classic Spider, chosen with suits=1|2|4, default 4).
ENV_IDS: dict[str, str | None] = {
    "Spider-v0": None,
    # The other games of the rule sources, one id per variant (see the variants guide).
    "SpiderRelaxed1Suit-v0": "spider-relaxed-1suit",
    "SpiderRelaxed2Suit-v0": "spider-relaxed-2suit",
    "SpiderRelaxed4Suit-v0": "spider-relaxed-4suit",
    "SpiderCulbertson-v0": "spider-culbertson",
    "Spiderette1Suit-v0": "spiderette-1suit",
    "Spiderette2Suit-v0": "spiderette-2suit",
    "Spiderette4Suit-v0": "spiderette-4suit",
    "SimpleSimon-v0": "simple-simon",
    "Scorpion-v0": "scorpion",
    "SpiderTournament1Suit-v0": "spider-tournament-1suit",
    "SpiderTournament2Suit-v0": "spider-tournament-2suit",
    "SpiderPySolFC1Suit-v0": "pysol-spider-1suit",
    "SpiderPySolFC2Suit-v0": "pysol-spider-2suit",
    "SpiderPySolFC4Suit-v0": "pysol-spider-4suit",
}


@dataclasses.dataclass
class SpiderEnvSpec(EnvSpec):
    """The spec of a Spider id: ``gymnasium.make`` adds :class:`SpiderMethods` outermost, and
    ``gymnasium.make_vec`` can build the batched env.

    Gymnasium's ``make_vec`` refuses a ``vector_entry_point`` when the spec lists additional
    wrappers (it could not apply them to a vector env). ``SpiderMethods`` only serves single
    envs (it forwards ``action_masks()`` & co. through ``gymnasium.make``'s wrappers), so a copy
    of this spec, which is what ``make_vec`` works on (it deep-copies the registered spec
    first), is the plain ``EnvSpec`` without it: ``make_vec`` then builds
    ``SpiderVectorEnv`` (``"vector_entry_point"``, the default) or a ``SyncVectorEnv`` of
    envs without the forwarding wrapper (``"sync"``/``"async"``; ``envs.call("action_masks")``
    works there through ``get_wrapper_attr``). ``tests/test_vector.py`` pins both behaviours.
    """

    def __deepcopy__(self, memo: dict[int, Any]) -> EnvSpec:
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(EnvSpec) if f.init}
        fields["kwargs"] = copy.deepcopy(self.kwargs, memo)
        fields["additional_wrappers"] = ()
        return EnvSpec(**fields)


def register_variant_env(
    env_id: str,
    variant_name: str | None,
    max_episode_steps: int | None = DEFAULT_MAX_EPISODE_STEPS,
    **kwargs: Any,
) -> None:
    """Register ``env_id`` as a ``SpiderEnv`` of ``variant_name`` (``None``: classic Spider).

    ``kwargs`` become default constructor arguments (overridable in ``gymnasium.make``).
    Re-registering an id with the same variant is a no-op; with another variant, an error.
    """
    if not isinstance(env_id, str) or not env_id:
        raise ValueError(f"env_id must be a non-empty str, got {env_id!r}")
    known = ENV_IDS.get(env_id, variant_name)
    if known != variant_name:
        raise ValueError(f"{env_id} is already registered for variant {known!r}")
    defaults = dict(kwargs)
    if variant_name is not None:
        get_variant(variant_name)  # fail now, with the list of known variants, if unknown
        defaults["variant"] = variant_name
    ENV_IDS[env_id] = variant_name
    if env_id in gymnasium.registry:
        return
    gymnasium.register(
        id=env_id,
        entry_point=ENTRY_POINT,
        max_episode_steps=max_episode_steps,
        kwargs=defaults,
        additional_wrappers=(METHODS_WRAPPER,),
        vector_entry_point=VECTOR_ENTRY_POINT,
    )
    plain = gymnasium.registry[env_id]
    gymnasium.registry[env_id] = SpiderEnvSpec(
        **{f.name: getattr(plain, f.name) for f in dataclasses.fields(EnvSpec) if f.init}
    )


def registered_versions() -> dict[str, list[int]]:
    """Each name of :data:`ENV_IDS` (``"Spider"``) -> the versions of it Gymnasium has registered,
    in increasing order."""
    out: dict[str, list[int]] = {}
    for env_id in ENV_IDS:
        _, name, _ = parse_env_id(env_id)
        out[name] = sorted(
            spec.version
            for spec in gymnasium.registry.values()
            if spec.name == name and spec.namespace is None and spec.version is not None
        )
    return out


def register_envs() -> list[str]:
    """Register every id of :data:`ENV_IDS` (idempotent); returns the ids."""
    for env_id, variant_name in list(ENV_IDS.items()):
        register_variant_env(env_id, variant_name)
    return list(ENV_IDS)


__all__ = [
    "ENTRY_POINT",
    "ENV_IDS",
    "METHODS_WRAPPER",
    "VECTOR_ENTRY_POINT",
    "SpiderEnvSpec",
    "register_envs",
    "register_variant_env",
    "registered_versions",
]
