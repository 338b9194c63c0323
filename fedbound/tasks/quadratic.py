"""Quadratic tasks: f_i(x) = 1/2 x^T H_i x - e_i^T x + c_i with PSD H_i, everything in closed form.

``QuadraticTask`` holds what every quadratic task shares (least squares and the heavy-tailed quadratic are
quadratic too): exact L, mu (extreme eigenvalues of the H_i and of Hbar = sum_i p_i H_i), x*, f*, and the
heterogeneity constants as sups of quadratic forms (fednova.md sec. 4.12):

    sum_ik K_ik <H_i x - e_i, H_k x - e_k> = x^T M x - 2 b^T x + c,
    M = sum_ik K_ik H_i H_k,  b = sum_ik K_ik H_i e_k,  c = sum_ik K_ik e_i^T e_k,

whose sup is finite iff M <= 0 and b in range(M) (:func:`fedbound.tasks.heterogeneity.quadratic_sup`).

``Quadratic`` is the heterogeneous quadratic f_i(x) = 1/2 (x - b_i)^T H_i (x - b_i) (so e_i = H_i b_i,
c_i = 1/2 b_i^T H_i b_i) of sdgt.md sec. 7.3, fednova.md sec. 2.11/6.1 (H_i = I, b_i = e_i) and afga.md sec. 7.2
Q1 (shared diagonal H).
"""
from __future__ import annotations

import os
from typing import Annotated, Literal

import numpy as np
import torch

from fedbound import resources, validate
from fedbound.argtypes import NonNegative, Positive, ProbabilityArray, Range, Seed
from fedbound.errors import ValidationError, require
from fedbound.tasks.base import Points, Task, Weights, _on_device, as_float64, check_size
from fedbound.tasks.heterogeneity import check_weights, quadratic_sup
from fedbound.tasks.registry import (D, DATA, FLOAT64, N, SEED, TaskSpec, dtype_of, n_or_default,
                                     read_data, register)

#: eigenvalues at most this fraction of the largest one are reported as 0 (rank deficiency)
RANK_TOL = 1e-12

HESSIAN_KINDS = ("dense", "diagonal")


def _clip_zero(value: float, scale: float) -> float:
    return 0.0 if value <= RANK_TOL * scale else float(value)


def affine_solve(Hbar: np.ndarray, ebar: np.ndarray, x0: np.ndarray, *,
                 eigh: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """The projection of x0 onto argmin 1/2 x^T Hbar x - ebar^T x (Hbar PSD, ebar in its range):
    x0 + Hbar^+ (ebar - Hbar x0), with one step of iterative refinement. ``eigh``: Hbar's
    eigendecomposition (lam, V) as np.linalg.eigh returns it, when already computed."""
    Hbar, ebar, x0 = np.asarray(Hbar), np.asarray(ebar), np.asarray(x0)
    require(Hbar.ndim == 2 and Hbar.shape[0] == Hbar.shape[1] and Hbar.shape[0] >= 1,
            f"Hbar must be a square matrix, got shape {Hbar.shape}")
    require(ebar.shape == Hbar.shape[:1] and x0.shape == Hbar.shape[:1],
            f"ebar and x0 must have shape ({Hbar.shape[0]},) to match Hbar, got {ebar.shape} and {x0.shape}")
    lam, V = np.linalg.eigh(Hbar) if eigh is None else eigh
    keep = lam > RANK_TOL * max(lam[-1], np.finfo(float).tiny)
    Vr, lr = V[:, keep], lam[keep]

    def pinv(r):
        return Vr @ ((Vr.T @ r) / lr)

    x = x0 + pinv(ebar - Hbar @ x0)
    return x + pinv(ebar - Hbar @ x)


class _LazyConstant:
    """A constant of a quadratic task computed at its first read, with the others of its ``group``
    (:meth:`QuadraticTask._compute_constants`: ``"optimum"``, x* and f*, one solve with the mean
    Hessian; ``"curvature"``, L, mu and their global versions, the eigenvalues of n client Hessians,
    seconds at n = 1000, which a run that never reads them should not pay); assigning it overrides
    the computed value for that task only. The computed values live in one dict that the task's
    shallow copies (``with_noise``) share, so they are computed once for all of them; so do the
    intermediates both groups need, the mean Hessian Hbar of the task's weights and its
    eigendecomposition (:meth:`QuadraticTask._hbar`, :meth:`QuadraticTask._hbar_eigh`: one pass
    over the data, seconds for a large least-squares task, made once)."""

    def __init__(self, group: str):
        self.group = group

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        if self.name in obj.__dict__:
            return obj.__dict__[self.name]
        computed = obj.__dict__.setdefault("_lazy_constants", {})
        if self.name not in computed:
            obj._compute_constants(computed, self.group)
            # a task moved by Task.to computes its constants from its numpy data: keep them on
            # the task's device
            computed.update(_on_device(computed, obj.device))
        return computed[self.name]

    def __set__(self, obj, value):
        obj.__dict__[self.name] = value


class QuadraticTask(Task):
    """Shared closed forms of the quadratic tasks. Subclasses call ``_set_constants()`` at the end of
    ``__init__`` and implement ``hessians``, ``linear_terms``, ``_client_eigen_extremes``, ``_mean_hessian``,
    ``_form``. The exact constants (L, mu, L_global, mu_global, x_star, f_star) are computed together
    at the first read of any of them (:class:`_LazyConstant`)."""

    L = _LazyConstant("curvature")
    mu = _LazyConstant("curvature")
    L_global = _LazyConstant("curvature")
    mu_global = _LazyConstant("curvature")
    _client_lmax = _LazyConstant("curvature")
    x_star = _LazyConstant("optimum")
    f_star = _LazyConstant("optimum")
    _hessian_mean = _LazyConstant("optimum")
    _optimum_grad = _LazyConstant("optimum")

    @property
    def hessians(self) -> torch.Tensor:
        """Client Hessians H_i, (n, d, d)."""
        raise NotImplementedError

    @property
    def linear_terms(self) -> torch.Tensor:
        """e_i with grad f_i(x) = H_i x - e_i, (n, d)."""
        raise NotImplementedError

    def _client_eigen_extremes(self) -> tuple[np.ndarray, np.ndarray]:
        """(lambda_max(H_i), lambda_min(H_i)) for every client, float64 arrays (n,)."""
        raise NotImplementedError

    def _mean_hessian(self, w: np.ndarray) -> np.ndarray:
        """sum_i w_i H_i, (d, d) float64."""
        raise NotImplementedError

    def _form(self, K: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """(M, b, c) of sum_ik K_ik <grad f_i(x), grad f_k(x)> = x^T M x - 2 b^T x + c."""
        raise NotImplementedError

    def _hbar(self) -> np.ndarray:
        """Hbar = sum_i p_i H_i (d, d) float64 for the task's weights, computed once and shared by
        the two groups of constants (and the task's copies) in the dict of :class:`_LazyConstant`."""
        computed = self.__dict__.setdefault("_lazy_constants", {})
        if "_hbar" not in computed:
            computed["_hbar"] = self._mean_hessian(self._weights_np)
        return computed["_hbar"]

    def _hbar_eigh(self) -> tuple[np.ndarray, np.ndarray]:
        """np.linalg.eigh(Hbar) (ascending eigenvalues, eigenvectors), computed once and shared
        like :meth:`_hbar`: the optimum solves with it, the curvature group reads its extremes."""
        computed = self.__dict__.setdefault("_lazy_constants", {})
        if "_hbar_eigh" not in computed:
            computed["_hbar_eigh"] = np.linalg.eigh(self._hbar())
        return computed["_hbar_eigh"]

    def _global_eigen_extremes(self) -> tuple[float, float]:
        """(lambda_max, lambda_min) of Hbar = sum_i p_i H_i."""
        lam = self._hbar_eigh()[0]
        return float(lam[-1]), float(lam[0])

    def _solve_optimum(self) -> np.ndarray:
        """The projection of x0 onto argmin f."""
        ebar = self._weights_np @ self.linear_terms.detach().cpu().to(torch.float64).numpy()
        return affine_solve(self._hbar(), ebar, self.x0.detach().cpu().to(torch.float64).numpy(),
                            eigh=self._hbar_eigh())

    def _set_constants(self) -> None:
        """The constants known at once (the own gradients are unbounded); the exact ones are lazy."""
        self._G_own = self._G_inf_own = float("inf")
        self._lazy_constants = {}

    def _compute_constants(self, into: dict, group: str) -> None:
        """The exact constants of ``group`` (:class:`_LazyConstant`) into ``into``."""
        if group == "curvature":
            lmax, lmin = self._client_eigen_extremes()
            L = float(lmax.max())
            L_global, low = self._global_eigen_extremes()
            into.update({"_client_lmax": lmax, "L": L, "mu": _clip_zero(float(lmin.min()), L),
                         "L_global": L_global, "mu_global": _clip_zero(low, L_global)})
            return
        x_star = torch.as_tensor(self._solve_optimum(), dtype=self.dtype, device=self.device)
        into.update({"x_star": x_star, "f_star": self.loss(x_star),
                     "_optimum_grad": self.global_grad(x_star),
                     "_hessian_mean": torch.as_tensor(self._hbar(), dtype=self.dtype,
                                                      device=self.device)})

    def global_metrics(self, X: Points) -> tuple[torch.Tensor, torch.Tensor]:
        """f(x_r) and grad f(x_r) for the rows x_r of ``X`` (R, d) by the exact expansion of the
        quadratic f about its computed minimizer z (not an assigned ``x_star``):
        f(x) = f(z) + grad f(z)^T e + 1/2 e^T Hbar e, grad f(x) = grad f(z) + Hbar e, e = x - z,
        Hbar = sum_i p_i H_i: O(d^2) per point instead of a pass over every client's data, and
        f(x) - f(z) without the cancellation of a difference of two losses. All rows in one product
        E Hbar (a run evaluates its rounds in chunks, :data:`fedbound.algorithms.run.METRIC_CHUNK`):
        the same rows in the same chunk give the same bits."""
        X = torch.as_tensor(X, dtype=self.dtype, device=self.device)
        require(X.ndim == 2 and X.shape[1] == self.d,
                f"X must have shape (R, {self.d}), got {tuple(X.shape)}")
        H, g = self._hessian_mean, self._optimum_grad    # the optimum group, computed once
        z, f_z = self._lazy_constants["x_star"], self._lazy_constants["f_star"]   # not assigned ones
        E = X - z
        HE = E @ H    # Hbar is symmetric: row r is Hbar e_r
        return f_z + E @ g + 0.5 * torch.sum(E * HE, dim=1), HE + g

    def _sup_and_maximiser(self, K: np.ndarray) -> tuple[float, np.ndarray | None]:
        M, b, c = self._form(K)
        e_norm = np.linalg.norm(self.linear_terms.detach().to(torch.float64).numpy(), axis=1)
        absK, h = np.abs(K), self._client_lmax
        return quadratic_sup(M, b, c, scale_M=float(h @ absK @ h), scale_b=float(h @ absK @ e_norm))

    def _sup_measure(self, K: np.ndarray) -> float:
        return self._sup_and_maximiser(K)[0]

    def maximiser(self, K: np.ndarray) -> np.ndarray | None:
        """A point attaining sup_x sum_ik K_ik <grad f_i, grad f_k> for K (n, n) (None when the sup is
        infinite)."""
        require(np.shape(K) == (self.n, self.n), f"K must have shape ({self.n}, {self.n}), got {np.shape(K)}")
        return self._sup_and_maximiser(K)[1]

    def beta2_min(self, weights: ProbabilityArray | None = None) -> float:
        """max(1, lambda_max(Hbar_w^+ S_w Hbar_w^+)) with S_w = sum_i w_i H_i^2, Hbar_w = sum_i w_i H_i
        (fednova.md sec. 4.12): kappa^2(beta^2) is finite for every beta^2 above it (at it, possibly not);
        inf when S_w has a component outside range(Hbar_w) (possible only with zero weights)."""
        w = self._weights_np if weights is None else check_weights(weights, self.n)
        S = self._form(np.diag(w))[0]
        lam, V = np.linalg.eigh(self._mean_hessian(w))
        keep = lam > RANK_TOL * max(lam[-1], np.finfo(float).tiny)
        if np.linalg.norm(S @ V[:, ~keep]) > 1e-9 * max(np.linalg.norm(S), np.finfo(float).tiny):
            return float("inf")
        P = V[:, keep] / lam[keep]
        return max(1.0, float(np.linalg.eigvalsh(P.T @ S @ P)[-1]))


class Quadratic(QuadraticTask):
    """f_i(x) = 1/2 (x - b_i)^T H_i (x - b_i) from user arrays H (n, d, d) and b (n, d).

    H must be symmetric and PSD; with ``spd=True`` (default) every H_i must be positive definite
    (each f_i strongly convex, SD-GT Assumption 4). Build from a seed with :meth:`generate`.
    """

    def __init__(self, H: np.ndarray, b: np.ndarray, *, spd: bool = True, weights: Weights | None = None,
                 x0: Points | None = None, dtype: torch.dtype = torch.float64):
        H = as_float64("H", H, 3)
        b = as_float64("b", b, 2)
        n, d = b.shape
        require(H.shape == (n, d, d), f"H must have shape (n, d, d) = ({n}, {d}, {d}) to match b {b.shape}, got {H.shape}")
        super().__init__(n, d, dtype=dtype, weights=weights, x0=x0)
        asym = np.abs(H - H.transpose(0, 2, 1)).max(axis=(1, 2))
        size = np.abs(H).max(axis=(1, 2))
        bad = np.flatnonzero(asym > 1e-12 * np.maximum(size, 1.0))
        if bad.size:
            raise ValidationError(f"H[{bad[0]}] must be symmetric, got max |H - H^T| = {asym[bad[0]]:.3g}")
        H = (H + H.transpose(0, 2, 1)) / 2.0
        lam = np.linalg.eigvalsh(H)
        scale = np.maximum(lam[:, -1], np.finfo(float).tiny)
        floor = RANK_TOL * scale if spd else -RANK_TOL * scale
        bad = np.flatnonzero(lam[:, 0] <= floor)
        if bad.size:
            kind = "SPD (lambda_min > 0; pass spd=False for PSD)" if spd else "PSD (lambda_min >= 0)"
            raise ValidationError(f"H[{bad[0]}] must be {kind}, got lambda_min = {lam[bad[0], 0]:.6g}")
        self._H = H
        self._b = b
        self._e = np.einsum("nij,nj->ni", H, b)
        self._lam = lam
        self._Ht = torch.as_tensor(H, dtype=dtype)
        self._bt = torch.as_tensor(b, dtype=dtype)
        self._set_constants()

    @classmethod
    def from_npz(cls, path: str | os.PathLike, *, spd: bool = False, **kwargs) -> "Quadratic":
        """Load H (n, d, d), b (n, d) and optionally p (n,) (the weights p_i: non-negative, summing to
        1; absent: uniform) from a user's .npz file (FedNova's quadratic, fednova.md 2.11: f_i(x) =
        1/2 (x - b_i)^T H_i (x - b_i)). Read safely (:func:`fedbound.tasks.npz.load_arrays`); H must
        be symmetric PSD (``spd=True``: positive definite). ``kwargs`` go to the constructor (x0,
        dtype)."""
        from fedbound.tasks.npz import load_arrays

        arrays = load_arrays(path, ("H", "b"), ("p",), "H (n, d, d), b (n, d) and optional p (n,)")
        H, b = arrays["H"], arrays["b"]
        require(b.ndim == 2, f"key 'b' must have shape (n, d), got {b.shape}")
        require(H.shape == (b.shape[0], b.shape[1], b.shape[1]),
                f"key 'H' must have shape (n, d, d) = ({b.shape[0]}, {b.shape[1]}, {b.shape[1]}) to "
                f"match 'b' {b.shape}, got {H.shape}")
        p = arrays.get("p")
        if p is not None:
            p = validate.real_array("p", p, shape=(b.shape[0],), low=0.0)
            require(abs(float(p.sum()) - 1.0) <= 1e-10,
                    f"key 'p' must sum to 1 (the weights p_i), got sum {float(p.sum())!r}")
        return cls(H, b, spd=spd, weights=p, **kwargs)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(H, b, p) as float64 numpy copies: the data the task was built from, whatever its dtype."""
        return self._H.copy(), self._b.copy(), self._weights_np.copy()

    def to_npz(self, path: str | os.PathLike) -> None:
        """Save H, b and p (float64) so that :meth:`from_npz` rebuilds the same task."""
        np.savez(path, H=self._H, b=self._b, p=self._weights_np)

    @classmethod
    def generate(cls, n: int, d: int, *, kappa: Annotated[float, Range(1.0)] = 10.0, mu: Positive = 1.0,
                 heterogeneity: NonNegative = 1.0, hessian: Literal["dense", "diagonal"] = "dense",
                 shared: bool = False, seed: Seed = 0, dtype: torch.dtype = torch.float64) -> "Quadratic":
        """A seeded heterogeneous quadratic.

        Eigenvalues of the H_i are log-uniform in [mu, kappa*mu], then mapped affinely in log scale so that
        the smallest of all of them is mu and the largest kappa*mu (so L/mu = kappa whenever there are at
        least two: d >= 2, or n >= 2 without ``shared``). ``hessian``: "dense" (H_i = Q_i diag Q_i^T, Q_i Haar-random) or "diagonal";
        ``shared``: one H for all clients (then sigma_g^2 is finite, afga.md Q1). Minimisers
        b_i = c + heterogeneity * z_i with c, z_i ~ N(0, I_d); kappa = 1 gives H_i = mu I (fednova.md sec. 6.1).
        """
        n, d = check_size("n", n), check_size("d", d)
        resources.require_memory(f"a quadratic task with n = {n}, d = {d} (n d^2 Hessian entries)",
                                 4 * n * d * d)
        kappa = validate.number("kappa", kappa, low=1.0)
        mu = validate.number("mu", mu, low=0, low_open=True)
        heterogeneity = validate.number("heterogeneity", heterogeneity, low=0)
        hessian = validate.one_of("hessian", hessian, HESSIAN_KINDS)
        shared = validate.boolean("shared", shared)
        rng = validate.rng(seed)
        m = 1 if shared else n
        loglam = rng.uniform(0.0, 1.0, size=(m, d))
        span = loglam.max() - loglam.min()
        loglam = (loglam - loglam.min()) / span if span > 0 else np.zeros_like(loglam)
        lam = mu * kappa**loglam
        if hessian == "dense":
            Q, R = np.linalg.qr(rng.standard_normal((m, d, d)))
            Q = Q * np.sign(np.diagonal(R, axis1=1, axis2=2))[:, None, :]
            H = np.einsum("mij,mj,mkj->mik", Q, lam, Q)
        else:
            H = np.einsum("mj,jk->mjk", lam, np.eye(d))
        H = np.broadcast_to(H, (n, d, d))
        b = rng.standard_normal(d) + heterogeneity * rng.standard_normal((n, d))
        return cls(H, b, spd=True, dtype=dtype)

    @property
    def hessians(self) -> torch.Tensor:
        return self._Ht

    @property
    def centers(self) -> torch.Tensor:
        """The local minimisers b_i, (n, d)."""
        return self._bt

    @property
    def linear_terms(self) -> torch.Tensor:
        return torch.as_tensor(self._e, dtype=self.dtype)

    def client_data(self) -> dict:
        return {"H": self._Ht, "b": self._bt}

    def _losses_on(self, X, data) -> torch.Tensor:
        D = X - data["b"]
        return 0.5 * torch.einsum("ni,nij,nj->n", D, data["H"], D)

    def _grad_on(self, X, data) -> torch.Tensor:
        """H_i (x_i - b_i) per row, as one batched product (torch.einsum's own Python layer cost 8 of
        its 12 us per call on a round's (4, 10, 10); the same products, equal to it bitwise)."""
        D = X - data["b"]
        return torch.bmm(data["H"], D.unsqueeze(2)).squeeze(2)

    def _client_eigen_extremes(self):
        return self._lam[:, -1], self._lam[:, 0]

    def _mean_hessian(self, w):
        return np.einsum("n,nij->ij", w, self._H)

    def _form(self, K):
        H, e = self._H, self._e
        T = np.einsum("ik,kab->iab", K, H)
        M = np.einsum("iab,ibc->ac", H, T)
        b = np.einsum("iab,ib->a", H, K @ e)
        c = float(np.sum(K * (e @ e.T)))
        return (M + M.T) / 2.0, b, c


def _preset(n=None, d=None, seed=0, float64=False, data=None) -> "Quadratic":
    """``--task quadratic``: a user's .npz (H, b, optional p), or Quadratic.generate(n, d = 10,
    kappa = 10, mu = 0.1, heterogeneity = 1)."""
    dtype = dtype_of({"float64": float64})
    if data is not None:
        require(d is None, "d comes from the data file; drop it")
        return read_data(data, Quadratic.from_npz, "quadratic", dtype, n)
    return Quadratic.generate(n_or_default(n), 10 if d is None else d, kappa=10.0, mu=0.1,
                              heterogeneity=1.0, seed=seed, dtype=dtype)


register(TaskSpec("quadratic", _preset, "heterogeneous quadratics f_i(x) = 1/2 (x - b_i)^T H_i (x - b_i) "
                  "(kappa 10, mu 0.1), or a user's H, b, p", (DATA, N, D, SEED, FLOAT64)))
