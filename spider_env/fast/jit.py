"""The numba decorators of the compiled code, and the guard of its on-disk cache.

``jit``: ``njit(cache=True, nogil=True, boundscheck=False)``. ``jit_inline`` also inlines the
function into its callers (numba's IR inlining): the per-game functions of the batched step take
row views of the batch, and a view passed to a real call is reference-counted, so they are
inlined and the views never cross a call.

Numba counts references to every array, view and slice it makes, with an atomic add on the
owner's counter each time; a batched step that takes a row view of each buffer for each game
spent a large share of its time on them (the env's speed record, ``research/env``, has the
figures). The kernels called from Python therefore take the arrays they are given through
:func:`borrowed`: the same arrays without their owner, so that no view taken of them is counted.

numba invalidates a cached function only when the file that defines it changes, but the compiled
modules inline each other's functions (:mod:`~spider_env.fast.step` inlines
:mod:`~spider_env.fast.rules`; the solver inlines it and :mod:`~spider_env.fast.access`).
:func:`refresh_cache`, called at the end of every compiled module, drops that module's cache
files when any compiled source changed since they were written, so an edit of ``rules.py``
recompiles everything that inlined it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, typeof, types
from numba.core import cgutils
from numba.core.registry import CPUDispatcher
from numba.extending import intrinsic

jit = njit(cache=True, nogil=True, boundscheck=False)
jit_inline = njit(cache=True, nogil=True, boundscheck=False, inline="always")

_PACKAGE = Path(__file__).resolve().parent.parent  # spider_env/


@intrinsic
def _prefetch(typingctx: Any, arr: Any, i: Any, j: Any) -> Any:
    """``prefetch(arr, i, j)`` in compiled code: ask the CPU to bring the cache line of
    ``arr[i, j]`` (a 2-D array) closer, for reading; no effect on any result, and no fault for
    any index. LLVM's ``llvm.prefetch`` under its unversioned name, which every LLVM since 10
    upgrades to its own (the name changed with opaque pointers)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 2):
        return None
    if not (isinstance(i, types.Integer) and isinstance(j, types.Integer)):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        aty, ity, jty = signature.args
        ary = context.make_array(aty)(context, builder, args[0])
        index = [
            context.cast(builder, args[1], ity, types.intp),
            context.cast(builder, args[2], jty, types.intp),
        ]
        ptr = cgutils.get_item_pointer(context, builder, aty, ary, index, wraparound=False)
        i8p = builder.bitcast(ptr, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch")
        # read (0), keep in every cache level (3), data (1)
        builder.call(fn, [i8p, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(arr, i, j), codegen


#: :func:`_prefetch` as compiled code calls it (the first argument is numba's).
prefetch: Callable[[np.ndarray, int, int], None] = _prefetch  # type: ignore[assignment]


@intrinsic
def _trailing_zeros(typingctx: Any, x: Any) -> Any:
    """``trailing_zeros(x)`` in compiled code: the index of the lowest set bit of the int64
    ``x`` (``x`` must not be 0), as one instruction (LLVM's ``cttz``): what a loop over a bit
    mask's set bits takes, lowest first, without a branch per bit."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        value = context.cast(builder, args[0], signature.args[0], types.int64)
        return builder.cttz(value, ir.Constant(ir.IntType(1), 1))  # 1: undefined for 0

    return types.int64(x), codegen


#: :func:`_trailing_zeros` as compiled code calls it.
trailing_zeros: Callable[[int], int] = _trailing_zeros  # type: ignore[assignment]


def _borrow(context: Any, builder: Any, ty: Any, value: Any) -> Any:
    """The value of type ``ty`` with every array in it (itself, or a tuple's items, nested)
    rebuilt without its reference to the memory's owner; any other value gets a reference of
    its own, as a new value must."""
    if isinstance(ty, types.Array):
        src = context.make_array(ty)(context, builder, value)
        out = context.make_array(ty)(context, builder)
        context.populate_array(
            out,
            data=src.data,
            shape=src.shape,
            strides=src.strides,
            itemsize=src.itemsize,
            meminfo=None,
        )
        return out._getvalue()
    if isinstance(ty, types.BaseTuple):
        items = cgutils.unpack_tuple(builder, value, len(ty))
        kinds: Any = ty  # numba's tuple type: an iterable of the items' types
        parts = [_borrow(context, builder, t, v) for t, v in zip(kinds, items, strict=True)]
        return context.make_tuple(builder, ty, parts)
    context.nrt.incref(builder, ty, value)
    return value


@intrinsic
def _borrowed(typingctx: Any, value: Any) -> Any:
    """``borrowed(x)`` in compiled code: the array ``x`` (or every array of the tuple ``x``,
    nested tuples included) with the same data, shape and strides but without its reference to
    the memory's owner, so that numba counts no references to it, nor to the views and slices
    taken of it. Each count is an atomic add on the owner's counter: a kernel that takes a row
    view of each game, or passes one to a function, paid a pair of them per view and call.
    Only for arrays the caller keeps alive while the borrowed ones and their views are used (a
    compiled function's own arguments, within that call); never to return or to store."""
    if not isinstance(value, (types.Array, types.BaseTuple)):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return _borrow(context, builder, signature.args[0], args[0])

    return value(value), codegen


#: :func:`_borrowed` as compiled code calls it.
borrowed: Callable[[Any], Any] = _borrowed  # type: ignore[assignment]


def exact_call(dispatcher: Any, *args: Any) -> Callable[..., Any]:
    """``dispatcher``'s compiled function for the numba types of ``args`` (loaded from numba's
    cache, or compiled, now), which a call enters without numba's dispatch on the types of its
    arguments. It converts each argument to the type it was bound for without checking it: only
    for callers whose arguments keep exactly these types (the same arrays, or arrays of the same
    dtype, dimensions, layout and writability; ints as ints)."""
    signature = tuple(typeof(a) for a in args)
    compiled: Callable[..., Any] = dispatcher.compile(signature)
    return compiled


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
