"""SD-GT Appendix E: Theorem 4 (non-convex rate under Algorithm 2) and Theorem 5 (range of K_t).

Seed 003, Appendix E [L1149-L1232] (papers/sdgt.md 4.7, flags F29, F38).

Theorem 4 [L1200-L1208], explicit form (112) [L1188]: with K^min = min_t K_t, K^max = max_t K_t and
p^min = min_t p^t,

    (1/T) sum_t E||grad f(xbar_g^t)||^2 <= E1/(D T K^min gamma)
        + D5 L^2 (K^max)^2 gamma^2 sigma^2/(D (p^min)^4 q^2 K^min) + L K^max gamma sigma^2/(2 D n K^min),

for gamma = min{(2 E1 K^max n/(L sigma^2 T))^(1/2), (2 E1 (p^min)^4 q^2 K^max/(L sigma^2 T))^(1/3),
(p^min)^2 q^2/(945 K^max L)}. F38: K^max and p^min are outputs of the controller, which itself uses
gamma, so the choice is a-posteriori; in practice cap K_t and h_s beforehand and use the caps.

Theorem 5 [L1212-L1217]: the K-stationarity of (31) is (118) [L1226]

    (1/2) sqrt(lambda2 H) K^(-3/2) + (2/3) (lambda2 H/p^2)^(2/3) K^(-5/3) = lambda3 sum_s E_s^D2D.

With X(p) = [(1/2) sqrt(lambda2 H) + (2/3)(lambda2 H/p^2)^(2/3)]/(lambda3 sum_s E_s^D2D), K >= 1 gives
X^(3/5) <= K <= X^(2/3) (and the reverse for K <= 1), so K* lies between min and max of X^(2/3),
X^(3/5) (119), (121). Since 1 <= 1/p^2 <= max_s m_s^2 (p >= 1/max_s m_s) and K* increases with 1/p,

* ``"printed"`` (115)-(116): X_hi (with max_s m_s^2) in the lower bound, X_lo (with 1) in the upper;
* ``"corrected"`` [DERIVED, F29]: the bounds swapped, min(X_lo^(2/3), X_lo^(3/5)) <= K_t <=
  max(X_hi^(2/3), X_hi^(3/5)).

:func:`k_star` solves (118) for K (:mod:`fedbound.theory.sdgt.stationary`, which the controller
imports).
"""
from __future__ import annotations

import math
from typing import Annotated

import numpy as np
import sympy as sp

from fedbound.argtypes import Fraction, Positive, PositiveArray, Range
from fedbound.errors import ValidationError
from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Result, StepCondition, Variant
from fedbound.theory.sdgt.common import SAMPLING, declare, E1, K, m_p, q, where
from fedbound.theory.variant import Predicate
from fedbound.theory.sdgt.lemmas import LEMMA1_CAP, LEMMA3_CAP, LEMMA4_CAP, LEMMA5_CAP
from fedbound.theory.sdgt.stationary import k_star_118
from fedbound.theory.sdgt.thm1 import D, D5
from fedbound.theory.symbols import POSITIVE, POSITIVE_INTEGER, UNIT, L, T, n, sigma
from fedbound.theory.symbols import gamma as g

Kmin = declare("Kmin", POSITIVE_INTEGER, "smallest number of D2D rounds min_t K_t (Algorithm 2)",
               latex="K^{min}")
Kmax = declare("Kmax", POSITIVE_INTEGER, "largest number of D2D rounds max_t K_t (Algorithm 2)",
               latex="K^{max}")
pmin = declare("pmin", UNIT, "smallest sampling measure min_t p^t (Algorithm 2)", latex="p^{min}")
Hhat = declare("Hhat", POSITIVE, "controller estimate H-hat_t (30)", latex="hat{H}_t")
lambda2 = declare("lambda2", POSITIVE, "controller weight lambda2 of (31)", latex="lambda_2")
lambda3 = declare("lambda3", POSITIVE, "controller weight lambda3 of (31)", latex="lambda_3")
E_d2d_sum = declare("E_d2d_sum", POSITIVE, "total D2D round cost sum_s E_s^D2D", latex="E^{D2D}")
m_max = declare("m_max", POSITIVE_INTEGER, "largest subnet size max_s m_s", latex="m_{max}")

# Theorem 4 ----------------------------------------------------------------------------------------
THM4_CAP = StepCondition("thm4", pmin ** 2 * q ** 2 / (945 * Kmax * L), False,
                         "third entry of Theorem 4's step [L1204]")
# the lemma caps must hold in every round t, i.e. at K_t <= K^max
LEMMA_CAPS_KMAX = tuple(StepCondition(c.name, c.cap.xreplace({K: Kmax}), c.strict, c.source + ", at K^max")
                        for c in (LEMMA1_CAP, LEMMA3_CAP, LEMMA4_CAP, LEMMA5_CAP))

thm4_bound = (E1 / (D * T * Kmin * g)
              + D5 * L ** 2 * Kmax ** 2 * g ** 2 * sigma ** 2 / (D * pmin ** 4 * q ** 2 * Kmin)
              + L * Kmax * g * sigma ** 2 / (2 * D * n * Kmin))
thm4_step = sp.Min(sp.sqrt(2 * E1 * Kmax * n / (L * sigma ** 2 * T)),
                   sp.cbrt(2 * E1 * pmin ** 4 * q ** 2 * Kmax / (L * sigma ** 2 * T)),
                   pmin ** 2 * q ** 2 / (945 * Kmax * L), evaluate=False)
thm4_rate = (sp.sqrt(E1 * sigma ** 2 * L / (n * T * Kmin))
             + (E1 * L * sigma / (sp.sqrt(Kmin) * T * pmin ** 2 * q)) ** sp.Rational(2, 3)
             + E1 * L / (T * pmin ** 2 * q))

THM4 = register(Result(
    id="sdgt.thm4",
    title="Theorem 4 (non-convex rate under dynamic control, Algorithm 2)",
    statement="Under A1-A3 with time-varying K_t and p^t: (1/T) sum_t E||grad f(xbar_g^t)||^2 <= "
              "E1/(D T K^min gamma) + D5 L^2 (K^max)^2 gamma^2 sigma^2/(D (p^min)^4 q^2 K^min) + "
              "L K^max gamma sigma^2/(2 D n K^min) (112); with Theorem 4's step the rate is (114).",
    provenance=where("(112)-(114), Theorem 4", "1188-1208"),
    assumptions=("A1 (L-smooth)", "A2 (mixing rate q)", "A3 (bounded variance)", "T > K^max",
                 "D, D5 as in Theorem 1 (sdgt.thm1)"),
    lhs="(1/T) sum_{t=1}^T E||grad f(xbar_g^t)||^2",
    variants=[Variant(
        "printed", "(112) as printed with user-supplied D and D5; conditions: the cap "
                   "(p^min)^2 q^2/(945 K^max L) of Theorem 4's step and the Lemma 1, 3-5 caps at K^max; "
                   "extras: gamma_choice (Theorem 4's step, entries 1-2 are values of K gamma, F7) "
                   "and rate_114 ((114) with its hidden constants set to 1)",
        bound=thm4_bound, conditions=(THM4_CAP,) + LEMMA_CAPS_KMAX,
        extras={"gamma_choice": thm4_step, "rate_114": thm4_rate})],
    known_issues=(
        Flag("F38", "gamma depends on K^max and p^min, outputs of the controller that itself uses "
                    "gamma: the step choice is circular/a-posteriori; cap K_t and h_s beforehand"),
        Flag("F7", "as in Corollary 1, entries 1-2 of the step are values of K gamma"),
    ),
))

# Theorem 5 ----------------------------------------------------------------------------------------


def _x(one_over_p2: sp.Expr) -> sp.Expr:
    """X(p) of (119)-(122) with 1/p^2 replaced by ``one_over_p2``."""
    two_thirds = sp.Rational(2, 3)
    return ((sp.sqrt(lambda2 * Hhat) / 2 + two_thirds * (lambda2 * one_over_p2 * Hhat) ** two_thirds)
            / (lambda3 * E_d2d_sum))


X_lo, X_hi = _x(sp.Integer(1)), _x(m_max ** 2)


def _interval(lower_x: sp.Expr, upper_x: sp.Expr) -> dict:
    exponents = (sp.Rational(2, 3), sp.Rational(3, 5))
    return {"K_lower": sp.Min(*(lower_x ** e for e in exponents), evaluate=False),
            "K_upper": sp.Max(*(upper_x ** e for e in exponents), evaluate=False),
            "X_lo": X_lo, "X_hi": X_hi}


THM5 = register(Result(
    id="sdgt.thm5",
    title="Theorem 5 (bounds on the D2D rounds K_t of Algorithm 2)",
    statement="min(X_hi^(2/3), X_hi^(3/5)) <= K_t <= max(X_lo^(2/3), X_lo^(3/5)) with X = "
              "[sqrt(lambda2 H)/2 + (2/3)(lambda2 c H)^(2/3)]/(lambda3 sum_s E_s^D2D), c = max_s m_s^2 "
              "for X_hi and c = 1 for X_lo (115)-(116); K_t is the root of (118) at the chosen p.",
    provenance=where("(115)-(122), Theorem 5", "1212-1232"),
    relations=SAMPLING + (Predicate("m_p <= m_max", m_p, "<=", m_max, "m_max = max_s m_s"),),
    assumptions=("K_t is the unconstrained continuous minimizer of (31) in K (root of (118))",
                 "p >= 1/max_s m_s (every subnet samples at least one client)"),
    lhs="K_t",
    variants=[
        Variant("printed", "(115)-(116) as printed: X_hi in the lower bound, X_lo in the upper",
                extras=_interval(X_hi, X_lo)),
        Variant("corrected", "[DERIVED, F29] K* increases with 1/p and 1 <= 1/p^2 <= max_s m_s^2, so the "
                             "bounds are swapped: min(X_lo^(2/3), X_lo^(3/5)) <= K_t <= "
                             "max(X_hi^(2/3), X_hi^(3/5))",
                extras=_interval(X_lo, X_hi)),
    ],
    default_variant="corrected",
    known_issues=(
        Flag("F29", "the bounds are swapped: (120) replaces 1/p^2 by 1 in the UPPER bound and (122) by "
                    "max_s m_s^2 in the LOWER bound, but 1/p^2 >= 1; the printed bounds can cross "
                    "(lambda2 = 0.1, H = 1, m_s = 10, lambda3 sum E^D2D = 1.5e-5)"),
    ),
))


def k_star(p: Fraction | Annotated[np.ndarray, Range(0.0, 1.0, low_open=True)],
           Hhat: Positive | PositiveArray, lambda2: Positive | PositiveArray,
           lambda3: Positive | PositiveArray, E_d2d_sum: Positive | PositiveArray) -> np.ndarray:
    """The root K* > 0 of (118) [L1226], elementwise over broadcast arrays (nan where the root is out
    of floating range or an argument is outside (118)'s domain: p in (0, 1], the rest finite > 0),
    by :func:`fedbound.theory.sdgt.stationary.k_star_118` (lambda1 plays no role in (118))."""

    if any(isinstance(a, np.ndarray) and a.dtype == object for a in (p, Hhat, lambda2, lambda3, E_d2d_sum)):
        return _exact_k_star(p, Hhat, lambda2, lambda3, E_d2d_sum)

    def one(p_, h_, l2_, l3_, e_):
        args = (float(h_), float(l2_), float(l3_), float(e_))
        if not (0 < p_ <= 1 and all(math.isfinite(a) and a > 0 for a in args)):
            return np.nan
        try:
            return k_star_118(float(p_), *args)
        except ValidationError:
            return np.nan

    return np.vectorize(one, otypes=[float])(p, Hhat, lambda2, lambda3, E_d2d_sum)


def _exact_k_star(*args: np.ndarray) -> np.ndarray:
    """:func:`k_star` at the exact numbers of the audit's certifier: K* as the exact root of
    A K^-3/2 + B K^-5/3 = c in k_root's bracket (:class:`~fedbound.theory.certify.roots.
    MonotoneRoot`: digits with a proof), with the paper's exponent 2/3 exactly (the float code
    uses 2.0/3.0); nan outside (118)'s domain, decided exactly."""
    from fedbound.theory.certify import trace as T
    from fedbound.theory.certify.roots import monotone_root

    x = sp.Dummy("K", positive=True)
    e = sp.Rational(2, 3)
    out = []
    for p_, h_, l2_, l3_, e_ in np.broadcast(*args):
        p_, h_, l2_, l3_, e_ = (T.to_sympy(v) for v in (p_, h_, l2_, l3_, e_))
        if T.symbolic(*(T.array([v]) for v in (p_, h_, l2_, l3_, e_))):
            raise T.Untraceable("the root K* of (118) over symbols: a numeric procedure")
        if not (T.decide(sp.Gt(p_, 0)) and T.decide(sp.Le(p_, 1))
                and all(v.is_finite and T.decide(sp.Gt(v, 0)) for v in (h_, l2_, l3_, e_))):
            out.append(T.Traced(sp.nan))
            continue
        A, B, c = sp.sqrt(l2_ * h_) / 2, e * (l2_ * h_) ** e * p_ ** sp.Rational(-4, 3), l3_ * e_
        lo = sp.Max((A / c) ** e, (B / c) ** (1 / (1 + e)))
        hi = sp.Max((2 * A / c) ** e, (2 * B / c) ** (1 / (1 + e)))
        f = sp.Lambda(x, A * x ** sp.Rational(-3, 2) + B * x ** (-1 - e) - c)
        out.append(T.Traced(monotone_root(f, lo, hi)))
    return T.array(out).reshape(np.broadcast(*args).shape)
