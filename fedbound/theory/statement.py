"""The statement of a result and the checking of its inputs.

A :class:`Statement` holds a result's id (``"sdgt.thm3"``), the statement in words, provenance
(seed file, equation, lines), assumptions, its known issues (the flags of the paper notes), and one
or more :class:`~fedbound.theory.variant.Variant` (the formulas). :class:`~fedbound.theory.result.Result`
adds the computations to it.

Constants are scoped (:mod:`fedbound.theory.symbols`): a result of scope ``"sdgt"`` (the prefix of
its id) sees the shared constants and SD-GT's under their short names. A result may declare
``requires`` (a narrower domain for a constant where its theorem needs it, e.g. mu > 0), its
``rounds`` variable (T or R), a :class:`Preparation` that reduces vector inputs (one entry per
client) to scalar constants, and the :class:`~fedbound.theory.reading.Reference` its bound is read
against (a trivial bound, or the quantity's initial value).

Every value is checked (:meth:`Statement.check`, :mod:`fedbound.validate`) before anything is
computed: wrong kinds raise :class:`~fedbound.errors.InputTypeError`, NaN and out-of-domain values
:class:`~fedbound.errors.ValidationError`, unknown names :class:`~fedbound.errors.UnknownNameError`
with a did-you-mean.
"""
from __future__ import annotations

import functools
import numbers
import operator
from dataclasses import dataclass
from typing import Annotated, Callable, Iterable, Iterator, Mapping

import numpy as np

from fedbound import validate
from fedbound.argtypes import Count, Measured, Range
from fedbound.display import clip, details, table
from fedbound.errors import InputTypeError, UnknownNameError, ValidationError
from fedbound.theory.compiled import lambdify
from fedbound.theory import symbols as S
from fedbound.theory.argtypes import ExtendedArray
from fedbound.theory.reading import Reference
from fedbound.theory.variant import Deferred, Predicate, Variant


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


#: the per-round quantities of a run a bound can be about (the columns of a run's trajectory):
#: f(x_t) - f*, ||x_t - x*||^2 and ||grad f(x_t)||^2 at the global (server) model x_t
MEASURABLE = {"loss_gap": "f(x_t) - f*", "dist2": "||x_t - x*||^2",
              "grad_norm2": "||grad f(x_t)||^2"}
#: the short names of the measures with their default shifts (:meth:`Measure.named`)
MEASURE_NAMES = tuple(f"{prefix}{q}" for prefix in ("", "avg_", "min_") for q in MEASURABLE)
#: how a bound at horizon T reads the per-round expectations e_t = E[quantity at round t] over the
#: window of rounds t = shift .. T-1+shift (x_t: the model after t rounds, x_0 the initial one)
OVER = {"last": "the window's last round, e_{T-1+shift}",
        "average": "(1/T) sum over the window of e_t",
        "min": "min over the window of e_t"}


@dataclass(frozen=True)
class Measure:
    """What a bound bounds, in terms of a run (so that it can be checked against measured runs,
    :mod:`fedbound.verify.theorem`): the expectation of ``quantity`` (one of :data:`MEASURABLE`)
    read over the window of T rounds ``shift .. T-1+shift`` (``over``, one of :data:`OVER`), with
    x_t the model after t rounds. ``shift`` defaults to 1 for ``last`` (the model after T rounds)
    and 0 otherwise (the T models a T-round average or minimum ranges over, x_0 .. x_{T-1}).

        >>> Measure("grad_norm2", "min").describe()
        'min_{0 <= t <= T-1} E[||grad f(x_t)||^2]'
        >>> Measure("dist2").describe()
        'E[||x_T - x*||^2]'
    """

    quantity: str
    over: str = "last"
    shift: Annotated[int, Range(0, 1)] | None = None

    def __post_init__(self):
        validate.one_of("measured quantity", self.quantity, MEASURABLE)
        validate.one_of("measure over rounds", self.over, OVER)
        shift = (1 if self.over == "last" else 0) if self.shift is None else self.shift
        object.__setattr__(self, "shift", validate.integer("measure shift", shift, low=0, high=1))

    @classmethod
    def named(cls, name: str) -> "Measure":
        """The measure of a short name (:data:`MEASURE_NAMES`): ``dist2`` (the last round, x_T),
        ``avg_dist2`` (the average over x_0 .. x_{T-1}), ``min_dist2`` (the minimum over them), for
        each of :data:`MEASURABLE`."""
        name = validate.one_of("measure", name, MEASURE_NAMES)
        over, _, quantity = name.partition("_") if name.startswith(("avg_", "min_")) else ("", "", name)
        return cls(quantity, {"": "last", "avg": "average", "min": "min"}[over])

    @property
    def name(self) -> str:
        """The short name (:meth:`named`) of the measure with its default shift."""
        prefix = {"last": "", "average": "avg_", "min": "min_"}[self.over]
        return prefix + self.quantity

    def describe(self) -> str:
        e = f"E[{MEASURABLE[self.quantity]}]"
        lo, hi = ("1", "T") if self.shift else ("0", "T-1")
        if self.over == "last":
            return e.replace("x_t", f"x_{hi}" if len(hi) == 1 else f"x_{{{hi}}}")
        return (f"(1/T) sum_{{t={lo}}}^{{{hi}}} {e}" if self.over == "average"
                else f"min_{{{lo} <= t <= {hi}}} {e}")

    def rounds(self, horizon: Count) -> int:
        """How many rounds a run needs for the measure at ``horizon`` T."""
        return horizon - 1 + self.shift

    def of(self, per_round: Measured, horizon: Count) -> np.ndarray:
        """The measure at ``horizon`` T from per-round values (axis 0: rounds 0, 1, ...)."""
        window = per_round[self.shift:horizon + self.shift]
        if self.over == "last":
            return window[-1]
        return window.mean(axis=0) if self.over == "average" else window.min(axis=0)


@dataclass(frozen=True)
class Use:
    """A part of a result that uses a constant: its ``kind`` (one of :data:`USE_KINDS`), ``name``
    (the condition's, predicate's or extra's; "" for the bound and the preparation), ``on`` (the
    step variable a condition constrains, else ""), the ``source`` the result cites for that part
    (equation and seed lines; "" where it cites none beyond its own provenance) and the
    ``variants`` that have it."""

    kind: str
    name: str
    on: str
    source: str
    variants: tuple[str, ...]


#: the kinds of :class:`Use`, in the order they are listed
USE_KINDS = ("bound", "condition", "predicate", "extra", "preparation")


@dataclass(frozen=True)
class ConstantInfo:
    """What a constant is to a result (``fedbound constants ID``): short ``name``, ``key``, its
    ``meaning``, its ``domain`` for the result (the declared one, ``declared``, narrowed by the
    result's ``assumption`` where it requires one), its ``roles`` ("step variable", "rounds",
    "vector input", "computed by the preparation (or given)", or "constant"), and its source: the
    declaring ``scope`` (None: shared by every paper) with that paper's ``seed`` text (the one the
    result cites), the result's ``provenance`` (equation and seed lines of the statement), and its
    ``uses`` with the source each cites. Only the line numbers the result and its parts cite are
    given; a constant has no lines of its own."""

    name: str
    key: str
    meaning: str
    domain: S.Domain
    declared: S.Domain
    assumption: str | None
    roles: tuple[str, ...]
    scope: str | None
    seed: str | None
    provenance: Provenance
    variants: tuple[str, ...]
    uses: tuple[Use, ...]

    def to_dict(self) -> dict:
        """JSON-ready: domains described in words, the source as a nested object."""
        return {"name": self.name, "key": self.key, "meaning": self.meaning,
                "domain": self.domain.describe(), "declared_domain": self.declared.describe(),
                "assumption": self.assumption, "roles": list(self.roles), "variants": list(self.variants),
                "source": {"declared_by": self.scope or "shared", "seed": self.seed,
                           "result": {"seed": self.provenance.seed, "equation": self.provenance.equation,
                                      "lines": self.provenance.lines}},
                "uses": [{"kind": u.kind, "name": u.name, "on": u.on, "source": u.source,
                          "variants": list(u.variants)} for u in self.uses]}


def as_values(name: str, value: ExtendedArray) -> np.ndarray:
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


#: a list of more variants than this is shown folded
FOLD_VARIANTS = 4


class _Variants(Mapping):
    """A result's variants by name; a :class:`~fedbound.theory.variant.Deferred` one is built, and
    its symbols checked (``check``), the first time it is looked up."""

    def __init__(self, result_id: str, variants: Iterable[Variant | Deferred],
                 check: Callable[[Variant], None], default: str | None = None):
        self._check = check
        self.result_id = result_id
        self._items: dict[str, Variant | Deferred] = {}
        for v in variants:
            if v.name in self._items:
                raise S.DeclarationError(f"{result_id}: variant {v.name!r} defined twice")
            self._items[v.name] = v
        self.default = default if default is not None else next(iter(self._items), None)

    def built(self) -> list[Variant]:
        """The variants built so far (all but the deferred ones not looked up yet)."""
        return [v for v in self._items.values() if isinstance(v, Variant)]

    def __getitem__(self, name: str) -> Variant:
        item = self._items[name]
        if isinstance(item, Deferred):
            built = item.build()
            if not isinstance(built, Variant) or built.name != item.name:
                raise S.DeclarationError(f"the deferred variant {item.name!r} must build a Variant "
                                         f"of that name, got a {type(built).__name__} named "
                                         f"{getattr(built, 'name', None)!r}")
            self._check(built)
            self._items[name] = item = built
        return item

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        names = ", ".join(f"{n} (default)" if n == self.default else n for n in self._items)
        return clip(f"<variants of {self.result_id}: {names}>")

    def _repr_html_(self) -> str:
        """Each variant's name, the default marked, and the description of those built so far (a
        deferred one is built when first used, not to be shown); folded beyond FOLD_VARIANTS."""
        rows = [[name + (" (default)" if name == self.default else ""),
                 item.description if isinstance(item, Variant) else "(built when first used)"]
                for name, item in self._items.items()]
        return details(f"{len(rows)} variant{'s' if len(rows) > 1 else ''} of {self.result_id}",
                       [table(["variant", "description"], rows)],
                       expanded=len(rows) <= FOLD_VARIANTS).text


class Statement:
    """What a result states: id, provenance, assumptions, variants, the domains of its constants
    (see the module docstring); :meth:`check` validates inputs against them."""

    def __init__(self, id: str, title: str, statement: str, provenance: Provenance,
                 assumptions: tuple[str, ...] = (), variants: list[Variant | Deferred] | None = None,
                 lhs: str = "",
                 known_issues: tuple[Flag, ...] = (), default_variant: str | None = None,
                 requires: Mapping[str, tuple[S.Domain, str]] | None = None, rounds: str = "T",
                 preparation: Preparation | None = None, scope: str | None = None,
                 measure: Measure | None = None, relations: Iterable[Predicate] = (),
                 reference: Reference | None = None):
        if not variants:
            raise S.DeclarationError(f"{id}: a result needs at least one variant")
        self.id = id
        self.scope = scope if scope is not None else id.split(".")[0]
        self.title = title
        self.statement = statement
        self.provenance = provenance
        self.assumptions = assumptions
        self.lhs = lhs
        self.known_issues = known_issues
        self.default_variant = default_variant or variants[0].name
        self.variants = _Variants(id, variants, self._check_variant, self.default_variant)
        self.requires = dict(requires or {})
        self.rounds = rounds
        self.preparation = preparation
        if measure is not None and not isinstance(measure, Measure):
            raise S.DeclarationError(f"{id}: measure must be a fedbound.theory.statement.Measure, "
                                     f"got {type(measure).__name__}")
        self.measure = measure
        if reference is not None and not isinstance(reference, Reference):
            raise S.DeclarationError(f"{id}: reference must be a fedbound.theory.reading.Reference, "
                                     f"got {type(reference).__name__}")
        self.reference = reference
        self.relations = tuple(relations)
        for relation in self.relations:
            if not isinstance(relation, Predicate):
                raise S.DeclarationError(f"{id}: relations must be Predicate objects (lhs relation "
                                         f"rhs between constants), got {type(relation).__name__}")
        self._check_scope()

    @functools.cached_property
    def _relation_tests(self) -> list[tuple[Predicate, Callable]]:
        """Each relation with its test (:func:`compile_relation`), compiled on first use: a command
        imports a paper's module for one result, and the others are never checked."""
        return [(r, compile_relation(r)) for r in self.relations]

    @functools.cached_property
    def _reference_function(self) -> tuple[Callable, list[str]]:
        """The reference compiled (on first use) and the short names of its constants."""
        symbols = sorted(self.reference.expr.free_symbols, key=S.short_name)
        return lambdify(symbols, self.reference.expr), [S.short_name(s) for s in symbols]

    def reference_value(self, values: Mapping[str, np.ndarray]) -> np.ndarray | None:
        """The reference at the checked constants ``values`` (None without a reference, or when a
        constant it needs is not given)."""
        if self.reference is None:
            return None
        fn, names = self._reference_function
        if any(nm not in values for nm in names):
            return None
        with np.errstate(all="ignore"):
            return np.asarray(fn(*(values[nm] for nm in names)), dtype=float)

    def _check_scope(self) -> None:
        """The constants the result names (requires, rounds, preparation) must be its scope's, and
        so must every symbol of every variant built now (:meth:`_check_variant`) and of its
        reference."""
        seen = S.visible(self.scope)
        if self.reference is not None:
            for sym in self.reference.expr.free_symbols:
                c = S.all_constants()[S.name_of(sym)]
                if seen.get(c.name) is not c:
                    raise S.DeclarationError(f"{self.id}: its reference uses {c.key}, not a constant "
                                             f"of scope {self.scope}")
        for v in self.variants.built():
            self._check_variant(v)
        prep = self.preparation
        for name in list(self.requires) + [self.rounds] + (list(prep.inputs + prep.outputs) if prep else []):
            if name not in seen:
                raise S.DeclarationError(f"{self.id}: {name!r} is not a constant of scope {self.scope}")
        if prep is not None and any(seen[nm].ndim != 1 for nm in prep.inputs):
            raise S.DeclarationError(f"{self.id}: preparation inputs must be vector constants (ndim=1)")

    def _check_variant(self, v: Variant) -> None:
        """Every symbol of ``v`` must be visible in the result's scope, and each short name must
        mean one constant (a scoped constant never mixes with a shared one of the same name)."""
        seen = S.visible(self.scope)
        symbols = set().union(*(e.free_symbols for e in v.expressions().values()))
        symbols |= {c.variable for c in v.conditions}
        for sym in symbols:
            c = S.all_constants()[S.name_of(sym)]
            if seen.get(c.name) is not c:
                raise S.DeclarationError(
                    f"{self.id} (scope {self.scope}) uses {c.key} ({c.meaning}), which is not "
                    f"the {c.name!r} of its scope")

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

    def constant_info(self, variant: str | None = None) -> list[ConstantInfo]:
        """Every constant of the result (of ``variant`` only, when given), sorted by name, with its
        meaning, domain, roles and source (:class:`ConstantInfo`)."""
        chosen = list(self.variants.values()) if variant is None else [self.variant(variant)]
        uses: dict[str, dict[tuple[str, str, str, str], list[str]]] = {}

        def use(names: Iterable[str], v: Variant, kind: str, name: str = "", source: str = "",
                on: str = "") -> None:
            for nm in names:
                uses.setdefault(nm, {}).setdefault((kind, name, on, source), []).append(v.name)

        prep = self.preparation
        for v in chosen:
            if v.bound is not None:
                use(v.names_of("bound"), v, "bound")
            for c in v.conditions:
                use({c.variable_name, *v.names_of(f"cap:{c.name}")}, v, "condition", c.name, c.source,
                    c.variable_name)
            for pr in v.predicates:
                use({*v.names_of(f"pred:{pr.name}:lhs"), *v.names_of(f"pred:{pr.name}:rhs")}, v,
                    "predicate", pr.name, pr.source)
            for key in v.extras:
                use(v.names_of(key), v, "extra", key)
            if prep is not None:
                use(prep.inputs + prep.outputs, v, "preparation", source=prep.description)
        steps = {c.variable_name for v in chosen for c in v.conditions}
        out = []
        for name in sorted(uses):
            c = S.resolve(name, self.scope)
            domain, assumption = self.domain(name)
            roles = tuple(role for role, yes in (
                ("step variable", name in steps), ("rounds", name == self.rounds),
                ("vector input", prep is not None and name in prep.inputs),
                ("computed by the preparation (or given)", prep is not None and name in prep.outputs)) if yes)
            variants = sorted({nm for names in uses[name].values() for nm in names},
                              key=list(self.variants).index)
            out.append(ConstantInfo(
                name, c.key, c.meaning, domain, c.domain, assumption, roles or ("constant",), c.scope,
                self.provenance.seed if c.scope is not None else None, self.provenance,
                tuple(variants), tuple(sorted((Use(*key, tuple(names)) for key, names in uses[name].items()),
                                              key=lambda u: USE_KINDS.index(u.kind)))))
        return out

    def domain(self, name: str) -> tuple[S.Domain, str | None]:
        """The domain of constant ``name`` for this result, and the assumption that narrows it (or
        None where the declared domain applies)."""
        if name in self.requires:
            return self.requires[name]
        return S.resolve(name, self.scope).domain, None

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
                raise ValidationError(f"{name} ({c.meaning}) is a vector input that {self.id} does not use")
            if arr.size == 0:
                raise ValidationError(f"{name} ({c.meaning}) is empty; give a number or a non-empty array")
            if c.ndim and (arr.ndim < 1 or arr.shape[-1] == 0):
                raise ValidationError(f"{name} ({c.meaning}) must be a vector with one entry per "
                                      f"client (at least one), got shape {arr.shape}")
            values[name] = arr
        batched = {nm: arr.shape for nm, arr in values.items() if not seen[nm].ndim}
        try:
            np.broadcast_shapes(*batched.values())
        except ValueError:
            shapes = ", ".join(f"{nm} {shape}" for nm, shape in batched.items() if shape)
            raise ValidationError(f"{self.id}: the constants given as arrays must have shapes that "
                                  f"broadcast together (equal lengths, or 1), got {shapes}") from None
        S.check_values(values, self.scope)
        self._check_requires(values)
        self._check_relations(values)
        return self._prepare(values)

    def admissible(self, constants: Mapping[str, Measured]) -> tuple[np.ndarray, list[str]]:
        """Which instances (vectorized over the arrays of ``constants``) the result admits: every
        given constant in its domain for this result (declared, narrowed by ``requires``), the
        order relations of :data:`~fedbound.theory.symbols.ORDER_RELATIONS` and the result's own
        ``relations`` (those whose constants are all given). Returns (mask, the names of the
        relations that some instance breaks). Constants of other scopes are ignored."""
        seen = S.visible(self.scope)
        values = {k: np.asarray(v, dtype=float) for k, v in constants.items() if k in seen}
        shape = np.broadcast_shapes(*(np.shape(v) for v in values.values())) if values else ()
        ok, broken = np.ones(shape, dtype=bool), []

        def apply(name, good):
            nonlocal ok
            good = np.broadcast_to(np.asarray(good, dtype=bool), shape)
            if not np.all(good):
                broken.append(name)
            ok = ok & good

        for name, v in values.items():
            if seen[name].ndim:
                continue
            domain, _ = self.domain(name)
            apply(f"{name} in {domain.describe()}", domain.contains(v))
        keyed = {seen[name].key: name for name in values}
        for small, large in S.ORDER_RELATIONS:
            if small in keyed and large in keyed:
                apply(f"{keyed[small]} <= {keyed[large]}", values[keyed[small]] <= values[keyed[large]])
        for relation, test in self._relation_tests:
            if test.names <= set(values):
                with np.errstate(all="ignore"):
                    apply(str(relation), test(values))
        return ok, broken

    def _check_relations(self, values: Mapping[str, np.ndarray]) -> None:
        for relation, test in self._relation_tests:
            if test.names <= set(values) and all(not S.visible(self.scope)[n].ndim for n in test.names):
                with np.errstate(all="ignore"):
                    good = np.asarray(test(values), dtype=bool)
                if not np.all(good):
                    raise ValidationError(
                        f"{self.id} requires {relation} ({relation.name}"
                        f"{', ' + relation.source if relation.source else ''}); got "
                        + ", ".join(f"{n}={np.asarray(values[n]).flat[0]:g}" for n in sorted(test.names)))

    def _check_requires(self, values: Mapping[str, np.ndarray]) -> None:
        for name, (domain, reason) in self.requires.items():
            if name in values:
                bad = ~domain.contains(values[name])
                if np.any(bad):
                    raise ValidationError(
                        f"{self.id} assumes {reason}: {name} must be {domain.describe()}, "
                        f"got {np.asarray(values[name])[bad].flat[0] if bad.ndim else float(values[name]):g}"
                        f"; {S.explain(name, self.scope)}")

    def _prepare(self, values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        prep = self.preparation
        if prep is None or not any(nm in values for nm in prep.inputs):
            return values
        missing = [nm for nm in prep.inputs if nm not in values]
        if missing:
            raise ValidationError(f"{self.id}: the preparation needs every vector input "
                                  f"({', '.join(prep.inputs)}); missing {self._explained(missing)}")
        twice = [nm for nm in prep.outputs if nm in values]
        if twice:
            raise ValidationError(f"{self.id}: {self._explained(twice)} are computed from "
                                  f"{', '.join(prep.inputs)}; give either, not both")
        lengths = {nm: values[nm].shape[-1] for nm in prep.inputs}
        if len(set(lengths.values())) != 1 or 0 in lengths.values():
            raise ValidationError(f"{self.id}: vector inputs need one entry per client, the same "
                                  f"number (> 0) each; got lengths {lengths}")
        arrays = {nm: values.pop(nm) for nm in prep.inputs}
        with np.errstate(all="ignore"):
            out = {k: np.asarray(v, dtype=float) for k, v in prep.reduce(**arrays).items()}
        if set(out) != set(prep.outputs):
            raise S.DeclarationError(f"{self.id}: preparation returned {sorted(out)}, declared "
                                     f"{prep.outputs}")
        for name, arr in out.items():
            if np.any(np.isnan(arr)):
                raise ValidationError(f"{self.id}: {name} is undefined (nan) for these "
                                      f"{', '.join(prep.inputs)}")
        S.check_values(out, self.scope)
        self._check_requires(out)
        return {**values, **out}

    def require(self, v: Variant, values: Mapping[str, np.ndarray], names: Iterable[str]) -> None:
        """An error unless every constant of ``names`` is in ``values``."""
        missing = [nm for nm in names if nm not in values]
        if missing:
            raise ValidationError(
                f"{self.id} ({v.name}) needs constant(s) {self._explained(missing)}; "
                f"it uses {', '.join(v.constants())}")

    def _explained(self, names: Iterable[str]) -> str:
        """``"K (meaning), p (meaning)"``: constants named with what they mean in this scope."""
        return ", ".join(S.explain(nm, self.scope) for nm in names)


__all__ = ["Provenance", "Flag", "Preparation", "Use", "USE_KINDS", "ConstantInfo", "as_values",
           "Statement"]


def compile_relation(relation: Predicate) -> Callable[[Mapping[str, np.ndarray]], np.ndarray]:
    """A vectorized test of ``relation`` (lhs relation rhs) on a dict of constants by short name;
    its ``names`` attribute is the set of constants it reads."""
    symbols = sorted(relation.lhs.free_symbols | relation.rhs.free_symbols, key=S.name_of)
    names = [S.short_name(sym) for sym in symbols]
    fn = lambdify(symbols, [relation.lhs, relation.rhs])
    compare = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}[relation.relation]

    def test(values):
        lhs, rhs = fn(*(np.asarray(values[n], dtype=float) for n in names))
        return compare(np.asarray(lhs, dtype=float), np.asarray(rhs, dtype=float))

    test.names = frozenset(names)
    return test
