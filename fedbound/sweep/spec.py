"""The sweep SPEC: which algorithms, on which task (and network), for how many rounds, over which
grid of options -- parsed and validated once, expanded into cells.

A SPEC is a strict-JSON object (:func:`fedbound.validate.parse_json`)::

    {"algorithm": ["fedavg", "fedprox"],                 # one name or a list (the registry's names)
     "task": {"name": "lsq", "n": 30, "d": 20},          # the `fedbound run` task options
     "network": {"subnets": 3, "topology": "ring"},      # optional: for algorithms that take one
     "rounds": 50,
     "grid": {"lr": [0.01, 0.05], "seed": [0, 1, 2],    # lists are crossed, scalars are fixed
              "proximal_mu": 0.1,
              "zip": {"local_steps": [1, 5], "clients_per_round": [30, 10]}},   # paired
     "batch": true}                                      # optional: batch seeds (default true)

Task keys: ``name`` (a task preset of :data:`fedbound.tasks.registry.TASKS`) and the preset's
options, as ``fedbound run`` takes them (``n``, ``d``, ``rows``, ``seed`` (the task generator's
seed), ``float64`` (default true: sweeps verify), ``weights``, ``data`` (a .npz; a relative path is
relative to the working directory, as on the command line)). Network keys: the network options
``subnets``, ``topology``, ``rgg`` and ``file`` (a network JSON: ``fedbound run``'s ``--network``);
an algorithm with ``network: required`` and no network gets its registry default.

Grid keys: any option of an algorithm of the SPEC (its registry name, e.g. ``local_steps``), ``seed``
(the run's seed: sampling and gradient noise; default 0), ``sigma`` (gradient-noise std, default 0)
and ``zip``: one object or a list of objects whose lists have one length and are paired element by
element. The cells are the product of the algorithms, the crossed lists and the zip groups, in the
SPEC's order; an option goes only to the algorithms that take it (cells that then coincide are one
cell), and every cell's options go through the algorithm's :meth:`AlgorithmSpec.check`, so a bad
grid value is refused before anything runs, naming the option.
"""
from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from fedbound.errors import InputTypeError, ValidationError, require
from fedbound.sweep import grid as grid_mod
from fedbound.validate import boolean, integer, json_file, known_names, number, one_of, parse_json
from fedbound.validate import seed as check_seed

TOP_KEYS = ("algorithm", "task", "network", "rounds", "grid", "batch")
RUN_KEYS = ("seed", "sigma")
#: the most cells one SPEC may expand to, and the most rounds of a cell
MAX_CELLS = 100_000
MAX_ROUNDS = 1_000_000


def _object(name: str, value) -> dict:
    if not isinstance(value, dict):
        raise InputTypeError(f"{name} must be a JSON object, got {type(value).__name__}")
    return value


def _text(name: str, value) -> str:
    if not isinstance(value, str):
        raise InputTypeError(f"{name} must be a string, got {value!r:.60}")
    return value


def _task(raw) -> dict:
    """The task object: a preset's name and its options, checked by the preset."""
    from fedbound.tasks.registry import TASKS

    raw = dict(_object("task", raw))
    require("name" in raw, "task needs a name (one of " + ", ".join(TASKS.names()) + ")")
    name = one_of("task name", raw.pop("name"), TASKS.names())
    spec = TASKS.get(name)
    if "float64" in {o.name for o in spec.options}:
        raw.setdefault("float64", True)
    try:
        options = spec.check(raw)
    except (ValidationError, InputTypeError) as exc:
        raise type(exc)(f"task {exc}") from None
    return {"name": name, **{k: options[k] for k in raw if k in options}}   # the given keys: the store's identity


def _network(raw) -> dict | None:
    """The network object: the network options (``file`` is ``fedbound run``'s --network)."""
    from fedbound.network.build import NETWORK

    if raw is None:
        return None
    raw = dict(_object("network", raw))
    known_names("network key", raw, ("file",) + tuple(o.name for o in NETWORK.options if o.name != "network"))
    if "file" in raw:
        raw["network"] = _text("network file", raw.pop("file"))
    try:
        options = NETWORK.check(raw)
    except (ValidationError, InputTypeError) as exc:
        raise type(exc)(f"network {exc}") from None
    if "network" in options:
        options["file"] = options.pop("network")
    return options


def _run_value(key: str, value):
    if key == "seed":
        return check_seed(value, "grid seed")
    return number("grid sigma", value, low=0.0)


@dataclass(frozen=True)
class Cell:
    """One run of the sweep: ``algorithm`` with its checked ``options`` (registry names, defaults
    filled in), the run's ``seed`` and the gradient-noise ``sigma``."""

    algorithm: str
    options: dict
    seed: int
    sigma: float

    @property
    def config(self) -> str:
        """The configuration (everything but the seed) as canonical JSON."""
        return json.dumps({"algorithm": self.algorithm, "options": self.options, "sigma": self.sigma},
                          sort_keys=True)

    @property
    def key(self) -> str:
        """The cell's identity as canonical JSON."""
        return json.dumps({"algorithm": self.algorithm, "options": self.options, "seed": self.seed,
                           "sigma": self.sigma}, sort_keys=True)

    @staticmethod
    def from_key(key: str) -> "Cell":
        """The cell of a stored ``key``, refused unless it is one :attr:`key` writes: exactly its four
        fields, a registered algorithm whose check leaves the options as they are (no foreign or
        missing option), a valid seed and sigma."""
        from fedbound.algorithms import registry

        raw = parse_json("cell key", key)
        require(isinstance(raw, dict) and set(raw) == {"algorithm", "options", "seed", "sigma"},
                f"a cell key has the fields algorithm, options, seed and sigma, got {key:.120}")
        name = one_of("cell algorithm", raw["algorithm"], registry.names())
        options = _object("cell options", raw["options"])
        require(registry.get(name).check(options) == options,
                f"cell {key:.120} has options that {name} does not take as they are")
        cell = Cell(name, options, check_seed(raw["seed"], "cell seed"), number("cell sigma", raw["sigma"], low=0.0))
        require(cell.key == key, f"cell key {key:.120} is not in canonical form")
        return cell


@dataclass(frozen=True)
class Spec:
    """A validated SPEC (module doc). ``canonical`` is its identity in the results store."""

    algorithms: tuple[str, ...]
    task: dict
    network: dict | None
    rounds: int
    grid: dict
    batch: bool = True

    @property
    def canonical(self) -> str:
        return json.dumps({"algorithm": list(self.algorithms), "task": self.task,
                           "network": self.network, "rounds": self.rounds, "grid": self.grid,
                           "batch": self.batch}, sort_keys=True)

    @property
    def problem(self) -> str:
        """What must stay fixed for ``--extend``: the task, network and rounds, canonical JSON."""
        return json.dumps({"task": self.task, "network": self.network, "rounds": self.rounds},
                          sort_keys=True)

    def build_problem(self, device: Literal["cpu", "cuda"] = "cpu"):
        """The :class:`~fedbound.algorithms.problem.Problem` of the task and network, its task on
        ``device``."""
        from fedbound.algorithms.problem import Problem

        task = dict(self.task)
        network = dict(self.network or {})
        if "file" in network:
            network["network"] = network.pop("file")
        return Problem(task.pop("name"), task, network, device=device)

    @cached_property
    def cells(self) -> tuple[Cell, ...]:
        return tuple(expand(self))


def parse(raw: dict) -> Spec:
    """A :class:`Spec` from a decoded JSON object; every problem is a one-line FedboundError."""
    from fedbound.algorithms import registry

    raw = _object("the sweep spec", raw)
    known_names("sweep spec key", raw, TOP_KEYS)
    for key in ("algorithm", "task", "rounds"):
        require(key in raw, f"the sweep spec needs {key!r}")
    algorithms = raw["algorithm"] if isinstance(raw["algorithm"], list) else [raw["algorithm"]]
    require(len(algorithms) >= 1, "algorithm must name at least one algorithm, got []")
    algorithms = tuple(dict.fromkeys(one_of("algorithm", a, registry.names()) for a in algorithms))
    rounds = integer("rounds", raw["rounds"], low=0, high=MAX_ROUNDS)
    options = {name for a in algorithms for o in registry.get(a).options for name in (o.name, *o.aliases)}
    clean = grid_mod.normalize(_object("grid", raw.get("grid", {})), options | set(RUN_KEYS),
                               lambda key, x: _run_value(key, x) if key in RUN_KEYS else x)
    spec = Spec(algorithms, _task(raw["task"]), _network(raw.get("network")), rounds, clean,
                boolean("batch", raw.get("batch", True)))
    require(spec.network is None or any(registry.get(a).network != "none" for a in algorithms),
            f"network is given but none of {', '.join(algorithms)} takes a network")
    require(len(spec.cells) >= 1, "the sweep spec has no cells")   # every cell's options checked now
    _check_on_problem(spec)
    return spec


def _check_on_problem(spec: Spec) -> None:
    """The options that depend on the task and network (participants per round within the task's
    clients, per subnet within each subnet), checked on the built problem for each configuration,
    so that a SPEC is refused before anything runs, naming the option."""
    problem = spec.build_problem()
    for cell in {c.config: c for c in spec.cells}.values():
        try:
            problem.check(cell.algorithm, cell.options)
        except (ValidationError, InputTypeError) as exc:
            raise type(exc)(f"grid for {cell.algorithm}: {exc}") from None


def load(path: str | os.PathLike) -> Spec:
    """The validated SPEC of the JSON file ``path``."""
    return parse(json_file("sweep spec", path))


def loads(text: str) -> Spec:
    return parse(parse_json("sweep spec", text))


def _taken_by(algo, values: dict) -> dict:
    """The grid values ``algo`` takes, by option name or deprecated alias. An old spelling beside
    the new name (a SPEC that mixes families: "gamma" for SD-GT beside "lr" for FedAvg, written
    before the two became "lr") is the value for the algorithms whose option it was."""
    out = {}
    for o in algo.options:
        old = [a for a in o.aliases if a in values]
        if old:
            out[old[0]] = values[old[0]]
        elif o.name in values:
            out[o.name] = values[o.name]
    return out


def expand(spec: Spec) -> list[Cell]:
    """The cells of ``spec`` in order (module doc), options checked by the registry, duplicates
    removed; at most :data:`MAX_CELLS`."""
    from fedbound.algorithms import registry

    total = len(spec.algorithms) * grid_mod.size(spec.grid)
    require(total <= MAX_CELLS, f"the grid expands to {total} cells, more than {MAX_CELLS}")
    axes = grid_mod.axes(spec.grid)
    cells: dict[str, Cell] = {}
    for name in spec.algorithms:
        algo = registry.get(name)
        for combo in itertools.product(*axes):
            values = {k: v for part in combo for k, v in part.items()}
            try:
                options = algo.check(_taken_by(algo, values))
            except (ValidationError, InputTypeError) as exc:
                raise type(exc)(f"grid for {name}: {exc}") from None
            cell = Cell(name, options, values.get("seed", 0), float(values.get("sigma", 0.0)))
            cells.setdefault(cell.key, cell)
    return list(cells.values())


__all__ = ["Spec", "Cell", "parse", "load", "loads", "expand"]
