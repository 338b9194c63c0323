"""numpy backends of :mod:`fedbound.pep.env` (issue 13).

:class:`QuadraticEnv`: the explicit instance f_i(x) = (1/2) x^T diag(h_i) x + g_i^T x with
h_i in [mu, L]^d and sum_i w_i g_i = 0, so that x* = 0 minimizes F = sum_i w_i f_i and F(x*) = 0;
a spectral mixing class is instantiated as W = J + lam (I - J). It belongs to the function class of
the PEP, so its metric (scaled to make every condition hold) is a lower bound on the worst case.

:class:`ReplayEnv`: the worst case found by the SDP, read back from the solved PEP (PEPit's
factorization of the Gram matrix): x0 and x* are its coordinates, and each oracle call returns the
recorded answer after checking that the algorithm queried the recorded point (``mismatch``: the
largest distance, which is solver accuracy when the PEP models the algorithm faithfully).
"""
from __future__ import annotations

import numpy as np

from fedbound.pep.consensus import spectral_instance


class NumericEnv:
    """Shared numpy arithmetic, conditions and metric."""

    def __init__(self, n: int, weights, x0, xs):
        self.n = n
        self.weights = list(weights) if weights is not None else [1.0 / n] * n
        self.x0, self.xs = x0, xs
        self.conditions: list[tuple[np.ndarray, float]] = []
        self.metric = np.nan

    @staticmethod
    def sq(v):
        return (v * v).sum(-1)

    @staticmethod
    def dot(u, v):
        return (u * v).sum(-1)

    def require(self, expr, bound: float) -> None:
        self.conditions.append((np.asarray(expr, float), float(bound)))

    def measure(self, expr) -> None:
        self.metric = np.asarray(expr, float)

    def scaled_metric(self) -> np.ndarray:
        """The metric of the instance scaled by s^2 (x0 and every g_i by s), with the largest s that
        keeps every condition (all homogeneous of degree 2 in that scaling) satisfied; 0 where a
        condition with bound 0 is active, inf where no condition limits a positive metric."""
        scale = np.full(np.shape(self.metric), np.inf)
        for value, bound in self.conditions:
            with np.errstate(divide="ignore", invalid="ignore"):
                scale = np.minimum(scale, np.where(value > 1e-300, bound / value, np.inf))
        with np.errstate(invalid="ignore"):
            return np.where(self.metric > 0, self.metric * scale, 0.0)


class QuadraticEnv(NumericEnv):
    """The explicit quadratic instance (module doc); ``h`` of shape (n, d); ``x0`` of shape (B, d)
    and ``g`` of shape (n, B, d) for a batch of B instances sharing h (or (d,) and (n, d))."""

    def __init__(self, h, g, x0, lam: float | None = None, weights=None):
        x0 = np.asarray(x0, float)
        super().__init__(len(h), weights, x0, np.zeros(x0.shape))
        self.h, self.g, self.lam = np.asarray(h, float), np.asarray(g, float), lam

    def grad(self, i: int, x):
        return self.h[i] * x + self.g[i]

    def value(self, i: int, x):
        return 0.5 * (x * (self.h[i] * x)).sum(-1) + (self.g[i] * x).sum(-1)

    def mix_class(self, lo: float, hi: float, points: list) -> list:
        W = spectral_instance(len(points), self.lam if self.lam is not None else lo)
        return list(np.tensordot(W, np.stack(points), axes=1))


class ReplayEnv(NumericEnv):
    """The solved PEP's worst case replayed through the algorithm (module doc)."""

    def __init__(self, pep_env):
        super().__init__(pep_env.n, pep_env.weights, pep_env.x0.eval(), pep_env.xs.eval())
        self.tape = list(pep_env.tape)
        self.mismatch = 0.0

    def _next(self, kind: str, key, inputs):
        entry = self.tape.pop(0)
        if entry[0] != kind or entry[1] != key:
            raise RuntimeError(f"replay diverged from the recorded tape: {kind} {key} vs {entry[:2]}")
        recorded = entry[2] if isinstance(entry[2], list) else [entry[2]]
        for a, b in zip(inputs, recorded):
            self.mismatch = max(self.mismatch, float(np.linalg.norm(a - b.eval())))
        return entry[3]

    def grad(self, i: int, x):
        return self._next("grad", i, [x]).eval()

    def value(self, i: int, x):
        return float(self._next("value", i, [x]).eval())

    def mix_class(self, lo: float, hi: float, points: list) -> list:
        return [y.eval() for y in self._next("mix", (lo, hi), points)]
