"""Multinomial logistic regression on FedProx's Synthetic(alpha, beta), FedNova's Fig. 5 task
(fednova.md sec. 6.2 [001 L216, L221-L223]).

Client i holds samples (a_s, y_s), s = 1..m_i, a_s in R^D, y_s in {0..C-1}; with abar_s = (a_s, 1) and the
parameter x = vec(W), W in R^{C x (D+1)} stored row-major (d = C (D+1), the last column is the bias):

    f_i(x) = (1/m_i) sum_s [logsumexp(W abar_s) - (W abar_s)_{y_s}] + (l2/2) ||x||^2.

Constants:
* Hess f_i(x) = (1/m_i) sum_s (diag(p_s) - p_s p_s^T) kron abar_s abar_s^T + l2 I, p_s = softmax(W abar_s).
  Since diag(p) - p p^T <= (1/2) I (Boehning 1992; the binary-logistic analogue is the familiar 1/4),
  L_i <= (1/2) lambda_max(Abar_i^T Abar_i / m_i) + l2. The exact sup over x is not closed form, so
  ``L`` = max_i of this bound and ``L_global`` = (1/2) lambda_max(sum_i p_i Abar_i^T Abar_i / m_i) + l2 are
  upper bounds (listed in ``bounds``).
* mu = mu_global = l2 exactly: the softmax is invariant to adding one vector to every row of W, so every
  Hessian has the eigenvalue l2 (direction 1 kron v) and none below.
* x*: Newton's method with backtracking in float64 to ||grad f(x*)|| <= 1e-12 (needs l2 > 0: Synthetic data are
  separable by construction, so without l2 no minimiser exists; then x_star = f_star = None).
* Stochastic gradients: minibatches of ``batch_size`` samples per client without replacement (FedNova uses 20);
  for them sigma2 is the bound max_i (m_i - B)/(B (m_i - 1)) (2/m_i) sum_s ||abar_s||^2 (finite-population
  variance, ||p - e_y||^2 <= 2), listed in ``bounds``; full gradients (batch_size None) have sigma2 = 0.

Synthetic(alpha, beta) (Li et al., FedProx; generator as in its reference code): u_k ~ N(0, alpha^2),
B_k ~ N(0, beta^2); W_k, b_k entries ~ N(u_k, 1); v_k entries ~ N(B_k, 1); a ~ N(v_k, diag(j^-1.2));
y = argmax(W_k a + b_k). Client sizes follow the code's power law floor(LogNormal(4, 2)) + 50, clipped to
``max_size`` (our choice, default 1000, to bound the padded memory; None = unclipped).
"""
from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
import torch

from fedbound import resources, validate
from fedbound.argtypes import Count, NonNegative, Range, Seed
from fedbound.errors import SolverError, require
from fedbound.tasks.base import Points, Weights, as_float64, check_size
from fedbound.tasks.clientdata import ClientData, ClientDataTask
from fedbound.tasks.registry import (D, FLOAT64, N, SEED, WEIGHTS, TaskSpec, dtype_of,
                                     n_or_default, register)

NEWTON_TOL = 1e-12
#: a number of classes >= 2
_Classes = Annotated[int, Range(2)]


class LogisticRegression(ClientDataTask):
    """Multinomial logistic regression from per-client arrays features[i] (m_i, D), labels[i] (m_i,)."""

    def __init__(self, features: list[np.ndarray], labels: list[np.ndarray], *, num_classes: _Classes | None = None,
                 l2: NonNegative = 1e-3, batch_size: int | None = None, weights: Weights | None = None,
                 x0: Points | None = None, dtype: torch.dtype = torch.float64):
        aug = [np.concatenate([as_float64(f"features[{i}]", f, 2), np.ones((len(f), 1))], axis=1)
               if np.ndim(f) == 2 else np.asarray(f) for i, f in enumerate(features)]
        data = ClientData.from_lists(aug, labels, dtype=torch.float64)
        top = int(data.labels.max()) + 1
        C = top if num_classes is None else check_size("num_classes", num_classes, low=2)
        require(top <= C, f"labels must be < num_classes={C}, got max label {top - 1}")
        require(C >= 2, f"need >= 2 classes, got {C}")
        l2 = validate.number("l2", l2, low=0)
        self.check_batch_size(batch_size)
        D1 = data.features.shape[2]
        self._sizes_np = data.sizes.numpy()
        super().__init__(data.n, C * D1, dtype=dtype, weights=weights, x0=x0)
        self.num_classes, self.dim, self.l2, self.batch_size = C, D1 - 1, float(l2), batch_size
        self._data64 = data
        self.data = ClientData(data.features.to(dtype), data.labels, data.mask.to(dtype), data.sizes)
        self._set_constants()

    @classmethod
    def generate(cls, n: Count = 30, *, alpha: NonNegative = 1.0, beta: NonNegative = 1.0, dim: Count = 60,
                 num_classes: _Classes = 10, sizes: np.ndarray | None = None, max_size: Count | None = 1000,
                 l2: NonNegative = 1e-3, batch_size: int | None = None,
                 weighting: Literal["uniform", "data"] = "uniform", seed: Seed = 0,
                 dtype: torch.dtype = torch.float64) -> "LogisticRegression":
        """Synthetic(alpha, beta) over n clients (module docstring). ``sizes``: explicit m_i (else power law);
        ``weighting``: "uniform" (f = (1/n) sum f_i) or "data" (FedNova's p_i = m_i / sum_k m_k)."""
        n, dim = check_size("n", n), check_size("dim", dim)
        C = check_size("num_classes", num_classes, low=2)
        alpha = validate.number("alpha", alpha, low=0)
        beta = validate.number("beta", beta, low=0)
        weighting = validate.one_of("weighting", weighting, ("uniform", "data"))
        resources.require_memory(f"logistic regression with n = {n}, dim = {dim}, {C} classes",
                                 4 * n * (dim + 1) * C)
        rng = validate.rng(seed)
        if sizes is None:
            sizes = rng.lognormal(4.0, 2.0, n).astype(np.int64) + 50
            if max_size is not None:
                sizes = np.minimum(sizes, validate.integer("max_size", max_size, low=1, high=10 ** 9))
        sizes = validate.real_array("sizes", sizes, shape=(n,), low=1)
        sizes = np.array([validate.integer(f"sizes[{i}]", k, high=10 ** 9) for i, k in enumerate(sizes)],
                         dtype=np.int64)
        resources.require_memory(f"logistic regression with n = {n}, dim = {dim}",
                                 3 * int(sizes.sum()) * (dim + C + 1))
        u = rng.normal(0.0, alpha, n)
        B = rng.normal(0.0, beta, n)
        cov_sqrt = np.arange(1, dim + 1) ** -0.6
        features, labels = [], []
        for i in range(n):   # one-off data generation, as in the reference code
            W = rng.normal(u[i], 1.0, (dim, C))
            b = rng.normal(u[i], 1.0, C)
            v = rng.normal(B[i], 1.0, dim)
            a = v + rng.standard_normal((sizes[i], dim)) * cov_sqrt
            features.append(a)
            labels.append(np.argmax(a @ W + b, axis=1))
        weights = None if weighting == "uniform" else sizes / sizes.sum()
        return cls(features, labels, num_classes=C, l2=l2, batch_size=batch_size, weights=weights, dtype=dtype)

    # ---- objective ----------------------------------------------------------------------------
    def _logits(self, X: torch.Tensor, data: ClientData) -> torch.Tensor:
        W = X.reshape(X.shape[0], self.num_classes, self.dim + 1)
        return torch.bmm(data.features, W.transpose(1, 2))   # (einsum: the same products, 2x the time)

    def _losses_on(self, X: torch.Tensor, data: ClientData) -> torch.Tensor:
        Z = self._logits(X, data)
        ce = torch.logsumexp(Z, dim=2) - torch.gather(Z, 2, data.labels[:, :, None])[:, :, 0]
        return torch.sum(ce * data.mask, dim=1) / data.sizes.to(X.dtype) + 0.5 * self.l2 * torch.sum(X * X, dim=1)

    def _grad_on(self, X: torch.Tensor, data: ClientData) -> torch.Tensor:
        Z = self._logits(X, data)
        R = torch.softmax(Z, dim=2)
        R = R - torch.nn.functional.one_hot(data.labels, self.num_classes).to(X.dtype)
        R = R * (data.mask / data.sizes.to(X.dtype)[:, None])[:, :, None]
        return torch.bmm(R.transpose(1, 2), data.features).reshape(X.shape[0], self.d) + self.l2 * X


    # ---- constants ----------------------------------------------------------------------------
    def _set_constants(self) -> None:
        data = self._data64
        m = data.sizes.to(torch.float64)
        Am = data.features * data.mask[:, :, None]
        gram = torch.einsum("nsk,nsl->nkl", Am, data.features) / m[:, None, None]
        self.L = 0.5 * float(torch.linalg.eigvalsh(gram)[:, -1].max()) + self.l2
        w = torch.as_tensor(self._weights_np)
        self.L_global = 0.5 * float(torch.linalg.eigvalsh(torch.einsum("n,nkl->kl", w, gram))[-1]) + self.l2
        self.mu = self.mu_global = self.l2
        bounds = {"L", "L_global"}
        if self.batch_size is not None:
            B = torch.clamp(data.sizes, max=self.batch_size).to(torch.float64)
            second = 2.0 * torch.einsum("nsk,nsk->n", Am, data.features) / m
            factor = torch.where(B < m, (m - B) / (B * torch.clamp(m - 1.0, min=1.0)), torch.zeros_like(m))
            self._sampling_sigma2 = float(torch.max(factor * second))
            bounds.add("sigma2")
        self.bounds = frozenset(bounds)
        if self.l2 > 0:
            self.x_star = self._newton().to(self.dtype)
            self.f_star = self.loss(self.x_star)

    def _global_terms(self, x: torch.Tensor, need_hessian: bool):
        """(f, grad f, Hess f) of the global f at x (float64) on the flattened samples."""
        A, y, owner = self._data64.valid()
        c = torch.as_tensor(self._weights_np)[owner] / self._data64.sizes.to(torch.float64)[owner]
        W = x.reshape(self.num_classes, self.dim + 1)
        Z = A @ W.T
        lse = torch.logsumexp(Z, dim=1)
        f = torch.dot(c, lse - Z[torch.arange(len(y)), y]) + 0.5 * self.l2 * torch.dot(x, x)
        P = torch.softmax(Z, dim=1)
        R = (P - torch.nn.functional.one_hot(y, self.num_classes).to(P.dtype)) * c[:, None]
        g = (R.T @ A).reshape(-1) + self.l2 * x
        if not need_hessian:
            return f, g, None
        D1 = self.dim + 1
        H = torch.zeros(self.d, self.d, dtype=torch.float64)
        for k in range(self.num_classes):   # block-diagonal part, one block per class
            H[k * D1:(k + 1) * D1, k * D1:(k + 1) * D1] = (A * (c * P[:, k])[:, None]).T @ A
        V = (torch.sqrt(c)[:, None, None] * P[:, :, None] * A[:, None, :]).reshape(len(y), self.d)
        H = H - V.T @ V + self.l2 * torch.eye(self.d, dtype=torch.float64)
        return f, g, H

    def hessian_global(self, x: Points) -> torch.Tensor:
        """Exact Hessian of the global f at x, (d, d) float64."""
        return self._global_terms(self.point(x).to(torch.float64), True)[2]

    def _newton(self) -> torch.Tensor:
        x = self.x0.to(torch.float64).clone()
        for _ in range(200):
            f, g, H = self._global_terms(x, True)
            try:
                step = torch.linalg.solve(H, g)
            except torch.linalg.LinAlgError:
                raise SolverError("Newton's method for x* met a singular Hessian (features too large "
                                  "or too ill-conditioned for float64)") from None
            decrement = float(torch.dot(g, step))
            if float(torch.linalg.vector_norm(g)) <= NEWTON_TOL or decrement <= 1e-30:
                break
            t = 1.0
            # Armijo backtracking in the damped phase only: once the Newton decrement is tiny the
            # full step is the quadratically convergent one, and the decrease in f it brings is below
            # the roundoff of f itself, so Armijo would stall (seen: ||grad f|| stuck at 3e-10)
            while (decrement > 1e-12 and t > 1e-12
                   and float(self._global_terms(x - t * step, False)[0]) > float(f) - 1e-4 * t * decrement):
                t *= 0.5
            x = x - t * step
        gnorm = float(torch.linalg.vector_norm(self._global_terms(x, False)[1]))
        if not gnorm <= 1e-10:
            raise SolverError(f"Newton's method stopped at ||grad f|| = {gnorm:.3g}, above 1e-10")
        return x


def _preset(n=None, d=None, seed=0, float64=False, weights="uniform"):
    """``--task logistic``: Synthetic(1, 1) with dim d = 10, at most 200 examples per client,
    weights uniform or by the clients' numbers of examples."""
    return LogisticRegression.generate(n_or_default(n), dim=10 if d is None else d, max_size=200,
                                       seed=seed, dtype=dtype_of({"float64": float64}),
                                       weighting="data" if weights == "examples" else "uniform")


register(TaskSpec("logistic", _preset, "multinomial logistic regression on Synthetic(1, 1)",
                  (N, D, SEED, FLOAT64, WEIGHTS)))
