r"""One-step checks of SD-GT Lemmas 1-6: the measured left-hand side against the lemma's right-hand
side evaluated at the measured error quantities of the previous (or same) round.

Seed 003, (20)-(25) [L339-L383]; papers/sdgt.md 4.3 "Numerical checks for Lemmas 1-6": simulate
SD-GT on a heterogeneous quadratic with a step size that satisfies the conditions, estimate every
quantity by Monte Carlo over seeds (:mod:`fedbound.verify.quantities`), and verify each inequality
round by round, for the printed and the re-derived constants. The right-hand sides are the
registered theory results ``sdgt.lemma1`` .. ``sdgt.lemma6`` (their bound expressions, evaluated at
the measured quantities: ``X_t`` at round t, ``X_prev`` at round t-1).

Left-hand sides (:data:`LEMMA_LHS`): Lemma 1 bounds :math:`\mathcal{E}_{t+1}`, Lemma 2
:math:`\|\bar x_g^{t+1} - x^\star\|^2`, Lemma 3 :math:`\Delta_t`, Lemma 4 :math:`\mathcal{Y}_t`,
Lemma 5 :math:`\mathcal{Z}_t`, Lemma 6 :math:`\Gamma_t`.

Monte-Carlo error: both sides are estimates. The right-hand side is affine in the quantities, so
its half-width is :math:`\sum_j |c_j|\,h_j` (c_j its coefficients, h_j the quantities'
half-widths); a round holds when LHS_high <= RHS - that, and is violated when LHS_low exceeds
RHS + that (conservative union of the intervals).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from fedbound import validate
from fedbound.theory import get
from fedbound.verify.check import Check, bound_check
from fedbound.verify.quantities import ErrorQuantities

#: result id -> (quantity bounded, its round offset relative to the "_t" quantities)
LEMMA_LHS = {
    "sdgt.lemma1": ("E", 1), "sdgt.lemma2": ("R", 1), "sdgt.lemma3": ("Delta", 0),
    "sdgt.lemma4": ("Y", 0), "sdgt.lemma5": ("Z", 0), "sdgt.lemma6": ("Gamma", 0),
}
#: theory symbol stem -> field of ErrorQuantities
FIELD_OF = {"E": "E", "R": "D", "G": "G", "Delta": "Delta", "Gamma": "Gamma", "Y": "Y", "Z": "Z"}
SHIFTS = {"_t": 0, "_prev": -1}


def _quantity_symbols(names: list[str]) -> dict[str, tuple[str, int]]:
    """{theory constant name: (ErrorQuantities field, round shift)} for the measured quantities."""
    out = {}
    for name in names:
        for suffix, shift in SHIFTS.items():
            stem = name[: -len(suffix)]
            if name.endswith(suffix) and stem in FIELD_OF:
                out[name] = (FIELD_OF[stem], shift)
    return out


def lemma_check(result_id: str, quantities: ErrorQuantities, constants: dict,
                variant: str | None = None) -> Check:
    """Check one lemma variant over every round where all its quantities are measured.

    ``constants``: L, mu, K, gamma, sigma, p, q, n of the run
    (:func:`fedbound.theory.sdgt.adapter.constants`).
    """
    validate.one_of("result_id", result_id, tuple(LEMMA_LHS))
    result = get(result_id)
    v = result.variant(variant)
    names = result.constants(v.name)
    symbols = _quantity_symbols(names)
    lhs_field, lhs_shift = LEMMA_LHS[result_id]
    lhs_field = FIELD_OF[lhs_field]
    used = list(symbols.values()) + [(lhs_field, lhs_shift)]
    # rounds t (1-based) for which every used (field, shift) is available
    first = 1 - min(shift for _, shift in used)
    last = min(len(getattr(quantities, f).mean) - shift for f, shift in used)
    t = np.arange(first, last + 1)

    def at(field: str, shift: int, part: str = "mean") -> np.ndarray:
        return np.asarray(getattr(getattr(quantities, field), part))[t + shift - 1]

    # theory domains are nonnegative: clip rounding noise such as f(xbar) - f* = -1e-16
    values = {nm: np.maximum(at(f, s), 0.0) for nm, (f, s) in symbols.items()}
    fixed = {k: constants[k] for k in names if k not in symbols}
    evaluation = result.evaluate(v.name, **fixed, **values)
    rhs = np.asarray(evaluation.bound, dtype=float)
    rhs_half = np.zeros_like(rhs)
    for nm, (f, s) in symbols.items():       # affine in each quantity: coefficient = finite difference
        bumped = result.bound(v.name, **fixed, **{**values, nm: values[nm] + 1.0})
        coefficient = np.asarray(bumped, dtype=float) - rhs
        rhs_half += np.abs(coefficient) * (at(f, s, "high") - at(f, s, "mean"))
    lhs = getattr(quantities, lhs_field)[t + lhs_shift - 1]
    conditions = {k: bool(np.all(h)) for k, h in evaluation.conditions_hold.items()}
    return bound_check(
        result_id, lhs, rhs, predicted_halfwidth=rhs_half, variant=v.name, rounds=t,
        lhs_quantity=f"{lhs_field} at t{'+' + str(lhs_shift) if lhs_shift else ''}",
        conditions_hold=conditions, conditions_all_hold=all(conditions.values()),
        rhs_halfwidth=rhs_half)


def lemma_checks(quantities: ErrorQuantities, constants: dict,
                 result_ids: Sequence[str] = tuple(LEMMA_LHS)) -> list[Check]:
    """:func:`lemma_check` for every variant of every lemma in ``result_ids``."""
    return [lemma_check(rid, quantities, constants, name)
            for rid in result_ids for name in get(rid).variants]


__all__ = ["LEMMA_LHS", "lemma_check", "lemma_checks"]
