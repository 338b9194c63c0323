"""The constants of the papers as sympy symbols with domains, shared on purpose or scoped per paper.

A constant is declared once, with a :class:`Domain` and its meaning. Two kinds:

* **shared** constants mean the same in every paper and are declared here: ``L`` (smoothness), ``mu``
  (strong convexity), ``sigma`` (gradient-noise standard deviation; formulas use ``sigma**2``),
  ``gamma`` (local step size), ``T`` (global rounds), ``n`` (clients), ``eps`` (target accuracy);
* **scoped** constants belong to one paper: ``declare("K", ..., scope="sdgt")`` is SD-GT's number of
  D2D rounds, key ``"sdgt.K"``; AFGA's number of clusters would be ``"afga.K"``, a different symbol.

A result with id ``"<scope>.<name>"`` sees the shared constants and its own scope's, under their
short names (``evaluate(K=5)`` for an SD-GT result), see :func:`resolve`. Declaring a key twice
with another domain or meaning raises :class:`DeclarationError` at import time; so does a scoped
constant named like a shared one (FedProx's proximal ``mu`` is not the strong-convexity ``mu``)
unless the declaration says ``shadow=True`` on purpose, and a shared constant named like an existing
scoped one. Scoped symbols print with their short name but never compare equal to a symbol of
another scope (:class:`ScopedSymbol`).

Vector constants (``ndim=1``: one entry per client, e.g. FedNova's ``p_i``) have a domain for their
entries; a result reduces them to scalar constants in its preparation step
(:class:`fedbound.theory.result.Preparation`).

:func:`check_values` rejects values outside a domain with a one-line message naming the constant,
its meaning, the value and the valid range; every error about a constant says what it means
(:func:`explain`: ``"K (local steps (D2D rounds) per global round)"``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated

import numpy as np
import sympy as sp

from fedbound import validate
from fedbound.argtypes import Measured, Range
from fedbound.errors import FedboundError, InputTypeError, UnknownNameError, ValidationError
from fedbound.theory.argtypes import ExtendedArray
from fedbound.validate import listing, suggest


class DeclarationError(FedboundError, ValueError):
    """A constant declared twice with different meanings, or a scope clash (raised at import)."""


#: the dimensions of a constant: 0 (a scalar) or 1 (a vector, one entry per client)
Dimensions = Annotated[int, Range(0, 1)]


@dataclass(frozen=True)
class Domain:
    """An interval of the real line, optionally restricted to integers."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = True
    high_open: bool = True
    integer: bool = False

    def contains(self, values: Measured) -> np.ndarray:
        """Whether each value lies in the domain (NaN never does)."""
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
HALF_OPEN_UNIT = Domain(0.0, 1.0, False, True)  # [0, 1): momentum, decay, rho
POSITIVE_INTEGER = Domain(1.0, math.inf, False, True, integer=True)
NONNEGATIVE_INTEGER = Domain(0.0, math.inf, False, True, integer=True)


class ScopedSymbol(sp.Symbol):
    """A sympy symbol that prints as its short name but belongs to a scope: ``mu`` of scope
    ``"fedprox"`` is not equal to the shared ``mu`` (the scope is part of its hashable content)."""

    __slots__ = ("scope",)

    def __new__(cls, name: str, scope: str, **assumptions):
        for label, value in (("name", name), ("scope", scope)):
            if not isinstance(value, str):
                raise InputTypeError(f"ScopedSymbol: {label} must be a string, got {validate.show(value)}")
        obj = sp.Symbol.__xnew__(cls, name, **assumptions)
        obj.scope = scope
        return obj

    def __getnewargs_ex__(self):
        return (self.name, self.scope), self.assumptions0

    def _hashable_content(self):
        return super()._hashable_content() + (self.scope,)

    @classmethod
    def class_key(cls):
        """Sort (and so print) exactly like a plain Symbol of the same name."""
        return sp.Symbol.class_key()


@dataclass(frozen=True)
class Constant:
    """A declared constant: key (``"sdgt.K"`` or ``"L"``), short name, scope (``None`` if shared),
    sympy symbol, domain (of each entry for a vector), meaning, and ``ndim`` (0 scalar, 1 vector)."""

    key: str
    name: str
    scope: str | None
    symbol: sp.Symbol
    domain: Domain
    meaning: str
    ndim: Dimensions = 0


_REGISTRY: dict[str, Constant] = {}
_BY_SYMBOL: dict[sp.Symbol, str] = {}


def key_of(name: str, scope: str | None) -> str:
    return f"{scope}.{name}" if scope else name


def declare(name: str, domain: Domain, meaning: str, latex: str | None = None,
            scope: str | None = None, shadow: bool = False, ndim: Dimensions = 0) -> sp.Symbol:
    """Declare a constant and return its symbol (an identical re-declaration returns the same one).

    ``scope`` is the paper ("sdgt", "afga", ...), ``None`` for a shared constant; ``shadow=True``
    allows a scoped constant to reuse a shared name with another meaning (within the scope the short
    name then means the scoped one). Clashes raise :class:`DeclarationError` (module docstring).
    """
    if "." in name or not name:
        raise DeclarationError(f"constant name {name!r} must be non-empty and contain no '.'")
    key = key_of(name, scope)
    if key in _REGISTRY:
        known = _REGISTRY[key]
        if (known.domain, known.meaning, known.ndim) != (domain, meaning, ndim):
            raise DeclarationError(
                f"constant {key} declared twice with different meanings: {known.meaning!r} "
                f"({known.domain.describe()}) and {meaning!r} ({domain.describe()})")
        return known.symbol
    if scope is not None and name in _REGISTRY and not shadow:
        raise DeclarationError(
            f"{scope}.{name} ({meaning}) clashes with the shared constant {name} "
            f"({_REGISTRY[name].meaning}); pick another name or declare it with shadow=True")
    if scope is None:
        scoped = sorted(k for k, c in _REGISTRY.items() if c.name == name and c.scope is not None)
        if scoped:
            raise DeclarationError(f"shared constant {name} ({meaning}) clashes with the scoped "
                                   f"constant(s) {', '.join(scoped)}")
    assumptions = {"real": True}
    if domain.integer:
        assumptions["integer"] = True
    if domain.low >= 0 and domain.low_open:
        assumptions["positive"] = True
    elif domain.low >= 0:
        assumptions["nonnegative"] = True
    printed = latex or name
    symbol = ScopedSymbol(printed, scope, **assumptions) if scope else sp.Symbol(printed, **assumptions)
    _REGISTRY[key] = Constant(key, name, scope, symbol, domain, meaning, ndim)
    _BY_SYMBOL[symbol] = key
    return symbol


def constant(name: str, scope: str | None = None) -> Constant:
    """The constant called ``name``: a key (``"sdgt.K"``, ``"L"``) or, with ``scope``, a short name
    resolved as in :func:`resolve`. Without a scope, a short name that exactly one scope declares
    (and no shared constant) is accepted; an ambiguous or unknown one raises
    :class:`~fedbound.errors.UnknownNameError` naming the candidates."""
    if scope is not None:
        return resolve(name, scope)
    if name in _REGISTRY:
        return _REGISTRY[name]
    candidates = sorted(k for k, c in _REGISTRY.items() if c.name == name)
    if len(candidates) == 1:
        return _REGISTRY[candidates[0]]
    if candidates:
        raise UnknownNameError(f"constant {name!r} is ambiguous: {', '.join(candidates)}; use the key")
    raise UnknownNameError(f"unknown constant {name!r}{suggest(name, visible(None))} "
                           f"(known: {listing(sorted(visible(None)))})")


def visible(scope: str | None) -> dict[str, Constant]:
    """Short name -> constant for everything a result of ``scope`` sees: the shared constants, and
    the scope's own ones (which win where they shadow a shared name). ``None``: every short name
    that is unambiguous over all scopes."""
    out = {c.name: c for c in _REGISTRY.values() if c.scope is None}
    if scope is not None:
        out.update({c.name: c for c in _REGISTRY.values() if c.scope == scope})
        return out
    counts: dict[str, int] = {}
    for c in _REGISTRY.values():
        counts[c.name] = counts.get(c.name, 0) + 1
    out.update({c.name: c for c in _REGISTRY.values() if counts[c.name] == 1})
    return out


def resolve(name: str, scope: str | None) -> Constant:
    """The constant a result of ``scope`` means by the short ``name`` (scope first, then shared);
    :class:`~fedbound.errors.UnknownNameError` with a did-you-mean otherwise."""
    seen = visible(scope)
    if name in seen:
        return seen[name]
    where = f" in scope {scope!r}" if scope else ""
    raise UnknownNameError(f"unknown constant {name!r}{where}{suggest(name, seen)} "
                           f"(known: {listing(sorted(seen))})")


def name_of(symbol: sp.Symbol) -> str:
    """The key of a symbol (``"sdgt.K"``; its printed name may differ, e.g. LaTeX)."""
    try:
        return _BY_SYMBOL[symbol]
    except KeyError:
        raise UnknownNameError(f"symbol {symbol} is not a declared constant") from None


def short_name(symbol: sp.Symbol) -> str:
    """The short name of a declared symbol (``"K"`` for ``"sdgt.K"``)."""
    return _REGISTRY[name_of(symbol)].name


def all_constants() -> dict[str, Constant]:
    """Key -> constant, every declared constant."""
    return dict(_REGISTRY)


def explain(name: str, scope: str | None = None) -> str:
    """``"name (meaning)"`` for a declared constant (a short name resolved in ``scope``, or a key),
    as error messages name a constant; the bare name where none is declared."""
    try:
        return f"{name} ({constant(name, scope).meaning})"
    except UnknownNameError:
        return name


#: cross-constraints between constants (keys): (smaller, larger) means smaller <= larger
ORDER_RELATIONS: tuple[tuple[str, str], ...] = (("mu", "L"), ("sdgt.Kmin", "sdgt.Kmax"), ("afga.m", "afga.n"),
                                                 ("afga.M", "afga.N"))


def check_values(values: dict[str, ExtendedArray], scope: str | None = None) -> None:
    """Raise :class:`ValidationError` if a value is outside its constant's domain or an order
    relation fails. Keys of ``values`` are short names resolved in ``scope`` (or keys)."""
    keyed = {}
    for name, v in values.items():
        c = constant(name, scope)
        keyed[c.key] = (name, v)
        arr = np.asarray(v, dtype=float)
        bad = ~c.domain.contains(arr)
        if np.any(bad):
            first = arr[bad].flat[0] if arr.ndim else float(arr)
            entries = " entries" if c.ndim else ""
            raise ValidationError(
                f"{name} ({c.meaning}){entries} must be {c.domain.describe()}, got {first:g}")
    for small, large in ORDER_RELATIONS:
        if small in keyed and large in keyed:
            (ns, vs), (nl, vl) = keyed[small], keyed[large]
            a, b = np.broadcast_arrays(np.asarray(vs, float), np.asarray(vl, float))
            if np.any(a > b):
                i = np.flatnonzero(a > b)[0]
                raise ValidationError(
                    f"{ns} must be <= {nl}, got {ns}={a.flat[i]:g} > {nl}={b.flat[i]:g}; "
                    f"{explain(ns, scope)}, {explain(nl, scope)}")


# Constants shared by all papers --------------------------------------------------------------
L = declare("L", POSITIVE, "smoothness constant")
mu = declare("mu", NONNEGATIVE, "strong-convexity constant (0 <= mu <= L)", latex="mu")
sigma = declare("sigma", NONNEGATIVE, "stochastic-gradient noise standard deviation", latex="sigma")
gamma = declare("gamma", POSITIVE, "local step size", latex="gamma")
T = declare("T", POSITIVE_INTEGER, "number of global rounds")
n = declare("n", POSITIVE_INTEGER, "number of clients")
eps = declare("eps", POSITIVE, "target accuracy", latex="epsilon")
