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

from typing import Sequence

import numpy as np

from fedbound import validate
from fedbound.argtypes import Count
from fedbound.errors import ValidationError
from fedbound.pep.consensus import Eigenvalue, spectral_instance
from fedbound.pep.env import Env
from fedbound.pep.symbolic import PepEnv


class NumericEnv(Env):
    """Shared numpy arithmetic, conditions and metric."""

    def __init__(self, n: Count, weights: Sequence[float] | None, x0: np.ndarray, xs: np.ndarray):
        if weights is not None and len(weights) != n:
            raise ValidationError(f"weights must have one entry per function (n={n}), got {len(weights)}")
        self.n = n
        self.weights = list(weights) if weights is not None else [1.0 / n] * n
        self.x0, self.xs = x0, xs
        self.conditions: list[tuple[np.ndarray, float]] = []
        self.metric = np.nan

    @staticmethod
    def sq(v: np.ndarray) -> np.ndarray:
        return (v * v).sum(-1)

    @staticmethod
    def dot(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return (u * v).sum(-1)

    def require(self, expr: float | np.ndarray, bound: float) -> None:
        self.conditions.append((np.asarray(expr, float), float(bound)))

    def measure(self, expr: float | np.ndarray) -> None:
        self.metric = np.asarray(expr, float)

    def _index(self, i: int) -> int:
        if not (isinstance(i, (int, np.integer)) and 0 <= i < self.n):   # cheap: called per oracle call
            raise ValidationError(f"i must be a function index in 0..{self.n - 1}, got {validate.show(i)}")
        return i

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

    def __init__(self, h: np.ndarray, g: np.ndarray, x0: np.ndarray, lam: Eigenvalue | None = None,
                 weights: Sequence[float] | None = None):
        x0 = np.asarray(x0, float)
        h, g = np.asarray(h, float), np.asarray(g, float)
        if h.ndim != 2 or h.shape[0] < 1 or x0.ndim not in (1, 2) or h.shape[1] != x0.shape[-1]:
            raise ValidationError(f"h must have shape (n, d) and x0 (d,) or (B, d), got {h.shape} and {x0.shape}")
        if g.shape != (h.shape[0],) + x0.shape:
            raise ValidationError(f"g must have shape (n,) + x0's shape = {(h.shape[0],) + x0.shape}, got {g.shape}")
        super().__init__(len(h), weights, x0, np.zeros(x0.shape))
        self.h, self.g, self.lam = h, g, lam

    def grad(self, i: int, x: np.ndarray) -> np.ndarray:
        i = self._index(i)
        return self.h[i] * x + self.g[i]

    def value(self, i: int, x: np.ndarray) -> np.ndarray:
        i = self._index(i)
        return 0.5 * (x * (self.h[i] * x)).sum(-1) + (self.g[i] * x).sum(-1)

    def mix_class(self, lo: Eigenvalue, hi: Eigenvalue, points: list[np.ndarray]) -> list:
        W = spectral_instance(len(points), self.lam if self.lam is not None else lo)
        return list(np.tensordot(W, np.stack(points), axes=1))


class ReplayEnv(NumericEnv):
    """The solved PEP's worst case replayed through the algorithm (module doc)."""

    def __init__(self, pep_env: PepEnv):
        if pep_env.problem.G_value is None:
            raise ValidationError(f"pep_env must be solved before its worst case is replayed "
                                  f"(fedbound.pep.solver.solve), the {pep_env.label} is not")
        super().__init__(pep_env.n, pep_env.weights, pep_env.x0.eval(), pep_env.xs.eval())
        self.tape = list(pep_env.tape)
        self.mismatch = 0.0

    def _next(self, kind: str, key, inputs):
        if not self.tape:
            raise ValidationError(f"replay diverged from the recorded tape: {kind} {key} after its end")
        entry = self.tape.pop(0)
        if entry[0] != kind or entry[1] != key:
            raise ValidationError(f"replay diverged from the recorded tape: {kind} {key} vs {entry[:2]}")
        recorded = entry[2] if isinstance(entry[2], list) else [entry[2]]
        for a, b in zip(inputs, recorded):
            self.mismatch = max(self.mismatch, float(np.linalg.norm(a - b.eval())))
        return entry[3]

    def grad(self, i: int, x: np.ndarray) -> np.ndarray:
        return self._next("grad", i, [x]).eval()

    def value(self, i: int, x: np.ndarray) -> float:
        return float(self._next("value", i, [x]).eval())

    def mix_class(self, lo: Eigenvalue, hi: Eigenvalue, points: list[np.ndarray]) -> list:
        return [y.eval() for y in self._next("mix", (lo, hi), points)]
