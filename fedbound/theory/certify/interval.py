r"""The interval back end: rigorous branch and bound with python-flint's ``arb`` balls (issue 32).

For every branch of a :class:`~fedbound.theory.certify.form.SymbolicForm` and every part, with
g = lhs - rhs (a log claim's sides are logs already), :func:`prove` shows g <= 0 (g < 0 for a strict
claim) on the sampled box of the claim's variables:

* a box is evaluated in ball arithmetic (every operation rounded outward, :data:`PRECISION` bits):
  where the branch's condition or an admissibility relation is certainly false there, the box holds
  no point of the branch; where g's ball is certainly <= 0, the box is proved;
* **monotonicity**: where the ball of dg/dv (symbolic derivative) has one sign, the maximum of g
  over the box lies on one face, and the box is replaced by that face (v at its end): a tangency at
  the cap (g = 0 exactly at gamma = cap, what no ball can prove) is reached on a point;
* a box that is a point (every integer variable fixed, every real one of width zero) is decided
  exactly (sympy, :func:`~fedbound.theory.certify.trace.sign_of`; a spectral radius by the
  principal minors of :mod:`fedbound.theory.certify.spectral`);
* a spectral radius rho(A) of a matrix whose entries are certainly >= 0 on the box is enclosed by
  Perron-Frobenius monotonicity and Collatz-Wielandt bounds (:meth:`Balls._perron`);
* otherwise the box is split in two along its widest variable (in log scale for a positive variable
  spanning more than a decade; integers at an integer).

The result is ``proved-on-box``: the certificate names the box, the number of boxes, of faces taken
by monotonicity and of points decided exactly. Out of budget (time or boxes) or a point that violates
the claim: not proved (the certifier then looks no further here; a refutation needs an exact,
admissible point of the claim's own code).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import sympy as sp

from fedbound.errors import FedboundError
from fedbound.theory.certify import trace as T
from fedbound.theory.certify import spectral
from fedbound.theory.certify.spectral import PerronRoot
from fedbound.theory.certify.form import SymbolicForm

#: bits of the balls' midpoints
PRECISION = 128


class Unsupported(FedboundError):
    """A function the interval evaluation does not know."""


def _flint():
    import flint    # imported only when the audit certifies
    return flint


class Balls:
    """sympy -> arb balls at the box ``env`` (symbol -> ball); a cache per box. Spectral radii of
    matrices up to ``spectral_order`` (larger: :class:`Unsupported`)."""

    def __init__(self, env: dict, spectral_order: int = 6):
        self.flint = _flint()
        self.env = env
        self.spectral_order = spectral_order
        self.cache: dict = {}

    def __call__(self, e: sp.Basic):
        if e in self.cache:
            return self.cache[e]
        out = self._eval(e)
        self.cache[e] = out
        return out

    def _eval(self, e: sp.Basic):
        arb, fmpq = self.flint.arb, self.flint.fmpq
        if e in self.env:
            return self.env[e]
        if e.is_Integer:
            return arb(int(e))
        if e.is_Rational:
            return arb(fmpq(int(e.p), int(e.q)))
        if e is sp.pi:
            return arb.pi()
        if e is sp.E:
            return arb(1).exp()
        if isinstance(e, sp.Add):
            out = arb(0)
            for a in e.args:
                out = out + self(a)
            return out
        if isinstance(e, sp.Mul):
            out = arb(1)
            for a in e.args:
                out = out * self(a)
            return out
        if isinstance(e, sp.Pow):
            base, exponent = e.args
            if exponent.is_Integer:
                x, n = self(base), int(exponent)
                return x ** n if n >= 0 else 1 / (x ** (-n))
            if exponent == sp.Rational(1, 2):
                return self(base).sqrt()
            if exponent == -sp.Rational(1, 2):
                return self(base).rsqrt()
            return (self(exponent) * self(base).log()).exp()
        if isinstance(e, sp.exp):
            return self(e.args[0]).exp()
        if isinstance(e, sp.log):
            if len(e.args) != 1:
                raise Unsupported("log with a base")
            return self(e.args[0]).log()
        if isinstance(e, sp.Abs):
            return abs(self(e.args[0]))
        if isinstance(e, (sp.Min, sp.Max)):
            values = [self(a) for a in e.args]
            out = values[0]
            for v in values[1:]:
                out = out.min(v) if isinstance(e, sp.Min) else out.max(v)
            return out
        if isinstance(e, sp.floor):
            return self(e.args[0]).floor()
        if isinstance(e, sp.ceiling):
            return self(e.args[0]).ceil()
        if isinstance(e, PerronRoot):
            return self._perron(sp.Matrix(e.args[0]))
        if isinstance(e, sp.Piecewise):
            possible = []
            for value, cond in e.args:
                truth = self.truth(cond)
                if truth is False:
                    continue
                possible.append(self(value))
                if truth is True:
                    break
            if not possible:
                return arb.nan()
            out = possible[0]
            for v in possible[1:]:
                out = arb.union(out, v)
            return out
        if isinstance(e, sp.Symbol):
            raise Unsupported(f"the integer {e} of a rounding, which has no box")
        raise Unsupported(f"{type(e).__name__}")

    def _perron(self, M: sp.Matrix):
        """A ball holding rho(A) for every A whose entries lie in their balls, where every entry is
        certainly >= 0 (else an unknown ball, nan): by Perron-Frobenius monotonicity rho(A_lo) <=
        rho(A) <= rho(A_hi) for 0 <= A_lo <= A <= A_hi (Berman and Plemmons, ch. 2, Cor. 1.5), and
        by Collatz-Wielandt, for any x > 0, min_i (B x)_i / x_i <= rho(B) <= max_i (B x)_i / x_i
        (x: the Perron vector of B in floats, read exactly; the quotients in ball arithmetic)."""
        arb = self.flint.arb
        if M.rows > self.spectral_order:
            raise Unsupported(f"the spectral radius of a {M.rows} x {M.rows} matrix: beyond order "
                              f"{self.spectral_order} at this level (--prove)")
        entries = [[self(M[i, j]) for j in range(M.cols)] for i in range(M.rows)]
        if not all(b.is_finite() and b >= 0 for row in entries for b in row):
            return arb.nan()
        lo = [[arb(b.lower()) for b in row] for row in entries]
        hi = [[arb(b.upper()) for b in row] for row in entries]
        below = max(min(self._collatz_wielandt(lo)).lower(), arb(0).lower())    # rho >= 0
        above = max(self._collatz_wielandt(hi)).upper()
        return arb.union(arb(below), arb(above))

    def _collatz_wielandt(self, B: list) -> list:
        """The balls (B x)_i / x_i for x > 0 near B's Perron vector (where it has a zero entry,
        that of B + eps, a positive matrix: a reducible B still gets a positive x)."""
        fmpq, arb = self.flint.fmpq, self.flint.arb
        mid = np.array([[float(b.mid()) for b in row] for row in B])
        for eps in (0.0, 1e-9 * max(np.abs(mid).max(), 1e-300)):
            values, vectors = np.linalg.eig(mid + eps)
            x = np.abs(np.real(vectors[:, int(np.argmax(np.real(values)))]))
            if np.all(np.isfinite(x)) and x.min() > 1e-12 * x.max():
                break
        x = np.where(np.isfinite(x), x, 1.0)
        x = np.maximum(x, 1e-12 * max(x.max(), 1e-300))
        xs = [arb(fmpq(*float(v).as_integer_ratio())) for v in x]
        out = []
        for i, row in enumerate(B):
            total = arb(0)
            for b, xj in zip(row, xs):
                total += b * xj
            out.append(total / xs[i])
        return out

    def truth(self, r: sp.Basic) -> bool | None:
        """A relation on the box: True (everywhere), False (nowhere) or None (unknown)."""
        if r in (sp.true, True):
            return True
        if r in (sp.false, False):
            return False
        if isinstance(r, (sp.And, sp.Or)):
            parts = [self.truth(a) for a in r.args]
            if isinstance(r, sp.And):
                return False if False in parts else (True if all(p is True for p in parts) else None)
            return True if True in parts else (False if all(p is False for p in parts) else None)
        if isinstance(r, sp.Not):
            t = self.truth(r.args[0])
            return None if t is None else not t
        d = self(r.lhs) - self(r.rhs)
        if not d.is_finite():
            return None
        if isinstance(r, sp.Lt):
            return True if d < 0 else (False if d >= 0 else None)
        if isinstance(r, sp.Le):
            return True if d <= 0 else (False if d > 0 else None)
        if isinstance(r, sp.Gt):
            return True if d > 0 else (False if d <= 0 else None)
        if isinstance(r, sp.Ge):
            return True if d >= 0 else (False if d < 0 else None)
        if isinstance(r, sp.Eq):
            return False if (d > 0 or d < 0) else (True if d == 0 and d.is_exact() else None)
        if isinstance(r, sp.Ne):
            return True if (d > 0 or d < 0) else None
        raise Unsupported(type(r).__name__)


@dataclass
class Outcome:
    """What :func:`prove` found: ``proved``, the boxes it evaluated, the faces monotonicity took,
    the points decided exactly, the box (variable -> [low, high]), the seconds and whether a
    spectral radius was enclosed."""

    proved: bool
    boxes: int
    faces: int
    points: int
    box: dict
    seconds: float
    reason: str = ""
    spectral: bool = False

    def certificate(self) -> dict:
        return {"method": f"interval branch and bound (python-flint arb balls, {PRECISION}-bit "
                          "midpoints): every box's ball of lhs - rhs certainly <= 0, faces by "
                          "monotonicity (the sign of a derivative's ball), points decided exactly"
                          + ("; spectral radii enclosed by Perron-Frobenius monotonicity and "
                             "Collatz-Wielandt bounds" if self.spectral else ""),
                "box": self.box, "boxes": self.boxes, "faces": self.faces, "exact_points": self.points}


def _split(low: sp.Rational, high: sp.Rational, integer: bool) -> sp.Rational | None:
    if integer:
        if high - low < 1:
            return None
        return sp.floor((low + high) / 2)
    if low == high:
        return None
    if low > 0 and high / low > 10:
        mid = sp.Rational(math.sqrt(float(low) * float(high)))
        if low < mid < high:
            return mid
    return (low + high) / 2


def _width(low, high, integer: bool) -> float:
    if integer:
        return float(high - low)
    if low > 0 and high / low > 10:
        return math.log(float(high) / float(low))
    return float(high - low) / max(1.0, abs(float(high)))


def prove(form: SymbolicForm, *, seconds: float = 1.0, max_boxes: int = 10_000,
          spectral_order: int = 6) -> Outcome:
    """Branch and bound on ``form``'s box (module doc); spectral radii of matrices up to
    ``spectral_order`` (:meth:`Balls._perron`)."""
    flint = _flint()
    started = time.perf_counter()
    variables = [v for v in form.box]
    box0 = {v.symbol: (v.low, v.high) for v in variables}
    integer = {v.symbol: v.integer for v in variables}
    described = {v.name: [str(v.low), str(v.high)] + (["integer"] if v.integer else [])
                 for v in variables}
    counts = {"boxes": 0, "faces": 0, "points": 0}
    old = flint.ctx.prec
    flint.ctx.prec = PRECISION
    try:
        for branch in form.branches:
            filters = list(branch.condition) + [r.relation for r in branch.requirements
                                                if r.relation is not None]
            for a, b in zip(branch.lhs, branch.rhs):
                g = a - b
                reason = _bound(g, filters, box0, integer, form.strict, started + seconds, max_boxes,
                                counts, flint, spectral_order)
                if reason:
                    return Outcome(False, counts["boxes"], counts["faces"], counts["points"],
                                   described, time.perf_counter() - started, reason)
    finally:
        flint.ctx.prec = old
    return Outcome(True, counts["boxes"], counts["faces"], counts["points"], described,
                   time.perf_counter() - started,
                   spectral=any(spectral.involves(a - b) for br in form.branches for a, b in zip(br.lhs, br.rhs)))


def _holds_at(g: sp.Basic, strict: bool) -> bool:
    """g <= 0 (< 0 if strict) at a point, exactly; a spectral radius through the principal minors
    of tI - A (:func:`fedbound.theory.certify.spectral.relation`, numbers only)."""
    if not spectral.involves(g):
        s = T.sign_of(g)
        return (s < 0) if strict else (s <= 0)
    for rho in g.atoms(PerronRoot):
        if any(T.sign_of(e) < 0 for e in rho.args[0]):
            raise Unsupported("a spectral radius of a matrix with a negative entry")
    return _truth(spectral.relation(sp.Lt(g, 0) if strict else sp.Le(g, 0)))


def _truth(formula: sp.Basic) -> bool:
    """A formula of relations between numbers, decided exactly."""
    if isinstance(formula, sp.And):
        return all(_truth(a) for a in formula.args)
    if isinstance(formula, sp.Or):
        return any(_truth(a) for a in formula.args)
    return T.decide(formula)


def _ball(flint, low, high):
    a = flint.arb(flint.fmpq(int(low.p), int(low.q)))
    if low == high:
        return a
    return flint.arb.union(a, flint.arb(flint.fmpq(int(high.p), int(high.q))))


def _bound(g, filters, box0, integer, strict, deadline, max_boxes, counts, flint, spectral_order) -> str:
    """'' when g <= 0 (< 0 if strict) wherever the filters hold on the box; else why not."""
    derivatives: dict = {}
    stack = [(box0, True)]
    while stack:
        box, filtered = stack.pop()
        counts["boxes"] += 1
        if counts["boxes"] > max_boxes:
            return "out of boxes"
        if time.perf_counter() > deadline:
            return "out of time"
        balls = Balls({s: _ball(flint, lo, hi) for s, (lo, hi) in box.items()}, spectral_order)
        if filtered and any(balls.truth(f) is False for f in filters):
            continue
        value = balls(g)
        if value.is_finite() and ((value < 0) if strict else (value <= 0)):
            continue
        if all(lo == hi for lo, hi in box.values()):
            counts["points"] += 1
            point = {s: lo for s, (lo, _) in box.items()}
            if filtered and not all(T.decide(f.xreplace(point)) for f in filters):
                continue
            if _holds_at(g.xreplace(point), strict):
                continue
            return "a point of the box violates the claim"
        faced = None
        for symbol, (lo, hi) in box.items():
            if lo == hi or integer[symbol] and hi - lo < 1:
                continue
            if symbol not in derivatives:     # none through a spectral radius (no closed form)
                derivatives[symbol] = None if spectral.involves(g) else sp.diff(g, symbol)
            if derivatives[symbol] is None:
                continue
            try:
                slope = balls(derivatives[symbol])
            except Unsupported:
                continue
            if slope.is_finite() and (slope >= 0 or slope <= 0):
                end = hi if slope >= 0 else lo
                faced = {**box, symbol: (end, end)}
                break
        if faced is not None:
            counts["faces"] += 1
            stack.append((faced, False))
            continue
        splittable = [(s, _width(lo, hi, integer[s])) for s, (lo, hi) in box.items()
                      if _split(lo, hi, integer[s]) is not None]
        if not splittable:
            return "a box that cannot be split or decided"
        symbol = max(splittable, key=lambda x: x[1])[0]
        lo, hi = box[symbol]
        mid = _split(lo, hi, integer[symbol])
        right_lo = mid + 1 if integer[symbol] else mid
        stack.append(({**box, symbol: (lo, mid)}, filtered))
        stack.append(({**box, symbol: (right_lo, hi)}, filtered))
    return ""


__all__ = ["Unsupported", "Balls", "Outcome", "prove", "PRECISION"]
