r"""Monte-Carlo grids from Python: a function, or an algorithm's runs, over a grid of
configurations times seeds, computed on the sweep's executor and gathered per configuration.

:func:`evaluate` calls ``fn(seed, **configuration)`` for every configuration of ``grid``
(:mod:`fedbound.sweep.grid`: lists crossed, zip groups paired) and every seed; :func:`runs` builds
``make(seed, **configuration)`` (an algorithm) and records its per-round metrics and communication
(:meth:`fedbound.algorithms.run.Trajectory.columns`), running the seeds of one configuration together when the
algorithm batches (:mod:`fedbound.sweep.batch`, bitwise equal to one run per seed). Both run where
:func:`fedbound.sweep.using` says (embedded by default, or on Ray) and return an
:class:`Measurements`: the outputs per configuration and seed, stacked over seeds, and their means
with Student-t intervals (:func:`fedbound.verify.montecarlo.mean_ci`),

.. math:: \hat m \pm t_{R-1,(1+c)/2}\, s/\sqrt R \quad\text{over the } R \text{ seeds}.

>>> ev = evaluate(lambda seed, a, b: a * b + seed, grid={"a": [1.0, 2.0], "b": 3.0}, seeds=3)
>>> ev.configurations
[{'a': 1.0, 'b': 3.0}, {'a': 2.0, 'b': 3.0}]
>>> ev.stack(a=2.0, b=3.0)
array([6., 7., 8.])
>>> float(ev.estimate(a=1.0, b=3.0).mean)
4.0

The notebooks' Monte-Carlo grids and ``fedbound verify``'s Monte-Carlo checks run through
:func:`evaluate` (``fedbound verify --ray`` puts them on Ray); the SPEC-driven ``fedbound sweep``
runs the same batching and executor with a results store.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Sequence

import numpy as np
from tqdm import tqdm

from fedbound.display import Html, box, brief, plot, shown, table
from fedbound.stats import Estimates, mean_ci
from fedbound.sweep.report import NONNEGATIVE_METRICS
from fedbound import validate
from fedbound.deprecation import renamed_attributes
from fedbound.errors import InputTypeError, ValidationError, require
from fedbound.sweep import grid as grid_mod
from fedbound.sweep.executor import current


def _key(configuration: dict) -> str:
    return repr(sorted(configuration.items()))


def _stack(name: str, values: list):
    """Outputs of one configuration stacked over seeds: an array (seeds, ...), or a dict or tuple
    of them when the outputs are dicts or tuples."""
    first = values[0]
    if isinstance(first, dict):
        require(all(isinstance(v, dict) and v.keys() == first.keys() for v in values),
                f"{name}: the outputs must be dicts with the same keys for every seed")
        return {k: _stack(f"{name}[{k!r}]", [v[k] for v in values]) for k in first}
    if isinstance(first, tuple):
        require(all(isinstance(v, tuple) and len(v) == len(first) for v in values),
                f"{name}: the outputs must be tuples of one length for every seed")
        return tuple(_stack(f"{name}[{i}]", [v[i] for v in values]) for i in range(len(first)))
    arrays = [np.asarray(v.numpy() if hasattr(v, "numpy") else v) for v in values]
    shapes = {a.shape for a in arrays}
    require(len(shapes) == 1, f"{name}: the outputs must have one shape for every seed, got "
                              f"{sorted(shapes)}")
    return np.stack(arrays)


@dataclass
class Measurements:
    """The outputs of a Monte-Carlo grid (module doc).

    ``configurations``: the grid's configurations in order; ``seeds``: the seeds;
    ``outputs[c][s]``: the output for configuration ``c`` and seed ``seeds[s]`` (None where the run
    diverged: ``failures[(c, s)]`` holds the message). Read one configuration with
    :meth:`values` (the outputs as returned, e.g. runs of different lengths), :meth:`stack`
    (stacked over seeds) or :meth:`estimate` (mean and interval); :meth:`items` reads them all."""

    configurations: list[dict]
    seeds: list[int]
    outputs: list[list]
    failures: dict = field(default_factory=dict)

    @cached_property
    def _positions(self) -> dict[str, int]:
        return {_key(c): i for i, c in enumerate(self.configurations)}

    def _index(self, configuration: dict) -> int:
        i = self._positions.get(_key(configuration))
        if i is None:
            shown = "; ".join(", ".join(f"{k}={v!r}" for k, v in c.items()) or "(no options)"
                              for c in self.configurations[:6])
            more = len(self.configurations) - 6
            raise ValidationError(f"no configuration {configuration!r} in this evaluation (it has: "
                                  f"{shown}{f'; and {more} more' if more > 0 else ''})")
        return i

    def values(self, **configuration) -> list:
        """The outputs of one configuration, one per seed (a diverged seed is an error)."""
        i = self._index(configuration)
        failed = {self.seeds[s]: msg for (c, s), msg in self.failures.items() if c == i}
        if failed:
            seed, msg = next(iter(failed.items()))
            raise ValidationError(f"{len(failed)} seed(s) of {configuration!r} diverged "
                                  f"({sorted(failed)}); seed {seed}: {msg}")
        return self.outputs[i]

    def stack(self, **configuration):
        """The outputs of one configuration stacked over seeds (axis 0): an array, or a dict or
        tuple of arrays for dict or tuple outputs."""
        return _stack(f"outputs of {configuration!r}", self.values(**configuration))

    def estimate(self, confidence: float = 0.95, nonnegative: bool = False, **configuration):
        """The mean over seeds with its Student-t interval (an Estimate; a dict or tuple of them for
        dict or tuple outputs), within [0, inf) for outputs that cannot be negative
        (``nonnegative``, :func:`fedbound.stats.mean_ci`)."""
        def est(stacked):
            if isinstance(stacked, dict):
                return Estimates({k: est(v) for k, v in stacked.items()}, NONNEGATIVE_METRICS, "round") \
                    if NONNEGATIVE_METRICS[0] in stacked else Estimates({k: est(v) for k, v in stacked.items()})
            if isinstance(stacked, tuple):
                return tuple(est(v) for v in stacked)
            return mean_ci(stacked, confidence, nonnegative=nonnegative)
        return est(self.stack(**configuration))

    def items(self):
        """(configuration, outputs stacked over seeds) for every configuration, in order."""
        return [(c, self.stack(**c)) for c in self.configurations]

    # -- shown to a reader (:mod:`fedbound.display`) ---------------------------------------------
    def _kind(self) -> str:
        """What one output is: "runs" (a run's per-round columns), "dict", "tuple" or "array"."""
        first = next((o for row in self.outputs for o in row if o is not None), None)
        if isinstance(first, dict):
            return "runs" if NONNEGATIVE_METRICS[0] in first else "dict"
        return "tuple" if isinstance(first, tuple) else "array"

    def __repr__(self) -> str:
        failed = {"failed": len(self.failures)} if self.failures else {}
        keys = sorted({k for row in self.outputs for o in row if isinstance(o, dict) for k in o})
        return brief("Measurements", configurations=len(self.configurations), seeds=len(self.seeds),
                     outputs=self._kind(), **({"keys": keys} if keys else {}), **failed)

    def _repr_html_(self) -> str:
        """One row per configuration: its values, the mean and interval over the seeds of each
        output (of a run: the last round of f - f*, ||x - x*||^2 and ||grad f||^2, intervals within
        [0, inf)) or how many seeds failed; for runs, a plot of each configuration's mean."""
        kind, keys = self._kind(), sorted({k for c in self.configurations for k in c})
        names, rows, series, method = [], [], {}, ""
        for c, configuration in enumerate(self.configurations):
            row = [configuration.get(k) for k in keys]
            failed = sum(1 for (i, _) in self.failures if i == c)
            if failed:
                rows.append(row + [f"{failed} of {len(self.seeds)} seeds failed"])
                continue
            named = self._named(self.stack(**configuration), kind)
            names = names or list(named)
            for values in named.values():
                est = mean_ci(values.reshape(values.shape[0], -1)[:, -1] if values.ndim > 1 else values,
                              nonnegative=kind == "runs")
                row.append(Html(f"{shown(est.mean)} [{shown(est.low)}, {shown(est.high)}]"))
                method = est.describe()
            rows.append(row)
            curve = next((k for k in named if np.all(np.isfinite(named[k]))), None) if kind == "runs" else None
            if curve is not None:
                label = ", ".join(f"{k}={configuration[k]}" for k in keys)
                series[f"{label} {curve}".strip()] = named[curve].mean(axis=0)
        header = keys + [name + (" (last round)" if kind == "runs" else "") for name in names]
        parts = [table(header, [r + [""] * (len(header) - len(r)) for r in rows],
                       caption=f"mean and {method}" if method else "")]
        if series:
            length = len(next(iter(series.values())))
            parts.insert(0, plot(np.arange(length), dict(list(series.items())[:8]), xlabel="round",
                                 ylabel="mean over the seeds"))
        return box("Monte-Carlo measurements", parts,
                   subtitle=f"{len(self.configurations)} configurations x {len(self.seeds)} seeds").text

    @staticmethod
    def _named(stacked, kind: str) -> dict[str, np.ndarray]:
        """The outputs of one configuration a table shows, by name, as float arrays (seeds, ...)."""
        if kind == "runs":
            chosen = {k: stacked[k] for k in NONNEGATIVE_METRICS if k in stacked}
        else:
            chosen = stacked if kind == "dict" else dict(enumerate(stacked)) if kind == "tuple" \
                else {"output": stacked}
        return {str(k): np.asarray(v, dtype=float) for k, v in chosen.items()}


def _grid(grid) -> list[dict]:
    clean = grid_mod.normalize(grid)
    require("seed" not in clean and all("seed" not in g for g in clean.get(grid_mod.ZIP, [])),
            "the seeds are the seeds argument, not a grid key 'seed'")
    return grid_mod.configurations(clean)


def _callable(name: str, fn, configurations: list[dict]) -> Callable:
    """``fn``, which must be callable as ``fn(seed, **configuration)`` for every configuration."""
    if not callable(fn):
        raise InputTypeError(f"{name} must be callable, got {type(fn).__name__}")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):   # no signature to check (a builtin): calls will tell
        return fn
    for configuration in configurations:
        try:
            signature.bind(0, **configuration)
        except TypeError as exc:
            raise ValidationError(f"{name}(seed, **configuration) cannot take the grid's "
                                  f"{sorted(configuration)}: {exc}") from None
    return fn


def _gather(function: Callable, common, payloads: list, configurations: list, seeds: list,
            points: Callable, progress) -> Measurements:
    """Run the payloads on the current executor; ``function(common, payload)`` returns a list of
    (configuration index, seed index, status, output or message)."""
    outputs = [[None] * len(seeds) for _ in configurations]
    failures = {}

    def on_result(payload, results):
        for c, s, status, value in results:
            if status == "done":
                outputs[c][s] = value
            else:
                failures[c, s] = value

    total = sum(points(p) for p in payloads)
    disable = None if progress is None else not validate.boolean("progress", progress)
    with tqdm(total=total, desc="Monte-Carlo", unit="run", disable=disable, leave=False) as bar:
        lost = current().map(function, common, payloads, on_result, lambda p: bar.update(points(p)))
    require(not lost, f"{sum(points(p) for p in lost)} runs were lost with their Ray workers; "
                      "run the evaluation again")
    return Measurements(configurations, seeds, outputs, failures)


def _call_points(fn: Callable, payload) -> list:
    c, configuration, s, seed = payload
    return [(c, s, "done", fn(seed, **configuration))]


def evaluate(fn: Callable, grid: dict | None = None, seeds: int | Sequence[int] = 1, *, progress: bool | None = None) -> Measurements:
    """``fn(seed, **configuration)`` for every configuration of ``grid`` and every seed (an int R:
    seeds 0..R-1, or a list), on the current executor (module doc). ``progress``: a bar over the
    runs (default: on a terminal only)."""
    configurations = _grid(grid)
    fn = _callable("fn", fn, configurations)
    seeds = validate.seeds(seeds)
    payloads = [(c, conf, s, seed) for c, conf in enumerate(configurations) for s, seed in enumerate(seeds)]
    return _gather(_call_points, fn, payloads, configurations, seeds, lambda p: 1, progress)


def _run_batch(common, payload) -> list:
    from fedbound.sweep.batch import run_cells

    make, rounds = common
    c, configuration, members = payload
    algs = [make(seed, **configuration) for _, seed in members]
    return [(c, s, status, cols if status == "done" else error)
            for (s, _), (status, cols, error, _) in zip(members, run_cells(algs, rounds))]


def runs(make: Callable, rounds: int, grid: dict | None = None, seeds: int | Sequence[int] = 1, *, batch: bool = True,
         progress: bool | None = None) -> Measurements:
    """The per-round metrics and cumulative communication (:meth:`fedbound.algorithms.run.Trajectory.columns`)
    of ``run(make(seed, **configuration), rounds)`` for every configuration of ``grid`` and every
    seed; the seeds of a configuration run together where its algorithm batches (and ``batch``).
    A diverged run is recorded (``Measurements.failures``) and refused when its configuration is
    read."""
    from fedbound.algorithms.base import Algorithm
    from fedbound.sweep.batch import batchable, seeds_per_batch

    rounds = validate.integer("rounds", rounds, low=0, high=1_000_000)
    configurations = _grid(grid)
    make = _callable("make", make, configurations)
    seeds = validate.seeds(seeds)
    batch = validate.boolean("batch", batch)
    payloads = []
    for c, configuration in enumerate(configurations):
        probe = make(seeds[0], **configuration)
        if not isinstance(probe, Algorithm):
            raise InputTypeError(f"make must return an algorithm, got {type(probe).__name__}")
        size = seeds_per_batch(probe.task, rounds) if batch and batchable(probe) else 1
        members = list(enumerate(seeds))
        payloads += [(c, configuration, members[i:i + size]) for i in range(0, len(members), size)]
    return _gather(_run_batch, (make, rounds), payloads, configurations, seeds, lambda p: len(p[2]), progress)


__getattr__ = renamed_attributes(__name__, {"Evaluation": "fedbound.sweep.evaluation:Measurements"})

__all__ = ["evaluate", "runs", "Measurements"]
