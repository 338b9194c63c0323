"""Implicit roots as exact numbers (issue 32, item 5): MonotoneRoot's digits are proved by exact
sign changes, so comparisons of it are decided like those of any algebraic number."""
from __future__ import annotations

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.theory.certify import trace as T
from fedbound.theory.certify.roots import MonotoneRoot, monotone_root

x = sp.Dummy("x", positive=True)


def test_the_root_of_x2_minus_2_is_sqrt2_to_60_digits():
    r = monotone_root(sp.Lambda(x, x ** 2 - 2), sp.Integer(1), sp.Integer(2))
    assert isinstance(r, MonotoneRoot) and r.is_real and r.is_positive
    assert abs(sp.N(r, 60) - sp.N(sp.sqrt(2), 60)) < sp.Float(10) ** -58
    assert T.sign_of(r - sp.Rational(141421356237, 10 ** 11)) > 0
    assert T.sign_of(r - sp.Rational(141421356238, 10 ** 11)) < 0


@settings(max_examples=30, deadline=None)
@given(st.fractions(min_value="1/1000", max_value=1000), st.fractions(min_value="1/1000", max_value=1000),
       st.fractions(min_value="1/1000", max_value=1000))
def test_the_root_of_118s_form_solves_its_equation(a, b, c):
    """A K^-3/2 + B K^-5/3 = c, decreasing in K: the root to 50 digits makes the residual vanish
    to those digits, and lies strictly inside its bracket."""
    A, B, C = (sp.Rational(v.numerator, v.denominator) for v in (a, b, c))
    f = sp.Lambda(x, A * x ** sp.Rational(-3, 2) + B * x ** sp.Rational(-5, 3) - C)
    lo = sp.Max((A / C) ** sp.Rational(2, 3), (B / C) ** sp.Rational(3, 5))
    hi = sp.Max((2 * A / C) ** sp.Rational(2, 3), (2 * B / C) ** sp.Rational(3, 5))
    root = monotone_root(f, lo, hi)
    value = sp.N(root, 50)
    scale = sp.N(A * value ** sp.Rational(-3, 2) + B * value ** sp.Rational(-5, 3) + C, 50)
    assert abs(sp.N(f(value), 50)) <= sp.Float(10) ** -40 * scale
    assert T.sign_of(root - lo) > 0 and T.sign_of(hi - root) > 0


def test_a_root_equal_to_another_number_is_undecided_not_escalated():
    """sqrt(2) - root(x^2 - 2) is exactly zero, which no digits show: sign_of says so (Undecided)
    after the proved digits run out (MAX_BITS), instead of raising sympy's working precision to
    thousands of digits and searching a minimal polynomial (which took minutes in the demo)."""
    import pytest

    r = monotone_root(sp.Lambda(x, x ** 2 - 2), sp.Integer(1), sp.Integer(2))
    with pytest.raises(T.Undecided):
        T.sign_of(r - sp.sqrt(2))
