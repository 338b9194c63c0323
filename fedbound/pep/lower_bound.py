"""Lower bounds on a worst case from explicit quadratic instances (issue 13).

The instance f_i(x) = (1/2) x^T diag(h_i) x + g_i^T x with sum_i w_i g_i = 0
(:class:`fedbound.pep.numeric.QuadraticEnv`) belongs to the PEP's function class, so the
algorithm's metric on it, scaled so that every condition holds, is a lower bound on the worst case.

For fixed curvatures h (and spectral parameter lam) every iterate is linear in v = (x0, g), so the
metric is a quadratic form v^T Q v and each condition v^T P_j v <= b_j. Q and the P_j are read off
one batched run of the algorithm on the basis vectors and their pairwise sums (polarization); the
inner maximum over v is then taken over the top generalized eigenvectors of (Q, sum_j t_j P_j/b_j)
for weights t on the simplex (each candidate scaled to feasibility: a valid instance; exact for one
condition, the S-lemma candidates for several, then polished on the sphere). :func:`search` maximizes that over h in
[h_low, L]^(n x d) (one row shared by all clients where the method says so) and lam: random
starts and a bounded Powell polish of the best; deterministic for a seed.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import eigh, null_space
from scipy.optimize import minimize

from fedbound.argtypes import Count, NonNegativeInt, Seed
from fedbound.pep.method import Method
from fedbound.pep.numeric import QuadraticEnv


class _Family:
    """Instances of a method's quadratic family in dimension d (module doc)."""

    def __init__(self, method, cfg: dict, d: int):
        setting = method.setting(cfg)
        self.method, self.cfg, self.d = method, cfg, d
        self.n, self.L = setting["n"], setting["L"]
        self.weights = np.asarray(setting.get("weights") or [1.0 / self.n] * self.n)
        self.fam = method.family(cfg)
        self.rows = 1 if self.fam.get("shared_h") else self.n
        self.centered = np.zeros((self.n, 0)) if self.fam.get("zero_g") else null_space(self.weights[None, :])
        self.D = d * (1 + self.centered.shape[1])
        self.dim = self.rows * d + (1 if self.fam.get("lam") is not None else 0)

    def curvature(self, theta: np.ndarray):
        theta = np.clip(theta, 0, 1)
        h = self.fam["h_low"] + (self.L - self.fam["h_low"]) * theta[:self.rows * self.d].reshape(self.rows, self.d)
        lam = None
        if self.fam.get("lam") is not None:
            lo, hi = self.fam["lam"]
            lam = lo + (hi - lo) * float(theta[-1])
        return np.broadcast_to(h, (self.n, self.d)), lam

    def run(self, h, lam, V: np.ndarray) -> QuadraticEnv:
        """The algorithm on the batch of instances v = rows of ``V`` (B, D)."""
        d = self.d
        x0 = V[:, :d]
        coef = V[:, d:].reshape(len(V), self.centered.shape[1], d)
        g = np.einsum("ik,bkd->ibd", self.centered, coef)
        env = QuadraticEnv(h, g, x0, lam=lam, weights=list(self.weights))
        self.method.build(env, self.cfg)
        return env

    def best(self, theta: np.ndarray, refine: bool = False) -> tuple[float, np.ndarray]:
        """(max over v of the scaled metric, its v) at curvature ``theta``; ``refine`` polishes the
        best eigenvector candidates on the sphere (Nelder-Mead on matrix products only)."""
        h, lam = self.curvature(theta)
        D = self.D
        pairs = [(i, j) for i in range(D) for j in range(i + 1, D)]
        V = np.vstack([np.eye(D)] + [np.eye(D)[i] + np.eye(D)[j] for i, j in pairs])
        env = self.run(h, lam, V)
        forms = [_form(env.metric, D, pairs)] + [_form(value, D, pairs) for value, _ in env.conditions]
        bounds = np.array([b for _, b in env.conditions])
        if not all(np.all(np.isfinite(F)) for F in forms):
            return 0.0, np.eye(D)[0]
        Q, P = forms[0], forms[1:]
        candidates = list(eigh(Q)[1].T[-2:])
        for t in _weights(len(P)):
            M = sum(w * Pj / max(b, 1e-300) for w, Pj, b in zip(t, P, bounds))
            M = M + 1e-10 * (np.trace(M) / D + 1e-12) * np.eye(D)
            try:
                candidates.append(eigh(Q, M)[1][:, -1])
            except np.linalg.LinAlgError:   # M not positive definite in floating point: no candidate
                continue

        def scaled(v: np.ndarray) -> tuple[float, float]:
            val = v @ Q @ v
            scale = min((b / (v @ Pj @ v) for Pj, b in zip(P, bounds) if v @ Pj @ v > 1e-14 * (v @ v)),
                        default=np.inf)
            value = val * scale if val > 0 else 0.0
            return (float(value), scale) if np.isfinite(value) else (0.0, 0.0)

        ranked = sorted(candidates, key=lambda v: -scaled(v)[0])[:3] if refine else []
        for v in ranked:
            res = minimize(lambda u: -scaled(u)[0], v, method="Nelder-Mead",
                           options={"maxfev": 200 * D, "xatol": 1e-9, "fatol": 1e-12})
            candidates.append(res.x)
        best_v = max(candidates, key=lambda v: scaled(v)[0])
        value, scale = scaled(best_v)
        return value, best_v * np.sqrt(scale) if value > 0 else best_v


def _form(values: np.ndarray, D: int, pairs) -> np.ndarray:
    """The symmetric matrix of a quadratic form from its values on e_i and e_i + e_j."""
    values = np.asarray(values, float)
    Q = np.diag(values[:D])
    for k, (i, j) in enumerate(pairs):
        Q[i, j] = Q[j, i] = (values[D + k] - values[i] - values[j]) / 2
    return Q


def _weights(J: int) -> list[np.ndarray]:
    if J == 0:
        return []
    if J == 1:
        return [np.ones(1)]
    if J == 2:
        return [np.array([t, 1 - t]) for t in np.linspace(0.02, 0.98, 25)]
    rng = np.random.default_rng(0)
    return [np.full(J, 1.0 / J)] + list(rng.dirichlet(np.ones(J), 24))


def search(method: Method, cfg: dict, d: Count = 2, starts: Count = 16, polish: NonNegativeInt = 2,
           maxfev: Count | None = None, seed: Seed = 0) -> tuple[float, dict]:
    """(best lower bound, its instance: h, g, x0, lam) for ``method`` at options ``cfg`` (validated
    by the method)."""
    cfg = method.config(**cfg)
    fam = _Family(method, cfg, d)
    rng = np.random.default_rng(seed)
    corners = (np.array(np.meshgrid(*[[0.0, 1.0]] * fam.dim)).reshape(fam.dim, -1).T if fam.dim <= 6
               else rng.integers(0, 2, (starts, fam.dim)).astype(float))
    cand = np.vstack([corners, rng.random((starts, fam.dim))])
    scores = np.array([fam.best(t)[0] for t in cand])
    for i in np.argsort(-scores)[:polish]:
        res = minimize(lambda t: -fam.best(t)[0], cand[i], method="Powell", bounds=[(0, 1)] * fam.dim,
                       options={"maxfev": maxfev or 12 * starts, "xtol": 1e-4, "ftol": 1e-9})
        cand, scores = np.vstack([cand, np.clip(res.x, 0, 1)]), np.append(scores, -res.fun)
    refined = [(fam.best(cand[i], refine=True), i) for i in np.argsort(-scores)[:3]]
    (value, v), i = max(refined, key=lambda r: r[0][0])
    best_theta = cand[i]
    h, lam = fam.curvature(best_theta)
    env = fam.run(h, lam, v[None, :])
    return value, {"h": np.asarray(h).tolist(), "g": env.g[:, 0].tolist(), "x0": env.x0[0].tolist(), "lam": lam}
