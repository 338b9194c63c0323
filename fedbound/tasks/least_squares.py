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


#: numbers in one block of rows of the stacked data (8 MB): the AR(1) recursion, the weighted
#: mean Hessian and the null-space check walk the data in such blocks, which stay in cache
_BLOCK = 2**20

#: eigenvalues of Hbar at most this fraction of the largest one are null directions of the
#: least-squares solve (:meth:`LeastSquares._solve_optimum`): 20-100 times the rounding level of
#: the computed eigenvalues of a rank-deficient A^T W A (1e-16 to 6e-16 measured for
#: 1e3-5e5 rows), so that directions down to sigma_min / sigma_max = 1e-7 are solved for
LSQ_RANK_TOL = 1e-14
#: a dropped direction v with ||W^(1/2) A v|| above this fraction of sigma_max (measured on the
#: data) is no null direction for np.linalg.lstsq (it keeps sigma > eps max(N, d) sigma_max):
#: the solve falls back to lstsq (kappa(A) in 1e7-1e9, which normal equations cannot resolve)
LSQ_GRAY_TOL = 1e-9
#: iterative refinement stops when its correction is at most this fraction of
#: ||x|| + ||W^(1/2) y|| / sigma_max (the scale of the rounding of the residual)
LSQ_REFINE_TOL = 1e-15
#: at most this many refinement steps (2-4 are needed for condition numbers up to 1e6)
LSQ_MAX_REFINE = 12


def ar1_rows(z: np.ndarray, omega: _Omega, *, out: np.ndarray | None = None) -> np.ndarray:
    """Rows of the AR(1) process driven by z (..., d): stationary start z_1/sqrt(1-omega^2) [003 L486].
    Computed in blocks of rows that stay in cache (the same numbers as column by column over all
    rows, several times faster for hundreds of MB of data), into ``out`` if given: a C-contiguous float64 array
    of z's shape, which may be z itself (in place: no second array of the size of the data)."""
    omega = validate.number("omega", omega, low=0.0, high=1.0, high_open=True)
    z = np.asarray(z, dtype=np.float64)
    require(z.ndim >= 1 and z.shape[-1] >= 1, f"z must have at least one column, got shape {z.shape}")
    if out is None:
        out = np.empty(z.shape)   # C order, whatever z's: the rows below are views of it
    require(isinstance(out, np.ndarray) and out.shape == z.shape and out.dtype == np.float64
            and out.flags.c_contiguous and out.flags.writeable,
            f"out must be a writeable C-contiguous float64 array of shape {z.shape}")
    d = z.shape[-1]
    zf, af = z.reshape(-1, d), out.reshape(-1, d)
    start = np.sqrt(1.0 - omega**2)
    step = max(1, _BLOCK // (2 * d))
    for first in range(0, zf.shape[0], step):
        zb, ab = zf[first:first + step], af[first:first + step]
        ab[:, 0] = zb[:, 0] / start
        for col in range(1, d):   # reads z's column col before writing it: in place is safe
            ab[:, col] = omega * ab[:, col - 1] + zb[:, col]
    return out


class LeastSquares(QuadraticTask):
    """f_i(x) = 1/(2m) ||A_i x - y_i||^2 from user arrays A (n, m, d) and y (n, m), an .npz file
    (:meth:`from_npz`) or the seeded AR(1) generator (:meth:`generate`).

    The task keeps its own copy of a user's A and y (changing them afterwards changes nothing);
    :meth:`generate` and :meth:`from_npz` hand over arrays nobody else holds, without a copy."""

    def __init__(self, A: np.ndarray, y: np.ndarray, *, weights: Weights | None = None, x0: Points | None = None,
                 dtype: torch.dtype = torch.float64):
        self._setup(A, y, weights, x0, dtype, copy=True)

    @classmethod
    def _owning(cls, A: np.ndarray, y: np.ndarray, *, weights=None, x0=None,
                dtype: torch.dtype = torch.float64) -> "LeastSquares":
        """The task of arrays that only it holds (fresh draws, a file's contents): no copy."""
        task = cls.__new__(cls)
        task._setup(A, y, weights, x0, dtype, copy=False)
        return task

    def _setup(self, A, y, weights, x0, dtype, copy: bool) -> None:
        A = as_float64("A", A, 3, copy=copy)
        y = as_float64("y", y, 2, copy=copy)
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
        A = ar1_rows(z, omega, out=z)   # z is not needed any more
        task = cls._owning(A, A @ x_true + noise_std * eps, dtype=dtype)
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
        return cls._owning(A, y, **kwargs)

    def to_npz(self, path: str | os.PathLike) -> None:
        """Save A and y (float64) so that from_npz(path) rebuilds the same task."""
        np.savez(path, A=self._A, y=self._y)

    # ---- objective ----------------------------------------------------------------------------
    @property
    def num_examples(self) -> np.ndarray:
        return np.full(self.n, self.m, dtype=np.int64)

    def client_data(self) -> dict:
        """A (n, m, d) and y as rows (n, 1, m), the shapes the batched products take."""
        return {"A": self._At, "y": self._yt.unsqueeze(1)}

    @staticmethod
    def _residuals(X, data, scale: float = 1.0) -> torch.Tensor:
        """(k, 1, m): the rows scale (A_i x_i - y_i)^T. Two batched row-vector products x^T A^T and
        r^T A per gradient: the orientation that streams A fastest on CPU (einsum was 2.5-5x
        slower; benchmarks/bench_sdgt_vectorized.py); y and the scale inside the first (baddbmm:
        a small round's cost is its calls)."""
        return torch.baddbmm(data["y"], X.unsqueeze(1), data["A"].transpose(1, 2), beta=-scale, alpha=scale)

    def _losses_on(self, X, data) -> torch.Tensor:
        return torch.sum(self._residuals(X, data).squeeze(1) ** 2, dim=1) / (2 * self.m)

    def _grad_on(self, X, data) -> torch.Tensor:
        return torch.bmm(self._residuals(X, data, 1 / self.m), data["A"]).squeeze(1)

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
        """sum_i w_i A_i^T A_i / m without a weighted copy of the stacked data R (n m, d): one
        product (w_0 / m) R^T R for equal weights, else blocks of clients scaled by sqrt(w_i / m);
        symmetrized. The products run in torch on a view of the float64 data (its BLAS holds up
        on a loaded machine, where numpy's took 2-8 times longer)."""
        n, m, d = self._A.shape
        A = torch.from_numpy(self._A)
        if np.all(w == w[0]):
            R = A.reshape(-1, d)
            H = (R.T @ R).numpy()
            return (H + H.T) * (0.5 * w[0] / m)
        H = torch.zeros((d, d), dtype=torch.float64)
        step = max(1, _BLOCK // (m * d))
        for first in range(0, n, step):
            scale = torch.from_numpy(np.repeat(np.sqrt(w[first:first + step] / m), m))
            B = A[first:first + step].reshape(-1, d) * scale[:, None]
            H += B.T @ B
        H = H.numpy()
        return (H + H.T) / 2.0

    def _solve_optimum(self):
        """The projection of x0 onto argmin f, the weighted least-squares problem
        min ||W^(1/2) (A x - y)|| over the stacked data (N = n m rows, W = diag(w_i / m) row by
        row), as np.linalg.lstsq solves it (:meth:`_solve_optimum_lstsq`) but without a
        factorization of A (an SVD: seconds for 1e4 clients):

        - corrected semi-normal equations: x <- x + Hbar^+ A^T W (y - A x) from x = x0, Hbar^+
          from the shared eigendecomposition of Hbar = A^T W A (eigenvalues <= LSQ_RANK_TOL
          lambda_max dropped), the residual of the true problem recomputed on the data at each
          step (two passes over it). Each step shrinks the error by about eps kappa(A)^2; the
          steps stop when the correction is below LSQ_REFINE_TOL ||x|| or stops shrinking (the
          rounding level, about eps kappa(A)), both relative to ||x|| + ||W^(1/2) y|| / sigma_max:
          2-4 steps for kappa(A) up to 1e6;
        - when directions were dropped (A rank-deficient), x0 projected onto argmin: the dropped
          eigenvectors span null(A) only to about eps kappa^2 (Hbar was formed), so they are
          refined on the data the same way, N <- N - Hbar^+ A^T W A N, and x <- x - N N^T (x - x0).

        Falls back to lstsq when a refinement does not converge (kappa(A) above about 1e7) or a
        dropped direction has ||W^(1/2) A v|| > LSQ_GRAY_TOL sigma_max (no null direction for
        lstsq, which keeps sigma > eps max(N, d) sigma_max)."""
        lam, V = self._hbar_eigh()
        top = max(float(lam[-1]), np.finfo(float).tiny)
        keep = lam > LSQ_RANK_TOL * top
        Vr, lr = V[:, keep], lam[keep]
        R, y = self._A.reshape(-1, self.d), self._y.reshape(-1)
        s = np.repeat(self._weights_np / self.m, self.m)
        x0 = self.x0.detach().cpu().to(torch.float64).numpy()
        floor = max(LSQ_REFINE_TOL, 100 * np.finfo(float).eps * (np.sqrt(top / lr[0]) if lr.size else 1.0))
        y_scale = float(np.sqrt(s @ (y * y) / top))   # ||W^(1/2) y|| / sigma_max
        x, size, previous = x0.copy(), np.inf, np.inf
        for _ in range(LSQ_MAX_REFINE):
            dx = Vr @ ((Vr.T @ (R.T @ (s * (y - R @ x)))) / lr)
            x = x + dx
            # relative to the scale of the rounding of y - A x: eps (||x|| + ||W^(1/2) y|| / sigma_max)
            size = float(np.linalg.norm(dx)) / max(float(np.linalg.norm(x)) + y_scale, np.finfo(float).tiny)
            if size <= LSQ_REFINE_TOL or size > 0.5 * previous:
                break
            previous = size
        if size > floor:
            return self._solve_optimum_lstsq()
        if keep.all():
            return x
        null = self._null_basis(V[:, ~keep], Vr, lr, s, top, floor)
        if null is None:
            return self._solve_optimum_lstsq()
        return x - null @ (null.T @ (x - x0))

    def _null_basis(self, N, Vr, lr, s, top, floor):
        """An orthonormal basis of null(W^(1/2) A) refined from the dropped eigenvectors N (d, k):
        N <- orth(N - Hbar^+ A^T W A N), A^T W A N computed on the data in blocks of rows (2 N d k
        flops a step), until the correction is below LSQ_REFINE_TOL or stops shrinking; None when
        it does not reach ``floor`` or a column has ||W^(1/2) A v|| > LSQ_GRAY_TOL sqrt(top)."""
        R = self._A.reshape(-1, self.d)
        step = max(1, _BLOCK // max(self.d, N.shape[1]))
        size = previous = np.inf
        for _ in range(LSQ_MAX_REFINE):
            sq, G = np.zeros(N.shape[1]), np.zeros_like(N)
            for first in range(0, R.shape[0], step):
                B, sb = R[first:first + step], s[first:first + step]
                Z = B @ N
                sq += sb @ (Z * Z)
                G += B.T @ (sb[:, None] * Z)
            if np.sqrt(sq.max()) > LSQ_GRAY_TOL * np.sqrt(top):
                return None
            if size <= LSQ_REFINE_TOL or size > 0.5 * previous:
                break
            previous = size
            C = Vr @ ((Vr.T @ G) / lr[:, None])
            size = float(np.linalg.norm(C, axis=0).max())
            N = np.linalg.qr(N - C)[0]
        return N if size <= floor else None

    def _solve_optimum_lstsq(self):
        """x0 + the min-norm least-squares correction of the weighted stacked system (lstsq, SVD based):
        the projection of x0 onto argmin f."""
        scale = np.repeat(np.sqrt(self._weights_np / self.m), self.m)
        A = self._A.reshape(-1, self.d) * scale[:, None]
        x0 = self.x0.detach().cpu().to(torch.float64).numpy()
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
