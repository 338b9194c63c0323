r"""The anatomy of a bound: its additive terms, the dominant one and its share, and the bound's
sensitivity to each constant.

A variant's bound is a sum B = sum_i T_i (the arguments of sympy's ``Add``; a variant may name
groups of them, ``Variant(term_names={"Psi3/Psi6": ...})``, and an unnamed term is shown as its
formula). The share of term i is T_i / B; the dominant term is the one with the largest share. The
sensitivity (elasticity) of the bound to a constant c is

.. math:: S_c = \frac{\partial \log B}{\partial \log c} = \frac{c}{B}\,\frac{\partial B}{\partial c},

the percent change of B per percent change of c: near the given constants B scales like c^{S_c}
(S_c = -1: ten times larger c, ten times smaller bound). Read as a monomial in its constants,
log10 B = const + sum_c S_c log10 c, so S_c log10 c is the number of decades of B that constant c
accounts for at its value (:meth:`Anatomy.decades`: a constant near 1 accounts for none, however
steep; eps_s = 1e-3 with S = -1 accounts for 3), the first-order reading of which constants make
a bound large. The derivatives are sympy's, of the bound
itself, with one reading for integer constants (T, K, d, z): floor(x) and ceiling(x) keep their
values but take the slope 1 of x (:func:`step_slopes`; sympy's own derivative of them is 0 almost
everywhere and undefined at the whole numbers the constants take), so that K - ceil(K/z) moves
like K - K/z at z = 1 rather than not at all. A constant
that enters through a function sympy cannot differentiate is listed in ``undifferentiated``. The
derivatives are compiled once per variant (and kept in the on-disk cache under the bound's own
key, :mod:`fedbound.cache`) to one numpy
function of the whole gradient (:func:`fedbound.theory.compiled.lambdify`, common subexpressions
shared). At a constant on the boundary 0 of its domain (a momentum b = 0, v0 = 0), where a
derivative such as d(b^T)/dT = b^T log b is 0 inf in floating point, the derivatives are read as
their limit from inside the domain (that constant at the smallest positive float); S_c of a
constant at 0 is 0.

:meth:`fedbound.theory.evaluation.Evaluation.anatomy` builds it from an evaluation; ``fedbound
bound ID --terms`` prints it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np
import sympy as sp

from fedbound import cache
from fedbound.argtypes import Measured
from fedbound.display import box, clip, table
from fedbound.errors import ValidationError
from fedbound.jsonable import jsonable
from fedbound.readout import number
from fedbound.theory import symbols as S
from fedbound.theory.compiled import lambdify
from fedbound.theory.variant import Variant

#: compiled gradients by variant: id -> (variant, function, names, differentiated, undifferentiated)
_GRADIENTS: dict[int, tuple] = {}
#: the cache kind of which constants a bound's gradient differentiates
_KIND = "gradient"


@dataclass(frozen=True)
class Term:
    """One additive term (or named group of terms) of a bound: its ``label``, its formula
    (``expression``), its ``value`` and its ``share`` of the bound (value / bound)."""

    label: str
    expression: str
    value: np.ndarray
    share: np.ndarray

    def to_dict(self) -> dict:
        return jsonable({"label": self.label, "expression": self.expression, "value": self.value,
                         "share": self.share})


@dataclass(frozen=True)
class Anatomy:
    """The terms of ``result_id``'s bound (``variant``) at ``constants``, their sum ``bound``, and
    ``sensitivities`` d log B / d log c by constant (module doc). Values broadcast over the
    constants' arrays; :attr:`dominant` and :meth:`ranked` read the point where the bound is
    largest."""

    result_id: str
    variant: str
    bound: np.ndarray
    terms: tuple[Term, ...]
    sensitivities: dict[str, np.ndarray]
    constants: dict[str, np.ndarray] = field(repr=False)
    undifferentiated: tuple[str, ...] = ()

    @property
    def _point(self) -> int:
        return int(np.argmax(np.atleast_1d(self.bound)))

    def at(self, value: Measured) -> float:
        """``value`` (broadcast against the bound) at the point where the bound is largest."""
        return float(np.broadcast_to(np.asarray(value, dtype=float), np.shape(self.bound)).flat[self._point]) \
            if np.ndim(self.bound) else float(value)

    @property
    def dominant(self) -> Term:
        """The term with the largest share (at the point where the bound is largest)."""
        return max(self.terms, key=lambda t: self.at(t.share))

    def ranked(self) -> list[tuple[str, float]]:
        """(constant, sensitivity) pairs, largest |d log B / d log c| first (at the point where the
        bound is largest); constants the bound does not move with (0) last."""
        pairs = [(name, self.at(s)) for name, s in self.sensitivities.items()]
        return sorted(pairs, key=lambda p: -abs(p[1]))

    def decades(self) -> list[tuple[str, float]]:
        """(constant, S_c log10 c) pairs, largest |value| first (at the point where the bound is
        largest): the decades of B each constant accounts for (module doc); constants at 0 none."""
        pairs = []
        for name, s in self.sensitivities.items():
            c = self.at(self.constants[name])
            pairs.append((name, self.at(s) * float(np.log10(c)) if c > 0 else 0.0))
        return sorted(pairs, key=lambda p: -abs(p[1]))

    def describe(self, top: int = 6) -> str:
        """In words: the dominant term and its share, then the ``top`` sensitivities."""
        d = self.dominant
        moves = [f"{name} {number(s, 3)}" for name, s in self.ranked()[:top] if s != 0]
        decades = [f"{name} {number(x, 2)}" for name, x in self.decades()[:top] if abs(x) >= 0.05]
        return (f"dominant term {d.label} = {number(self.at(d.value), 3)}, "
                f"{number(100 * self.at(d.share), 3)}% of the bound {number(self.at(self.bound), 3)}; "
                f"d log B / d log c: {', '.join(moves) or 'none'}; decades of B (S log10 c): "
                f"{', '.join(decades) or 'none'}")

    def to_dict(self) -> dict:
        return jsonable({"result": self.result_id, "variant": self.variant, "bound": self.bound,
                         "terms": [t.to_dict() for t in self.terms], "dominant": self.dominant.label,
                         "dominant_share": self.at(self.dominant.share),
                         "sensitivities": self.sensitivities,
                         "ranked_sensitivities": [list(p) for p in self.ranked()],
                         "decades": [list(p) for p in self.decades()],
                         "undifferentiated": list(self.undifferentiated), "words": self.describe()})

    def __repr__(self) -> str:
        return clip(f"Anatomy({self.result_id} [{self.variant}]: {self.describe(3)})")

    def _repr_html_(self) -> str:
        """The terms by share (the dominant marked), then d log B / d log c and the decades of the
        bound each constant accounts for, largest first."""
        d, decades = self.dominant, dict(self.decades())
        terms = [[t.label + (" (dominant)" if t is d else ""), self.at(t.value), f"{number(100 * self.at(t.share), 3)}%"]
                 for t in sorted(self.terms, key=lambda t: -self.at(t.share))]
        sensitivities = [[name, s, decades[name], self.at(self.constants[name])] for name, s in self.ranked()]
        parts = [self.describe(), table(["term", "value", "share"], terms, caption="terms of the bound", digits=4),
                 table(["constant", "d log B / d log c", "decades of B (S log10 c)", "value"], sensitivities,
                       caption="sensitivities", digits=3)]
        if self.undifferentiated:
            parts.append(f"not differentiated: {', '.join(self.undifferentiated)}")
        where = "" if np.ndim(self.bound) == 0 else f" at the largest of {np.size(self.bound)} points"
        return box(f"anatomy of {self.result_id} [{self.variant}]", parts,
                   subtitle=f"bound {number(self.at(self.bound), 4)}{where}").text


def step_slopes(derivative: sp.Expr) -> sp.Expr:
    """A derivative taken by sympy with the derivatives of floor and ceiling set to 1, the slope of
    their argument (module doc), and a substitution into a number read as that number."""
    def steps(e) -> bool:
        return isinstance(e, sp.Derivative) and isinstance(e.expr, (sp.floor, sp.ceiling))

    ones = derivative.replace(steps, lambda e: sp.Integer(1))
    return ones.replace(lambda e: isinstance(e, sp.Subs) and e.expr.is_number, lambda e: e.expr)


def gradient(variant: Variant) -> tuple[Callable, list[str], list[str], tuple[str, ...]]:
    """The compiled derivatives of ``variant``'s bound by each of its constants: (function of the
    constants in ``names`` order returning the list of derivatives, the argument names, the
    names of the differentiated constants, the undifferentiated ones). Cached per variant."""
    entry = _GRADIENTS.get(id(variant))
    if entry is not None and entry[0] is variant:
        return entry[1:]
    if variant.bound is None:
        raise ValidationError(f"variant {variant.name!r} states no bound to take apart")
    symbols = sorted(variant.bound.free_symbols, key=S.short_name)
    key = cache.key_of(sp.srepr(variant.bound), "gradient")
    known = cache.read_json(_KIND, key)
    derivatives: list = []
    if isinstance(known, dict) and set(known) == {"done", "skipped"}:
        done, skipped = list(known["done"]), list(known["skipped"])
    else:
        done, skipped = [], []
        for sym in symbols:
            d = step_slopes(sp.diff(variant.bound, sym))
            (skipped if d.has(sp.Derivative, sp.Subs) else done).append(S.short_name(sym))
            derivatives.append(d)
        cache.store_json(_KIND, key, {"done": done, "skipped": skipped})

    def build() -> list:
        if not derivatives:
            derivatives.extend(step_slopes(sp.diff(variant.bound, s)) for s in symbols)
        return [d for d, s in zip(derivatives, symbols) if S.short_name(s) in done]

    fn = lambdify(symbols, build, cse=True, key=key)
    out = (fn, [S.short_name(s) for s in symbols], done, tuple(skipped))
    _GRADIENTS[id(variant)] = (variant, *out)
    return out


def term_groups(variant: Variant) -> list[tuple[str, list[sp.Expr]]]:
    """The additive terms of the bound grouped under the variant's ``term_names`` (a named group
    takes the bound's terms its expression consists of), the others one by one under their own
    formula; in the order of sympy's terms."""
    parts = list(sp.Add.make_args(variant.bound))
    owner: dict[int, str] = {}
    for label, expr in variant.term_names.items():
        mine = [i for i, p in enumerate(parts) if p in set(sp.Add.make_args(sp.sympify(expr)))]
        for i in mine:
            owner.setdefault(i, label)
    groups: dict[str, list[sp.Expr]] = {}
    for i, p in enumerate(parts):
        groups.setdefault(owner.get(i, sp.sstr(p)), []).append(p)
    return list(groups.items())


def anatomy(result_id: str, variant: Variant, values: Mapping[str, Measured], bound: Measured,
            terms: Mapping[str, Measured]) -> Anatomy:
    """The anatomy of ``variant``'s bound at the constants ``values`` (checked, by short name), from
    the evaluated ``bound`` and its evaluated ``terms`` (by formula, as
    :func:`fedbound.theory.evaluation.evaluate` gives them)."""
    if bound is None or variant.bound is None:
        raise ValidationError(f"{result_id} ({variant.name}) has no symbolic bound at these constants "
                              f"to take apart")
    B = np.asarray(bound, dtype=float)
    if not np.all(np.isfinite(B)) or np.any(B == 0):
        raise ValidationError(f"{result_id} ({variant.name}): the bound is {number(B.flat[0])} at some "
                              f"point; its log-sensitivities need a finite, nonzero bound")
    groups = []
    for label, parts in term_groups(variant):
        value = sum(np.asarray(terms[sp.sstr(p)], dtype=float) for p in parts)
        groups.append(Term(label, sp.sstr(sp.Add(*parts)), value, value / B))
    fn, names, done, skipped = gradient(variant)
    args = [np.asarray(values[nm], dtype=float) for nm in names]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        derivatives = fn(*args)
        if not all(np.all(np.isfinite(d)) for d in derivatives):    # the limit from inside (module doc)
            tiny = np.finfo(float).tiny
            derivatives = fn(*(np.where(a == 0, tiny, a) for a in args))
        sensitivities = {}
        for name, d in zip(done, derivatives):
            c = np.asarray(values[name], dtype=float)
            # c dB/dc is 0 at c = 0 even where dB/dc is not finite there (a c log c term)
            sensitivities[name] = np.where(c == 0, 0.0, c * np.asarray(d, dtype=float) / B) + 0 * B
    bad = [name for name, s in sensitivities.items() if not np.all(np.isfinite(s))]
    if bad:
        raise ValidationError(f"{result_id} ({variant.name}): d log B / d log {bad[0]} is not finite at "
                              f"{bad[0]} = {number(np.asarray(values[bad[0]]).flat[0])} (the bound is not "
                              f"differentiable there)")
    return Anatomy(result_id, variant.name, B, tuple(groups), sensitivities,
                   {nm: np.asarray(values[nm]) for nm in names}, skipped)


__all__ = ["Term", "Anatomy", "step_slopes", "gradient", "term_groups", "anatomy"]
