"""The compiled core (numba): the rules over fixed-shape arrays, for speed and for batches.

:mod:`spider_env.core` is the specification; this package mirrors it over the state vectors of
:mod:`spider_env.fast.layout` and is held to it by differential tests. It needs numba (a
dependency of the package); without numba everything still works on the pure-Python engine, and
the first env that would have used the compiled core says so in a one-line warning.

One module per concern (the compiled ones import numba, the others do not):

* :mod:`~spider_env.fast.layout`: the state vector and the variant's parameter vector, exact
  conversions to and from :class:`~spider_env.core.state.State` (NumPy only);
* :mod:`~spider_env.fast.rules`: legal ids, apply, score, the position hash (compiled);
* :mod:`~spider_env.fast.access`: reads of a position and of its variant, packed positions, for
  search code (compiled);
* :mod:`~spider_env.fast.deals`: the deal generator (compiled);
* :mod:`~spider_env.fast.observe`: the table and feature observations (compiled);
* :mod:`~spider_env.fast.scorer`: the position scorer of the heuristics (compiled);
* :mod:`~spider_env.fast.action_features`: the per-action features, ``obs_mode="actions"``
  (compiled);
* :mod:`~spider_env.fast.rewards`: the built-in rewards (compiled);
* :mod:`~spider_env.fast.step`: whole transitions of one game or of ``N`` (compiled), over the
  named buffers of :mod:`~spider_env.fast.buffers` (NumPy only);
* :mod:`~spider_env.fast.dense`: a dense layer summed in a fixed order per row, for the model
  player (compiled; :func:`dense_kernel`);
* :mod:`~spider_env.fast.row_pool`: the action-set network's mean and max pools over each
  decision's rows, for training (compiled; :func:`row_pool_kernels`);
* :mod:`~spider_env.fast.row_policy`: the action-set network's rollout pass (rows scored, the
  value, a row drawn), for training (compiled; :func:`row_policy_kernels`);
* :mod:`~spider_env.fast.game`: the one interface for search code (:class:`FastGame` from
  Python, the compiled functions a search calls from numba); NumPy only until one of those is
  used.

:func:`load_kernel` loads the compiled modules (or raises ``ImportError``) and returns their
functions as one namespace.
"""

from __future__ import annotations

import importlib
import importlib.util
import warnings
from functools import cache
from types import SimpleNamespace
from typing import Any

from spider_env.core.variants import Variant
from spider_env.fast.game import FastGame
from spider_env.fast.layout import (
    CompiledCoreRefused,
    check_supported,
    from_array,
    params,
    to_array,
)

_NUMBA = importlib.util.find_spec("numba") is not None
_kernel: Any = None
_import_error: str | None = None
_warned = False


class SlowPathWarning(UserWarning):
    """The compiled core is unavailable (numba missing or failing): the pure engine is used."""


def load_kernel() -> Any:
    """The compiled functions of :mod:`~spider_env.fast.rules`, :mod:`~spider_env.fast.access`,
    :mod:`~spider_env.fast.deals`, :mod:`~spider_env.fast.observe`,
    :mod:`~spider_env.fast.rewards`, :mod:`~spider_env.fast.step`,
    :mod:`~spider_env.fast.scorer` and :mod:`~spider_env.fast.action_features` as one namespace
    (``k.legal_ids``, ``k.step_batch``...);
    numba compiles them, or loads them from its cache, on first use. ``ImportError`` if numba
    is unavailable."""
    global _kernel, _import_error
    if _kernel is None:
        if _import_error is not None:
            raise ImportError(_import_error)
        try:
            from spider_env.fast import (
                access,
                action_features,
                deals,
                observe,
                rewards,
                rules,
                scorer,
                step,
            )
        except Exception as exc:  # numba missing, or an llvmlite/numba install that fails
            _import_error = f"the compiled core needs numba ({type(exc).__name__}: {exc})"
            raise ImportError(_import_error) from None
        functions: dict[str, Any] = {}
        for module in (rules, access, deals, observe, rewards, step, scorer, action_features):
            functions.update(
                (name, obj)
                for name, obj in vars(module).items()
                if not name.startswith("_") and getattr(obj, "py_func", None) is not None
            )
        _kernel = SimpleNamespace(**functions)
    return _kernel


def _compiled_module(name: str, what: str) -> Any:
    """The compiled module ``spider_env.fast.<name>`` (``ImportError`` naming ``what`` if numba
    is missing or fails to load)."""
    if not _NUMBA:
        raise ImportError(f"the compiled {what} needs numba (not installed)")
    try:
        return importlib.import_module(f"spider_env.fast.{name}")
    except Exception as exc:  # an llvmlite/numba install that fails
        why = f"{type(exc).__name__}: {exc}"
        raise ImportError(f"the compiled {what} needs numba ({why})") from None


def dense_kernel() -> Any:
    """The compiled dense layer :func:`spider_env.fast.dense.dense` (``ImportError`` if numba
    is unavailable): the model player's layers, the same bits as
    :func:`spider_env.agents.networks.dense_sum`."""
    return _compiled_module("dense", "dense layer").dense


@cache
def row_pool_kernels() -> Any:
    """The compiled pools of the action-set network (:mod:`spider_env.fast.row_pool`;
    ``ImportError`` if numba is unavailable): what training's critic pools its rows with, the
    same bits as torch's ``index_add`` and max by row."""
    return _compiled_module("row_pool", "row pools")


@cache
def row_policy_kernels() -> Any:
    """The compiled rollout pass of the action-set network (:mod:`spider_env.fast.row_policy`;
    ``ImportError`` if numba is unavailable): what the batched PPO's rollout chooses with."""
    return _compiled_module("row_policy", "rollout pass")


def available() -> bool:
    """Whether the compiled core can be used (numba imports and the kernel loads)."""
    if not _NUMBA:
        return False
    try:
        load_kernel()
    except ImportError:
        return False
    return True


def warn_unavailable() -> None:
    """Say once, in one line, that the pure engine is used and how to get the fast path."""
    global _warned
    if _warned:
        return
    _warned = True
    why = "numba is not installed" if not _NUMBA else (_import_error or "numba failed to load")
    warnings.warn_explicit(
        f"spider_env: {why}; using the pure-Python engine (about 5x slower); "
        "`pip install numba` for the compiled core",
        SlowPathWarning,
        filename="spider_env",
        lineno=0,
    )


def refusal(variant: Variant) -> str | None:
    """Why the compiled core cannot play ``variant`` (``None`` if it can)."""
    if not available():
        return "numba is not available"
    try:
        check_supported(variant)
    except CompiledCoreRefused as exc:
        return str(exc)
    return None


__all__ = [
    "CompiledCoreRefused",
    "FastGame",
    "SlowPathWarning",
    "available",
    "dense_kernel",
    "from_array",
    "load_kernel",
    "params",
    "refusal",
    "row_policy_kernels",
    "row_pool_kernels",
    "to_array",
    "warn_unavailable",
]
