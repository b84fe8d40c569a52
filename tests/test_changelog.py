"""CHANGELOG.md keeps Keep a Changelog's form (https://keepachangelog.com/en/1.1.0/), and the
user-facing pages name nothing of the project's development record (tests/docs_words.py).

The form: ``## [Unreleased]`` first, then one ``## [X.Y.Z] - YYYY-MM-DD`` per release, newest
first, the top one ``spider_env.__version__``; under each only Keep a Changelog's headings
(Added, Changed, Deprecated, Removed, Fixed, Security), each at most once; after the releases
the one section of renames for code written before the first release; and a link reference
for every version at the bottom.
"""

from __future__ import annotations

import datetime
import itertools
import re
from pathlib import Path

import pytest
from docs_words import internal_word_lines, internal_words

import spider_env

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = ROOT / "CHANGELOG.md"
REPOSITORY = "https://github.com/spider-env/spider-env"
#: The headings Keep a Changelog defines under a version.
KINDS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
#: The section after the releases: every rename with its old name.
MIGRATION = "Before 0.1.0: moving code from a development checkout"
VERSION = re.compile(r"\[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})")
#: The user-facing pages besides the changelog: the README and every hand-written page of the
#: site (docs/**/*.md; not docs/_* nor the research record's own files, which the site includes).
PAGES = sorted(
    {
        ROOT / "README.md",
        *(
            p
            for p in (ROOT / "docs").glob("**/*.md")
            if not any(part.startswith("_") for part in p.relative_to(ROOT / "docs").parts)
        ),
    }
)


def sections(text: str) -> list[tuple[str, list[str]]]:
    """The ``##`` headings of a Markdown text, each with the ``###`` headings under it
    (fenced code skipped)."""
    out: list[tuple[str, list[str]]] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            out.append((line[3:].strip(), []))
        elif not fenced and line.startswith("### ") and out:
            out[-1][1].append(line[4:].strip())
    return out


def releases(text: str) -> list[tuple[tuple[int, int, int], datetime.date]]:
    """The released versions and their dates, in the file's order."""
    out = []
    for heading, _ in sections(text):
        match = VERSION.fullmatch(heading)
        if match:
            major, minor, patch, date = match.groups()
            out.append(((int(major), int(minor), int(patch)), datetime.date.fromisoformat(date)))
    return out


def link_references(text: str) -> dict[str, str]:
    """The link reference definitions (``[label]: URL``) of a Markdown text."""
    return dict(re.findall(r"^\[([^\]]+)\]:\s*(\S+)\s*$", text, re.MULTILINE))


@pytest.fixture(scope="module")
def changelog() -> str:
    return CHANGELOG.read_text(encoding="utf-8")


def test_it_is_a_changelog_that_says_its_form(changelog: str) -> None:
    assert changelog.startswith("# Changelog\n")
    assert "https://keepachangelog.com/en/1.1.0/" in changelog


def test_unreleased_comes_first_then_releases_then_the_renames(changelog: str) -> None:
    headings = [heading for heading, _ in sections(changelog)]
    assert headings[0] == "[Unreleased]"
    assert headings[-1] == MIGRATION
    middle = headings[1:-1]
    assert middle, "no released version"
    bad = [h for h in middle if not VERSION.fullmatch(h)]
    assert not bad, f"not '[X.Y.Z] - YYYY-MM-DD': {bad}"


def test_versions_have_iso_dates_and_come_newest_first(changelog: str) -> None:
    found = releases(changelog)  # the dates parse as ISO dates (fromisoformat)
    versions = [v for v, _ in found]
    dates = [d for _, d in found]
    assert versions == sorted(versions, reverse=True)
    assert len(set(versions)) == len(versions), "a version twice"
    assert dates == sorted(dates, reverse=True)


def test_the_top_release_is_the_package_version(changelog: str) -> None:
    top, _ = releases(changelog)[0]
    assert ".".join(map(str, top)) == spider_env.__version__


def test_only_keep_a_changelog_headings_under_a_version(changelog: str) -> None:
    for heading, kinds in sections(changelog):
        if heading == MIGRATION:
            continue
        assert set(kinds) <= set(KINDS), f"{heading}: {sorted(set(kinds) - set(KINDS))}"
        assert len(kinds) == len(set(kinds)), f"{heading}: a heading twice"
        assert kinds == sorted(kinds, key=KINDS.index), f"{heading}: not in the usual order"


def test_every_version_links_to_its_changes(changelog: str) -> None:
    refs = link_references(changelog)
    tags = [f"v{'.'.join(map(str, v))}" for v, _ in releases(changelog)]
    assert refs.get("Unreleased") == f"{REPOSITORY}/compare/{tags[0]}...HEAD"
    for newer, older in itertools.pairwise(tags):
        assert refs.get(newer[1:]) == f"{REPOSITORY}/compare/{older}...{newer}"
    assert refs.get(tags[-1][1:]) == f"{REPOSITORY}/releases/tag/{tags[-1]}"


def test_the_renames_are_tables_of_old_and_new_names(changelog: str) -> None:
    migration = changelog.split(f"## {MIGRATION}", 1)[1]
    rows = [
        line
        for line in migration.splitlines()
        if line.startswith("| ") and not line.startswith("| before 0.1.0 |")
    ]
    assert len(rows) >= 100  # the record of the renames, not a summary of it
    for row in rows:  # an old name on the left, something to use on the right
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert len(cells) == 2 and all(cells), row


def test_the_changelog_names_nothing_of_the_development_record(changelog: str) -> None:
    assert not internal_word_lines(changelog)


def test_the_changelog_quotes_no_p_values(changelog: str) -> None:
    p_values = re.findall(r"\bp[ =<]+[0-9][0-9.e-]*|\bp-values?\b|McNemar p\b", changelog)
    assert not p_values


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_a_user_facing_page_names_nothing_of_the_development_record(page: Path) -> None:
    if not page.exists():
        pytest.skip(f"{page.relative_to(ROOT)} is not written yet")
    assert not internal_word_lines(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "text",
    [
        "round three",
        "Changed in rounds six to eight",
        "the round-four expert's games",
        "round 5",
        "issue 53",
        "issue #20",
        "measured at stop 4",
        "commit `5080052`",
        "on commit 94ee7eb",
        "at `68e5447`",
        "wrapped over a line: round\nseven",
    ],
)
def test_the_checker_finds_internal_words(text: str) -> None:
    assert internal_words(text)


@pytest.mark.parametrize(
    "text",
    [
        "the halving's last round scores the best candidates",
        "scores within float32 rounding",
        "a step after the end is a RuntimeError; stop the game",
        "`DEFAULT_NODES` = `1000000` positions",
        "`evaluate`, `decode`, `facade`",
        "commit your changes",
        "Issues and questions: the tracker",
    ],
)
def test_the_checker_leaves_plain_words_alone(text: str) -> None:
    assert internal_words(text) == []


def test_the_checker_says_where_a_word_is() -> None:
    assert internal_word_lines("a\nb round two\nissue 4 and issue 4\n") == [
        "line 2: round two",
        "line 3: issue 4",
        "line 3: issue 4",
    ]
