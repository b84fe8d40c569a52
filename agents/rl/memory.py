"""The trainer's memory: glibc's malloc asked to keep what torch frees, for the next update;
the set-up's objects kept out of the garbage collector's full collections.

Each minibatch of a PPO update makes tensors of one row per legal action (megabytes each) and
frees them. glibc's malloc serves a block that large with a fresh ``mmap`` and returns it to the
kernel when freed (and trims the top of its heap past 128 KB), so the next minibatch's tensors
are new pages again, each a page fault when first written: about 10,000 faults per update of
8,192 decisions here. :func:`keep_freed_memory` raises both thresholds for the duration of a
training run (``mallopt``: large blocks come from the heap, and the heap keeps up to 1 GiB of
its freed top). Afterwards it releases what the heap kept (``malloc_trim``) and leaves the
thresholds where glibc's own adaptive rule raises them at most as large blocks are freed:
blocks up to 32 MiB from the heap, the heap trimmed past 64 MiB free. glibc's starting values,
128 KiB each, are not put back: ``mallopt`` would fix them there for good, without the adaptive
rule, and every large block after training (an RLlib run's in the same process, say) would be
mapped anew; measured, that made RLlib's learner about half again as slow. The training guide's
speed section has the figures.

glibc maps a block past its largest mmap threshold (32 MiB) on its own whatever the threshold:
RLlib's learner batches the observations of ``obs_mode="rows"`` into blocks larger than that
and copies them to shuffle each epoch, and each copy was new pages. With ``every_size=True``
no block is mapped on its own (``M_MMAP_MAX`` 0, all from the heap) while the block runs, and
such blocks are reused too: RLlib's trainer and its env runners run so.

Python's own collector is the other cost of a long run: a full collection walks every object
the process holds, Ray's, RLlib's and torch's included, and RLlib's trainer makes enough
containers per update (episodes, their infos, metrics) to set one off now and then.
:func:`setup_frozen` moves the objects alive after the set-up to the collector's permanent
generation (``gc.freeze``) for the duration of a run, so that full collections walk only what
the run made since (the training guide's speed section has the figures).

Nothing is changed where the C library is not glibc, or where the user has tuned malloc through
the environment (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_MMAP_MAX_``, ``MALLOC_TRIM_THRESHOLD_``,
``MALLOC_TOP_PAD_``, ``GLIBC_TUNABLES``): then their settings stand.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: ``mallopt``'s parameters (``<malloc.h>``).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_MMAP_MAX = -1, -3, -4
#: glibc's own ``M_MMAP_MAX``: the most blocks mapped on their own at once.
DEFAULT_MMAP_MAX = 65536
#: While training: the largest mmap threshold glibc accepts on 64-bit systems (32 MiB, also
#: where its adaptive rule stops raising it), and a trim threshold of 1 GiB.
KEEP_MMAP_THRESHOLD = 32 * 1024 * 1024
KEEP_TRIM_THRESHOLD = 1024 * 1024 * 1024
#: After training: twice the mmap threshold, as glibc's adaptive rule sets it.
AFTER_TRIM_THRESHOLD = 2 * KEEP_MMAP_THRESHOLD
#: Environment variables by which a user tunes glibc's malloc: present, nothing is changed.
USER_SETTINGS = (
    "MALLOC_MMAP_THRESHOLD_",
    "MALLOC_MMAP_MAX_",
    "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_TOP_PAD_",
    "GLIBC_TUNABLES",
)


def _glibc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # noqa: B018 (glibc only: AttributeError elsewhere)
        return libc
    except (OSError, AttributeError):
        return None


@contextmanager
def keep_freed_memory(every_size: bool = False) -> Iterator[str]:
    """Within the block, glibc's malloc keeps the memory freed (see the module); yields one
    line for the trainer's output saying what was done. ``every_size``: blocks past 32 MiB
    too (none mapped on its own)."""
    libc = _glibc()
    tuned = [name for name in USER_SETTINGS if name in os.environ]
    if libc is None:
        yield "as it was (not glibc)"
        return
    if tuned:
        yield f"as it was ({tuned[0]} is set)"
        return
    kept = libc.mallopt(M_MMAP_THRESHOLD, KEEP_MMAP_THRESHOLD) and libc.mallopt(
        M_TRIM_THRESHOLD, KEEP_TRIM_THRESHOLD
    )
    if kept and every_size:
        kept = libc.mallopt(M_MMAP_MAX, 0)
    try:
        sizes = ", blocks of every size" if every_size else ""
        yield f"freed memory kept for reuse{sizes} (glibc mallopt)" if kept else "mallopt refused"
    finally:
        _after(libc, every_size)


def _after(libc: ctypes.CDLL, every_size: bool = False) -> None:
    """The thresholds at the most glibc's adaptive rule raises them to (and blocks mapped on
    their own again), the kept memory released."""
    if every_size:
        libc.mallopt(M_MMAP_MAX, DEFAULT_MMAP_MAX)
    libc.mallopt(M_MMAP_THRESHOLD, KEEP_MMAP_THRESHOLD)
    libc.mallopt(M_TRIM_THRESHOLD, AFTER_TRIM_THRESHOLD)
    libc.malloc_trim(0)


@contextmanager
def setup_frozen() -> Iterator[str]:
    """Within the block, the objects alive at its start are out of the garbage collector's
    reach (``gc.freeze``; unfrozen at the end); yields one line for the trainer's output saying
    what was done. Objects the process had frozen already are left as they are, and nothing is
    frozen (``gc.unfreeze`` would release theirs too); so is a collector that is off."""
    if not gc.isenabled():
        yield "as it was (the garbage collector is off)"
        return
    if gc.get_freeze_count():
        yield f"as it was ({gc.get_freeze_count():,} objects frozen already)"
        return
    gc.collect()  # the set-up's garbage is freed, not kept
    gc.freeze()
    try:
        yield f"the set-up's {gc.get_freeze_count():,} objects frozen (gc.freeze)"
    finally:
        gc.unfreeze()


__all__ = ["keep_freed_memory", "setup_frozen"]
