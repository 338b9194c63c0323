"""Lower bounds on a worst case from explicit quadratic instances (issue 13).

The instance f_i(x) = (1/2) x^T diag(h_i) x + g_i^T x (:class:`fedbound.pep.numeric.QuadraticEnv`)
is a member of the PEP's function class, so the algorithm's metric on it, scaled so that every
condition holds, is a lower bound on the worst case. :func:`search` maximizes it over the family
of the method (h_i in [h_low, L]^d, one h shared by all clients where the method says so, g = 0
where zeta = 0, the spectral parameter lam of a mixing class) in dimension ``d``: random starts,
then a bounded Powell polish of the best ones; deterministic for a seed.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from fedbound.pep.numeric import QuadraticEnv


def _instance(theta: np.ndarray, n: int, d: int, fam: dict, L: float, weights) -> QuadraticEnv:
    rows = 1 if fam.get("shared_h") else n
    at = rows * d
    h = fam["h_low"] + (L - fam["h_low"]) * np.clip(theta[:at], 0, 1).reshape(rows, d)
    h = np.broadcast_to(h, (n, d))
    if fam.get("zero_g"):
        g = np.zeros((n, d))
    else:
        g = (2 * theta[at:at + n * d] - 1).reshape(n, d) * 4
        g = g - (np.asarray(weights) @ g)[None, :]
        at += n * d
    x0 = 2 * theta[at:at + d] - 1
    at += d
    lam = None
    if fam.get("lam") is not None:
        lo, hi = fam["lam"]
        lam = lo + (hi - lo) * float(np.clip(theta[at], 0, 1))
    return QuadraticEnv(h, g, x0, lam=lam, weights=weights)


def _dim(n: int, d: int, fam: dict) -> int:
    return (1 if fam.get("shared_h") else n) * d + (0 if fam.get("zero_g") else n * d) + d + \
        (1 if fam.get("lam") is not None else 0)


def search(method, cfg: dict, d: int = 2, starts: int = 24, polish: int = 2, maxfev: int = 400,
           seed: int = 0) -> tuple[float, dict]:
    """(best lower bound, its instance as lists) for ``method`` at options ``cfg``."""
    setting = method.setting(cfg)
    n, L = setting["n"], setting["L"]
    weights = setting.get("weights") or [1.0 / n] * n
    fam = method.family(cfg)
    dim = _dim(n, d, fam)
    rng = np.random.default_rng(seed)

    def value(theta: np.ndarray) -> float:
        env = _instance(np.clip(theta, 0, 1), n, d, fam, L, weights)
        method.build(env, cfg)
        v = env.scaled_metric()
        return v if np.isfinite(v) else 0.0

    cand = np.vstack([rng.random((starts, dim)), rng.integers(0, 2, (starts, dim)).astype(float)])
    scores = np.array([value(t) for t in cand])
    best_theta, best = cand[np.argmax(scores)], float(scores.max())
    for i in np.argsort(-scores)[:polish]:
        res = minimize(lambda t: -value(t), cand[i], method="Powell", bounds=[(0, 1)] * dim,
                       options={"maxfev": maxfev, "xtol": 1e-6, "ftol": 1e-10})
        if -res.fun > best:
            best, best_theta = float(-res.fun), np.clip(res.x, 0, 1)
    env = _instance(best_theta, n, d, fam, L, weights)
    return best, {"h": env.h.tolist(), "g": env.g.tolist(), "x0": env.x0.tolist(), "lam": env.lam}
