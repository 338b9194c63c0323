"""A run's problem from options: the task of a task preset (:mod:`fedbound.tasks.registry`), the
network of each algorithm (:mod:`fedbound.network.build`, with the algorithm's registry default) and
the algorithms by name (:mod:`fedbound.algorithms.registry`). ``fedbound run``, ``fedbound verify``
and the sweeps build their runs here, so that the same options give the same run everywhere.

    >>> from fedbound.algorithms.problem import Problem
    >>> problem = Problem("quadratic", {"n": 6, "d": 3, "float64": True})
    >>> alg = problem.algorithm("sdgt", {"lr": 0.05, "local_steps": 2}, seed=1)
    >>> alg.name, problem.network("sdgt").S
    ('SD-GT', 3)
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from fedbound.algorithms.base import Algorithm
from fedbound.algorithms.registry import build, get
from fedbound.argtypes import Count, NonNegative, NonNegativeInt, Seed
from fedbound.errors import require
from fedbound.network import Network
from fedbound.network.build import NETWORK, build_network, network_file_size
from fedbound.resources import require_run_memory
from fedbound.tasks.registry import TASKS


class Problem:
    """The task (noise-free) of ``task`` with ``task_options``, the networks of ``network_options``
    (validated now) and the algorithms on them. ``n`` is the clients when the task options do not
    give them (default: the network file's, else the preset's); ``device``: where the task's data
    lives and the runs compute."""

    def __init__(self, task: str, task_options: dict, network_options: dict | None = None,
                 n: Count | None = None, device: Literal["cpu", "cuda"] = "cpu"):
        spec = TASKS.get(task)
        self.network_options = NETWORK.check(network_options or {})
        options = spec.check(task_options)
        if options.get("n") is None and options.get("data") is None and "n" in {o.name for o in spec.options}:
            file = self.network_options.get("network")
            n = n if n is not None else (network_file_size(file) if file is not None else None)
            if n is not None:
                options["n"] = n
        self.task_name, self.task_options = task, options
        self.task = spec.build(**options)
        if device != "cpu":   # the algorithms and runs follow the task (fedbound.tasks.Task.to)
            self.task = self.task.to(device)
        self._networks: dict = {}

    def network(self, name: str) -> Network | None:
        """The network of algorithm ``name``: None for an algorithm without one, else the one the
        options give, or the algorithm's default subnets."""
        algo = get(name)
        if algo.network == "none":
            return None
        if algo.default_subnets not in self._networks:
            self._networks[algo.default_subnets] = build_network(
                self.task.n, seed=self.task_options.get("seed", 0),
                default_subnets=algo.default_subnets, **self.network_options)
        return self._networks[algo.default_subnets]

    def check(self, name: str, options: dict, flags: bool = False) -> None:
        """The options of algorithm ``name`` that depend on the problem, checked without building the
        algorithm: ``clients_per_round`` within the task's clients, ``clients_per_subnet`` within
        every subnet (``flags``: the message names its flag)."""
        def label(option: str) -> str:
            return "--" + option.replace("_", "-") if flags else option

        k = options.get("clients_per_round")
        if k is not None:   # worded as the registry's own check, which the build repeats
            require(1 <= k <= self.task.n, f"clients_per_round must be an integer in [1, {self.task.n}] "
                                           f"(the task's n clients), got {k}")
        h = options.get("clients_per_subnet")
        if h is not None:
            network = self.network(name)
            top = self.task.n if network is None else int(network.m.min())
            where = "n" if network is None else "min_s m_s"
            require(all(1 <= v <= top for v in np.atleast_1d(h)),
                    f"{label('clients_per_subnet')} must be in [1, {where} = {top}] (clients sampled "
                    f"per subnet), got {h}")

    def algorithm(self, name: str, options: dict, *, seed: Seed = 0, sigma: NonNegative = 0.0,
                  rounds: NonNegativeInt | None = None, flags: bool = False) -> Algorithm:
        """The algorithm ``name`` with ``options`` (by option name) on the task with gradient noise
        of std ``sigma`` (an algorithm without a network ignores the network options); ``rounds``
        given: refused up front if the run's memory exceeds the budget. ``clients_per_subnet`` is
        checked against the network (``flags``: the message names the flag)."""
        self.check(name, options, flags)
        if rounds is not None:
            require_run_memory(f"run {name}", rounds, self.task.n, self.task.d)
        task = self.task.with_noise(sigma) if sigma > 0 else self.task
        return build(name, task, self.network(name), seed=seed, **options)


__all__ = ["Problem"]
