"""The wheel installs exactly one top-level package, ``spider_env``, holding every source module.

The agents live in the repository folder ``agents/`` but install as ``spider_env.agents``
(``[tool.setuptools.package-dir]`` in pyproject.toml): a top-level ``agents`` module would
collide with the OpenAI Agents SDK (``openai-agents``, import name ``agents``; issue 13). The
package list in pyproject.toml is explicit, so a new subpackage that is not added there would be
silently left out of the wheel: the second test catches that.

The wheel is built offline from a copy of the sources (``pip wheel --no-deps
--no-build-isolation --no-index``: setuptools and wheel come from the venv), so the working tree
gets no ``build/`` directory and no stale file from an earlier build can slip into the wheel.
``make check-sdk-coexistence`` installs the wheel next to ``openai-agents`` in a fresh venv.

What a newcomer reads about the package is checked on the same wheel: the MIT licence text in its
``.dist-info/licenses/`` (and in the sdist, built offline by setuptools' own hook), the project's
homes, keywords and classifiers, and the long description: the README itself, as Markdown, well
under :data:`MAX_DESCRIPTION_BYTES` (PyPI's page is a user guide, not a lab notebook).

The last tests pin the Gymnasium range of the dependencies: this venv's Gymnasium is in it, and
``make test-gymnasium-oldest`` (run by ``.ci/run``) installs its oldest release.
"""

from __future__ import annotations

import email
import email.message
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "spider_env"
# Source folder -> the package path it installs under (pyproject.toml's package-dir mapping).
SOURCE_DIRS = {"spider_env": "spider_env", "agents": "spider_env/agents"}


def top_level_names(wheel_files: list[str]) -> set[str]:
    """The importable top-level names a wheel with these archive paths installs.

    ``*.dist-info`` is metadata; ``*.data/purelib`` and ``*.data/platlib`` install into
    site-packages like the wheel's root, so their first component counts too.
    """
    names: set[str] = set()
    for name in wheel_files:
        parts = PurePosixPath(name).parts
        if parts[0].endswith(".dist-info"):
            continue
        if parts[0].endswith(".data"):
            if len(parts) < 3 or parts[1] not in ("purelib", "platlib"):
                continue  # scripts, headers, data: not importable
            parts = parts[2:]
        top = parts[0]
        names.add(top.removesuffix(".py") if len(parts) == 1 else top)
    return names


def expected_modules(root: Path) -> set[str]:
    """Wheel paths of every ``.py`` file under the source folders (after package-dir mapping)."""
    out: set[str] = set()
    for src, installed in SOURCE_DIRS.items():
        for path in (root / src).rglob("*.py"):
            rel = path.relative_to(root / src)
            if "__pycache__" in rel.parts:
                continue
            out.add(str(PurePosixPath(installed, *rel.parts)))
    return out


def missing_from_wheel(root: Path, wheel_files: list[str]) -> list[str]:
    """Source modules (as wheel paths) that the wheel does not contain, sorted."""
    return sorted(expected_modules(root) - set(wheel_files))


# What a build reads besides the source folders: the metadata, its long description, the licence.
BUILD_FILES = ("pyproject.toml", "README.md", "LICENSE")


def copy_sources(src: Path) -> None:
    """The files a build reads, copied into the folder ``src`` (no caches)."""
    src.mkdir(parents=True, exist_ok=True)
    for name in BUILD_FILES:
        shutil.copy2(ROOT / name, src / name)
    for folder in SOURCE_DIRS:
        shutil.copytree(
            ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built offline from a clean copy of the sources."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    copy_sources(src)
    dist = tmp / "dist"
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    cmd += ["--no-index", "-q", "-w", str(dist), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"wheel build failed:\n{proc.stdout}\n{proc.stderr}"
    wheels = list(dist.glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def wheel_files(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        return zf.namelist()


def test_wheel_installs_no_top_level_module_but_spider_env(wheel: Path) -> None:
    files = wheel_files(wheel)
    assert top_level_names(files) == {PACKAGE}, sorted(top_level_names(files) - {PACKAGE})
    [top_level_txt] = [f for f in files if f.endswith(".dist-info/top_level.txt")]
    with zipfile.ZipFile(wheel) as zf:
        declared = zf.read(top_level_txt).decode().split()
    assert declared == [PACKAGE]


def test_wheel_contains_every_source_module(wheel: Path) -> None:
    files = wheel_files(wheel)
    assert missing_from_wheel(ROOT, files) == []
    assert "spider_env/agents/__init__.py" in files  # the mapped folder is really in there
    assert "spider_env/py.typed" in files


# --- what a newcomer reads about the package: licence, metadata, long description ----------
#: The long description (the README, a user guide) stays well under this many bytes: PyPI's page
#: is its first screen, not a lab notebook.
MAX_DESCRIPTION_BYTES = 25_000
#: The project's homes named in ``[project.urls]``.
PROJECT_URLS = ("Homepage", "Documentation", "Repository", "Issues", "Changelog")


def wheel_metadata(wheel: Path) -> email.message.Message:
    """The wheel's ``.dist-info/METADATA`` (core metadata: headers, the description as body)."""
    with zipfile.ZipFile(wheel) as zf:
        [name] = [f for f in zf.namelist() if f.endswith(".dist-info/METADATA")]
        return email.message_from_string(zf.read(name).decode("utf-8"))


def test_wheel_ships_the_licence_text(wheel: Path) -> None:
    licence = (ROOT / "LICENSE").read_text()
    assert licence.startswith("MIT License") and "the spider-env developers" in licence
    with zipfile.ZipFile(wheel) as zf:
        [path] = [f for f in zf.namelist() if f.endswith(".dist-info/licenses/LICENSE")]
        assert zf.read(path).decode() == licence
    meta = wheel_metadata(wheel)
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]


def test_wheel_metadata_names_the_project_homes_and_topics(wheel: Path) -> None:
    meta = wheel_metadata(wheel)
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert set(urls) == set(PROJECT_URLS), urls
    assert all(u.startswith("https://") for u in urls.values()), urls
    classifiers = meta.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.10" in classifiers  # requires-python's oldest
    assert "Topic :: Scientific/Engineering :: Artificial Intelligence" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]  # License-Expression says it
    assert "reinforcement learning" in (meta["Keywords"] or "")


def test_long_description_is_the_readme_and_stays_short(wheel: Path) -> None:
    meta = wheel_metadata(wheel)
    assert meta["Description-Content-Type"] == "text/markdown"
    description = str(meta.get_payload())
    readme = (ROOT / "README.md").read_text()
    assert description.strip() == readme.strip()
    assert description.startswith(readme.splitlines()[0])  # the project's first line
    size = len(description.encode())
    assert size < MAX_DESCRIPTION_BYTES, f"long description {size:,} bytes (README.md)"


def test_sdist_ships_the_licence_and_the_readme(tmp_path: Path) -> None:
    src = tmp_path / "src"
    copy_sources(src)
    code = "from setuptools import build_meta as b; print(b.build_sdist('dist'))"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=src, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, f"sdist build failed:\n{proc.stdout}\n{proc.stderr}"
    sdist = src / "dist" / proc.stdout.split()[-1]
    with tarfile.open(sdist) as tf:
        names = {PurePosixPath(n).relative_to(PurePosixPath(n).parts[0]) for n in tf.getnames()}
    for name in ("LICENSE", "README.md", "pyproject.toml", "PKG-INFO"):
        assert PurePosixPath(name) in names, name


def test_top_level_check_flags_a_top_level_agents_package() -> None:
    files = ["spider_env/__init__.py", "agents/__init__.py", "x-1.dist-info/RECORD"]
    assert top_level_names(files) == {"spider_env", "agents"}
    assert top_level_names(["helper.py", "x-1.data/purelib/extra/__init__.py"]) == {
        "helper",
        "extra",
    }
    assert top_level_names(["x-1.data/scripts/spider-env"]) == set()


def test_missing_module_check_flags_a_subpackage_left_out(tmp_path: Path) -> None:
    (tmp_path / "spider_env" / "fast").mkdir(parents=True)
    (tmp_path / "agents").mkdir()
    for rel in ("spider_env/__init__.py", "spider_env/fast/__init__.py", "agents/greedy.py"):
        (tmp_path / rel).write_text("")
    files = ["spider_env/__init__.py", "agents/greedy.py"]  # unmapped agents, no fast/
    assert missing_from_wheel(tmp_path, files) == [
        "spider_env/agents/greedy.py",
        "spider_env/fast/__init__.py",
    ]


# --- the Gymnasium versions we support (issue 20) ------------------------------------------
def declared_gymnasium() -> SpecifierSet:
    """The versions of pyproject.toml's ``gymnasium`` dependency."""
    [line] = re.findall(
        r'^\s*"(gymnasium[<>=!~][^"]*)"', (ROOT / "pyproject.toml").read_text(), re.M
    )
    return Requirement(line).specifier


def test_gymnasium_range_runs_from_its_oldest_release_to_the_next_major() -> None:
    import gymnasium

    versions = declared_gymnasium()
    assert gymnasium.__version__ in versions  # this venv tests a release of the range
    assert "1.2.2" in versions  # RLlib's pin
    assert "1.0.0" not in versions  # no gymnasium.vector.AutoresetMode
    assert "2.0.0" not in versions
    assert [s.operator for s in versions if s.operator == ">="] == [">="]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_test_gymnasium_oldest_pins_the_declared_oldest_release() -> None:
    [oldest] = [s.version for s in declared_gymnasium() if s.operator == ">="]
    cmd = ["make", "-n", "-B", "test-gymnasium-oldest"]  # -B: the venv's install steps too
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert f"'gymnasium=={oldest}'" in out and f"grep -Fx 'gymnasium {oldest}'" in out
    assert "tests/test_vector.py" in out
    assert "test-gymnasium-oldest" in (ROOT / ".ci" / "run").read_text()  # CI runs it


# --- `make demo` installs what the demo needs, `make test` everything -------------------------
def make_dry_run(target: str) -> str:
    """The commands ``make`` would run for ``target``, the venv's install steps included."""
    cmd = ["make", "-n", "-B", target]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_demo_installs_the_core_and_the_cli_extra_only() -> None:
    # the demo imports none of torch, SB3, Ray... (tests/test_cli.py); its venv holds none
    out = make_dry_run("demo")
    assert "pip install --no-compile -e '.[cli]'" in out and "torch" not in out
    assert "dev" not in out and "train" not in out
    assert "touch .venv/.installed-demo" in out and ".venv/.installed " not in out
    # make test's install: torch first, then everything; it stamps the demo's install too, and a
    # venv built by make demo lacks its stamp, so make test installs the rest into it
    out = make_dry_run("install")
    assert out.index("torch==") < out.index("pip install --no-compile -e '.[dev,train]'")
    assert "touch .venv/.installed .venv/.installed-demo" in out


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_installs_without_compiling_every_module_to_bytecode() -> None:
    # pip's bytecode of torch and Ray, most of it never imported, was most of the install's time;
    # Python writes the bytecode of what is imported
    for target in ("demo", "install", "docs"):
        lines = [x for x in make_dry_run(target).splitlines() if " -m pip install" in x]
        assert lines, target
        assert all(" -m pip install --no-compile " in x for x in lines), (target, lines)
