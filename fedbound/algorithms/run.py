"""The run loop: ``run(alg, rounds)`` steps an algorithm, records the per-round metrics of the
global model in a :class:`Trajectory` and raises :class:`~fedbound.errors.DivergenceError` naming
the round where the state or a metric is non-finite (the state as soon as it is, the global
model's metrics when their chunk of METRIC_CHUNK rounds is evaluated).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
from tqdm import tqdm  # text bars: tqdm.auto warns in notebooks without ipywidgets

from fedbound.algorithms.accounting import COUNTERS
from fedbound.algorithms.base import Algorithm, State, StateTensor, check_finite
from fedbound.algorithms.threads import Threads, round_threads, step_flops, torch_threads
from fedbound.argtypes import Count, Measured, NonNegativeInt
from fedbound.display import box, brief, details, fields, paragraph, plot, sample_rows, table
from fedbound.errors import DivergenceError, require
from fedbound.readout import ratio_words
from fedbound.tasks.base import Task


@dataclass(repr=False)
class Trajectory:
    """Per-round record of a run; index r = after r rounds (r = 0 is the initial state).

    loss: f(x_g); loss_gap: f(x_g) - f* (nan when f* unknown); dist2: ||x_g - x*||^2 (nan when
    x* unknown); grad_norm2: ||grad f(x_g)||^2; K: local steps of round r (0 at r = 0);
    comm: cumulative counters (CommCounts field name -> array (T+1,)); algorithm_metrics: the
    algorithm's own per-round metrics (``state.metrics``, e.g. AFGA's consensus errors; name ->
    array (T+1,), nan in rounds that do not report one, such as r = 0); :attr:`metrics`: every
    per-round metric by name, the global model's four and the algorithm's; eval_every: the metrics of the global
    model (loss, loss_gap, dist2, grad_norm2) are evaluated at the rounds r with r % eval_every == 0
    and at the last round, nan elsewhere (x_g, K and the counters are recorded every round).
    """

    algorithm: str
    rounds: np.ndarray
    x_g: StateTensor
    loss: Measured
    loss_gap: Measured
    dist2: Measured
    grad_norm2: Measured
    K: np.ndarray
    comm: dict[str, Measured]
    final_state: State = field(repr=False)
    algorithm_metrics: dict[str, Measured] = field(default_factory=dict)
    eval_every: Count = 1

    #: the metrics of the global model, evaluated every ``eval_every`` rounds
    GLOBAL_METRICS = ("loss", "loss_gap", "dist2", "grad_norm2")
    #: the factor above its round-0 value at which an error of the global model that grew is named
    #: (:meth:`growth`)
    GROWTH_NOTED = 1e6
    #: the errors :meth:`growth` reads, as a reader writes them
    ERRORS = {"loss_gap": "f - f*", "dist2": "||x_g - x*||^2", "grad_norm2": "||grad f(x_g)||^2"}

    @property
    def metrics(self) -> dict[str, Measured]:
        """Every per-round metric by name: the global model's (loss, loss_gap, dist2, grad_norm2)
        and the algorithm's own (:attr:`algorithm_metrics`), each an array (T+1,)."""
        return {**{m: getattr(self, m) for m in self.GLOBAL_METRICS}, **self.algorithm_metrics}

    def columns(self) -> dict[str, np.ndarray]:
        """The per-round columns: the metrics of the global model, K and the cumulative counters
        (:data:`fedbound.algorithms.accounting.COUNTERS`), as float arrays (K as int)."""
        out = {m: np.asarray(getattr(self, m), dtype=float) for m in self.GLOBAL_METRICS}
        out["K"] = np.asarray(self.K)
        out.update({c: np.asarray(self.comm[c], dtype=float) for c in COUNTERS})
        return out

    def to_dict(self) -> dict:
        """JSON-ready summary (lists of floats)."""
        return {
            "algorithm": self.algorithm,
            "rounds": self.rounds.tolist(),
            "loss": self.loss.tolist(),
            "loss_gap": self.loss_gap.tolist(),
            "dist2": self.dist2.tolist(),
            "grad_norm2": self.grad_norm2.tolist(),
            "K": self.K.tolist(),
            "comm": {k: v.tolist() for k, v in self.comm.items()},
            **({"algorithm_metrics": {k: v.tolist() for k, v in self.algorithm_metrics.items()}}
               if self.algorithm_metrics else {}),
            **({"eval_every": self.eval_every} if self.eval_every != 1 else {}),
        }

    def growth(self) -> tuple[str, float] | None:
        """(metric, factor): the first error of the global model, in the order f - f*,
        ||x_g - x*||^2, ||grad f||^2 (those known and positive at round 0), that ends the run at
        least :data:`GROWTH_NOTED` times above its round-0 value, with that factor; else None. A
        run whose state grows without overflowing keeps going (DivergenceError comes at the first
        non-finite state, the run loop's docstring): this is what says it moves away."""
        for m in self.ERRORS:
            first, last = (float(v) for v in np.asarray(getattr(self, m), dtype=float)[[0, -1]])
            if np.isfinite(first) and np.isfinite(last) and first > 0 and last >= self.GROWTH_NOTED * first:
                return m, last / first
        return None

    def growth_words(self) -> str | None:
        """:meth:`growth` in a sentence ("f - f* grew by a factor of 10^15 from round 0: the run
        diverges (its state is still finite)"), or None."""
        grown = self.growth()
        if grown is None:
            return None
        return (f"{self.ERRORS[grown[0]]} grew by {ratio_words(grown[1])} from round 0: the run "
                f"diverges (its state is still finite)")

    # -- shown to a reader (:mod:`fedbound.display`) ---------------------------------------------
    def _last(self) -> dict[str, float]:
        """The global model's metrics at the last round (those that are known: f* and x* may not be)."""
        return {m: float(getattr(self, m)[-1]) for m in ("loss_gap", "dist2", "grad_norm2")
                if np.isfinite(getattr(self, m)[-1])}

    def __repr__(self) -> str:
        return brief("Trajectory", self.algorithm, rounds=int(self.rounds[-1]), **self._last())

    def _repr_html_(self) -> str:
        """The metrics of the global model against the rounds (a log axis where they span decades),
        a small table of rounds (the first, log-spaced ones, the last), the totals of the counters."""
        shown_metrics = {m: np.asarray(getattr(self, m), dtype=float) for m in ("loss_gap", "dist2", "grad_norm2")}
        shown_metrics = {m: v for m, v in shown_metrics.items() if np.any(np.isfinite(v))}
        evaluated = np.flatnonzero(np.isfinite(self.grad_norm2))
        rows = [[int(self.rounds[i]), self.loss[i], *(v[i] for v in shown_metrics.values()), int(self.K[i])]
                for i in evaluated[sample_rows(evaluated.size)]]
        totals = [(name, float(self.comm[name][-1])) for name in COUNTERS if float(self.comm[name][-1]) != 0]
        grown = self.growth_words()
        parts = [*([paragraph(grown)] if grown else []),
                 plot(self.rounds, shown_metrics, xlabel="round", title=self.algorithm),
                 table(["round", "loss", *shown_metrics, "K"], rows),
                 details("communication and work (totals)", [fields(totals)])]
        if self.metrics:
            parts.append(f"the algorithm's own metrics: {', '.join(self.metrics)}")
        every = f", metrics every {self.eval_every} rounds" if self.eval_every != 1 else ""
        return box(f"trajectory of {self.algorithm}", parts,
                   subtitle=f"{int(self.rounds[-1])} rounds{every}").text


#: rows of global models evaluated in one call of :meth:`fedbound.tasks.Task.global_metrics`: a run
#: evaluates its rounds in chunks of this many (one batched product on quadratic tasks instead of a
#: few small operations per round), and the batched seeds evaluate each seed in the same chunks
#: (:mod:`fedbound.algorithms.federated.seeds`), so that they reproduce single runs bitwise
METRIC_CHUNK = 64


def global_columns(task: Task, X: torch.Tensor) -> np.ndarray:
    """(R, 4): f(x_r), f(x_r) - f* (nan without f*), ||x_r - x*||^2 (nan without x*) and
    ||grad f(x_r)||^2 for the rows x_r of ``X`` (R, d) with R <= METRIC_CHUNK, on one torch thread
    (the bits of a row then depend on the chunk it is in, never on the machine's threads)."""
    with torch_threads(1):
        losses, grads = task.global_metrics(X)
        f_star, x_star = getattr(task, "f_star", None), getattr(task, "x_star", None)
        dist2 = torch.sum((X - x_star) ** 2, dim=1) if x_star is not None else None
        out = torch.stack([v.detach().to(device="cpu", dtype=torch.float64) if v is not None
                           else torch.full((X.shape[0],), float("nan"), dtype=torch.float64)
                           for v in (losses, dist2, torch.sum(grads ** 2, dim=1))], dim=1).numpy()
    # the gap in float64 from the task's loss (f* of a float32 task is known to more digits)
    gap = out[:, 0] - float(f_star) if f_star is not None else np.full(X.shape[0], np.nan)
    return np.column_stack([out[:, 0], gap, out[:, 1], out[:, 2]])


class _Recorder:
    """The rows of a trajectory. The global model's metrics are evaluated in chunks of
    METRIC_CHUNK evaluated rounds (:func:`global_columns`), when a chunk is full and at the end: a
    metric that overflows while the state stays finite is reported, naming its round, at most that
    many rounds later."""

    def __init__(self, task: Task):
        self.task = task
        self.rows: list[tuple] = []          # (t, x_g, K, cumulative counters, extra metrics)
        self.columns: list[np.ndarray] = []  # per row: loss, gap, dist2, grad2 (nan: not evaluated)
        self.pending: list[int] = []         # rows evaluated in the next chunk

    def record(self, state: State, evaluate: bool = True) -> None:
        """One row: the state's x_g, K, counters and metrics; the global model's loss, gap,
        distance and gradient norm when ``evaluate`` (nan otherwise)."""
        metrics = getattr(state, "metrics", None) or {}
        for key, value in metrics.items():
            if not np.isfinite(value):   # e.g. a consensus error of finite models that overflows
                raise DivergenceError(f"diverged at round {state.t}: the metric {key} = {value:g} "
                                      f"(reduce the step size)", round_index=state.t)
        self.rows.append((state.t, state.x_g.clone(), state.K, state.comm, metrics))
        self.columns.append(_NOT_EVALUATED)
        if evaluate:
            self.pending.append(len(self.rows) - 1)
            if len(self.pending) == METRIC_CHUNK:
                self.evaluate()

    def evaluate(self) -> None:
        """The metrics of the pending rows, in one chunk; DivergenceError at the first row whose
        loss or gradient norm is not finite (a finite model so large that f or its gradient
        overflows has diverged as well)."""
        if not self.pending:
            return
        values = global_columns(self.task, torch.stack([self.rows[i][1] for i in self.pending]))
        for i, row in zip(self.pending, values):
            if not (np.isfinite(row[0]) and np.isfinite(row[3])):
                t = self.rows[i][0]
                raise DivergenceError(f"diverged at round {t}: f(x_g) = {row[0]:g}, "
                                      f"||grad f(x_g)||^2 = {row[3]:g} (reduce the step size)",
                                      round_index=t)
            self.columns[i] = row
        self.pending = []

    def trajectory(self, name: str, state: State, eval_every: int = 1) -> Trajectory:
        self.evaluate()
        t, xs, K, comm, extra = zip(*self.rows)
        loss, gap, dist2, grad2 = np.stack(self.columns).T
        comm = [c.as_dict() for c in comm]
        names = dict.fromkeys(k for e in extra for k in e)
        return Trajectory(
            algorithm=name, rounds=np.array(t), x_g=torch.stack(xs), loss=loss.copy(),
            loss_gap=gap.copy(), dist2=dist2.copy(), grad_norm2=grad2.copy(),
            K=np.array(K), comm={k: np.array([c[k] for c in comm]) for k in comm[0]},
            final_state=state, eval_every=eval_every,
            algorithm_metrics={k: np.array([e.get(k, np.nan) for e in extra], dtype=float) for k in names})


_NOT_EVALUATED = np.full(4, np.nan)


def run(alg: Algorithm, rounds: NonNegativeInt, callback: Callable[[State], dict | None] | None = None,
        progress: bool = False, state: State | None = None, eval_every: Count = 1,
        threads: Threads | None = None) -> Trajectory:
    """Run ``rounds`` global rounds from ``state`` (default ``alg.init()``) and record metrics.

    ``callback(state)`` is called after every round; a dict it returns is passed as keyword
    overrides (e.g. ``{"local_steps": 4, "clients_per_subnet": [2, 3]}``) to the next ``step`` --
    the controller hook. ``eval_every``: evaluate the global model's loss, gap, distance and
    gradient norm (:meth:`fedbound.tasks.Task.global_metrics`: O(d^2) on quadratic tasks, a pass
    over all n clients on others, often dearer than the round) only every ``eval_every`` rounds and
    at the last round (:class:`Trajectory`).
    ``threads``: torch threads of the run; by default one for the first round, then as many as
    the work of its local steps can use (:mod:`fedbound.algorithms.threads`: one for small rounds, so
    that a busy machine cannot stall them), at most torch's setting when the run starts; a
    ``torch.set_num_threads`` of the caller's (or an enclosing sweep's) stands instead. torch's
    setting is restored afterwards.
    The run computes on the task's device (:meth:`fedbound.tasks.Task.to`).
    Raises DivergenceError naming the round as soon as any state tensor is non-finite (checked
    every round), or naming the first round whose evaluated loss or gradient norm is not finite
    when its chunk of METRIC_CHUNK rounds is evaluated.
    """
    require(isinstance(rounds, (int, np.integer)) and rounds >= 0,
            f"rounds must be an integer >= 0, got {rounds!r}")
    with round_threads(threads=threads) as policy, alg.task.computing():   # the task's device
        state = alg.init() if state is None else state
        check_finite(state, alg.name)
        recorder = _Recorder(alg.task)
        recorder.record(state)
        overrides: dict = {}
        evaluations = state.comm.gradient_evaluations
        for r in tqdm(range(1, int(rounds) + 1), disable=not progress, desc=alg.name):
            state = alg.step(state, **overrides)
            try:
                check_finite(state, alg.name)
            except DivergenceError:
                recorder.evaluate()   # an earlier round whose metric overflowed is named first
                raise
            if r == 1:
                policy.measured(step_flops(state.comm.gradient_evaluations - evaluations, state.K,
                                           alg.task.gradient_flops))
            recorder.record(state, evaluate=r % eval_every == 0 or r == rounds)
            overrides = (callback(state) if callback is not None else None) or {}
    return recorder.trajectory(alg.name, state, eval_every)
