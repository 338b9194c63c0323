"""How many torch threads fedbound computes with: chosen from the work of a round's local step,
never more than it can use, at every entry that computes rounds.

A round of fedbound's jobs is often a few dense products of a few MFLOP per local step. Splitting
each operation over two threads gains little on a quiet machine and, on a busy one, makes every
operation wait for the slower thread: a FedAvg round of 0.5 ms took 84-88 ms with torch's default 2
threads next to one busy process on 2 cores, SD-FedAvg 320 ms against 55 ms with one (issue 24;
benchmarks/bench_fedavg_round.py, part 3); the bare ``init``/``step`` loop from Python stalled the
same way, 0.25 to 103 ms per round of 0.25 ms (issue 35; benchmarks/bench_threads.py). What a
thread waits at is an operation, and the operations of a round are those of its local steps: a
FedAvg round of 100 clients of the 64-32-10 MLP (76 MFLOP, 5 steps of 19 operations) took 175-480
ms on 2 threads on a loaded 2-core machine against 18-30 ms on one (issue 35). So a round takes one
thread per :data:`FLOPS_PER_THREAD` of work per local step, at least one and at most the
machine's cores and torch's setting: small rounds run on one thread, large ones on several. The
work is measured, not guessed: the gradient evaluations of the round before
(``CommCounts.gradient_evaluations``) times the flops of one client gradient
(:attr:`fedbound.tasks.Task.gradient_flops`), over its local steps (``State.K``); a first round
(nothing measured yet) runs on one thread. The choice is the same on every machine with the same
number of cores, whatever its load.

Where it applies (issue 35): every ``Algorithm.init`` and ``step`` (:class:`fedbound.algorithms.
base.Algorithm` wraps those of every subclass, a user's too), ``run()``, the batched seeds, exact
analysis (:mod:`fedbound.verify.exact`, :mod:`fedbound.verify.operator`), sweeps and their Ray
workers, ``verify`` and the ``fedbound.testing`` assertions and notebooks through them. Each
restores torch's setting on exit where it changed it.

An explicit choice wins: ``threads=N`` of ``run()`` (``fedbound run --threads N``), and a
``torch.set_num_threads(N)`` made after this module was imported (torch's setting then differs from
:data:`FOUND`, the one fedbound found). Inside an entry that has chosen (``run()``, a sweep's call,
:func:`torch_threads`), the entries it calls keep that choice. A setting made before fedbound's
algorithms were imported reads as torch's own: it caps the threads, which the policy may lower.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import os
from typing import Annotated, Callable

import torch

from fedbound.algorithms import heap
from fedbound.argtypes import Count, NonNegative, Range

#: flops of a local step that one more thread must have to work on (25 MFLOP: 2.5-5 ms on one core)
FLOPS_PER_THREAD = 25e6
#: the most threads one may ask for (torch takes a C int; no machine here has more cores)
MAX_THREADS = 1024
#: a number of torch threads
Threads = Annotated[int, Range(1, MAX_THREADS)]
#: torch's number of threads when fedbound's algorithms were imported: a different setting later
#: is a user's explicit choice
FOUND = torch.get_num_threads()

#: whether an enclosing entry chose the threads (its choice stands for the entries it calls)
_chosen: contextvars.ContextVar[bool] = contextvars.ContextVar("fedbound_threads_chosen", default=False)


@functools.cache
def _machine_cores() -> int:
    """This machine's cores, read once (os.cpu_count reads /sys: 6 us, at every round)."""
    return os.cpu_count() or 1


def threads_for(flops_per_step: NonNegative, cores: Count | None = None) -> int:
    """floor(flops_per_step / FLOPS_PER_THREAD), between 1 and ``cores`` (default: this machine's)."""
    cores = cores or _machine_cores()
    return int(max(1, min(cores, flops_per_step // FLOPS_PER_THREAD)))


def step_flops(gradient_evaluations: NonNegative, steps: NonNegative, gradient_flops: NonNegative) -> float:
    """The work of one local step of a round that evaluated ``gradient_evaluations`` client
    gradients of ``gradient_flops`` each over ``steps`` local steps (at least one)."""
    return gradient_evaluations * gradient_flops / max(int(steps), 1)


def chosen() -> bool:
    """Whether the threads are chosen already: by an enclosing entry, or by a
    ``torch.set_num_threads`` after fedbound's import (torch's setting is not :data:`FOUND`)."""
    return _chosen.get() or torch.get_num_threads() != FOUND


def torch_threads(threads: Threads) -> contextlib.AbstractContextManager[RoundThreads]:
    """torch uses ``threads`` intra-op threads inside the block (an explicit choice: the entries
    called inside keep it), its previous number after it: :func:`round_threads` with ``threads``."""
    return round_threads(threads=threads)


class RoundThreads:
    """The policy over a block that computes rounds (:func:`round_threads`): ``measured(flops)``
    sets the threads for the rounds after one of ``flops`` of work per local step."""

    def __init__(self, active: bool, allowed: int):
        self.active, self.allowed = active, allowed

    def measured(self, flops_per_step: NonNegative) -> None:
        """The rounds from now on have ``flops_per_step`` of work per local step: threads_for it,
        at most the setting the block started with (nothing, where the threads were chosen)."""
        if self.active:
            torch.set_num_threads(min(threads_for(flops_per_step), self.allowed))


class _RoundThreadsBlock:
    """The block of :func:`round_threads`, a context manager without a generator: every ``step``
    of a bare step loop enters one (a generator-based block cost 5-9 us of a 200 us quadratic
    round, measured against this one in one process, alternating)."""

    __slots__ = ("flops_per_step", "threads", "before", "token")

    def __init__(self, flops_per_step: float, threads: int | None):
        self.flops_per_step, self.threads, self.token = flops_per_step, threads, None

    def __enter__(self) -> RoundThreads:
        if self.threads is None and chosen():
            return RoundThreads(False, torch.get_num_threads())
        self.before = torch.get_num_threads()
        self.token = _chosen.set(True)
        policy = RoundThreads(self.threads is None, self.before)
        try:
            if self.threads is not None:
                torch.set_num_threads(int(self.threads))
            else:
                policy.measured(self.flops_per_step)
        except BaseException:
            self.__exit__()
            raise
        return policy

    def __exit__(self, *exc) -> None:
        if self.token is None:
            return
        if torch.get_num_threads() != self.before:
            torch.set_num_threads(self.before)
        _chosen.reset(self.token)


def round_threads(flops_per_step: NonNegative = 0.0,
                  threads: Threads | None = None) -> contextlib.AbstractContextManager[RoundThreads]:
    """The thread policy over a block that computes rounds (``with round_threads(...) as policy``):
    ``threads`` if given (an explicit choice); else, unless the threads are chosen already
    (:func:`chosen`), threads_for ``flops_per_step`` (0: a first round, one thread) at most torch's
    setting, updated by :meth:`RoundThreads.measured`. torch's setting is restored after the block
    where it changed; the entries called inside keep the block's choice."""
    return _RoundThreadsBlock(flops_per_step, threads)


def per_round(work: Callable[..., float]) -> Callable[[Callable], Callable]:
    """Decorator of a method that computes a round (``Algorithm.init``/``step``): it runs under
    :func:`round_threads` of ``work(self, *args, **kwargs)`` flops per local step, unless the
    threads are chosen (then it is called as it is, at the cost of one check); the first such
    call in a process settles glibc's heap thresholds (:func:`fedbound.algorithms.heap.settle`)."""
    def wrap(method: Callable) -> Callable:
        @functools.wraps(method)
        def inner(self, *args, **kwargs):
            heap.settle()
            if chosen():
                return method(self, *args, **kwargs)
            with round_threads(work(self, *args, **kwargs)):
                return method(self, *args, **kwargs)
        inner.__wrapped_per_round__ = True
        return inner
    return wrap


__all__ = ["FLOPS_PER_THREAD", "MAX_THREADS", "Threads", "FOUND", "threads_for", "step_flops",
           "chosen", "torch_threads", "RoundThreads", "round_threads", "per_round"]
