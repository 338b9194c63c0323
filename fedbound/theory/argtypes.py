"""Argument types of the theory beyond :mod:`fedbound.argtypes`: the extended reals.

A value of the theory may be infinite where a formula or a domain says so (a violation ratio whose
right side is 0, an unbounded constant of a task such as G under Gaussian noise, an entry of a
recursion matrix that overflows at a huge step size), but never NaN:

* :data:`ExtendedReal`: a real number or an infinity, not NaN;
* :data:`ExtendedArray`: a real array (or number) whose entries may be infinite, not NaN.

The audit samples a claim's instances at points of the unit cube (:data:`UnitPoints`, one row per
point, one column per sampled parameter).
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

from fedbound.argtypes import NonFinite, Range

#: a real number or +-inf (NaN is refused)
ExtendedReal = Annotated[float, NonFinite(), Range(allow_inf=True)]
#: a real array (or number) with entries in [-inf, inf] (NaN is refused)
ExtendedArray = Annotated[np.ndarray, NonFinite(), Range(allow_inf=True)]
#: points of the unit cube: a real array with entries in [0, 1]
UnitPoints = Annotated[np.ndarray, Range(0.0, 1.0)]

__all__ = ["ExtendedReal", "ExtendedArray", "UnitPoints"]
