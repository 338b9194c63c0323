r"""The theory constants of a run, from verify's side: the per-paper adapters
(:mod:`fedbound.theory.adapters`, ``fedbound.theory.<paper>.adapter``) applied to the runs verify and
the sweeps describe.

* :func:`run_constants`: the constants of ``algorithm`` with ``options`` (registry names; checked
  and completed by the registry here) on a :class:`~fedbound.algorithms.problem.Problem`'s task and
  network (the runs of ``fedbound run``, ``verify`` and ``sweep``), with gradient noise ``sigma``;
* :func:`cell_constants`: the same for a cell of a sweep SPEC (a :class:`fedbound.sweep.Cell` of a
  :class:`fedbound.sweep.Spec`: its algorithm, checked options and sigma), so that a sweep's
  measurements can be set against the theorem of each cell's paper;
* :func:`sdgt_constants`: deprecated; SD-GT's adapter with the paper's keywords K, gamma, h.

>>> from fedbound.algorithms.problem import Problem
>>> problem = Problem("quadratic", {"n": 6, "d": 3, "float64": True})
>>> k = run_constants(problem, "sdgt", {"lr": 0.05, "local_steps": 2}, sigma=0.1)
>>> k["K"], k["gamma"], round(k["sigma"], 12), k["n"]
(2, 0.05, 0.1, 6)
"""
from __future__ import annotations

import numpy as np

from fedbound.algorithms import registry
from fedbound.algorithms.problem import Problem
from fedbound.argtypes import Count, NonNegative, Positive
from fedbound.deprecation import deprecated
from fedbound.network import Network
from fedbound.sweep.spec import Cell, Spec
from fedbound.tasks import Task
from fedbound.theory import adapters
from fedbound.theory.sdgt import adapter as sdgt_adapter


def run_constants(problem: Problem, algorithm: str, options: dict, sigma: NonNegative = 0.0) -> dict:
    """The theorem constants of ``algorithm`` with ``options`` on ``problem`` (its task with
    gradient noise of std ``sigma``, and the algorithm's network), from the adapter of the paper
    that covers the algorithm (:func:`fedbound.theory.adapters.constants`)."""
    checked = registry.get(algorithm).check(options)
    task = problem.task.with_noise(sigma) if sigma > 0 else problem.task
    return adapters.constants(task, problem.network(algorithm), algorithm, checked)


def cell_constants(spec: Spec, cell: Cell, problem: Problem | None = None) -> dict:
    """:func:`run_constants` of one cell of a sweep ``spec`` (``problem``: the spec's
    :meth:`~fedbound.sweep.Spec.build_problem`, built here when not given; pass it for many cells)."""
    problem = spec.build_problem() if problem is None else problem
    return run_constants(problem, cell.algorithm, cell.options, cell.sigma)


def sdgt_constants(task: Task, network: Network, *, K: Count, gamma: Positive,
                   h: int | np.ndarray | None = None) -> dict[str, float]:
    """Deprecated: ``fedbound.theory.sdgt.adapter.constants(task, network, "sdgt", {"lr": gamma,
    "local_steps": K, "clients_per_subnet": h})``."""
    deprecated("fedbound.verify.sdgt_constants(task, network, K=, gamma=, h=)",
               'fedbound.theory.sdgt.adapter.constants(task, network, "sdgt", {"lr": gamma, '
               '"local_steps": K, "clients_per_subnet": h})')
    return sdgt_adapter.constants(task, network, "sdgt",
                                  {"lr": gamma, "local_steps": K, "clients_per_subnet": h})


__all__ = ["run_constants", "cell_constants", "sdgt_constants"]
