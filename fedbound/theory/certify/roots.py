r"""Implicit roots as exact numbers (issue 32, item 5): a root known only by its equation, compared
with guaranteed digits.

A claim whose code solves an equation numerically (SD-GT Theorem 5's K*, the root of (118), seed
003 [L1226], by brentq; AFGA's implicit step-size caps (25), (27), seed 002 [L1970-1999], by
bisection) has no closed form to trace. :class:`MonotoneRoot` is that root as a sympy
number: the unique x in [lo, hi] with f(x) = 0, f strictly monotone there. Its digits come with a
proof: a candidate from mpmath's bisection at the working precision plus guard bits, then two
rationals x- < x+ around it, 2^-(prec + 8) apart relative to it, where the exact signs of f
(sympy's evalf with guaranteed digits, :func:`_sign`) differ; the root lies between them, so every
digit returned is right. Up to :data:`MAX_BITS` bits; proved digits are kept per root. Comparisons of it are then decided like
any algebraic or transcendental number of the trace.
"""
from __future__ import annotations

import mpmath
import sympy as sp


#: widenings of the verified bracket before the root's digits are given up (each x 2^10)
WIDENINGS = 4
#: the most bits a root's digits are proved to: beyond, evalf gets no digits (a comparison with an
#: equal number then stays undecided at once instead of escalating sympy's working precision)
MAX_BITS = 1024
#: proved digits per root (args -> (bits, Rational)): sympy asks a number for its digits at every
#: comparison
_PROVED: dict = {}


class MonotoneRoot(sp.Function):
    """The unique root in [lo, hi] of f (a sympy ``Lambda`` of one variable, strictly monotone on
    [lo, hi], with f(lo) and f(hi) of opposite signs): ``MonotoneRoot(f, lo, hi)`` (module doc)."""

    is_real = True

    @property
    def is_number(self) -> bool:
        """A number (its Lambda binds its variable): sympy then compares it through evalf."""
        return not self.free_symbols

    def _eval_is_positive(self):
        return True if self.args[1].is_nonnegative and self.args[1] != 0 else None

    def _eval_evalf(self, prec):
        if prec > MAX_BITS:
            return None
        known = _PROVED.get(self.args)
        if known is None or known[0] < prec:
            x = _verified(*self.args, prec)
            if x is None:
                return None
            if len(_PROVED) > 4096:
                _PROVED.clear()
            known = _PROVED[self.args] = (prec, x)
        return sp.Float(known[1], precision=prec)


def _verified(f: sp.Lambda, lo: sp.Basic, hi: sp.Basic, prec: int) -> sp.Rational | None:
    """The root to ``prec`` bits, as the midpoint of a bracket whose exact signs differ (module
    doc), or None where the signs cannot be decided."""
    digits = int((prec + 40) * 0.302) + 5
    with mpmath.workprec(prec + 40):
        g = sp.lambdify(f.variables, f.expr, modules="mpmath")
        a, b = (mpmath.mpf(str(sp.N(end, digits))) for end in (lo, hi))
        ga = g(a)
        geometric = a > 0                   # a positive bracket is halved in log scale
        for _ in range(prec + 80):          # bisection: never leaves the bracket
            m = mpmath.sqrt(a * b) if geometric else (a + b) / 2
            gm = g(m)
            if (gm > 0) == (ga > 0):
                a, ga = m, gm
            else:
                b = m
        center = sp.Rational(mpmath.nstr((a + b) / 2, digits))
    width = (abs(center) if center else sp.Integer(1)) * sp.Rational(1, 2 ** (prec + 8))
    (variable,) = f.variables

    def at(value):      # unevaluated: sympy's eager powers of huge rationals overflow to floats
        with sp.evaluate(False):
            return f.expr.xreplace({variable: value})

    for _ in range(WIDENINGS):
        left, right = center - width, center + width
        s_left, s_right = _sign(at(left), prec), _sign(at(right), prec)
        if s_left is None or s_right is None:
            return None
        if s_left == 0:
            return left
        if s_right == 0:
            return right
        if s_left != s_right:
            return center
        width *= 2 ** 10
    return None


def _sign(e: sp.Basic, prec: int) -> int | None:
    """The sign of a number f(x) near f's root (about 2^-prec of its terms): sympy's evalf with a
    working precision to match (its digits are guaranteed), None where it finds no digit."""
    if e.is_Rational:
        return (e > 0) - (e < 0)
    value = e.evalf(30, maxn=int(prec * 0.302) + 120)
    if value.is_Float and value._prec > 1 and value != 0:
        return 1 if value > 0 else -1
    return None


def monotone_root(f: sp.Lambda, lo: sp.Basic, hi: sp.Basic) -> MonotoneRoot:
    """The root of f in [lo, hi] as an exact number (module doc)."""
    return MonotoneRoot(f, lo, hi)


__all__ = ["MonotoneRoot", "monotone_root", "WIDENINGS", "MAX_BITS"]
