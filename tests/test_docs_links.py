"""The relative links of the README, docs/ and research/ lead somewhere: every linked file exists
and every ``#anchor`` names a heading of its page (GitHub's rule: lower case, punctuation
dropped, spaces as hyphens, a repeated heading numbered ``-1``, ``-2``...)."""

from __future__ import annotations

import re
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


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_leads_to_a_file_and_heading(page: Path) -> None:
    bad = []
    for target in links(page.read_text(encoding="utf-8")):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            bad.append(f"{target}: no file {dest.relative_to(ROOT)}")
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
