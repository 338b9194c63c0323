"""glibc's heap thresholds while rounds are computed: a round's arrays from a heap kept between
rounds, not from fresh pages at every round.

A round allocates and frees the same arrays every time: its clients' models and layers, their
products and gradients (a round of 100 clients of digits' 64-32-10 MLP: arrays of 0.1-1 MB, a few
MB in all; of a 784-input MLP, ten times that). glibc's malloc serves an array above its mmap
threshold with a fresh mapping and gives the top of its heap back to the system once more than its
trim threshold lies free there; its heuristic starts them at 128 KB and 256 KB and raises them, as
arrays are freed, to at most 32 MB and 64 MB. Until it has, or where a round's arrays do not fit
what it chose, every round touches its arrays' pages anew: one page fault per 4 KB. Measured on the
jobs of benchmarks/neural_race.py, one process per measurement: a round of 100 clients (digits,
minibatch) took 1.74 ms in most processes and 3.5-4.3 ms in one of three to six, the same code in
each; with the thresholds at glibc's ceilings, 1.72-1.79 ms in every process; a round of 100
clients of a 784-input MLP, 22.9 ms -> 15.7 ms.

So :func:`settle`, at the first round fedbound computes (every ``Algorithm.init`` and ``step``:
:func:`fedbound.algorithms.threads.per_round`), sets the two thresholds (``mallopt``'s
M_MMAP_THRESHOLD and M_TRIM_THRESHOLD) to those ceilings, :data:`MMAP_THRESHOLD` and
:data:`TRIM_THRESHOLD`: where glibc's own heuristic ends, from the start. Memory: a freed array
under 32 MB stays in the heap for the next round and at most 64 MB stay free at its top (a fresh
``fedbound run`` of 20 rounds of the MLP at 10^3 and 10^4 clients: RSS 32 and 9 MB above glibc's
own heuristic's, peak 364 MB against 355; benchmarks/neural_race.py measures it). A user's
setting wins: nothing is set where the environment sets glibc's malloc (``MALLOC_*`` variables,
``GLIBC_TUNABLES``), nor where the C library is not glibc (no ``mallopt``).
"""
from __future__ import annotations

import ctypes
import functools
import os

#: glibc's mallopt parameters (malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: the ceilings of glibc's own heuristic on 64-bit machines: 4 MB * sizeof(long), twice that
MMAP_THRESHOLD, TRIM_THRESHOLD = 32 * 2**20, 64 * 2**20


def _user_set() -> bool:
    """Whether the environment sets glibc's malloc: a ``MALLOC_...`` variable or GLIBC_TUNABLES."""
    return any(name == "GLIBC_TUNABLES" or name.startswith("MALLOC_") for name in os.environ)


def _mallopt():
    """``mallopt`` among the running process's symbols (glibc's, where it is the C library), or
    None (no such symbol, or no way to look: ``ctypes.util.find_library`` would run ldconfig)."""
    try:
        return ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return None


@functools.cache
def settle() -> bool:
    """Set glibc's mmap and trim thresholds to :data:`MMAP_THRESHOLD` and :data:`TRIM_THRESHOLD`
    (module doc), once per process; whether they were set (not where the user set malloc, or the C
    library is not glibc)."""
    if _user_set():
        return False
    mallopt = _mallopt()
    if mallopt is None:
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


__all__ = ["M_TRIM_THRESHOLD", "M_MMAP_THRESHOLD", "MMAP_THRESHOLD", "TRIM_THRESHOLD", "settle"]
