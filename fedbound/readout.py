r"""How a number is shown to a reader: the digits that matter, a ratio's size in words and powers of
ten, tables sorted by size, and when an axis should be logarithmic. Every text output (the CLI, the
demo page, verify's lines, the sweep report) formats through these, so that one number reads the
same everywhere.

* :func:`number`: ``digits`` significant digits, except where that rounding would hide the number's
  point: a contraction factor of 0.99999995 is ``1 - 5.0e-08``, never ``1``;
* :func:`ratio_words`: a ratio as a size, ``a factor of 2.5`` or ``a factor of 10^43``; an infinite
  ratio says which side is zero (or negative), an overflowing one is read from its log10;
* :func:`magnitude` and :func:`by_size`: the order of ratios by size (largest first, infinite ones
  before them, undefined ones last), for tables of findings;
* :func:`log_axis`: whether positive values span a decade or more, where a linear axis would show
  the small ones as 0.

>>> number(0.99999995)
'1 - 5.0e-08'
>>> number(3.14159265)
'3.14159'
>>> ratio_words(2.5), ratio_words(2.335e43), ratio_words(float("inf"), rhs=0.0, rhs_name="the bound")
('a factor of 2.5', 'a factor of 10^43', 'infinite: the bound is 0')
"""
from __future__ import annotations

import math
from typing import Annotated, Callable, Iterable

import numpy as np

from fedbound.argtypes import NonFinite, Range

#: a number given to a formatter: real, possibly infinite (NaN is refused at the boundary; a NaN
#: computed inside fedbound, such as a 0/0 ratio, is named "nan" or "undefined (0/0)")
Shown = Annotated[float, NonFinite(), Range(allow_inf=True)]
#: an array of such numbers
ShownArray = Annotated[np.ndarray, NonFinite(), Range(allow_inf=True)]
#: significant digits, 1..17 (float64 holds 17)
Digits = Annotated[int, Range(1, 17)]
#: ratios from PLAIN_LOW up to PLAIN_HIGH are written as plain numbers, others as powers of ten
PLAIN_LOW, PLAIN_HIGH = 1e-2, 1e4
#: a distance to 1 below this (64 float64 epsilons) is rounding, not a digit that matters
ROUNDING_GAP = 64 * float(np.finfo(float).eps)


def number(value: Shown, digits: Digits = 6) -> str:
    """``value`` with ``digits`` significant digits (``%g``), except where the rounding reads as
    exactly 1 or -1 and the value is not: then 1 and the distance to it, ``1 - 5.0e-08``,
    ``1 + 2.0e-12``, ``-1 + 5.0e-08`` (a contraction of 0.99999995 is not a rate of 1); a distance
    below :data:`ROUNDING_GAP` is float rounding and reads as 1. inf, -inf and nan by name."""
    x = float(value)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    text = f"{x:.{digits}g}"
    if abs(float(text)) == 1.0 and abs(abs(x) - 1.0) >= ROUNDING_GAP:
        one = "1" if x > 0 else "-1"
        gap = abs(x) - 1.0
        # distance to the nearer 1, signed as seen from 1 (-1 + d lies inside [-1, 1])
        sign = ("-" if gap < 0 else "+") if x > 0 else ("+" if gap < 0 else "-")
        return f"{one} {sign} {abs(gap):.1e}"
    return text


def magnitude(ratio: Shown, log10: Shown | None = None) -> float:
    """The size of a ratio as log10 |ratio| (``log10`` where given: a ratio beyond the float range
    keeps its size there): +inf for an infinite ratio, -inf for 0, nan for an undefined one."""
    if log10 is not None and math.isfinite(float(log10)):
        return float(log10)
    r = float(ratio)
    if math.isnan(r):
        return math.nan
    if math.isinf(r):
        return math.inf
    return math.log10(abs(r)) if r != 0 else -math.inf


def ratio_words(ratio: Shown, log10: Shown | None = None, *, rhs: Shown | None = None,
                lhs_name: str = "the left side",
                rhs_name: str = "the right side") -> str:
    """A ratio lhs/rhs as a size a reader can weigh: ``a factor of 2.5`` (from 0.01 up to 10^4, 3
    significant digits, ``1 - 2.0e-20`` where that rounds to 1), ``a factor of 10^43`` (beyond: the
    power of ten, one decimal below 10^10), ``infinite: the bound is 0`` (an infinite ratio names
    the side that is 0 or negative, from ``rhs`` where given), ``undefined (0/0)``. ``log10`` is
    the ratio's log10 where the ratio itself overflowed (an audit's ``log10_ratio``)."""
    size = magnitude(ratio, log10)
    r = float(ratio)
    if math.isnan(size):
        return "undefined (0/0)"
    if math.isinf(size) and size > 0:
        if rhs is not None and float(rhs) == 0:
            return f"infinite: {rhs_name} is 0"
        if rhs is not None and float(rhs) < 0:
            return f"infinite: {rhs_name} is negative ({number(rhs, 3)})"
        return f"infinite: {rhs_name} is 0 or negative where {lhs_name} is positive"
    if math.isinf(size):
        return f"0: {lhs_name} is 0"
    if log10 is not None and math.isfinite(float(log10)) and 0 < abs(float(log10)) < 1e-3:
        gap = math.expm1(float(log10) * math.log(10))   # 1 - 2e-20 is 1.0 in float64: read log10
        return f"a factor of 1 {'-' if gap < 0 else '+'} {abs(gap):.1e}"
    if not math.isfinite(r) or not PLAIN_LOW <= abs(r) < PLAIN_HIGH:
        power = f"{size:.1f}" if abs(size) < 10 else f"{size:.0f}"
        return f"a factor of {'-' if r < 0 else ''}10^{power}"
    return f"a factor of {number(r, 3)}"


def by_size(items: Iterable, key: Callable) -> list:
    """``items`` sorted by the size of the ratio ``key(item)`` returns (a number, or a pair (ratio,
    log10)), largest first: infinite ratios first, undefined ones last; ties keep their order."""
    def order(item):
        k = key(item)
        size = magnitude(*k) if isinstance(k, tuple) else magnitude(k)
        return (1, 0.0) if math.isnan(size) else (0, -size)
    return sorted(items, key=order)


def log_axis(values: ShownArray) -> bool:
    """Whether ``values`` (an array of any shape; non-finite entries ignored) belong on a log axis:
    every finite value positive and the largest at least 10 times the smallest. A linear axis
    would show the small ones as 0."""
    arr = np.ravel(np.asarray(values, dtype=float))
    arr = arr[np.isfinite(arr)]
    if arr.size == 0 or np.any(arr <= 0):
        return False
    return float(arr.max()) >= 10.0 * float(arr.min())


__all__ = ["number", "magnitude", "ratio_words", "by_size", "log_axis", "PLAIN_LOW", "PLAIN_HIGH",
           "ROUNDING_GAP"]
