"""The SD-GT co-optimization objective (27)/(31) and its variants, as plain numpy functions.

Seed 003 (SD-GT), Sec. IV-D, problem (31) [L425-L430], written in the sampled fraction
u_s = 1 - beta_s = h_s/m_s (sdgt.md 5.4, flag F28: in beta_s the energy term is not a posynomial):

    J(K, p, u) = a1 p^-2 + a2 K^-1/2 + a3 K^-e p^-4/3 + lambda3 (sum_s E_s u_s + K sum_s E_s^D2D)

with, per variant,

* ``"paper"``  (31) as printed:  a1 = lambda1 H, a2 = (lambda2 H)^1/2, a3 = (lambda2 H)^2/3, e = 2/3;
* ``"static"`` (27) [L406-L408]: the same with H = 1 (the H argument is ignored);
* ``"cor1"``   flag F24: Corollary 1's middle term scales as K^-1/3, i.e. (lambda2 H/(sqrt(K) p^2))^2/3:
  a3 = (lambda2 H)^2/3, e = 1/3.

(The lambda1 versus lambda1^2 question, F25, belongs to the estimate H-hat (30): see
:func:`fedbound.control.sdgt.estimators.estimate_H`; here H is H-hat and lambda1 enters once, as in (31).)

p is the participation level p = min_s (1 - beta_s^2) = min_s u_s (2 - u_s) [L242]. The same
functions are used by the GP (through :func:`terms`), the integer search and the brute force.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Annotated, Sequence

import numpy as np

from fedbound.argtypes import NonNegative, NonNegativeArray, PositiveArray, ProbabilityArray, Range
from fedbound.control.sdgt.spec import NetSpec
from fedbound.errors import InputTypeError, UnknownNameError, ValidationError, require
from fedbound.theory.sdgt.stationary import k_root

#: the paper's experiment weights lambda1, lambda2, lambda3 (Sec. V-F [L552])
DEFAULT_LAMBDAS = (1.0, 0.1, 1e-5)
#: default cap on the number of D2D rounds: the official code's grid K in 1..49 (anchors.md 1.1)
#: the routes to the continuous optimum (:data:`fedbound.control.sdgt.integer.METHODS`)
METHOD_NAMES = ("gp", "reduced")
DEFAULT_K_CAP = 49

#: D2D rounds K > 0 (a number or an array; the objective's K^-1/2 needs K > 0)
Rounds = Annotated[float | np.ndarray, Range(0.0, low_open=True)]
#: participation levels p in (0, 1] (a number or an array)
Levels = Annotated[float | np.ndarray, Range(0.0, 1.0, low_open=True)]
#: subnet sizes m_s >= 1
Sizes = Annotated[np.ndarray, Range(1.0)]

#: variant name -> (uses H, exponent e of K in the third term)
VARIANTS = {"paper": (True, 2.0 / 3.0), "static": (False, 2.0 / 3.0), "cor1": (True, 1.0 / 3.0)}


@dataclass(frozen=True)
class Terms:
    """Coefficients of J = a1 p^-2 + a2 K^-1/2 + a3 K^-k_exp p^-4/3 + lam3 * energy."""

    a1: float
    a2: float
    a3: float
    k_exp: float
    lam3: float


def check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise UnknownNameError(f"unknown objective variant {variant!r}; valid: {', '.join(VARIANTS)}")
    return variant


def check_lambdas(lambdas: Sequence[float]) -> tuple[float, float, float]:
    if not isinstance(lambdas, (list, tuple, np.ndarray)):
        raise InputTypeError(f"lambdas must be 3 numbers (lambda1, lambda2, lambda3), got {lambdas!r:.60}")
    values = tuple(lambdas)
    require(len(values) == 3, f"lambdas must be 3 numbers (lambda1, lambda2, lambda3), got {len(values)}")
    for i, v in enumerate(values, 1):
        require(isinstance(v, (int, float, np.floating, np.integer)) and math.isfinite(v) and v > 0,
                f"lambda{i} must be finite and > 0, got {v!r}")
    return tuple(float(v) for v in values)


def check_H(H: float) -> float:
    require(isinstance(H, (int, float, np.floating, np.integer)) and math.isfinite(H) and H > 0,
            f"H must be finite and > 0, got {H!r}")
    return float(H)


def terms(H: float, lambdas: Sequence[float] = DEFAULT_LAMBDAS, variant: str = "paper") -> Terms:
    """The coefficients of the objective for ``variant`` (see the module docstring)."""
    uses_H, k_exp = VARIANTS[check_variant(variant)]
    lam1, lam2, lam3 = check_lambdas(lambdas)
    h = check_H(H) if uses_H else 1.0
    return Terms(a1=lam1 * h, a2=math.sqrt(lam2 * h), a3=(lam2 * h) ** (2.0 / 3.0), k_exp=k_exp,
                 lam3=lam3)


@dataclass(frozen=True, eq=False)
class ControlProblem:
    """One instance of (31): the network, H-hat, the weights, the cap K <= K_cap and the variant."""

    spec: NetSpec
    H: float = 1.0
    lambdas: Sequence[float] = DEFAULT_LAMBDAS
    K_cap: int = DEFAULT_K_CAP
    variant: str = "paper"

    def __post_init__(self):
        require(isinstance(self.spec, NetSpec), f"spec must be a NetSpec, got {type(self.spec).__name__}")
        object.__setattr__(self, "H", check_H(self.H))
        object.__setattr__(self, "lambdas", check_lambdas(self.lambdas))
        kc = self.K_cap
        require(isinstance(kc, (int, np.integer)) and not isinstance(kc, bool) and kc >= 1,
                f"K_cap must be an integer >= 1, got {kc!r}")
        object.__setattr__(self, "K_cap", int(kc))
        check_variant(self.variant)

    @functools.cached_property
    def terms(self) -> Terms:
        return terms(self.H, self.lambdas, self.variant)

    @functools.cached_property
    def E_d2d_sum(self) -> float:
        return float(self.spec.E_d2d.sum())

    @property
    def p_floor(self) -> float:
        """Smallest useful p: with every u_s = 1/m_s, p = min_s (2 m_s - 1)/m_s^2."""
        m = self.spec.m.astype(float)
        return float(np.min((2.0 * m - 1.0) / (m * m)))


def _fractions(u, S: int) -> np.ndarray:
    """``u`` as a float array of shape (..., S)."""
    u = np.asarray(u, dtype=float)
    if u.ndim < 1 or u.shape[-1] != S:
        raise ValidationError(f"u must have shape (..., S) with S = {S} subnets, got shape {u.shape}")
    return u


def energy_per_round(K: NonNegative | NonNegativeArray, u: ProbabilityArray, spec: NetSpec):
    """DS plus D2D cost of one global round: sum_s E_s u_s + K sum_s E_s^D2D ((27) [L407]).
    ``u`` has shape (..., S); ``K`` broadcasts against u's leading shape."""
    return _fractions(u, spec.S) @ spec.E + np.asarray(K, dtype=float) * float(spec.E_d2d.sum())


def k_terms(K: Rounds, p: Levels, problem: ControlProblem):
    """The part of J that depends on K: a2 K^-1/2 + a3 K^-e p^-4/3 + lambda3 K sum_s E_s^D2D."""
    t = problem.terms
    K = np.asarray(K, dtype=float)
    p = np.asarray(p, dtype=float)
    return (t.a2 * K ** -0.5 + t.a3 * K ** -t.k_exp * p ** (-4.0 / 3.0)
            + t.lam3 * problem.E_d2d_sum * K)


def objective(K: Rounds, p: Levels, u: ProbabilityArray, problem: ControlProblem):
    """J(K, p, u) of the module docstring, vectorized: K and p broadcast, u has shape (..., S).
    J = a1 p^-2 + lambda3 sum_s E_s u_s + k_terms(K, p)."""
    t = problem.terms
    p = np.asarray(p, dtype=float)
    return t.a1 * p ** -2.0 + t.lam3 * (_fractions(u, problem.spec.S) @ problem.spec.E) + k_terms(K, p, problem)


def best_u(p: Levels, m: Sizes):
    """Cheapest sampled fraction meeting u (2 - u) >= p and u >= 1/m (sdgt.md 5.4):
    u = max(1 - sqrt(1 - p), 1/m); shapes of p (...) and m (S,) give (..., S)."""
    m = np.asarray(m, dtype=float)
    if m.ndim != 1 or m.size == 0:
        raise ValidationError(f"m must be the S >= 1 subnet sizes (shape (S,)), got shape {m.shape}")
    p = np.asarray(p, dtype=float)[..., None]
    return np.maximum(1.0 - np.sqrt(np.clip(1.0 - p, 0.0, None)), 1.0 / m)


def reduced_objective(K: Rounds, p: Levels, problem: ControlProblem):
    """phi(K, p) = min_u J(K, p, u) = J(K, p, best_u(p, m)) (sdgt.md 5.4), for p in (0, 1]."""
    return objective(K, p, best_u(p, problem.spec.m), problem)


def k_stationary_root(p: float, H: float, lambdas: Sequence[float] = DEFAULT_LAMBDAS, E_d2d_sum: float = 1.0,
                      variant: str = "paper") -> float:
    """The unconstrained minimizer in K > 0 of J at fixed p: the root of (118) [L1226],

        (1/2) sqrt(lambda2 H) K^-3/2 + (2/3) (lambda2 H/p^2)^2/3 K^-5/3 = lambda3 sum_s E_s^D2D,

    generalized to the variant's exponent e (a2/2 K^-3/2 + e a3 p^-4/3 K^-(1+e) = lambda3 sum E^D2D).
    The left side falls strictly from +inf to 0, so the root is unique; with A, B its two
    coefficients and c the right side it lies in [max((A/c)^2/3, (B/c)^(1/(1+e))),
    max((2A/c)^2/3, (2B/c)^(1/(1+e)))] (:func:`fedbound.theory.sdgt.stationary.k_root`).
    """
    t = terms(H, lambdas, variant)
    require(isinstance(p, (int, float, np.floating)) and 0 < p <= 1, f"p must be in (0, 1], got {p!r}")
    require(math.isfinite(E_d2d_sum) and E_d2d_sum > 0,
            f"E_d2d_sum must be finite and > 0 for a finite root, got {E_d2d_sum!r}")
    return k_root(0.5 * t.a2, t.k_exp * t.a3 * float(p) ** (-4.0 / 3.0), t.k_exp,
                   t.lam3 * float(E_d2d_sum))


def k_minimizer(p: Annotated[float, Range(0.0, 1.0, low_open=True)], problem: ControlProblem) -> float:
    """argmin of J(., p, u) over K in [1, K_cap]: J is strictly convex in K (u does not matter),
    so it is the root of (118) clipped to [1, K_cap], or K_cap when sum_s E_s^D2D = 0."""
    t = problem.terms
    c = t.lam3 * problem.E_d2d_sum
    cap = float(problem.K_cap)
    if c == 0.0:
        return cap
    A = 0.5 * t.a2
    B = t.k_exp * t.a3 * p ** (-4.0 / 3.0)
    if A + B <= c:                                   # dJ/dK >= 0 already at K = 1
        return 1.0
    if A * cap ** -1.5 + B * cap ** -(1.0 + t.k_exp) >= c:   # still falling at the cap
        return cap
    return k_root(A, B, t.k_exp, c)


def constraint_violation(K: Annotated[float, Range(0.0, low_open=True)], p: Annotated[float, Range(0.0, low_open=True)],
                         u: PositiveArray, problem: ControlProblem) -> float:
    """Largest violation of the constraints of the GP (all written as posynomial <= 1, so relative):
    p/(2u_s) + u_s/2 <= 1, 1/(m_s u_s) <= 1, u_s <= 1, p <= 1, 1/K <= 1, K/K_cap <= 1."""
    u = np.asarray(u, dtype=float)
    if u.shape != (problem.spec.S,):
        raise ValidationError(f"u must have one entry per subnet, shape ({problem.spec.S},), got {u.shape}")
    m = problem.spec.m.astype(float)
    lhs = np.concatenate([p / (2 * u) + u / 2, 1.0 / (m * u), u, [p, 1.0 / K, K / problem.K_cap]])
    return float(max(np.max(lhs - 1.0), 0.0))
