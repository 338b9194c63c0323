r"""Learning-rate exponents of FedAda2's Corollaries 23/24 as a linear program (derived formulation of
papers/fedada2.md 5.1; seed 004 [L1075-L1126]).

With eta = Theta(T^p1) and eta_l = Theta(T^p2), the bound of Theorem 20 is a sum of terms
psi_i/psi6 = Theta(T^(e_i(p1, p2))), each exponent linear in (p1, p2)
(:func:`fedbound.theory.fedada2.corollaries.ratio_exponents`, the extras of ``fedada2.cor23``). The
LP finds the fastest guaranteed rate T^s:

    minimise s  over (p1, p2, s)
    s.t.  e_i(p1, p2) <= s                   (i = 1..5)
          regime(p1, p2) <= 0                 (case A: 1 + 2 p2 <= 0; case B: p2 <= 0)
          regime_open(p1, p2) <= -delta       (case B only: p2 > -1/2, made strict by a margin)
          s <= -delta                         (the bound vanishes)
          -bound <= p1, p2 <= bound           (keeps the LP bounded)

Strict inequalities become "<= -delta" with the margin ``delta`` (a cvxpy Parameter, so that a
re-solve with another margin reuses the compiled problem). Infeasible means no choice of exponents
makes the bound vanish in that case: with the L^2 correction of the drift step (notes 8.2) both cases
are infeasible. :func:`enumerate_exponents` certifies a solution against a grid of (p1, p2).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import sympy as sp

from fedbound import validate as V
from fedbound.theory.fedada2.corollaries import CASES, CLIENTS, SMOOTH, ratio_exponents
from fedbound.theory.fedada2.corollaries import p1 as P1
from fedbound.theory.fedada2.corollaries import p2 as P2

BOX = 2.0
#: the finest grid of :func:`enumerate_exponents` (4001 x 4001 points)
MIN_STEP = 1e-3


@dataclass(frozen=True)
class ExponentSolution:
    """The LP's answer: ``status`` (cvxpy), ``feasible``, the exponents ``p1``, ``p2`` and the rate
    exponent ``s`` (nan when infeasible), the ``exponents`` e_i at the solution, and the largest
    constraint violation found when re-checking the solution in numpy."""

    case: str
    smooth: str
    client: str
    delta: float
    status: str
    feasible: bool
    p1: float
    p2: float
    s: float
    exponents: dict[str, float]
    violation: float


@functools.cache
def _linear(case: str, smooth: str, client: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The exponents (and regime constraints) as rows (a1, a2) and constants c: a1 p1 + a2 p2 + c."""
    exprs = ratio_exponents(case, smooth, client)
    names, rows, consts = [], [], []
    for name, e in exprs.items():
        poly = sp.Poly(e, P1, P2)
        if poly.total_degree() > 1:
            raise ValueError(f"{name} = {e} is not linear in (p1, p2)")
        names.append(name)
        rows.append([float(poly.coeff_monomial(P1)), float(poly.coeff_monomial(P2))])
        consts.append(float(poly.coeff_monomial(1)))
    return names, np.array(rows), np.array(consts)


def exponents_at(case: str, p1: float | np.ndarray, p2: float | np.ndarray, smooth: str = "L",
                 client: str = "adagrad") -> dict[str, np.ndarray]:
    """Every exponent e_i and regime expression at (p1, p2) (numpy, broadcast)."""
    case = V.one_of("case", case, CASES)
    smooth = V.one_of("smooth", smooth, SMOOTH)
    client = V.one_of("client", client, CLIENTS)
    names, rows, consts = _linear(case, smooth, client)
    p1, p2 = np.asarray(p1, dtype=float), np.asarray(p2, dtype=float)
    return {n: r[0] * p1 + r[1] * p2 + c for n, r, c in zip(names, rows, consts)}


@functools.cache
def _problem(case: str, smooth: str, client: str):
    names, rows, consts = _linear(case, smooth, client)
    p = cp.Variable(2)
    s = cp.Variable()
    delta = cp.Parameter(nonneg=True)
    constraints = [s <= -delta, p >= -BOX, p <= BOX]
    for name, row, const in zip(names, rows, consts):
        expr = row @ p + const
        if name == "regime":
            constraints.append(expr <= 0)
        elif name == "regime_open":
            constraints.append(expr <= -delta)
        else:
            constraints.append(expr <= s)
    return cp.Problem(cp.Minimize(s), constraints), p, s, delta


def solve_exponents(case: str = "A", smooth: str = "L", client: str = "adagrad",
                    delta: float = 1e-3) -> ExponentSolution:
    """Solve the LP of the module docstring and re-check the solution (see :class:`ExponentSolution`)."""
    case = V.one_of("case", case, CASES)
    smooth = V.one_of("smooth", smooth, SMOOTH)
    client = V.one_of("client", client, CLIENTS)
    delta = V.number("delta", delta, low=0.0, high=0.25, low_open=True)
    problem, p, s, margin = _problem(case, smooth, client)
    margin.value = delta
    problem.solve(solver=cp.CLARABEL)
    feasible = problem.status == cp.OPTIMAL
    if not feasible:
        return ExponentSolution(case, smooth, client, delta, problem.status, False, np.nan, np.nan, np.nan,
                                {}, np.nan)
    p1, p2, rate = float(p.value[0]), float(p.value[1]), float(s.value)
    values = {k: float(v) for k, v in exponents_at(case, p1, p2, smooth, client).items()}
    slack = [values[k] - rate for k in values if k.startswith("psi")] + [rate + delta]
    slack += [values["regime"]] + ([values["regime_open"] + delta] if "regime_open" in values else [])
    return ExponentSolution(case, smooth, client, delta, problem.status, True, p1, p2, rate, values,
                            max(0.0, max(slack)))


def enumerate_exponents(case: str = "A", smooth: str = "L", client: str = "adagrad", delta: float = 1e-3,
                        step: float = 1 / 200) -> tuple[float, float, float]:
    """Grid certificate: over p1, p2 in [-BOX, BOX] with spacing ``step`` (exact multiples, at least
    MIN_STEP), the point satisfying every constraint with the smallest max_i e_i; returns (p1, p2, s)
    or (nan, nan, nan) when no grid point is feasible."""
    delta = V.number("delta", delta, low=0.0, high=0.25, low_open=True)
    step = V.number("step", step, low=MIN_STEP, high=BOX)
    n = round(BOX / step)
    grid = np.arange(-n, n + 1) / (n / BOX)   # exact multiples k step
    p1, p2 = np.meshgrid(grid, grid, indexing="ij")
    values = exponents_at(case, p1, p2, smooth, client)
    rate = np.max(np.stack([v for k, v in values.items() if k.startswith("psi")]), axis=0)
    ok = (rate <= -delta + 1e-12) & (values["regime"] <= 1e-12)
    if "regime_open" in values:
        ok &= values["regime_open"] <= -delta + 1e-12
    if not np.any(ok):
        return np.nan, np.nan, np.nan
    i = np.unravel_index(np.argmin(np.where(ok, rate, np.inf)), rate.shape)
    return float(p1[i]), float(p2[i]), float(rate[i])


def printed_conditions(case: str, p1: float | np.ndarray, p2: float | np.ndarray) -> np.ndarray:
    """Corollary 23's stated sufficient conditions [L1075-L1112] at (p1, p2) (numpy, broadcast):
    (A) p2 <= -1/2 and -1 < p1 + p2 < 0; (B) -1/2 < p2 <= -1/4, -1/2 < p1, p1 + 2 p2 < -1/2,
    2 p1 + 3 p2 < -1/2."""
    case = V.one_of("case", case, CASES)
    p1, p2 = np.asarray(p1, dtype=float), np.asarray(p2, dtype=float)
    if case == "A":
        return (p2 <= -0.5) & (-1 < p1 + p2) & (p1 + p2 < 0)
    return (-0.5 < p2) & (p2 <= -0.25) & (-0.5 < p1) & (p1 + 2 * p2 < -0.5) & (2 * p1 + 3 * p2 < -0.5)
