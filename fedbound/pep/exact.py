"""Exact coefficients through PEPit (issue 32, item 5): a PEP built from :class:`Exact` options has
rational data.

PEPit multiplies points and expressions by ``int`` or ``float`` only. :class:`Exact` is a float that
carries its exact rational value (a :class:`fractions.Fraction`): arithmetic with ints, floats and
other Exacts is done on the rationals and returns an Exact, so every coefficient the method's code
and PEPit's interpolation conditions compute from Exact options (gamma K, 1/(K gamma), 1/(2 L),
mu/(2 (1 - mu/L)), ...) is exact, while the float value keeps every numeric path working.

A plain float met by an Exact, or left in the built data, is taken at its binary value only where
that value is short (:func:`rational`: numerator and denominator of at most :data:`SHORT_BITS` bits,
as the literals 1/2, 1/4 of the method code and of PEPit are); anything longer may be the rounded
result of float arithmetic on plain numbers (1.0/3, 0.1 + 0.2) and raises :class:`Inexact`: the
data would not be the algorithm's, so nothing is proved from it. A numpy scalar never meets an
Exact first (numpy would compute in float64 and return a plain float: caught the same way).
"""
from __future__ import annotations

import math
import operator
from fractions import Fraction

from fedbound.errors import FedboundError, ValidationError
from fedbound.validate import show

#: bits of numerator and denominator a plain float may have to be read as exact (0.5, 0.25, 3.0)
SHORT_BITS = 24


class Inexact(FedboundError):
    """A coefficient that may have been rounded in floating point (module doc)."""


def rational(x: object) -> Fraction:
    """The exact value of a coefficient: an Exact's rational, an int, or a short plain float (module
    doc); anything else raises :class:`Inexact`."""
    if isinstance(x, Exact):
        return x.q
    if isinstance(x, (int, Fraction)):
        return Fraction(x)
    if isinstance(x, float) and math.isfinite(x):
        q = Fraction(x)
        if max(abs(q.numerator), q.denominator).bit_length() <= SHORT_BITS:
            return q
    raise Inexact(f"the coefficient {x!r} ({type(x).__name__}) may have been rounded in floating point "
                  f"(only an Exact, an int or a float of at most {SHORT_BITS} bits is read as exact)")


def _arithmetic(op, reflected: bool = False):
    def method(self: Exact, other):
        if not isinstance(other, (int, float, Fraction)):
            return NotImplemented
        q = rational(other)
        return Exact(op(q, self.q) if reflected else op(self.q, q))
    return method


def _comparison(op):
    def method(self: Exact, other):
        if isinstance(other, float) and not math.isfinite(other):
            return op(float(self), other)
        if not isinstance(other, (int, float, Fraction)):
            return NotImplemented
        return op(self.q, other.q if isinstance(other, Exact) else Fraction(other))
    return method


class Exact(float):
    """A float carrying its exact rational value ``q`` (module doc)."""

    __slots__ = ("q",)

    def __new__(cls, q: Fraction | int | float):
        if isinstance(q, bool) or not isinstance(q, (Fraction, int, float)) or \
                (isinstance(q, float) and not math.isfinite(q)):
            raise ValidationError(f"an Exact number is a finite fraction, int or float, got {show(q)}")
        q = q if isinstance(q, Fraction) else Fraction(q)
        self = super().__new__(cls, float(q))
        self.q = q
        return self

    __add__, __radd__ = _arithmetic(operator.add), _arithmetic(operator.add, True)
    __sub__, __rsub__ = _arithmetic(operator.sub), _arithmetic(operator.sub, True)
    __mul__, __rmul__ = _arithmetic(operator.mul), _arithmetic(operator.mul, True)
    __truediv__, __rtruediv__ = _arithmetic(operator.truediv), _arithmetic(operator.truediv, True)
    __eq__, __ne__ = _comparison(operator.eq), _comparison(operator.ne)
    __lt__, __le__ = _comparison(operator.lt), _comparison(operator.le)
    __gt__, __ge__ = _comparison(operator.gt), _comparison(operator.ge)
    __hash__ = float.__hash__

    def __pow__(self, k):
        return Exact(self.q ** k) if isinstance(k, int) else float(self) ** k

    def __neg__(self):
        return Exact(-self.q)

    def __pos__(self):
        return self

    def __abs__(self):
        return Exact(abs(self.q))

    def __repr__(self) -> str:
        return f"Exact({self.q})"


def exact_options(cfg: dict) -> dict:
    """``cfg`` with every float as an :class:`Exact` of its binary value; ints, strings and lists
    unchanged."""
    return {k: Exact(Fraction(v)) if isinstance(v, float) else v for k, v in cfg.items()}


__all__ = ["Exact", "Inexact", "SHORT_BITS", "rational", "exact_options"]
