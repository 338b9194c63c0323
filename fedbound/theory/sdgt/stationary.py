"""The K-stationarity equation (118) of SD-GT Theorem 5 and its root (seed 003, [L1226]).

The derivative in K of the controller objective (31) vanishes where

    (1/2) sqrt(lambda2 H) K^-3/2 + (2/3) (lambda2 H/p^2)^2/3 K^-5/3 = lambda3 sum_s E_s^D2D,

i.e. A K^-3/2 + B K^-(1+e) = c with A = sqrt(lambda2 H)/2, B = e (lambda2 H)^(2/3) p^(-4/3),
e = 2/3 (the controller's variants change e, :mod:`fedbound.control.sdgt.objective`). The theory
owns the root; the controller imports it. This module imports no sympy so that the controller stays
light.
"""
from __future__ import annotations

import math


from fedbound.argtypes import Fraction, Positive
from fedbound.errors import ValidationError

#: exponent e of K in the third term of (31) as printed: (lambda2 H/p^2)^(2/3) K^(-2/3)
PRINTED_EXPONENT = 2.0 / 3.0


def k_root(A: Positive, B: Positive, e: Positive, c: Positive) -> float:
    """The root in K > 0 of A K^-3/2 + B K^-(1+e) = c (A, B, c > 0, e > 0).

    The left side falls strictly from +inf to 0, so the root is unique; it lies in
    [max((A/c)^2/3, (B/c)^(1/(1+e))), max((2A/c)^2/3, (2B/c)^(1/(1+e)))] (each term alone is below
    c at the upper end and one of them reaches c at the lower); brentq on log K inside that bracket
    (xtol 1e-15). A bracket outside floating range raises :class:`ValidationError`.
    """
    lo = max((A / c) ** (2.0 / 3.0), (B / c) ** (1.0 / (1.0 + e)))
    hi = max((2 * A / c) ** (2.0 / 3.0), (2 * B / c) ** (1.0 / (1.0 + e)))
    if not (math.isfinite(lo) and math.isfinite(hi) and lo > 0):
        raise ValidationError(f"K root out of floating range (bracket [{lo!r}, {hi!r}])")
    if hi <= lo * (1 + 1e-15):
        return lo

    def excess(log_k):
        return A * math.exp(-1.5 * log_k) + B * math.exp(-(1.0 + e) * log_k) - c

    from scipy.optimize import brentq  # scipy.optimize costs 0.4 s at start-up: only when solving

    return math.exp(brentq(excess, math.log(lo), math.log(hi), xtol=1e-15))


def k_star_118(p: Fraction, H: Positive, lambda2: Positive, lambda3: Positive, E_d2d_sum: Positive,
               e: Positive = PRINTED_EXPONENT) -> float:
    """The root K* of (118) at one point (floats, all > 0, p <= 1), by :func:`k_root`."""
    return k_root(0.5 * math.sqrt(lambda2 * H), e * (lambda2 * H) ** (2.0 / 3.0) * p ** (-4.0 / 3.0),
                  e, lambda3 * E_d2d_sum)


__all__ = ["k_root", "k_star_118", "PRINTED_EXPONENT"]
