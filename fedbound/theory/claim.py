"""A checkable claim of a paper, the input of the audit (:mod:`fedbound.theory.audit`).

A :class:`Claim` is a statement "lhs <= rhs" (or "<") that a paper asserts for every admissible choice
of constants, e.g. "gamma <= gamma_bar implies ||A||_1 <= 1 - mu K gamma/4" (SD-GT Theorem 3). It
carries a :class:`Sampler` (the domain: each parameter a log-uniform or uniform interval, integers
rounded, and a ``build`` hook that turns raw parameters into the paper's constants, e.g. gamma as a
fraction of its cap) and a ``check`` that returns the arrays ``lhs`` and ``rhs`` (vectorized over
samples, optionally with a trailing axis of named parts) and optionally ``excess`` = lhs - rhs when
the check can compute it without cancellation. :func:`sign_parts` and :func:`compile_expr` help
write checks from sympy expressions.

What a referee needs beside the verdict (issue 22) is declared on the claim and computed by the
audit: ``kind`` ("printed": the paper's own statement; "consistency": a check fedbound constructs,
such as a re-derived experiment or a corrected reading), ``conditions`` (the repairs of the paper's
definitions a verdict depends on; empty when none), ``tests`` (what a failure means: "bound", an
inequality whose failure is a wrong constant or a wrong rate; "condition", a conclusion that the
step condition should guarantee; "nonvacuous", a bound compared with a trivial one), ``regime`` (the
instances where the theorem is meant to be used, :class:`Regime`; the audit reports the worst ratio
inside it), ``scaling`` (the raw parameters along which a growing ratio means a wrong order; default
T, R, n, N where sampled) and ``corrected`` (the id of the claim that is a corrected reading of this
one: when it holds, a failure here is a typo). Every sampled instance must be admissible for the
claim's result (:meth:`fedbound.theory.statement.Statement.admissible`: domains, order relations and
the result's ``relations``): an inadmissible point is never a counterexample, and is counted.
:class:`OrderClaim` checks a claimed order (an exponent in T, n or 1/eps) by scaling.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np
import sympy as sp

from fedbound.argtypes import NonNegative
from fedbound.errors import ValidationError, require
from fedbound.theory.compiled import lambdify
from fedbound.theory import symbols as S
from fedbound.theory.argtypes import UnitPoints
from fedbound.theory.audit_report import ClaimReport
from fedbound.theory.certify.trace import is_traced, substitute

#: what a claim is: the paper's own statement, or a check fedbound constructs
KINDS = ("printed", "consistency")
#: what a claim tests (module doc)
TESTS = ("bound", "condition", "nonvacuous")
#: raw parameters along which a growing violation ratio means a wrong order (default ``scaling``)
ORDER_PARAMETERS = ("T", "R", "n", "N")


@dataclass(frozen=True)
class Param:
    """One sampled parameter: an interval, log-uniform (``log``) or uniform, optionally integer.

    ``domain`` is the whole range the parameter stands for, where a proof may go beyond the sampled
    interval (:mod:`fedbound.theory.certify`): by default the domain of the constant of that name
    for the claim's result, (0, 1] for a fraction (not a constant, sampled log-uniformly up to 1,
    such as gamma/cap), [0, 1] for a position sampled uniformly on [0, 1], and [low, high]
    otherwise."""

    name: str
    low: float
    high: float
    log: bool = True
    integer: bool = False
    domain: S.Domain | None = None

    def from_unit(self, z: UnitPoints) -> np.ndarray:
        """The parameter's values at unit coordinates ``z`` (0: ``low``, 1: ``high``)."""
        z = np.clip(z, 0.0, 1.0)
        if self.log:
            v = np.exp(math.log(self.low) + z * (math.log(self.high) - math.log(self.low)))
        else:
            v = self.low + z * (self.high - self.low)
        v = np.where(z == 0, self.low, np.where(z == 1, self.high, v))   # exact extremes
        return np.clip(np.round(v), self.low, self.high) if self.integer else np.clip(v, self.low, self.high)


def _identity(raw: dict) -> dict:
    return raw


@dataclass(frozen=True)
class Sampler:
    """The domain of a claim: parameters and a ``build`` hook from raw parameters to constants."""

    params: tuple[Param, ...]
    build: Callable[[dict], dict] = _identity

    @property
    def dim(self) -> int:
        return len(self.params)

    def raw(self, z: UnitPoints) -> dict[str, np.ndarray]:
        """The raw parameters at unit-cube points ``z`` of shape (N, dim)."""
        return {p.name: p.from_unit(z[:, i]) for i, p in enumerate(self.params)}

    def constants(self, z: UnitPoints) -> dict[str, np.ndarray]:
        """Constants at unit-cube points ``z`` of shape (N, dim)."""
        return self.build(self.raw(z))

    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)


@dataclass(frozen=True)
class Regime:
    """The regime of use of a claim: ``description`` in words and ``test(values)``, a boolean array
    over the instances, where ``values`` holds the raw parameters and the constants (for example
    step sizes at least 1/10 of the cap, T >= 10: :meth:`at_least`)."""

    description: str
    test: Callable[[dict], np.ndarray]

    @classmethod
    def at_least(cls, **minimums: float) -> "Regime":
        """Every named value (raw parameter or constant) at least its minimum:
        ``Regime.at_least(**{"gamma/cap": 0.1, "T": 10})``."""
        require(minimums, "a regime needs at least one minimum")
        text = ", ".join(f"{name} >= {value:g}" for name, value in minimums.items())

        def test(values: dict) -> np.ndarray:
            return np.logical_and.reduce([np.asarray(values[nm]) >= v for nm, v in minimums.items()])

        return cls(text, test)


@dataclass(frozen=True)
class Identified:
    """What every kind of claim (:class:`Claim`, :class:`~fedbound.theory.order_claim.OrderClaim`,
    :class:`~fedbound.theory.expectation_claim.ExpectationClaim`) starts with: its ``id``, the
    registered result and variant it tests, the ``statement`` in words, the notes' ``flag`` and the
    ``sampler`` of its instances."""

    id: str
    result_id: str
    variant: str
    statement: str
    flag: str
    sampler: Sampler


@dataclass(frozen=True)
class Claim(Identified):
    """A claim ``lhs <= rhs`` (``<`` if ``strict``; logs of both sides if ``log``) of a paper.

    ``id`` names the claim ("thm3.A_l1"), ``result_id``/``variant`` the registered result it tests,
    ``statement`` says it in words, ``flag`` is the notes' flag it tests ("F18", or ""),
    ``sampler`` its domain, ``check(constants) -> (lhs, rhs[, excess])`` with arrays of shape (N,)
    or (N, len(parts)) (scalars broadcast), ``parts`` names the inequalities of a claim made of
    several, and ``rtol`` the rounding tolerance of a non-strict comparison.
    """

    check: Callable[[dict], tuple]
    parts: tuple[str, ...] = ()
    strict: bool = False
    log: bool = False
    rtol: NonNegative = 1e-12
    kind: str = "printed"
    conditions: tuple[str, ...] = ()
    tests: str = "bound"
    regime: Regime | None = None
    scaling: tuple[str, ...] | None = None
    corrected: str = ""

    def __post_init__(self):
        require(self.kind in KINDS, f"claim {self.id}: kind must be one of {', '.join(KINDS)}, "
                                    f"got {self.kind!r}")
        require(self.tests in TESTS, f"claim {self.id}: tests must be one of {', '.join(TESTS)}, "
                                     f"got {self.tests!r}")
        require(isinstance(self.conditions, tuple) and all(isinstance(c, str) for c in self.conditions),
                f"claim {self.id}: conditions must be a tuple of strings")
        require(self.regime is None or isinstance(self.regime, Regime),
                f"claim {self.id}: regime must be a Regime")
        unknown = [nm for nm in (self.scaling or ()) if nm not in self.sampler.names()]
        require(not unknown, f"claim {self.id}: scaling names {unknown}, which the sampler does not draw")

    @property
    def scaling_parameters(self) -> tuple[str, ...]:
        """The raw parameters along which a growing ratio means a wrong order."""
        if self.scaling is not None:
            return self.scaling
        return tuple(nm for nm in ORDER_PARAMETERS if nm in self.sampler.names())


class SelfAuditing(Protocol):
    """A claim that evaluates itself instead of being sampled by
    :func:`fedbound.theory.audit.audit_claim` (an
    :class:`~fedbound.theory.order_claim.OrderClaim`, an
    :class:`~fedbound.theory.expectation_claim.ExpectationClaim`, a PEP claim of
    :mod:`fedbound.pep.audit`): its ``id`` and ``audit(seed) -> ClaimReport``."""

    id: str

    def audit(self, seed: int = 0) -> ClaimReport: ...


# -- helpers for writing claims ----------------------------------------------------------------

def sign_parts(expr: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """(pos, neg) with expr = pos - neg, both sums of nonnegative terms: ``expr >= 0`` becomes the
    claim ``neg <= pos``. The constants must be declared nonnegative so that a monomial's sign is its
    numeric coefficient's; anything else is refused."""
    pos, neg = [], []
    for term in sp.Add.make_args(sp.expand(expr)):
        coeff, rest = term.as_coeff_Mul()
        if rest.is_nonnegative is not True:
            raise ValidationError(f"cannot decide the sign of {term}")
        (pos if coeff > 0 else neg).append(abs(coeff) * rest)
    return sp.Add(*pos), sp.Add(*neg)


class Compiled:
    """A sympy expression or Matrix compiled to a numpy function of a constants dict (broadcast to
    the shape of the dict's arrays; a Matrix with shape (..., rows, cols)). ``expr`` keeps the
    expression: called on traced numbers (:mod:`fedbound.theory.certify.trace`, the exact and
    symbolic evaluation of the certifier) it substitutes them into it instead."""

    def __init__(self, expr: sp.Expr | sp.MatrixBase):
        self.expr = expr
        if isinstance(expr, sp.MatrixBase):
            self._entries = [[Compiled(e) for e in expr.row(i)] for i in range(expr.rows)]
            return
        self._symbols = sorted(expr.free_symbols, key=S.short_name)
        self._names = [S.short_name(s) for s in self._symbols]
        self._fn = lambdify(self._symbols, expr, cse=True)

    def __call__(self, values: dict) -> np.ndarray:
        if isinstance(self.expr, sp.MatrixBase):
            return np.stack([np.stack([f(values) for f in row], -1) for row in self._entries], -2)
        if is_traced(*values.values()):
            shape = np.broadcast_shapes(*(np.shape(v) for v in values.values()))
            out = substitute(self.expr, {s: values[nm] for s, nm in zip(self._symbols, self._names)})
            return np.broadcast_to(out, shape)
        shape = np.broadcast_shapes(*(np.shape(v) for v in values.values()))
        out = self._fn(*(np.asarray(values[nm], dtype=float) for nm in self._names))
        return np.broadcast_to(np.asarray(out, dtype=float), shape)


def compile_expr(expr: sp.Expr | sp.MatrixBase) -> Compiled:
    """A numpy function of a constants dict for a sympy expression or Matrix, broadcast to the
    shape of the dict's arrays (matrices come back with shape (..., rows, cols)); see
    :class:`Compiled`."""
    return Compiled(expr)
