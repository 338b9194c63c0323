"""Solving a PEPit problem: the LMI fix and the solver fallback chain (issue 13).

PEPit 0.5's cvxpy wrapper sends an LMI ``M >= 0`` over a matrix of expressions E as a symmetric
cvxpy variable M with one equality ``M[i, j] == E[i, j]`` per entry, i.e. every off-diagonal
equality twice. The duplicated rows make the equality block rank deficient and Clarabel stops with
a numerical error. :class:`DeduplicatedCvxpyWrapper` writes each equality once (i <= j) and reads
the duals back in that layout.

:func:`solve` tries :data:`CHAIN` in order (Clarabel; Clarabel with static regularization 1e-7;
SCS at tight tolerance) and returns the first solution with status ``optimal`` (or, if none,
the first ``optimal_inaccurate``), with the solver's name and the Gram size. Anything else is a
:class:`~fedbound.errors.SolverError` naming every attempt.
"""
from __future__ import annotations

import contextlib
import io
import warnings
from dataclasses import dataclass

import cvxpy as cp
from PEPit import PEP
from PEPit.constraint import Constraint
from PEPit.point import Point
from PEPit.psd_matrix import PSDMatrix
from PEPit.wrappers.cvxpy_wrapper import CvxpyWrapper

from fedbound.errors import SolverError, ValidationError

#: Clarabel iterations at most: it converges in 15-30 on these SDPs, and one that has not by then
#: is stuck at reduced accuracy (seconds per 100 iterations from ~40 points on), where SCS is fast
CLARABEL_ITERATIONS = 60
#: (label, cvxpy solve keywords), tried in order
CHAIN = (
    ("clarabel", {"solver": "CLARABEL", "max_iter": CLARABEL_ITERATIONS}),
    ("clarabel+reg1e-7", {"solver": "CLARABEL", "max_iter": CLARABEL_ITERATIONS,
                          "static_regularization_constant": 1e-7}),
    ("scs", {"solver": "SCS", "eps": 1e-8, "max_iters": 20_000}),
)


class DeduplicatedCvxpyWrapper(CvxpyWrapper):
    """PEPit's cvxpy wrapper with one equality per upper-triangular LMI entry (module doc)."""

    def send_lmi_constraint_to_solver(self, psd_matrix: PSDMatrix) -> None:
        self._list_of_constraints_sent_to_solver.append(psd_matrix)
        k = psd_matrix.shape[0]
        M = cp.Variable((k, k), symmetric=True)
        rows = [M >> 0]
        rows += [M[i, j] == self._expression_to_solver(psd_matrix[i, j]) for i in range(k) for j in range(i, k)]
        self._list_of_solver_constraints += rows

    def _recover_dual_values(self):
        duals = [c.dual_value for c in self.prob.constraints]
        out, at = [duals[0]], 1
        for sent in self._list_of_constraints_sent_to_solver:
            out.append(duals[at])
            at += 1
            if isinstance(sent, PSDMatrix):
                k = sent.shape[0]
                at += k * (k + 1) // 2
            elif not isinstance(sent, Constraint):
                raise TypeError(f"unexpected constraint {type(sent).__name__}")
        return out, duals[0]


@dataclass(frozen=True)
class Solution:
    """The worst value (the dual objective, an upper bound on the primal), the cvxpy status, the
    solver that produced it, the Gram size and the relative duality gap |dual - primal|/max(1, |primal|)."""

    value: float
    status: str
    solver: str
    gram_size: int
    duality_gap: float


def _compile(problem) -> DeduplicatedCvxpyWrapper:
    """The cvxpy problem of a built PEP, written once for all the solvers of the chain (the steps
    of PEPit's ``PEP._solve_with_wrapper`` before its solve)."""
    problem._prepare_constraints(verbose=0)
    wrapper = DeduplicatedCvxpyWrapper(verbose=0)
    problem.wrapper_name, problem.wrapper = "cvxpy", wrapper
    wrapper.set_main_variables()
    problem._list_of_constraints_sent_to_wrapper = [c for c in problem._list_of_prepared_constraints if c.activated]
    problem._list_of_psd_sent_to_wrapper = [m for m in problem._list_of_prepared_psd if m.activated]
    for constraint in problem._list_of_constraints_sent_to_wrapper:
        wrapper.send_constraint_to_solver(constraint)
    for matrix in problem._list_of_psd_sent_to_wrapper:
        wrapper.send_lmi_constraint_to_solver(matrix)
    wrapper.generate_problem(problem.objective)
    return wrapper


def _attempt(wrapper, label: str, kwargs: dict, attempts: list) -> tuple[str, float | None]:
    try:
        with warnings.catch_warnings():     # cvxpy's warning repeats the status recorded here
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            status, _, value = wrapper.solve(**kwargs)
    except (cp.error.SolverError, ArithmeticError, ValueError) as exc:
        attempts.append(f"{label}: {type(exc).__name__}")
        return "error", None
    attempts.append(f"{label}: {status}")
    return status, value


def solve(problem: PEP) -> Solution:
    """Solve a built PEPit ``PEP`` with the fallback chain (module doc); the points of the PEP can
    then be evaluated (``Point.eval``) at the solution."""
    if not problem.list_of_performance_metrics:
        raise ValidationError("problem has no performance metric to maximize (PEP.set_performance_metric)")
    wrapper = _compile(problem)
    attempts, chosen = [], None
    for label, kwargs in CHAIN:
        status, value = _attempt(wrapper, label, kwargs, attempts)
        if value is not None and status == cp.OPTIMAL:
            chosen = (label, kwargs)
            break
        if value is not None and status == cp.OPTIMAL_INACCURATE and chosen is None:
            chosen = (label, kwargs)
    else:
        if chosen is None:
            raise SolverError("no solver of the chain solved the PEP (" + "; ".join(attempts) + ")")
        status, value = _attempt(wrapper, *chosen, attempts)   # back to the first inaccurate one
    problem.residual = wrapper.assign_dual_values()
    G, F = wrapper.get_primal_variables()
    problem.G_value, problem.F_value = G, F
    problem._eval_points_and_function_values(F, G, verbose=0)
    try:
        with contextlib.redirect_stdout(io.StringIO()):   # PEPit prints its duality-gap warning itself
            dual = problem.check_feasibility(value, verbose=0)
    except AssertionError:   # PEPit's own consistency assertions on the solution
        raise SolverError(f"the solution of {chosen[0]} is inconsistent (PEPit's feasibility check; "
                          f"{'; '.join(attempts)})") from None
    gap = abs(float(dual) - float(value)) / max(1.0, abs(float(value)))
    return Solution(float(dual), status, chosen[0], Point.counter, gap)
