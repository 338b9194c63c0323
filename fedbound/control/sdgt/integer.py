"""Integer decisions for SD-GT's controller (31) with a certificate of optimality.

The paper solves (31) over continuous K and beta_s and never says how to obtain an integer number
of D2D rounds K_{t+1} >= 1 and sample counts h_s in {1..m_s} (sdgt.md 2.2 [FLAG], F27). Here the
objective J of :mod:`fedbound.control.sdgt.objective` is minimized exactly over the integers
K in {1..K_cap}, h_s in {1..m_s} (u_s = h_s/m_s, beta_s = 1 - u_s, p = min_s u_s (2 - u_s)):

1. Levels. For integer h, p(h) = min_s h_s (2 m_s - h_s)/m_s^2 is one of the finitely many
   levels P = {h (2m - h)/m^2 : m a subnet size, h in 1..m}.
2. Cheapest sampling per level. For a level p0, let h_s(p0) be the smallest h with
   h (2 m_s - h)/m_s^2 >= p0 (compared exactly in integers). If (K, h) is feasible with
   p(h) = p0, then h_s(p0) <= h_s for every s (h_s meets the level) and p(h(p0)) = p0 (the subnet
   attaining the minimum keeps its h, since h (2m - h) increases on 1..m); J depends on h only
   through p and the cost sum_s E_s h_s/m_s with E_s >= 0, so J(K, h(p0)) <= J(K, h).
3. Best K per level. At fixed p, K -> J is strictly convex on K > 0 (a sum of K^-1/2, K^-e and
   a linear term), so its minimizer over {1..K_cap} is the smallest K with
   J(K+1) - J(K) >= 0 (else K_cap); it is found by bisection on that forward difference.

Hence the optimum over all K_cap * prod_s m_s integer configurations lies among the |P| pairs
(K(p0), h(p0)) that are examined; the best of them is returned. The continuous relaxation
(:func:`fedbound.control.sdgt.gp.solve_gp` or :func:`fedbound.control.sdgt.reduced.solve_reduced`) gives
the lower bound reported in the :class:`Plan`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fedbound.control.sdgt.gp import ContinuousSolution, solve_gp
from fedbound.control.sdgt.limits import Limit, active_limits
from fedbound.control.sdgt.objective import (METHOD_NAMES, ControlProblem, energy_per_round, k_terms,
                                             objective)
from fedbound.control.sdgt.reduced import solve_reduced
from fedbound.display import box, brief, details, fields, shown, table
from fedbound.network.sampling import participation
from fedbound.errors import SolverError, UnknownNameError

#: continuous solvers available to :func:`plan`
METHODS = dict(zip(METHOD_NAMES, (solve_gp, solve_reduced)))
#: relative tolerance of the check lower_bound <= integer optimum
BOUND_RTOL = 1e-6
#: rows of the (levels x S) work arrays processed at once
_CHUNK_ENTRIES = 1 << 20

ARGUMENT = ("every integer (K, h) has p(h) in the level set P; for a level p0 the per-subnet "
            "smallest h_s meeting u_s(2-u_s) >= p0 keeps p = p0 and does not raise the cost, so some "
            "optimum uses it; at fixed p, J is strictly convex in K, so the smallest K in 1..K_cap "
            "with J(K+1) >= J(K) (bisection) is that level's best integer K; the answer is the "
            "best of these |P| candidates")


@dataclass(frozen=True)
class Certificate:
    """Why the integer answer is optimal: ``levels`` candidate configurations (one per distinct
    p level) were examined with ``evaluations`` objective evaluations, out of a search space of
    ``search_space`` = K_cap * prod_s m_s integer configurations; ``argument`` states the proof."""

    levels: int
    evaluations: int
    search_space: int
    argument: str = ARGUMENT

    @property
    def search_space_log10(self) -> float:
        return math.log10(self.search_space)

    def __repr__(self) -> str:
        return brief("Certificate", levels=self.levels, evaluations=self.evaluations,
                     search_space=f"10^{shown(self.search_space_log10, 3)}")

    def to_dict(self) -> dict:
        """JSON-ready; ``search_space`` is None when it exceeds int64 (see ``search_space_log10``)."""
        space = self.search_space
        return {"levels": self.levels, "evaluations": self.evaluations,
                "search_space": space if space < 2 ** 63 else None,
                "search_space_log10": self.search_space_log10, "argument": self.argument}


@dataclass(frozen=True)
class IntegerOptimum:
    """Best integer decision: K, h (tuple), p = min_s u_s(2-u_s), the objective value and the
    certificate."""

    K: int
    h: tuple
    p: float
    value: float
    certificate: Certificate


def _levels(m_unique: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct levels h(2m-h)/m^2 as reduced fractions (num, den), ascending."""
    sizes = np.repeat(m_unique, m_unique)
    h = np.arange(sizes.size) - np.repeat(np.cumsum(m_unique) - m_unique, m_unique) + 1
    num, den = h * (2 * sizes - h), sizes * sizes
    g = np.gcd(num, den)
    pairs = np.unique(np.stack([num // g, den // g], axis=1), axis=0)
    order = np.argsort(pairs[:, 0] / pairs[:, 1], kind="stable")
    return pairs[order, 0], pairs[order, 1]


def _cheapest_h(num: np.ndarray, den: np.ndarray, m_unique: np.ndarray) -> np.ndarray:
    """h[l, j] = smallest h in 1..m_j with h (2 m_j - h) den_l >= num_l m_j^2 (exact in int64)."""
    n, d, m = num[:, None], den[:, None], m_unique[None, :]

    def meets(h):
        return h * (2 * m - h) * d >= n * m * m

    h = np.clip(np.ceil(m * (1.0 - np.sqrt(np.clip(1.0 - n / d, 0.0, None)))), 1, m).astype(np.int64)
    h = np.where((h > 1) & meets(h - 1), h - 1, h)
    h = np.where(meets(h), h, np.minimum(h + 1, m))
    if not (np.all(meets(h)) and np.all((h == 1) | ~meets(h - 1))):
        raise SolverError("integer search could not place a sample count exactly on a level")
    return h


def _best_K(p: np.ndarray, problem: ControlProblem) -> tuple[np.ndarray, int]:
    """Per p, the smallest K in 1..K_cap with k_terms(K+1) - k_terms(K) >= 0 (else K_cap), by
    bisection; returns the K array and the number of objective evaluations used."""
    lo = np.ones(p.shape, dtype=np.int64)
    hi = np.full(p.shape, problem.K_cap, dtype=np.int64)
    evaluations = 0
    while np.any(active := lo < hi):
        mid = (lo + hi) // 2
        rising = k_terms(mid + 1, p, problem) - k_terms(mid, p, problem) >= 0
        evaluations += 2 * int(np.count_nonzero(active))
        hi = np.where(active & rising, mid, hi)
        lo = np.where(active & ~rising, mid + 1, lo)
    return lo, evaluations


def integer_optimum(problem: ControlProblem) -> IntegerOptimum:
    """Exact minimizer of J over K in {1..K_cap} and h_s in {1..m_s} (module docstring)."""
    m = problem.spec.m
    m_unique, subnet_group = np.unique(m, return_inverse=True)
    num, den = _levels(m_unique)
    best = (math.inf, None, None)
    evaluations = 0
    chunk = max(1, _CHUNK_ENTRIES // m.size)
    for start in range(0, num.size, chunk):
        h = _cheapest_h(num[start:start + chunk], den[start:start + chunk], m_unique)[:, subnet_group]
        p = participation(h, m)
        K, used = _best_K(p, problem)
        values = objective(K, p, h / m, problem)
        evaluations += used + values.size
        i = int(np.argmin(values))
        if values[i] < best[0]:
            best = (float(values[i]), int(K[i]), h[i])
    value, K, h = best
    search_space = problem.K_cap * math.prod(int(x) for x in m)
    return IntegerOptimum(K=K, h=tuple(int(x) for x in h), p=float(participation(h, m)), value=value,
                          certificate=Certificate(levels=int(num.size), evaluations=evaluations,
                                                  search_space=search_space))


@dataclass(frozen=True, eq=False)
class Plan:
    """The controller's decision for the next round(s) with its evidence.

    K, h (sample counts), beta (= 1 - h/m), p (= min_s 1 - beta_s^2), the objective J at the
    integer point, the energy per round (sum_s E_s h_s/m_s + K sum_s E_s^D2D), the continuous
    relaxation optimum ``lower_bound`` (<= objective up to solver tolerance), ``gap`` = objective -
    lower_bound, the continuous solution itself, the certificate, the problem data used and the
    ``limits`` the plan sits on (K = K_cap, every device sampled, ...) with what raising each would
    buy (:mod:`fedbound.control.sdgt.limits`)."""

    K: int
    h: tuple
    beta: tuple
    p: float
    objective: float
    energy_per_round: float
    lower_bound: float
    gap: float
    continuous: ContinuousSolution
    certificate: Certificate
    problem: ControlProblem
    limits: tuple[Limit, ...] = ()

    def to_dict(self) -> dict:
        pb = self.problem
        return {"K": self.K, "h": list(self.h), "beta": list(self.beta), "p": self.p,
                "objective": self.objective, "energy_per_round": self.energy_per_round,
                "lower_bound": self.lower_bound, "gap": self.gap,
                "continuous": self.continuous.to_dict(), "certificate": self.certificate.to_dict(),
                "variant": pb.variant, "H": pb.H, "lambdas": list(pb.lambdas), "K_cap": pb.K_cap,
                "m": pb.spec.m.tolist(), "active_constraints": [lim.to_dict() for lim in self.limits]}

    # -- shown to a reader (:mod:`fedbound.display`) ---------------------------------------------
    def __repr__(self) -> str:
        return brief("Plan", K=self.K, h=self.h, p=self.p, objective=self.objective,
                     energy_per_round=self.energy_per_round,
                     limits=[lim.name for lim in self.limits] or "none active")

    def _repr_html_(self) -> str:
        """K (of K_cap), p, the objective, its continuous lower bound and the certificate, the
        energy per round, the sample count of each subnet, and the limits the plan sits on with
        the GP's dual values (what raising each would buy)."""
        pb, spec = self.problem, self.problem.spec
        rows = [("D2D rounds K", f"{self.K} (K_cap = {pb.K_cap})"), ("p = min_s 1 - beta_s^2", self.p),
                ("objective J (31)", self.objective), ("energy per round", self.energy_per_round),
                ("continuous lower bound", f"{shown(self.lower_bound)} (gap {shown(self.gap)}, "
                                           f"{self.continuous.method}, {self.continuous.status})"),
                ("certified", f"{self.certificate.levels} levels, {self.certificate.evaluations} "
                              f"evaluations of a space of 10^{shown(self.certificate.search_space_log10, 3)}"),
                ("problem", f"variant {pb.variant}, H = {shown(pb.H)}, lambdas = {shown(tuple(pb.lambdas))}")]
        limits = table(["limit", "where", "dual (elasticity)", "dJ*/d limit", "integer step", "what raising it buys"],
                       [[lim.name, lim.where, lim.dual, lim.marginal, lim.integer_step, lim.words]
                        for lim in self.limits], caption="active limits") \
            if self.limits else "no limit is active: the optimum is interior"
        subnets = table(["subnet", "devices m_s", "sampled h_s", "beta_s", "E_s", "E_s^D2D"],
                        [[s, int(spec.m[s]), int(self.h[s]), self.beta[s], float(spec.E[s]), float(spec.E_d2d[s])]
                         for s in range(spec.S)])
        return box("controller plan", [fields(rows), limits, details(f"{spec.S} subnets", [subnets])],
                   subtitle="SD-GT (31), certified integer optimum").text


def plan(problem: ControlProblem, method: str = "gp") -> Plan:
    """Certified integer decision (K, h) for ``problem`` plus the continuous lower bound from
    ``method`` ("gp": the DGP of :mod:`fedbound.control.sdgt.gp`; "reduced": the fast nested 1-D route
    of :mod:`fedbound.control.sdgt.reduced`). Raises SolverError if the relaxation value exceeds the
    integer optimum by more than BOUND_RTOL (relative), which only an inaccurate solve can cause."""
    if method not in METHODS:
        raise UnknownNameError(f"unknown controller method {method!r}; valid: {', '.join(METHODS)}")
    continuous = METHODS[method](problem)
    best = integer_optimum(problem)
    if continuous.value > best.value + BOUND_RTOL * abs(best.value):
        raise SolverError(f"relaxation value {continuous.value:.12g} exceeds the integer optimum "
                          f"{best.value:.12g} (method {method}, status {continuous.status!r})")
    m = problem.spec.m
    u = np.asarray(best.h) / m
    limits = active_limits(problem, best.K, best.h, best.value, continuous,
                           lambda changed: integer_optimum(changed).value)
    return Plan(K=best.K, h=best.h, beta=tuple(float(b) for b in 1.0 - u), p=best.p,
                objective=best.value, energy_per_round=float(energy_per_round(best.K, u, problem.spec)),
                lower_bound=continuous.value, gap=best.value - continuous.value, continuous=continuous,
                certificate=best.certificate, problem=problem, limits=limits)
