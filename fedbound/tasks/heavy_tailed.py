"""Heavy-tailed quadratic of FedAda2 sec. 3 (fedada2.md sec. 4.1-4.3):

    F_i(x, xi_i) = 1/2 ||x - c_i||^2 + xi_i^T x,   stochastic gradient g_i = x - c_i + xi_i,

with xi_i having i.i.d. coordinates from client i's law, so f_i(x) = 1/2 ||x - c_i||^2, L = mu = 1, and
(c_i = 0 in the paper) x* = sum_i p_i c_i, f* = f(x*).
* Proposition 9 [004 L316-L342]: d = 1, client i (1-based) has xi_i ~ t_{i+1}: client 1 (t_2) has infinite
  variance, client i >= 2 has variance (i+1)/(i-1)  -> :meth:`student_t_clients`.
* Proposition 10 [004 L475-L516]: client 1 has xi_1 ~ Cauchy(0, gamma), gamma in (0, 1/3), the others
  N(0, sigma_i^2) (the paper leaves sigma_i open; one common sigma here) -> :meth:`cauchy_client`.
Per-client noise second moments ``client_sigma2`` = d * variance (nu/(nu-2) for t with nu > 2, inf for nu <= 2
and for Cauchy), and sigma2 = max_i client_sigma2 (SD-GT/FedNova's uniform bound; inf when any client is
heavy-tailed). The Cauchy law has no mean: its "unbiasedness" is symmetry about 0 (the paper's generalised
objective E[F_1] := x^2/2 "by symmetry", [004 L479-L489]).
"""
from __future__ import annotations

from typing import Literal

import numpy as np
import torch

from fedbound import resources, validate
from fedbound.argtypes import Count, NonNegative, Positive, Seed
from fedbound.errors import require
from fedbound.tasks.base import Points, Weights, as_float64, check_size
from fedbound.tasks.noise import check_law, law_variance, open_uniform, scalar_noise
from fedbound.tasks.quadratic import QuadraticTask
from fedbound.tasks.registry import (D, FLOAT64, N, SEED, TaskSpec, dtype_of, n_or_default,
                                     register)


class HeavyTailedQuadratic(QuadraticTask):
    """Clients i = 0..n-1 with noise law ``laws[i]`` in {"student_t", "cauchy", "gaussian"} and parameter
    ``params[i]`` (nu, gamma or standard deviation), dimension d, centers c (n, d) (default 0)."""

    def __init__(self, laws: list[str], params: np.ndarray, *, d: Count = 1, centers: np.ndarray | None = None,
                 weights: Weights | None = None, x0: Points | None = None, dtype: torch.dtype = torch.float64):
        laws = list(laws)
        params = as_float64("params", params, 1)
        n = len(laws)
        require(params.shape == (n,), f"params must have one entry per law, shape ({n},), got {params.shape}")
        for law, p in zip(laws, params):
            check_law(law, float(p))
        d = check_size("d", d)
        centers = np.zeros((n, d)) if centers is None else as_float64("centers", centers, 2)
        require(centers.shape == (n, d), f"centers must have shape ({n}, {d}), got {centers.shape}")
        super().__init__(n, d, weights=weights, x0=x0, dtype=dtype)
        self._c = centers
        self._ct = torch.as_tensor(centers, dtype=dtype)
        self.laws, self.params = laws, params
        self._laws_np = np.array(laws)
        self._set_constants()
        self.client_sigma2 = np.array([d * law_variance(law, float(p)) for law, p in zip(laws, params)])
        self._sampling_sigma2 = float(self.client_sigma2.max())

    @classmethod
    def student_t_clients(cls, n: Count, *, d: Count = 1, dtype: torch.dtype = torch.float64
                          ) -> "HeavyTailedQuadratic":
        """Proposition 9: client i (1-based) has Student-t noise with i+1 degrees of freedom."""
        n = check_size("n", n)
        return cls(["student_t"] * n, np.arange(2.0, n + 2.0), d=d, dtype=dtype)

    @classmethod
    def cauchy_client(cls, n: Count, *, gamma: Positive = 0.3, sigma: Positive = 1.0, d: Count = 1,
                      dtype: torch.dtype = torch.float64) -> "HeavyTailedQuadratic":
        """Proposition 10: client 1 has Cauchy(0, gamma) noise, the others N(0, sigma^2)."""
        n = check_size("n", n)
        return cls(["cauchy"] + ["gaussian"] * (n - 1), np.array([gamma] + [sigma] * (n - 1)), d=d, dtype=dtype)

    @classmethod
    def generate(cls, n: Count, d: Count = 1, *, law: Literal["student_t", "cauchy"] = "student_t",
                 spread: NonNegative = 0.0, seed: Seed = 0, gamma: Positive = 0.3, sigma: Positive = 1.0,
                 dtype: torch.dtype = torch.float64) -> "HeavyTailedQuadratic":
        """Proposition 9 ("student_t") or 10 ("cauchy") noise with centers c_i ~ N(0, spread^2 I), seeded."""
        law = validate.one_of("law", law, ("student_t", "cauchy"))
        spread = validate.number("spread", spread, low=0)
        validate.number("gamma", gamma, low=0, low_open=True)
        validate.number("sigma", sigma, low=0, low_open=True)
        resources.require_memory(f"a heavy-tailed quadratic with n = {n}, d = {d}",
                                 4 * validate.integer("n", n, low=1) * validate.integer("d", d, low=1))
        base = (cls.student_t_clients(n, d=d, dtype=dtype) if law == "student_t"
                else cls.cauchy_client(n, gamma=gamma, sigma=sigma, d=d, dtype=dtype))
        centers = spread * validate.rng(seed).standard_normal((base.n, base.d))
        return cls(base.laws, base.params, d=base.d, centers=centers, dtype=dtype)

    # ---- f_i(x) = 1/2 ||x - c_i||^2: identity Hessians, never stored ---------------------------
    @property
    def centers(self) -> torch.Tensor:
        return self._ct

    @property
    def hessians(self) -> torch.Tensor:
        return torch.eye(self.d, dtype=self.dtype).expand(self.n, self.d, self.d)

    @property
    def linear_terms(self) -> torch.Tensor:
        return self._ct

    def client_data(self) -> dict:
        return {"c": self._ct, "laws": self._laws_np, "params": self.params}

    def _losses_on(self, X, data) -> torch.Tensor:
        return 0.5 * torch.sum((X - data["c"]) ** 2, dim=1)

    def _grad_on(self, X, data) -> torch.Tensor:
        return X - data["c"]

    def _client_eigen_extremes(self):
        return np.ones(self.n), np.ones(self.n)

    def _mean_hessian(self, w):
        return np.eye(self.d) * w.sum()

    def _global_eigen_extremes(self):
        return 1.0, 1.0

    def _solve_optimum(self):
        return self._weights_np @ self._c

    def _form(self, K):
        return np.eye(self.d) * K.sum(), K.sum(axis=0) @ self._c, float(np.sum(K * (self._c @ self._c.T)))

    def _sampled_grad_on(self, X: torch.Tensor, data, generator: torch.Generator) -> torch.Tensor:
        xi = scalar_noise(data["laws"], data["params"], open_uniform(tuple(X.shape), generator))
        return self._grad_on(X, data) + xi.to(self.dtype)


def _preset(n=None, d=None, seed=0, float64=False):
    """``--task heavy-tailed``: FedAda2's quadratic with Student-t (nu) noise of section 3, d = 1."""
    return HeavyTailedQuadratic.generate(n_or_default(n), 1 if d is None else d, seed=seed,
                                         dtype=dtype_of({"float64": float64}))


register(TaskSpec("heavy-tailed", _preset, "quadratics with heavy-tailed gradient noise (FedAda2 sec. 3)",
                  (N, D, SEED, FLOAT64)))
