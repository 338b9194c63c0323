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

from dataclasses import dataclass

import cvxpy as cp
from PEPit.constraint import Constraint
from PEPit.point import Point
from PEPit.psd_matrix import PSDMatrix
from PEPit.wrappers.cvxpy_wrapper import CvxpyWrapper

from fedbound.errors import SolverError

#: (label, cvxpy solve keywords), tried in order
CHAIN = (
    ("clarabel", {"solver": "CLARABEL"}),
    ("clarabel+reg1e-7", {"solver": "CLARABEL", "static_regularization_constant": 1e-7}),
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
    solver that produced it and the Gram size."""

    value: float
    status: str
    solver: str
    gram_size: int


def solve(problem) -> Solution:
    """Solve a built PEPit ``PEP`` with the fallback chain (module doc)."""
    problem._prepare_constraints(verbose=0)
    attempts, inaccurate = [], None
    for label, kwargs in CHAIN:
        wrapper = DeduplicatedCvxpyWrapper(verbose=0)
        problem.wrapper_name, problem.wrapper = "cvxpy", wrapper
        try:
            value = problem._solve_with_wrapper(wrapper, verbose=0, **kwargs)
        except (cp.error.SolverError, ArithmeticError, ValueError) as exc:
            attempts.append(f"{label}: {type(exc).__name__}")
            continue
        status = wrapper.prob.status
        attempts.append(f"{label}: {status}")
        if value is None:
            continue
        found = Solution(float(value), status, label, Point.counter)
        if status == cp.OPTIMAL:
            return found
        if status == cp.OPTIMAL_INACCURATE and inaccurate is None:
            inaccurate = found
    if inaccurate is not None:
        return inaccurate
    raise SolverError("no solver of the chain solved the PEP (" + "; ".join(attempts) + ")")
