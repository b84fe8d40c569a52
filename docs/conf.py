"""Sphinx configuration of the spider-env documentation site (``make docs``).

Sphinx + furo + MyST (Markdown pages), as Gymnasium builds its site. The pages generated from the
code (one per registered environment id, the CLI reference) are written by the scripts in
``docs/_scripts/`` when the build starts (``builder-inited``), so a plain ``sphinx-build docs
docs/_build/html`` is enough; they are not committed.

The package documented is the one Python imports: ``make docs`` runs in the repository's venv
(an editable install of this checkout); set ``PYTHONPATH`` to a checkout to document that one.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import spider_env

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_scripts"))

project = "spider-env"
author = "spider-env contributors"
copyright = "spider-env contributors"
version = release = spider_env.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinx_copybutton",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
# The data folders of docs/ (stored results, models) are not pages; models/README.md is linked
# from the guide and shown on GitHub, where it is the folder's description.
exclude_patterns = [
    "_build",
    "_scripts",
    "ladder",
    "rl",
    "solver",
    "speed",
    "models",
    "README.md",
    "**/.ipynb_checkpoints",
]

# MyST: GitHub's anchors for headings (so `page.md#a-heading` links work on GitHub and here).
myst_heading_anchors = 6
# Directives with an argument in colon fences (:::{include} path), which Markdown readers and
# tests/test_readme.py do not take for code; no other extension, so a `$` or a `{` in a page's
# text stays text.
myst_enable_extensions = ["colon_fence"]

# The docstrings are reStructuredText with Markdown habits: a `single` backquote is code.
default_role = "code"
nitpicky = True
# Names in signatures that are not documented here (the standard library, NumPy, Gymnasium,
# torch: no intersphinx, the build works offline) are shown as text, not as broken links.
nitpick_ignore_regex = [
    (
        r"py:.*",
        r"(numpy|np|gymnasium|gym|torch|collections|typing|pathlib|enum|abc|dataclasses)"
        r"(\..*)?",
    ),
    (
        r"py:.*",
        r"(numba|ray|stable_baselines3|sb3_contrib|safetensors|PIL|tqdm|argparse|io)(\..*)?",
    ),
    (r"py:.*", r"[A-Za-z_]+"),  # builtins and type aliases (int, Path, NDArray, ObsType...)
    (r"py:.*", r"(spider_env|agents)\..*\._[A-Za-z_].*"),  # private names in annotations
    (r"py:class", r".*\s.*|\d+"),  # napoleon reads a "Returns:" phrase as a type
    # the compiled core, the searches' internals, the heuristics, the observation's parts and
    # training settings' type variables: named in docstrings, not part of the reference
    (
        r"py:.*",
        r"spider_env\.(fast|search|heuristics|observation|agents\.rl\.settings"
        r"|agents\.model_format|agents\.networks)(\..*)?",
    ),
    (r"py:.*", r"operator\..*"),
    (r"py:mod", r"spider_env\.core"),
    # names the docstrings give relative to their own package, or modules left out here (the
    # terminal game, the CLI's player builder, the training internals)
    (r"py:.*", r"(spaces|policy|models|envs|Engine|os)\..*|'.*"),
    (r"py:.*", r"spider_env\.(apps\.play|apps\.evaluation\.players|agents\.rl)(\..*)?"),
    (r"py:func", r"spider_env\.core\.rules\.apply_legal"),
]

autodoc_default_options = {
    "members": True,
    "undoc-members": False,
    "show-inheritance": True,
    "member-order": "bysource",
}
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True
autodoc_inherit_docstrings = False
autodoc_mock_imports = ["ray"]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True

html_theme = "furo"
html_title = f"spider-env {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": True,
}
copybutton_prompt_text = r"\$ "
copybutton_prompt_is_regexp = True

# --- links that leave the site -----------------------------------------------------------------
# The pages' Markdown links are relative, so they work on GitHub; in the site a link to a file of
# the repository that is not a page here (the README, a source file, a stored result) becomes a
# link to that file in the repository (project.urls "Repository" or "Source" in pyproject.toml)
# or, without one, its text. A file the site includes as a page of its own (the research
# record, the changelog) is linked as that page. Links are rewritten in the Markdown text, as it
# is read (source-read) or included (include-read), so MyST then checks every page link and
# #anchor that remains.

#: repository file -> the page that includes it
INCLUDED = {
    "CHANGELOG.md": "changelog",
    "research/README.md": "research/overview",
    "research/planner/README.md": "research/planner",
    "research/planner/record.md": "research/planner-record",
    "research/rl/README.md": "research/rl",
    "research/env/README.md": "research/env",
}


def _repository_url() -> str | None:
    """The repository's URL from pyproject.toml's ``[project.urls]`` (read as text: tomllib is
    Python 3.11+), or None."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = re.search(r"^\[project\.urls\]\n(.*?)(?=^\[|\Z)", text, flags=re.M | re.S)
    urls = (
        dict(re.findall(r'^"?([\w ]+?)"?\s*=\s*"([^"]+)"', table.group(1), re.M)) if table else {}
    )
    for key in ("Repository", "Source", "Source Code", "Code", "Homepage"):
        url = urls.get(key, "")
        if "github.com/" in url or "gitlab" in url:
            return url.rstrip("/").removesuffix(".git")
    return None


REPOSITORY = _repository_url()
LINK = re.compile(r"(!?)\[((?:[^\]\\]|\\.)*)\]\(([^)\s]+)\)")


def rewrite_links(text: str, source: Path, page: Path, pages: set[Path]) -> str:
    """``text`` (the Markdown of ``source``, shown as the page ``page``) with each relative link
    that leaves the site made a link to the repository, and each link to an included file made a
    link to its page; ``pages`` are the site's source files."""

    def fix(match: re.Match[str]) -> str:
        bang, label, target = match.groups()
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            return match.group(0)
        path, hash_, anchor = target.partition("#")
        dest = (source.parent / path).resolve()
        try:
            rel = dest.relative_to(ROOT).as_posix()
        except ValueError:
            return match.group(0)
        if rel in INCLUDED:
            dest = DOCS / f"{INCLUDED[rel]}.md"
        if dest in pages or (bang and dest.is_relative_to(DOCS) and dest.exists()):
            new = os.path.relpath(dest, page.parent) + hash_ + anchor
            return f"{bang}[{label}]({Path(new).as_posix()})"
        if not dest.exists():
            return match.group(0)  # MyST reports it
        if REPOSITORY:
            kind = "tree" if dest.is_dir() else "blob"
            return f"{bang}[{label}]({REPOSITORY}/{kind}/main/{rel}{hash_}{anchor})"
        return label

    parts = re.split(r"(^(?:```|~~~).*?^(?:```|~~~)[ \t]*$)", text, flags=re.M | re.S)
    # odd parts are fenced blocks, left as they are; links may span lines
    return "".join(p if i % 2 else LINK.sub(fix, p) for i, p in enumerate(parts))


def _pages(app: Any) -> set[Path]:
    return {Path(app.env.doc2path(d)).resolve() for d in app.env.found_docs}


def _source_read(app: Any, docname: str, source: list[str]) -> None:
    path = Path(app.env.doc2path(docname)).resolve()
    if path.suffix == ".md":
        source[0] = rewrite_links(source[0], path, path, _pages(app))


def _include_read(app: Any, relative_path: Path, parent_docname: str, content: list[str]) -> None:
    included = (Path(app.srcdir) / relative_path).resolve()
    rel = included.relative_to(ROOT).as_posix() if included.is_relative_to(ROOT) else ""
    if included.suffix == ".md" and rel in INCLUDED:
        # the including page from our table (MyST passes the parent's file stem, not its name)
        page = (DOCS / f"{INCLUDED[rel]}.md").resolve()
        content[0] = rewrite_links(content[0], included, page, _pages(app))


def _generate(app: Any) -> None:
    """Write the generated pages (environments, CLI reference) before the build reads sources."""
    import cli as cli_page
    import envs as env_pages

    env_pages.generate(DOCS / "envs")
    cli_page.generate(DOCS / "reference" / "cli.md")


# --- Markdown docstrings ----------------------------------------------------------------------
# The docstrings are reStructuredText, except the two that are specifications in Gymnasium's
# manner (SpiderEnv, SpiderVectorEnv): Markdown sections (`## Heading`), lists, one table and a
# fenced example. autodoc parses docstrings as reST, so those are turned into reST here.


def _md_table(rows: list[str]) -> list[str]:
    """A Markdown pipe table as a reST list-table; a row whose first cell is empty continues the
    row above it (the docstring's way to wrap a long cell)."""
    cells = [[c.strip() for c in r.strip().strip("|").split("|")] for r in rows]
    header, body = cells[0], [r for r in cells[2:]]
    merged: list[list[str]] = []
    for row in body:
        if merged and not row[0]:
            merged[-1] = [f"{a} {b}".strip() for a, b in zip(merged[-1], row)]
        else:
            merged.append(row)
    out = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *merged]:
        out.append(f"   * - {row[0]}")
        out += [f"     - {c}" for c in row[1:]]
    return [*out, ""]


def markdown_to_rst(lines: list[str]) -> list[str]:
    """The lines of a Markdown docstring as reST (headings as rubrics, fenced code as code
    blocks, pipe tables as list tables; `code` stays `code` through ``default_role``)."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        heading = re.match(r"^#{2,6}\s+(.*)$", line)
        if heading:
            out += ["", f".. rubric:: {heading.group(1)}", ""]
        elif line.startswith("```"):
            lang = line[3:].strip() or "text"
            out += ["", f".. code-block:: {lang}", ""]
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                out.append("   " + lines[i] if lines[i] else "")
                i += 1
            out.append("")
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(lines[i])
                i += 1
            out += ["", *_md_table(rows)]
            continue
        elif (
            line.startswith("- ")
            and out
            and out[-1].strip()
            and not out[-1].startswith(("- ", "  "))
        ):
            out += ["", line]  # reST wants a blank line before a list
        else:
            out.append(line)
        i += 1
    return out


def _docstring(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    if any(re.match(r"^##\s", line) for line in lines):
        lines[:] = markdown_to_rst(lines)


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _generate)
    app.connect("source-read", _source_read)
    app.connect("autodoc-process-docstring", _docstring)
    app.connect("include-read", _include_read)
    return {"parallel_read_safe": True}
