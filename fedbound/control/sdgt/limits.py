r"""Which limits a controller plan sits on, and what raising each would buy.

The plan of (31) (:func:`fedbound.control.sdgt.integer.plan`) chooses K in 1..K_cap and h_s in
1..m_s. Where the optimum sits on one of these limits the plan says so (:class:`Limit`):

* ``K <= K_cap``: K = K_cap, the cap on D2D rounds binds (the objective would still fall with more);
* ``K >= 1``: K = 1, the fewest D2D rounds (with K_cap > 1);
* ``every device sampled``: h_s = m_s in every subnet, p = 1, the limits u <= 1 and p <= 1 bind;
* ``h_s >= 1``: a subnet samples a single device (m_s > 1), its floor.

(31) weighs energy in its objective (lambda3 times the energy per round, [L425-L430]); it has no
energy budget, so no energy limit can bind.

What a limit is worth comes from the continuous relaxation's dual values (:mod:`fedbound.control.sdgt.gp`,
module docstring): the dual lambda of a constraint posynomial/limit <= 1 is the elasticity
-d log J*/d log(limit), so relaxing the limit by 1% lowers the relaxation's optimum J* by
lambda %, and for K_cap the marginal gain is dJ*/dK_cap = -lambda J*/K_cap. The limit of full
participation is two constraints (u <= 1 and p <= 1) that bind together; its worth is the sum of
their duals (both relaxed by the same factor). For K_cap the integer plan's own change when the
cap moves by one, J_int(K_cap + 1) - J_int(K_cap), is computed as well. The reduced route
(``method="reduced"``) gives no dual values: the limits are named, their worth is None.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from fedbound.control.sdgt.gp import ContinuousSolution
from fedbound.control.sdgt.objective import ControlProblem
from fedbound.readout import number


@dataclass(frozen=True)
class Limit:
    """A limit the plan sits on: its ``name`` (module doc), ``where`` in words, the GP ``dual``
    (elasticity -d log J*/d log limit; None without one), ``marginal`` the change of the
    relaxation's optimum per unit of the limit (dJ*/d limit; None where a unit means nothing, as
    for the sampling limits), ``integer_step`` the integer plan's objective change when the limit
    moves by one unit (computed for K_cap; None otherwise) and ``words``."""

    name: str
    where: str
    dual: float | None
    marginal: float | None
    integer_step: float | None
    words: str

    def to_dict(self) -> dict:
        return {"name": self.name, "where": self.where, "dual": self.dual, "marginal": self.marginal,
                "integer_step": self.integer_step, "words": self.words}

    def __repr__(self) -> str:
        return f"Limit({self.name}: {self.where}, dual {self.dual if self.dual is None else number(self.dual, 3)})"


def _percent(dual: float | None, what: str) -> str:
    """``1% more K_cap would lower the relaxation's optimum by 0.0306%`` (or why it is unknown)."""
    if dual is None:
        return "(no dual value: the reduced route; --method gp gives it)"
    return f"1% more {what} would lower the relaxation's optimum by {number(dual, 3)}%"


def active_limits(problem: ControlProblem, K: int, h: tuple, objective: float,
                  continuous: ContinuousSolution,
                  integer_value: Callable[[ControlProblem], float]) -> tuple[Limit, ...]:
    """The limits the integer plan (K, h) with objective ``objective`` sits on (module doc), their
    worth from ``continuous``'s duals, and for K_cap the integer optimum at K_cap + 1
    (``integer_value(problem)`` is the integer optimum's objective of a problem)."""
    duals, m = continuous.duals, problem.spec.m
    J = continuous.value
    out = []
    if K == problem.K_cap:
        dual = duals.get("K <= K_cap")
        step = integer_value(replace(problem, K_cap=problem.K_cap + 1)) - objective
        marginal = None if dual is None else -dual * J / problem.K_cap
        out.append(Limit("K <= K_cap", f"K = K_cap = {problem.K_cap}", dual, marginal, step,
                         f"K sits on its cap K_cap = {problem.K_cap}: raising the cap by one changes the "
                         f"plan's objective by {number(step, 3)}; {_percent(dual, 'K_cap')}"))
    if K == 1 and problem.K_cap > 1:
        dual = duals.get("K >= 1")
        out.append(Limit("K >= 1", "K = 1", dual, None, None,
                         f"K sits at its floor of one D2D round; "
                         f"{_percent(dual, 'room below K = 1')}"))
    if all(int(hs) == int(ms) for hs, ms in zip(h, m)):
        parts = [duals.get(name) for name in ("u <= 1", "p <= 1")]
        known = [np.sum(v) for v in parts if v is not None]
        dual = float(sum(known)) if len(known) == len(parts) else None
        out.append(Limit("every device sampled", "h_s = m_s in every subnet, p = 1", dual, None, None,
                         f"every device is sampled (p = 1): the sampling limits u <= 1 and p <= 1 "
                         f"bind; {_percent(dual, 'participation, were it possible,')}"))
    floor = [s for s, (hs, ms) in enumerate(zip(h, m)) if int(hs) == 1 and int(ms) > 1]
    if floor:
        per_subnet = duals.get("h_s >= 1")
        dual = None if per_subnet is None else float(np.sum(np.asarray(per_subnet)[floor]))
        out.append(Limit("h_s >= 1", f"h_s = 1 in subnet(s) {', '.join(map(str, floor))}", dual, None,
                         None, f"subnet(s) {', '.join(map(str, floor))} sample a single device, the "
                               f"floor h_s >= 1; "
                               + (_percent(dual, 'room below one device') if per_subnet is not None
                                  else "(its dual is in the per-subnet GP form only)")))
    return tuple(out)


__all__ = ["Limit", "active_limits"]
