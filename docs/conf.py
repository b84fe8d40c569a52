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
import tomllib
from pathlib import Path
from typing import Any

import spider_env

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_scripts"))

project = "spider-env"
author = "spider-env contributors"
copyright = "spider-env contributors"  # noqa: A001 (Sphinx's name)
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
myst_enable_extensions = ["colon_fence", "deflist", "attrs_inline", "dollarmath"]
# Tables in Markdown need no caption; a missing `#anchor` or page is an error (-W).
suppress_warnings: list[str] = []

# The docstrings are reStructuredText with Markdown habits: a `single` backquote is code.
default_role = "code"
nitpicky = True
# Names in signatures that are not documented here (the standard library, NumPy, Gymnasium,
# torch: no intersphinx, the build works offline) are shown as text, not as broken links.
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|gymnasium|gym|torch|collections|typing|pathlib|enum|abc|dataclasses)"
     r"(\..*)?"),
    (r"py:.*", r"(numba|ray|stable_baselines3|sb3_contrib|safetensors|PIL|tqdm|argparse|io)(\..*)?"),
    (r"py:.*", r"[A-Za-z_]+"),  # builtins and type aliases (int, Path, NDArray, ObsType...)
    (r"py:.*", r"(spider_env|agents)\..*\._[A-Za-z_].*"),  # private names in annotations
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
autodoc_class_signature = "separated"
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
}


def _repository_url() -> str | None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    urls = meta.get("project", {}).get("urls", {})
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

    out, fenced = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("```") or line.startswith("~~~"):
            fenced = not fenced
        out.append(line if fenced else LINK.sub(fix, line))
    return "".join(out)


def _pages(app: Any) -> set[Path]:
    return {Path(app.env.doc2path(d)).resolve() for d in app.env.found_docs}


def _source_read(app: Any, docname: str, source: list[str]) -> None:
    path = Path(app.env.doc2path(docname)).resolve()
    if path.suffix == ".md":
        source[0] = rewrite_links(source[0], path, path, _pages(app))


def _include_read(
    app: Any, relative_path: Path, parent_docname: str, content: list[str]
) -> None:
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


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _generate)
    app.connect("source-read", _source_read)
    app.connect("include-read", _include_read)
    return {"parallel_read_safe": True}
