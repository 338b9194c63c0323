r"""FedNova's adapter: a run (task, algorithm name, algorithm options) mapped to the constants of
FedNova's results (seed 001_530825e753327090.txt; papers/fednova.md 2.2-2.6, 3 (d), 4.12).

* :func:`local_solver`: the local solver of the paper's table (sec. 2.3) that the options describe
  (``mu``: proximal, ``momentum``, ``lr_decay``, else SGD) and its accumulation vectors a_i;
* :func:`surrogate_weights`: (tau_eff, w) of the objective F~ = sum_i w_i F_i the run optimizes
  under full participation and fixed local steps: for weighted-mean averaging the implicit ones of
  (6) [L115-L116] (tau_eff = sum_i p_i ||a_i||_1, w_i = p_i ||a_i||_1 / tau_eff), for FedNova w = p
  and the value of its tau_eff policy (eq. (12) [L198-L202], App. H [L961]);
* :func:`assumption3`: beta^2 and kappa^2 of Assumption 3 [L149] at those weights (the proofs use
  Assumption 3 only there, fednova.md 3 (d)), computed by the task (exact for quadratic tasks), and
  chi^2_{p||w} (L175);
* :func:`constants`: the vector inputs (p_i, tau_i) and scalars (L, sigma, beta2, kappa2, eta) of
  Theorems 1-2 for a run.

Only numbers and names cross this boundary (task arrays, option values): the theory never imports
the algorithms.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from fedbound.errors import require
from fedbound.theory.fednova.accumulation import accumulation_vector, implicit_weights
from fedbound.validate import number

#: the algorithms whose round is normalized averaging (eq. (12)); the others average the updates
NORMALIZED = ("fednova",)


def local_solver(options: dict) -> tuple[str, dict]:
    """(kind, parameters) of :func:`~fedbound.theory.fednova.accumulation.accumulation_vector` for
    the local solver of the options ``lr``, ``mu`` (proximal, alpha = lr mu), ``momentum`` (rho) or
    ``lr_decay`` (gamma); SGD without them."""
    lr = options["lr"]
    if options.get("mu"):
        alpha = lr * options["mu"]
        require(0 < alpha <= 1, f"the proximal solver's accumulation needs 0 < lr mu <= 1, got {alpha:g}")
        return "prox", {"alpha": alpha}
    if options.get("momentum"):
        return "momentum", {"rho": options["momentum"]}
    if options.get("lr_decay") is not None and options["lr_decay"] != 1.0:
        return "decay", {"gamma": options["lr_decay"]}
    return "sgd", {}


def _steps(task, options: dict) -> np.ndarray:
    tau = np.atleast_1d(np.asarray(options.get("local_steps", 1), dtype=np.int64))
    require(tau.size in (1, task.n), f"local_steps needs one count or one per client (n = {task.n}), "
                                     f"got {tau.size}")
    return np.broadcast_to(tau, (task.n,)).copy()


def surrogate_weights(task, algorithm: str, options: dict) -> tuple[float, np.ndarray]:
    """(tau_eff, w) of the surrogate objective of ``algorithm`` with ``options`` on ``task``
    (module doc)."""
    p = task.weights.detach().to(torch.float64).numpy()
    tau = _steps(task, options)
    kind, params = local_solver(options)
    norms = np.array([float(np.sum(accumulation_vector(kind, int(t), **params))) for t in tau])
    if algorithm not in NORMALIZED:
        tau_eff, w = implicit_weights(p, norms)
        return float(tau_eff), np.asarray(w)
    policy = options.get("tau_eff", "accumulation")
    if not isinstance(policy, str):
        return float(policy), p
    q = norms if policy == "accumulation" else tau.astype(np.float64)
    # the round's own arithmetic (Normalized.factors): per distinct norm v, (sum_k w_k q_k / v) / sum w
    return float(float(np.sum(p * (q / norms[0]))) / float(np.sum(p)) * norms[0]), p


def assumption3(task, algorithm: str, options: dict, beta2: float | None = None) -> dict:
    """beta^2, kappa^2, w, tau_eff and chi^2_{p||w} of the run (module doc); ``beta2`` defaults to
    the smallest admissible value (None where the task cannot compute it)."""
    tau_eff, w = surrogate_weights(task, algorithm, options)
    beta2 = task.beta2_min(w) if beta2 is None else number("beta2", beta2, low=1.0)
    kappa2 = None if beta2 is None else task.kappa2(w, beta2)
    p = task.weights.detach().to(torch.float64).numpy()
    chi2 = float(np.sum((p - w) ** 2 / w)) if np.all(w > 0) else float("inf")
    return {"beta2": beta2, "kappa2": kappa2, "w": w, "tau_eff": tau_eff, "chi2": chi2}


def constants(task, network, algorithm: str, options: dict) -> dict:
    """The constants of Theorems 1-2 for a run: p_i, tau_i (vector inputs), L, sigma, beta2,
    kappa2 at the surrogate weights, eta = lr (``network`` is not used: FedNova has none)."""
    require(task.L is not None, "FedNova's theorems need a task with a known L")
    a3 = assumption3(task, algorithm, options)
    out = {"p_i": task.weights.detach().to(torch.float64).numpy(), "tau_i": _steps(task, options),
           "L": float(task.L), "eta": float(options["lr"]), "beta2": a3["beta2"], "kappa2": a3["kappa2"]}
    if task.sigma2 is not None:
        out["sigma"] = math.sqrt(float(task.sigma2))
    return out


__all__ = ["NORMALIZED", "local_solver", "surrogate_weights", "assumption3", "constants"]
