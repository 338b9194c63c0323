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
[h_low, L]^(n x d) (one row shared by all clients where the method says so) and lam: corners,
random starts, and a compass search (:func:`climb`) from the best; deterministic for a seed.

The same on every CPU (issue 31): another CPU's kernels change the last ~3 digits of each value,
and a search that compares raw values (Powell, Nelder-Mead) can then take another path and end in
another local optimum (2-6 % apart). So the search never decides on the last bits: candidates are
ranked at :data:`DIGITS` significant digits (:func:`steady`, ties to the first), a move of the
compass search is taken only when it improves by more than :data:`MARGIN` relative, a repeated
eigenvalue's eigenspace gives candidates that do not depend on the basis a solver returns
(:func:`_directions`), and the instance's sign is fixed (its first largest entry positive). The same
seed then gives the same instance to rounding, unless two candidates are within ~1e-15 of a
decision's threshold. :func:`check_instance` re-evaluates an instance: its metric and the largest
ratio of a condition to its bound (<= 1: a member of the function class).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from scipy.linalg import eigh, null_space

from fedbound.argtypes import Count, NonNegativeInt, Positive, Seed
from fedbound.pep.method import Method
from fedbound.pep.numeric import QuadraticEnv


#: significant digits at which the search ranks candidates (module doc)
DIGITS = 9
#: the relative improvement a move of the compass search must make (module doc)
MARGIN = 1e-9


def climb(f: Callable[[np.ndarray], float], x: np.ndarray, step: Positive, low: float = -np.inf,
          high: float = np.inf, min_step: Positive = 1e-7, evaluations: Count = 1000
          ) -> tuple[np.ndarray, float]:
    """A compass search that maximizes ``f`` from ``x`` (coordinates clipped to [low, high]): try
    x +- step e_k in order and take the first move that improves f by more than MARGIN relative;
    when none does, halve the step; stop below ``min_step`` or after ``evaluations``. Every decision
    has a margin, so rounding of the last bits does not change the path (module doc).
    Returns (x, f(x))."""
    x = np.clip(np.asarray(x, float), low, high)
    value, used = f(x), 1
    while step >= min_step and used < evaluations:
        moved = False
        for k in range(len(x)):
            for sign in (1.0, -1.0):
                trial = x.copy()
                trial[k] = min(max(trial[k] + sign * step, low), high)
                if trial[k] == x[k]:
                    continue
                candidate, used = f(trial), used + 1
                if candidate > value + MARGIN * abs(value):
                    x, value, moved = trial, candidate, True
                    break
            if used >= evaluations:
                break
        if not moved:
            step /= 2
    return x, value


def steady(value: float) -> float:
    """``value`` rounded to :data:`DIGITS` significant digits: what every CPU computes alike."""
    value = float(value)
    return float(f"{value:.{DIGITS - 1}e}") if math.isfinite(value) and value != 0 else value


def _signed(v: np.ndarray) -> np.ndarray:
    """``v`` or ``-v``, whichever has positive its first entry of largest magnitude (up to 1e-9
    relative, so that rounding does not pick another entry)."""
    size = np.abs(v)
    first = int(np.argmax(size >= (1 - 1e-9) * size.max()))
    return -v if v[first] < 0 else v


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
        best eigenvector candidates on the sphere (a compass search, :func:`climb`, on matrix products only)."""
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
        candidates = _directions(*eigh(Q), clusters=2)
        for t in _weights(len(P)):
            M = sum(w * Pj / max(b, 1e-300) for w, Pj, b in zip(t, P, bounds))
            M = M + 1e-10 * (np.trace(M) / D + 1e-12) * np.eye(D)
            try:
                candidates += _directions(*eigh(Q, M), metric=M)
            except np.linalg.LinAlgError:   # M not positive definite in floating point: no candidate
                continue

        def scaled(v: np.ndarray) -> tuple[float, float]:
            val = v @ Q @ v
            scale = min((b / (v @ Pj @ v) for Pj, b in zip(P, bounds) if v @ Pj @ v > 1e-14 * (v @ v)),
                        default=np.inf)
            value = val * scale if val > 0 else 0.0
            return (float(value), scale) if np.isfinite(value) else (0.0, 0.0)

        candidates = [_signed(v) for v in candidates]
        ranked = sorted(candidates, key=lambda v: -steady(scaled(v)[0]))[:3] if refine else []
        for v in ranked:   # polished on the sphere (the value does not depend on v's length)
            u, _ = climb(lambda u: scaled(u)[0], v / np.linalg.norm(v), step=0.25, evaluations=200 * D)
            candidates.append(_signed(u / np.linalg.norm(u)))
        best_v = max(candidates, key=lambda v: steady(scaled(v)[0]))
        value, scale = scaled(best_v)
        return value, best_v * np.sqrt(scale) if value > 0 else best_v


#: eigenvalues within this of each other (relative to the largest magnitude) form one cluster
CLUSTER = 1e-8


def _directions(values: np.ndarray, vectors: np.ndarray, metric: np.ndarray | None = None,
                clusters: int = 1) -> list[np.ndarray]:
    """Candidate directions from the top ``clusters`` clusters of eigenvalues (ascending ``values``,
    eigenvectors in the columns of ``vectors``, orthonormal in ``metric`` when given): where an
    eigenvalue repeats, a solver may return any basis of its eigenspace, and another CPU another one;
    the projections of the coordinate vectors onto the eigenspace (V V^T metric e_k, normalized) do
    not depend on that basis, so the candidates are the same on every CPU up to rounding."""
    scale = max(float(np.max(np.abs(values))), 1e-300)
    out, end = [], len(values)
    for _ in range(clusters):
        if end == 0:
            break
        start = end - 1
        while start > 0 and values[end - 1] - values[start - 1] <= CLUSTER * scale:
            start -= 1
        V = vectors[:, start:end]
        projector = V @ V.T if metric is None else V @ (V.T @ metric)
        for column in projector.T:
            norm = float(np.linalg.norm(column))
            if norm > 1e-8:
                out.append(column / norm)
        end = start
    return out


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
    scores = np.array([steady(fam.best(t)[0]) for t in cand])
    for i in np.argsort(-scores, kind="stable")[:polish]:
        theta, value = climb(lambda t: fam.best(t)[0], cand[i], step=0.25, low=0.0, high=1.0,
                             min_step=1e-4, evaluations=maxfev or 12 * starts)
        cand, scores = np.vstack([cand, theta]), np.append(scores, steady(value))
    refined = [(fam.best(cand[i], refine=True), i) for i in np.argsort(-scores, kind="stable")[:3]]
    (value, v), i = max(refined, key=lambda r: steady(r[0][0]))
    best_theta = cand[i]
    h, lam = fam.curvature(best_theta)
    env = fam.run(h, lam, v[None, :])
    return value, {"h": np.asarray(h).tolist(), "g": env.g[:, 0].tolist(), "x0": env.x0[0].tolist(), "lam": lam}


def check_instance(method: Method, cfg: dict, instance: dict) -> dict:
    """An instance of :func:`search` re-evaluated (module doc): ``value``, the method's metric on it,
    and ``worst_condition``, the largest ratio of a condition of the function class to its bound
    (<= 1 up to rounding for a valid instance; 0 where there is no condition)."""
    cfg = method.config(**cfg)
    setting = method.setting(cfg)
    n = setting["n"]
    weights = setting.get("weights") or [1.0 / n] * n
    env = QuadraticEnv(np.asarray(instance["h"], float), np.asarray(instance["g"], float)[:, None, :],
                       np.asarray(instance["x0"], float)[None, :], lam=instance.get("lam"),
                       weights=list(weights))
    method.build(env, cfg)
    ratios = [float(np.asarray(value).reshape(-1)[0]) / bound if bound > 0 else
              (0.0 if float(np.asarray(value).reshape(-1)[0]) <= 0 else math.inf)
              for value, bound in env.conditions]
    return {"value": float(np.asarray(env.metric).reshape(-1)[0]), "worst_condition": max(ratios, default=0.0)}
