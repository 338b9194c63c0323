r"""The decision-procedure back end: a claim's symbolic form in z3's nonlinear real arithmetic
(issue 32).

For each branch of a :class:`~fedbound.theory.certify.form.SymbolicForm` the query is

    domains of the variables  and  the branch's condition  and  admissibility  and
    (some part violated: lhs > rhs, or lhs >= rhs for a strict claim),

and the claim holds on the domain iff every branch's query is unsatisfiable. What z3 cannot read
directly is eliminated by auxiliary variables with their defining constraints, local to the branch:
x^(-k) by r with r x = 1 (so x != 0: the claim is decided where its sides are defined), x^(p/q) by
y >= 0 with y^q = x^p (and x >= 0), |x|, min and max by a variable equal to one of their arguments
and on the right side of all of them (a case split the solver makes), a Piecewise by its cases,
floor and ceiling by an integer within 1, a comparison with a spectral radius by the signs of
principal minors (:mod:`~fedbound.theory.certify.spectral`, where it occurs positively).
Exponentials, logarithms and symbolic powers are out of reach (:class:`Unsupported`).

Integers are first relaxed to reals (nlsat, a complete procedure for real polynomial arithmetic: an
unsat answer holds for the integers too); a model of the relaxation, or of the query with integer
sorts, is a candidate counterexample only: the certifier re-checks it in exact arithmetic at the
claim's own code (:func:`fedbound.theory.certify.form.exact_point`), admissibility included.

The certificate of an unsat answer is the query itself (SMT-LIB 2, as z3 prints the assertions):
its SHA-256, its size, and the text where it is short; z3's version; the seconds.
"""
from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from fedbound.errors import FedboundError
from fedbound.theory.certify import spectral
from fedbound.theory.certify.form import SymbolicForm, Variable

#: the longest query text kept in a certificate (characters); longer ones by hash and size only
MAX_QUERY_CHARS = 20_000
#: integer powers written out as products up to this exponent
MAX_PRODUCT_POWER = 16


class Unsupported(FedboundError):
    """A function z3's real arithmetic cannot express (exp, log, a symbolic power, ...)."""


def _z3():
    import z3    # imported only when the audit certifies: 0.1 s and a large library
    return z3


def _name(text: str, used: set) -> str:
    base = re.sub(r"[^A-Za-z0-9_]", "_", text) or "v"
    name, i = base, 1
    while name in used:
        name, i = f"{base}_{i}", i + 1
    used.add(name)
    return name


class Translation:
    """sympy -> z3 for one branch: the variables (Real, or Int where ``integers``), the auxiliary
    variables with their constraints (``side``) and the defined-ness conditions."""

    def __init__(self, variables: tuple[Variable, ...], fresh: dict, integers: bool,
                 spectral_order: int = 6):
        self.z3 = _z3()
        self.ctx = self.z3.Context()     # one per query: its printed form does not depend on others
        self.side: list = []
        self.used: set = set()
        self.cache: dict = {}
        self.integers = integers
        self.spectral = False
        self.spectral_order = spectral_order
        self.vars = {}
        for v in variables:
            sort = self.z3.Int if (integers and v.integer) else self.z3.Real
            self.vars[v.symbol] = sort(_name(v.name, self.used), self.ctx)
        for symbol in fresh:
            sort = self.z3.Int if integers else self.z3.Real
            self.vars[symbol] = sort(_name(str(symbol), self.used), self.ctx)

    def aux(self, prefix: str, integer: bool = False):
        z3 = self.z3
        return (z3.Int if integer and self.integers else z3.Real)(_name(prefix, self.used), self.ctx)

    def domain(self, variables: tuple[Variable, ...]) -> list:
        return [self.formula(r) for v in variables for r in v.relations()]

    # -- terms -----------------------------------------------------------------------------------
    def term(self, e: sp.Basic):
        if e in self.cache:
            return self.cache[e]
        out = self._term(e)
        self.cache[e] = out
        return out

    def _term(self, e: sp.Basic):
        z3 = self.z3
        if e in self.vars:
            return self.vars[e]
        if isinstance(e, sp.Symbol):
            raise Unsupported(f"an unknown symbol {e}")
        if e.is_Integer:
            return z3.RealVal(int(e), self.ctx) if not self.integers else z3.IntVal(int(e), self.ctx)
        if e.is_Rational:
            return z3.Q(int(e.p), int(e.q), self.ctx)
        if e.is_infinite or e in (sp.nan, sp.zoo):
            raise Unsupported("an infinite value")
        if isinstance(e, sp.Add):
            return z3.Sum([self.term(a) for a in e.args])
        if isinstance(e, sp.Mul):
            return z3.Product([self.term(a) for a in e.args])
        if isinstance(e, sp.Pow):
            return self._power(e.base, e.exp)
        if isinstance(e, sp.Abs):
            x = self.term(e.args[0])
            a = self.aux("abs")
            self.side += [a >= x, a >= -x, z3.Or(a == x, a == -x)]
            return a
        if isinstance(e, (sp.Min, sp.Max)):
            args = [self.term(a) for a in e.args]
            m = self.aux("min" if isinstance(e, sp.Min) else "max")
            self.side += [(m <= a) if isinstance(e, sp.Min) else (m >= a) for a in args]
            self.side.append(z3.Or(*(m == a for a in args), self.ctx))
            return m
        if isinstance(e, sp.Piecewise):
            p = self.aux("piece")
            taken = []
            for value, cond in e.args:
                c = self.formula(cond, None)
                self.side.append(z3.Implies(z3.And(*taken, c, self.ctx), p == self.term(value)))
                taken.append(z3.Not(c))
            self.side.append(z3.Not(z3.And(*taken, self.ctx)))      # some case applies
            return p
        if isinstance(e, (sp.floor, sp.ceiling)):
            x = self.term(e.args[0])
            k = self.aux("floor" if isinstance(e, sp.floor) else "ceiling", integer=True)
            k_ = z3.ToReal(k) if (self.integers and k.is_int()) else k
            if isinstance(e, sp.floor):
                self.side += [k_ <= x, x < k_ + 1]
            else:
                self.side += [k_ - 1 < x, x <= k_]
            return k_
        raise Unsupported(f"{type(e).__name__} is not real polynomial arithmetic")

    def _power(self, base: sp.Basic, exponent: sp.Basic):
        z3 = self.z3
        if not exponent.is_Rational:
            raise Unsupported("a symbolic power")
        x = self.term(base)
        p, q = int(exponent.p), int(exponent.q)
        if q == 1:
            if p == 0:
                return z3.RealVal(1, self.ctx)
            if p < 0:
                r = self.aux("inverse")
                self.side.append(r * x == 1)
                return self._product(r, -p)
            return self._product(x, p)
        y = self.aux("root")
        self.side += [y >= 0, x >= 0]
        if p > 0:
            self.side.append(self._product(y, q) == self._product(x, p))
        else:
            self.side.append(self._product(y, q) * self._product(x, -p) == 1)
        return y

    def _product(self, x, n: int):
        if n <= MAX_PRODUCT_POWER:
            out = x
            for _ in range(n - 1):
                out = out * x
            return out
        return x ** n

    # -- formulas --------------------------------------------------------------------------------
    def formula(self, r: sp.Basic, positive: bool | None = True):
        """A sympy condition as a z3 formula. ``positive``: whether it occurs only positively in
        the query (asserted, or a violation asked; False under a negation, None both ways): a
        relation of a spectral radius is rewritten in principal minors only where it occurs
        positively (:mod:`~fedbound.theory.certify.spectral`)."""
        z3 = self.z3
        if r in (sp.true, True):
            return z3.BoolVal(True, self.ctx)
        if r in (sp.false, False):
            return z3.BoolVal(False, self.ctx)
        if isinstance(r, sp.And):
            return z3.And(*(self.formula(a, positive) for a in r.args), self.ctx)
        if isinstance(r, sp.Or):
            return z3.Or(*(self.formula(a, positive) for a in r.args), self.ctx)
        if isinstance(r, sp.Not):
            return z3.Not(self.formula(r.args[0], None if positive is None else not positive))
        ops = {sp.Lt: lambda a, b: a < b, sp.Le: lambda a, b: a <= b, sp.Gt: lambda a, b: a > b,
               sp.Ge: lambda a, b: a >= b, sp.Eq: lambda a, b: a == b, sp.Ne: lambda a, b: a != b}
        if type(r) in ops and spectral.involves(r):
            if positive is not True:
                raise Unsupported("a spectral radius in a negated or mixed condition")
            self.spectral = True
            try:
                return self.formula(spectral.relation(r, self.spectral_order))
            except spectral.Unsupported as exc:
                raise Unsupported(str(exc)) from None
        if type(r) in ops:
            return ops[type(r)](self.term(r.lhs), self.term(r.rhs))
        raise Unsupported(f"the condition {type(r).__name__}")


@dataclass
class Answer:
    """What z3 said about a form: ``status`` "unsat" (every branch), "sat" (a branch has a model),
    "unknown" (a timeout or an incomplete procedure); the ``model`` of a sat branch (variable name
    -> exact Fraction, algebraic numbers to 60 digits), the queries' ``text``, ``seconds`` and
    ``branches`` decided."""

    status: str
    model: dict | None
    text: str
    seconds: float
    branches: int
    spectral: bool = False

    @property
    def note(self) -> str:
        """What the queries rewrote, for a certificate's method line."""
        return (" (the spectral radius compared through the principal minors of tI - A, an "
                "M-matrix test)") if self.spectral else ""

    def certificate(self, domain: str, integers: bool) -> dict:
        raw = self.text.encode()
        z3 = _z3()
        out = {"method": "z3 nonlinear real arithmetic: each branch's query (domains, condition, "
                         "admissibility, a violated part) unsatisfiable" + self.note,
               "solver": f"z3 {z3.get_version_string()}", "result": self.status,
               "domain": domain, "branches": self.branches,
               "integers": "as integers" if integers else "relaxed to reals (a proof covers the integers)",
               "query_sha256": hashlib.sha256(raw).hexdigest(), "query_bytes": len(raw)}
        if len(self.text) <= MAX_QUERY_CHARS:
            out["query"] = self.text
        return out


def decide(form: SymbolicForm, *, box: bool = False, integers: bool = False,
           rlimit: int = 4_000_000, timeout: float = 10.0, spectral_order: int = 6) -> Answer:
    """Ask z3 whether some admissible point of ``form`` (over its whole domains, or its ``box``)
    violates the claim (module doc): each branch's query with at most ``rlimit`` of z3's resource
    units (deterministic), all of them within ``timeout`` seconds (a safety cap); spectral radii
    of matrices of order at most ``spectral_order`` (larger ones: :class:`Unsupported`).
    :class:`Unsupported` where the form is not real algebra."""
    z3 = _z3()
    started = time.perf_counter()
    variables = form.box if box else form.variables
    texts, model, status, decided, rewritten = [], None, "unsat", 0, False
    for branch in form.branches:
        remaining = timeout - (time.perf_counter() - started)
        if remaining <= 0:
            status = "unknown"
            break
        t = Translation(variables, form.fresh, integers, spectral_order)
        assertions = t.domain(variables)
        assertions += [t.formula(c) for c in branch.condition]
        for req in branch.requirements:
            if req.relation is not None:
                assertions.append(t.formula(req.relation))
            elif integers and not req.integer.is_integer:
                k = t.aux("integer", integer=True)
                assertions.append(z3.ToReal(k) == t.term(req.integer) if k.is_int() else k == t.term(req.integer))
        violated = [t.formula((sp.Ge if form.strict else sp.Gt)(a, b, evaluate=False))
                    for a, b in zip(branch.lhs, branch.rhs)]
        assertions.append(z3.Or(*violated, t.ctx))
        rewritten = rewritten or t.spectral
        plain = z3.Solver(ctx=t.ctx)
        plain.add(assertions + t.side)
        texts.append(plain.to_smt2())
        answer, solver = _solve(z3, t.ctx, assertions + t.side, rlimit, remaining, reals=not integers)
        if answer == z3.unsat:
            decided += 1
            continue
        if answer == z3.sat:
            status = "sat"
            m = solver.model()
            model = {v.name: _value(z3, m.eval(t.vars[v.symbol], model_completion=True))
                     for v in variables}
            model.update({str(s): _value(z3, m.eval(t.vars[s], model_completion=True)) for s in form.fresh})
            break
        status = "unknown"
        break
    return Answer(status, model, "".join(texts), time.perf_counter() - started, decided, rewritten)


def _solve(z3, ctx, assertions: list, rlimit: int, seconds: float, reals: bool):
    """(answer, solver): for real arithmetic nlsat after simplification first (it decides in
    milliseconds what the default QF_NRA strategy may not in seconds), then the QF_NRA strategy;
    with integers z3's default solver; each with ``rlimit`` resource units."""
    ms = max(1, int(seconds * 1000))
    tried = []
    if reals:
        tried.append(z3.Then("simplify", "purify-arith", "propagate-values", "nlsat", ctx=ctx).solver())
        tried.append(z3.SolverFor("QF_NRA", ctx=ctx))
    else:
        tried.append(z3.Solver(ctx=ctx))
    for solver in tried:
        solver.set("rlimit", rlimit)
        solver.set("timeout", ms)
        solver.add(assertions)
        try:
            answer = solver.check()
        except z3.Z3Exception:
            answer = z3.unknown
        if answer != z3.unknown:
            return answer, solver
    return answer, solver


def _value(z3, v) -> Fraction:
    if z3.is_int_value(v):
        return Fraction(v.as_long())
    if z3.is_rational_value(v):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    approx = v.approx(60)
    return Fraction(approx.numerator_as_long(), approx.denominator_as_long())


__all__ = ["Unsupported", "Translation", "Answer", "decide", "MAX_QUERY_CHARS"]
