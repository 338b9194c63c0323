"""The algorithms as entries of the one registry (:mod:`fedbound.registry`): each algorithm module
registers its :class:`AlgorithmSpec` where the algorithm is defined (name, constructor, options
with their validation, CLI flags and examples, network needs); ``fedbound run ALGORITHM``,
``fedbound list algorithms``, sweeps, the generated tests and the fuzz suite read them here, and
:func:`build` constructs any of them by name.

    >>> from fedbound.algorithms import registry
    >>> spec = registry.get("fedavg")
    >>> [o.flag for o in spec.options][:3]
    ['--lr', '--local-steps', '--clients-per-round']
    >>> spec.family
    'federated'
"""
from __future__ import annotations

import inspect

import torch

from dataclasses import dataclass
from typing import Callable, Literal

from fedbound.algorithms.base import Algorithm
from fedbound.argtypes import Count, Seed
from fedbound.errors import require
from fedbound.network import Network
from fedbound.registry import Entry, Option, Registry
from fedbound.tasks.base import Task
from fedbound.validate import one_of

NETWORK_NEEDS = ("required", "optional", "none")
#: the families, as the folders of fedbound.algorithms
FAMILIES = ("federated", "decentralized", "semi-decentralized")


@dataclass(frozen=True, repr=False)
class AlgorithmSpec(Entry):
    """An algorithm: CLI ``name``, ``constructor``, one-line ``summary``, ``family``
    (:data:`FAMILIES`), ``options``, ``network`` ("required": constructor(task, network, ...);
    "optional": constructor(task, network=..., ...); "none"), ``default_subnets`` (subnets the CLI
    builds when no network option is given; None: no network)."""

    name: str
    constructor: Callable[..., Algorithm]
    summary: str
    family: Literal["federated", "decentralized", "semi-decentralized"]
    options: tuple[Option, ...] = ()
    network: Literal["required", "optional", "none"] = "none"
    default_subnets: Count | None = None

    def __post_init__(self):
        super().__post_init__()
        one_of("network need", self.network, NETWORK_NEEDS)
        one_of("family", self.family, FAMILIES)
        require(callable(self.constructor), f"{self.name}: the constructor must be callable")


ALGORITHMS: Registry[AlgorithmSpec] = Registry("algorithm", AlgorithmSpec,
                                               packages=("fedbound.algorithms",))
register = ALGORITHMS.register
get = ALGORITHMS.get
names = ALGORITHMS.names
specs = ALGORITHMS.entries


def build(name: str, task: Task | str, network: Network | None = None, *, seed: Seed = 0,
          **options) -> Algorithm:
    """The algorithm ``name`` on ``task`` (a :class:`~fedbound.tasks.Task`, or a task preset's
    name, ``fedbound list tasks``, built with its defaults) (and ``network`` where it takes one)
    with ``options`` (option names; deprecated spellings warn), built on the task's device
    (``task.to("cuda")``: the tensors it makes at construction live there too). The algorithm
    keeps its settings as ``options`` (what its repr and notebook table show): the options given,
    validated, then the defaults it takes for the others (the registered ones, else those of its
    constructor; an option without a value, as ``clients_per_round`` for every client, is left
    out).

    >>> from fedbound.algorithms import registry
    >>> registry.build("fedavg", "quadratic", lr=0.1, local_steps=2)
    FedAvg(task=Quadratic(n=12, d=10), seed=0, lr=0.1, local_steps=2, server_lr=1)
    """
    spec = get(name)
    if isinstance(task, str):
        from fedbound.tasks import make_task
        task = make_task(task)
    kwargs = checked = spec.check(options)
    if spec.network == "required":
        require(network is not None, f"{name} needs a network")
        args, kwargs = (task, network), dict(kwargs, seed=seed)
    elif spec.network == "optional":
        args, kwargs = (task,), dict(kwargs, network=network, seed=seed)
    else:
        require(network is None, f"{name} takes no network")
        args, kwargs = (task,), dict(kwargs, seed=seed)
    with task.computing():
        alg = spec.constructor(*args, **kwargs)
    alg._built_with = _settings(spec, checked)   # what alg.options shows
    return alg


def _settings(spec: AlgorithmSpec, checked: dict) -> dict:
    """The options ``checked`` (validated, registered defaults filled in) with the constructor's
    defaults for the others that have a value, in the order of ``spec.options``."""
    params = inspect.signature(spec.constructor).parameters
    out = {}
    for o in spec.options:
        p = params.get(o.name)
        value = checked.get(o.name, None if p is None or p.default is p.empty else p.default)
        if value is not None:
            out[o.name] = value
    return out


__all__ = ["AlgorithmSpec", "ALGORITHMS", "NETWORK_NEEDS", "FAMILIES", "register", "get", "names",
           "specs", "build"]
