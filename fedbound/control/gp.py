"""Problem (31) of SD-GT as an exact geometric program (cvxpy DGP with Parameters).

Seed 003, (31) [L425-L430] and the GP remark [L448]; reformulation of sdgt.md 5.4 (flag F28):
with u_s = 1 - beta_s the relaxed constraint p <= min_s (1 - beta_s^2) becomes the posynomial
inequality p/(2 u_s) + u_s/2 <= 1, and the problem reads

    minimize   a1 p^-2 + a2 K^-1/2 + a3 K^-e p^-4/3 + sum_s (lambda3 E_s) u_s + (lambda3 sum_s E_s^D2D) K
    subject to p/(2 u_s) + u_s/2 <= 1,  1/(m_s u_s) <= 1,  u_s <= 1   (s = 1..S)
               p <= 1,  1/K <= 1,  K/K_cap <= 1

(coefficients from :func:`fedbound.control.objective.terms`; K >= 1 and K <= K_cap are not in
the paper, F27). All data enter as ``cp.Parameter(pos=True)``, so the problem is DPP
(``is_dgp(dpp=True)``): it is compiled once per (S, exponent e, pattern of zero costs) and a
re-solve only assigns values. Zero costs are legal in a spec but a positive Parameter cannot be
0, so a zero cost drops its monomial from the compiled problem (the pattern is part of the key).

Every solve is checked. Status policy: ``optimal`` is accepted; ``optimal_inaccurate`` is
accepted only under the same constraint check and is reported in ``status`` (the integer
decision never depends on it: :mod:`fedbound.control.integer` certifies it by enumeration, and
:func:`fedbound.control.integer.plan` rejects a relaxation value above the integer optimum);
any other status raises :class:`~fedbound.errors.SolverError`, as does any constraint with
``violation() > VIOLATION_TOL`` (constraints are all of the form posynomial <= 1, so this is a
relative tolerance). With the default solver a rejected attempt is first retried with the
Clarabel settings of CLARABEL_RETRIES; the settings used are reported in ``settings``. Integer decisions are never modelled inside the GP: a finite-set
constraint is silently relaxed by cvxpy when no mixed-integer solver is chosen (anchors.md 4.3).

The compiled problems are shared module state: do not solve from several threads at once.
"""
from __future__ import annotations

import functools
import time
import warnings
from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from fedbound.control.objective import ControlProblem, objective
from fedbound.errors import SolverError

#: largest accepted constraint violation (constraints are posynomial <= 1)
VIOLATION_TOL = 1e-6
ACCEPTED_STATUSES = ("optimal", "optimal_inaccurate")
#: Clarabel settings tried in turn by :func:`solve_gp` when called with the defaults
CLARABEL_RETRIES = ({}, {"max_step_fraction": 0.9}, {"equilibrate_enable": False})


@dataclass(frozen=True, eq=False)
class ContinuousSolution:
    """Optimum of the continuous relaxation of (31): K, p, u (shape (S,)) and the objective
    ``value`` (recomputed by :func:`fedbound.control.objective.objective` at the returned point),
    the ``method`` ("gp" or "reduced"), the solver ``status``, the largest constraint violation,
    the wall time of the solve in seconds and the solver ``settings`` that produced it."""

    K: float
    p: float
    u: np.ndarray
    value: float
    method: str
    status: str
    max_violation: float
    seconds: float
    settings: str = ""

    @property
    def beta(self) -> np.ndarray:
        """beta_s = 1 - u_s, the unsampled fractions of the paper."""
        return 1.0 - self.u

    @property
    def slack(self) -> float:
        """min_s u_s (2 - u_s) - p: 0 when the relaxation of p = min_s(1 - beta_s^2) is tight."""
        return float(np.min(self.u * (2.0 - self.u)) - self.p)

    def to_dict(self) -> dict:
        return {"K": self.K, "p": self.p, "u": self.u.tolist(), "value": self.value,
                "method": self.method, "status": self.status,
                "max_violation": self.max_violation, "seconds": self.seconds,
                "settings": self.settings}


class _CompiledGP:
    """The DGP of the module docstring for S subnets; costs whose mask entry is False are absent."""

    def __init__(self, S: int, k_exp: float, e_positive: tuple, d2d_positive: bool):
        self.K = cp.Variable(pos=True, name="K")
        self.p = cp.Variable(pos=True, name="p")
        self.u = cp.Variable(S, pos=True, name="u")
        self.a1, self.a2, self.a3 = (cp.Parameter(pos=True, name=n) for n in ("a1", "a2", "a3"))
        self.inv_m = cp.Parameter(S, pos=True, name="inv_m")
        self.inv_K_cap = cp.Parameter(pos=True, name="inv_K_cap")
        self.e_index = np.flatnonzero(e_positive)
        K, p, u = self.K, self.p, self.u
        cost = self.a1 * p ** -2 + self.a2 * K ** -0.5 + self.a3 * K ** (-k_exp) * p ** (-4.0 / 3.0)
        self.cE = self.cD = None
        if self.e_index.size:
            self.cE = cp.Parameter(self.e_index.size, pos=True, name="lam3_E")
            cost = cost + cp.sum(cp.multiply(self.cE, u[self.e_index]))
        if d2d_positive:
            self.cD = cp.Parameter(pos=True, name="lam3_E_d2d_sum")
            cost = cost + self.cD * K
        self.constraints = [
            0.5 * p * u ** -1 + 0.5 * u <= 1,          # p <= u_s (2 - u_s) = 1 - beta_s^2
            cp.multiply(self.inv_m, u ** -1) <= 1,     # u_s >= 1/m_s  (h_s >= 1)
            u <= 1,                                    # beta_s >= 0
            p <= 1,
            K ** -1 <= 1,                              # K >= 1
            self.inv_K_cap * K <= 1,                   # K <= K_cap
        ]
        self.problem = cp.Problem(cp.Minimize(cost), self.constraints)
        if not self.problem.is_dgp(dpp=True):  # a modelling bug, not a user error
            raise SolverError(f"the controller GP for S={S} is not DPP-compliant DGP")

    def assign(self, problem: ControlProblem) -> None:
        t = problem.terms
        spec = problem.spec
        self.a1.value, self.a2.value, self.a3.value = t.a1, t.a2, t.a3
        self.inv_m.value = 1.0 / spec.m.astype(float)
        self.inv_K_cap.value = 1.0 / problem.K_cap
        if self.cE is not None:
            self.cE.value = t.lam3 * spec.E[self.e_index]
        if self.cD is not None:
            self.cD.value = t.lam3 * float(spec.E_d2d.sum())


@functools.lru_cache(maxsize=32)
def _compiled(S: int, k_exp: float, e_positive: tuple, d2d_positive: bool) -> _CompiledGP:
    return _CompiledGP(S, k_exp, e_positive, d2d_positive)


def compiled_gp(problem: ControlProblem) -> cp.Problem:
    """The cached cvxpy problem used for ``problem`` (for inspection: ``is_dgp(dpp=True)``)."""
    return _for(problem).problem


def _for(problem: ControlProblem) -> _CompiledGP:
    spec = problem.spec
    return _compiled(spec.S, problem.terms.k_exp, tuple(bool(e > 0) for e in spec.E),
                     bool(spec.E_d2d.sum() > 0))


def solve_gp(problem: ControlProblem, solver: str = cp.CLARABEL, **solver_options) -> ContinuousSolution:
    """Solve the continuous relaxation of (31) as a DGP and check the answer (module docstring).
    ``solver`` needs the exponential cone (CLARABEL, SCS, ...); ``solver_options`` go to it.

    With the default (CLARABEL, no options) a failed or rejected attempt is retried with the
    settings in CLARABEL_RETRIES (Clarabel can stop with InsufficientProgress on rare instances;
    benchmarks/bench_controller.py met one at S = 100). Raises SolverError (one line) when every
    attempt fails, returns a status other than optimal/optimal_inaccurate, or returns a point
    violating a constraint by more than VIOLATION_TOL."""
    gp = _for(problem)
    gp.assign(problem)
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
    try:
        with warnings.catch_warnings():  # an inaccurate solve is reported through `status`
            warnings.simplefilter("ignore", UserWarning)
            gp.problem.solve(gp=True, solver=solver, **options)
    except cp.error.SolverError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SolverError(f"GP solver {solver} failed for S={problem.spec.S}: {first}") from None
    status = gp.problem.status
    if status not in ACCEPTED_STATUSES:
        raise SolverError(f"GP solve returned status {status!r}; accepted: {', '.join(ACCEPTED_STATUSES)}")
    if gp.K.value is None or gp.p.value is None or gp.u.value is None:
        raise SolverError(f"GP solve returned status {status!r} but no solution values")
    violation = max(float(np.max(c.violation())) for c in gp.constraints)
    if not violation <= VIOLATION_TOL:
        raise SolverError(f"GP solution violates a constraint by {violation:.3g} "
                          f"(tolerance {VIOLATION_TOL:g}, status {status!r})")
    K, p, u = float(gp.K.value), float(gp.p.value), np.array(gp.u.value, dtype=float).reshape(-1)
    settings = ", ".join(f"{k}={v}" for k, v in options.items()) or "default"
    return ContinuousSolution(K=K, p=p, u=u, value=float(objective(K, p, u, problem)), method="gp",
                              status=status, max_violation=violation,
                              seconds=time.perf_counter() - start, settings=f"{solver}: {settings}")
