"""The constants of the papers as sympy symbols with domains.

One registry for all papers so that a constant means the same everywhere: ``sigma`` is the standard
deviation of the stochastic gradients (the formulas use ``sigma**2``), ``p`` is SD-GT's sampling
measure min_s(1 - beta_s^2), ``q`` its mixing measure min_s rho_s, and so on. Each constant carries a
:class:`Domain`; :func:`check_values` rejects values outside it with a one-line message naming the
value and the valid range.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from fedbound.errors import UnknownNameError, ValidationError


@dataclass(frozen=True)
class Domain:
    """An interval of the real line, optionally restricted to integers."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = True
    high_open: bool = True
    integer: bool = False

    def contains(self, values: np.ndarray) -> np.ndarray:
        v = np.asarray(values, dtype=float)
        ok = (v > self.low) if self.low_open else (v >= self.low)
        ok &= (v < self.high) if self.high_open else (v <= self.high)
        if self.integer:
            ok &= np.isfinite(v) & (v == np.round(v))
        return ok

    def describe(self) -> str:
        if self.integer:
            if math.isinf(self.high):
                return f"an integer >= {int(self.low) + (1 if self.low_open else 0)}"
            return f"an integer in [{int(self.low)}, {int(self.high)}]"
        left = "(" if self.low_open else "["
        right = ")" if self.high_open else "]"
        return f"in {left}{_fmt(self.low)}, {_fmt(self.high)}{right}"


def _fmt(x: float) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:g}"


POSITIVE = Domain(0.0, math.inf, True, True)
NONNEGATIVE = Domain(0.0, math.inf, False, True)
UNIT = Domain(0.0, 1.0, True, False)          # (0, 1]
PROBABILITY = Domain(0.0, 1.0, False, False)  # [0, 1]
POSITIVE_INTEGER = Domain(1.0, math.inf, False, True, integer=True)
NONNEGATIVE_INTEGER = Domain(0.0, math.inf, False, True, integer=True)


@dataclass(frozen=True)
class Constant:
    """A named constant: its sympy symbol, domain and meaning."""

    name: str
    symbol: sp.Symbol
    domain: Domain
    meaning: str


_REGISTRY: dict[str, Constant] = {}


def declare(name: str, domain: Domain, meaning: str, latex: str | None = None) -> sp.Symbol:
    """Declare a constant (idempotent for an identical declaration) and return its symbol."""
    if name in _REGISTRY:
        known = _REGISTRY[name]
        if known.domain != domain:
            raise ValueError(f"constant {name} re-declared with another domain")
        return known.symbol
    assumptions = {"real": True}
    if domain.integer:
        assumptions["integer"] = True
    if domain.low >= 0 and domain.low_open:
        assumptions["positive"] = True
    elif domain.low >= 0:
        assumptions["nonnegative"] = True
    symbol = sp.Symbol(latex or name, **assumptions)
    _REGISTRY[name] = Constant(name, symbol, domain, meaning)
    return symbol


def constant(name: str) -> Constant:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownNameError(f"unknown constant {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def name_of(symbol: sp.Symbol) -> str:
    """The registry name of a symbol (its printed name may differ, e.g. LaTeX for Greek letters)."""
    for c in _REGISTRY.values():
        if c.symbol == symbol:
            return c.name
    raise UnknownNameError(f"symbol {symbol} is not a declared constant")


def all_constants() -> dict[str, Constant]:
    return dict(_REGISTRY)


#: cross-constraints between constants: (smaller, larger) means smaller <= larger
ORDER_RELATIONS: tuple[tuple[str, str], ...] = (("mu", "L"), ("Kmin", "Kmax"))


def check_values(values: dict[str, np.ndarray]) -> None:
    """Raise :class:`ValidationError` if any value is outside its constant's domain."""
    for name, v in values.items():
        c = constant(name)
        arr = np.asarray(v, dtype=float)
        bad = ~c.domain.contains(arr)
        if np.any(bad):
            first = arr[bad].flat[0] if arr.ndim else float(arr)
            raise ValidationError(f"{name} ({c.meaning}) must be {c.domain.describe()}, got {first:g}")
    for small, large in ORDER_RELATIONS:
        if small in values and large in values:
            a, b = np.broadcast_arrays(np.asarray(values[small], float), np.asarray(values[large], float))
            if np.any(a > b):
                i = np.flatnonzero(a > b)[0]
                raise ValidationError(
                    f"{small} must be <= {large}, got {small}={a.flat[i]:g} > {large}={b.flat[i]:g}")


# Constants shared by all papers --------------------------------------------------------------
L = declare("L", POSITIVE, "smoothness constant")
mu = declare("mu", NONNEGATIVE, "strong-convexity constant (0 <= mu <= L)", latex="mu")
sigma = declare("sigma", NONNEGATIVE, "stochastic-gradient noise standard deviation", latex="sigma")
gamma = declare("gamma", POSITIVE, "local step size", latex="gamma")
K = declare("K", POSITIVE_INTEGER, "local steps (D2D rounds) per global round")
T = declare("T", POSITIVE_INTEGER, "number of global rounds")
n = declare("n", POSITIVE_INTEGER, "number of clients")
eps = declare("eps", POSITIVE, "target accuracy", latex="epsilon")
