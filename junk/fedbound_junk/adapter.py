r"""The adapter of the paper ``junk``: a run of the algorithm ``junk`` (task, algorithm options)
mapped to the constants of Theorem 1 (``fedbound_junk.theory``), by the contract of
:mod:`fedbound.theory.adapters` (``fedbound verify junk`` and
:func:`fedbound.testing.assert_matches_theory` call it).

====== ==========================================================================================
L, mu  the task's smoothness and strong convexity (exact for quadratic and least-squares tasks)
sigma  the gradient noise's standard deviation, sqrt of the task's sigma^2
zeta2  sum_i p_i ||grad f_i(x*)||^2 at the task's minimizer x*
D      ||x_0 - x*||^2 at the task's initial point
gamma  ``lr``; K ``local_steps`` (one count for every client); beta ``server_momentum``;
       c ``clients_per_round`` (all n when not given); n the task's clients
====== ==========================================================================================
"""
from __future__ import annotations

import math

import torch

from fedbound.errors import require
from fedbound.theory.adapters import REQUIRED, covered, known, run_options

PAPER = "junk"
#: the registered algorithms Theorem 1 covers
ALGORITHMS = ("junk",)
#: algorithm -> option -> default (the constructor's; REQUIRED: no default)
DEFAULTS = {"junk": {"lr": REQUIRED, "local_steps": 1, "clients_per_round": None,
                      "server_momentum": 0.5}}
#: algorithm -> options that enter no constant
IGNORED = {"junk": ()}


def constants(task, network, algorithm: str, options: dict) -> dict:
    """Theorem 1's constants of ``algorithm`` with ``options`` on ``task`` (module doc)."""
    covered(PAPER, algorithm, ALGORITHMS)
    opts = run_options(PAPER, algorithm, options, DEFAULTS[algorithm], IGNORED[algorithm])
    steps = opts["local_steps"]
    require(isinstance(steps, int), f"Theorem 1 of {PAPER} takes one local_steps for every client, "
                                    f"got {steps!r}")
    x_star = known(PAPER, task, "x* (for zeta2)", task.x_star)
    return {"L": float(known(PAPER, task, "L", task.L)), "mu": float(known(PAPER, task, "mu", task.mu)),
            "sigma": math.sqrt(known(PAPER, task, "sigma^2", task.sigma2)),
            "zeta2": max(0.0, float(task.kappa2(at=x_star))),
            "D": float(torch.sum((task.x0.to(x_star.dtype) - x_star) ** 2)),
            "gamma": float(opts["lr"]), "K": steps, "beta": float(opts["server_momentum"]),
            "c": int(opts["clients_per_round"] or task.n), "n": task.n}
