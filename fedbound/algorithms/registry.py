"""The one registry of algorithms: each declares its name, constructor, options (with their
validation and CLI flags) and network needs once; ``fedbound run ALGORITHM`` and ``fedbound list
algorithms`` are generated from it, and :func:`build` constructs any of them by name.

    >>> from fedbound.algorithms import registry
    >>> registry.names()[:3]
    ('sdgt', 'sd-fedavg', 'scaffold')
    >>> spec = registry.get("fedavg")
    >>> [o.flag for o in spec.options][:3]
    ['--lr', '--local-steps', '--clients-per-round']
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Callable

import numpy as np

from fedbound.errors import require
from fedbound.network.sampling import PARTICIPATIONS
from fedbound.validate import integer, known_names, number, one_of

NETWORK_NEEDS = ("required", "optional", "none")


def _positive(name, value):
    return number(name, value, low=0.0, low_open=True)


def _nonnegative(name, value):
    return number(name, value, low=0.0)


def _beta(name, value):
    return number(name, value, low=0.0, high=1.0, high_open=True)


def _at_least_one(name, value):
    return integer(name, value, low=1)


def _local_steps(name, value):
    """One count for every client (int >= 1) or one per client (a list of ints >= 1; its length
    is checked against the task's n by the algorithm)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        values = value.reshape(-1).tolist() if isinstance(value, np.ndarray) else list(value)
        require(len(values) >= 1, f"{name} must hold at least one step count")
        return tuple(integer(f"{name}[{i}]", v, low=1) for i, v in enumerate(values))
    return integer(name, value, low=1)


def steps_list(text: str):
    """argparse type of ``--local-steps``: "5" (every client) or "1,3,5,8,2" (one per client)."""
    parts = text.split(",")
    try:
        values = [int(part) for part in parts]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or comma-separated integers, got {text!r}") from None
    return values[0] if len(values) == 1 else values


steps_list.__name__ = "steps"   # argparse names the type in its error messages


@dataclass(frozen=True)
class Option:
    """One constructor option: keyword ``name``, CLI ``flag``, argparse ``type``, ``help``,
    ``default`` (None: the constructor's own default, or no value), ``check(label, value) -> value``
    (fedbound.validate; ``label`` is the keyword or the flag), ``required``."""

    name: str
    flag: str
    type: type
    help: str
    check: Callable
    default: object = None
    required: bool = False


@dataclass(frozen=True)
class AlgorithmSpec:
    """An algorithm: CLI ``name``, ``constructor``, one-line ``summary``, ``family``
    ("federated" or "semi-decentralized"), ``options``, ``network`` ("required": constructor(task,
    network, ...); "optional": constructor(task, network=..., ...); "none"), ``default_subnets``
    (subnets the CLI builds when no network option is given; None: no network)."""

    name: str
    constructor: Callable
    summary: str
    family: str
    options: tuple[Option, ...]
    network: str = "none"
    default_subnets: int | None = None

    def check(self, options: dict, *, flags: bool = False) -> dict:
        """``options`` validated (unknown names rejected with a did-you-mean; missing required
        ones named; registered defaults filled in); values in canonical form. ``flags``: name them
        by their CLI flags."""
        by_name = {o.name: o for o in self.options}
        known_names(f"option of {self.name}", options, by_name)
        out = {}
        for o in self.options:
            label = o.flag if flags else o.name
            value = options.get(o.name)
            if value is None:
                require(not o.required, f"{self.name} needs {label}")
                if o.default is None:
                    continue
                value = o.default
            out[o.name] = o.check(label, value)
        return out


_REGISTRY: dict[str, AlgorithmSpec] = {}


def register(spec: AlgorithmSpec) -> AlgorithmSpec:
    """Add ``spec``; a name registered twice is an error."""
    require(spec.name not in _REGISTRY, f"algorithm {spec.name!r} is already registered")
    one_of("network need", spec.network, NETWORK_NEEDS)
    _REGISTRY[spec.name] = spec
    return spec


def names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def specs() -> tuple[AlgorithmSpec, ...]:
    return tuple(_REGISTRY.values())


def get(name: str) -> AlgorithmSpec:
    """The spec of ``name`` (UnknownNameError with a did-you-mean)."""
    return _REGISTRY[one_of("algorithm", name, _REGISTRY)]


def build(name: str, task, network=None, *, seed: int = 0, **options):
    """The algorithm ``name`` on ``task`` (and ``network`` where it takes one) with ``options``."""
    spec = get(name)
    kwargs = spec.check(options)
    if spec.network == "required":
        require(network is not None, f"{name} needs a network")
        return spec.constructor(task, network, seed=seed, **kwargs)
    if spec.network == "optional":
        return spec.constructor(task, network=network, seed=seed, **kwargs)
    require(network is None, f"{name} takes no network")
    return spec.constructor(task, seed=seed, **kwargs)


# ---- shared options (each algorithm module's ``specs()`` picks from these) ---------------------------
GAMMA = Option("gamma", "--gamma", float, "step size (default 0.01)", _positive, default=0.01)
K = Option("K", "--K", int, "local steps (D2D rounds) per round (default 5)", _at_least_one, default=5)
SAMPLE = Option("h", "--sample", int, "clients sampled per subnet (default all)",
                _at_least_one)
LR = Option("lr", "--lr", float, "client learning rate", _positive, required=True)
LOCAL_STEPS = Option("local_steps", "--local-steps", steps_list,
                     "local steps per round: one count, or one per client as 1,3,5 (default 1)",
                     _local_steps)
CLIENTS_PER_ROUND = Option("clients_per_round", "--clients-per-round", int,
                           "clients sampled uniformly per round (default all)", _at_least_one)
SERVER_LR = Option("server_lr", "--server-lr", float, "server learning rate", _positive)
SERVER_MOMENTUM = Option("server_momentum", "--server-momentum", float, "server momentum in [0, 1)",
                         _beta)
BETA1 = Option("beta1", "--beta1", float, "first-moment decay in [0, 1) (the server's; DAdam: "
               "every client's)", _beta)
BETA2 = Option("beta2", "--beta2", float, "second-moment decay in [0, 1) (the server's; DAdam: "
               "every client's)", _beta)
TAU = Option("tau", "--tau", float, "adaptivity epsilon tau > 0 (the server's; DAdam: every "
             "client's)", _positive)
PARTICIPATION = Option("participation", "--participation", str,
                       "client participation: full, uniform (renormalized weights), unbiased "
                       "(weights p_i n/q) or with-replacement (draws by p_i), with "
                       "--clients-per-round q", lambda name, value: one_of(name, value, PARTICIPATIONS))
MU = Option("mu", "--mu", float, "proximal coefficient mu >= 0", _nonnegative, required=True)
ALPHA = Option("alpha", "--alpha", float, "FedDyn's dynamic regularization coefficient alpha > 0",
               _positive, required=True)

#: modules whose ``specs()`` gives their algorithms' AlgorithmSpecs, registered in this order (one
#: line per module: a paper's algorithms live in its own module)
SPEC_MODULES = (
    "fedbound.algorithms.semidecentralized",
    "fedbound.algorithms.fedopt",
    "fedbound.algorithms.fednova",
    "fedbound.algorithms.afga",
    "fedbound.algorithms.fedada2",
    "fedbound.algorithms.feddyn",
)


def _register_builtins() -> None:
    from importlib import import_module

    for module in SPEC_MODULES:
        for spec in import_module(module).specs():
            register(spec)


_register_builtins()

__all__ = ["Option", "AlgorithmSpec", "register", "names", "specs", "get", "build"]
