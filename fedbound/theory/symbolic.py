"""Symbolic reading of a result: the rate of each term of its bound, and its formulas in LaTeX
(:mod:`fedbound.theory.tex` writes them in the papers' notation)."""
from __future__ import annotations

import sympy as sp

from fedbound.errors import ValidationError
from fedbound.theory import symbols as S
from fedbound.theory.statement import Statement


def rate_exponents(result: Statement, variant: str | None = None,
                   in_symbol: str | None = None) -> dict[str, object]:
    """For each additive term of the bound, its exponent in ``in_symbol`` (default: the rounds
    variable; a sympy number), or ``"geometric"`` for terms like ``c**T``."""
    v = result.variant(variant)
    if v.bound is None:
        raise ValidationError(f"{result.id} ({v.name}) states no bound")
    t = S.resolve(in_symbol or result.rounds, result.scope).symbol
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


def latex(result: Statement, variant: str | None = None) -> str:
    """The bound, each condition (with its variable) and each predicate in LaTeX, in the papers'
    notation (:mod:`fedbound.theory.tex`); a result that states none of these, its extras
    (:meth:`fedbound.theory.variant.Variant.formulas`)."""
    return r" \quad ".join(f for part in result.variant(variant).formulas().values() for f in part)


__all__ = ["rate_exponents", "latex"]
