"""The declared argument types of fedbound's public functions: ranges written into annotations.

A public function declares what each argument must be by its annotation; :mod:`fedbound.guard`
reads the annotations and checks every call from outside fedbound through :mod:`fedbound.validate`.
Plain types say the kind (``float`` is a finite real number, ``int`` an integer, ``np.ndarray`` a
finite real array, a class an instance of it, ``X | None`` also ``None``); the aliases below add the
range, e.g.::

    def spectral_gap(W: np.ndarray, tol: Positive = 1e-12) -> float: ...
    def sample(n: Count, p: Probability, seed: Seed = 0): ...

A constraint is any object of ``typing.Annotated``'s metadata with a ``check(name, value)`` method;
:class:`Range` covers the intervals of real numbers and integers (elementwise for arrays and
sequences), :class:`Choice` a closed list of names, :class:`Dims` the number of dimensions of an array.
"""
from __future__ import annotations

import math
import numbers
import sys
from dataclasses import dataclass
from typing import Annotated

import numpy as np

from fedbound import guard, validate
from fedbound.errors import InputTypeError


@dataclass(frozen=True)
class Range:
    """``low <= value <= high`` (ends open where told) for a number, or for every entry of an array
    or a sequence of numbers; ``allow_inf`` lets infinities through (e.g. a horizon "never")."""
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    allow_inf: bool = False

    def check_scalar(self, name: str, value: object, kind: type) -> None:
        """``value`` as a ``kind`` (float or int) in the range, one message for both ("n must be an
        integer >= 1, got 0"; "alpha must be > 0, got nan")."""
        if kind is int:
            low = None if math.isinf(self.low) else math.floor(self.low) + 1 if self.low_open \
                else math.ceil(self.low)
            high = None if math.isinf(self.high) else math.ceil(self.high) - 1 if self.high_open \
                else math.floor(self.high)
            validate.integer(name, value, low=low, high=high)
        else:
            validate.number(name, value, low=self.low, high=self.high, low_open=self.low_open,
                            high_open=self.high_open, allow_inf=self.allow_inf)

    def check(self, name: str, value: object) -> None:
        if isinstance(value, (numbers.Real, np.generic)) and not isinstance(value, (bool, np.bool_)):
            validate.number(name, value, low=self.low, high=self.high, low_open=self.low_open,
                            high_open=self.high_open, allow_inf=self.allow_inf)
        elif isinstance(value, (np.ndarray, list, tuple)) or hasattr(value, "detach"):
            arr = validate.real_array(name, value, finite=not self.allow_inf)
            with np.errstate(invalid="ignore"):
                ok = ((arr > self.low) if self.low_open else (arr >= self.low)) & \
                     ((arr < self.high) if self.high_open else (arr <= self.high))
            if not ok.all():
                index = tuple(np.argwhere(~ok)[0].tolist())
                validate.number(f"{name}{list(index)}", arr[index], low=self.low, high=self.high,
                                low_open=self.low_open, high_open=self.high_open,
                                allow_inf=self.allow_inf)


@dataclass(frozen=True)
class Choice:
    """One of a closed list of names (an unknown one is an UnknownNameError with a did-you-mean)."""
    names: tuple[str, ...]

    def check(self, name: str, value: object) -> None:
        validate.one_of(name, value, self.names)


@dataclass(frozen=True)
class Dims:
    """An array with one of the numbers of dimensions ``ndim`` (a vector: 1, a matrix: 2)."""
    ndim: tuple[int, ...]

    def check(self, name: str, value: object) -> None:
        validate.real_array(name, value, ndim=self.ndim, finite=False, allow_bool=True)


@dataclass(frozen=True)
class NonFinite:
    """Measured data under test: NaN and infinities reach the function, which judges them (a
    testing assertion fails on them with an AssertionError); the kind is still checked."""
    nonfinite: bool = True


@dataclass(frozen=True)
class InstanceOf:
    """An instance of the class ``path`` ("package.module.Class"), checked without importing its
    module: a value of that class exists only once its module is imported, so where the module is
    not imported yet no value is one. For the annotations of modules that must stay light (the
    theory registry and the network CLI do not import torch); an instance is then checked as the
    guard checks its class (a tensor's entries finite)."""
    path: str

    def check(self, name: str, value: object) -> None:
        module, _, cls_name = self.path.rpartition(".")
        cls = getattr(sys.modules.get(module), cls_name, None)
        if cls is None or not isinstance(value, cls):
            what = f"a fedbound {cls_name}" if module.startswith("fedbound.") else f"a {self.path}"
            raise InputTypeError(f"{name} must be {what}, got {validate.show(value)}")
        guard.check_value(name, value, cls)


#: a fedbound Task (:class:`fedbound.tasks.base.Task`), without importing fedbound.tasks (torch)
TaskArg = Annotated[object, InstanceOf("fedbound.tasks.base.Task")]

#: a real number > 0 (a step size, a smoothness constant, a tolerance)
Positive = Annotated[float, Range(0.0, low_open=True)]
#: a real number >= 0 (a variance, a noise level, a distance)
NonNegative = Annotated[float, Range(0.0)]
#: a probability in [0, 1]
Probability = Annotated[float, Range(0.0, 1.0)]
#: a fraction in (0, 1] (a participation rate, a sampling rate that must sample someone)
Fraction = Annotated[float, Range(0.0, 1.0, low_open=True)]
#: a count >= 1 (clients, dimension, rounds, local steps)
Count = Annotated[int, Range(1)]
#: an integer >= 0 (an index, a number of extra steps, a horizon that may be empty)
NonNegativeInt = Annotated[int, Range(0)]
@dataclass(frozen=True)
class SeedRange:
    """A random seed (:func:`fedbound.validate.seed`: an integer in [0, 2**63))."""

    def check_scalar(self, name: str, value: object, kind: type) -> None:
        validate.seed(value, name)

    def check(self, name: str, value: object) -> None:
        validate.seed(value, name)


#: a random seed: an integer in [0, 2**63)
Seed = Annotated[int, SeedRange()]
#: a real array with entries > 0 / >= 0 / in [0, 1]
PositiveArray = Annotated[np.ndarray, Range(0.0, low_open=True)]
NonNegativeArray = Annotated[np.ndarray, Range(0.0)]
ProbabilityArray = Annotated[np.ndarray, Range(0.0, 1.0)]
#: a real vector (1 dimension) and a real matrix (2 dimensions), finite
Vector = Annotated[np.ndarray, Dims((1,))]
Matrix = Annotated[np.ndarray, Dims((2,))]
#: measured data (any real array; a vector), NaN and infinities allowed (:class:`NonFinite`)
Measured = Annotated[np.ndarray, NonFinite()]
MeasuredVector = Annotated[np.ndarray, Dims((1,)), NonFinite()]

__all__ = ["InstanceOf", "TaskArg", "Range", "Choice", "SeedRange", "Dims", "NonFinite", "Vector", "Matrix", "Measured", "MeasuredVector", "Positive", "NonNegative", "Probability", "Fraction", "Count",
           "NonNegativeInt", "Seed", "PositiveArray", "NonNegativeArray", "ProbabilityArray"]
