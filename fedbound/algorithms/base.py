"""Shared machinery of the algorithms: explicit state, seeded randomness, the run loop, divergence
detection and the per-round trajectory.

Every algorithm is a small object in the optax style (DESIGN.md, "Algorithms"):

    alg = SDGT(task, network, gamma=0.05, K=5, h=2, seed=0)    # or FedAvg(task, lr=..., ...)
    state = alg.init()                 # State dataclass of tensors
    state = alg.step(state, K=3)       # one global round; keyword overrides for that round only
    traj = run(alg, rounds=100)        # Trajectory of per-round metrics

``step`` is a pure function of the state: the torch.Generator state travels inside the state
(``State.rng``), so stepping the same state twice gives bitwise-identical results and the same seed
gives a bitwise-identical run. There are no module-level globals.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
from tqdm import tqdm  # text bars: tqdm.auto warns in notebooks without ipywidgets

from fedbound.algorithms.accounting import CommCounts
from fedbound.errors import DivergenceError, require
from fedbound.validate import instance
from fedbound.validate import seed as check_seed


@dataclass(frozen=True)
class State:
    """Fields common to every algorithm's state.

    t: global rounds completed; x_g: the global (server) model reported by the algorithm;
    rng: state of the torch.Generator that drives all randomness; K: local steps of the last
    round (0 before the first); comm: cumulative communication counters; last_comm: counters of
    the last round.
    """

    t: int
    x_g: torch.Tensor
    rng: torch.Tensor
    K: int
    comm: CommCounts
    last_comm: CommCounts


def new_rng(seed: int) -> torch.Tensor:
    """State of a CPU torch.Generator seeded with ``seed``."""
    gen = torch.Generator()
    gen.manual_seed(check_seed(seed))
    return gen.get_state()


#: the largest number of local steps (or D2D rounds) per round any algorithm accepts: beyond it a
#: round of even the smallest task takes minutes (nothing may hang on a typo)
MAX_LOCAL_STEPS = 100_000


def check_task(task):
    """``task`` if it is a :class:`fedbound.tasks.Task`, else InputTypeError."""
    from fedbound.tasks.base import Task  # here: fedbound.tasks must not load with the algorithms

    return instance("task", task, Task, "a fedbound Task (fedbound.tasks)")


def generator_from(rng: torch.Tensor) -> torch.Generator:
    """A fresh torch.Generator positioned at the state ``rng``."""
    gen = torch.Generator()
    gen.set_state(rng)
    return gen


class Algorithm:
    """Base class of every algorithm: the task, the seed, and the state bookkeeping.

    Subclasses implement ``init(x0=None)`` and ``step(state, **overrides)`` (a pure function of the
    state) and set ``name``. The semi-decentralized family (SD-GT and its baselines, with a step
    size gamma, K D2D rounds and per-subnet sampling h) derives from
    :class:`fedbound.algorithms.semidecentralized.SemiDecentralized`; the federated round template
    from :class:`fedbound.algorithms.federated.Federated`.
    """

    name = "algorithm"

    def __init__(self, task, *, seed: int = 0):
        self.task = check_task(task)
        self.seed = check_seed(seed)

    def initial_models(self, x0) -> torch.Tensor:
        """x0 (default task.x0) as a (d,) tensor of the task's dtype."""
        x0 = self.task.x0 if x0 is None else x0
        x0 = torch.as_tensor(x0, dtype=self.task.dtype).reshape(-1)
        require(x0.numel() == self.task.d,
                f"x0 must have d={self.task.d} entries, got {x0.numel()}")
        return x0.clone()

    def advance(self, state: State, **changes) -> State:
        """The next state: t + 1, cumulative counters updated with ``changes['last_comm']``."""
        last = changes["last_comm"]
        return dataclasses.replace(state, t=state.t + 1, comm=state.comm + last, **changes)

    def init(self, x0=None) -> State:  # pragma: no cover - interface
        raise NotImplementedError

    def step(self, state: State, **overrides) -> State:  # pragma: no cover - interface
        raise NotImplementedError


def check_finite(state: State, name: str = "algorithm") -> None:
    """Raise DivergenceError naming the round if any floating tensor of the state is non-finite.

    Uses one reduction per tensor: a sum is non-finite iff an entry is non-finite or the sum
    overflows (entries near 1e308, i.e. diverged anyway).
    """
    for f in dataclasses.fields(state):
        value = getattr(state, f.name)
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            if not bool(torch.isfinite(value.sum())):
                raise DivergenceError(
                    f"{name} diverged at round {state.t}: state {f.name} is non-finite "
                    f"(reduce the step size)", round_index=state.t)


@dataclass
class Trajectory:
    """Per-round record of a run; index r = after r rounds (r = 0 is the initial state).

    loss: f(x_g); loss_gap: f(x_g) - f* (nan when f* unknown); dist2: ||x_g - x*||^2 (nan when
    x* unknown); grad_norm2: ||grad f(x_g)||^2; K: local steps of round r (0 at r = 0);
    comm: cumulative counters (CommCounts field name -> array (T+1,)); metrics: the algorithm's
    extra per-round metrics (``state.metrics``, e.g. AFGA's consensus errors; name -> array (T+1,),
    nan in rounds that do not report one, such as r = 0).
    """

    algorithm: str
    rounds: np.ndarray
    x_g: torch.Tensor
    loss: np.ndarray
    loss_gap: np.ndarray
    dist2: np.ndarray
    grad_norm2: np.ndarray
    K: np.ndarray
    comm: dict[str, np.ndarray]
    final_state: State = field(repr=False)
    metrics: dict[str, np.ndarray] = field(default_factory=dict)

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
            **({"metrics": {k: v.tolist() for k, v in self.metrics.items()}} if self.metrics else {}),
        }


class _Recorder:
    def __init__(self, task):
        self.task = task
        self.rows: list[tuple] = []

    def record(self, state: State) -> None:
        task, x = self.task, state.x_g
        loss = float(task.loss(x))
        f_star = getattr(task, "f_star", None)
        x_star = getattr(task, "x_star", None)
        gap = loss - float(f_star) if f_star is not None else float("nan")
        dist2 = float(torch.sum((x - x_star) ** 2)) if x_star is not None else float("nan")
        grad2 = float(torch.sum(task.global_grad(x) ** 2))
        if not (np.isfinite(loss) and np.isfinite(grad2)):
            # a finite model so large that f or its gradient overflows has diverged as well
            raise DivergenceError(f"diverged at round {state.t}: f(x_g) = {loss:g}, ||grad f(x_g)||^2 = "
                                  f"{grad2:g} (reduce the step size)", round_index=state.t)
        metrics = getattr(state, "metrics", None) or {}
        for key, value in metrics.items():
            if not np.isfinite(value):   # e.g. a consensus error of finite models that overflows
                raise DivergenceError(f"diverged at round {state.t}: the metric {key} = {value:g} "
                                      f"(reduce the step size)", round_index=state.t)
        self.rows.append((state.t, x.clone(), loss, gap, dist2, grad2, state.K,
                          state.comm.as_dict(), metrics))

    def trajectory(self, name: str, state: State) -> Trajectory:
        t, xs, loss, gap, dist2, grad2, K, comm, extra = zip(*self.rows)
        names = dict.fromkeys(k for e in extra for k in e)
        return Trajectory(
            algorithm=name, rounds=np.array(t), x_g=torch.stack(xs), loss=np.array(loss),
            loss_gap=np.array(gap), dist2=np.array(dist2), grad_norm2=np.array(grad2),
            K=np.array(K), comm={k: np.array([c[k] for c in comm]) for k in comm[0]},
            final_state=state,
            metrics={k: np.array([e.get(k, np.nan) for e in extra], dtype=float) for k in names})


def run(alg: Algorithm, rounds: int, callback: Callable[[State], dict | None] | None = None,
        progress: bool = False, state: State | None = None) -> Trajectory:
    """Run ``rounds`` global rounds from ``state`` (default ``alg.init()``) and record metrics.

    ``callback(state)`` is called after every round; a dict it returns is passed as keyword
    overrides (e.g. ``{"K": 4, "h": [2, 3]}``) to the next ``step`` -- the controller hook.
    Raises DivergenceError naming the round as soon as any state tensor is non-finite.
    """
    require(isinstance(rounds, (int, np.integer)) and rounds >= 0,
            f"rounds must be an integer >= 0, got {rounds!r}")
    state = alg.init() if state is None else state
    check_finite(state, alg.name)
    recorder = _Recorder(alg.task)
    recorder.record(state)
    overrides: dict = {}
    for _ in tqdm(range(int(rounds)), disable=not progress, desc=alg.name):
        state = alg.step(state, **overrides)
        check_finite(state, alg.name)
        recorder.record(state)
        overrides = (callback(state) if callback is not None else None) or {}
    return recorder.trajectory(alg.name, state)
