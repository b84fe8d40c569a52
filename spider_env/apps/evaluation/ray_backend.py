"""Playing an evaluation on a Ray cluster (``evaluate(..., ray=ADDRESS)``, the ``ray`` extra).

The chunks of deals are those of :mod:`.workers` (:func:`~.workers.make_chunks`, played by
:func:`~.workers.play_chunk`), run as Ray tasks. ``"local"`` starts a private Ray instance on
this machine (at most ``os.cpu_count()`` CPUs, no dashboard) and shuts it down afterwards;
any other address (``"auto"``, ``"host:port"``, ``"ray://host:port"``) joins a running cluster
(``ray.init(address=...)``) and disconnects afterwards. The cluster's nodes need spider-env
installed. Ray is imported inside the functions only, so ``import spider_env`` never loads it.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from spider_env.apps.evaluation.results import DealRecord
from spider_env.apps.evaluation.workers import Chunk, WorkerError, play_chunk

LOCAL = "local"  # the address that starts a private local Ray instance
CONNECT_TIMEOUT = 5.0  # seconds to wait for a cluster's port to answer before ray.init
INSTALL_HINT = "pip install 'spider-env[ray]'"


def require_ray() -> Any:
    """The ``ray`` module; an ``ImportError`` in one sentence if it is not installed."""
    try:
        import ray
    except ImportError:
        raise ImportError(
            f"evaluating on Ray needs the ray package, which is not installed: {INSTALL_HINT}"
        ) from None
    return ray


def check_address(address: object) -> str:
    """``address`` as given, if it is a usable Ray address text (``TypeError`` /
    ``ValueError`` otherwise)."""
    if not isinstance(address, str):
        raise TypeError(
            f"ray must be an address text ('local', 'auto', 'host:port' or 'ray://host:port'), "
            f"got {address!r}"
        )
    if not address.strip() or address != address.strip():
        raise ValueError(
            f"ray must be 'local', 'auto', 'host:port' or 'ray://host:port', got {address!r}"
        )
    return address


@dataclass(frozen=True)
class RaySession:
    """A connection to Ray: what to call it (``"ray local"``) and its CPUs."""

    backend: str
    cpus: int


def _host_port(address: str) -> tuple[str, int] | None:
    """The host and port of ``"host:port"`` / ``"ray://host:port"``, or None (other forms)."""
    text = address.removeprefix("ray://").rstrip("/")
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def _resolve(ray: Any, address: str) -> str:
    """``"auto"`` (or any other form Ray resolves itself) as ``"host:port"`` if Ray can say,
    else ``address``. Raises ``ConnectionError`` if Ray finds no cluster."""
    if _host_port(address) is not None:
        return address
    services = getattr(getattr(ray, "_private", None), "services", None)
    canonical = getattr(services, "canonicalize_bootstrap_address", None)
    if canonical is None:  # a Ray without this (private) helper: let ray.init find it
        return address
    try:
        found = canonical(address)
    except ConnectionError:
        raise ConnectionError(
            f"no running Ray cluster found for ray={address!r} (start one with "
            "`ray start --head`, or give its address HOST:PORT)"
        ) from None
    except Exception:  # only a pre-check: ray.init decides
        return address
    return str(found) if found else address


def _probe(address: str, resolved: str) -> None:
    """A ``ConnectionError`` naming ``address`` if nothing answers at its port (``ray.init``
    would otherwise retry for minutes)."""
    hp = _host_port(resolved)
    if hp is None:
        return
    try:
        with socket.create_connection(hp, timeout=CONNECT_TIMEOUT):
            pass
    except OSError as exc:
        where = address if resolved == address else f"{address} ({resolved})"
        reason = exc.strerror or type(exc).__name__
        raise ConnectionError(f"cannot reach a Ray cluster at {where}: {reason}") from None


def _line(exc: BaseException) -> str:
    """The first line of an exception's message."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextmanager
def ray_session(address: str) -> Iterator[RaySession]:
    """Connect to Ray at ``address`` for the ``with`` block, then shut down what was started
    (``"local"``) or disconnect. If this process is already connected (the caller ran
    ``ray.init``), that connection is used and left open."""
    ray = require_ray()
    if ray.is_initialized():
        yield RaySession(f"ray {address}", _cpus(ray))
        return
    if address == LOCAL:
        kwargs: dict[str, Any] = {
            "address": "local",
            "num_cpus": os.cpu_count() or 1,
            "include_dashboard": False,
            "logging_level": logging.ERROR,
        }
    else:
        resolved = _resolve(ray, address)
        _probe(address, resolved)
        kwargs = {"address": address, "logging_level": logging.WARNING}
    try:
        ray.init(**kwargs)
    except (Exception, SystemExit) as exc:  # Ray's own errors: one line naming the address
        if ray.is_initialized():
            ray.shutdown()
        hint = (
            ""
            if address == LOCAL
            else " (a cluster with token authentication also needs RAY_AUTH_MODE=token and "
            "its token)"
        )
        raise ConnectionError(
            f"cannot start or join Ray at {address!r}: {_line(exc)}{hint}"
        ) from None
    try:
        yield RaySession(f"ray {address}", _cpus(ray))
    finally:
        ray.shutdown()


def _cpus(ray: Any) -> int:
    """The CPUs Ray can give us now (at least 1)."""
    resources = ray.available_resources() or ray.cluster_resources()
    return max(1, int(resources.get("CPU", 1)))


def ray_map(fn: Callable[[Any], Any], items: Sequence[Any], cpus: int) -> Iterator[Any]:
    """``fn(item)`` of each of ``items`` as Ray tasks (at most ``2 * cpus`` submitted at a
    time), yielded as each ends (not in order).

    The exception of a task is raised here as itself; a task that Ray could not run (its
    worker died) is a :class:`~.workers.WorkerError`.

    On an error or an interrupt the tasks still submitted are not cancelled: Ray's
    ``ray.cancel`` races with a task that is finishing and can abort this process (ray 2.60:
    "Check failed ... Tried to complete task that was not pending", seen in this project's
    tests). :func:`ray_session` ends them: its shutdown or disconnect ends the job's tasks; on
    a connection the caller opened, they run to their end (at most ``2 * cpus`` tasks).
    """
    ray = require_ray()
    task = ray.remote(num_cpus=1)(fn)
    todo = list(reversed(items))
    window = max(2, 2 * cpus)
    pending: list[Any] = []
    while todo or pending:
        while todo and len(pending) < window:
            pending.append(task.remote(todo.pop()))
        ready, pending = ray.wait(pending, num_returns=1)
        for ref in ready:
            try:
                result = ray.get(ref)
            except ray.exceptions.RayTaskError as exc:
                cause = getattr(exc, "cause", None)
                if isinstance(cause, Exception):
                    raise cause from None
                raise
            except ray.exceptions.RayError as exc:
                raise WorkerError(f"a Ray task could not finish: {_line(exc)}") from None
            yield result


def play_on_ray(
    chunks: Sequence[Chunk], cpus: int, done: Callable[[int, list[DealRecord]], None]
) -> None:
    """Play ``chunks`` as Ray tasks (:func:`ray_map`); ``done(index, records)`` as each chunk
    ends."""
    for index, recs in ray_map(play_chunk, chunks, cpus):
        done(index, recs)


__all__ = [
    "LOCAL",
    "RaySession",
    "check_address",
    "play_on_ray",
    "ray_map",
    "ray_session",
    "require_ray",
]
