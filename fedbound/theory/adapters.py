r"""The contract of the per-paper adapters, the checks they share, and the dispatch from an
algorithm's registered name to the adapter of the paper whose theorems cover it.

A paper's adapter, ``fedbound.theory.<paper>.adapter``, maps a run to the constants of that
paper's main results, named by the paper's own symbols (DESIGN.md, "adapter.py maps a run (task,
network, options) to the paper's constants")::

    constants(task, network, algorithm: str, options: dict) -> dict

* ``task``: a fedbound Task (its exact constants L, mu, sigma^2, G, heterogeneity measures, x0, f*);
* ``network``: a :class:`fedbound.network.Network`, or None where the algorithm takes none or has
  a default one;
* ``algorithm``: the registered name (``fedbound list algorithms``), one of the adapter's
  ``ALGORITHMS``;
* ``options``: the algorithm's options by the registry's names (``lr``, ``local_steps``, ...;
  deprecated spellings such as ``gamma`` are refused: pass the options through
  ``fedbound.algorithms.registry.get(name).check(options)`` first). An absent option, or None,
  takes the algorithm's default, which each adapter lists in ``DEFAULTS`` (per algorithm; the
  theory does not import the algorithms, so tests/theory/test_adapters.py checks the lists against
  the registry and the constructors). ``IGNORED`` lists the options that do not enter any
  constant; any other name is an error.

The result is a dict of Python floats and ints keyed by the paper's short names, ready for
``fedbound.theory.get(id).evaluate(variant, **constants, <horizon>=...)`` (a result accepts and
ignores the constants of its paper it does not use). Not included is what the run does not fix:
the horizon (T, R), initial values a theorem is evaluated at when they are measured (SD-GT's E1,
Lyap1, FedNova's Delta of the surrogate), a paper's absolute constants (AFGA's C, C1..C4). A
constant the task cannot supply (None) is a :class:`~fedbound.errors.ValidationError` naming it; an
infinite one (G of a task with Gaussian noise) is returned as inf, and the result's domain check
says that the assumption fails. A run that no theorem of the paper covers (an option the analysis
does not include) is refused with the reason.

:func:`adapter` and :func:`constants` dispatch on the algorithm's name, so that a grid of runs of
several algorithms (a sweep's cells, :func:`fedbound.verify.setting.cell_constants`) gets each
run's constants from one call.

Two functions an adapter may define besides (issue 33, item 5; :func:`explain` and
:func:`check_given` dispatch to them and say something generic where an adapter has none)::

    explain(task, network, algorithm, options, name, value) -> str
    check_given(task, network, algorithm, options, given: dict) -> dict

``explain``: why the constant ``name`` came out as ``value`` for this run and how a user supplies
it instead (FedNova's kappa^2 is inf at the smallest beta^2 where the clients' Hessians differ:
give a larger beta2); ``check_given``: the constants ``given`` by a user checked against the task
where the task can compute them (a ValidationError where the task contradicts one: a kappa^2 below
the task's at that beta^2 would make Assumption 3 false), returning the constants that follow
from them (kappa^2 at a given beta^2).
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Iterable

from fedbound.errors import UnknownNameError, ValidationError, require
from fedbound.network.subnets import Network
from fedbound.papers import PAPERS as PAPER_REGISTRY
from fedbound.argtypes import TaskArg as Task   # checked without importing torch
from fedbound.theory.argtypes import ExtendedArray
from fedbound.validate import known_names, suggest


class _Required:
    """The default of an option the algorithm requires (``lr`` of the federated algorithms)."""

    def __repr__(self) -> str:
        return "REQUIRED"


#: marks an option without a default in an adapter's ``DEFAULTS``
REQUIRED = _Required()


def run_options(paper: str, algorithm: str, options: dict[str, object], defaults: dict[str, object],
                ignored: Iterable[str] = ()) -> dict:
    """``options`` of ``algorithm`` completed by ``defaults`` (option -> default, or
    :data:`REQUIRED`); every name must be in ``defaults`` or ``ignored`` (did-you-mean otherwise),
    every required one given. ``paper`` names the theory in the messages."""
    known_names(f"option of {algorithm} for {paper}'s constants", options, (*defaults, *ignored))
    out = {**defaults, **{k: v for k, v in options.items() if v is not None}}
    missing = [name for name, value in out.items() if value is REQUIRED]
    require(not missing, f"{paper}'s constants of {algorithm} need the option(s) {', '.join(missing)}")
    return out


def covered(paper: str, algorithm: str, algorithms: Iterable[str]) -> str:
    """``algorithm`` if ``paper``'s theorems cover it (one of ``algorithms``), else
    :class:`~fedbound.errors.UnknownNameError` naming the ones they cover."""
    if algorithm not in algorithms:
        raise UnknownNameError(f"{paper}'s theorems do not cover the algorithm {algorithm!r}"
                               f"{suggest(str(algorithm), algorithms)} (they cover: "
                               f"{', '.join(algorithms)})")
    return algorithm


def known(paper: str, task: Task, name: str, value: ExtendedArray | None):
    """``value`` (a constant of ``task``), or a ValidationError saying that ``paper``'s results
    need ``name`` and the task does not know it (None)."""
    require(value is not None, f"{paper}'s results need {name}; the {type(task).__name__} task does "
                               f"not know it")
    return value


def initial_gap(paper: str, task: Task) -> float:
    """f(x0) - f* of ``task`` at its default initial point (where a run starts unless given one)."""
    f_star = known(paper, task, "f* (for the initial gap f(x0) - f*)", task.f_star)
    return float(task.loss(task.x0)) - float(f_star)


def papers() -> tuple[str, ...]:
    """The registered papers with an adapter (:class:`fedbound.papers.PaperAudit` ``adapter``),
    fedbound's own and the plugins'."""
    return tuple(p.name for p in PAPER_REGISTRY.entries() if p.adapter is not None)


def paper_adapter(paper: str) -> ModuleType:
    """The adapter module of the registered ``paper`` (an error where it declares none)."""
    entry = PAPER_REGISTRY.get(paper)
    require(entry.adapter is not None, f"paper {paper} declares no adapter (no theorem of it maps "
                                       f"runs to constants)")
    try:
        module = importlib.import_module(entry.adapter)
    except ImportError as exc:
        raise ValidationError(f"paper {paper}: its adapter {entry.adapter} cannot be imported: "
                              f"{exc}") from None
    for attribute in ("ALGORITHMS", "constants"):
        require(hasattr(module, attribute), f"paper {paper}: its adapter {entry.adapter} must "
                                            f"define {attribute} (fedbound.theory.adapters)")
    return module


def adapter(algorithm: str) -> ModuleType:
    """The adapter module of the paper whose theorems cover ``algorithm`` (a registered name)."""
    names = []
    for paper in papers():
        module = paper_adapter(paper)
        if algorithm in module.ALGORITHMS:
            return module
        names.extend(module.ALGORITHMS)
    raise UnknownNameError(f"no paper's theorems cover the algorithm {algorithm!r}"
                           f"{suggest(str(algorithm), names)} (covered: {', '.join(names)})")


def constants(task: Task, network: Network | None, algorithm: str, options: dict[str, object]) -> dict:
    """The constants of ``algorithm``'s run on ``task`` over ``network`` with ``options``, from the
    adapter of the paper that covers it (:func:`adapter`; module doc)."""
    return adapter(algorithm).constants(task, network, algorithm, options)


def explain(task: Task, network: Network | None, algorithm: str, options: dict[str, object], name: str,
            value: object) -> str:
    """Why the constant ``name`` of ``algorithm``'s run came out as ``value`` and how to supply it
    instead (module doc): the adapter's own ``explain`` where it defines one."""
    module = adapter(algorithm)
    own = getattr(module, "explain", None)
    text = own(task, network, algorithm, options, name, value) if callable(own) else ""
    return text or (f"{module.__name__} derives it from the task and the options; give it in "
                    f"constants= to use another value")


def check_given(task: Task, network: Network | None, algorithm: str, options: dict[str, object],
                given: dict) -> dict:
    """The user's constants ``given`` checked against ``algorithm``'s run on ``task`` where the
    adapter can compute them, and the constants that follow from them (module doc; ``{}`` for an
    adapter without ``check_given``)."""
    own = getattr(adapter(algorithm), "check_given", None)
    return dict(own(task, network, algorithm, options, dict(given)) or {}) if callable(own) else {}


__all__ = ["papers", "paper_adapter", "REQUIRED", "run_options", "covered", "known", "initial_gap", "adapter",
           "constants", "explain", "check_given"]
