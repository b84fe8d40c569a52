"""Env versions as Gymnasium keeps them: every registered id is ``Name-vN``, the ``Version
History`` of ``SpiderEnv``'s docstring lists exactly the versions registered for every name, and
an id made out of date by a newer version still builds and warns."""

from __future__ import annotations

import re
import warnings

import gymnasium
import pytest

import spider_env  # noqa: F401  (registers the ids)
from spider_env.env import SpiderEnv
from spider_env.registration import ENV_IDS, register_variant_env, registered_versions

ID = re.compile(r"[A-Z][A-Za-z0-9]*-v(\d+)")


def history_versions(doc: str) -> list[int]:
    """The versions a docstring's ``## Version History`` lists (its ``- vN:`` items)."""
    section = doc.split("## Version History", 1)[1].split("\n    ## ", 1)[0]
    return [int(v) for v in re.findall(r"^\s*- v(\d+):", section, flags=re.M)]


def test_every_id_is_a_name_and_a_version() -> None:
    assert [i for i in ENV_IDS if not ID.fullmatch(i)] == []


def test_the_version_history_lists_exactly_the_registered_versions() -> None:
    listed = history_versions(SpiderEnv.__doc__ or "")
    assert listed == sorted(set(listed)) and listed, "a version once, in order"
    for name, versions in registered_versions().items():
        assert versions == listed, name


def test_the_history_reader_reads_every_version_in_order() -> None:
    doc = "    ## Version History\n    - v0: first.\n    - v1: a new reward.\n    ## Other\n"
    assert history_versions(doc) == [0, 1]
    assert history_versions(doc.replace("- v1:", "- v3:")) == [0, 3]


def test_an_out_of_date_id_still_builds_and_warns() -> None:
    old, new = "SpiderVersionProbe-v0", "SpiderVersionProbe-v1"
    try:
        register_variant_env(old, "spider-1suit")
        register_variant_env(new, "spider-1suit")
        with pytest.warns(DeprecationWarning, match="out of date"):
            env = gymnasium.make(old)
        env.reset(seed=0)
        env.close()
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            gymnasium.make(new).close()
    finally:
        for env_id in (old, new):
            gymnasium.registry.pop(env_id, None)
            ENV_IDS.pop(env_id, None)
