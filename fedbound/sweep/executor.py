"""Where the work of a sweep runs: in this process (embedded, the default) or on Ray.

Every sweep computation -- the cells of a SPEC (:func:`fedbound.sweep.run_sweep`) and the
Monte-Carlo grids of Python functions (:func:`fedbound.sweep.evaluate`, which the notebooks and
``fedbound verify`` use) -- is a list of independent *payloads* and one pure function
``function(common, payload)``. :meth:`Executor.map` computes them and hands each result to the
driver's ``on_result`` as it arrives (the driver alone writes results). Each call runs with one
torch thread on either path, so that the embedded and the Ray path give the same numbers bitwise.

On Ray (``Executor(ray=True)``: a local Ray started on demand, or ``address=`` an existing cluster;
``pip install 'fedbound[ray]'``), ``common`` is put in the object store once and the payloads are
grouped into about :data:`TASKS_PER_CPU` tasks per CPU (one task per small payload spends more on
Ray's per-task overhead than on computing). A task whose worker dies is retried by Ray
(:data:`RAY_RETRIES`); one still lost is reported to the caller (``map`` returns the lost payloads).

The executor of a block of code is chosen with :func:`using` (a context manager, like a thread
pool's), so that code deep in a call chain -- a Monte-Carlo inside a ``fedbound verify`` check --
runs where its caller asked::

    from fedbound import sweep
    with sweep.using(sweep.Executor(ray=True)):
        estimate = verify.monte_carlo(fn, 1000)      # on a local Ray
"""
from __future__ import annotations

import contextlib
import contextvars
import os
from dataclasses import dataclass
from typing import Callable

from fedbound.errors import FedboundError, InputTypeError, ValidationError
from fedbound.registry import PLUGIN_ENV, load_plugin, plugin_specs

#: Ray retries of a task whose worker died
RAY_RETRIES = 3
#: Ray tasks per CPU of the cluster
TASKS_PER_CPU = 4
#: seconds to wait for a Ray address to accept a connection (ray.init itself retries for minutes)
CONNECT_TIMEOUT = 10


def call(function: Callable, common: object, payload: object):
    """``function(common, payload)`` with one torch thread (module doc), the threads of the runs
    inside chosen (:func:`fedbound.algorithms.threads.torch_threads`); torch's setting restored."""
    from fedbound.algorithms.threads import torch_threads

    with torch_threads(1):
        return function(common, payload)


def call_group(function: Callable, common: object, payloads: list, plugins: tuple = ()) -> list:
    """:func:`call` of several payloads (one Ray task), after loading the driver's ``plugins`` (a
    worker is a fresh process: the installed plugins load themselves, those named by ``--plugin``
    or $FEDBOUND_PLUGINS in the driver are named here)."""
    for spec in plugins:
        load_plugin(spec, "a plugin of the sweep's driver")
    return [call(function, common, p) for p in payloads]


def driver_plugins() -> tuple[str, ...]:
    """The plugins this process loaded by name (``--plugin``, $FEDBOUND_PLUGINS), for its workers."""
    env = [s.strip() for s in os.environ.get(PLUGIN_ENV, "").split(",") if s.strip()]
    return tuple(dict.fromkeys([*plugin_specs(), *env]))


@dataclass(frozen=True)
class Executor:
    """Embedded (``ray=False``, the default) or on Ray (a local instance, or the cluster at
    ``address``); see the module doc."""

    ray: bool = False
    address: str | None = None

    def __post_init__(self):
        from fedbound.validate import boolean

        boolean("ray", self.ray)
        if self.address is not None and not (isinstance(self.address, str) and self.address.strip()):
            raise InputTypeError(f"a Ray address must be a non-empty string, got {self.address!r:.60}")

    @property
    def on_ray(self) -> bool:
        return self.ray or self.address is not None

    def map(self, function: Callable, common: object, payloads: list, on_result: Callable,
            progress: Callable[[object], None] | None = None) -> list:
        """Compute ``function(common, p)`` for every payload ``p``; call ``on_result(p, result)``
        in this process as results arrive (in payload order when embedded) and ``progress(p)``
        after each. Returns the payloads whose Ray workers were lost (never any when embedded)."""
        if not self.on_ray:
            for p in payloads:
                on_result(p, call(function, common, p))
                if progress is not None:
                    progress(p)
            return []
        return _on_ray(self.address, function, common, payloads, on_result, progress)


_CURRENT: contextvars.ContextVar[Executor] = contextvars.ContextVar("fedbound_sweep_executor",
                                                                   default=Executor())


def current() -> Executor:
    """The executor chosen by the innermost :func:`using` (embedded outside any)."""
    return _CURRENT.get()


@contextlib.contextmanager
def using(executor: Executor):
    """Run the sweep computations of the ``with`` block on ``executor`` (module doc). A Ray
    executor starts (or connects to) Ray on entry, once for the whole block, so that a bad address
    is refused before anything runs, and shuts down on exit what it started."""
    if not isinstance(executor, Executor):
        raise InputTypeError(f"using() takes an Executor, got {type(executor).__name__}")
    with _ray_session(executor.address) if executor.on_ray else contextlib.nullcontext():
        token = _CURRENT.set(executor)
        try:
            yield executor
        finally:
            _CURRENT.reset(token)


def _reachable(address: str) -> None:
    """A ``host:port`` or ``ray://host:port`` address must accept a TCP connection (other forms,
    such as ``auto``, are Ray's to resolve)."""
    import socket

    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT).close()
    except (OSError, ValueError, OverflowError) as exc:
        raise ValidationError(f"cannot reach Ray at {address!r}: {exc}") from None


@contextlib.contextmanager
def _ray_session(address: str | None):
    """Ray, initialized here unless it runs already (then left running)."""
    try:
        import ray
    except ImportError:
        raise ValidationError("running on Ray needs the optional dependency ray: "
                              "pip install 'fedbound[ray]'") from None
    started = not ray.is_initialized()
    if started:
        if address is not None:
            _reachable(address)
        try:
            ray.init(address=address or "local", include_dashboard=False, log_to_driver=False,
                     configure_logging=False)   # "local": a new instance, never another's
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise ValidationError(f"cannot start or reach Ray{f' at {address}' if address else ''}: "
                                  f"{' '.join(str(exc).split())[:200]}") from None
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


def _on_ray(address, function, common, payloads, on_result, progress) -> list:
    with _ray_session(address) as ray:
        task = ray.remote(max_retries=RAY_RETRIES)(call_group)
        shared = ray.put(common)
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        per_task = max(1, len(payloads) // (TASKS_PER_CPU * cpus))
        groups = [payloads[i:i + per_task] for i in range(0, len(payloads), per_task)]
        plugins = driver_plugins()
        refs = {task.remote(function, shared, group, plugins): group for group in groups}
        lost = []
        while refs:
            done, _ = ray.wait(list(refs), num_returns=1)
            group = refs.pop(done[0])
            try:
                results = ray.get(done[0])
            except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
                    ray.exceptions.ObjectLostError, ray.exceptions.TaskCancelledError):
                lost.extend(group)
                continue
            except ray.exceptions.RayTaskError as exc:
                if isinstance(exc.cause, FedboundError):   # a user error in the worker: one line
                    raise exc.cause from None
                raise
            for p, result in zip(group, results):
                on_result(p, result)
                if progress is not None:
                    progress(p)
        return lost


__all__ = ["Executor", "using", "current", "call", "call_group", "RAY_RETRIES", "TASKS_PER_CPU"]
