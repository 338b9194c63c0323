"""Heterogeneity measures of the four papers, as quadratic forms in the stacked local gradients.

Every measure used by the papers is, at a point x,

    F_K(x) = sum_{i,k} K_ik <grad f_i(x), grad f_k(x)>

for a symmetric (n, n) coefficient matrix K, and the constant of the assumption is sup_x F_K(x):

* FedNova Assumption 3 [001_530825e753327090.txt L141-L151; fednova.md sec. 3, 4.12]:
  sum_i w_i ||grad F_i||^2 <= beta^2 ||sum_i w_i grad F_i||^2 + kappa^2, so
  K = diag(w) - beta^2 w w^T and kappa^2(beta^2) = max(0, sup_x F_K).
* AFGA Assumption 4.4 [000_bd1b5016b2d2bc05.txt L260-L263]: (1/N) sum_i ||grad f_i - grad f||^2 <= sigma_g^2,
  K = (I - 11^T/N)/N (FedNova's form with w = 1/N and beta^2 = 1).
* AFGA Assumption D.1, intra-cluster [000 L1059-L1062]: for cluster k with members V_k, |V_k| = n_k,
  (1/n_k) sum_{i in V_k} ||grad f_i - grad fbar_k||^2 <= sigma_k^2, fbar_k = (1/n_k) sum_{i in V_k} f_i.
* AFGA Assumption D.1, inter-cluster [000 L1063-L1068]: (1/K) sum_k ||grad fbar_k||^2 <= alpha^2 ||grad f||^2 + sigma_c^2
  with alpha >= 1, so K = (1/K) sum_k u_k u_k^T - alpha^2 v v^T (u_k = 1_{V_k}/n_k, v = 1/N).

The coefficient matrices are built here; evaluating sup_x F_K is task-specific (closed form for quadratic
tasks via :func:`quadratic_sup`, per-coordinate search for separable tasks, unknown for neural tasks).
"""
from __future__ import annotations

from typing import Annotated

import numpy as np
import torch

from fedbound import resources, validate
from fedbound.argtypes import Count, NonNegative, ProbabilityArray, Range
from fedbound.errors import require

#: FedNova's beta^2 >= 1, AFGA's alpha >= 1
AtLeastOne = Annotated[float, Range(1.0)]

#: eigenvalues of the quadratic form below this fraction of its scale count as zero in quadratic_sup
ZERO_TOL = 1e-9


def check_weights(weights: ProbabilityArray, n: Count) -> np.ndarray:
    """Validated weights as a float64 array of shape (n,): non-negative, summing to 1 (to 1e-10)."""
    w = np.asarray(weights, dtype=np.float64)
    require(w.shape == (n,), f"weights must have shape ({n},), got {w.shape}")
    require(bool(np.all(np.isfinite(w))) and bool(np.all(w >= 0)),
            f"weights must be finite and >= 0, got min {w.min()}")
    require(abs(w.sum() - 1.0) <= 1e-10, f"weights must sum to 1, got {w.sum()!r}")
    return w


def cluster_labels(subnet_of: np.ndarray, n: Count) -> tuple[np.ndarray, int]:
    """(label of each client in 0..K-1, K) from any integer cluster assignment of shape (n,)."""
    s = np.asarray(subnet_of)
    require(s.shape == (n,), f"subnet_of must have shape ({n},), got {s.shape}")
    require(s.dtype.kind in "iu", f"subnet_of must hold integers, got dtype {s.dtype}")
    _, labels = np.unique(s, return_inverse=True)
    return labels.reshape(n), int(labels.max()) + 1


def fednova_matrix(weights: ProbabilityArray, beta2: AtLeastOne) -> np.ndarray:
    """K = diag(w) - beta^2 w w^T (FedNova Assumption 3 at weights w (n,)); beta^2 >= 1 is required."""
    beta2 = validate.number("beta2", beta2, low=1.0)
    weights = validate.real_array("weights", weights, ndim=1)
    resources.require_memory(f"a ({weights.size}, {weights.size}) coefficient matrix K", weights.size ** 2)
    return np.diag(weights) - beta2 * np.outer(weights, weights)


def sigma_g_matrix(n: Count) -> np.ndarray:
    """K of AFGA's global dissimilarity (1/N) sum_i ||g_i - gbar||^2."""
    resources.require_memory(f"a ({n}, {n}) coefficient matrix K", n * n)
    return fednova_matrix(np.full(n, 1.0 / n), 1.0)


def intra_cluster_matrices(subnet_of: np.ndarray, n: Count) -> list[np.ndarray]:
    """One K per cluster k: (1/n_k) sum_{i in V_k} ||g_i - gbar_k||^2 (AFGA D.1, sigma_k^2)."""
    labels, n_clusters = cluster_labels(subnet_of, n)
    resources.require_memory(f"{n_clusters} ({n}, {n}) coefficient matrices K", n_clusters * n * n)
    mats = []
    for k in range(n_clusters):
        member = labels == k
        u = member / member.sum()
        mats.append(np.diag(u) - np.outer(u, u))
    return mats


def inter_cluster_matrix(subnet_of: np.ndarray, n: Count, alpha: AtLeastOne = 1.0) -> np.ndarray:
    """K of (1/K) sum_k ||gbar_k||^2 - alpha^2 ||gbar||^2 (AFGA D.1, sigma_c^2); alpha >= 1."""
    alpha = validate.number("alpha", alpha, low=1.0)
    labels, n_clusters = cluster_labels(subnet_of, n)
    resources.require_memory(f"a ({n}, {n}) coefficient matrix K", n_clusters * n + 3 * n * n)
    members = (labels[None, :] == np.arange(n_clusters)[:, None]).astype(np.float64)
    u = members / members.sum(axis=1, keepdims=True)
    v = np.full(n, 1.0 / n)
    return u.T @ u / n_clusters - alpha**2 * np.outer(v, v)


def measure_at(grads: torch.Tensor, K: np.ndarray) -> float:
    """F_K at one point: sum_{i,k} K_ik <g_i, g_k> for stacked gradients (n, d).

    Evaluated around the mean gradient r to avoid cancellation: with s = K 1,
    F_K = sum K_ik <g_i - r, g_k - r> + 2 <r, sum_i s_i (g_i - r)> + (1^T s) ||r||^2.
    """
    require(grads.ndim == 2, f"grads must be stacked gradients (n, d), got shape {tuple(grads.shape)}")
    n = int(grads.shape[0])
    require(np.shape(K) == (n, n), f"K must have shape ({n}, {n}) to match grads, got {np.shape(K)}")
    G = grads.detach().to(torch.float64)
    Kt = torch.as_tensor(K, dtype=torch.float64)
    r = G.mean(dim=0)
    C = G - r
    s = Kt.sum(dim=1)
    value = torch.sum(Kt * (C @ C.T)) + 2.0 * torch.dot(r, s @ C) + s.sum() * torch.dot(r, r)
    return float(value)


def quadratic_sup(M: np.ndarray, b: np.ndarray, c: float, scale_M: NonNegative, scale_b: NonNegative
                  ) -> tuple[float, np.ndarray | None]:
    """sup_x of x^T M x - 2 b^T x + c, and a maximiser (None when the sup is +inf).

    Exact up to the rounding of (M, b, c): the sup is finite iff M is negative semidefinite and b lies in
    range(M); then it equals c + sum_{lambda_k < 0} (v_k^T b)^2 / ``|lambda_k|``, attained at M^+ b.
    Eigenvalues with ``|lambda|`` <= ZERO_TOL * scale_M count as zero, and b counts as orthogonal to such a
    null direction when ``|v^T b|`` <= ZERO_TOL * scale_b (scale_* are the magnitudes of the terms summed).
    """
    M, b = np.asarray(M), np.asarray(b)
    require(M.ndim == 2 and M.shape[0] == M.shape[1], f"M must be a square matrix, got shape {M.shape}")
    require(b.shape == M.shape[:1], f"b must have shape ({M.shape[0]},) to match M, got {b.shape}")
    lam, V = np.linalg.eigh((M + M.T) / 2.0)
    tol_M = ZERO_TOL * max(scale_M, np.finfo(float).tiny)
    tol_b = ZERO_TOL * max(scale_b, np.finfo(float).tiny)
    beta = V.T @ b
    if lam[-1] > tol_M:
        return float("inf"), None
    null = np.abs(lam) <= tol_M
    if np.any(np.abs(beta[null]) > tol_b):
        return float("inf"), None
    neg = ~null
    y = np.zeros_like(beta)
    y[neg] = beta[neg] / lam[neg]
    value = c + float(np.sum(beta[neg] ** 2 / -lam[neg]))
    return value, V @ y
