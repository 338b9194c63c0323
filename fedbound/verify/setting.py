r"""The theory constants of a concrete SD-GT setting (task, network, K, gamma, sampling).

Maps what a run is made of to the constants the SD-GT results are written in (seed 003 [L242],
papers/sdgt.md 1.3, 1.7, 3):

* L, mu: the task's per-client smoothness and strong convexity (Assumptions 1 and 4, each f_i);
* sigma: the square root of the task's gradient-noise variance sigma^2 (Assumption 3);
* p = min_s (1 - beta_s^2), beta_s = (m_s - h_s)/m_s (sampling); q = min_s rho_s with the tight
  rho_s = 1 - ||W_s - J_s||_2^2 (mixing, Assumption 2);
* n, K, gamma as run.
"""
from __future__ import annotations

import math

from fedbound.errors import require
from fedbound.network.sampling import p_from_h


def sdgt_constants(task, network, *, K: int, gamma: float, h=None) -> dict[str, float]:
    """Constants {L, mu, sigma, p, q, n, K, gamma} of SD-GT on ``task`` over ``network`` with
    per-subnet sample sizes ``h`` (default full participation)."""
    require(task.L is not None and task.mu is not None,
            "the SD-GT results need a task with known L and mu (e.g. a quadratic or least squares)")
    require(task.sigma2 is not None, "the SD-GT results need a task with known sigma^2")
    h = network.m if h is None else h
    return {"L": float(task.L), "mu": float(task.mu), "sigma": math.sqrt(float(task.sigma2)),
            "p": p_from_h(h, network.m), "q": float(network.q), "n": int(task.n), "K": int(K),
            "gamma": float(gamma)}


__all__ = ["sdgt_constants"]
