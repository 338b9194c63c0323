"""Numbers of a result: its compiled expressions evaluated at given constants.

Expressions are compiled once with :func:`sympy.lambdify` to numpy
(:meth:`~fedbound.theory.variant.Variant.compiled`) and evaluated vectorized over arrays of
constants (numpy broadcasting): see :func:`evaluate`. Every value is checked first
(:meth:`~fedbound.theory.statement.Statement.check`); a NaN produced from valid constants (a formula
undefined there) is an error too, never an answer. :func:`exact` gives the exact sympy value
instead, at rational constants.

An :class:`Evaluation` reads its bound for a reader: :meth:`Evaluation.reading` against the
result's reference (a trivial bound or the initial value) and a measured value
(:mod:`fedbound.theory.reading`: vacuous, tight), :meth:`Evaluation.anatomy` as its additive terms,
the dominant one and the sensitivities d log B / d log c (:mod:`fedbound.theory.anatomy`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import sympy as sp

from fedbound import validate
from fedbound.argtypes import Measured
from fedbound.display import MAX_ENTRIES, Html, box, brief, details, fields, table
from fedbound.errors import FedboundError, UnknownNameError, ValidationError
from fedbound.theory import symbols as S
from fedbound.theory.anatomy import Anatomy, anatomy
from fedbound.theory.argtypes import ExtendedArray
from fedbound.theory.certify.trace import Untraceable, is_traced, substitute
from fedbound.theory.reading import Reading
from fedbound.theory.statement import Statement
from fedbound.theory.variant import RELATIONS, Variant


@dataclass
class Evaluation:
    """Numbers of one variant at given constants (arrays broadcast together). ``predicates`` maps
    each predicate to whether it holds; ``missing`` (partial evaluation) maps each expression that
    was not computed to the constants it lacked; ``statement`` is the result evaluated (for
    :meth:`reading` and :meth:`anatomy`). In a notebook it shows as :meth:`html`."""

    result_id: str
    variant: str
    values: dict[str, np.ndarray]
    bound: ExtendedArray | None
    caps: dict[str, ExtendedArray]
    conditions_hold: dict[str, np.ndarray]
    extras: dict[str, ExtendedArray]
    terms: dict[str, ExtendedArray]
    predicates: dict[str, np.ndarray] = field(default_factory=dict)
    missing: dict[str, list[str]] = field(default_factory=dict)
    statement: Statement | None = field(default=None, repr=False, compare=False)

    @property
    def all_conditions_hold(self) -> np.ndarray | bool:
        held = list(self.conditions_hold.values())
        return np.logical_and.reduce(held) if held else True

    @property
    def missing_constants(self) -> list[str]:
        """Every constant some uncomputed expression lacked, sorted."""
        return sorted({nm for names in self.missing.values() for nm in names})

    def _result(self) -> Statement:
        if self.statement is None or self.bound is None:
            raise ValidationError(f"{self.result_id} ({self.variant}): this evaluation holds no bound "
                                  f"to read (its constants: {', '.join(self.values) or 'none'})")
        return self.statement

    def reading(self, measured: ExtendedArray | None = None) -> Reading:
        """The bound against the result's reference (where it declares one and its constants are
        given) and against ``measured`` (the measured value of what the bound bounds, broadcast
        against the bound): vacuous, tight (:class:`~fedbound.theory.reading.Reading`)."""
        result = self._result()
        ref = result.reference
        value = result.reference_value(self.values)
        return Reading(np.asarray(self.bound, dtype=float), value,
                       ref.text if ref is not None else "", ref.kind if ref is not None else "trivial",
                       None if measured is None else np.asarray(measured, dtype=float))

    def anatomy(self) -> Anatomy:
        """The bound's additive terms, the dominant one and its share, and d log B / d log c for
        every constant, by symbolic differentiation (:mod:`fedbound.theory.anatomy`)."""
        result = self._result()
        return anatomy(self.result_id, result.variant(self.variant), self.values, self.bound, self.terms)

    # -- shown to a reader (:mod:`fedbound.display`) ---------------------------------------------
    def _reading_words(self) -> str:
        """The bound read against the result's reference in words ("" without a bound or a
        reference, or where the reference is undefined at these constants)."""
        if self.bound is None or self.statement is None or self.statement.reference is None:
            return ""
        try:
            reading = self.reading()
        except FedboundError:
            return ""
        return reading.words() if reading.reference is not None else ""

    def __repr__(self) -> str:
        named = {"conditions_hold": bool(np.all(self.all_conditions_hold))} if self.conditions_hold else {}
        named.update({"reading": words} if (words := self._reading_words()) else {})
        named.update({"missing": self.missing_constants} if self.missing else {})
        return brief("Evaluation", f"{self.result_id} [{self.variant}]", bound=self.bound, **named)

    def html(self, anatomy: bool = False) -> Html:
        """The evaluation as HTML: the bound with its reading against the result's reference
        (vacuous by a factor in powers of ten), each step condition's cap, the value of its
        variable and whether it holds, the predicates, the constants and extras (folded), what was
        not computed; with ``anatomy``, the bound's terms and sensitivities (:meth:`anatomy`)."""
        rows: list[tuple[str, object]] = []
        if self.bound is not None:
            rows.append(("bound", self.bound))
            rows += [("reading", words)] if (words := self._reading_words()) else []
        elif "bound" in self.missing:
            rows.append(("bound", f"not computed: needs {', '.join(self.missing['bound'])}"))
        parts: list[Html | str] = [fields(rows)] if rows else []
        v = self.statement.variant(self.variant) if self.statement is not None else None
        conditions = {c.name: c for c in v.conditions} if v is not None else {}
        if self.caps:
            parts.append(table(["step condition", "variable", "cap", "value", "holds"], [
                [name, f"{c.variable_name} {c.relation}" if c else "", cap,
                 self.values.get(c.variable_name) if c else None,
                 bool(np.all(self.conditions_hold[name])) if name in self.conditions_hold else None]
                for name, cap in self.caps.items() for c in [conditions.get(name)]]))
        if self.predicates:
            parts.append(table(["condition", "holds"],
                               [[name, bool(np.all(ok))] for name, ok in self.predicates.items()]))
        parts.append(details(f"{len(self.values)} constants",
                             [table(["constant", "value"], list(map(list, self.values.items())))]))
        small = [[k, x] for k, x in self.extras.items() if np.size(x) <= MAX_ENTRIES]
        if small:
            parts.append(details(f"{len(small)} extras", [table(["extra", "value"], small)]))
        if self.missing:
            parts.append(details(f"{len(self.missing)} expressions not computed", [table(
                ["expression", "lacks"], [[k, ", ".join(x)] for k, x in self.missing.items()])]))
        if anatomy:
            parts.append(Html(self.anatomy()._repr_html_()))
        elif self.bound is not None and v is not None and v.bound is not None:
            parts.append("its terms and sensitivities: .anatomy(), or .html(anatomy=True)")
        return box(f"{self.result_id} [{self.variant}]", parts, subtitle="evaluated")

    def _repr_html_(self) -> str:
        return self.html().text


def call(result: Statement, variant: Variant, key: str, values: Mapping[str, np.ndarray],
         guard: bool = True) -> np.ndarray:
    """Expression ``key`` at ``values``; with ``guard``, a NaN is an error (:func:`check_defined`)."""
    fn, names = variant.compiled(key)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = fn(*(values[nm] for nm in names))
    if isinstance(variant.expressions()[key], sp.MatrixBase):
        out = _stack_matrix(out, values)
    else:
        out = np.asarray(out, dtype=float) + np.zeros(np.broadcast_shapes(
            *(np.shape(v) for v in values.values())) if values else ())
    if guard:
        check_defined(result, variant, key, out, values)
    return out


def check_defined(result: Statement, variant: Variant, key: str, out: Measured,
                  values: Mapping[str, np.ndarray]) -> None:
    """A NaN from valid constants means the formula is undefined there: an error naming the
    expression and the first such point, never a silent NaN answer."""
    bad = np.isnan(out)
    if not np.any(bad):
        return
    batch = np.broadcast_shapes(*(np.shape(x) for x in values.values())) if values else ()
    index = tuple(np.argwhere(bad)[0][:len(batch)])
    point = [f"{nm}={float(np.broadcast_to(x, batch)[index]):g}" for nm, x in values.items()]
    raise ValidationError(f"{result.id} ({variant.name}): {key} is undefined (nan: 0/0, inf - inf "
                          f"or 0 inf, from a formula undefined there or overflow at extreme "
                          f"values) at {', '.join(point)}; assumptions: {'; '.join(result.assumptions)}")


def evaluate(result: Statement, /, variant: str | None = None, partial: bool = False,
             **constants) -> Evaluation:
    """Evaluate bound, step-size caps, condition checks, predicates, extras and the bound's terms.

    Constants are scalars or numpy arrays (broadcast together). A condition's variable (gamma,
    eta_l, ...) is only needed when an expression depends on it; the condition checks are
    reported when it is given. With ``partial=True`` every expression whose constants are
    given is computed and the others are listed in ``Evaluation.missing``.
    """
    v = result.variant(variant)
    validate.boolean("partial", partial)
    if is_traced(*constants.values()):
        return traced(result, v, constants)
    given = result.check(constants)
    needed = set(v.constants()) | {nm for nm in v.variables() if nm in given}
    if not partial:
        result.require(v, given, sorted(needed))
    values = {nm: given[nm] for nm in sorted(needed) if nm in given}
    computed: dict[str, np.ndarray] = {}
    missing: dict[str, list[str]] = {}
    for key in v.expressions():
        lack = [nm for nm in v.names_of(key) if nm not in values]
        if lack:
            missing[key] = lack
        else:
            computed[key] = call(result, v, key, values)
    caps = {c.name: computed[f"cap:{c.name}"] for c in v.conditions if f"cap:{c.name}" in computed}
    hold = {c.name: RELATIONS[c.relation](values[c.variable_name], caps[c.name])
            for c in v.conditions if c.name in caps and c.variable_name in values}
    predicates = {pr.name: RELATIONS[pr.relation](computed[f"pred:{pr.name}:lhs"],
                                                  computed[f"pred:{pr.name}:rhs"])
                  for pr in v.predicates
                  if f"pred:{pr.name}:lhs" in computed and f"pred:{pr.name}:rhs" in computed}
    extras = {k: computed[k] for k in v.extras if k in computed}
    bound_value = computed.get("bound")
    if v.derived is not None:
        needs = v.derived_needs or tuple(v.extras)
        if all(k in extras for k in needs):
            with np.errstate(all="ignore"):
                extras.update(v.derived({**values, **extras}))
            if "bound" in extras:
                bound_value = extras.pop("bound")
                missing.pop("bound", None)
        else:
            missing["derived"] = sorted({nm for k in needs if k in missing for nm in missing[k]})
        if bound_value is None and v.bound is None and missing:
            # the derived hook states the bound from the extras: it lacks what they lack
            missing["bound"] = sorted({nm for names in missing.values() for nm in names})
    terms = {sp.sstr(t): computed[f"term:{i}"]
             for i, t in enumerate(sp.Add.make_args(v.bound)) if f"term:{i}" in computed} \
        if v.bound is not None else {}
    return Evaluation(result.id, v.name, values, bound_value, caps, hold, extras, terms, predicates, missing,
                      result)


def bound(result: Statement, /, variant: str | None = None, **constants) -> np.ndarray:
    """Only the bound (fast path: one compiled call, no terms or conditions)."""
    v = result.variant(variant)
    if v.derived is not None:
        return evaluate(result, variant, **constants).bound
    if v.bound is None:
        raise ValidationError(f"{result.id} ({v.name}) states no bound, only conditions")
    if is_traced(*constants.values()):
        return traced(result, v, constants).bound
    given = result.check(constants)
    names = v.names_of("bound")
    result.require(v, given, names)
    values = {nm: given[nm] for nm in names}
    fn, _ = v.compiled("bound")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.asarray(fn(*(values[nm] for nm in names)), dtype=float)
    check_defined(result, v, "bound", out, values)
    return out


def traced(result: Statement, v: Variant, constants: Mapping[str, object]) -> Evaluation:
    """The bound, caps and extras of ``v`` at traced numbers (the certifier's exact or symbolic
    evaluation of a claim, :mod:`fedbound.theory.certify.trace`): each expression whose constants
    are given, substituted; no float checks (the certifier checks admissibility exactly), no
    condition checks, predicates or terms, and no ``derived`` hook (numeric post-processing)."""
    values = {nm: constants[nm] for nm in v.constants() if nm in constants}
    computed = {}
    for key, expr in v.expressions().items():
        if key.startswith(("term:", "pred:")) or not set(v.names_of(key)) <= set(values):
            continue
        computed[key] = _substituted(expr, {S.resolve(nm, result.scope).symbol: values[nm]
                                            for nm in v.names_of(key)}, values)
    if v.derived is not None and "bound" not in computed:
        raise Untraceable(f"{result.id} ({v.name}): a derived (numeric) bound")
    caps = {c.name: computed[f"cap:{c.name}"] for c in v.conditions if f"cap:{c.name}" in computed}
    return Evaluation(result.id, v.name, values, computed.get("bound"), caps, {},
                      {k: computed[k] for k in v.extras if k in computed}, {}, statement=result)


def _substituted(expr, symbols: Mapping, values: Mapping) -> np.ndarray:
    shape = np.broadcast_shapes(*(np.shape(x) for x in values.values())) if values else ()
    if isinstance(expr, sp.MatrixBase):
        return np.stack([np.stack([_substituted(e, symbols, values) for e in expr.row(i)], -1)
                         for i in range(expr.rows)], -2)
    return np.broadcast_to(substitute(expr, symbols), shape)


def exact(result: Statement, /, key: str = "bound", variant: str | None = None,
          **constants) -> sp.Expr:
    """Exact sympy value of expression ``key`` at rational constants (for 1e-12 checks); the
    constants are checked like :func:`evaluate`'s (sympy numbers are accepted as such)."""
    v = result.variant(variant)
    expressions = v.expressions()
    if key not in expressions:
        raise UnknownNameError(f"{result.id} ({v.name}) has no expression {key!r}"
                               f"{validate.suggest(key, expressions)}")
    numeric = {nm: (float(val) if isinstance(val, sp.Basic) and val.is_number else val)
               for nm, val in constants.items() if not (isinstance(val, sp.Basic) and not val.is_number)}
    result.check(numeric)
    subs = {S.resolve(nm, result.scope).symbol: _exact_number(val) for nm, val in constants.items()}
    # xreplace: a plain replacement of the symbols, evaluated by the constructors (the same value
    # as subs, ~10x faster on large expressions such as FedAda2's Theorem 20)
    return expressions[key].xreplace(subs)


def _exact_number(value) -> sp.Expr:
    """A sympy value kept as is; a number as the exact Rational of its shortest round-trip decimal
    (0.1 -> 1/10), which converts back to the same float (and is ~1000x faster than nsimplify)."""
    if isinstance(value, sp.Basic):
        return value
    x = float(value)
    return sp.Rational(repr(x)) if math.isfinite(x) else sp.sympify(x)


def _stack_matrix(out, values) -> np.ndarray:
    """lambdify of a Matrix returns nested lists of arrays; broadcast to shape (..., r, c)."""
    rows = [[np.asarray(x, dtype=float) for x in row] for row in np.asarray(out, dtype=object)]
    shape = np.broadcast_shapes(*(x.shape for row in rows for x in row),
                                *(np.shape(v) for v in values.values()))
    return np.stack([np.stack([np.broadcast_to(x, shape) for x in row], axis=-1) for row in rows],
                    axis=-2)


__all__ = ["Evaluation", "call", "check_defined", "evaluate", "bound", "traced", "exact"]
