"""The PEPit backend of :mod:`fedbound.pep.env` (issue 13).

:class:`PepEnv` declares n functions of one class (L-smooth and mu-strongly convex for mu > 0,
L-smooth convex for mu = 0, L-smooth for ``nonconvex``: PEPit's tight interpolation conditions),
the objective F = sum_i w_i f_i, a stationary point ``xs`` of F (for convex classes its minimizer)
and the start ``x0``. Every oracle call is recorded on a tape so that the solved worst case can be
replayed through the algorithm (:class:`fedbound.pep.numeric.ReplayEnv`). Building stops with a
:class:`~fedbound.errors.ResourceLimitError` as soon as the Gram matrix would exceed
:data:`MAX_GRAM` points: the issue measured 80 x 80 in under a minute and a failure near 100, but
here (2 cores) Clarabel needs ~0.1-0.25 s per interior-point iteration at 43 points (a FedAvg PEP
with K = 10, R = 2: 10-30 s through the fallback chain), so the limit is 40 points, a few seconds.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from PEPit import PEP, Point
from PEPit.expression import Expression
from PEPit.functions import SmoothConvexFunction, SmoothFunction, SmoothStronglyConvexFunction

from fedbound import validate
from fedbound.argtypes import Count, NonNegative, Positive
from fedbound.errors import ResourceLimitError, ValidationError
from fedbound.pep.consensus import Eigenvalue, SpectralClass
from fedbound.pep.env import Env, combine

#: the largest Gram matrix a PEP may have (points); larger problems are refused while building
MAX_GRAM = 40


class PepEnv(Env):
    """PEPit points for an algorithm written against :mod:`fedbound.pep.env`."""

    def __init__(self, n: Count, L: Positive, mu: NonNegative, weights: Sequence[float] | None = None,
                 nonconvex: bool = False, label: str = "PEP"):
        if weights is not None and len(weights) != n:
            raise ValidationError(f"weights must have one entry per function (n={n}), got {len(weights)}")
        self.problem = PEP()
        self.n, self.label = n, label
        self.weights = list(weights) if weights is not None else [1.0 / n] * n
        if nonconvex:
            self.functions = [self.problem.declare_function(SmoothFunction, L=L) for _ in range(n)]
        elif mu > 0:
            self.functions = [self.problem.declare_function(SmoothStronglyConvexFunction, mu=mu, L=L)
                              for _ in range(n)]
        else:
            self.functions = [self.problem.declare_function(SmoothConvexFunction, L=L) for _ in range(n)]
        objective = combine(self.weights, self.functions) if n > 1 else self.functions[0]
        self.xs = objective.stationary_point()
        self.x0 = self.problem.set_initial_point()
        self.tape: list[tuple] = []
        self.classes: dict[tuple[float, float], SpectralClass] = {}
        self._check_size()

    def _check_size(self) -> None:
        if Point.counter > MAX_GRAM:
            raise ResourceLimitError(
                f"the {self.label} needs a Gram matrix of more than {MAX_GRAM} x {MAX_GRAM} (refused while "
                f"building, at {Point.counter} points; a {MAX_GRAM}-point PEP takes seconds, 80 points about a "
                f"minute): use fewer clients, local steps or rounds, or compose one-round certificates "
                f"(fedbound.pep.compose)")

    def _index(self, i: int) -> int:
        if not (isinstance(i, (int, np.integer)) and 0 <= i < self.n):   # cheap: called per oracle call
            raise ValidationError(f"i must be a function index in 0..{self.n - 1}, got {validate.show(i)}")
        return i

    def grad(self, i: int, x: Point):
        g = self.functions[self._index(i)].gradient(x)
        self.tape.append(("grad", i, x, g))
        self._check_size()
        return g

    def value(self, i: int, x: Point):
        f = self.functions[self._index(i)].value(x)
        self.tape.append(("value", i, x, f))
        self._check_size()
        return f

    @staticmethod
    def sq(v: Point) -> Expression:
        return v ** 2

    @staticmethod
    def dot(u: Point, v: Point) -> Expression:
        return u * v

    def require(self, expr: Expression, bound: float) -> None:
        self.problem.add_constraint(expr <= bound)

    def measure(self, expr: Expression) -> None:
        self.problem.set_performance_metric(expr)

    def mix_class(self, lo: Eigenvalue, hi: Eigenvalue, points: list[Point]) -> list:
        spectral = self.classes.setdefault((lo, hi), SpectralClass(lo, hi))
        out = spectral.apply(points)
        self.tape.append(("mix", (lo, hi), list(points), out))
        self._check_size()
        return out

    def close(self) -> None:
        """Add the consensus-class constraints (call once, after the algorithm)."""
        for spectral in self.classes.values():
            spectral.close(self.problem)
