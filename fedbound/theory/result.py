"""A result of a paper as one executable object.

A :class:`Result` holds an id (``"sdgt.thm3"``), the statement in words, provenance (seed file,
equation, lines), assumptions, the constants it uses, its known issues (the flags of the paper
notes), and one or more :class:`Variant`. A variant is what a formula *is*: ``"printed"`` is the paper
as printed, ``"rederived"`` is re-derived from the paper's own lemmas where the notes show the printed
constant is wrong (other names, e.g. ``"main"``/``"appendix"``, where the paper itself prints two
forms). Every variant carries sympy expressions, the single source of truth:

* ``bound``: the right-hand side of the result (``None`` for pure step-size statements);
* ``conditions``: step-size conditions ``gamma <= cap`` (or ``<``), each a :class:`StepCondition`;
* ``extras``: further named expressions (witness step sizes, the D coefficients, the matrix A, ...),
  scalars or :class:`sympy.Matrix`;
* ``derived``: an optional numeric post-processing of the evaluated expressions (e.g. the norm of
  ``(I - A)^{-1} b``), for quantities that have no useful closed form.

Expressions are compiled once with :func:`sympy.lambdify` to numpy and evaluated vectorized over
arrays of constants (numpy broadcasting): see :meth:`Result.evaluate`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np
import sympy as sp

from fedbound.errors import UnknownNameError, ValidationError
from fedbound.theory import symbols as S


@dataclass(frozen=True)
class Provenance:
    """Where a result is printed: seed file, equation label and line range of the seed text."""

    seed: str
    equation: str
    lines: str

    def __str__(self) -> str:
        return f"{self.seed} {self.equation} [L{self.lines}]"


@dataclass(frozen=True)
class Flag:
    """A known issue of a result, as flagged in the paper notes (F1, F2, ...)."""

    id: str
    text: str


@dataclass(frozen=True)
class StepCondition:
    """The step-size condition ``gamma <= cap`` (``gamma < cap`` when ``strict``)."""

    name: str
    cap: sp.Expr
    strict: bool = False
    source: str = ""

    def __str__(self) -> str:
        return f"{S.gamma} {'<' if self.strict else '<='} {self.cap}"


@dataclass
class Variant:
    """One version of a result's formulas (see the module docstring)."""

    name: str
    description: str
    bound: sp.Expr | None = None
    conditions: tuple[StepCondition, ...] = ()
    extras: Mapping[str, sp.Expr | sp.Matrix] = field(default_factory=dict)
    derived: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]] | None = None
    _compiled: dict = field(default_factory=dict, repr=False, compare=False)

    def expressions(self) -> dict[str, sp.Expr | sp.Matrix]:
        """All named expressions of the variant: bound, condition caps, extras."""
        out: dict[str, sp.Expr | sp.Matrix] = {}
        if self.bound is not None:
            out["bound"] = self.bound
        for c in self.conditions:
            out[f"cap:{c.name}"] = c.cap
        out.update(self.extras)
        if self.bound is not None:
            out.update({f"term:{i}": t for i, t in enumerate(sp.Add.make_args(self.bound))})
        return out

    def constants(self) -> list[str]:
        """Names of the constants the variant's expressions depend on, sorted."""
        free: set[sp.Symbol] = set()
        for e in self.expressions().values():
            free |= e.free_symbols
        return sorted(S.name_of(s) for s in free)

    def compiled(self, key: str) -> tuple[Callable, list[str]]:
        """The lambdified numpy function of expression ``key`` and its argument names (cached)."""
        if key not in self._compiled:
            expr = self.expressions()[key]
            names = sorted(S.name_of(s) for s in expr.free_symbols)
            args = [S.constant(nm).symbol for nm in names]
            # a Matrix as nested lists: numpy.array() of entries with different shapes (a constant
            # entry, or constants broadcast against each other) fails; _stack_matrix broadcasts them
            target = expr.tolist() if isinstance(expr, sp.MatrixBase) else expr
            self._compiled[key] = (sp.lambdify(args, target, modules="numpy", cse=True), names)
        return self._compiled[key]


@dataclass
class Evaluation:
    """Numbers of one variant at given constants (arrays broadcast together)."""

    result_id: str
    variant: str
    values: dict[str, np.ndarray]
    bound: np.ndarray | None
    caps: dict[str, np.ndarray]
    conditions_hold: dict[str, np.ndarray]
    extras: dict[str, np.ndarray]
    terms: dict[str, np.ndarray]

    @property
    def all_conditions_hold(self) -> np.ndarray | bool:
        held = list(self.conditions_hold.values())
        return np.logical_and.reduce(held) if held else True


class Result:
    """One result of a paper: statement, provenance, variants (see the module docstring)."""

    def __init__(self, id: str, title: str, statement: str, provenance: Provenance,
                 assumptions: tuple[str, ...], variants: list[Variant], lhs: str = "",
                 known_issues: tuple[Flag, ...] = (), default_variant: str | None = None):
        if not variants:
            raise ValueError(f"{id}: a result needs at least one variant")
        self.id = id
        self.title = title
        self.statement = statement
        self.provenance = provenance
        self.assumptions = assumptions
        self.lhs = lhs
        self.known_issues = known_issues
        self.variants: dict[str, Variant] = {v.name: v for v in variants}
        self.default_variant = default_variant or variants[0].name

    # -- look-up ---------------------------------------------------------------------------
    def variant(self, name: str | None = None) -> Variant:
        name = name or self.default_variant
        try:
            return self.variants[name]
        except KeyError:
            raise UnknownNameError(
                f"{self.id} has no variant {name!r}; variants: {', '.join(self.variants)}") from None

    def constants(self, variant: str | None = None) -> list[str]:
        return self.variant(variant).constants()

    def __repr__(self) -> str:
        return f"Result({self.id!r}, variants={list(self.variants)})"

    # -- numeric evaluation ------------------------------------------------------------------
    def _values(self, variant: Variant, constants: Mapping[str, object], needed: list[str]) -> dict:
        missing = [nm for nm in needed if nm not in constants]
        if missing:
            raise ValidationError(
                f"{self.id} ({variant.name}) needs constant(s) {', '.join(missing)}; "
                f"it uses {', '.join(variant.constants())}")
        values = {nm: np.asarray(constants[nm], dtype=float) for nm in needed}
        S.check_values(values)
        return values

    def _call(self, variant: Variant, key: str, values: Mapping[str, np.ndarray]) -> np.ndarray:
        fn, names = variant.compiled(key)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = fn(*(values[nm] for nm in names))
        if isinstance(variant.expressions()[key], sp.MatrixBase):
            return _stack_matrix(out, values)
        return np.asarray(out, dtype=float) + np.zeros(np.broadcast_shapes(
            *(np.shape(v) for v in values.values())) if values else ())

    def evaluate(self, variant: str | None = None, **constants) -> Evaluation:
        """Evaluate bound, step-size caps, condition checks, extras and the bound's terms.

        Constants are scalars or numpy arrays (broadcast together). ``gamma`` is only needed when an
        expression depends on it; condition checks are reported when ``gamma`` is given.
        """
        v = self.variant(variant)
        needed = v.constants()
        if "gamma" in constants and "gamma" not in needed and v.conditions:
            needed = sorted(set(needed) | {"gamma"})
        values = self._values(v, constants, needed)
        bound = self._call(v, "bound", values) if v.bound is not None else None
        caps = {c.name: self._call(v, f"cap:{c.name}", values) for c in v.conditions}
        hold = {}
        if "gamma" in values:
            g = values["gamma"]
            hold = {c.name: (g < caps[c.name]) if c.strict else (g <= caps[c.name])
                    for c in v.conditions}
        extras = {k: self._call(v, k, values) for k in v.extras}
        if v.derived is not None:
            extras.update(v.derived({**values, **extras}))
            if "bound" in extras:
                bound = extras.pop("bound")
        terms = {}
        if v.bound is not None:
            for i, term in enumerate(sp.Add.make_args(v.bound)):
                terms[sp.sstr(term)] = self._call(v, f"term:{i}", values)
        return Evaluation(self.id, v.name, values, bound, caps, hold, extras, terms)

    def bound(self, variant: str | None = None, **constants) -> np.ndarray:
        """Only the bound (fast path: one compiled call, no terms or conditions)."""
        v = self.variant(variant)
        if v.derived is not None:
            return self.evaluate(variant, **constants).bound
        if v.bound is None:
            raise ValidationError(f"{self.id} ({v.name}) states no bound, only conditions")
        fn, names = v.compiled("bound")
        values = self._values(v, constants, names)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.asarray(fn(*(values[nm] for nm in names)), dtype=float)

    def max_step(self, variant: str | None = None, **constants) -> tuple[np.ndarray, np.ndarray]:
        """The largest gamma satisfying every condition, and the name of the binding condition.

        Strict conditions ``gamma < cap`` have no maximum; the supremum ``cap`` is returned and the
        binding name is marked with ``(strict)``.
        """
        v = self.variant(variant)
        if not v.conditions:
            raise ValidationError(f"{self.id} ({v.name}) has no step-size condition")
        needed = sorted({nm for c in v.conditions for nm in
                         (S.name_of(s) for s in c.cap.free_symbols)} - {"gamma"})
        values = self._values(v, constants, needed)
        caps = np.stack(np.broadcast_arrays(
            *(self._call(v, f"cap:{c.name}", values) for c in v.conditions)))
        which = np.argmin(caps, axis=0)
        names = np.array([c.name + (" (strict)" if c.strict else "") for c in v.conditions])
        return np.min(caps, axis=0), names[which]

    def rounds_to_eps(self, eps: float, variant: str | None = None, t_max: float = 2.0 ** 60,
                      **constants) -> np.ndarray:
        """Smallest integer T >= 1 with bound(T) <= eps (``inf`` if none below ``t_max``).

        Assumes the bound is non-increasing in T (true of every rate bound here); vectorized
        exponential search followed by bisection on integers.
        """
        if "T" not in self.constants(variant):
            raise ValidationError(f"{self.id} does not depend on T; no rounds-to-epsilon")

        def f(t):
            return self.bound(variant, **{**constants, "T": t})

        shape = np.broadcast_shapes(*(np.shape(c) for c in constants.values()))
        lo = np.zeros(shape)  # bound(lo) > eps or lo = 0
        hi = np.ones(shape)
        done = f(hi) <= eps
        while not np.all(done) and np.max(hi) < t_max:
            lo = np.where(done, lo, hi)
            hi = np.where(done, hi, hi * 2)
            done = f(hi) <= eps
        result = np.where(done, hi, np.inf)
        hi = np.where(done, hi, lo + 1)
        while np.any(hi - lo > 1):
            mid = np.floor((lo + hi) / 2)
            mid = np.where(hi - lo > 1, np.maximum(mid, 1), hi)
            ok = f(mid) <= eps
            hi = np.where(ok & (hi - lo > 1), mid, hi)
            lo = np.where(~ok & (hi - lo > 1), mid, lo)
        return np.where(np.isfinite(result), hi, np.inf)

    # -- symbolic ----------------------------------------------------------------------------
    def rate_exponents(self, variant: str | None = None, in_symbol: str = "T") -> dict[str, object]:
        """For each additive term of the bound, its exponent in ``in_symbol`` (a sympy number),
        or ``"geometric"`` for terms like ``c**T``."""
        v = self.variant(variant)
        if v.bound is None:
            raise ValidationError(f"{self.id} ({v.name}) states no bound")
        t = S.constant(in_symbol).symbol
        out: dict[str, object] = {}
        for term in sp.Add.make_args(sp.expand(v.bound, power_base=False, log=False)):
            if any(t in a.free_symbols for a in term.atoms(sp.Pow) if a.exp.has(t)):
                out[sp.sstr(term)] = "geometric"
                continue
            coeff, exponent = term.as_coeff_exponent(t)
            if t in coeff.free_symbols:
                exponent = sp.limit(sp.log(term) / sp.log(t), t, sp.oo)
            out[sp.sstr(term)] = sp.nsimplify(exponent)
        return out

    def latex(self, variant: str | None = None) -> str:
        v = self.variant(variant)
        parts = []
        if v.bound is not None:
            parts.append(sp.latex(v.bound))
        relation = {True: "<", False: r"\le"}
        parts += [rf"\gamma {relation[c.strict]} {sp.latex(c.cap)}" for c in v.conditions]
        return r" \quad ".join(parts)

    def exact(self, key: str = "bound", variant: str | None = None, **constants) -> sp.Expr:
        """Exact sympy value of expression ``key`` at rational constants (for 1e-12 checks)."""
        v = self.variant(variant)
        expr = v.expressions()[key]
        subs = {S.constant(nm).symbol: _exact_number(val) for nm, val in constants.items()}
        return expr.subs(subs)


def _exact_number(value) -> sp.Expr:
    """A sympy value kept as is; a number as the exact Rational of its shortest round-trip decimal
    (0.1 -> 1/10), which converts back to the same float (and is ~1000x faster than nsimplify)."""
    if isinstance(value, sp.Basic):
        return value
    x = float(value)
    return sp.Rational(repr(x)) if np.isfinite(x) else sp.sympify(x)


def _stack_matrix(out, values) -> np.ndarray:
    """lambdify of a Matrix returns nested lists of arrays; broadcast to shape (..., r, c)."""
    rows = [[np.asarray(x, dtype=float) for x in row] for row in np.asarray(out, dtype=object)]
    shape = np.broadcast_shapes(*(x.shape for row in rows for x in row),
                                *(np.shape(v) for v in values.values()))
    return np.stack([np.stack([np.broadcast_to(x, shape) for x in row], axis=-1) for row in rows],
                    axis=-2)


def spectral_quantities(A: np.ndarray, b: np.ndarray,
                        gap: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """||A||_1 (max column sum), spectral radius and the fixed point (I - A)^{-1} b of ``v <= A v + b``.

    ``A`` has shape (..., r, r) and ``b`` shape (..., r) or (..., r, 1); batched over leading axes.
    ``gap`` is ``I - A`` when the caller can compute it without cancellation (from the symbolic
    ``I - A``: entries like mu K gamma/2 survive even where 1 - mu K gamma/2 rounds to 1). Also
    returned: ``l1_margin`` = 1 - ||A||_1 and ``radius_margin`` = 1 - rho(A).

    For A >= 0 (every recursion of the papers) I - A is a Z-matrix: rho(A) < 1 iff it is a
    nonsingular M-matrix, 1 - rho(A) is its smallest eigenvalue, found from the pivots of
    I - A - tI (:func:`_smallest_eigenvalue`), and the fixed point (for b >= 0) comes from
    elimination without pivoting (:func:`_eliminate`); both keep the relative accuracy that eigvals
    and LU lose when a
    tiny eigenvalue (mu K gamma/2) sits next to large ones (p/2). Other A use eigvals and LU. The
    fixed point bounds the recursion only when rho(A) < 1; where rho(A) >= 1 or A is not finite,
    ``fixed_point`` and ``floor`` = ||(I - A)^{-1} b||_1 are inf.
    """
    b = b[..., 0] if b.ndim == A.ndim else b
    r = A.shape[-1]
    shape = np.broadcast_shapes(b.shape[:-1], A.shape[:-2])
    eye = np.eye(r)
    gap = eye - A if gap is None else gap
    A, gap = (np.broadcast_to(m, shape + (r, r)).reshape(-1, r, r) for m in (A, gap))
    b = np.broadcast_to(b, shape + (r,)).reshape(-1, r)
    diag = np.diagonal(gap, axis1=-2, axis2=-1)
    l1_margin = np.min(np.where(diag <= 1, diag, 2 - diag) - np.sum(np.abs(A) * (1 - eye), axis=-2), axis=-1)
    finite = np.all(np.isfinite(gap) & np.isfinite(A), axis=(-2, -1))
    eig = np.full(A.shape[:-1], np.nan, dtype=complex)
    eig[finite] = np.linalg.eigvals(gap[finite])
    one_minus = np.abs(1 - eig)
    radius_margin = np.min((2 * eig.real - np.abs(eig) ** 2) / (1 + one_minus), axis=-1)
    radius = np.max(one_minus, axis=-1)
    nonneg = finite & np.all(A >= 0, axis=(-2, -1))
    radius_margin[nonneg] = _smallest_eigenvalue(gap[nonneg], np.min(eig[nonneg].real, axis=-1))
    radius[nonneg] = 1 - radius_margin[nonneg]
    contracts = finite & (radius_margin > 0)
    accurate = contracts & nonneg & np.all(b >= 0, axis=-1)
    fixed = np.full(b.shape, np.inf)
    fixed[accurate] = _m_solve(gap[accurate], b[accurate])
    rest = contracts & ~accurate
    try:
        fixed[rest] = np.linalg.solve(gap[rest], b[rest][..., None])[..., 0]
    except np.linalg.LinAlgError:  # an exactly singular I - A in the batch: solve one by one
        fixed[rest] = [_solve_or_inf(m, v) for m, v in zip(gap[rest], b[rest])]
    out = {"A_l1": 1 - l1_margin, "spectral_radius": radius, "l1_margin": l1_margin,
           "radius_margin": radius_margin, "floor": np.sum(np.abs(fixed), axis=-1)}
    out = {k: v.reshape(shape) for k, v in out.items()}
    out["fixed_point"] = fixed.reshape(shape + (r,))
    return out


def _ordered(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The coordinate order of decreasing diagonal and G permuted to it (rows and columns)."""
    order = np.argsort(-np.diagonal(G, axis1=-2, axis2=-1), axis=-1)
    return order, np.take_along_axis(np.take_along_axis(G, order[..., :, None], -2), order[..., None, :], -1)


def _eliminate(S: np.ndarray, t, x: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Gaussian elimination without pivoting of the (ordered) Z-matrices S - tI (..., r, r): the
    pivots (..., r) and, if ``x`` is given, (S - tI)^{-1} x. S - tI is a nonsingular M-matrix iff
    every pivot is > 0; each update then subtracts a product of two nonpositive numbers and, for
    x >= 0, the solve only adds nonnegative terms, so only pivots can cancel. Eliminating the
    largest diagonal first leaves the slow mode (the tiny pivot) last."""
    r = S.shape[-1]
    S = S - np.asarray(t, dtype=float)[..., None, None] * np.eye(r)
    x = None if x is None else x.astype(float)
    with np.errstate(all="ignore"):
        for k in range(r - 1):
            factor = S[..., k + 1:, k] / np.where(S[..., k, k] > 0, S[..., k, k], np.nan)[..., None]
            S[..., k + 1:, k + 1:] -= factor[..., :, None] * S[..., k, k + 1:][..., None, :]
            if x is not None:
                x[..., k + 1:] -= factor * x[..., k, None]
        if x is not None:
            for k in reversed(range(r)):
                x[..., k] = (x[..., k] - np.sum(S[..., k, k + 1:] * x[..., k + 1:], axis=-1)) / S[..., k, k]
    return np.diagonal(S, axis1=-2, axis2=-1), x


def _m_solve(G: np.ndarray, b: np.ndarray) -> np.ndarray:
    """G^{-1} b for nonsingular M-matrices G and b >= 0, by :func:`_eliminate` (accurate)."""
    order, S = _ordered(G)
    x = _eliminate(S, 0.0, np.take_along_axis(b, order, -1))[1]
    out = np.empty_like(x)
    np.put_along_axis(out, order, x, -1)
    return out


def _smallest_eigenvalue(G: np.ndarray, guess: np.ndarray, max_steps: int = 200) -> np.ndarray:
    """The smallest eigenvalue tau of the Z-matrices G (= 1 - rho(A) for G = I - A, A >= 0): the
    sup of t with all pivots of G - tI positive. From the eigvals ``guess``, the fixed point
    t <- t + (last pivot of G - tI) (fast when the slow mode is well separated, where eigvals is
    inaccurate), accepted where the pivot signs confirm it to relative 1e-12; elsewhere bisection
    between Gershgorin's column bound and min_j G_jj, to relative width 1e-15."""
    _, S = _ordered(G)

    def ok(t):
        return np.all(_eliminate(S, t)[0] > 0, axis=-1)

    t = guess.copy()
    for _ in range(8):
        pivots = _eliminate(S, t)[0]
        step = np.nan_to_num(np.where(np.all(pivots[..., :-1] > 0, axis=-1), pivots[..., -1], 0.0))
        t = t + step
        if np.all(np.abs(step) <= 1e-15 * np.abs(t)):
            break
    width = 1e-12 * np.abs(t) + 1e-300
    done = ok(t - width) & ~ok(t + width)
    diag = np.diagonal(G, axis1=-2, axis2=-1)
    lo = np.min(2 * diag - np.sum(np.abs(G), axis=-2), axis=-1) - 1e-300
    hi = np.min(diag, axis=-1)
    for _ in range(max_steps):
        open_ = ~done & (hi - lo > 1e-15 * np.maximum(np.abs(lo), np.abs(hi)))
        if not np.any(open_):
            break
        mid = (lo[open_] + hi[open_]) / 2
        good = np.all(_eliminate(S[open_], mid)[0] > 0, axis=-1)
        lo[open_] = np.where(good, mid, lo[open_])
        hi[open_] = np.where(good, hi[open_], mid)
    return np.where(done, t, (lo + hi) / 2)


def _solve_or_inf(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(matrix, vector)
    except np.linalg.LinAlgError:
        return np.full(vector.shape, np.inf)


__all__ = ["Provenance", "Flag", "StepCondition", "Variant", "Evaluation", "Result",
           "spectral_quantities"]
