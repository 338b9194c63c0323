"""Running a sweep: cells grouped into batches, computed in-process (embedded) or on Ray, results
committed by the driver only.

    from fedbound.sweep import spec, runner
    summary = runner.run_sweep(spec.load("SPEC.json"), "DIR")             # embedded
    summary = runner.run_sweep(spec.load("SPEC.json"), "DIR", ray=True)   # a local Ray, or
    #         runner.run_sweep(..., ray_address="ray://host:10001")         # an existing cluster

Preparation (:func:`prepare`) stores every cell of the SPEC as pending, in SPEC order, and assigns
batches: the seeds of one configuration whose algorithm batches (:func:`fedbound.sweep.batch.batchable`)
form batches of up to :func:`~fedbound.sweep.batch.seeds_per_batch` cells, every other cell is a batch of its own. Batches are
fixed when cells are stored, so a resumed sweep computes exactly the batches an uninterrupted one
computes. :func:`compute` is a pure function of (SPEC, batch): the same code runs in-process and
in a Ray task (:mod:`fedbound.sweep.executor`, one torch thread each), so both give the same
numbers. The driver commits each batch's results in one transaction (:mod:`fedbound.sweep.store`)
as it arrives; a rerun skips the finished cells. A batch whose Ray worker is lost beyond Ray's
retries stays pending and the run ends with an error saying to rerun.

A rerun against a folder whose stored SPEC differs is refused unless ``extend``: then the task,
network and rounds must be the same, and the cells the new SPEC adds are appended (the stored ones
are kept, finished or not).
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal
from pathlib import Path

from tqdm import tqdm

from fedbound.errors import InputTypeError, OutputError, ValidationError, require
from fedbound.resources import require_run_memory
from fedbound.sweep import spec as spec_mod
from fedbound.sweep.batch import batchable, run_cells, seeds_per_batch
from fedbound.sweep.executor import Executor, current
from fedbound.sweep.store import FINISHED, CellResult, Store, lock_folder, remove

class Problem:
    """The task (noise-free) and networks of a SPEC, built once per process, and its algorithms."""

    def __init__(self, spec: spec_mod.Spec, device: Literal["cpu", "cuda"] = "cpu"):
        self.spec = spec
        self.problem = spec.build_problem(device)
        self.task = self.problem.task
        require_run_memory("sweep cell", spec.rounds, self.task.n, self.task.d)

    def algorithm(self, cell: spec_mod.Cell):
        """The algorithm of ``cell``."""
        return self.problem.algorithm(cell.algorithm, cell.options, seed=cell.seed, sigma=cell.sigma)


@lru_cache(maxsize=4)
def _problem(spec_text: str, device: str = "cpu") -> Problem:
    return Problem(spec_mod.loads(spec_text), device)


def compute(spec_text: str, cells: list[tuple[int, str]],
            device: Literal["cpu", "cuda"] = "cpu") -> list[CellResult]:
    """The results of one batch ``cells`` ((cell id, cell key) pairs) of the SPEC ``spec_text``
    on ``device``; a pure function of its arguments (module doc)."""
    problem = _problem(spec_text, device)
    algs = [problem.algorithm(spec_mod.Cell.from_key(key)) for _, key in cells]
    return [CellResult(i, *outcome) for (i, _), outcome in zip(cells, run_cells(algs, problem.spec.rounds))]


@dataclass
class Summary:
    """What a sweep run did: cells in the store, finished before, computed now, diverged, and
    cells left pending (lost Ray workers)."""

    cells: int
    skipped: int
    computed: int
    diverged: int
    pending: int


def _batches(spec: spec_mod.Spec, problem: Problem, cells: list[spec_mod.Cell], first: int) -> list[int]:
    """The batch of each new cell (module doc), numbered from ``first``."""
    out, open_batch, counter = [], {}, first
    can: dict[str, bool] = {}
    size = seeds_per_batch(problem.task, spec.rounds)
    for cell in cells:
        config = cell.config
        if config not in can:
            can[config] = spec.batch and batchable(problem.algorithm(cell))
        batch = open_batch.get(config)
        if not can[config] or batch is None or batch[1] >= size:
            batch = [counter, 0]
            counter += 1
            if can[config]:
                open_batch[config] = batch
        batch[1] += 1
        out.append(batch[0])
    return out


def prepare(spec: spec_mod.Spec, store: Store, extend: bool = False) -> list[list[tuple[int, str]]]:
    """Store the SPEC's new cells as pending (module doc) and return the unfinished batches, each a
    list of (cell id, cell key)."""
    store.require_current()
    stored = store.meta("spec")
    if stored is not None and stored != spec.canonical:
        require(extend, f"{store.path.parent} holds a sweep of another SPEC; pass --extend to add the "
                        "new SPEC's cells to it, or choose another folder")
        old = spec_mod.loads(stored)
        require(old.problem == spec.problem and old.batch == spec.batch,
                "--extend adds cells to a sweep of the same task, network, rounds and batching; "
                "these differ from the stored SPEC, so choose another folder")
    known = store.keys()
    _check_stored(store)
    if stored == spec.canonical and store.meta("extended") is None:
        stray = set(known) - {c.key for c in spec.cells}
        require(not stray, f"{store.path.parent} holds {len(stray)} cells that its SPEC does not define "
                           "(the store does not match its SPEC): choose another folder")
    configs = store.configs()
    changed = [c.key for c in spec.cells if c.key in configs and configs[c.key] != c.config]
    require(not changed, f"{store.path.parent} stores cell {changed[0] if changed else ''!r} with another "
                         "configuration than the SPEC's (the store does not match its SPEC): choose "
                         "another folder")
    problem = _problem(spec.canonical)
    new = [c for c in spec.cells if c.key not in known]
    if stored is not None and stored != spec.canonical:
        store.mark_extended()
    if new or stored != spec.canonical:
        batches = _batches(spec, problem, new, store.next_batch())
        store.add_cells(spec.canonical, [(c.key, c.config, c.algorithm, c.seed, c.sigma, b)
                                         for c, b in zip(new, batches)])
    pending: dict[int, list] = {}
    for key, (cell_id, status, batch) in store.keys().items():
        if status not in FINISHED:
            pending.setdefault(batch, []).append((cell_id, key))
    return [pending[b] for b in sorted(pending)]


def _check_stored(store: Store) -> None:
    """Every stored cell is one a sweep writes (:meth:`fedbound.sweep.spec.Cell.from_key`), with the
    configuration, algorithm, seed and sigma columns of its key: a store edited or written by
    something else is refused, never resumed."""
    for row in store.cells():
        try:
            cell = spec_mod.Cell.from_key(row["key"])
        except (ValidationError, InputTypeError) as exc:
            raise ValidationError(f"{store.path.parent} holds a cell this version of fedbound does not "
                                  f"write ({exc}): choose another folder") from None
        require((row["config"], row["algorithm"], row["seed"], row["sigma"]) ==
                (cell.config, cell.algorithm, cell.seed, cell.sigma),
                f"{store.path.parent} stores cell {row['key']:.120} with columns that disagree with its key "
                "(the store does not match its SPEC): choose another folder")


def collect(spec: spec_mod.Spec) -> list[tuple[spec_mod.Cell, CellResult]]:
    """Every cell of ``spec`` computed without a store (for notebooks and scripts), on the current
    executor (in-process unless inside :func:`fedbound.sweep.using`), in SPEC order: (cell, result) with ``result.columns`` the per-round columns. The batches are
    those :func:`run_sweep` forms, so the numbers are those a sweep stores."""
    problem = _problem(spec.canonical)
    groups: dict[int, list] = {}
    for i, (cell, b) in enumerate(zip(spec.cells, _batches(spec, problem, list(spec.cells), 0))):
        groups.setdefault(b, []).append((i, cell.key))
    results: list = [None] * len(spec.cells)

    def on_result(batch, batch_results):
        for r in batch_results:
            results[r.cell_id] = r

    lost = current().map(compute, spec.canonical, [groups[b] for b in sorted(groups)], on_result)
    require(not lost, f"{sum(len(b) for b in lost)} cells were lost with their Ray workers; collect again")
    return list(zip(spec.cells, results))


def run_sweep(spec: spec_mod.Spec, folder: str | os.PathLike, *, extend: bool = False, ray: bool = False,
              ray_address: str | None = None, progress: bool = False, overwrite: bool = False,
              device: Literal["cpu", "cuda"] = "cpu") -> Summary:
    """Run the unfinished cells of ``spec`` into the store of ``folder`` (module doc), holding the
    folder's writer lock (a second sweep on ``folder`` is refused); ``overwrite`` starts the store
    afresh; ``device``: where each worker's task lives and its runs compute."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the sweep folder {folder}: {exc.strerror or exc}") from None
    lock = lock_folder(folder)
    try:
        if overwrite:
            remove(folder)
        return _run_locked(spec, folder, extend, ray, ray_address, progress, device)
    finally:
        lock.close()


def _run_locked(spec, folder, extend, ray, ray_address, progress, device) -> Summary:
    store = Store(folder)
    try:
        batches = prepare(spec, store, extend)
        total = len(store.keys())
        todo = sum(len(b) for b in batches)
        executor = Executor(ray=ray, address=ray_address)   # a bad address: refused before the bar
        bar = tqdm(total=todo, desc="sweep cells", disable=not progress, unit="cell")
        try:
            work = compute if device == "cpu" else functools.partial(compute, device=device)
            lost = executor.map(work, spec.canonical, batches, lambda batch, results: store.commit(results),
                                lambda batch: bar.update(len(batch)))
        finally:
            bar.close()
        cells = store.cells()
        diverged = sum(c["status"] == "diverged" for c in cells)
        pending = sum(c["status"] not in FINISHED for c in cells)
        summary = Summary(total, total - todo, todo - sum(len(b) for b in lost), diverged, pending)
    finally:
        store.close()
    require(summary.pending == 0, f"{summary.pending} cells are unfinished (lost Ray workers); "
                                  "rerun the same command to resume")
    return summary


__all__ = ["run_sweep", "collect", "prepare", "compute", "Summary", "Problem"]
