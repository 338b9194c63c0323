r"""Exact round maps of FedAvg, FedProx and FedNova on quadratics (FedNova, seed
001_530825e753327090.txt, App. A (13)-(30) [L316-L385]; notes fednova.md sec. 2.11 and 4.1).

Clients hold f_i(x) = 1/2 (x - b_i)^T H_i (x - b_i) (H_i symmetric PSD, so grad f_i(x) = H_i x - e_i
with e_i = H_i b_i) and run tau_i deterministic steps of a *linear* local solver from the round's
start x (FedNova's generalized update (4), L93; solvers of App. B, L389-L439;
:class:`fedbound.local_solver.LocalSolver`):

    u_{k+1} = momentum u_k + grad f_i(x_k) + mu (x_k - x),   x_{k+1} = x_k - lr lr_decay^k u_{k+1},
    u_0 = 0 (buffer reset every round), x_0 = x,

which is vanilla GD (momentum = mu = 0, lr_decay = 1), FedProx's proximal step (31) (mu > 0),
momentum SGD (35)-(36) (momentum > 0) and the exponentially decayed learning rate (lr_decay < 1),
or any combination.
Every iterate is affine in x: x_k = P_k x + q_k, so the client's update is
Delta_i = x_{tau_i} - x = (P_i - I) x + q_i and the server rule

    x+ = x + sum_i c_i Delta_i

is the affine map x+ = M x + v with M = I - sum_i c_i (I - P_i), v = sum_i c_i q_i. The weights c_i
come from the aggregation rule: c_i = p_i for the mean (FedAvg/FedProx (2) [L52]), c_i = tau_eff
p_i / ||a_i||_1 for the normalized average (FedNova (12) [L198-L202]) (default tau_eff = sum_i p_i ||a_i||_1, App. H [L961]). The map's fixed point
x~ = (sum_i c_i (I - P_i))^{-1} sum_i c_i q_i is where the algorithm converges iff the spectral
radius of M is < 1 (App. A (28)). For FedAvg/FedProx with H_i = I this is (29); the notes' derived
FedNova fixed point is (sum_i p_i K_i H_i / ||a_i||_1)^{-1} sum_i p_i K_i e_i / ||a_i||_1.

As lr -> 0 (first order in lr) I - P_i -> lr A_i H_i and q_i -> lr A_i e_i with A_i = lim ||a_i||_1
(the accumulation norm at mu lr -> 0), so FedAvg tends to the minimizer of the surrogate
sum_i p_i A_i f_i (Lemma 1, (30): sum tau_i e_i / sum tau_i for GD), while FedNova tends to the true
x* = (sum_i p_i H_i)^{-1} sum_i p_i e_i. At finite lr FedNova is *not* exactly consistent (notes
sec. 7.4): :func:`fixed_point` gives the exact finite-lr answer, which can be farther from x* than
FedAvg's.

Everything is float64 numpy, batched over clients ((n, d, d) matmuls, a loop over local steps only).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from fedbound import validate as V
from fedbound.argtypes import Count, NonNegativeArray
from fedbound.deprecation import deprecated
from fedbound.errors import ValidationError
from fedbound.local_solver import LocalSolver

#: the aggregation rules of the round (the names of fedbound.algorithms.federated.aggregation)
AGGREGATIONS = ("mean", "normalized")
#: their names before issue 20
_OLD_AGGREGATIONS = {"fedavg": "mean", "fednova": "normalized"}


def aggregation_rule(name: str) -> str:
    """``name`` among :data:`AGGREGATIONS` ("fedavg" and "fednova" still work and warn)."""
    if name in _OLD_AGGREGATIONS:
        deprecated(f"aggregation={name!r}", f"aggregation={_OLD_AGGREGATIONS[name]!r}")
        return _OLD_AGGREGATIONS[name]
    return V.one_of("aggregation", name, AGGREGATIONS)


def LinearSolver(lr: float | np.ndarray, mu: float | np.ndarray = 0.0, rho: float | np.ndarray = 0.0,
                 gamma: float | np.ndarray = 1.0) -> LocalSolver:
    """Deprecated: :class:`fedbound.local_solver.LocalSolver` (rho is ``momentum``, gamma
    ``lr_decay``)."""
    deprecated("fedbound.verify.quadratic_rounds.LinearSolver(lr, mu, rho, gamma)",
               "fedbound.local_solver.LocalSolver(lr, mu, momentum, lr_decay)")
    return LocalSolver(lr, mu, rho, gamma)


def accumulation(solver: LocalSolver, tau: Count) -> np.ndarray:
    """FedNova's accumulation vector a (tau,) of a single client's solver (App. B [L389-L439]):
    :meth:`fedbound.local_solver.LocalSolver.accumulation`."""
    return solver.accumulation(tau)


@dataclass(frozen=True)
class QuadraticProblem:
    """f_i(x) = 1/2 (x - b_i)^T H_i (x - b_i), weights p (sum 1): H (n, d, d), b (n, d), p (n,)."""

    H: np.ndarray
    b: np.ndarray
    p: np.ndarray

    @classmethod
    def build(cls, H: np.ndarray, b: np.ndarray, p: np.ndarray | None = None) -> "QuadraticProblem":
        """Validated arrays: H symmetric PSD (n, d, d), b (n, d), p >= 0 summing to 1 (default 1/n)."""
        H = V.real_array("H", H, ndim=3, max_abs=1e150)
        n, d, d2 = H.shape
        if d != d2 or n < 1 or d < 1:
            raise ValidationError(f"H must have shape (n, d, d) with n, d >= 1, got {H.shape}")
        asymmetric = ~np.isclose(H, np.swapaxes(H, 1, 2), rtol=1e-12,
                                 atol=1e-12 * np.max(np.abs(H), initial=1.0)).all(axis=(1, 2))
        if asymmetric.any():
            raise ValidationError(f"H[{int(np.argmax(asymmetric))}] must be symmetric (H_i is a Hessian)")
        lam_min = np.linalg.eigvalsh(H).min(axis=1)
        if lam_min.min() < -1e-10 * max(1.0, float(np.max(np.abs(H)))):
            i = int(np.argmin(lam_min))
            raise ValidationError(f"H[{i}] must be positive semidefinite (f_i convex), got an eigenvalue "
                                  f"{lam_min[i]:g}")
        b = V.real_array("b", b, shape=(n, d), max_abs=1e150)
        if p is None:
            p = np.full(n, 1.0 / n)
        p = V.real_array("p", p, shape=(n,), low=0.0)
        if not np.isclose(p.sum(), 1.0, rtol=0, atol=1e-9):
            raise ValidationError(f"p must sum to 1, got sum {p.sum():.12g}")
        return cls(H, b, p)

    @property
    def n(self) -> int:
        return self.H.shape[0]

    @property
    def d(self) -> int:
        return self.H.shape[1]

    @property
    def e(self) -> np.ndarray:
        """e_i = H_i b_i (grad f_i(x) = H_i x - e_i)."""
        return np.einsum("nij,nj->ni", self.H, self.b)

    def minimizer(self, weights: NonNegativeArray | None = None) -> np.ndarray:
        """argmin sum_i w_i f_i = (sum_i w_i H_i)^{-1} sum_i w_i e_i (w = p: the true x*); a
        ValidationError where sum_i w_i H_i is singular (to roundoff), so that the minimizer is not unique."""
        w = self.p if weights is None else np.asarray(weights, dtype=float)
        if w.shape != (self.n,):
            raise ValidationError(f"weights must have one entry per client, shape ({self.n},), got {w.shape}")
        Hbar = np.einsum("n,nij->ij", w, self.H)
        eig = np.linalg.eigvalsh(Hbar)
        if not eig[0] > self.d * np.finfo(float).eps * max(float(eig[-1]), 0.0):
            raise ValidationError(f"H is singular: sum_i w_i H_i has the eigenvalue {eig[0]:.3g} (largest "
                                  f"{eig[-1]:.3g}), so the minimizer of sum_i w_i f_i is not unique")
        return np.linalg.solve(Hbar, w @ self.e)


@dataclass(frozen=True)
class AffineRound:
    """One global round as the affine map x+ = M x + v, with the per-client pieces.

    P (n, d, d), q (n, d): client i's last local iterate x_{tau_i} = P_i x + q_i; c (n,): the server's
    weights on Delta_i; a_norm (n,): ||a_i||_1.
    """

    M: np.ndarray
    v: np.ndarray
    P: np.ndarray
    q: np.ndarray
    c: np.ndarray
    a_norm: np.ndarray

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape != self.v.shape:
            raise ValidationError(f"x must have shape {self.v.shape}, got {x.shape}")
        return self.M @ x + self.v

    def spectral_radius(self) -> float:
        """rho(M): the round map contracts (and runs converge to the fixed point) iff < 1."""
        return float(np.max(np.abs(np.linalg.eigvals(self.M))))

    def fixed_point(self) -> np.ndarray:
        """x~ = (sum_i c_i (I - P_i))^{-1} sum_i c_i q_i, the unique fixed point of the map."""
        G = np.einsum("n,nij->ij", self.c, np.eye(self.M.shape[0]) - self.P)
        sing = np.linalg.svd(G, compute_uv=False)
        if not sing[-1] > G.shape[0] * np.finfo(float).eps * sing[0]:
            raise ValidationError("the round map has no unique fixed point (I - M singular: H singular, or "
                                  "a step that cancels a curvature exactly)")
        return np.linalg.solve(G, self.v)


TauEff = float | str | Callable[[np.ndarray, np.ndarray, np.ndarray], float]


def _client_weights(aggregation: str, p: np.ndarray, tau: np.ndarray, a_norm: np.ndarray,
                    tau_eff: TauEff) -> np.ndarray:
    """c_i of x+ = x + sum_i c_i Delta_i (module docstring)."""
    if aggregation_rule(aggregation) == "mean":
        return p.copy()
    if callable(tau_eff):
        value = tau_eff(p, tau, a_norm)
    elif tau_eff == "accumulation":          # App. H default [L961]: sum_i p_i ||a_i||_1
        value = float(p @ a_norm)
    elif tau_eff == "steps":                 # vanilla-SGD choice [L200] and FedNova-Prox [L202]
        value = float(p @ tau)
    else:
        value = tau_eff
    value = V.number("tau_eff", value, low=0.0, low_open=True)
    return value * p / a_norm


def _local_maps(problem: QuadraticProblem, tau: np.ndarray, lr, mu, momentum, lr_decay):
    """(P, q) of x_{tau_i} = P_i x + q_i for every client, batched; clients stop after tau_i steps."""
    n, d = problem.n, problem.d
    H, e = problem.H, problem.e
    eye = np.broadcast_to(np.eye(d), (n, d, d))
    P, q = eye.copy(), np.zeros((n, d))
    R, s = np.zeros((n, d, d)), np.zeros((n, d))       # u_k = R_k x + s_k
    for k in range(int(tau.max())):
        active = (k < tau)[:, None]
        R_new = momentum[:, None, None] * R + H @ P + mu[:, None, None] * (P - eye)
        s_new = momentum[:, None] * s + np.einsum("nij,nj->ni", H, q) - e + mu[:, None] * q
        step = (lr * lr_decay ** k)
        P = np.where(active[:, :, None], P - step[:, None, None] * R_new, P)
        q = np.where(active, q - step[:, None] * s_new, q)
        R = np.where(active[:, :, None], R_new, R)
        s = np.where(active, s_new, s)
    return P, q


def _checked_tau(tau, n: int) -> np.ndarray:
    tau = V.real_array("tau", tau, ndim=(0, 1))
    tau = np.broadcast_to(tau, (n,)) if tau.ndim == 0 else tau
    if tau.shape != (n,):
        raise ValidationError(f"tau must be one int or n={n} ints, got {tau.size} entries")
    for t in tau:
        V.integer("tau_i", t, low=1, high=100_000)
    return tau.astype(np.int64)


def _norms(solver: LocalSolver, tau: np.ndarray, n: int) -> np.ndarray:
    """||a_i||_1 for every client (one accumulation per distinct (solver, tau) pair)."""
    lr, mu, momentum, decay = solver.arrays(n)
    cache: dict = {}
    out = np.empty(n)
    for i in range(n):  # loop over distinct settings, typically a handful
        key = (lr[i], mu[i], momentum[i], decay[i], int(tau[i]))
        if key not in cache:
            cache[key] = float(np.sum(np.abs(LocalSolver(*key[:4]).accumulation(key[4]))))
        out[i] = cache[key]
    return out


def round_map(problem: QuadraticProblem, tau: int | np.ndarray, solver: LocalSolver, aggregation: str = "mean",
              tau_eff: TauEff = "accumulation") -> AffineRound:
    """The exact affine round map of FedAvg/FedProx (``aggregation="mean"``, weights p_i) or
    FedNova (``"normalized"``, weights tau_eff p_i / ||a_i||_1) with full participation.

    ``tau``: local steps per client (int or (n,)); ``solver``: the local solver (its fields may be
    per-client arrays); ``tau_eff``: FedNova's effective steps, "accumulation" (sum_i p_i ||a_i||_1,
    the default of App. H [L961]), "steps" (sum_i p_i tau_i [L200, L202]), a number, or a callable
    (p, tau, a_norm) -> float.
    """
    n = problem.n
    tau = _checked_tau(tau, n)
    a_norm = _norms(solver, tau, n)
    c = _client_weights(aggregation, problem.p, tau, a_norm, tau_eff)
    P, q = _local_maps(problem, tau, *solver.arrays(n))
    M = np.eye(problem.d) - np.einsum("n,nij->ij", c, np.eye(problem.d) - P)
    return AffineRound(M, c @ q, P, q, c, a_norm)


def fixed_point(problem: QuadraticProblem, tau: int | np.ndarray, solver: LocalSolver, aggregation: str = "mean",
                tau_eff: TauEff = "accumulation") -> dict:
    """The exact finite-lr fixed point, its distance to x*, and the spectral radius of the round map
    (the run converges to the fixed point iff the radius is < 1)."""
    rmap = round_map(problem, tau, solver, aggregation, tau_eff)
    x_fixed = rmap.fixed_point()
    x_star = problem.minimizer()
    return {"fixed_point": x_fixed, "x_star": x_star,
            "distance_to_x_star": float(np.linalg.norm(x_fixed - x_star)),
            "spectral_radius": rmap.spectral_radius(), "converges": rmap.spectral_radius() < 1,
            "client_weights": rmap.c, "a_norm": rmap.a_norm}


def limit_fixed_point(problem: QuadraticProblem, tau: int | np.ndarray, solver: LocalSolver,
                      aggregation: str = "mean") -> np.ndarray:
    """lim_{lr -> 0} of the fixed point (module docstring): FedAvg/FedProx -> the minimizer of
    sum_i p_i A_i f_i with A_i = ||a_i||_1 at mu lr = 0 (Lemma 1, (30) [L70-L74]: sum tau_i e_i /
    sum tau_i for GD with H_i = I); FedNova -> the true x* (any tau_eff > 0)."""
    n = problem.n
    tau = _checked_tau(tau, n)
    _, _, momentum, decay = solver.arrays(n)
    A = _norms(LocalSolver(1.0, 0.0, momentum, decay), tau, n)
    if aggregation_rule(aggregation) == "normalized":
        return problem.minimizer()
    return problem.minimizer(problem.p * A / np.sum(problem.p * A))


__all__ = ["AGGREGATIONS", "aggregation_rule", "LocalSolver", "LinearSolver", "accumulation",
           "QuadraticProblem", "AffineRound",
           "round_map", "fixed_point", "limit_fixed_point"]
