"""How many torch threads a run uses: chosen from the work of a round, never more than it can use.

A round of fedbound's jobs is often a few dense products of a few MFLOP. Splitting those over two
threads gains little on a quiet machine and, on a busy one, makes every operation wait for the
slower thread: a FedAvg round of 0.5 ms took 84-88 ms with torch's default 2 threads next to one
busy process on 2 cores, SD-FedAvg 320 ms against 55 ms with one (issue 24;
benchmarks/bench_fedavg_round.py, part 3). So a run takes one thread per :data:`FLOPS_PER_THREAD`
of work per round, at least one and at most the machine's cores: small rounds run on one thread,
large ones on several. The work of a round is measured, not guessed: the gradient evaluations the
first round counted (``CommCounts.gradient_evaluations``) times the flops of one client gradient
(:attr:`fedbound.tasks.Task.gradient_flops`); the choice is therefore the same on every machine with
the same number of cores, whatever its load. ``run(..., threads=N)`` and ``fedbound run --threads N``
override it.
"""
from __future__ import annotations

import contextlib
import os
from typing import Annotated

import torch

from fedbound.argtypes import Count, NonNegative, Range

#: flops of a round that one more thread must have to work on (25 MFLOP: 2.5-5 ms on one core)
FLOPS_PER_THREAD = 25e6
#: the most threads one may ask for (torch takes a C int; no machine here has more cores)
MAX_THREADS = 1024
#: a number of torch threads
Threads = Annotated[int, Range(1, MAX_THREADS)]


def threads_for(flops_per_round: NonNegative, cores: Count | None = None) -> int:
    """floor(flops_per_round / FLOPS_PER_THREAD), between 1 and ``cores`` (default: this machine's)."""
    cores = cores or os.cpu_count() or 1
    return int(max(1, min(cores, flops_per_round // FLOPS_PER_THREAD)))


@contextlib.contextmanager
def torch_threads(threads: Threads):
    """torch uses ``threads`` intra-op threads inside the block, its previous number after it."""
    before = torch.get_num_threads()
    torch.set_num_threads(int(threads))
    try:
        yield
    finally:
        torch.set_num_threads(before)
