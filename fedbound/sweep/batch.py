"""The cells of a sweep computed in batches of seeds where the algorithm batches
(:mod:`fedbound.algorithms.federated.seeds`: the round's own stages for many seeds at once),
one by one otherwise, and one by one again when a batch diverges, to find which seed diverged and
when.
"""
from __future__ import annotations

import time

import torch

from fedbound.algorithms.federated.seeds import (BatchDiverged, batchable, run_seeds,
                                                 seeds_per_batch)
from fedbound.algorithms.run import run
from fedbound.errors import DivergenceError


def run_cells(algs: list, rounds: int) -> list[tuple]:
    """``(status, columns, error, wall_s)`` of ``run(alg, rounds)`` for each of ``algs``: in one
    batch (:func:`~fedbound.algorithms.federated.seeds.run_seeds`) when there are several and
    their configuration batches (the caller groups only seeds of one configuration, so the first
    one is probed), else, or when the batch diverges, one by one; status "done" with the per-round
    columns (:meth:`fedbound.algorithms.run.Trajectory.columns`), or "diverged" with the message
    (no columns). ``wall_s`` is each run's share of the batch's wall time."""
    if len(algs) > 1 and batchable(algs[0]):
        start = time.perf_counter()
        try:
            with algs[0].task.computing():   # as run() computes on the task's device
                cols = run_seeds(algs, rounds)
            wall = (time.perf_counter() - start) / len(algs)
            return [("done", c, None, wall) for c in cols]
        except BatchDiverged:
            pass   # run the seeds one by one: which diverged, and at which round
    out = []
    for alg in algs:
        start = time.perf_counter()
        try:
            out.append(("done", run(alg, rounds).columns(), None, time.perf_counter() - start))
        except DivergenceError as exc:
            out.append(("diverged", None, str(exc), time.perf_counter() - start))
    return out


__all__ = ["batchable", "seeds_per_batch", "run_seeds", "run_cells", "BatchDiverged"]
