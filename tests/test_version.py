"""One version, in one place: ``spider_env.__version__`` is what ``spider-env --version`` prints
and what the package metadata says (pyproject reads it: ``dynamic = ["version"]``)."""

from __future__ import annotations

import importlib.metadata

import pytest

import spider_env
from spider_env.apps.cli import main


def test_cli_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"spider-env {spider_env.__version__}\n"


def test_installed_metadata_has_the_package_version() -> None:
    assert importlib.metadata.version("spider-env") == spider_env.__version__
