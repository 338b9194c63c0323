"""A result of a paper as one executable object.

A :class:`Result` holds an id (``"sdgt.thm3"``), the statement in words, provenance (seed file,
equation, lines), assumptions, the constants it uses, its known issues (the flags of the paper
notes), and one or more :class:`Variant` of its formulas (sympy expressions, the single source of
truth), and computes from them. Each job has its own module, and the methods of :class:`Result`
delegate to it:

* :mod:`fedbound.theory.variant`: the formulas: :class:`Variant` (bound, step-size conditions,
  predicates, extras), :class:`StepCondition`, :class:`Predicate`, :class:`Deferred` (a variant
  built on first use), :class:`Switch` and :func:`switch_variants`;
* :mod:`fedbound.theory.statement`: the statement (:class:`~fedbound.theory.statement.Statement`,
  the base of :class:`Result`: provenance, variants, scoped constants and their domains, the
  :class:`Preparation` of vector inputs) and the checking of inputs (:meth:`Result.check`);
* :mod:`fedbound.theory.evaluation`: numbers, the compiled expressions evaluated vectorized over
  arrays of constants (:meth:`Result.evaluate`, :meth:`Result.bound`) and exact values
  (:meth:`Result.exact`); an evaluation read against the result's :class:`Reference`
  (:mod:`fedbound.theory.reading`) and taken apart into its terms and sensitivities
  (:mod:`fedbound.theory.anatomy`);
* :mod:`fedbound.theory.stepsize`: solving for a step size (:meth:`Result.max_step`, implicit
  conditions included) or a number of rounds (:meth:`Result.rounds_to_eps`);
* :mod:`fedbound.theory.symbolic`: rates of the bound's terms (:meth:`Result.rate_exponents`) and
  LaTeX (:meth:`Result.latex`).

The audit of a paper's claims is :mod:`fedbound.theory.audit`.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np
import sympy as sp

from fedbound.argtypes import Positive, PositiveArray
from fedbound.display import Html, box, clip, details, fields, formula, table
from fedbound.theory import evaluation, stepsize, symbolic
from fedbound.theory import symbols as S
from fedbound.theory.evaluation import Evaluation
from fedbound.theory.reading import Reading, Reference
from fedbound.theory.statement import Flag, Preparation, Provenance, Statement, as_values
from fedbound.theory.stepsize import IMPLICIT_RTOL, ROUNDS_MAX, RoundsLimit, Rtol, StepSize
from fedbound.theory.tex import tex
from fedbound.theory.variant import (Deferred, Predicate, StepCondition, Switch, Variant,
                                      switch_variants)


class Result(Statement):
    """One result of a paper: statement, provenance, variants (see the module docstring)."""

    def __repr__(self) -> str:
        return clip(f"Result({self.id!r}, variants={list(self.variants)})")

    # -- numbers -------------------------------------------------------------------------------
    def evaluate(self, variant: str | None = None, partial: bool = False, **constants) -> Evaluation:
        """Bound, step-size caps, condition checks, predicates, extras and the bound's terms at
        ``constants`` (:func:`fedbound.theory.evaluation.evaluate`)."""
        return evaluation.evaluate(self, variant, partial, **constants)

    def bound(self, variant: str | None = None, **constants) -> np.ndarray:
        """Only the bound (:func:`fedbound.theory.evaluation.bound`)."""
        return evaluation.bound(self, variant, **constants)

    def exact(self, key: str = "bound", variant: str | None = None, **constants) -> sp.Expr:
        """Exact sympy value of expression ``key`` at rational constants
        (:func:`fedbound.theory.evaluation.exact`)."""
        return evaluation.exact(self, key, variant, **constants)

    # -- solving -------------------------------------------------------------------------------
    def max_step(self, variant: str | None = None, variable: str | None = None,
                 rtol: Rtol = IMPLICIT_RTOL, later: Iterable[str] | str = (),
                 **constants) -> StepSize:
        """The largest admissible value of ``variable`` and the binding condition (a
        :class:`~fedbound.theory.stepsize.StepSize`); ``later``: step variables chosen afterwards
        (:func:`fedbound.theory.stepsize.max_step`)."""
        return stepsize.max_step(self, variant, variable, rtol, later, **constants)

    def rounds_to_eps(self, eps: Positive | PositiveArray, /, variant: str | None = None,
                      t_max: RoundsLimit = ROUNDS_MAX, **constants) -> float | np.ndarray:
        """Smallest number of rounds with bound <= eps (:func:`fedbound.theory.stepsize.rounds_to_eps`)."""
        return stepsize.rounds_to_eps(self, eps, variant, t_max, **constants)

    # -- symbolic ------------------------------------------------------------------------------
    def rate_exponents(self, variant: str | None = None, in_symbol: str | None = None) -> dict[str, object]:
        """The exponent in the rounds of each term of the bound
        (:func:`fedbound.theory.symbolic.rate_exponents`)."""
        return symbolic.rate_exponents(self, variant, in_symbol)

    def latex(self, variant: str | None = None) -> str:
        """The formulas in LaTeX (:func:`fedbound.theory.symbolic.latex`)."""
        return symbolic.latex(self, variant)

    # -- shown in a notebook (:mod:`fedbound.display`) -------------------------------------------
    def _repr_latex_(self) -> str:
        return self.variant()._repr_latex_()

    def _repr_html_(self) -> str:
        """The statement, the default variant's bound and conditions in the papers' notation, what
        the bound bounds, its reference, assumptions, source, constants, variants and flags."""
        v = self.variant()
        labels = {"bound": f"bound [{v.name}]", "conditions": "step conditions",
                  "predicates": "conditions", "extras": "states"}
        rows: list[tuple[str, object]] = [("bounds", self.lhs)] if self.lhs else []
        rows += [(labels[kind], Html("<br/>".join(formula(f).text for f in parts)))
                 for kind, parts in v.formulas().items() if parts]
        rows += [("reference", self.reference.describe())] if self.reference is not None else []
        rows += [("measured as", f"{self.measure.describe()} ({self.measure.name})")] \
            if self.measure is not None else []
        rows += [("assumptions", "; ".join(self.assumptions) or "none"), ("source", str(self.provenance))]
        parts: list[Html | str] = [self.statement, fields(rows)]
        if v.bound is None and v.bound_shown:   # the matrices the written bound names (A, b)
            parts.append(details("where", [formula(f"{name} = {tex(e)}") for name, e in v.extras.items()
                                           if isinstance(e, sp.MatrixBase) and name.isalpha()]))
        names = v.constants()
        parts.append(details(f"{len(names)} constants", [table(
            ["constant", "", "meaning", "domain"],
            [[n, formula(tex(S.resolve(n, self.scope).symbol)), S.resolve(n, self.scope).meaning,
              self.domain(n)[0].describe()] for n in names])]))
        parts.append(Html(self.variants._repr_html_()))
        if self.known_issues:
            parts.append(details(f"{len(self.known_issues)} known issues (flags of the paper notes)",
                                 [table(["flag", "issue"], [[f.id, f.text] for f in self.known_issues])]))
        return box(f"{self.id}: {self.title}", parts).text


__all__ = ["Provenance", "Flag", "StepCondition", "Predicate", "Variant", "Deferred", "Switch",
           "switch_variants", "Preparation", "Evaluation", "Reading", "Reference", "Result", "StepSize",
           "as_values", "IMPLICIT_RTOL"]
