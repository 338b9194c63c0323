"""A fast exact route to the continuous optimum of (31): nested 1-D convex minimization.

Structure (sdgt.md 5.4): for fixed p the cheapest feasible sampling is
u_s(p) = max(1 - sqrt(1 - p), 1/m_s), so (31) reduces to phi(K, p) =
J(K, p, u(p)) (:func:`fedbound.control.sdgt.objective.reduced_objective`). In log variables
(kappa = log K, pi = log p, upsilon_s = log u_s) the GP of :mod:`fedbound.control.sdgt.gp` is jointly
convex; partial minimization keeps convexity, so

* for fixed p, K -> J is strictly convex and its minimizer on [1, K_cap] is the root of the
  stationarity equation (118) [L1226] (:func:`fedbound.control.sdgt.objective.k_stationary_root`)
  clipped to [1, K_cap] (K_cap itself when sum_s E_s^D2D = 0);
* psi(pi) = min_K phi(e^kappa, e^pi) is convex in pi on [log p_floor, 0], where
  p_floor = min_s (2 m_s - 1)/m_s^2 (below it every u_s sits at 1/m_s and J only falls with p).

psi is minimized by bounded Brent (``scipy.optimize.minimize_scalar``, xatol 1e-12 in log p) and
both end points are evaluated too (the optimum is often p = 1, where u(p) has infinite slope).
Agreement with the GP is checked by the tests and by benchmarks/bench_controller.py.
"""
from __future__ import annotations

import math
import time

import numpy as np
from scipy.optimize import minimize_scalar

from fedbound.control.sdgt.gp import ContinuousSolution
from fedbound.control.sdgt.objective import ControlProblem, best_u, constraint_violation, k_minimizer, objective


def solve_reduced(problem: ControlProblem) -> ContinuousSolution:
    """Continuous optimum of (31) by the nested 1-D route of the module docstring."""
    start = time.perf_counter()
    m = problem.spec.m

    def value(log_p: float) -> float:
        p = math.exp(log_p)
        return float(objective(k_minimizer(p, problem), p, best_u(p, m), problem))

    lo = math.log(problem.p_floor)
    candidates = [0.0, lo]
    if lo < 0.0:
        res = minimize_scalar(value, bounds=(lo, 0.0), method="bounded",
                              options={"xatol": 1e-12, "maxiter": 500})
        candidates.append(float(res.x))
    log_p = min(candidates, key=value)
    p = math.exp(log_p)
    K = k_minimizer(p, problem)
    u = best_u(p, m)
    return ContinuousSolution(K=K, p=p, u=np.asarray(u, dtype=float),
                              value=float(objective(K, p, u, problem)), method="reduced",
                              status="optimal", max_violation=constraint_violation(K, p, u, problem),
                              seconds=time.perf_counter() - start,
                              settings="brent xatol=1e-12 on log p, brentq on log K")
