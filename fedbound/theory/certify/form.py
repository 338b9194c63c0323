r"""A sampled claim read exactly: its variables and domains, its exact value at a point, and its
symbolic form (issue 32).

A :class:`~fedbound.theory.claim.Claim` is sampled over raw parameters (:class:`Param`) that its
``build`` hook turns into the result's constants (gamma = fraction x cap, mu = (mu/L) L, ...); its
``check`` compares two sides. Both are numpy code, and :mod:`fedbound.theory.certify.trace` runs
that same code on exact or symbolic numbers:

* :func:`exact_point` evaluates the claim at one raw point in exact arithmetic: floats of the point
  read as the exact binary rationals they are, integers as integers, the build exact (a fraction 1
  of a cap is *on* the exact cap, not 1e-16 beyond it as fraction x cap may be in floats), both
  sides exact (rationals, or algebraic and transcendental numbers compared exactly), admissibility
  decided exactly (:mod:`~fedbound.theory.certify.admissible`);
* :func:`symbolic_form` traces it over symbols: each feasible path of its branches
  (:class:`Branch`) with its condition, the constants, the two sides of every part and what
  admissibility requires there, over the :func:`variables` of the claim.

The variables are the raw parameters, each with its sampled box and its *whole* domain
(:func:`variables`): what ``Param.domain`` declares, else the domain of the constant of that name
for the claim's result (L > 0, K an integer >= 1, ...; for a claim about a formula of a proof, a
result that is not registered, the domain of the shared or unambiguous constant of that name), else (0, 1] for a fraction sampled
log-uniformly up to 1 (gamma/cap, mu/L), [0, 1] for a position sampled uniformly on [0, 1], else
the box itself (``sampled``: then a proof is one on the box). A proof over the whole domains is a
proof on the claim's admissible domain ("proved"); over the boxes, "proved-on-box".
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import sympy as sp

from fedbound.theory import symbols as S
from fedbound.theory.certify import admissible
from fedbound.theory.certify import trace as T
from fedbound.theory.certify.evidence import exact_number
from fedbound.theory.claim import Claim
from fedbound.theory.registry import RESULTS


@dataclass(frozen=True)
class Variable:
    """A variable of a claim's form: ``name`` (the raw parameter's), its sympy ``symbol``, the
    interval [low, high] (open ends where said; infinite ends as +-oo), whether it is an integer and
    whether the interval is only the box the audit samples (``sampled``: no wider domain is known;
    a proof over it is a proof on the box)."""

    name: str
    symbol: sp.Symbol
    low: sp.Basic
    high: sp.Basic
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    sampled: bool = False

    def relations(self, value: sp.Basic | None = None) -> list:
        """The interval as relations on ``value`` (default: the symbol)."""
        x = self.symbol if value is None else value
        out = []
        if self.low.is_finite:
            out.append((sp.Gt if self.low_open else sp.Ge)(x, self.low, evaluate=False))
        if self.high.is_finite:
            out.append((sp.Lt if self.high_open else sp.Le)(x, self.high, evaluate=False))
        return out

    def contains(self, value: sp.Basic) -> bool:
        """Whether an exact number lies in the interval (an integer where said)."""
        if self.integer and not T.is_integer_number(value):
            return False
        return all(T.decide(r) for r in self.relations(value))

    def describe(self) -> str:
        left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
        kind = "integer " if self.integer else ""
        return f"{self.name}: {kind}{left}{_show(self.low)}, {_show(self.high)}{right}"


def _show(x: sp.Basic) -> str:
    if x in (sp.oo, -sp.oo):
        return "inf" if x == sp.oo else "-inf"
    return f"{float(x):g}" if not x.is_Integer else str(x)


def _rational(x: float) -> sp.Basic:
    return sp.Rational(x) if math.isfinite(x) else (sp.oo if x > 0 else -sp.oo)


def variables(claim: Claim) -> tuple[tuple[Variable, ...], tuple[Variable, ...]]:
    """(whole, box): the claim's raw parameters over their whole domains and over their sampled
    boxes (module doc); the same symbols, whose assumptions (real, positive, integer) hold on the
    whole domain."""
    result = RESULTS.get(claim.result_id) if claim.result_id in RESULTS else None
    seen = S.visible(result.scope) if result is not None else S.visible(None)
    whole, box = [], []
    for p in claim.sampler.params:
        sampled = False
        if p.domain is not None:
            d = p.domain
        elif p.name in seen and not seen[p.name].ndim:
            d = result.domain(p.name)[0] if result is not None else seen[p.name].domain
        elif p.log and p.low > 0 and p.high == 1:
            d = S.Domain(0.0, 1.0, low_open=True, high_open=False)
        elif not p.log and (p.low, p.high) == (0, 1):      # a position in the unit interval
            d = S.Domain(0.0, 1.0, low_open=False, high_open=False)
        else:
            d, sampled = S.Domain(p.low, p.high, low_open=False, high_open=False), True
        integer = p.integer or d.integer
        assumptions = {"real": True}
        if integer:
            assumptions["integer"] = True
        if d.low > 0 or (d.low == 0 and d.low_open):
            assumptions["positive"] = True
        elif d.low >= 0:
            assumptions["nonnegative"] = True
        symbol = sp.Dummy(p.name, **assumptions)      # unique: no other claim's symbol of that name
        whole.append(Variable(p.name, symbol, _rational(d.low), _rational(d.high), d.low_open,
                              d.high_open, integer, sampled))
        box.append(Variable(p.name, symbol, _rational(p.low), _rational(p.high), False, False,
                            p.integer, True))
    return tuple(whole), tuple(box)


# -- one point, exactly -------------------------------------------------------------------------

def _scalars(constants: Mapping) -> dict[str, sp.Basic]:
    """The scalar constants of a traced build (one-element arrays) as sympy values."""
    out = {}
    for k, v in constants.items():
        a = np.asarray(v, dtype=object)
        if a.size == 1:
            out[k] = T.to_sympy(a.reshape(-1)[0])
    return out


def _sides(claim: Claim, out: tuple, n: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The (lhs, rhs) a claim's check returned, as object arrays (n, parts) of sympy values."""
    parts = max(len(claim.parts), 1)

    def as_parts(a):
        a = T.to_expressions(a)
        return np.broadcast_to(a if a.ndim == 0 else a.reshape(n, -1), (n, parts))

    return as_parts(out[0]), as_parts(out[1])


@dataclass
class ExactPoint:
    """A claim evaluated exactly at a raw point (:func:`exact_point`): the raw values, the scalar
    constants of the build, both sides per part, whether every part is defined (``valid``), whether
    the result admits the constants (``broken``: the rules they break; ``in_domain``: the raw values
    in the variables' whole domains), which parts are violated, the ratio per part (lhs/rhs; for a
    log claim exp(lhs - rhs); oo where rhs <= 0 < lhs - rhs) and whether the point is in the claim's
    regime."""

    raw: dict[str, sp.Basic]
    constants: dict[str, sp.Basic]
    lhs: tuple
    rhs: tuple
    valid: bool
    broken: list[str]
    in_domain: bool
    violated: tuple[bool, ...]
    ratios: tuple
    inside: bool

    @property
    def admissible(self) -> bool:
        return self.valid and self.in_domain and not self.broken

    @property
    def counterexample(self) -> bool:
        return self.admissible and any(self.violated)

    def worst(self) -> int:
        """The part with the largest ratio among the violated ones (among all where none is)."""
        chosen = [i for i, v in enumerate(self.violated) if v] or list(range(len(self.ratios)))
        best = chosen[0]
        for i in chosen[1:]:
            if _greater(self.ratios[i], self.ratios[best]):
                best = i
        return best

    def to_dict(self, parts: tuple[str, ...]) -> dict:
        """The point for a certificate: raw values and constants as exact numbers, both sides,
        the ratio and the violated parts."""
        i = self.worst()
        names = list(parts) or [None]
        out = {"raw": {k: exact_number(v) for k, v in self.raw.items()},
               "constants": {k: exact_number(v) for k, v in self.constants.items()},
               "lhs": exact_number(self.lhs[i]), "rhs": exact_number(self.rhs[i]),
               "ratio": exact_number(self.ratios[i]), "admissible": self.admissible,
               "violated": [nm for nm, v in zip(names, self.violated) if v and nm] or any(self.violated)}
        if names[i]:
            out["part"] = names[i]
        if self.broken:
            out["broken"] = self.broken
        return out


_INFINITE = (sp.oo, -sp.oo)
#: digits of a log claim's ratio exp(lhs - rhs) (its sides and their comparison stay exact)
RATIO_DIGITS = 60


def _greater(a: sp.Basic, b: sp.Basic) -> bool:
    """Whether a > b, to order points by their ratios (which to report): an undecided comparison
    (two ratios that may be equal, one of them a root known by its equation) keeps b."""
    if a == b:
        return False
    if a in _INFINITE or b in _INFINITE:
        return a == sp.oo or b == -sp.oo
    try:
        return T.sign_of(a - b) > 0
    except T.Undecided:
        return False


def exact_point(claim: Claim, raw: Mapping[str, object], whole: tuple[Variable, ...] | None = None,
                seconds: float | None = None) -> ExactPoint:
    """The claim at the raw point ``raw`` (parameter name -> a float of the sampler or an exact
    number) in exact arithmetic (module doc), within ``seconds``. Raises
    :class:`~fedbound.theory.certify.trace.Untraceable` where the claim's code cannot be followed
    exactly (or not in time)."""
    values = {k: T.to_sympy(v) for k, v in raw.items()}
    whole = whole if whole is not None else variables(claim)[0]

    def run():
        arrays = {k: T.array([v]) for k, v in values.items()}
        constants = claim.sampler.build(dict(arrays))
        out = claim.check(constants)
        inside = True
        if claim.regime is not None:
            test = claim.regime.test({**arrays, **constants})
            inside = bool(np.all(np.asarray(test, dtype=bool)))
        return constants, out, inside

    with np.errstate(all="ignore"):
        constants, out, inside = T.exactly(run, seconds)
    lhs, rhs = _sides(claim, out)
    lhs, rhs = tuple(lhs[0]), tuple(rhs[0])
    scalars = _scalars(constants)
    valid = all(x not in (sp.nan, sp.zoo) for x in lhs + rhs)
    try:
        _, broken = admissible.check(claim.result_id, scalars)
    except T.Invalid:
        broken = ["a constant is undefined"]
    in_domain = all(v.contains(values[v.name]) for v in whole if v.name in values)
    violated, ratios = [], []
    for a, b in zip(lhs, rhs):
        if not valid:
            violated.append(False)
            ratios.append(sp.nan)
            continue
        s = _compare(a, b)
        violated.append(s >= 0 if claim.strict else s > 0)
        ratios.append(_ratio(a, b, s, claim.log))
    return ExactPoint(values, scalars, lhs, rhs, valid, broken, in_domain, tuple(violated),
                      tuple(ratios), inside)


def _compare(a: sp.Basic, b: sp.Basic) -> int:
    if a in _INFINITE or b in _INFINITE:
        if a == b:
            return 0
        return 1 if (a == sp.oo or b == -sp.oo) else -1
    return T.sign_of(a - b)


def _ratio(lhs: sp.Basic, rhs: sp.Basic, s: int, log: bool) -> sp.Basic:
    """The violation ratio of one part, as the audit defines it (module doc of
    :mod:`fedbound.theory.audit`), exactly."""
    if log:     # exp of the exact difference, to its guaranteed digits (exp(T log r) is a huge r^T)
        if lhs in _INFINITE or rhs in _INFINITE:
            return sp.oo if s > 0 else sp.Integer(0)
        return sp.exp(sp.N(lhs - rhs, RATIO_DIGITS))
    if rhs in _INFINITE:
        return sp.Integer(0) if rhs == sp.oo else sp.oo
    if T.sign_of(rhs) > 0:
        return lhs / rhs
    return sp.oo if s > 0 else sp.Integer(0)


# -- the claim as a formula -------------------------------------------------------------------------

@dataclass
class Branch:
    """One path of a traced claim: its ``condition`` (relations true on the path), the scalar
    ``constants``, both sides of every part, and the ``requirements`` of admissibility there
    (:mod:`~fedbound.theory.certify.admissible`, plus the bounds of the roundings' fresh integers)."""

    condition: tuple
    constants: dict[str, sp.Basic]
    lhs: tuple
    rhs: tuple
    requirements: list


@dataclass
class SymbolicForm:
    """A claim as a formula (:func:`symbolic_form`): over ``variables`` (whole domains) or ``box``,
    the claim holds iff no branch has an admissible point where a part is violated (lhs > rhs; >=
    when ``strict``; the sides are logs when ``log``). ``fresh``: the integers standing for roundings
    (symbol -> (rounded expression, half-width or None)). ``seconds``: the time the trace took."""

    claim: str
    parts: tuple[str, ...]
    variables: tuple[Variable, ...]
    box: tuple[Variable, ...]
    branches: list[Branch]
    fresh: dict
    strict: bool
    log: bool
    seconds: float = 0.0
    floats: list[str] = field(default_factory=list)

    @property
    def transcendental(self) -> bool:
        """Whether a side, condition or requirement has an exp, log or a symbolic power."""
        for b in self.branches:
            exprs = list(b.lhs) + list(b.rhs) + list(b.condition) + [
                r.relation if r.relation is not None else r.integer for r in b.requirements]
            if any(T._transcendental(e) for e in exprs):
                return True
        return False


class _Deadline:
    def __init__(self, seconds: float):
        self.end = time.perf_counter() + seconds

    def __call__(self, relation):
        if time.perf_counter() > self.end:
            raise T.Untraceable("the symbolic trace ran out of its time")
        if relation.count_ops() <= 40:
            evaluated = relation.func(*relation.args)
            if evaluated in (sp.true, sp.false):
                return bool(evaluated)
        return None


def symbolic_form(claim: Claim, *, max_paths: int = 32, seconds: float = 2.0) -> SymbolicForm:
    """The claim traced over symbols (module doc); :class:`~fedbound.theory.certify.trace.Untraceable`
    where its code cannot be followed, has more than ``max_paths`` paths or takes longer than
    ``seconds``."""
    started = time.perf_counter()
    whole, box = variables(claim)
    deadline = _Deadline(seconds)

    def run():
        arrays = {v.name: T.array([v.symbol]) for v in whole}
        with np.errstate(all="ignore"):
            constants = claim.sampler.build(dict(arrays))
            out = claim.check(constants)
        return constants, out

    paths, fresh = T.trace(run, prune=deadline, max_paths=max_paths, seconds=seconds)
    branches = []
    for path in paths:
        constants, out = path.outputs
        lhs, rhs = _sides(claim, out)
        scalars = _scalars(constants)
        reqs = admissible.requirements(claim.result_id, scalars)
        for symbol, (e, within) in fresh.items():
            if within is not None:
                reqs.append(admissible.Requirement("rounding", sp.Le(sp.Abs(symbol - e), within, evaluate=False)))
        branches.append(Branch(path.condition, scalars, tuple(lhs[0]), tuple(rhs[0]), reqs))
    floats = sorted({str(f) for b in branches for e in b.lhs + b.rhs for f in e.atoms(sp.Rational)
                     if f.q > 10 ** 6 and (f.q & (f.q - 1)) == 0})
    return SymbolicForm(claim.id, tuple(claim.parts), whole, box, branches, fresh, claim.strict,
                        claim.log, time.perf_counter() - started, floats)


__all__ = ["Variable", "variables", "ExactPoint", "exact_point", "Branch", "SymbolicForm",
           "symbolic_form"]
