"""The documentation site's generated pages cover everything (``make docs`` builds them; CI runs
it as its own step, so Sphinx itself is not run here): a page with Gymnasium's sections and a
picture for every registered id, every command and option of the CLI in its reference, and the
helpers of ``docs/conf.py`` (Markdown docstrings as reST, links that leave the site)."""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def env_pages(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, Path]:
    pytest.importorskip("PIL")
    envs = load(DOCS / "_scripts" / "envs.py", "docs_envs")
    out = tmp_path_factory.mktemp("envs")
    envs.generate(out)
    return envs, out


def test_every_registered_id_has_a_page_with_every_section_and_a_picture(
    env_pages: tuple[ModuleType, Path],
) -> None:
    from PIL import Image

    import spider_env  # noqa: F401
    from spider_env.registration import ENV_IDS

    envs, out = env_pages
    index = (out / "index.md").read_text(encoding="utf-8")
    for env_id in ENV_IDS:
        text = (out / f"{env_id}.md").read_text(encoding="utf-8")
        headings = re.findall(r"^## (.+)$", text, flags=re.M)
        missing = [s for s in envs.SECTIONS if s not in headings]
        assert not missing, f"{env_id}: no section {missing}"
        # Gymnasium's order
        assert [h for h in headings if h in envs.SECTIONS] == list(envs.SECTIONS)
        assert text.startswith(f"# {env_id}\n")
        assert f"({env_id}.png)" in text
        with Image.open(out / f"{env_id}.png") as image:
            assert image.format == "PNG" and image.width > 100 and image.height > 100
        assert f"[{env_id}]({env_id}.md)" in index


def test_an_env_page_gives_the_numbers_of_its_id(env_pages: tuple[ModuleType, Path]) -> None:
    import gymnasium as gym

    envs, out = env_pages
    for env_id in ("Spider-v0", "Scorpion-v0", "Spiderette1Suit-v0"):
        env = gym.make(env_id)
        text = (out / f"{env_id}.md").read_text(encoding="utf-8")
        assert f"| Action Space | `Discrete({env.action_space.n})` |" in text
        assert f"`{envs._short(env.observation_space)}`" in text
        assert f"`max_episode_steps={env.spec.max_episode_steps}`" in text
        env.close()


def _walk(parser: argparse.ArgumentParser, name: str) -> list[tuple[str, list[str]]]:
    """``(command, its option strings)`` of the parser and every subcommand under it."""
    out = [(name, [s for a in parser._actions for s in a.option_strings])]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child_name, child in action.choices.items():
                out += _walk(child, f"{name} {child_name}")
    return out


def test_the_cli_reference_has_every_command_and_option() -> None:
    from spider_env.apps.cli import build_parser

    cli = load(DOCS / "_scripts" / "cli.py", "docs_cli")
    text = cli.render()
    commands = _walk(build_parser(), "spider-env")
    assert len(commands) > 5
    sections = re.split(r"^#+ `(.+)`$", text, flags=re.M)
    by_command = dict(zip(sections[1::2], sections[2::2]))
    for command, options in commands:
        assert command in by_command, f"no section for {command}"
        for option in options:
            if option in ("-h", "--help"):
                continue
            assert re.search(rf"`{re.escape(option)}[ `]", by_command[command]), (
                f"{command}: {option} is not documented"
            )


@pytest.fixture(scope="module")
def conf() -> ModuleType:
    return load(DOCS / "conf.py", "docs_conf")


def test_markdown_docstrings_become_rst(conf: ModuleType) -> None:
    lines = [
        "A summary.",
        "",
        "## Table",
        "| key | meaning |",
        "|-----|---------|",
        "| `a` | first part |",
        "|     | and more   |",
        "Text:",
        "- an item",
        "```python",
        "x = 1",
        "```",
    ]
    rst = "\n".join(conf.markdown_to_rst(lines))
    assert ".. rubric:: Table" in rst
    assert "   * - `a`\n     - first part and more" in rst
    assert "Text:\n\n- an item" in rst
    assert ".. code-block:: python\n\n   x = 1" in rst


def test_links_out_of_the_site_lead_to_the_repository_or_to_text(conf: ModuleType) -> None:
    page = DOCS / "guide" / "quickstart.md"
    pages = {page, DOCS / "index.md"}
    text = "[home](../index.md#x) [readme](../../README.md#a) [nowhere](../nowhere.md)\n"
    text += "```\n[in code](../../README.md)\n```\n"
    conf.REPOSITORY = "https://github.com/o/spider-env"
    out = conf.rewrite_links(text, page, page, pages)
    assert "[home](../index.md#x)" in out
    assert "[readme](https://github.com/o/spider-env/blob/main/README.md#a)" in out
    assert "[nowhere](../nowhere.md)" in out  # left for the build to report
    assert "[in code](../../README.md)" in out
    conf.REPOSITORY = None
    assert conf.rewrite_links(text, page, page, pages).startswith("[home](../index.md#x) readme ")
    included = ROOT / "research" / "planner" / "README.md"
    pages.add(DOCS / "research" / "planner-record.md")
    out = conf.rewrite_links("[r](record.md#t)", included, DOCS / "research" / "planner.md", pages)
    assert out == "[r](planner-record.md#t)"


def test_the_env_pages_snippets_and_the_docstring_examples_run(
    env_pages: tuple[ModuleType, Path], tmp_path: Path
) -> None:
    """Every ```python block of the generated env pages and of the package's docstrings runs: all
    in one fresh process (each block in a namespace of its own), so the cost is one start-up."""
    import ast
    import subprocess

    from test_readme import fenced_blocks

    _, out = env_pages
    blocks: list[tuple[str, str]] = []
    for page in sorted(out.glob("*.md")):
        for lang, line, code in fenced_blocks(page.read_text(encoding="utf-8")):
            if lang == "python":
                blocks.append((f"docs/envs/{page.name}:{line}", code))
    for source in sorted([*(ROOT / "spider_env").rglob("*.py"), *(ROOT / "agents").rglob("*.py")]):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                for lang, line, code in fenced_blocks(doc or ""):
                    if lang == "python":
                        name = getattr(node, "name", "")
                        blocks.append((f"{source.relative_to(ROOT)}:{name}:{line}", code))
    assert sum(at.startswith("docs/envs/") for at, _ in blocks) >= 15
    assert any(at.startswith("spider_env/env.py") for at, _ in blocks)
    script = "import traceback, sys\nfailed = []\n"
    for at, code in blocks:
        script += f"try:\n    exec(compile({code!r}, {at!r}, 'exec'), {{'__name__': '__main__'}})\n"
        script += f"except BaseException:\n    failed.append({at!r}); traceback.print_exc()\n"
    script += "sys.exit(f'failed: {failed}' if failed else 0)\n"
    (tmp_path / "blocks.py").write_text(script, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "blocks.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
