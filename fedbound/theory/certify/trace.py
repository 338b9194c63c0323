r"""A claim's own numpy code run on exact or symbolic numbers (issue 32).

A claim's ``build`` and ``check`` (:mod:`fedbound.theory.claim`) are numpy code over arrays of
constants. Run on object arrays of :class:`Traced` numbers, the same code computes

* **exactly**, when each :class:`Traced` holds a sympy number (a rational, or an algebraic or
  transcendental number such as sqrt(2)/3 or log(3)): a float literal of the code is read as the
  exact binary rational it is, ``np.log`` becomes sympy's ``log``, and every comparison (``<``,
  ``np.where``, ``np.minimum``, ``np.argmax``, ``if``) is decided exactly (a difference that sympy
  cannot sign is :class:`Undecided`);
* **symbolically**, when they hold sympy expressions in the claim's parameters: every comparison
  whose truth depends on the parameters is a branch, and :func:`trace` runs the code once per
  feasible path (depth-first over the decisions, at most ``max_paths``), each path giving its
  condition and its outputs. The paths together are the claim as a formula (:class:`Path`), what
  the decision procedures and the interval method of :mod:`fedbound.theory.certify` read.

What the code cannot do exactly raises :class:`Untraceable` (loudly: never a silent float): converting
a traced number to float (``np.asarray(x, dtype=float)``, ``math.log``), ``int`` of a non-integer or
of a symbol (a loop whose length is a parameter), a scipy ufunc, ``np.isnan``. A rounding of a
transcendental expression of the parameters (``round(n^z)``: an integer drawn through a continuous
position) becomes a fresh integer variable (:attr:`Tracer.fresh`), a relaxation that keeps a proof
sound: the paths then hold for every integer the rounding could give and more.

Numeric helpers that cannot run on traced numbers give an exact twin with :func:`exact_twin`.
"""
from __future__ import annotations

import contextvars
import functools
import math
import operator
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np
import sympy as sp

from fedbound import validate
from fedbound.errors import FedboundError


class Untraceable(FedboundError):
    """The claim's code does something exact or symbolic evaluation cannot follow."""


class Undecided(Untraceable):
    """A comparison of two exact numbers that sympy cannot decide."""


class Invalid(FedboundError):
    """The point is invalid for the claim (a division by zero or nan reaches a comparison)."""


_TRACER: contextvars.ContextVar = contextvars.ContextVar("fedbound_tracer", default=None)
_BAD = (sp.zoo, sp.nan)
_INFINITE = (sp.oo, -sp.oo)


def to_sympy(x: object) -> sp.Basic:
    """A number of the code as sympy: a :class:`Traced` its expression, an int as an Integer, a
    float as the exact binary rational it is (inf as oo), a bool as 0 or 1."""
    if isinstance(x, Traced):
        return x.e
    if isinstance(x, (bool, np.bool_)):
        return sp.Integer(int(x))
    if isinstance(x, (int, np.integer)):
        return sp.Integer(int(x))
    if isinstance(x, (float, np.floating)):
        f = float(x)
        if math.isnan(f):
            raise Invalid("nan")
        if math.isinf(f):
            return sp.oo if f > 0 else -sp.oo
        return sp.Rational(f)
    if isinstance(x, sp.Basic):
        return x
    raise Untraceable(f"cannot read a {type(x).__name__} exactly")


_DEADLINE: contextvars.ContextVar = contextvars.ContextVar("fedbound_exact_deadline", default=None)


def _tick() -> None:
    """Out of time (:func:`exactly` with ``seconds``): Untraceable."""
    deadline = _DEADLINE.get()
    if deadline is not None and time.perf_counter() > deadline:
        raise Untraceable("the exact evaluation ran out of its time")


def _binary(op):
    def forward(self, other):
        _tick()
        return Traced(op(self.e, to_sympy(other)))

    def backward(self, other):
        _tick()
        return Traced(op(to_sympy(other), self.e))

    return forward, backward


def _truediv(a, b):
    if b == 0 and not a.free_symbols:
        return sp.zoo if a == 0 else sp.oo * sp.sign(a)
    return a / b


class Traced:
    """An exact or symbolic number inside numpy's object arrays (module doc)."""

    __slots__ = ("e",)
    #: how numeric helpers below the theory (which cannot import this module) recognize it
    __fedbound_traced__ = True

    def __init__(self, e: object):
        self.e = to_sympy(e)

    __add__, __radd__ = _binary(operator.add)
    __sub__, __rsub__ = _binary(operator.sub)
    __mul__, __rmul__ = _binary(operator.mul)
    __truediv__, __rtruediv__ = _binary(_truediv)
    __mod__, __rmod__ = _binary(sp.Mod)

    def __pow__(self, other):
        _tick()
        return Traced(_power(self.e, to_sympy(other)))

    def __rpow__(self, other):
        return Traced(_power(to_sympy(other), self.e))

    def __neg__(self):
        return Traced(-self.e)

    def __pos__(self):
        return self

    def __abs__(self):
        return Traced(_abs(self.e))

    def __floordiv__(self, other):
        return Traced(sp.floor(self.e / to_sympy(other)))

    # comparisons are decided (exact numbers) or branched on (symbols)
    def __lt__(self, other):
        return decide(sp.Lt(self.e, _comparable(other), evaluate=False))

    def __le__(self, other):
        return decide(sp.Le(self.e, _comparable(other), evaluate=False))

    def __gt__(self, other):
        return decide(sp.Gt(self.e, _comparable(other), evaluate=False))

    def __ge__(self, other):
        return decide(sp.Ge(self.e, _comparable(other), evaluate=False))

    def __eq__(self, other):
        return decide(sp.Eq(self.e, _comparable(other), evaluate=False))

    def __ne__(self, other):
        return decide(sp.Ne(self.e, _comparable(other), evaluate=False))

    __hash__ = None

    def __bool__(self):
        return decide(sp.Ne(self.e, 0, evaluate=False))

    def __float__(self):
        raise Untraceable("a traced number converted to float")

    def __int__(self):
        if self.e.is_Integer:
            return int(self.e)
        if self.e.free_symbols:
            raise Untraceable("int() of a symbolic number (the code loops over or indexes by a "
                              "parameter: a numeric procedure)")
        raise Untraceable("int() of a non-integer number")

    __index__ = __int__

    # what numpy's object loops call
    def log(self):
        return Traced(sp.log(self.e))

    def log1p(self):
        return Traced(sp.log(1 + self.e))

    def log10(self):
        return Traced(sp.log(self.e, 10))

    def log2(self):
        return Traced(sp.log(self.e, 2))

    def exp(self):
        return Traced(_exp(self.e))

    def expm1(self):
        return Traced(_exp(self.e) - 1)

    def sqrt(self):
        return Traced(sp.sqrt(self.e))

    def cbrt(self):
        return Traced(sp.real_root(self.e, 3))

    def fabs(self):
        return abs(self)

    def rint(self):
        return Traced(_rounded(self.e, "rint"))

    def __round__(self, ndigits=None):
        if ndigits not in (None, 0):
            raise Untraceable("round to digits")
        return Traced(_rounded(self.e, "rint"))

    def __floor__(self):
        return Traced(_rounded(self.e, "floor"))

    def __ceil__(self):
        return Traced(_rounded(self.e, "ceiling"))

    def __trunc__(self):
        return Traced(_rounded(self.e, "trunc"))

    def __repr__(self):
        return f"Traced({self.e})"


def _abs(e: sp.Basic) -> sp.Basic:
    """|e|: of a number as sympy evaluates it; of an expression of the parameters, e or -e where
    sympy's assumptions sign it, else kept unevaluated (sympy's own Abs would simplify the
    expression's signs first: seconds for an entry of a matrix with a min of caps)."""
    if not e.free_symbols:
        return sp.Abs(e)
    if e.is_extended_nonnegative:
        return e
    if e.is_extended_nonpositive:
        return -e
    return sp.Abs(e, evaluate=False)


def _exp(e: sp.Basic) -> sp.Basic:
    """exp of a number kept as it is (sympy would turn exp(T log r) into r^T, a huge rational)."""
    return _Kept(sp.exp(e, evaluate=False)) if not e.free_symbols and not e.is_Rational else sp.exp(e)


def _comparable(other) -> sp.Basic:
    e = to_sympy(other)
    if e in _BAD:
        raise Invalid("a comparison with an undefined number")
    return e


#: the largest root (denominator of a rational exponent) evaluated or used in a minimal polynomial
MAX_ROOT = 64
#: the largest integer power of an expression of the parameters a trace builds (beta^(2^60) would
#: make sympy's sign tests build a dense polynomial of degree 2^60: memory, not time)
MAX_SYMBOLIC_POWER = 4096
#: bits beyond which an exact power of a rational is kept unevaluated (compared through sympy's
#: evalf with its error bounds, not expanded into a huge rational)
MAX_POWER_BITS = 20_000


class _Kept(sp.Function):
    """An exact number sympy must not evaluate (1000^(p/2^52), r^(10^6), exp(T log r)): the
    expression it wraps, built unevaluated, is only ever evaluated numerically (evalf, with sympy's
    guaranteed digits); arithmetic treats it as an opaque real number (sympy would otherwise search
    a 2^52-th root or expand a million-fold power whenever it meets it in a sum or product)."""

    is_real = True

    @classmethod
    def eval(cls, e):
        return None

    def _sympystr(self, printer) -> str:
        """Printed as the number it wraps (a certificate's exact form, which sympify reads back)."""
        return printer._print(self.args[0])

    def _eval_evalf(self, prec):
        return self.args[0]._eval_evalf(prec)

    def _eval_is_extended_positive(self):
        value = self.args[0].evalf(SIGN_DIGITS)
        if value.is_Float and value._prec > 1 and value != 0:
            return bool(value > 0)
        return None

    def _eval_is_extended_negative(self):
        value = self.args[0].evalf(SIGN_DIGITS)
        if value.is_Float and value._prec > 1 and value != 0:
            return bool(value < 0)
        return None


def _power(base: sp.Basic, exponent: sp.Basic) -> sp.Basic:
    if base == 0 and exponent.is_number and exponent.is_negative:
        return sp.zoo
    if base.free_symbols:
        _refuse_huge_power(exponent)
    if base in (0, 1) or exponent == 0:
        return sp.Pow(base, exponent)
    if base.is_number and exponent.is_Rational and not exponent.is_Integer and exponent.q > MAX_ROOT:
        return _Kept(sp.Pow(base, exponent, evaluate=False))    # sympy would search a 2^52-th root
    if base.is_Rational and exponent.is_Integer and not base.is_Integer or (
            base.is_Integer and exponent.is_Integer and abs(base) > 1):
        bits = abs(int(exponent)) * max(int(base.p).bit_length(), int(base.q).bit_length())
        if bits > MAX_POWER_BITS:
            return _Kept(sp.Pow(base, exponent, evaluate=False))
    return sp.Pow(base, exponent)


def _refuse_huge_power(exponent: sp.Basic) -> None:
    """:class:`Untraceable` for an integer exponent above :data:`MAX_SYMBOLIC_POWER` of an
    expression of the parameters."""
    if exponent.is_Integer and abs(exponent) > MAX_SYMBOLIC_POWER:
        raise Untraceable(f"a power {exponent} of an expression of the parameters (sympy's "
                          f"assumptions would expand it into a polynomial of that degree)")


def _rounded(e: sp.Basic, how: str) -> sp.Basic:
    """floor / ceiling / nearest integer (half to even, numpy's rint) / truncation of ``e``; of a
    transcendental expression of the parameters inside a trace, a fresh integer (module doc)."""
    if e.is_Integer:
        return e
    if not e.free_symbols:
        if e in _BAD or e in _INFINITE:
            return e
        low, above = _floor(e)              # above: e - low as 0, 1/2 or a sign of e - low - 1/2
        if how == "floor" or (how == "trunc" and low >= 0):
            return low
        if how in ("ceiling", "trunc"):
            return low if above == 0 else low + 1
        if above == sp.Rational(1, 2):
            return low if low % 2 == 0 else low + 1
        return low + 1 if above > sp.Rational(1, 2) else low
    tracer = _TRACER.get()
    if tracer is None:
        raise Untraceable("rounding of a symbolic number outside a trace")
    if _transcendental(e):
        return tracer.fresh_integer(e)
    if how == "rint":   # half-way points: either neighbour, a relaxation
        return tracer.fresh_integer(e, within=sp.Rational(1, 2))
    return {"floor": sp.floor, "ceiling": sp.ceiling}.get(how, lambda x: tracer.fresh_integer(x, within=1))(e)


def is_integer_number(e: sp.Basic) -> bool:
    """Whether an exact number is an integer (decided exactly)."""
    if e.is_Rational:
        return bool(e.is_Integer)
    if e in _BAD or e in _INFINITE:
        return False
    return _floor(e)[1] == 0


def _floor(e: sp.Basic) -> tuple[sp.Integer, sp.Basic]:
    """(floor(e), e - floor(e)) of a real number: a rational exactly; any other from sympy's
    guaranteed digits (never combined into a new expression: an exact power such as 1000^(p/2^52)
    would be re-evaluated), the fraction then 1/4 or 3/4 for a side of 1/2 (enough to round),
    refused within 10^-40 of an integer or of a half-integer."""
    if e.is_Rational:
        low = sp.Integer(int(e.p) // int(e.q))
        return low, e - low
    value = e.evalf(SIGN_DIGITS)
    if not value.is_Float or value._prec <= 1:
        raise Undecided("cannot evaluate a number to round it")
    low = sp.floor(value)
    fraction = value - low
    margin = sp.Float(10, SIGN_DIGITS) ** -40 * max(1, abs(value))
    if fraction < margin or fraction > 1 - margin or abs(fraction - sp.Rational(1, 2)) < margin:
        raise Undecided("a number too close to an integer or a half-integer to round from its digits")
    return sp.Integer(int(low)), (sp.Rational(3, 4) if fraction > sp.Rational(1, 2) else sp.Rational(1, 4))


def _transcendental(e: sp.Basic) -> bool:
    return any(isinstance(a, (sp.exp, sp.log)) or (isinstance(a, sp.Pow) and a.exp.free_symbols)
               for a in sp.preorder_traversal(e))


# -- deciding comparisons ----------------------------------------------------------------------

def decide(relation: sp.Basic) -> bool:
    """The truth of a comparison: exactly for numbers, by the current :class:`Tracer` (a branch)
    for expressions of the parameters."""
    if relation in (sp.true, True):
        return True
    if relation in (sp.false, False):
        return False
    lhs, rhs = relation.lhs, relation.rhs
    _tick()
    if lhs in _BAD or rhs in _BAD:
        raise Invalid("a comparison with an undefined number")
    if not (lhs.free_symbols or rhs.free_symbols):
        return _decide_numbers(relation)
    tracer = _TRACER.get()
    if tracer is None:
        raise Untraceable(f"a branch on the symbolic condition {relation} outside a trace")
    return tracer.branch(relation)


#: digits of the evaluation that signs a difference sympy's assumptions cannot (sympy's evalf
#: tracks its error: a result with significant digits has the right sign)
SIGN_DIGITS = 60


def sign_of(d: sp.Basic) -> int:
    """The exact sign of a real number given by a sympy expression (-1, 0, 1); :class:`Undecided`
    when sympy cannot tell. A rational is signed directly; anything else by sympy's evalf, whose
    digits are guaranteed (a result with significant digits has the right sign), and an exact zero
    by its minimal polynomial (an algebraic number) or sympy's own ``is_zero``."""
    if d.is_Rational:
        return (int(d.p) > 0) - (int(d.p) < 0)
    if d in (sp.oo, -sp.oo):
        return 1 if d == sp.oo else -1
    if d in _BAD:
        raise Invalid("the sign of an undefined number")
    for working in (100, 2000):             # sympy's working precision (digits) for cancellations
        value = d.evalf(SIGN_DIGITS, maxn=working)
        if value in (sp.oo, -sp.oo):
            return 1 if value == sp.oo else -1
        if value.is_Float and value._prec > 1 and value != 0:
            return 1 if value > 0 else -1
    logs = _sign_of_logs(d)
    if logs is not None:
        return logs
    roots = [a.exp.q for a in sp.preorder_traversal(d) if isinstance(a, sp.Pow) and a.exp.is_Rational]
    if d.count_ops() <= 400 and max(roots, default=1) <= MAX_ROOT:
        if d.is_algebraic:
            x = sp.Dummy("x")
            if sp.minimal_polynomial(d, x) == x:
                return 0
        elif d.is_zero:
            return 0
    raise Undecided("cannot decide the sign of an exact difference (sympy can neither sign it nor "
                    "show it is zero)")


#: the largest total degree (sum of |k_i|) of the products :func:`_sign_of_logs` expands
MAX_LOG_DEGREE = 6


def _sign_of_logs(d: sp.Basic) -> int | None:
    """The sign of a sum of rational multiples of logarithms, sum_i c_i log x_i, where evalf finds
    no digit (the x_i within 10^-2000 of each other's product: 1 - r^(2^60) against 1 - r^(2^70)):
    with the c_i brought to integers k_i by their common denominator, it is the sign of
    prod_{k_i > 0} x_i^k_i - prod_{k_i < 0} x_i^-k_i, whose numerator, expanded, cancels exactly
    what evalf could not (1 - 1), and is signed again. None where ``d`` is not such a sum or an
    x_i is not positive."""
    if not d.is_Add or d.count_ops() > 400:
        return None
    terms = []
    for term in d.args:
        c, rest = term.as_coeff_Mul()
        if not (c.is_Rational and isinstance(rest, sp.log)):
            return None
        terms.append((c, rest.args[0]))
    scale = functools.reduce(math.lcm, (int(c.q) for c, _ in terms), 1)
    if sum(abs(int(c * scale)) for c, _ in terms) > MAX_LOG_DEGREE:
        return None
    above, below = sp.Integer(1), sp.Integer(1)
    for c, x in terms:
        if sign_of(x) <= 0:
            return None
        k = int(c * scale)
        above, below = (above * x ** k, below) if k > 0 else (above, below * x ** -k)
    numerator, denominator = sp.fraction(sp.together(above - below))
    return sign_of(sp.expand(numerator)) * sign_of(denominator)


def _decide_numbers(relation: sp.Basic) -> bool:
    lhs, rhs = relation.lhs, relation.rhs
    if lhs in _INFINITE or rhs in _INFINITE:
        if lhs == rhs:
            s = 0
        else:
            s = 1 if (lhs == sp.oo or rhs == -sp.oo) else -1
    else:
        s = sign_of(lhs - rhs)
    return {sp.Lt: s < 0, sp.Le: s <= 0, sp.Gt: s > 0, sp.Ge: s >= 0, sp.Eq: s == 0,
            sp.Ne: s != 0}[type(relation)]


# -- symbolic tracing ------------------------------------------------------------------------------

class PathLimit(Untraceable):
    """More feasible paths than the trace allows."""


@dataclass
class Path:
    """One path of a traced computation: its ``condition`` (relations, all true on the path) and
    its ``outputs`` (what the traced function returned, as sympy)."""

    condition: tuple
    outputs: object


class Tracer:
    """Decides the branches of one run of a traced function (:func:`trace`): the first
    ``len(prefix)`` as the prefix says, later ones True (each a new branch point). A relation
    implied by the path so far, or decided by ``prune`` (relation -> True / False / None, e.g. an
    interval test over the domain), is no branch. ``fresh``: the integers introduced for roundings
    (symbol -> (expression, half-width)), shared by every run of a trace."""

    def __init__(self, prefix: list[bool], prune: Callable | None, fresh: dict):
        self.prefix, self.prune, self.fresh = prefix, prune, fresh
        self.taken: list[tuple[sp.Basic, bool]] = []
        self.branches: list[int] = []
        self.decisions: list[bool] = []

    def branch(self, relation: sp.Basic) -> bool:
        for known, truth in self.taken:
            if known == relation:
                return truth
            if known == relation.negated:
                return not truth
        verdict = self.prune(relation) if self.prune is not None else None
        if verdict is not None:
            return verdict
        i = len(self.decisions)
        if i < len(self.prefix):
            truth = self.prefix[i]
        else:
            truth = True
            self.branches.append(i)
        self.decisions.append(truth)
        self.taken.append((relation, truth))
        return truth

    def fresh_integer(self, e: sp.Basic, within: sp.Basic | None = None) -> sp.Symbol:
        for symbol, (known, _) in self.fresh.items():
            if known == e:
                return symbol
        symbol = sp.Dummy(f"int{len(self.fresh)}", integer=True)
        self.fresh[symbol] = (e, within)
        return symbol

    def fresh_real(self, name: str) -> sp.Symbol:
        for symbol, (known, _) in self.fresh.items():
            if known == name:
                return symbol
        symbol = sp.Dummy(f"{name}{len(self.fresh)}", real=True)
        self.fresh[symbol] = (name, None)
        return symbol

    def assume(self, relation: sp.Basic) -> None:
        self.taken.append((relation, True))

    def condition(self) -> tuple:
        return tuple(r if t else r.negated for r, t in self.taken)


def trace(fn: Callable[[], object], *, prune: Callable | None = None, max_paths: int = 64,
          seconds: float | None = None) -> tuple[list[Path], dict]:
    """Every feasible path of ``fn()`` (a function of traced symbolic numbers, module doc), and
    the fresh integers of its roundings. :class:`PathLimit` beyond ``max_paths`` paths,
    :class:`Untraceable` beyond ``seconds``."""
    paths, fresh = [], {}
    stack: list[list[bool]] = [[]]
    deadline = _DEADLINE.set(None if seconds is None else time.perf_counter() + seconds)
    try:
        while stack:
            paths.append(_run_path(fn, stack, prune, fresh, len(paths), max_paths))
    finally:
        _DEADLINE.reset(deadline)
    return paths, fresh


def _run_path(fn, stack: list, prune, fresh: dict, done: int, max_paths: int) -> Path:
    """One run of a trace (:func:`trace`): the next prefix of decisions, and the branch points it
    opens pushed on the stack."""
    prefix = stack.pop()
    tracer = Tracer(prefix, prune, fresh)
    token = _TRACER.set(tracer)
    try:
        outputs = _followed(fn)
    finally:
        _TRACER.reset(token)
    if done + 1 + len(stack) + len(tracer.branches) > max_paths:
        raise PathLimit(f"more than {max_paths} paths")
    for i in reversed(tracer.branches):
        stack.append(tracer.decisions[:i] + [False])
    return Path(tracer.condition(), outputs)


def symbolic(*values) -> bool:
    """Whether any of ``values`` holds traced numbers that depend on symbols (inside a trace)."""
    for v in values:
        items = [v] if isinstance(v, Traced) else (
            list(v.reshape(-1)) if isinstance(v, np.ndarray) and v.dtype == object else [])
        if any(isinstance(x, Traced) and x.e.free_symbols for x in items):
            return True
    return False


def witness(name: str, conditions: Callable[[sp.Symbol], list]) -> Traced:
    """Inside a trace, a fresh real variable ``name`` assumed to satisfy ``conditions(symbol)`` (a
    list of sympy relations), for a value a numeric helper finds (the largest rho a condition admits)
    whose defining property is simpler than its closed form. The caller states why the paths then
    range over the same values (e.g. a condition that holds on an interval (0, largest])."""
    tracer = _TRACER.get()
    if tracer is None:
        raise Untraceable(f"a witness {name} outside a trace")
    symbol = tracer.fresh_real(name)
    for relation in conditions(symbol):
        tracer.assume(relation)
    return Traced(symbol)


def clipped_round(x: object, low: object, high: object) -> np.ndarray:
    """``np.clip(np.round(x), low, high)``: the nearest integers of ``x`` kept in [low, high]
    (integers). Inside a trace, an entry of ``x`` that depends on the parameters becomes a fresh
    integer m assumed low <= m <= high on every path: the values the rounding and the clip can
    give and no constraint more (a relaxation, sound for a proof; the clip's three cases are no
    branches). Numbers, exact or not, are rounded and clipped as numpy does."""
    if not is_traced(x, low, high):
        for name, v in (("x", x), ("low", low), ("high", high)):
            validate.real_array(name, v)
        return np.clip(np.round(x), low, high)
    tracer = _TRACER.get()
    if tracer is None or not symbolic(x):
        return np.clip(np.round(array(x)), array(low), array(high))
    xs, lows, highs = np.broadcast_arrays(*(np.asarray(v, dtype=object) for v in (x, low, high)))
    out = np.empty(xs.shape, dtype=object)
    for i in np.ndindex(xs.shape):
        e = to_sympy(xs[i])
        if not e.free_symbols:     # an exact rounding; the clip compared as numpy would (branches)
            out[i] = np.clip(np.round(array([e])), array([lows[i]]), array([highs[i]]))[0]
            continue
        low_i, high_i = to_sympy(lows[i]), to_sympy(highs[i])
        m = tracer.fresh_integer(("clipped round", e, low_i, high_i))
        tracer.assume(sp.Ge(m, low_i, evaluate=False))
        tracer.assume(sp.Le(m, high_i, evaluate=False))
        out[i] = Traced(m)
    return out


#: what numpy, scipy and Python raise where code meets a number it cannot handle (a traced one)
FOREIGN = (TypeError, AttributeError, ValueError, ZeroDivisionError, OverflowError, IndexError,
           RecursionError)


def _followed(fn: Callable[[], object]):
    """``fn()``, with what its code raises on traced numbers as :class:`Untraceable` (its own
    errors at an invalid point as :class:`Invalid`)."""
    try:
        return fn()
    except (Untraceable, Invalid):
        raise
    except FedboundError as exc:
        raise Invalid(f"the claim's code refused the point: {exc}") from exc
    except FOREIGN as exc:
        raise Untraceable(f"{type(exc).__name__}: {str(exc)[:200]}") from exc


def exactly(fn: Callable[[], object], seconds: float | None = None):
    """``fn()`` with no tracer: every comparison must be between numbers (decided exactly); within
    ``seconds`` (else :class:`Untraceable`: a recursion of a thousand steps over 53-bit rationals
    grows numbers of 50 000 digits)."""
    token = _TRACER.set(None)
    deadline = _DEADLINE.set(None if seconds is None else time.perf_counter() + seconds)
    try:
        return _followed(fn)
    finally:
        _TRACER.reset(token)
        _DEADLINE.reset(deadline)


# -- values in and out -------------------------------------------------------------------------

def array(values: object) -> np.ndarray:
    """An object array of :class:`Traced` numbers (a scalar as shape (1,), the batch the code
    expects)."""
    a = np.asarray(values, dtype=object)
    flat = [v if isinstance(v, Traced) else Traced(v) for v in a.reshape(-1)]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(a.shape if a.ndim else (1,))


def is_traced(*values) -> bool:
    """Whether any of ``values`` holds traced numbers (a :class:`Traced`, or an object array with
    one among its entries: ``np.where(r >= 1, 1.0, traced)`` mixes them with plain numbers)."""
    return any(isinstance(v, Traced) or (isinstance(v, np.ndarray) and v.dtype == object
                                          and any(isinstance(x, Traced) for x in v.flat))
               for v in values)


def float_below(value: sp.Basic) -> float:
    """The largest binary64 number <= the finite exact real ``value`` (its signs decided exactly by
    :func:`sign_of`): a step put on an exact cap that PEP coefficients, rationals, can carry."""
    x = float(sp.N(value, 30))
    while sign_of(sp.Rational(x) - value) > 0:
        x = math.nextafter(x, -math.inf)
    while sign_of(sp.Rational(math.nextafter(x, math.inf)) - value) <= 0:
        x = math.nextafter(x, math.inf)
    return x


def to_expressions(value: object) -> np.ndarray:
    """The outputs of traced code as an object array of sympy expressions (floats exact)."""
    a = np.asarray(value, dtype=object)
    out = np.empty(a.shape, dtype=object)
    for i, v in np.ndenumerate(a):
        out[i] = to_sympy(v)
    return out


def substitute(expr: sp.Basic, values: Mapping[sp.Symbol, object]) -> np.ndarray:
    """``expr`` (sympy) at traced values (object arrays, broadcast together): an object array of
    :class:`Traced`. Used by compiled expressions (:class:`fedbound.theory.claim.Compiled`) when
    the claim's code runs on traced numbers: at exact numbers evaluated bottom-up (min, max and
    Piecewise decided by exact comparisons, powers as :class:`Traced` keeps them), at symbols
    substituted without sympy's evaluation (which compares the arguments of a min pairwise through
    its assumptions, seconds on large caps)."""
    symbols = list(values)
    arrays = np.broadcast_arrays(*(np.asarray(values[s], dtype=object) for s in symbols)) if symbols \
        else []
    shape = arrays[0].shape if arrays else ()
    out = np.empty(shape, dtype=object)
    expr = _rationalized(expr)
    for i in np.ndindex(shape):
        mapping = {s: to_sympy(a[i]) for s, a in zip(symbols, arrays)}
        if any(v.free_symbols for v in mapping.values()):
            with sp.evaluate(False):
                e = expr.xreplace(mapping)
            for power in e.atoms(sp.Pow):
                if power.base.free_symbols:
                    _refuse_huge_power(power.exp)
            out[i] = Traced(e)
        else:
            out[i] = Traced(_value(expr, mapping, {}))
    return out


@functools.lru_cache(maxsize=512)
def _rationalized(expr: sp.Basic) -> sp.Basic:
    """``expr`` with its floats (a factor 1.00000000000001 typed into a theorem) as the exact binary
    rationals they are."""
    floats = expr.atoms(sp.Float)
    return expr.xreplace({f: sp.Rational(f) for f in floats}) if floats else expr


def _value(e: sp.Basic, env: Mapping, memo: dict) -> sp.Basic:
    """The exact value of ``e`` with its symbols at the numbers ``env`` (module doc of
    :func:`substitute`)."""
    if e in memo:
        return memo[e]
    _tick()
    if e in env:
        out = env[e]
    elif not e.args:
        out = e
    elif isinstance(e, (sp.Min, sp.Max)):
        out = _extreme(e.func, [_value(a, env, memo) for a in e.args])
    elif isinstance(e, sp.Piecewise):
        out = sp.nan
        for value, cond in e.args:
            if _value(cond, env, memo) in (sp.true, True):
                out = _value(value, env, memo)
                break
    elif isinstance(e, sp.Pow):
        out = _power(_value(e.base, env, memo), _value(e.exp, env, memo))
    elif isinstance(e, sp.exp):
        out = _exp(_value(e.args[0], env, memo))
    elif isinstance(e, sp.core.relational.Relational):
        out = sp.true if decide(e.func(_value(e.lhs, env, memo), _value(e.rhs, env, memo),
                                       evaluate=False)) else sp.false
    elif isinstance(e, (sp.And, sp.Or, sp.Not)):
        args = [_value(a, env, memo) in (sp.true, True) for a in e.args]
        truth = all(args) if isinstance(e, sp.And) else any(args) if isinstance(e, sp.Or) else not args[0]
        out = sp.true if truth else sp.false
    else:
        out = e.func(*(_value(a, env, memo) for a in e.args))
    memo[e] = out
    return out


def _extreme(func, args: list) -> sp.Basic:
    best = args[0]
    for x in args[1:]:
        if func is sp.Min and _decide_numbers(sp.Lt(x, best, evaluate=False)):
            best = x
        elif func is sp.Max and _decide_numbers(sp.Gt(x, best, evaluate=False)):
            best = x
    return best


@dataclass(frozen=True)
class exact_twin:
    """A numeric helper with an exact twin: ``numeric(*args)`` for numbers, ``exact(*args)`` when
    an argument holds traced numbers (used as ``helper = exact_twin(numeric, exact)``)."""

    numeric: Callable
    exact: Callable
    name: str = field(default="")

    def __call__(self, *args, **kwargs):
        if is_traced(*args, *kwargs.values()):
            return self.exact(*args, **kwargs)
        return self.numeric(*args, **kwargs)


__all__ = ["Traced", "Untraceable", "Undecided", "Invalid", "PathLimit", "Path", "Tracer", "trace",
           "exactly", "symbolic", "witness", "clipped_round", "decide", "sign_of", "is_integer_number", "array", "is_traced", "to_sympy", "to_expressions", "float_below",
           "substitute", "exact_twin"]
