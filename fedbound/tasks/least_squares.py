"""Least squares with AR(1)-correlated rows: SD-GT's synthetic experiment (sdgt.md sec. 6.2, [003 L486]).

Client i holds A_i in R^{m x d} and y_i = A_i x_true + noise, and

    f_i(x) = 1/(2m) ||A_i x - y_i||^2      (H_i = A_i^T A_i / m, e_i = A_i^T y_i / m, c_i = ||y_i||^2 / (2m)).

The paper does not state the local loss (sdgt.md flag at sec. 6.2); we use the per-sample average 1/(2m).
Rows follow the stationary AR(1) process of [L486]: a_1 = z_1 / sqrt(1 - omega^2), a_{l+1} = omega a_l + z_{l+1},
z i.i.d. N(0, 1), fresh for every row. Paper defaults: n = 30 clients (S = 3 x 10), m = 30, d = 200, x_true ~ N(0, I),
noise variance 0.04. The convex variant (App. C-A) has d = 1000 > n m = 900, so not even the global f is
strongly convex: mu_global = 0 and x* is the projection of x0 onto the solution set (the min-norm solution for
x0 = 0), computed by least squares. With d < n m (and m < d) each f_i is convex but not strongly convex
(mu = 0) while f is (mu_global > 0): sdgt.md flag F34.
"""
from __future__ import annotations

import os
from typing import Annotated

import numpy as np
import torch

from fedbound import resources, validate
from fedbound.argtypes import Count, NonNegative, Range, Seed
from fedbound.errors import require
from fedbound.tasks.base import Points, Weights, as_float64, check_size
from fedbound.tasks.npz import load_arrays
from fedbound.tasks.quadratic import QuadraticTask
from fedbound.tasks.registry import (D, DATA, DEFAULT_ROWS, FLOAT64, N, ROWS, SEED, WEIGHTS,
                                     TaskSpec, dtype_of, n_or_default, read_data, register)

#: the AR(1) correlation omega in [0, 1)
_Omega = Annotated[float, Range(0.0, 1.0, high_open=True)]


def ar1_rows(z: np.ndarray, omega: _Omega) -> np.ndarray:
    """Rows of the AR(1) process driven by z (..., d): stationary start z_1/sqrt(1-omega^2) [003 L486]."""
    omega = validate.number("omega", omega, low=0.0, high=1.0, high_open=True)
    z = np.asarray(z, dtype=np.float64)
    require(z.ndim >= 1 and z.shape[-1] >= 1, f"z must have at least one column, got shape {z.shape}")
    a = np.empty_like(z)
    a[..., 0] = z[..., 0] / np.sqrt(1.0 - omega**2)
    for col in range(1, z.shape[-1]):
        a[..., col] = omega * a[..., col - 1] + z[..., col]
    return a


class LeastSquares(QuadraticTask):
    """f_i(x) = 1/(2m) ||A_i x - y_i||^2 from user arrays A (n, m, d) and y (n, m), an .npz file
    (:meth:`from_npz`) or the seeded AR(1) generator (:meth:`generate`)."""

    def __init__(self, A: np.ndarray, y: np.ndarray, *, weights: Weights | None = None, x0: Points | None = None,
                 dtype: torch.dtype = torch.float64):
        A = as_float64("A", A, 3)
        y = as_float64("y", y, 2)
        n, m, d = A.shape
        resources.require_memory(f"least squares with n = {n}, m = {m}, d = {d}",
                                 2 * n * m * d + n * min(m, d) ** 2 + d * d)
        require(y.shape == (n, m), f"y must have shape (n, m) = ({n}, {m}) to match A {A.shape}, got {y.shape}")
        require(n >= 1 and m >= 1 and d >= 1, f"A must have non-empty shape (n, m, d), got {A.shape}")
        self.m = m
        super().__init__(n, d, dtype=dtype, weights=weights, x0=x0)
        self._A, self._y = A, y
        self._At = torch.as_tensor(A, dtype=dtype)
        self._yt = torch.as_tensor(y, dtype=dtype)
        self.x_true = None
        self._set_constants()

    # ---- construction -------------------------------------------------------------------------
    @classmethod
    def generate(cls, n: Count = 30, m: Count = 30, d: Count = 200, *, omega: _Omega | None = 0.5,
                 condition_number: Annotated[float, Range(1.0)] | None = None, noise_std: NonNegative = 0.2,
                 seed: Seed = 0, dtype: torch.dtype = torch.float64) -> "LeastSquares":
        """SD-GT's synthetic least squares. Give ``omega`` or ``condition_number`` = L / mu_global (per-client
        L, global mu; the paper tunes omega to reach 80 and 800 without saying which ratio): omega is then
        found by root finding on the same random draws (needs n*m > d)."""
        n, m, d = check_size("n", n), check_size("m", m), check_size("d", d)
        resources.require_memory(f"least squares with n = {n}, m = {m}, d = {d}",
                                 5 * n * m * d + n * min(m, d) ** 2 + d * d)
        noise_std = validate.number("noise_std", noise_std, low=0)
        rng = validate.rng(seed)
        z = rng.standard_normal((n, m, d))
        x_true = rng.standard_normal(d)
        eps = rng.standard_normal((n, m))
        if condition_number is not None:
            condition_number = validate.number("condition_number", condition_number, low=1.0)
            omega = cls._omega_for(z, condition_number)
        require(omega is not None, "give omega or condition_number, got neither")
        A = ar1_rows(z, omega)
        task = cls(A, A @ x_true + noise_std * eps, dtype=dtype)
        task.x_true = torch.as_tensor(x_true, dtype=dtype)
        task.omega = float(omega)
        return task

    @staticmethod
    def _omega_for(z: np.ndarray, target: float) -> float:
        n, m, d = z.shape
        require(n * m > d, f"condition_number needs n*m > d (globally strongly convex), got n*m={n * m}, d={d}")

        def log_ratio(omega):
            A = ar1_rows(z, omega)
            L = max(np.linalg.eigvalsh(A @ A.transpose(0, 2, 1) / m)[:, -1])
            R = A.reshape(-1, d)
            mu = np.linalg.eigvalsh(R.T @ R / (n * m))[0]
            return np.log(L / mu) - np.log(target)

        lo, hi = log_ratio(0.0), log_ratio(0.999)
        require(np.isfinite(target) and lo <= 0 <= hi,
                f"condition_number must be in [{np.exp(lo) * target:.4g}, {np.exp(hi) * target:.4g}] "
                f"for these sizes, got {target}")
        from scipy.optimize import brentq  # scipy: 0.4 s of start-up, only when generating

        return float(brentq(log_ratio, 0.0, 0.999, xtol=1e-12))

    @classmethod
    def from_npz(cls, path: str | os.PathLike, **kwargs) -> "LeastSquares":
        """Load A (n, m, d) and y (n, m) from an .npz file written by :meth:`to_npz` or by hand.

        The file is checked before anything is allocated: it must be a zip archive whose members
        A.npy and y.npy hold plain numeric arrays (never pickles: ``allow_pickle`` stays False)
        that fit the memory budget; a truncated, corrupt or foreign file is a ValidationError.
        """
        arrays = load_arrays(path, ("A", "y"), (), "A (n, m, d) and y (n, m)")
        A, y = arrays["A"], arrays["y"]
        require(A.ndim == 3, f"key 'A' must have shape (n, m, d), got {A.shape}")
        require(y.shape == A.shape[:2], f"key 'y' must have shape {A.shape[:2]} to match 'A' {A.shape}, got {y.shape}")
        return cls(A, y, **kwargs)

    def to_npz(self, path: str | os.PathLike) -> None:
        """Save A and y (float64) so that from_npz(path) rebuilds the same task."""
        np.savez(path, A=self._A, y=self._y)

    # ---- objective ----------------------------------------------------------------------------
    @property
    def num_examples(self) -> np.ndarray:
        return np.full(self.n, self.m, dtype=np.int64)

    def client_data(self) -> dict:
        return {"A": self._At, "y": self._yt}

    @staticmethod
    def _residuals(X, data) -> torch.Tensor:
        # two batched row-vector products x^T A^T and r^T A: the orientation that streams A
        # fastest on CPU (einsum was 2.5-5x slower; benchmarks/bench_sdgt_vectorized.py)
        return torch.bmm(X.unsqueeze(1), data["A"].transpose(1, 2)).squeeze(1) - data["y"]

    def _losses_on(self, X, data) -> torch.Tensor:
        return torch.sum(self._residuals(X, data) ** 2, dim=1) / (2 * self.m)

    def _grad_on(self, X, data) -> torch.Tensor:
        return torch.bmm(self._residuals(X, data).unsqueeze(1), data["A"]).squeeze(1) / self.m

    @property
    def A(self) -> torch.Tensor:
        """The stacked design matrices, (n, m, d)."""
        return self._At

    @property
    def y(self) -> torch.Tensor:
        """The stacked targets, (n, m)."""
        return self._yt

    @property
    def hessians(self) -> torch.Tensor:
        """A_i^T A_i / m, (n, d, d); built on demand (n d^2 floats)."""
        return torch.einsum("nmi,nmj->nij", self._At, self._At) / self.m

    @property
    def linear_terms(self) -> torch.Tensor:
        return torch.einsum("nmd,nm->nd", self._At, self._yt) / self.m

    # ---- closed forms -------------------------------------------------------------------------
    def _client_eigen_extremes(self):
        A, m, d = self._A, self.m, self.d
        if m < d:
            lam = np.linalg.eigvalsh(A @ A.transpose(0, 2, 1) / m)
            return lam[:, -1], np.zeros(self.n)
        lam = np.linalg.eigvalsh(A.transpose(0, 2, 1) @ A / m)
        return lam[:, -1], lam[:, 0]

    def _mean_hessian(self, w):
        Aw = self._A.reshape(-1, self.d) * np.repeat(np.sqrt(w / self.m), self.m)[:, None]
        return Aw.T @ Aw

    def _solve_optimum(self):
        """x0 + the min-norm least-squares correction of the weighted stacked system (lstsq, SVD based):
        the projection of x0 onto argmin f."""
        scale = np.repeat(np.sqrt(self._weights_np / self.m), self.m)
        A = self._A.reshape(-1, self.d) * scale[:, None]
        x0 = self.x0.to(torch.float64).numpy()
        r = (self._y.reshape(-1) - self._A.reshape(-1, self.d) @ x0) * scale
        return x0 + np.linalg.lstsq(A, r, rcond=None)[0]

    def _form(self, K):
        """With r = A x - y stacked (R = n m rows) and G = A A^T: sum_ik K_ik <g_i, g_k> = r^T Q r,
        Q = (kron(K, 1 1^T) * G) / m^2, so M = A^T Q A, b = A^T Q y, c = y^T Q y."""
        A = self._A.reshape(-1, self.d)
        y = self._y.reshape(-1)
        Q = (A @ A.T) * np.kron(K, np.ones((self.m, self.m))) / self.m**2
        QA = Q @ A
        M = A.T @ QA
        return (M + M.T) / 2.0, QA.T @ y, float(y @ Q @ y)


def _lsq(n=None, d=None, rows=DEFAULT_ROWS, seed=0, float64=False, weights="uniform", data=None):
    """``--task lsq``: a user's .npz (A, y), or the SD-GT AR(1) generator with omega = 0.5 and
    ``rows`` rows per client (d = 20). Every client holds ``rows`` examples (the data's m), so
    example weights are uniform."""
    dtype = dtype_of({"float64": float64})
    if data is not None:
        require(d is None, "d comes from the data file; drop it")
        return read_data(data, LeastSquares.from_npz, "lsq", dtype, n)
    return LeastSquares.generate(n_or_default(n), rows, 20 if d is None else d, omega=0.5, seed=seed,
                                 dtype=dtype)


def _lsq_convex(n=None, d=None, rows=DEFAULT_ROWS, seed=0, float64=False, weights="uniform", data=None):
    """``--task lsq-convex``: least squares with d > n rows (not strongly convex; default d =
    n rows + 10), or a user's .npz."""
    if data is not None:
        return _lsq(n, d, rows, seed, float64, weights, data)
    n = n_or_default(n)
    d = n * rows + 10 if d is None else d
    require(d > n * rows, f"lsq-convex needs d > n * rows = {n * rows} (not strongly convex), got d = {d}")
    return LeastSquares.generate(n, rows, d, omega=0.5, seed=seed, dtype=dtype_of({"float64": float64}))


register(TaskSpec("lsq", _lsq, "least squares f_i(x) = ||A_i x - y_i||^2 / (2m) (SD-GT's AR(1) data), "
                  "or a user's A, y", (DATA, N, D, ROWS, SEED, FLOAT64, WEIGHTS)))
register(TaskSpec("lsq-convex", _lsq_convex, "least squares with d > n rows: convex, not strongly",
                  (DATA, N, D, ROWS, SEED, FLOAT64, WEIGHTS)))
