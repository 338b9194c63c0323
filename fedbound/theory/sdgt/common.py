"""Constants and provenance shared by the SD-GT results (seed 003, papers/sdgt.md).

Every SD-GT constant is declared in scope ``"sdgt"`` (key ``"sdgt.K"``; SD-GT results see it as
``K``): :func:`declare` is :func:`fedbound.theory.symbols.declare` with that scope.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from fedbound.argtypes import PositiveArray
from fedbound.errors import ValidationError
from fedbound.theory.certify.trace import is_traced
from fedbound.theory.paper import Paper
from fedbound.theory.reading import Reference
from fedbound.theory.symbols import NONNEGATIVE, POSITIVE_INTEGER, UNIT, L
from fedbound.theory.symbols import n as _n
from fedbound.theory.variant import Predicate

SEED = "003_3166d581b98362e1.txt"
SCOPE = "sdgt"
PAPER = Paper(SCOPE, SEED)
declare, where = PAPER.declare, PAPER.where


K = declare("K", POSITIVE_INTEGER, "local steps (D2D rounds) per global round")
p = declare("p", UNIT, "sampling measure min_s(1 - beta_s^2) of SD-GT")
q = declare("q", UNIT, "mixing measure min_s rho_s of SD-GT")
# Lemma 7 (unroll-recursion lemma) constants
r0 = declare("r0", NONNEGATIVE, "Lemma 7: initial-distance constant r0")
b = declare("b", NONNEGATIVE, "Lemma 7: coefficient of the linear term")
e = declare("e", NONNEGATIVE, "Lemma 7: coefficient of the quadratic term")
u = declare("u", NONNEGATIVE, "Lemma 7: inverse of the step-size cap")
E1 = declare("E1", NONNEGATIVE, "initial optimality gap E f(x_g^1) - f*", latex="mathcal{E}_1")
R = declare("R", NONNEGATIVE, "initial distance E||x_g^1 - x*||^2")
#: the initial values the bounds on E||xbar_g^{T+1} - x*||^2 and on the average of E f(xbar_g^t) - f*
#: are read against: a bound above them promises no progress. f(x) - f* <= L ||x - x*||^2/2 for an
#: L-smooth f (A1 [L218-L221]) at its minimiser x*, so L R/2 bounds the initial gap
INITIAL_DISTANCE = Reference(R, "R = E||x_g^1 - x*||^2", "initial", "the initial distance")
INITIAL_GAP = Reference(L * R / 2, "L R/2 >= f(x_g^1) - f*", "initial",
                        "A1 [L218-L221] at the minimiser x*")

# The sampling primitives behind p, and the relations SD-GT's definitions imply (issue 22) -----------
# p = min_s (1 - beta_s^2) with beta_s = (m_s - h_s)/m_s and h_s in {1..m_s} [L158-L160, L242]. A
# result sees p; the audit draws the subnet that attains the minimum (m_p clients, h_p of them
# sampled, m_p <= n) and derives p from it. The relations below involve m_p or h_p, so they apply
# where those are given (the audit, or a user who gives them) and never refuse a plain p.
m_p = declare("m_p", POSITIVE_INTEGER, "size m_s of the subnet attaining p = min_s(1 - beta_s^2)",
              latex="m_{s_p}")
h_p = declare("h_p", POSITIVE_INTEGER, "clients h_s sampled in the subnet attaining p", latex="h_{s_p}")
_p_of_subnet = 1 - ((m_p - h_p) / m_p) ** 2
#: rounding allowance of the equality p = 1 - ((m_p - h_p)/m_p)^2 (two comparisons)
_EQ = sp.Rational(1, 10 ** 12)
SAMPLING = (
    Predicate("h_p <= m_p", h_p, "<=", m_p, "[L158-L160]: h_s in {1, ..., m_s}"),
    Predicate("m_p <= n", m_p, "<=", _n, "[L87]: subnets partition the n clients, sum_s m_s = n"),
    Predicate("p >= 1 - (1 - h_p/m_p)^2", p, ">=", _p_of_subnet * (1 - _EQ),
              "[L242]: p = min_s(1 - beta_s^2), beta_s = (m_s - h_s)/m_s, attained at subnet s_p"),
    Predicate("p <= 1 - (1 - h_p/m_p)^2", p, "<=", _p_of_subnet * (1 + _EQ),
              "[L242]: p = min_s(1 - beta_s^2), beta_s = (m_s - h_s)/m_s, attained at subnet s_p"),
)


def p_from_h(h: PositiveArray, m: PositiveArray) -> np.ndarray:
    """p = 1 - ((m - h)/m)^2 of a subnet of m clients sampling h of them ([L242]); vectorized
    (h <= m)."""
    if is_traced(h, m):          # the certifier's exact evaluation (it checks h <= m exactly)
        return 1 - ((m - h) / m) ** 2
    h, m = np.asarray(h, dtype=float), np.asarray(m, dtype=float)
    try:
        h_, m_ = np.broadcast_arrays(h, m)
    except ValueError:
        raise ValidationError(f"h {h.shape} and m {m.shape} must broadcast together") from None
    if np.any(h_ > m_):
        i = np.argwhere(h_ > m_)[0]
        raise ValidationError(f"h (clients sampled) must be <= m (clients of the subnet), got "
                              f"h = {h_[tuple(i)]:g} > m = {m_[tuple(i)]:g}")
    return 1.0 - ((m - h) / m) ** 2
