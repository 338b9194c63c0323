"""A result of a paper as one executable object.

A :class:`Result` holds an id (``"sdgt.thm3"``), the statement in words, provenance (seed file,
equation, lines), assumptions, the constants it uses, its known issues (the flags of the paper
notes), and one or more :class:`Variant`. A variant is what a formula *is*: ``"printed"`` is the paper
as printed, ``"rederived"`` is re-derived from the paper's own lemmas where the notes show the printed
constant is wrong (other names, e.g. ``"main"``/``"appendix"``, where the paper itself prints two
forms; variants generated from independent :class:`Switch` es are named by their settings, see
:func:`switch_variants`). Every variant carries sympy expressions, the single source of truth:

* ``bound``: the right-hand side of the result (``None`` for pure step-size statements);
* ``conditions``: step-size conditions ``variable <= cap`` (or ``<``), each a
  :class:`StepCondition` naming its variable (gamma, eta, eta_l, ...); a cap may depend on its own
  variable (an *implicit* condition, solved numerically by :meth:`Result.max_step`);
* ``predicates``: conditions that are not step caps (``rho <= m/(m+n)``, ``beta1^2 < beta2``),
  each a :class:`Predicate` reported as holds / fails;
* ``extras``: further named expressions (witness step sizes, the D coefficients, the matrix A, ...),
  scalars or :class:`sympy.Matrix`;
* ``derived``: an optional numeric post-processing of the evaluated expressions (e.g. the norm of
  ``(I - A)^{-1} b``), for quantities that have no useful closed form.

Constants are scoped (:mod:`fedbound.theory.symbols`): a result of scope ``"sdgt"`` (the prefix of
its id) sees the shared constants and SD-GT's under their short names. A result may declare
``requires`` (a narrower domain for a constant where its theorem needs it, e.g. mu > 0), its
``rounds`` variable (T or R) and a :class:`Preparation` that reduces vector inputs (one entry per
client) to scalar constants.

Expressions are compiled once with :func:`sympy.lambdify` to numpy and evaluated vectorized over
arrays of constants (numpy broadcasting): see :meth:`Result.evaluate`. Every value is checked first
(:mod:`fedbound.validate`): wrong kinds raise :class:`~fedbound.errors.InputTypeError`, NaN and
out-of-domain values :class:`~fedbound.errors.ValidationError`, unknown names
:class:`~fedbound.errors.UnknownNameError` with a did-you-mean; a NaN produced from valid constants
(a formula undefined there) is an error too, never an answer.
"""
from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import sympy as sp

from fedbound import validate
from fedbound.errors import InputTypeError, UnknownNameError, ValidationError
from fedbound.theory import symbols as S

#: default relative tolerance of the implicit step-size solve (:meth:`Result.max_step`)
IMPLICIT_RTOL = 1e-12
#: smallest and largest values the implicit solve brackets in (binary orders of magnitude)
_TINY, _HUGE = 2.0 ** -1000, 2.0 ** 1000


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
    """The condition ``variable <= cap`` (``variable < cap`` when ``strict``); ``variable`` is a
    declared symbol (gamma by default). The cap may depend on the variable itself (implicit)."""

    name: str
    cap: sp.Expr
    strict: bool = False
    source: str = ""
    variable: sp.Symbol = S.gamma

    @property
    def relation(self) -> str:
        return "<" if self.strict else "<="

    @property
    def implicit(self) -> bool:
        """Whether the cap depends on the variable it constrains (e.g. AFGA (27))."""
        return self.variable in self.cap.free_symbols

    @property
    def variable_name(self) -> str:
        return S.short_name(self.variable)

    def __str__(self) -> str:
        return f"{self.variable_name} {self.relation} {self.cap}"


#: the comparison of each predicate relation
RELATIONS: dict[str, Callable] = {"<=": np.less_equal, "<": np.less, ">=": np.greater_equal,
                                  ">": np.greater}
_LATEX_RELATION = {"<=": r"\le", "<": "<", ">=": r"\ge", ">": ">"}


@dataclass(frozen=True)
class Predicate:
    """A condition that is not a step cap, ``lhs relation rhs`` with relation one of <=, <, >=, >
    (e.g. AFGA's rho_max <= m/(m+n), beta1^2 < beta2, D < 1): reported as holds / fails."""

    name: str
    lhs: sp.Expr
    relation: str
    rhs: sp.Expr
    source: str = ""

    def __post_init__(self):
        if self.relation not in RELATIONS:
            raise ValueError(f"predicate {self.name}: relation must be one of {', '.join(RELATIONS)}")
        object.__setattr__(self, "lhs", sp.sympify(self.lhs))
        object.__setattr__(self, "rhs", sp.sympify(self.rhs))

    def __str__(self) -> str:
        return f"{self.lhs} {self.relation} {self.rhs}"


@dataclass
class Variant:
    """One version of a result's formulas (see the module docstring). ``derived_needs`` names the
    extras the ``derived`` hook needs (partial evaluation calls it only when they are computed);
    ``settings`` are the switch settings of a generated variant (:func:`switch_variants`)."""

    name: str
    description: str
    bound: sp.Expr | None = None
    conditions: tuple[StepCondition, ...] = ()
    extras: Mapping[str, sp.Expr | sp.Matrix] = field(default_factory=dict)
    derived: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]] | None = None
    predicates: tuple[Predicate, ...] = ()
    derived_needs: tuple[str, ...] = ()
    settings: Mapping[str, str] = field(default_factory=dict)
    _compiled: dict = field(default_factory=dict, repr=False, compare=False)

    def expressions(self) -> dict[str, sp.Expr | sp.Matrix]:
        """All named expressions of the variant: bound, condition caps, predicate sides, extras
        and the bound's additive terms."""
        out: dict[str, sp.Expr | sp.Matrix] = {}
        if self.bound is not None:
            out["bound"] = self.bound
        for c in self.conditions:
            out[f"cap:{c.name}"] = c.cap
        for pr in self.predicates:
            out[f"pred:{pr.name}:lhs"] = pr.lhs
            out[f"pred:{pr.name}:rhs"] = pr.rhs
        out.update(self.extras)
        if self.bound is not None:
            out.update({f"term:{i}": t for i, t in enumerate(sp.Add.make_args(self.bound))})
        return out

    def constants(self) -> list[str]:
        """Short names of the constants the variant's expressions depend on, sorted."""
        free: set[sp.Symbol] = set()
        for e in self.expressions().values():
            free |= e.free_symbols
        return sorted(S.short_name(s) for s in free)

    def variables(self) -> list[str]:
        """Short names of the variables its step-size conditions constrain, sorted."""
        return sorted({c.variable_name for c in self.conditions})

    def names_of(self, key: str) -> list[str]:
        """Short names of the constants expression ``key`` depends on, sorted."""
        return sorted(S.short_name(s) for s in self.expressions()[key].free_symbols)

    def compiled(self, key: str) -> tuple[Callable, list[str]]:
        """The lambdified numpy function of expression ``key`` and its argument names (cached)."""
        if key not in self._compiled:
            expr = self.expressions()[key]
            symbols = sorted(expr.free_symbols, key=S.short_name)
            # a Matrix as nested lists: numpy.array() of entries with different shapes (a constant
            # entry, or constants broadcast against each other) fails; _stack_matrix broadcasts them
            target = expr.tolist() if isinstance(expr, sp.MatrixBase) else expr
            self._compiled[key] = (sp.lambdify(symbols, target, modules="numpy", cse=True),
                                   [S.short_name(s) for s in symbols])
        return self._compiled[key]


@dataclass(frozen=True)
class Switch:
    """A named, independent choice in a result (e.g. one correction of a bound): ``options`` maps
    each option to what it means, ``printed`` is the option the paper prints."""

    name: str
    options: Mapping[str, str]
    printed: str

    def __post_init__(self):
        if self.printed not in self.options or len(self.options) < 2:
            raise ValueError(f"switch {self.name}: needs >= 2 options, one of them printed={self.printed!r}")


def switch_variants(switches: Sequence[Switch], build: Callable[[dict[str, str]], dict],
                    description: str = "") -> list[Variant]:
    """One :class:`Variant` per combination of the switches' options (2 x 2 x 2 x 2 = 16 for four
    binary switches). ``build(settings)`` returns the variant's fields (bound, conditions, extras,
    ...) for ``settings`` = {switch: option}. The all-printed combination is named ``"printed"``;
    every other one by the switches that differ from print, ``"bias=corrected,delay=rederived"``
    (in switch order). Each description lists every switch setting with its meaning."""
    names = [s.name for s in switches]
    if len(set(names)) != len(names):
        raise ValueError(f"switch names must be distinct: {names}")
    out = []
    for combo in itertools.product(*(list(s.options) for s in switches)):
        settings = dict(zip(names, combo))
        changed = [f"{s.name}={o}" for s, o in zip(switches, combo) if o != s.printed]
        listing = "; ".join(f"{s.name}={o}: {s.options[o]}" for s, o in zip(switches, combo))
        text = f"{description}; " if description else ""
        label = "the printed combination" if not changed else "changed from print: " + ", ".join(changed)
        out.append(Variant(",".join(changed) or "printed", f"{text}{label} ({listing})",
                           settings=settings, **build(settings)))
    return out


@dataclass(frozen=True)
class Preparation:
    """The declared reduction of vector inputs to scalar constants: ``inputs`` are short names of
    vector constants (``ndim=1``, last axis = clients), ``outputs`` of scalar constants, and
    ``reduce(**arrays) -> {output: array}`` works on arrays of shape (..., m), one vector per
    constant set of a batch, returning arrays of shape (...) (e.g. FedNova's p_i, tau_i -> tau_eff,
    A, B, C, chi^2)."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    reduce: Callable[..., Mapping[str, np.ndarray]]
    description: str = ""


@dataclass
class Evaluation:
    """Numbers of one variant at given constants (arrays broadcast together). ``predicates`` maps
    each predicate to whether it holds; ``missing`` (partial evaluation) maps each expression that
    was not computed to the constants it lacked."""

    result_id: str
    variant: str
    values: dict[str, np.ndarray]
    bound: np.ndarray | None
    caps: dict[str, np.ndarray]
    conditions_hold: dict[str, np.ndarray]
    extras: dict[str, np.ndarray]
    terms: dict[str, np.ndarray]
    predicates: dict[str, np.ndarray] = field(default_factory=dict)
    missing: dict[str, list[str]] = field(default_factory=dict)

    @property
    def all_conditions_hold(self) -> np.ndarray | bool:
        held = list(self.conditions_hold.values())
        return np.logical_and.reduce(held) if held else True

    @property
    def missing_constants(self) -> list[str]:
        """Every constant some uncomputed expression lacked, sorted."""
        return sorted({nm for names in self.missing.values() for nm in names})


def as_values(name: str, value) -> np.ndarray:
    """A constant's value as a float64 array: real numbers or arrays of them (lists, numpy, torch);
    strings, complex, bools and None are :class:`InputTypeError`, NaN is :class:`ValidationError`
    (infinities are left to the constant's domain)."""
    if isinstance(value, (numbers.Number, np.generic, str, bytes)) or value is None:
        return np.asarray(validate.number(name, value, allow_inf=True), dtype=float)
    arr = validate.real_array(name, value, finite=False)
    if np.any(np.isnan(arr)):
        raise ValidationError(f"{name} must be a number, got nan at index "
                              f"{tuple(np.argwhere(np.isnan(arr))[0].tolist())}")
    return arr


class Result:
    """One result of a paper: statement, provenance, variants (see the module docstring)."""

    def __init__(self, id: str, title: str, statement: str, provenance: Provenance,
                 assumptions: tuple[str, ...], variants: list[Variant], lhs: str = "",
                 known_issues: tuple[Flag, ...] = (), default_variant: str | None = None,
                 requires: Mapping[str, tuple[S.Domain, str]] | None = None, rounds: str = "T",
                 preparation: Preparation | None = None, scope: str | None = None):
        if not variants:
            raise ValueError(f"{id}: a result needs at least one variant")
        self.id = id
        self.scope = scope if scope is not None else id.split(".")[0]
        self.title = title
        self.statement = statement
        self.provenance = provenance
        self.assumptions = assumptions
        self.lhs = lhs
        self.known_issues = known_issues
        self.variants: dict[str, Variant] = {}
        for v in variants:
            if v.name in self.variants:
                raise ValueError(f"{id}: variant {v.name!r} defined twice")
            self.variants[v.name] = v
        self.default_variant = default_variant or variants[0].name
        self.requires = dict(requires or {})
        self.rounds = rounds
        self.preparation = preparation
        self._check_scope()

    def _check_scope(self) -> None:
        """Every symbol of every variant must be visible in the result's scope, and each short name
        must mean one constant (a scoped constant never mixes with a shared one of the same name)."""
        seen = S.visible(self.scope)
        used: dict[str, S.Constant] = {}
        for v in self.variants.values():
            symbols = set().union(*(e.free_symbols for e in v.expressions().values()))
            symbols |= {c.variable for c in v.conditions}
            for sym in symbols:
                c = S.all_constants()[S.name_of(sym)]
                if seen.get(c.name) is not c:
                    raise S.DeclarationError(
                        f"{self.id} (scope {self.scope}) uses {c.key} ({c.meaning}), which is not "
                        f"the {c.name!r} of its scope")
                used[c.name] = c
        prep = self.preparation
        for name in list(self.requires) + [self.rounds] + (list(prep.inputs + prep.outputs) if prep else []):
            if name not in seen:
                raise S.DeclarationError(f"{self.id}: {name!r} is not a constant of scope {self.scope}")
        if prep is not None and any(seen[nm].ndim != 1 for nm in prep.inputs):
            raise S.DeclarationError(f"{self.id}: preparation inputs must be vector constants (ndim=1)")

    # -- look-up ---------------------------------------------------------------------------
    def variant(self, name: str | None = None) -> Variant:
        """The variant ``name`` (default: the result's default). For generated variants the name may
        be given as switch settings in any order, unspecified switches taking their printed option:
        ``"delay=rederived,bias=corrected"``."""
        name = self.default_variant if name is None else name
        if not isinstance(name, str):
            raise InputTypeError(f"variant must be a string, got {name!r}")
        if name in self.variants:
            return self.variants[name]
        if "=" in name and "printed" in self.variants and self.variants["printed"].settings:
            wanted = dict(self.variants["printed"].settings)
            for pair in name.split(","):
                switch, _, option = pair.partition("=")
                validate.one_of("switch", switch.strip(), wanted)
                wanted[switch.strip()] = option.strip()
            for v in self.variants.values():
                if dict(v.settings) == wanted:
                    return v
        raise UnknownNameError(f"{self.id} has no variant {name!r}{validate.suggest(name, self.variants)}; "
                               f"variants: {', '.join(self.variants)}")

    def constants(self, variant: str | None = None) -> list[str]:
        return self.variant(variant).constants()

    def all_constants(self) -> list[str]:
        """Every constant some variant uses, plus the preparation's inputs, sorted."""
        names = {nm for v in self.variants.values() for nm in v.constants()}
        if self.preparation is not None:
            names |= set(self.preparation.inputs)
        return sorted(names)

    def domain(self, name: str) -> tuple[S.Domain, str | None]:
        """The domain of constant ``name`` for this result, and the assumption that narrows it (or
        None where the declared domain applies)."""
        if name in self.requires:
            return self.requires[name]
        return S.resolve(name, self.scope).domain, None

    def __repr__(self) -> str:
        return f"Result({self.id!r}, variants={list(self.variants)})"

    # -- input checking ----------------------------------------------------------------------
    def check(self, constants: Mapping[str, object]) -> dict[str, np.ndarray]:
        """Validate user constants: known names (the scope's; a constant of the paper that a variant
        does not use is accepted and ignored, so one setting serves every result of a paper), real
        values, each in its domain and the result's assumptions, order relations; then the
        preparation of vector inputs. Returns {short name: float64 array}."""
        seen = S.visible(self.scope)
        for name in constants:
            if not isinstance(name, str) or name not in seen:
                mine = self.all_constants()
                raise UnknownNameError(
                    f"unknown constant {name!r} for {self.id}{validate.suggest(str(name), mine or seen)} "
                    f"(its constants: {', '.join(mine)})")
        values = {}
        for name, value in constants.items():
            arr = as_values(name, value)
            c = seen[name]
            if c.ndim and (self.preparation is None or name not in self.preparation.inputs):
                raise ValidationError(f"{name} is a vector input that {self.id} does not use")
            if c.ndim and arr.ndim < 1:
                raise ValidationError(f"{name} ({c.meaning}) must be a vector (one entry per client), "
                                      f"got a scalar")
            values[name] = arr
        S.check_values(values, self.scope)
        self._check_requires(values)
        return self._prepare(values)

    def _check_requires(self, values: Mapping[str, np.ndarray]) -> None:
        for name, (domain, reason) in self.requires.items():
            if name in values:
                bad = ~domain.contains(values[name])
                if np.any(bad):
                    raise ValidationError(
                        f"{self.id} assumes {reason}: {name} must be {domain.describe()}, "
                        f"got {np.asarray(values[name])[bad].flat[0] if bad.ndim else float(values[name]):g}")

    def _prepare(self, values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        prep = self.preparation
        if prep is None or not any(nm in values for nm in prep.inputs):
            return values
        missing = [nm for nm in prep.inputs if nm not in values]
        if missing:
            raise ValidationError(f"{self.id}: the preparation needs every vector input "
                                  f"({', '.join(prep.inputs)}); missing {', '.join(missing)}")
        twice = [nm for nm in prep.outputs if nm in values]
        if twice:
            raise ValidationError(f"{self.id}: {', '.join(twice)} are computed from "
                                  f"{', '.join(prep.inputs)}; give either, not both")
        lengths = {nm: values[nm].shape[-1] for nm in prep.inputs}
        if len(set(lengths.values())) != 1 or 0 in lengths.values():
            raise ValidationError(f"{self.id}: vector inputs need one entry per client, the same "
                                  f"number (> 0) each; got lengths {lengths}")
        arrays = {nm: values.pop(nm) for nm in prep.inputs}
        with np.errstate(all="ignore"):
            out = {k: np.asarray(v, dtype=float) for k, v in prep.reduce(**arrays).items()}
        if set(out) != set(prep.outputs):
            raise ValueError(f"{self.id}: preparation returned {sorted(out)}, declared {prep.outputs}")
        for name, arr in out.items():
            if np.any(np.isnan(arr)):
                raise ValidationError(f"{self.id}: {name} is undefined (nan) for these "
                                      f"{', '.join(prep.inputs)}")
        S.check_values(out, self.scope)
        self._check_requires(out)
        return {**values, **out}

    def _given(self, v: Variant, values: Mapping[str, np.ndarray], names: Iterable[str],
               partial: bool = False) -> list[str]:
        """The names missing from ``values``; an error unless ``partial``."""
        missing = [nm for nm in names if nm not in values]
        if missing and not partial:
            raise ValidationError(
                f"{self.id} ({v.name}) needs constant(s) {', '.join(missing)}; "
                f"it uses {', '.join(v.constants())}")
        return missing

    # -- numeric evaluation ------------------------------------------------------------------
    def _call(self, variant: Variant, key: str, values: Mapping[str, np.ndarray],
              guard: bool = True) -> np.ndarray:
        """Expression ``key`` at ``values``; with ``guard``, a NaN is an error (:meth:`_defined`)."""
        fn, names = variant.compiled(key)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = fn(*(values[nm] for nm in names))
        if isinstance(variant.expressions()[key], sp.MatrixBase):
            out = _stack_matrix(out, values)
        else:
            out = np.asarray(out, dtype=float) + np.zeros(np.broadcast_shapes(
                *(np.shape(v) for v in values.values())) if values else ())
        if guard:
            self._defined(variant, key, out, values)
        return out

    def _defined(self, variant: Variant, key: str, out: np.ndarray,
                 values: Mapping[str, np.ndarray]) -> None:
        """A NaN from valid constants means the formula is undefined there: an error naming the
        expression and the first such point, never a silent NaN answer."""
        bad = np.isnan(out)
        if not np.any(bad):
            return
        batch = np.broadcast_shapes(*(np.shape(x) for x in values.values())) if values else ()
        index = tuple(np.argwhere(bad)[0][:len(batch)])
        point = [f"{nm}={float(np.broadcast_to(x, batch)[index]):g}" for nm, x in values.items()]
        raise ValidationError(f"{self.id} ({variant.name}): {key} is undefined (nan: 0/0, inf - inf "
                              f"or 0 inf, from a formula undefined there or overflow at extreme "
                              f"values) at {', '.join(point)}; assumptions: {'; '.join(self.assumptions)}")

    def evaluate(self, variant: str | None = None, partial: bool = False, **constants) -> Evaluation:
        """Evaluate bound, step-size caps, condition checks, predicates, extras and the bound's terms.

        Constants are scalars or numpy arrays (broadcast together). A condition's variable (gamma,
        eta_l, ...) is only needed when an expression depends on it; the condition checks are
        reported when it is given. With ``partial=True`` every expression whose constants are
        given is computed and the others are listed in ``Evaluation.missing``.
        """
        v = self.variant(variant)
        validate.boolean("partial", partial)
        given = self.check(constants)
        needed = set(v.constants()) | {nm for nm in v.variables() if nm in given}
        self._given(v, given, sorted(needed), partial)
        values = {nm: given[nm] for nm in sorted(needed) if nm in given}
        computed: dict[str, np.ndarray] = {}
        missing: dict[str, list[str]] = {}
        for key in v.expressions():
            lack = [nm for nm in v.names_of(key) if nm not in values]
            if lack:
                missing[key] = lack
            else:
                computed[key] = self._call(v, key, values)
        caps = {c.name: computed[f"cap:{c.name}"] for c in v.conditions if f"cap:{c.name}" in computed}
        hold = {c.name: RELATIONS[c.relation](values[c.variable_name], caps[c.name])
                for c in v.conditions if c.name in caps and c.variable_name in values}
        predicates = {pr.name: RELATIONS[pr.relation](computed[f"pred:{pr.name}:lhs"],
                                                      computed[f"pred:{pr.name}:rhs"])
                      for pr in v.predicates
                      if f"pred:{pr.name}:lhs" in computed and f"pred:{pr.name}:rhs" in computed}
        extras = {k: computed[k] for k in v.extras if k in computed}
        bound = computed.get("bound")
        if v.derived is not None:
            needs = v.derived_needs or tuple(v.extras)
            if all(k in extras for k in needs):
                with np.errstate(all="ignore"):
                    extras.update(v.derived({**values, **extras}))
                if "bound" in extras:
                    bound = extras.pop("bound")
                    missing.pop("bound", None)
            else:
                missing["derived"] = sorted({nm for k in needs if k in missing for nm in missing[k]})
            if bound is None and v.bound is None and missing:
                # the derived hook states the bound from the extras: it lacks what they lack
                missing["bound"] = sorted({nm for names in missing.values() for nm in names})
        terms = {sp.sstr(t): computed[f"term:{i}"]
                 for i, t in enumerate(sp.Add.make_args(v.bound)) if f"term:{i}" in computed} \
            if v.bound is not None else {}
        return Evaluation(self.id, v.name, values, bound, caps, hold, extras, terms, predicates, missing)

    def bound(self, variant: str | None = None, **constants) -> np.ndarray:
        """Only the bound (fast path: one compiled call, no terms or conditions)."""
        v = self.variant(variant)
        if v.derived is not None:
            return self.evaluate(variant, **constants).bound
        if v.bound is None:
            raise ValidationError(f"{self.id} ({v.name}) states no bound, only conditions")
        given = self.check(constants)
        names = v.names_of("bound")
        self._given(v, given, names)
        values = {nm: given[nm] for nm in names}
        fn, _ = v.compiled("bound")
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = np.asarray(fn(*(values[nm] for nm in names)), dtype=float)
        self._defined(v, "bound", out, values)
        return out

    def max_step(self, variant: str | None = None, variable: str | None = None,
                 rtol: float = IMPLICIT_RTOL, **constants) -> tuple[np.ndarray, np.ndarray]:
        """The largest value of ``variable`` satisfying every condition on it, and the name of the
        binding condition. ``variable`` may be omitted when the variant constrains only one.

        Strict conditions ``v < cap`` have no maximum; the supremum is returned and the binding name
        is marked with ``(strict)``. Explicit caps give the min of the caps. Implicit ones (a cap
        depending on ``variable``) are solved numerically, vectorized: with g(v) = min of every cap
        at v, the solve brackets the boundary of {v > 0 : v <= g(v)} by doubling from the explicit
        min (or 1) and halving down to 2^-1000, then bisects until hi <= lo (1 + rtol); it returns
        lo, an admissible v with an inadmissible point within relative ``rtol`` above it. That is
        the largest admissible v whenever the admissible set is an interval (0, v*] (g(v) - v
        changes sign once, e.g. a cap non-increasing in v). No admissible v > 0: ValidationError.
        A value given for ``variable`` itself is ignored (one setting serves every call).
        """
        v = self.variant(variant)
        if not v.conditions:
            raise ValidationError(f"{self.id} ({v.name}) has no step-size condition")
        variables = v.variables()
        if variable is None:
            if len(variables) > 1:
                raise ValidationError(f"{self.id} ({v.name}) constrains {', '.join(variables)}; "
                                      f"say which with variable=")
            variable = variables[0]
        validate.one_of("variable", variable, variables)
        rtol = validate.number("rtol", rtol, low=1e-15, high=0.1)
        conds = [c for c in v.conditions if c.variable_name == variable]
        given = self.check(constants)
        given.pop(variable, None)  # solved for, not used
        needed = sorted({nm for c in conds for nm in v.names_of(f"cap:{c.name}")} - {variable})
        self._given(v, given, needed)
        values = {nm: given[nm] for nm in needed}
        names = np.array([c.name + (" (strict)" if c.strict else "") for c in conds])
        if any(c.implicit for c in conds):
            best = self._solve_implicit(v, conds, values, variable, rtol)
            caps = self._caps(v, conds, {**values, variable: best})
            return best, names[np.argmin(caps, axis=0)]
        caps = self._caps(v, conds, values)
        best = np.min(caps, axis=0)
        self._admissible(v, variable, best > 0, values)
        return best, names[np.argmin(caps, axis=0)]

    def _caps(self, v: Variant, conds: list[StepCondition], values: Mapping[str, np.ndarray],
              guard: bool = True) -> np.ndarray:
        return np.stack(np.broadcast_arrays(*(self._call(v, f"cap:{c.name}", values, guard)
                                              for c in conds)))

    def _admissible(self, v: Variant, variable: str, ok: np.ndarray, values) -> None:
        if not np.all(ok):
            i = np.argwhere(~np.asarray(ok))[0] if np.ndim(ok) else ()
            point = ", ".join(f"{nm}={float(np.broadcast_to(x, np.shape(ok))[tuple(i)]):g}"
                              for nm, x in values.items())
            raise ValidationError(f"{self.id} ({v.name}): no admissible {variable} > 0 at {point}")

    def _solve_implicit(self, v: Variant, conds: list[StepCondition], values: dict, variable: str,
                        rtol: float) -> np.ndarray:
        """The implicit solve of :meth:`max_step` (bounded loops: about 2000 halvings/doublings and
        60 bisection steps at most)."""
        shape = np.broadcast_shapes(*(np.shape(x) for x in values.values())) if values else ()
        explicit = [c for c in conds if not c.implicit]

        def admissible(x: np.ndarray) -> np.ndarray:
            """Every condition holds at x (a cap that is NaN at a probe point counts as failing)."""
            caps = self._caps(v, conds, {**values, variable: x}, guard=False)
            ok = [RELATIONS[c.relation](x, cap) for c, cap in zip(conds, caps)]
            return np.logical_and.reduce(ok)

        top = np.broadcast_to(np.min(self._caps(v, explicit, values), axis=0), shape) \
            if explicit else np.full(shape, np.inf)
        capped = np.isfinite(top) & (top > 0)   # a finite explicit cap bounds the search
        hi = np.where(capped, top, 1.0)
        ok = admissible(hi)
        for _ in range(2000):   # without a finite cap: double while admissible
            grow = ok & ~capped & (hi < _HUGE)
            if not np.any(grow):
                break
            hi = np.where(grow, hi * 2, hi)
            ok = admissible(hi)
        done = ok  # the explicit cap itself is admissible, or no cap binds up to 2^1000 (inf below)
        lo = hi / 2
        for _ in range(2000):
            shrink = ~done & ~admissible(lo) & (lo > _TINY)
            if not np.any(shrink):
                break
            hi = np.where(shrink, lo, hi)
            lo = np.where(shrink, lo / 2, lo)
        self._admissible(v, variable, done | admissible(lo), values)
        for _ in range(200):
            open_ = ~done & (hi > lo * (1 + rtol))
            if not np.any(open_):
                break
            mid = lo + (hi - lo) / 2
            good = admissible(mid)
            lo = np.where(open_ & good, mid, lo)
            hi = np.where(open_ & ~good, mid, hi)
        grown_out = done & (hi >= _HUGE) & ~capped
        return np.where(grown_out, np.inf, np.where(done, hi, lo))

    def rounds_to_eps(self, eps: float, variant: str | None = None, t_max: float = 2.0 ** 60,
                      **constants) -> np.ndarray:
        """Smallest integer value of the result's rounds variable (``self.rounds``: T or R) >= 1
        with bound <= eps (``inf`` if none below ``t_max``); eps must be finite and > 0.

        Assumes the bound is non-increasing in the rounds (true of every rate bound here);
        vectorized exponential search followed by bisection on integers (at most about
        2 log2(t_max) bound evaluations; above 2^53, where floats no longer hold every integer, the
        answer is the smallest representable value found).
        """
        t = self.rounds
        if isinstance(eps, np.ndarray) and eps.ndim:
            eps = validate.real_array("eps", eps)
            if np.any(eps <= 0):
                raise ValidationError(f"eps must be > 0, got {eps[eps <= 0].flat[0]:g}")
        else:
            eps = validate.number("eps", eps, low=0.0, low_open=True)
        t_max = validate.number("t_max", t_max, low=1.0, high=2.0 ** 1000)
        if t not in self.constants(variant):
            raise ValidationError(f"{self.id} does not depend on {t}; no rounds-to-epsilon")
        if t in constants:
            raise ValidationError(f"rounds_to_eps solves for {t}; do not give it")
        self.check(constants)

        def f(x):
            return self.bound(variant, **{**constants, t: x})

        shape = np.broadcast_shapes(np.shape(eps), *(np.shape(c) for c in constants.values()))
        lo = np.zeros(shape)  # bound(lo) > eps or lo = 0
        hi = np.ones(shape)
        done = f(hi) <= eps
        for _ in range(1100):   # doubling up to t_max <= 2^1000
            if np.all(done) or np.max(hi) >= t_max:
                break
            lo = np.where(done, lo, hi)
            hi = np.where(done, hi, hi * 2)
            done = f(hi) <= eps
        reached = done
        hi = np.where(done, hi, lo + 1)
        for _ in range(1100):   # integer bisection; stops where floats no longer split the gap
            mid = np.floor((lo + hi) / 2)
            open_ = (hi - lo > 1) & (mid > lo) & (mid < hi)
            if not np.any(open_):
                break
            ok = f(np.where(open_, np.maximum(mid, 1), hi)) <= eps
            hi = np.where(open_ & ok, mid, hi)
            lo = np.where(open_ & ~ok, mid, lo)
        return np.where(reached, hi, np.inf)

    # -- symbolic ----------------------------------------------------------------------------
    def rate_exponents(self, variant: str | None = None, in_symbol: str | None = None) -> dict[str, object]:
        """For each additive term of the bound, its exponent in ``in_symbol`` (default: the rounds
        variable; a sympy number), or ``"geometric"`` for terms like ``c**T``."""
        v = self.variant(variant)
        if v.bound is None:
            raise ValidationError(f"{self.id} ({v.name}) states no bound")
        t = S.resolve(in_symbol or self.rounds, self.scope).symbol
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
        """The bound, each condition (with its variable) and each predicate, in LaTeX."""
        v = self.variant(variant)
        parts = []
        if v.bound is not None:
            parts.append(sp.latex(v.bound))
        parts += [rf"{sp.latex(c.variable)} {_LATEX_RELATION[c.relation]} {sp.latex(c.cap)}"
                  for c in v.conditions]
        parts += [rf"{sp.latex(pr.lhs)} {_LATEX_RELATION[pr.relation]} {sp.latex(pr.rhs)}"
                  for pr in v.predicates]
        return r" \quad ".join(parts)

    def exact(self, key: str = "bound", variant: str | None = None, **constants) -> sp.Expr:
        """Exact sympy value of expression ``key`` at rational constants (for 1e-12 checks); the
        constants are checked like :meth:`evaluate`'s (sympy numbers are accepted as such)."""
        v = self.variant(variant)
        expressions = v.expressions()
        if key not in expressions:
            raise UnknownNameError(f"{self.id} ({v.name}) has no expression {key!r}"
                                   f"{validate.suggest(key, expressions)}")
        numeric = {nm: (float(val) if isinstance(val, sp.Basic) and val.is_number else val)
                   for nm, val in constants.items() if not (isinstance(val, sp.Basic) and not val.is_number)}
        self.check(numeric)
        subs = {S.resolve(nm, self.scope).symbol: _exact_number(val) for nm, val in constants.items()}
        return expressions[key].subs(subs)


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


__all__ = ["Provenance", "Flag", "StepCondition", "Predicate", "Variant", "Switch", "switch_variants",
           "Preparation", "Evaluation", "Result", "as_values", "IMPLICIT_RTOL"]
