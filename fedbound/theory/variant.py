"""The formulas of a result: a :class:`Variant` and its parts.

A variant is what a formula *is*: ``"printed"`` is the paper as printed, ``"rederived"`` is
re-derived from the paper's own lemmas where the notes show the printed constant is wrong (other
names, e.g. ``"main"``/``"appendix"``, where the paper itself prints two forms; variants generated
from independent :class:`Switch` es are named by their settings, see :func:`switch_variants`). Every
variant carries sympy expressions, the single source of truth:

* ``bound``: the right-hand side of the result (``None`` for pure step-size statements);
* ``conditions``: step-size conditions ``variable <= cap`` (or ``<``), each a
  :class:`StepCondition` naming its variable (gamma, eta, eta_l, ...); a cap may depend on its own
  variable (an *implicit* condition, solved numerically by :meth:`Result.max_step`);
* ``predicates``: conditions that are not step caps (``rho <= m/(m+n)``, ``beta1^2 < beta2``),
  each a :class:`Predicate` reported as holds / fails;
* ``extras``: further named expressions (witness step sizes, the D coefficients, the matrix A, ...),
  scalars or :class:`sympy.Matrix`;
* ``derived``: an optional numeric post-processing of the evaluated expressions (e.g. the norm of
  ``(I - A)^{-1} b``), for quantities that have no useful closed form;
* ``term_names``: names for groups of the bound's additive terms, ``{"Psi3/Psi6": Psi3/Psi6}``
  (:mod:`fedbound.theory.anatomy` shows a named group under its name, others as their formula);
* ``bound_shown``: where ``derived`` computes the bound (no closed sympy form), how it is written:
  parts summed, each a sympy expression or a LaTeX string (SD-GT Theorem 3: the transient
  (1 - mu K gamma/4)^T Lyap_1, a sympy expression, and the floor ||(I - A)^{-1} b||_1, a LaTeX
  string), for :meth:`Result.latex` and the notebook display.

Each expression is compiled once with :func:`sympy.lambdify` to numpy (:meth:`Variant.compiled`,
the generated code kept on disk by :mod:`fedbound.theory.compiled`). A variant whose expressions
take long to build may be given to its result as :class:`Deferred`: built on first use, so that a
command evaluating another variant does not pay for it.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np
import sympy as sp

from fedbound.display import Html, box, clip, fields, formula, latex_block
from fedbound.theory.compiled import lambdify
from fedbound.theory import symbols as S
from fedbound.theory.tex import relation, tex


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


@dataclass(frozen=True)
class Predicate:
    """A condition that is not a step cap, ``lhs relation rhs`` with relation one of <=, <, >=, >
    (e.g. AFGA's rho_max <= m/(m+n), beta1^2 < beta2, D < 1): reported as holds / fails."""

    name: str
    lhs: sp.Expr | float
    relation: str
    rhs: sp.Expr | float
    source: str = ""

    def __post_init__(self):
        if self.relation not in RELATIONS:
            raise S.DeclarationError(f"predicate {self.name}: relation must be one of "
                                     f"{', '.join(RELATIONS)}")
        object.__setattr__(self, "lhs", sp.sympify(self.lhs))
        object.__setattr__(self, "rhs", sp.sympify(self.rhs))

    def __str__(self) -> str:
        return f"{self.lhs} {self.relation} {self.rhs}"


@dataclass
class Variant:
    """One version of a result's formulas (see the module docstring). ``derived_needs`` names the
    extras the ``derived`` hook needs (partial evaluation calls it only when they are computed);
    ``settings`` are the switch settings of a generated variant (:func:`switch_variants`);
    ``term_names`` names groups of the bound's additive terms, ``bound_shown`` writes a bound that
    ``derived`` computes (module doc)."""

    name: str
    description: str
    bound: sp.Expr | None = None
    conditions: tuple[StepCondition, ...] = ()
    extras: Mapping[str, sp.Expr | sp.MatrixBase] = field(default_factory=dict)
    derived: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]] | None = None
    predicates: tuple[Predicate, ...] = ()
    derived_needs: tuple[str, ...] = ()
    settings: Mapping[str, str] = field(default_factory=dict)
    term_names: Mapping[str, sp.Expr] = field(default_factory=dict)
    bound_shown: tuple[sp.Expr | str, ...] = ()
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
            # entry, or constants broadcast against each other) fails; the evaluation
            # (evaluation._stack_matrix) broadcasts them
            target = expr.tolist() if isinstance(expr, sp.MatrixBase) else expr
            self._compiled[key] = (lambdify(symbols, target, cse=True),
                                   [S.short_name(s) for s in symbols])
        return self._compiled[key]

    # -- shown to a reader (:mod:`fedbound.theory.tex`, :mod:`fedbound.display`) ----------------
    def bound_tex(self) -> str:
        """The bound in LaTeX: the sympy bound, or the parts of ``bound_shown`` summed (a bound
        that ``derived`` computes); "" where the variant states no bound."""
        if self.bound is not None:
            return tex(self.bound)
        return " + ".join(part if isinstance(part, str) else tex(part) for part in self.bound_shown)

    def formulas(self) -> dict[str, list[str]]:
        """The variant's formulas in LaTeX by kind: ``bound`` (one, or none), ``conditions`` (each
        step condition with its variable), ``predicates``; a variant that states none of these
        gives its scalar ``extras`` as ``name = ...``."""
        out = {"bound": [self.bound_tex()] if self.bound is not None or self.bound_shown else [],
               "conditions": [relation(c.variable, c.relation, c.cap) for c in self.conditions],
               "predicates": [relation(pr.lhs, pr.relation, pr.rhs) for pr in self.predicates],
               "extras": []}
        if not any(out.values()):
            out["extras"] = [r"\mathrm{%s} = %s" % (name.replace("_", r"\_"), tex(e))
                             for name, e in self.extras.items() if not isinstance(e, sp.MatrixBase)]
        return out

    def __repr__(self) -> str:
        parts = ["a bound" if self.bound is not None else "a computed bound" if self.derived
                 else "no bound"]
        parts += [f"{len(self.conditions)} step conditions"] if self.conditions else []
        parts += [f"{len(self.predicates)} predicates"] if self.predicates else []
        parts += [f"extras {', '.join(self.extras)}"] if self.extras else []
        return clip(f"Variant({self.name}: {'; '.join(parts)})")

    def _repr_latex_(self) -> str:
        return latex_block([f for part in self.formulas().values() for f in part])

    def _repr_html_(self) -> str:
        shown = self.formulas()
        rows = [(kind, Html("<br/>".join(formula(f).text for f in shown[kind])))
                for kind in shown if shown[kind]]
        if self.extras:
            rows.append(("extras", ", ".join(self.extras)))
        return box(f"variant {self.name}", [self.description, fields(rows)]).text


@dataclass(frozen=True)
class Deferred:
    """The variant ``name``, built by ``build()`` when the result first hands it out (sympy takes
    milliseconds per expression, and a command evaluates one variant of one result)."""

    name: str
    build: Callable[[], Variant]


@dataclass(frozen=True)
class Switch:
    """A named, independent choice in a result (e.g. one correction of a bound): ``options`` maps
    each option to what it means, ``printed`` is the option the paper prints."""

    name: str
    options: Mapping[str, str]
    printed: str

    def __post_init__(self):
        if self.printed not in self.options or len(self.options) < 2:
            raise S.DeclarationError(f"switch {self.name}: needs >= 2 options, one of them "
                                     f"printed={self.printed!r}")


def switch_variants(switches: Sequence[Switch], build: Callable[[dict[str, str]], dict],
                    description: str = "") -> list[Variant]:
    """One :class:`Variant` per combination of the switches' options (2 x 2 x 2 x 2 = 16 for four
    binary switches). ``build(settings)`` returns the variant's fields (bound, conditions, extras,
    ...) for ``settings`` = {switch: option}. The all-printed combination is named ``"printed"``;
    every other one by the switches that differ from print, ``"bias=corrected,delay=rederived"``
    (in switch order). Each description lists every switch setting with its meaning."""
    names = [s.name for s in switches]
    if len(set(names)) != len(names):
        raise S.DeclarationError(f"switch names must be distinct: {names}")
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


__all__ = ["StepCondition", "RELATIONS", "Predicate", "Variant", "Deferred", "Switch",
           "switch_variants"]
