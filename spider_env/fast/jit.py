"""The numba decorators of the compiled code, and the guard of its on-disk cache.

``jit``: ``njit(cache=True, nogil=True, boundscheck=False)``. ``jit_inline`` also inlines the
function into its callers (numba's IR inlining): the per-game functions of the batched step take
row views of the batch, and a view passed to a real call is reference-counted (measured: about
90 ns per game and step), so they are inlined and the views never cross a call.

numba invalidates a cached function only when the file that defines it changes, but the compiled
modules inline each other's functions (:mod:`~spider_env.fast.step` inlines
:mod:`~spider_env.fast.rules`; the solver inlines it and :mod:`~spider_env.fast.access`).
:func:`refresh_cache`, called at the end of every compiled module, drops that module's cache
files when any compiled source changed since they were written, so an edit of ``rules.py``
recompiles everything that inlined it.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import Any

from numba import njit
from numba.core.registry import CPUDispatcher

jit = njit(cache=True, nogil=True, boundscheck=False)
jit_inline = njit(cache=True, nogil=True, boundscheck=False, inline="always")

_PACKAGE = Path(__file__).resolve().parent.parent  # spider_env/


@cache
def sources_digest() -> str:
    """A digest of every source the compiled functions are built from: ``fast/``, ``search/``
    and the two core modules they compile (``core/actions.py``, ``core/cards.py``)."""
    files = [
        *sorted((_PACKAGE / "fast").glob("*.py")),
        *sorted((_PACKAGE / "search").glob("*.py")),
        _PACKAGE / "core" / "actions.py",
        _PACKAGE / "core" / "cards.py",
    ]
    h = hashlib.sha256()
    for path in files:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:20]


def refresh_cache(namespace: dict[str, Any]) -> None:
    """Drop the numba cache files of the module whose globals are ``namespace`` if they were
    written from other sources than today's (see the module docstring)."""
    name = namespace["__name__"]
    dispatchers = [
        obj
        for obj in namespace.values()
        if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == name
    ]
    if not dispatchers:
        return
    where = dispatchers[0].stats.cache_path  # where numba keeps this module's cache
    if where is None:
        return
    folder = Path(where)
    stem = Path(namespace["__file__"]).stem
    stamp = folder / f"{stem}.sources"
    digest = sources_digest()
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass
    try:
        for old in [*folder.glob(f"{stem}.*.nbi"), *folder.glob(f"{stem}.*.nbc")]:
            old.unlink(missing_ok=True)
        folder.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)
    except OSError:  # a read-only cache: numba then compiles in memory or uses its own fallback
        pass
