"""Consensus steps in a PEP (issue 13; Colla and Hendrickx, "Automatic performance estimation for
decentralized optimization", IEEE TAC 2023, arXiv:2203.05963).

A fixed mixing matrix W is exact: each output is a linear combination of the inputs
(:func:`fedbound.pep.env.mix`). A spectral class is a relaxation: for all symmetric generalized
doubly stochastic W (W 1 = 1, W = W^T) whose eigenvalues other than the consensus one lie in
[lo, hi], the t consensus steps Y_s = W X_s (X_s, Y_s: n agents' points, s = 1..t) satisfy

    mean_i Y_s = mean_i X_s,                                    (average preserved)
    Xc^T Yc symmetric,                                          (W symmetric)
    (Yc - lo Xc)^T (Yc - hi Xc) <= 0  (negative semidefinite)   (spectrum in [lo, hi])

with Xc, Yc the agent-centered n x t block matrices and each product a t x t matrix of sums over
agents of inner products, i.e. linear in the Gram matrix. :class:`SpectralClass` builds the outputs
as new points (n - 1 free leaves per step, the last fixed by the average) and, at :meth:`close`,
adds the symmetry equalities and the t x t LMI (written once per upper-triangular entry by
:class:`fedbound.pep.solver.DeduplicatedCvxpyWrapper`). A numeric instance of the class is
W = J + lambda (I - J), lambda in [lo, hi] (:func:`spectral_instance`).
"""
from __future__ import annotations

from typing import Annotated

import numpy as np
from PEPit import PEP, Point

from fedbound.argtypes import Count, Range
from fedbound.errors import ValidationError
from fedbound.pep.env import combine, mean

#: the spectral parameters of a class or an instance: real numbers in [-1, 1]
Eigenvalue = Annotated[float, Range(-1.0, 1.0)]


class SpectralClass:
    """The consensus steps taken with one unknown W of spectrum [lo, hi] (module doc)."""

    def __init__(self, lo: Eigenvalue, hi: Eigenvalue):
        if lo > hi:
            raise ValidationError(f"lo must be <= hi, got lo={lo:g} > hi={hi:g}")
        self.lo, self.hi = lo, hi
        self.steps: list[tuple[list, list]] = []

    def apply(self, points: list[Point]) -> list:
        n = len(points)
        if n < 1:
            raise ValidationError("a consensus step needs at least one point, got none")
        avg = mean(points)
        free = [Point() for _ in range(n - 1)]
        out = [avg + d for d in free] + [avg - combine([1.0] * (n - 1), free)]
        self.steps.append((list(points), out))
        return out

    def close(self, problem: PEP) -> None:
        """Add the symmetry equalities and the LMI of all recorded steps to ``problem``."""
        xc = [[x - mean(X) for x in X] for X, _ in self.steps]
        yc = [[y - mean(Y) for y in Y] for _, Y in self.steps]
        t = len(self.steps)

        def gram(a, b, s, r):
            return sum(u * v for u, v in zip(a[s], b[r]))

        for s in range(t):
            for r in range(s + 1, t):
                problem.add_constraint(gram(xc, yc, s, r) == gram(xc, yc, r, s))
        matrix = [[-(gram(yc, yc, s, r) - (self.lo + self.hi) / 2 * (gram(xc, yc, s, r) + gram(xc, yc, r, s))
                     + self.lo * self.hi * gram(xc, xc, s, r)) for r in range(t)] for s in range(t)]
        problem.add_psd_matrix(matrix)


def spectral_instance(n: Count, lam: Eigenvalue) -> np.ndarray:
    """W = J + lam (I - J): symmetric, rows summing to 1, every other eigenvalue equal to lam."""
    J = np.full((n, n), 1.0 / n)
    return J + lam * (np.eye(n) - J)
