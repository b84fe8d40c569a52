"""Words that belong to the project's own development record, not to a page a user reads.

The user-facing pages (README.md, CHANGELOG.md, the documentation site's guides, landing page
and results page) say what the package does and how to use it; they name no development round,
no issue number and no commit. :func:`internal_words` finds such words in a text;
tests/test_changelog.py applies it to those pages. The patterns take any run of white space
between two words, so a phrase wrapped over two lines is found too.
"""

from __future__ import annotations

import re

_NUMBER = r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d+)"

#: What counts as an internal word, each pattern with the reason it is one.
PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # "round three", "rounds six to eight", "the round-four expert"
    (re.compile(rf"\brounds?[\s-]+{_NUMBER}\b", re.IGNORECASE), "a development round"),
    # "issue 53", "issue #53", "issues 12"
    (re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE), "an issue number"),
    # "stop 4"
    (re.compile(r"\bstop\s+\d+", re.IGNORECASE), "a development stop"),
    # "commit 5080052", "commit `94ee7eb`", "commits abc1234"
    (re.compile(r"\bcommits?\s+`?[0-9a-f]{7,40}\b`?", re.IGNORECASE), "a commit"),
    # `94ee7eb`: backticked hex of 7 to 40 characters with a letter a-f and a digit
    (
        re.compile(r"`(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}`"),
        "a commit hash",
    ),
)


def _found(text: str) -> list[tuple[int, str]]:
    """(offset, word) of every internal word of ``text``, in the order they occur."""
    found: list[tuple[int, str]] = []
    taken: list[range] = []
    for pattern, _ in PATTERNS:
        for match in pattern.finditer(text):
            span = range(match.start(), match.end())
            if any(span.start < t.stop and t.start < span.stop for t in taken):
                continue  # already found by an earlier pattern ("commit `abc1234`")
            taken.append(span)
            found.append((match.start(), match.group(0)))
    return sorted(found)


def internal_words(text: str) -> list[str]:
    """Every internal word of ``text``, as it is written there, in the order they occur.

    >>> internal_words("Moved in round three (issue 19, commit `5186b13`).")
    ['round three', 'issue 19', 'commit `5186b13`']
    >>> internal_words("Successive halving: the last round scores the best two; rounding.")
    []
    """
    return [word for _, word in _found(text)]


def internal_word_lines(text: str) -> list[str]:
    """:func:`internal_words` with the line each starts on: ``"line 12: round three"``."""
    return [
        f"line {text.count(chr(10), 0, start) + 1}: {' '.join(word.split())}"
        for start, word in _found(text)
    ]
