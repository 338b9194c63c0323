"""Bounded-gradient non-convex robust regression (afga.md sec. 7.2, task Q2):

    f_i(x) = sum_{j=1}^d log(1 + (x_j - b_ij)^2),   b in R^{n x d}.

With u = x_j - b_ij the coordinate derivative is phi(u) = 2u/(1+u^2) in [-1, 1] and the curvature is
psi(u) = 2(1-u^2)/(1+u^2)^2 in [-1/4, 2]; the Hessian of f_i is diag(psi). Hence, exactly:
* L = 2 (attained at x = b_i), mu = 0 (non-convex), weak convexity 1/4 (psi(+-sqrt 3) = -1/4);
* G = sqrt(d) and G_inf = 1 (AFGA Assumption 4.3, FedAda2 A2), attained at x = b_i + 1.
Everything is separable in the coordinates, so the global constants are 1-D problems solved per coordinate by
a dense grid (spacing <= 0.01) followed by golden-section refinement of the best local maxima (and Newton
polishing for x*): L_global = max_j sup_t sum_i p_i psi(t - b_ij), x*_j = argmin_t sum_i p_i log(1 + (t - b_ij)^2),
and every heterogeneity constant sup_x sum_ik K_ik <grad f_i, grad f_k> = sum_j sup_t F_j(t), where
F_j(t) -> 0 as |t| -> inf (so each coordinate contributes at least 0).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
import torch

from fedbound import resources, validate
from fedbound.argtypes import Count, NonNegative, Seed
from fedbound.errors import require
from fedbound.tasks.base import Points, Task, Weights, as_float64, check_size
from fedbound.tasks.registry import (D, FLOAT64, N, SEED, TaskSpec, dtype_of, n_or_default,
                                     register)

GRID_STEP = 0.01
MARGIN = 20.0
CANDIDATES = 8
GOLDEN_ITERATIONS = 64


def phi(u: torch.Tensor) -> torch.Tensor:
    return 2.0 * u / (1.0 + u * u)


def psi(u: torch.Tensor) -> torch.Tensor:
    return 2.0 * (1.0 - u * u) / (1.0 + u * u) ** 2


def coordinatewise_max(fn: Callable[[torch.Tensor], torch.Tensor], lo: torch.Tensor, hi: torch.Tensor,
                       chunk_rows: Count = 1024) -> tuple[torch.Tensor, torch.Tensor]:
    """(argmax, max) over t in [lo_j, hi_j] of fn(t)[:, j] for every column j at once.

    fn maps t of shape (k, d) to values (k, d), column j depending on t[:, j] only. Grid of spacing
    <= GRID_STEP (evaluated chunk_rows rows at a time), then golden-section search on the brackets of the
    CANDIDATES best grid local maxima.
    """
    require(lo.ndim == 1 and lo.numel() >= 1 and hi.shape == lo.shape and bool(torch.all(lo <= hi)),
            f"lo and hi must be bounds lo <= hi of the same shape (d,), got shapes {tuple(lo.shape)} "
            f"and {tuple(hi.shape)}")
    spread = float((hi - lo).max())
    resources.require_memory(f"a grid over a spread of {spread:.3g} (step {GRID_STEP:g}) in "
                             f"{lo.numel()} coordinates", 3 * (spread / GRID_STEP + 1) * lo.numel())
    points = int(math.ceil(spread / GRID_STEP)) + 1
    s = torch.linspace(0.0, 1.0, points, dtype=torch.float64)[:, None]
    grid = lo + s * (hi - lo)
    vals = torch.cat([fn(rows) for rows in torch.split(grid, chunk_rows)])
    padded = torch.cat([vals[:1] - 1.0, vals, vals[-1:] - 1.0])
    local = (vals >= padded[:-2]) & (vals >= padded[2:])
    scores = torch.where(local, vals, torch.full_like(vals, -math.inf))
    top = torch.topk(scores, min(CANDIDATES, points), dim=0).indices
    step = (hi - lo) / max(points - 1, 1)
    a = torch.maximum(torch.gather(grid, 0, top) - step, lo)
    b = torch.minimum(torch.gather(grid, 0, top) + step, hi)
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    c, e = b - ratio * (b - a), a + ratio * (b - a)
    fc, fe = fn(c), fn(e)
    for _ in range(GOLDEN_ITERATIONS):
        left = fc >= fe
        a, b = torch.where(left, a, c), torch.where(left, e, b)
        c_new, e_new = b - ratio * (b - a), a + ratio * (b - a)
        c, e = torch.where(left, c_new, e), torch.where(left, c, e_new)
        f_new = fn(torch.where(left, c, e))
        fc, fe = torch.where(left, f_new, fe), torch.where(left, fc, f_new)
    t = torch.cat([(a + b) / 2.0, grid])
    v = torch.cat([fn((a + b) / 2.0), vals])
    best = torch.argmax(v, dim=0, keepdim=True)
    return torch.gather(t, 0, best)[0], torch.gather(v, 0, best)[0]


class RobustRegression(Task):
    """f_i(x) = sum_j log(1 + (x_j - b_ij)^2) from user centers b (n, d) or :meth:`generate`.
    Deterministic gradients (sigma2 = 0); ``with_noise(s, "sphere")`` keeps the gradients bounded."""

    weak_convexity = 0.25

    def __init__(self, b: np.ndarray, *, weights: Weights | None = None, x0: Points | None = None,
                 dtype: torch.dtype = torch.float64):
        b = as_float64("b", b, 2)
        n, d = b.shape
        super().__init__(n, d, dtype=dtype, weights=weights, x0=x0)
        self._b = torch.as_tensor(b, dtype=torch.float64)
        self._bt = torch.as_tensor(b, dtype=dtype)
        self.L, self.mu, self.mu_global = 2.0, 0.0, 0.0
        self._G_own, self._G_inf_own = math.sqrt(d), 1.0
        self._chunk = max(1, 2**22 // (n * d))
        w = torch.as_tensor(self._weights_np)
        lo, hi = self._b.min(dim=0).values, self._b.max(dim=0).values
        self.L_global = float(coordinatewise_max(
            lambda t: torch.matmul(w, psi(t[:, None, :] - self._b)), lo - 2.0, hi + 2.0,
            self._chunk)[1].max())
        self.x_star = torch.as_tensor(self._minimise(w, lo, hi), dtype=dtype)
        self.f_star = self.loss(self.x_star)

    @classmethod
    def generate(cls, n: Count, d: Count, *, heterogeneity: NonNegative = 1.0, seed: Seed = 0,
                 dtype: torch.dtype = torch.float64) -> "RobustRegression":
        """b_i = c + heterogeneity * z_i with c, z_i ~ N(0, I_d), seeded."""
        n, d = check_size("n", n), check_size("d", d)
        heterogeneity = validate.number("heterogeneity", heterogeneity, low=0.0)
        resources.require_memory(f"robust regression with n = {n}, d = {d}", 4 * n * d)
        rng = validate.rng(seed)
        return cls(rng.standard_normal(d) + heterogeneity * rng.standard_normal((n, d)), dtype=dtype)

    @property
    def centers(self) -> torch.Tensor:
        return self._bt

    def client_data(self) -> dict:
        return {"b": self._bt}

    def _losses_on(self, X, data) -> torch.Tensor:
        return torch.sum(torch.log1p((X - data["b"]) ** 2), dim=1)

    def _grad_on(self, X, data) -> torch.Tensor:
        return phi(X - data["b"])

    def _minimise(self, w: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
        """Per coordinate global minimiser of sum_i w_i log(1 + (t - b_ij)^2); it lies in [min_i b_ij, max_i b_ij]
        (outside, every term pushes t back). Grid + golden section, then Newton steps on the derivative."""
        def neg_f(t):
            return -torch.matmul(w, torch.log1p((t[:, None, :] - self._b) ** 2))
        t, _ = coordinatewise_max(neg_f, lo, hi, self._chunk)
        for _ in range(8):
            u = t - self._b
            g, h = w @ phi(u), w @ psi(u)
            t = torch.where(h > 0, t - g / torch.where(h > 0, h, 1.0), t)
        return t

    def _sup_measure(self, K: np.ndarray) -> float:
        Kt = torch.as_tensor(K, dtype=torch.float64)

        def measure(t):
            P = phi(t[None, :, :] - self._b[:, None, :])      # (n, k, d)
            KP = (Kt @ P.reshape(self.n, -1)).reshape(P.shape)
            return torch.sum(P * KP, dim=0)
        lo, hi = self._b.min(dim=0).values - MARGIN, self._b.max(dim=0).values + MARGIN
        _, best = coordinatewise_max(measure, lo, hi, self._chunk)
        return float(torch.clamp(best, min=0.0).sum())


def _preset(n=None, d=None, seed=0, float64=False):
    """``--task robust``: AFGA's Q2 robust regression with d = 10."""
    return RobustRegression.generate(n_or_default(n), 10 if d is None else d, seed=seed,
                                     dtype=dtype_of({"float64": float64}))


register(TaskSpec("robust", _preset, "robust regression (AFGA's Q2, non-convex)", (N, D, SEED, FLOAT64)))
