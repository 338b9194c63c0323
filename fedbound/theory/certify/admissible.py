"""Admissibility in exact and symbolic arithmetic (issue 32).

The audit excludes every sampled point that its result does not admit
(:meth:`fedbound.theory.statement.Statement.admissible`, in floats). A refutation must be admissible
exactly, and a proof may assume admissibility; :func:`requirements` states the same three rules as
conditions on exact or symbolic values (sympy): each given scalar constant in its domain for the
result (declared, narrowed by ``requires``; an integer domain an integrality requirement), the order
relations of :data:`fedbound.theory.symbols.ORDER_RELATIONS`, and the result's own ``relations``
whose constants are all given. :func:`check` decides them at exact numbers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import sympy as sp

from fedbound.theory import symbols as S
from fedbound.theory.certify.trace import decide, is_integer_number
from fedbound.theory.registry import RESULTS

_COMPARE = {"<=": sp.Le, "<": sp.Lt, ">=": sp.Ge, ">": sp.Gt}


@dataclass(frozen=True)
class Requirement:
    """One condition of admissibility: ``relation`` (a sympy relation between values), or
    ``integer`` (a value that must be an integer); ``name`` says which rule it is."""

    name: str
    relation: sp.Basic | None = None
    integer: sp.Basic | None = None


def requirements(result_id: str, constants: Mapping[str, sp.Basic]) -> list[Requirement]:
    """The conditions under which ``result_id`` admits ``constants`` (short name -> sympy value of
    each scalar constant; module doc); none for a claim about a formula of a proof (a result id
    that is not registered)."""
    if result_id not in RESULTS:
        return []
    result = RESULTS.get(result_id)
    seen = S.visible(result.scope)
    values = {k: v for k, v in constants.items() if k in seen and not seen[k].ndim}
    out = []
    for name, v in values.items():
        domain, _ = result.domain(name)
        where = f"{name} in {domain.describe()}"
        if math.isfinite(domain.low):
            low = sp.Rational(domain.low)
            out.append(Requirement(where, (sp.Gt if domain.low_open else sp.Ge)(v, low, evaluate=False)))
        if math.isfinite(domain.high):
            high = sp.Rational(domain.high)
            out.append(Requirement(where, (sp.Lt if domain.high_open else sp.Le)(v, high, evaluate=False)))
        if domain.integer:
            out.append(Requirement(where, integer=v))
    keyed = {seen[name].key: name for name in values}
    for small, large in S.ORDER_RELATIONS:
        if small in keyed and large in keyed:
            a, b = keyed[small], keyed[large]
            out.append(Requirement(f"{a} <= {b}", sp.Le(values[a], values[b], evaluate=False)))
    for relation in result.relations:
        symbols = relation.lhs.free_symbols | relation.rhs.free_symbols
        names = {S.short_name(s): s for s in symbols}
        if set(names) <= set(values):
            mapping = {s: values[nm] for nm, s in names.items()}
            out.append(Requirement(str(relation), _COMPARE[relation.relation](
                relation.lhs.xreplace(mapping), relation.rhs.xreplace(mapping), evaluate=False)))
    return out


def check(result_id: str, constants: Mapping[str, sp.Basic]) -> tuple[bool, list[str]]:
    """Whether ``result_id`` admits the exact ``constants``, and the rules they break."""
    broken = []
    for req in requirements(result_id, constants):
        if req.integer is not None:
            good = not req.integer.free_symbols and is_integer_number(req.integer)
        else:
            good = decide(req.relation)
        if not good and req.name not in broken:
            broken.append(req.name)
    return not broken, broken


__all__ = ["Requirement", "requirements", "check"]
