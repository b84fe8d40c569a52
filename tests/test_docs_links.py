"""The relative links of the README, docs/ and research/ lead somewhere: every linked file exists
and every ``#anchor`` names a heading of its page (GitHub's rule: lower case, punctuation
dropped, spaces as hyphens, a repeated heading numbered ``-1``, ``-2``...)."""

from __future__ import annotations

import atexit
import functools
import importlib.util
import re
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [
    ROOT / "README.md",
    *sorted(
        p
        for p in (ROOT / "docs").glob("**/*.md")
        if not any(part.startswith("_") for part in p.relative_to(ROOT / "docs").parts)
    ),
    *sorted((ROOT / "research").glob("**/*.md")),
]
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown text (fenced code skipped)."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match is None:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def links(text: str) -> list[str]:
    """The relative link targets of a Markdown text (outside fenced code)."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            out += [t for t in LINK.findall(line) if not re.match(r"[a-z]+:", t)]
    return out


def test_anchor_rule_matches_github_on_known_headings() -> None:
    text = "# A: b's `c` (d)\n## Two words\n## Two words\n```\n# not a heading\n```\n"
    assert anchors(text) == {"a-bs-c-d", "two-words", "two-words-1"}


def test_the_link_reader_skips_urls_and_code() -> None:
    text = "[a](docs/x.md#y) [b](https://example.org) \n```\n[c](nowhere.md)\n```\n"
    assert links(text) == ["docs/x.md#y"]


@functools.cache
def _generated_dir() -> Path:
    """The pages the docs build generates (docs/envs/, docs/reference/cli.md), written once into a
    temporary folder: a clean clone has none until ``make docs``."""
    out = Path(tempfile.mkdtemp(prefix="spider-docs-"))
    atexit.register(shutil.rmtree, out, True)
    for name in ("envs", "cli"):
        spec = importlib.util.spec_from_file_location(
            f"docs_{name}", ROOT / "docs" / "_scripts" / f"{name}.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.generate(out / "envs" if name == "envs" else out / "reference" / "cli.md")
    return out


def generated(dest: Path) -> Path:
    """``dest``, or where the docs build's generator writes it when it is a generated page that
    is not there."""
    rel = dest.relative_to(ROOT / "docs") if dest.is_relative_to(ROOT / "docs") else None
    if (
        dest.exists()
        or rel is None
        or not (rel.parts[:1] == ("envs",) or rel == Path("reference/cli.md"))
    ):
        return dest
    return _generated_dir() / rel


def test_links_to_generated_pages_are_checked_on_the_generated_text() -> None:
    page = ROOT / "docs" / "guide" / "any.md"
    spider = generated((page.parent / "../envs/Spider-v0.md").resolve())
    assert "action-space" in anchors(spider.read_text(encoding="utf-8"))
    cli = generated((page.parent / "../reference/cli.md").resolve())
    assert "spider-env-evaluate" in anchors(cli.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_leads_to_a_file_and_heading(page: Path) -> None:
    bad = []
    for target in links(page.read_text(encoding="utf-8")):
        path, _, anchor = target.partition("#")
        dest = generated((page.parent / path).resolve() if path else page)
        if not dest.exists():
            bad.append(f"{target}: no file {dest}")
        elif (
            anchor
            and dest.suffix == ".md"
            and anchor not in anchors(dest.read_text(encoding="utf-8"))
        ):
            bad.append(f"{target}: no heading #{anchor} in {dest.name}")
    assert not bad, "\n".join(bad)


def test_the_planners_lab_record_exists_and_the_players_guide_links_it() -> None:
    assert (ROOT / "research" / "planner" / "record.md").exists()
    guide = (ROOT / "docs" / "guide" / "players.md").read_text(encoding="utf-8")
    assert "../../research/planner/record.md" in links(guide)
