r"""SD-GT's adapter: a run of SD-GT (task, network, options) mapped to the constants of the SD-GT
results (seed 003_3166d581b98362e1.txt; papers/sdgt.md 1.2, 1.3, 3; the contract is
:mod:`fedbound.theory.adapters`).

=========  ==================================================  =========================================
constant   from the run                                         source
=========  ==================================================  =========================================
L, mu      the task's per-client smoothness and strong          Assumptions 1, 4 [L218-L221, L266-L270]
           convexity (each f_i)
sigma      sqrt of the task's gradient-noise variance sigma^2   Assumption 3 [L228-L231]
p          min_s (1 - beta_s^2), beta_s = (m_s - h_s)/m_s,      [L242]; sdgt.md 1.3
           h_s = ``clients_per_subnet`` (default m_s: all)
q          min_s rho_s, the tight rho_s = 1 - ||W_s - J_s||_2^2  Assumption 2 [L223-L226], [L242];
           of the network's subnets                             sdgt.md 1.2 (the paper gives no formula)
n          the task's clients                                   (1) [L18]
K          ``local_steps`` (D2D rounds per global round)        Alg. 1 [L99]
gamma      ``lr`` (the step size of every local step)           Alg. 1
=========  ==================================================  =========================================

Defaults (the registry's and SD-GT's constructor's): ``lr`` 0.01, ``local_steps`` 5,
``clients_per_subnet`` all clients of each subnet. The horizon T and the measured initial values
(E1, R, Lyap1) are the caller's.

>>> from fedbound.network import Network
>>> from fedbound.tasks import Quadratic
>>> task = Quadratic.generate(6, 3, kappa=4.0, mu=0.5, seed=0)
>>> k = constants(task, Network.from_topology("complete", 2, 3), "sdgt",
...               {"lr": 0.05, "local_steps": 2, "clients_per_subnet": 1})
>>> round(k["p"], 4), round(k["q"], 4), k["K"], k["gamma"]
(0.5556, 1.0, 2, 0.05)
"""
from __future__ import annotations

import math

from fedbound import validate
from fedbound.errors import require
from fedbound.network.sampling import p_from_h
from fedbound.network.subnets import Network
from fedbound.argtypes import TaskArg as Task   # checked without importing torch
from fedbound.theory.adapters import covered, known, run_options

PAPER = "SD-GT"
#: the registered algorithms SD-GT's theorems analyse
ALGORITHMS = ("sdgt",)
#: algorithm -> option -> default (None: every client of each subnet)
DEFAULTS = {"sdgt": {"lr": 0.01, "local_steps": 5, "clients_per_subnet": None}}
#: algorithm -> options that do not enter the constants
IGNORED = {"sdgt": ()}


def constants(task: Task, network: Network | None, algorithm: str,
              options: dict[str, object]) -> dict:
    """{L, mu, sigma, p, q, n, K, gamma} of the run (module doc)."""
    covered(PAPER, algorithm, ALGORITHMS)
    opts = run_options(PAPER, algorithm, options, DEFAULTS[algorithm], IGNORED[algorithm])
    require(network is not None, "SD-GT's constants need the run's network (q, and p from h_s)")
    require(network.n == task.n, f"the network has {network.n} clients but the task has n = {task.n}")
    L = known(PAPER, task, "L (Assumption 1)", task.L)
    mu = known(PAPER, task, "mu (Assumption 4)", task.mu)
    sigma2 = known(PAPER, task, "sigma^2 (Assumption 3)", task.sigma2)
    h = network.m if opts["clients_per_subnet"] is None else opts["clients_per_subnet"]
    return {"L": float(L), "mu": float(mu), "sigma": math.sqrt(float(sigma2)),
            "p": p_from_h(h, network.m), "q": float(network.q), "n": int(task.n),
            "K": validate.integer("local_steps", opts["local_steps"], low=1),
            "gamma": validate.number("lr", opts["lr"], low=0.0, low_open=True)}


__all__ = ["PAPER", "ALGORITHMS", "DEFAULTS", "IGNORED", "constants"]
