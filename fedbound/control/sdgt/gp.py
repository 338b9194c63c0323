"""Problem (31) of SD-GT as an exact geometric program (cvxpy DGP with Parameters), in two forms.

Seed 003, (31) [L425-L430] and the GP remark [L448]; reformulation of sdgt.md 5.4 (flag F28):
with u_s = 1 - beta_s the relaxed constraint p <= min_s (1 - beta_s^2) becomes the posynomial
inequality p/(2 u_s) + u_s/2 <= 1. Coefficients a1, a2, a3, e, lambda3 come from
:func:`fedbound.control.sdgt.objective.terms`; K >= 1 and K <= K_cap are not in the paper (F27).

Form ``"per_subnet"``, the literal GP of sdgt.md 5.4 (variables K, p, u_1..u_S; about 3S + 4
exponential cones)::

    minimize   a1 p^-2 + a2 K^-1/2 + a3 K^-e p^-4/3 + sum_s (lambda3 E_s) u_s + (lambda3 sum_s E_s^D2D) K
    subject to p/(2 u_s) + u_s/2 <= 1,  1/(m_s u_s) <= 1,  u_s <= 1   (s = 1..S)
               p <= 1,  1/K <= 1,  K/K_cap <= 1

Form ``"grouped"``, the default (variables K, p, v; one energy term per distinct subnet size m
with C_m = lambda3 sum_{s: m_s = m} E_s > 0, so G <= min(S, number of distinct sizes) terms and
about G + 6 exponential cones)::

    minimize   a1 p^-2 + a2 K^-1/2 + a3 K^-e p^-4/3 + sum_m C_m max(v, 1/m) + (lambda3 sum_s E_s^D2D) K
    subject to p/(2 v) + v/2 <= 1,  v <= 1,  p <= 1,  1/K <= 1,  K/K_cap <= 1

returning u_s = max(v, 1/m_s). The max of a log-log affine variable and a positive Parameter is
log-log convex, so this is a DGP as well (and DPP).

The two forms are equivalent. Let g(x) = x (2 - x), strictly increasing on (0, 1], and for
0 < p <= 1 let v(p) = 1 - sqrt(1 - p), the x in (0, 1] with g(x) = p; for x in (0, 1],
p/(2x) + x/2 <= 1  <=>  g(x) >= p  <=>  x >= v(p). Write J for the per-subnet objective and
G for the grouped one (they share every term but the energy sum).

(a) If (K, p, v) is feasible for the grouped form, then v >= v(p) (its first constraint, v <= 1)
    and u_s = max(v, 1/m_s) lies in (0, 1] (m_s >= 1) with u_s >= v(p) and u_s >= 1/m_s, so
    (K, p, u) meets every per-subnet constraint; and
    J(K, p, u) = G(K, p, v), because sum_s lambda3 E_s max(v, 1/m_s) sums, size by size, to
    sum_m C_m max(v, 1/m) (sizes with C_m = 0 add nothing).
(b) If (K, p, u) is feasible for the per-subnet form, then u_s >= v(p) and u_s >= 1/m_s, i.e.
    u_s >= max(v(p), 1/m_s); J depends on u only through lambda3 sum_s E_s u_s, nondecreasing in
    every u_s (E_s >= 0), so J(K, p, u) >= G(K, p, v(p)), and (K, p, v(p)) is grouped-feasible
    (v(p) <= 1, g(v(p)) = p).

Hence both forms have the same optimal value, and an optimum (K, p, v) of the grouped form gives
the optimum (K, p, max(v, 1/m_s)) of (31): subnets of equal size share one u. A subnet with
E_s = 0 is optimal anywhere in [max(v(p), 1/m_s), 1]; the grouped form returns max(v, 1/m_s),
the per-subnet form whatever its solver lands on. Tests compare the forms on random instances.

All data enter as ``cp.Parameter(pos=True)``, so both forms are DPP (``is_dgp(dpp=True)``): a
form is compiled once per key and a re-solve only assigns values. A positive Parameter cannot
be 0, so a zero cost drops its monomial from the compiled problem, and the key records which
costs are zero: per_subnet (S, e, pattern of E_s = 0, sum_s E_s^D2D = 0?); grouped (number of
sizes with C_m > 0, e, sum_s E_s^D2D = 0?), a zero-cost size having neither term nor constraint.

Every solve is checked. Status policy: ``optimal`` is accepted; ``optimal_inaccurate`` is
accepted only under the same constraint check and is reported in ``status`` (the integer
decision never depends on it: :mod:`fedbound.control.sdgt.integer` certifies it by enumeration, and
:func:`fedbound.control.sdgt.integer.plan` rejects a relaxation value above the integer optimum);
any other status raises :class:`~fedbound.errors.SolverError`, as does a violation above
VIOLATION_TOL of a compiled constraint at the solver's point or of a constraint of (31) at the
returned per-subnet point (:func:`fedbound.control.sdgt.objective.constraint_violation`; constraints
are all of the form posynomial <= 1, so this is a relative tolerance). The returned point is the
solver's projected onto the box 1 <= K <= K_cap, p <= 1, u_s <= 1, which the solver meets only to
its tolerance (a p of 1 + 2e-10 was seen); the projection keeps the other constraints
(:func:`_checked_solve`). With the default solver a rejected attempt is
first retried with the Clarabel settings of CLARABEL_RETRIES; the solver, form and settings
used are reported in ``settings``. Integer decisions are never modelled inside the GP: a
finite-set constraint is silently relaxed by cvxpy when no mixed-integer solver is chosen
(anchors.md 4.3).

Dual values. Every constraint is written as posynomial / limit <= 1, and cvxpy solves the GP in
log variables, so the dual value lambda_i of constraint i is the elasticity of the optimum to its
limit: relaxing the limit by the factor e^delta lowers log J* by lambda_i delta to first order,
lambda_i = -d log J* / d log(limit_i) (for K <= K_cap: -d log J*/d log K_cap, checked against
J* at K_cap +- 1 and against the envelope derivative -K dJ/dK / J at K = K_cap by the tests).
:attr:`ContinuousSolution.duals` holds them by :data:`CONSTRAINTS` name; what binds and what raising
a limit would buy is read from them by :mod:`fedbound.control.sdgt.limits`.

The compiled problems are shared module state: do not solve from several threads at once.
"""
from __future__ import annotations

import functools
import time
import warnings
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np

from fedbound.control.sdgt.objective import ControlProblem, constraint_violation, objective
from fedbound.display import brief
from fedbound.errors import SolverError, UnknownNameError

#: largest accepted constraint violation (constraints are posynomial <= 1)
VIOLATION_TOL = 1e-6
ACCEPTED_STATUSES = ("optimal", "optimal_inaccurate")
#: Clarabel settings tried in turn by :func:`solve_gp` when called with the defaults
CLARABEL_RETRIES = ({}, {"max_step_fraction": 0.9}, {"equilibrate_enable": False})
#: the two exact DGP forms of (31) (module docstring); the first is the default
FORMS = ("grouped", "per_subnet")
#: the constraints of both forms by name, in the order they are built (the per-subnet form adds
#: "h_s >= 1", u_s >= 1/m_s); "u <= 1" and "h_s >= 1" are per subnet in the per-subnet form
CONSTRAINTS = ("p <= u (2 - u)", "u <= 1", "p <= 1", "K >= 1", "K <= K_cap")


@dataclass(frozen=True, eq=False)
class ContinuousSolution:
    """Optimum of the continuous relaxation of (31): K, p, u (shape (S,)) and the objective
    ``value`` (recomputed by :func:`fedbound.control.sdgt.objective.objective` at the returned point),
    the ``method`` ("gp" or "reduced"), the solver ``status``, the largest constraint violation,
    the wall time of the solve in seconds, the solver ``settings`` that produced it and the
    ``duals`` of the constraints by :data:`CONSTRAINTS` name (module docstring: the elasticity
    -d log J*/d log(limit); a list per subnet for the per-subnet constraints; empty for a route
    without duals)."""

    K: float
    p: float
    u: np.ndarray
    value: float
    method: str
    status: str
    max_violation: float
    seconds: float
    settings: str = ""
    duals: dict = field(default_factory=dict)

    @property
    def beta(self) -> np.ndarray:
        """beta_s = 1 - u_s, the unsampled fractions of the paper."""
        return 1.0 - self.u

    @property
    def slack(self) -> float:
        """min_s u_s (2 - u_s) - p: 0 when the relaxation of p = min_s(1 - beta_s^2) is tight."""
        return float(np.min(self.u * (2.0 - self.u)) - self.p)

    def __repr__(self) -> str:
        return brief("ContinuousSolution", K=self.K, p=self.p, u=self.u, value=self.value,
                     method=self.method, status=self.status)

    def to_dict(self) -> dict:
        return {"K": self.K, "p": self.p, "u": self.u.tolist(), "value": self.value,
                "method": self.method, "status": self.status,
                "max_violation": self.max_violation, "seconds": self.seconds,
                "settings": self.settings, "duals": dict(self.duals)}


class _CompiledGP:
    """The DGP of the module docstring in ``form``, one objective for both forms. ``positive``
    has one entry per modelled fraction, True where it carries an energy term: per_subnet, one
    per subnet (u_s, True where E_s > 0); grouped, one per size with C_m > 0 (max(v, 1/m), all
    True)."""

    def __init__(self, form: str, k_exp: float, positive: tuple, d2d_positive: bool):
        self.form = form
        self.K = cp.Variable(pos=True, name="K")
        self.p = cp.Variable(pos=True, name="p")
        if form == "per_subnet":
            self.x = cp.Variable(len(positive), pos=True, name="u")   # u_1..u_S
        else:
            self.x = cp.Variable(pos=True, name="v")                  # the common sampled fraction
        self.a1, self.a2, self.a3 = (cp.Parameter(pos=True, name=n) for n in ("a1", "a2", "a3"))
        self.inv_m = cp.Parameter(len(positive), pos=True, name="inv_m") if positive else None
        self.inv_K_cap = cp.Parameter(pos=True, name="inv_K_cap")
        K, p, x = self.K, self.p, self.x
        cost = self.a1 * p ** -2 + self.a2 * K ** -0.5 + self.a3 * K ** (-k_exp) * p ** (-4.0 / 3.0)
        self.cE = self.cD = None
        if any(positive):
            self.cE = cp.Parameter(sum(positive), pos=True, name="lam3_E")
            sampled = x[np.flatnonzero(positive)] if form == "per_subnet" else cp.maximum(x, self.inv_m)
            cost = cost + cp.sum(cp.multiply(self.cE, sampled))
        if d2d_positive:
            self.cD = cp.Parameter(pos=True, name="lam3_E_d2d_sum")
            cost = cost + self.cD * K
        self.constraints = [
            0.5 * p * x ** -1 + 0.5 * x <= 1,          # p <= x (2 - x) = 1 - beta^2
            x <= 1,                                    # beta >= 0
            p <= 1,
            K ** -1 <= 1,                              # K >= 1
            self.inv_K_cap * K <= 1,                   # K <= K_cap
        ]
        if form == "per_subnet":
            self.constraints.append(cp.multiply(self.inv_m, x ** -1) <= 1)   # u_s >= 1/m_s (h_s >= 1)
        self.problem = cp.Problem(cp.Minimize(cost), self.constraints)
        if not self.problem.is_dgp(dpp=True):  # a modelling bug, not a user error
            raise SolverError(f"the controller GP ({form} form, {len(positive)} fractions) "
                              "is not DPP-compliant DGP")

    def assign(self, problem: ControlProblem, inv_m: np.ndarray, cost: np.ndarray) -> None:
        t = problem.terms
        self.a1.value, self.a2.value, self.a3.value = t.a1, t.a2, t.a3
        self.inv_K_cap.value = 1.0 / problem.K_cap
        if self.inv_m is not None:
            self.inv_m.value = inv_m
        if self.cE is not None:
            self.cE.value = cost
        if self.cD is not None:
            self.cD.value = t.lam3 * problem.E_d2d_sum

    def duals(self) -> dict:
        """The dual value of each constraint by :data:`CONSTRAINTS` name (module docstring), a float,
        or a list per subnet for a vector constraint; None where the solver returned none."""
        names = CONSTRAINTS + (("h_s >= 1",) if self.form == "per_subnet" else ())
        out = {}
        for name, c in zip(names, self.constraints):
            value = c.dual_value
            out[name] = None if value is None else (
                float(np.asarray(value).reshape(())) if c.shape == () else
                np.asarray(value, dtype=float).reshape(-1).tolist())
        return out

    def sampled_fractions(self, problem: ControlProblem) -> np.ndarray | None:
        """Per-subnet u (shape (S,)) of the solution, u_s = max(v, 1/m_s) in the grouped form;
        None when the solver returned no values."""
        if self.x.value is None:
            return None
        if self.form == "per_subnet":
            return np.array(self.x.value, dtype=float).reshape(-1)
        return np.maximum(float(self.x.value), 1.0 / problem.spec.m.astype(float))


@functools.lru_cache(maxsize=32)
def _compiled(form: str, k_exp: float, positive: tuple, d2d_positive: bool) -> _CompiledGP:
    return _CompiledGP(form, k_exp, positive, d2d_positive)


def _for(problem: ControlProblem, form: str) -> tuple[_CompiledGP, np.ndarray, np.ndarray]:
    """The compiled problem for ``problem`` in ``form`` and its data: 1/m of each modelled fraction
    and lambda3 * cost of those with a positive cost. Grouped: the sizes m with
    C_m = sum_{s: m_s = m} E_s > 0 (zero-cost sizes have no term and no constraint)."""
    if form not in FORMS:
        raise UnknownNameError(f"unknown GP form {form!r}; valid: {', '.join(FORMS)}")
    spec = problem.spec
    if form == "per_subnet":
        sizes, E = spec.m, spec.E
    else:
        sizes, group = np.unique(spec.m, return_inverse=True)
        E = np.bincount(group, weights=spec.E, minlength=sizes.size)
        sizes, E = sizes[E > 0], E[E > 0]
    positive = E > 0
    gp = _compiled(form, problem.terms.k_exp, tuple(positive.tolist()), bool(problem.E_d2d_sum > 0))
    return gp, 1.0 / sizes.astype(float), problem.terms.lam3 * E[positive]


def compiled_gp(problem: ControlProblem, form: str = "grouped") -> cp.Problem:
    """The cached cvxpy problem used for ``problem`` in ``form`` (for inspection:
    ``is_dgp(dpp=True)``)."""
    return _for(problem, form)[0].problem


def solve_gp(problem: ControlProblem, solver: str = cp.CLARABEL, *, form: str = "grouped",
             **solver_options) -> ContinuousSolution:
    """Solve the continuous relaxation of (31) as a DGP in ``form`` ("grouped", the default, or
    "per_subnet"; module docstring) and check the answer. ``solver`` needs the exponential cone
    (CLARABEL, SCS, ...); ``solver_options`` go to it.

    With the default (CLARABEL, no options) a failed or rejected attempt is retried with the
    settings in CLARABEL_RETRIES (Clarabel can stop with InsufficientProgress on rare instances;
    benchmarks/bench_controller.py met one at S = 100). Raises SolverError (one line) when every
    attempt fails, returns a status other than optimal/optimal_inaccurate, or returns a point
    violating a constraint by more than VIOLATION_TOL; UnknownNameError for an unknown form."""
    gp, inv_m, cost = _for(problem, form)
    gp.assign(problem, inv_m, cost)
    default = solver == cp.CLARABEL and not solver_options
    attempts = CLARABEL_RETRIES if default else (solver_options,)
    start = time.perf_counter()
    for i, options in enumerate(attempts):
        try:
            return _checked_solve(gp, problem, solver, options, start)
        except SolverError as exc:
            if i + 1 == len(attempts):
                more = f" (after {len(attempts)} settings)" if len(attempts) > 1 else ""
                raise SolverError(f"{exc}{more}") from None


def _checked_solve(gp: _CompiledGP, problem: ControlProblem, solver: str, options: dict,
                   start: float) -> ContinuousSolution:
    where = f"S={problem.spec.S}, {gp.form} form"
    try:
        with warnings.catch_warnings():  # an inaccurate solve is reported through `status`
            warnings.simplefilter("ignore", UserWarning)
            gp.problem.solve(gp=True, solver=solver, warm_start=False, **options)
    except cp.error.SolverError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SolverError(f"GP solver {solver} failed ({where}): {first}") from None
    status = gp.problem.status
    if status not in ACCEPTED_STATUSES:
        raise SolverError(f"GP solve returned status {status!r} ({where}); "
                          f"accepted: {', '.join(ACCEPTED_STATUSES)}")
    u = gp.sampled_fractions(problem)
    if gp.K.value is None or gp.p.value is None or u is None:
        raise SolverError(f"GP solve returned status {status!r} but no solution values ({where})")
    # The solver meets the box bounds 1 <= K <= K_cap, p <= 1, u_s <= 1 only to its tolerance;
    # the returned point is projected onto them. That keeps every other constraint: lowering p
    # loosens p/(2u_s) + u_s/2 <= 1, and for p <= 1 so does lowering u_s >= 1 to 1 (the left
    # side grows in u_s on u_s >= 1); u_s >= 1/m_s holds at u_s = 1. Callers get p in (0, 1].
    K = min(max(float(gp.K.value), 1.0), float(problem.K_cap))
    p, u = min(float(gp.p.value), 1.0), np.minimum(u, 1.0)
    # the compiled constraints at the solver's point, and those of (31) at the returned point
    violation = max(max(float(np.max(c.violation())) for c in gp.constraints),
                    constraint_violation(K, p, u, problem))
    if not violation <= VIOLATION_TOL:
        raise SolverError(f"GP solution violates a constraint by {violation:.3g} "
                          f"(tolerance {VIOLATION_TOL:g}, status {status!r}, {where})")
    settings = ", ".join(f"{k}={v}" for k, v in options.items()) or "default"
    return ContinuousSolution(K=K, p=p, u=u, value=float(objective(K, p, u, problem)), method="gp",
                              status=status, max_violation=violation,
                              seconds=time.perf_counter() - start,
                              settings=f"{solver} {gp.form}: {settings}", duals=gp.duals())
