"""SD-GT Lemma 7, the unroll-recursion lemma (Lemma C.5 of K-GT, Lemma 15 of Koloskova et al.).

Seed 003, eq. (41), lines 693-700 (papers/sdgt.md 4.1). For any r0, b, e, u >= 0 there is a
constant step size gamma < 1/u such that

    Psi_T(gamma) = r0/(T gamma) + b gamma + e gamma^2
                 <= 2 sqrt(b r0 / T) + 2 e^{1/3} (r0/T)^{2/3} + u r0 / T.

The witness is gamma* = min{(r0/(b T))^{1/2}, (r0/(e T))^{1/3}, 1/u}. In the corollary proofs the
"gamma" of the lemma is the effective step K*gamma (papers/sdgt.md 4.1, flag F7).

The corollaries that apply the lemma to a theorem (:mod:`.cor1`, :mod:`.cor2`) build their
formulas with :func:`lemma7_form`, :func:`lemma7_witness`, :func:`min_cap` and
:func:`corollary_extras`.
"""
from __future__ import annotations

from typing import Sequence

import sympy as sp

from fedbound.theory.registry import register
from fedbound.theory.result import Result, StepCondition, Variant
from fedbound.theory.sdgt.common import K, b, e, r0, u, where
from fedbound.theory.symbols import POSITIVE, T, gamma

witness = sp.Min(sp.sqrt(r0 / (b * T)), sp.cbrt(r0 / (e * T)), 1 / u)
psi = r0 / (T * gamma) + b * gamma + e * gamma ** 2
rhs = 2 * sp.sqrt(b * r0 / T) + 2 * sp.cbrt(e) * (r0 / T) ** sp.Rational(2, 3) + u * r0 / T

LEMMA7 = register(Result(
    id="sdgt.lemma7",
    title="Lemma 7 (unroll-recursion lemma)",
    statement="For r0, b, e, u >= 0 there is gamma < 1/u with r0/(T gamma) + b gamma + e gamma^2 "
              "<= 2 sqrt(b r0/T) + 2 e^(1/3) (r0/T)^(2/3) + u r0/T; witness gamma* = "
              "min{(r0/(bT))^(1/2), (r0/(eT))^(1/3), 1/u}.",
    provenance=where("(41)", "693-700"),
    assumptions=("r0, b, e, u >= 0", "T >= 1"),
    lhs="min over gamma < 1/u of r0/(T gamma) + b gamma + e gamma^2",
    variants=[Variant(
        "printed", "as printed; the witness step size is the standard one of the cited lemma",
        bound=rhs,
        extras={"witness": witness, "psi_at_witness": psi.subs(gamma, witness)})],
    requires={"r0": (POSITIVE, "r0 > 0: the witness step is 0 when r0 = 0 and psi 0/0")},
))


# Lemma 7 applied to a theorem (Corollaries 1 and 2) ----------------------------------------------
def min_cap(conditions: Sequence[StepCondition]) -> sp.Expr:
    """The min of the caps, unevaluated (sympy's pairwise simplification of Min is slow)."""
    return sp.Min(*(c.cap for c in conditions), evaluate=False)


def _at(expr: sp.Expr, *values: sp.Expr | float) -> sp.Expr:
    """``expr`` with the lemma's (r0, b, e, u) replaced by ``values``, simultaneously."""
    return expr.subs(dict(zip((r0, b, e, u), values)), simultaneous=True)


def lemma7_form(r0: sp.Expr | float, b: sp.Expr | float, e: sp.Expr | float,
                u: sp.Expr | float) -> sp.Expr:
    """Lemma 7's right-hand side 2 sqrt(b r0/T) + 2 e^(1/3) (r0/T)^(2/3) + u r0/T at (r0, b, e, u)."""
    return _at(rhs, r0, b, e, u)


def lemma7_witness(r0: sp.Expr | float, b: sp.Expr | float, e: sp.Expr | float,
                   u: sp.Expr | float) -> sp.Expr:
    """Lemma 7's witness step min{(r0/(bT))^(1/2), (r0/(eT))^(1/3), 1/u} at (r0, b, e, u)."""
    return sp.Min(*(_at(arg, r0, b, e, u) for arg in witness.args), evaluate=False)


def corollary_extras(theorem_bound: sp.Expr, eta: sp.Expr | float, cap: sp.Expr | float,
                     **lemma7_inputs: sp.Expr | float) -> dict:
    """Extras of a corollary: the step choice (eta = K gamma and gamma), Lemma 7's inputs, the
    theorem's cap on gamma, and the theorem's bound evaluated at the chosen step."""
    return {"eta": eta, "gamma": eta / K, **lemma7_inputs, "gamma_cap": cap,
            "theorem_bound_at_step": theorem_bound.subs(gamma, eta / K)}
