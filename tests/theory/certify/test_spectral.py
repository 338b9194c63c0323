"""Spectral conditions as real algebra (issue 32, item 5): a comparison of the spectral radius of a
symbolic nonnegative matrix is decided through principal minors (M-matrix tests), exactly; a claim
about rho(A) of a user's own recursion is proved on its whole domain or refuted exactly; a matrix
that may have a negative entry proves nothing."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.theory import symbols as S
from fedbound.theory.audit import audit_claim
from fedbound.theory.certify import form as F
from fedbound.theory.certify import smt, spectral
from fedbound.theory.claim import Claim, Param, Sampler, compile_expr
from fedbound.theory.linalg import spectral_quantities

L, K, gamma = (S.constant(n).symbol for n in ("L", "T", "gamma"))
CAP = 1 / (36 * K * L)
SAMPLER = Sampler((Param("L", 1e-3, 1e3), Param("T", 1, 1000, integer=True), Param("gamma/cap", 1e-4, 1.0)),
                  lambda raw: {"L": raw["L"], "T": raw["T"],
                               "gamma": raw["gamma/cap"] * compile_expr(CAP)(raw)})


def rate_claim(k: float, diagonal=1) -> Claim:
    """v_t <= A v_{t-1} with A = [[d (1 - a), a], [a, 1/2]], a = gamma L <= 1/36: the claim
    rho(A) <= 1 - k a, as a user's plugin would write it (the numeric spectral_quantities)."""
    a = gamma * L
    A = compile_expr(sp.Matrix([[diagonal * (1 - a), a], [a, sp.Rational(1, 2)]]))

    def check(c):
        return k * c["gamma"] * c["L"], spectral_quantities(A(c), np.zeros((1, 2)))["radius_margin"]

    return Claim(f"rate {k} x {diagonal}", "synthetic", "printed", "rho(A) <= 1 - k gamma L", "",
                 SAMPLER, check)


def test_a_users_spectral_claim_is_proved_on_its_whole_domain():
    """det(tI - A) = a (3/8 - 19 a/16) > 0 at t = 1 - a/4 for a <= 1/36: rho(A) < 1 - a/4."""
    report = audit_claim(rate_claim(0.25), samples=500, iterations=5)
    assert report.verdict == "holds" and report.evidence == "proved", report.certificate
    c = report.certificate
    assert "principal minors" in c["method"] and c["result"] == "unsat"
    assert "inf" in c["domain"]


def test_a_spectral_claim_too_strong_is_refuted_exactly():
    """rho(A) > 1 - a > 1 - 2a: refuted at an exact point (rho as an algebraic number)."""
    report = audit_claim(rate_claim(2.0), samples=500, iterations=5)
    assert report.verdict == "fails" and report.evidence == "refuted"
    assert sp.sympify(report.certificate["counterexample"]["ratio"]["exact"]) > 1


def test_a_matrix_with_a_negative_entry_proves_nothing():
    """A = [[-(1 - a), a], [a, 1/2]]: rho(A) is near 1 from the negative eigenvalue, which the
    Perron-root characterization does not see; the rewritten query keeps "some entry < 0" as a
    violation, so z3 finds it satisfiable instead of proving rho(A) <= 1 - a/4."""
    form = F.symbolic_form(rate_claim(0.25, diagonal=-1), max_paths=4, seconds=10)
    assert smt.decide(form, rlimit=4_000_000, timeout=10).status != "unsat"


def _radius(M: sp.Matrix) -> sp.Basic:
    return max(sp.real_roots(sp.Poly(M.charpoly(sp.Symbol("x")).as_expr(), sp.Symbol("x"))))


fractions = st.fractions(min_value=0, max_value=3, max_denominator=8)


@settings(max_examples=60, deadline=None)
@given(st.lists(fractions, min_size=9, max_size=9), fractions)
def test_the_minor_tests_decide_each_comparison_as_the_exact_radius_does(entries, t):
    """For A >= 0 (3 x 3, rationals) and rational t, the rewritten relation is true exactly when
    the comparison of the exact Perron root with t is (> is rewritten to the weaker >=)."""
    M = sp.Matrix(3, 3, [sp.Rational(x.numerator, x.denominator) for x in entries])
    t = sp.Rational(t.numerator, t.denominator)
    rho = _radius(M)
    root = spectral.perron_root(M)
    for op, truth in ((sp.Lt, rho < t), (sp.Le, rho <= t), (sp.Ge, rho >= t), (sp.Gt, rho >= t),
                      (sp.Eq, rho == t)):
        assert bool(spectral.relation(op(root, t, evaluate=False))) == bool(truth), (op, M, t)
        # the same relation with rho on the other side and a negative coefficient
        flipped = {sp.Lt: sp.Gt, sp.Le: sp.Ge, sp.Ge: sp.Le, sp.Gt: sp.Lt, sp.Eq: sp.Eq}[op]
        assert bool(spectral.relation(flipped(2 * t, t + root, evaluate=False))) == bool(truth)


def test_a_negative_entry_makes_the_rewritten_relation_true():
    M = sp.Matrix([[-2, 0], [0, Fraction(1, 2)]])
    assert spectral.relation(sp.Lt(spectral.perron_root(M), 1, evaluate=False)) == sp.true


# -- interval enclosures (fedbound.theory.certify.interval) -----------------------------------------

@settings(max_examples=40, deadline=None)
@given(st.lists(st.fractions(min_value=0, max_value=3, max_denominator=16), min_size=9, max_size=9),
       st.fractions(min_value=0, max_value=1, max_denominator=8))
def test_interval_balls_enclose_the_perron_root_over_a_box(entries, width):
    """For A in [A0, A0 + width * ones] entrywise (A0 >= 1/64), the ball of rho(A) holds the Perron
    root of A0, of A0 + width and of a matrix between them (numpy's, within float accuracy), and is
    tight when the box is a point."""
    import flint
    import numpy as np

    from fedbound.theory.certify.interval import Balls

    a = sp.Symbol("a")
    A0 = np.array([float(e) for e in entries]).reshape(3, 3) + 1 / 64
    M = sp.Matrix(3, 3, lambda i, j: sp.Rational(entries[3 * i + j]) + a)
    low, high = Fraction(1, 64), Fraction(1, 64) + width
    ball = Balls({a: flint.arb.union(flint.arb(flint.fmpq(low.numerator, low.denominator)),
                                     flint.arb(flint.fmpq(high.numerator, high.denominator)))})(spectral.perron_root(M))
    lo, hi = float(ball.lower()), float(ball.upper())
    assert ball.is_finite()
    for shift in (0.0, float(width) / 2, float(width)):
        rho = max(abs(np.linalg.eigvals(A0 + shift)))
        assert lo - 1e-12 * (1 + rho) <= rho <= hi + 1e-12 * (1 + rho)
    if width == 0:
        assert hi - lo <= 1e-12 * (1 + hi)


def test_interval_balls_refuse_a_matrix_that_may_be_negative():
    import flint

    from fedbound.theory.certify.interval import Balls

    a = sp.Symbol("a")
    ball = Balls({a: flint.arb.union(flint.arb(-1), flint.arb(1))})(spectral.perron_root(sp.Matrix([[a, 1], [1, 1]])))
    assert not ball.is_finite()          # unknown: rho is not monotone once an entry can be negative


ONE = Sampler((Param("gamma", 1e-3, 0.02),), lambda raw: {"gamma": raw["gamma"]})


def exp_claim(slope) -> Claim:
    """rho([[1/2, gamma], [gamma, 1/2]]) = 1/2 + gamma <= exp(-1/2) + slope gamma: transcendental
    (no z3), so interval branch and bound with the Perron-root enclosure decides it."""
    A = compile_expr(sp.Matrix([[sp.Rational(1, 2), gamma], [gamma, sp.Rational(1, 2)]]))
    lhs = compile_expr(1 - sp.exp(-sp.Rational(1, 2)) - slope * gamma)

    def check(c):
        return lhs(c), spectral_quantities(A(c), np.zeros((1, 2)))["radius_margin"]

    return Claim(f"rho exp {slope}", "synthetic", "printed", "rho(A) <= exp(-1/2) + k gamma", "", ONE, check)


def test_a_transcendental_spectral_claim_is_proved_on_its_box_by_intervals():
    report = audit_claim(exp_claim(1), samples=300, iterations=2)
    assert report.verdict == "holds" and report.evidence == "proved-on-box", report.certificate
    assert "Collatz-Wielandt" in report.certificate["method"]


def test_a_false_spectral_claim_is_not_proved_by_intervals():
    """exp(-1/2) + 0.01 < 1/2 + 0.11 at gamma = 0.11 is outside the box; inside, with k = -5,
    1/2 + gamma > exp(-1/2) - 5 gamma for gamma > 0.0178: fails, never proved."""
    report = audit_claim(exp_claim(-5), samples=300, iterations=2)
    assert report.verdict == "fails" and report.evidence == "refuted"
