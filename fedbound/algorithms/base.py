"""Shared machinery of the algorithms: explicit state, seeded randomness and divergence detection
(the run loop and its trajectory: :mod:`fedbound.algorithms.run`).

Every algorithm is a small object in the optax style (DESIGN.md, "Algorithms"):

    alg = SDGT(task, network, lr=0.05, local_steps=5, clients_per_subnet=2, seed=0)  # or FedAvg
    state = alg.init()                 # State dataclass of tensors
    state = alg.step(state, local_steps=3)  # one global round; overrides for that round only
    traj = run(alg, rounds=100)        # Trajectory of per-round metrics

``step`` is a pure function of the state: the torch.Generator state travels inside the state
(``State.rng``), so stepping the same state twice gives bitwise-identical results and the same seed
gives a bitwise-identical run. There are no module-level globals.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated

import numpy as np
import torch

from fedbound.algorithms.accounting import CommCounts
from fedbound.algorithms.client_rows import ClientRows
from fedbound.algorithms.threads import per_round, step_flops
from fedbound.argtypes import NonFinite, NonNegativeInt, Range, Seed
from fedbound.deprecation import renamed_attributes
from fedbound.display import clip, settings
from fedbound.errors import DivergenceError, require
from fedbound.tasks.base import Task
from fedbound.validate import instance
from fedbound.validate import seed as check_seed

#: the largest number of local steps (or D2D rounds) per round any algorithm accepts: beyond it a
#: round of even the smallest task takes minutes (nothing may hang on a typo)
MAX_LOCAL_STEPS = 100_000

#: a number of local steps (or D2D rounds) per round: an integer in [1, MAX_LOCAL_STEPS]
Steps = Annotated[int, Range(1, MAX_LOCAL_STEPS)]
#: a decay or momentum factor in [0, 1)
Decay = Annotated[float, Range(0.0, 1.0, high_open=True)]
#: a tensor of an algorithm's (or optimizer's) state: NaN and infinities are let through, since a
#: diverged run's state holds them and :func:`check_finite` reports them, naming the round
StateTensor = Annotated[torch.Tensor, NonFinite()]
#: initial models x0: a (d,) tensor or array (None: the task's x0)
Models = torch.Tensor | np.ndarray


@dataclass(frozen=True)
class State:
    """Fields common to every algorithm's state.

    t: global rounds completed; x_g: the global (server) model reported by the algorithm;
    rng: state of the torch.Generator that drives all randomness; K: local steps of the last
    round (0 before the first); comm: cumulative communication counters; last_comm: counters of
    the last round.
    """

    t: NonNegativeInt
    x_g: StateTensor
    rng: torch.Tensor
    K: NonNegativeInt
    comm: CommCounts
    last_comm: CommCounts


def new_rng(seed: Seed) -> torch.Tensor:
    """State of a CPU torch.Generator seeded with ``seed``."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(check_seed(seed))
    return gen.get_state()


def check_task(task: Task) -> Task:
    """``task`` if it is a :class:`fedbound.tasks.Task`, else InputTypeError."""
    return instance("task", task, Task, "a fedbound Task (fedbound.tasks)")


def generator_from(rng: torch.Tensor) -> torch.Generator:
    """A fresh CPU torch.Generator positioned at the state ``rng`` (randomness is drawn on the CPU
    whatever the task's device: a seed gives the same numbers everywhere)."""
    gen = torch.Generator(device="cpu")
    gen.set_state(rng)
    return gen


class Algorithm:
    """Base class of every algorithm: the task, the seed, and the state bookkeeping.

    Subclasses implement ``init(x0=None)`` and ``step(state, **overrides)`` (a pure function of the
    state) and set ``name``. The semi-decentralized family (SD-GT and its baselines, with a step
    size gamma, K D2D rounds and per-subnet sampling h) derives from
    :class:`fedbound.algorithms.semidecentralized.base.SemiDecentralized`; the federated round template
    from :class:`fedbound.algorithms.federated.round.Federated`.

    Every subclass's ``init`` and ``step`` run under the thread policy
    (:mod:`fedbound.algorithms.threads`): called from Python in a loop, as ``fedbound.testing`` and
    the notebooks do, a small round runs on one torch thread (a ``step`` weighs the round before
    it: its gradient evaluations times the task's ``gradient_flops``), and torch's setting is
    restored after each call; an explicit ``torch.set_num_threads`` or an enclosing ``run()``
    decides instead.
    """

    name = "algorithm"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for method, work in (("init", _init_work), ("step", _step_work)):
            fn = vars(cls).get(method)
            if callable(fn) and not getattr(fn, "__wrapped_per_round__", False):
                setattr(cls, method, per_round(work)(fn))

    def __init__(self, task: Task, *, seed: Seed = 0):
        self.task = check_task(task)
        self.seed = check_seed(seed)

    def initial_models(self, x0: Models | None) -> torch.Tensor:
        """x0 (default task.x0) as a (d,) tensor of the task's dtype."""
        x0 = self.task.x0 if x0 is None else x0
        x0 = torch.as_tensor(x0, dtype=self.task.dtype).reshape(-1)
        require(x0.numel() == self.task.d,
                f"x0 must have d={self.task.d} entries, got {x0.numel()}")
        return x0.clone()

    def advance(self, state: State, **changes) -> State:
        """The next state: t + 1, cumulative counters updated with ``changes['last_comm']``, the
        other fields as ``changes`` gives them or as they were (every round makes one: a copy of
        the fields, not ``dataclasses.replace``'s constructor call)."""
        unknown = changes.keys() - _field_names(type(state))
        require(not unknown, f"{type(state).__name__} has no fields {sorted(unknown)}")
        new = object.__new__(type(state))
        new.__dict__.update(state.__dict__)
        new.__dict__.update(changes, t=state.t + 1, comm=state.comm + changes["last_comm"])
        return new

    def init(self, x0: Models | None = None) -> State:  # pragma: no cover - interface
        raise NotImplementedError

    def step(self, state: State, **overrides) -> State:  # pragma: no cover - interface
        raise NotImplementedError

    @property
    def options(self) -> Mapping[str, object]:
        """The settings :func:`fedbound.algorithms.registry.build` built it with (the options
        given, validated, then the defaults it took for the others), read-only; empty for one
        built by its class directly."""
        return MappingProxyType(self.__dict__.get("_built_with", {}))

    def __repr__(self) -> str:
        """Its name, task (class, n, d), seed and the :attr:`options` it was built with, values as
        :func:`fedbound.display.settings` writes them."""
        options = settings(**self.options)
        return clip(f"{self.name}(task={self._task_label()}, seed={self.seed}"
                    f"{', ' + options if options else ''})")

    def _repr_html_(self) -> str:
        """The algorithm as a notebook shows it: the task, the seed and each option it was built
        with (:attr:`options`; none listed for one built by its class directly)."""
        from fedbound.display import box, fields
        rows = [("task", self._task_label()), ("seed", self.seed), *self.options.items()]
        return box(self.name, [fields(rows)],
                   subtitle="" if self.options else "built by its class: options not recorded").text

    def _task_label(self) -> str:
        return f"{type(self.task).__name__}(n={self.task.n}, d={self.task.d})"


def _init_work(alg: Algorithm, *args, **kwargs) -> float:
    """The work the thread policy weighs for ``init``: none measured yet (one thread)."""
    return 0.0


def _step_work(alg: Algorithm, state: State | None = None, *args, **kwargs) -> float:
    """The work the thread policy weighs for ``step(state)``: a local step of the round before it
    (its gradient evaluations times the task's gradient flops, over its local steps), none before
    the first."""
    last = getattr(state, "last_comm", None)
    if last is None or not getattr(state, "t", 0):
        return 0.0
    return step_flops(last.gradient_evaluations, state.K, alg.task.gradient_flops)


def check_finite(state: State, name: str = "algorithm") -> None:
    """Raise DivergenceError naming the round if any floating tensor of the state is non-finite.

    Uses one reduction per tensor: a sum is non-finite iff an entry is non-finite or the sum
    overflows (entries near 1e308, i.e. diverged anyway). Of per-client rows
    (:class:`~fedbound.algorithms.client_rows.ClientRows`), the rows written by the last update
    (``last``, O(k d)): the rows before were checked in the rounds that wrote them.
    """
    for field_name in _field_names(type(state)):
        value = getattr(state, field_name)
        if isinstance(value, ClientRows):
            value = value.last
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            if not math.isfinite(value.sum()):
                raise DivergenceError(
                    f"{name} diverged at round {state.t}: state {field_name} is non-finite "
                    f"(reduce the step size)", round_index=state.t)


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


__getattr__ = renamed_attributes(__name__, {name: f"fedbound.algorithms.run:{name}"
                                            for name in ("Trajectory", "run")})
