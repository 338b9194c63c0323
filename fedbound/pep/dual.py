"""Exact dual certificates of a PEP (issue 32, item 5): a worst case bounded by a proof.

The PEP of a method (:mod:`fedbound.pep.symbolic`) maximizes tau over the Gram matrix G >= 0 of its
leaf points and its leaf function values F subject to e_k(G, F) <= 0 (k in I: interpolation
conditions, initial conditions, tau <= metric) and e_k = 0 (k in E), each

    e_k(G, F) = <A_k, G> + a_k^T F + c_k,

with rational data when it is built from :class:`fedbound.pep.exact.Exact` options. Weak duality
(Taylor, Hendrickx and Glineur, Math. Program. 161, 2017, sec. 3): for multipliers lambda_k >= 0
(k in I), lambda_k free (k in E), with

    sum_k lambda_k a_k = e_tau   (the F part)   and   S = sum_k lambda_k A_k >= 0 (PSD),

every feasible (G, F) has tau = sum_k lambda_k e_k(G, F) - <S, G> + U <= U, U = -sum_k lambda_k c_k.
Rational multipliers that pass these checks in exact arithmetic (the F part as equalities of
fractions, the signs, S >= 0 by an LDL^T factorization in fractions: :func:`is_psd`) prove
"metric <= U over every function of the class" -- PEPit's interpolation conditions are necessary
for the class, so the proof needs no tightness and holds for a relaxed PEP as well.

Finding them (:func:`prove`):

1. the dual solved numerically (Clarabel): min U;
2. a point inside: max t subject to V^T S V >= t I and U <= target (halfway between (1)'s optimum
   and the bound to prove), V a basis of the range of the used constraints' A_k. Used: the
   multipliers of (1) above a threshold (relative), the others fixed at 0. A direction in which the
   primal is unbounded (the stationary point moved away, for smooth non-convex classes) forces
   S v = 0 on every dual point, which no rounding keeps; leaving out the constraints that (1) does
   not use makes those directions a common kernel of the A_k kept, where S v = 0 holds exactly
   (facial reduction by the support of (1));
3. the multipliers read exactly (the binary values of the floats), a negative one of an
   inequality set to 0, and the F part restored exactly by solving for the largest multipliers
   (Gaussian elimination in fractions);
4. the exact checks, and U <= bound.

Thresholds :data:`THRESHOLDS` are tried in turn; the first whose multipliers pass every exact check
is the certificate. None passing is :class:`NotProved` with what failed (a bound at the worst case
itself, with no slack, is never proved this way: step 2 needs U < bound).
"""
from __future__ import annotations

import hashlib
import math
import warnings
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from PEPit import PEP

from fedbound import validate
from fedbound.display import box, brief, clip, fields, shown
from fedbound.errors import FedboundError, InputTypeError, ValidationError
from fedbound.pep.certificate import method
from fedbound.pep.exact import Inexact, exact_options, rational
from fedbound.pep.method import Method
from fedbound.pep.symbolic import PepEnv

#: relative thresholds on (1)'s multipliers below which a constraint is left out of (2)
THRESHOLDS = (0.0, 1e-4, 1e-6, 1e-8)


class NotProved(FedboundError):
    """No multipliers passed the exact checks (the reason says which check, at each threshold)."""


@dataclass(frozen=True)
class Row:
    """One constraint e(G, F) <= 0 (``equality``: = 0): ``G`` {(i, j): coefficient of G_ij, i <= j,
    the two symmetric entries together}, ``F`` {value index: coefficient}, ``c`` the constant."""

    equality: bool
    G: dict
    F: dict
    c: Fraction


@dataclass(frozen=True)
class Data:
    """A PEP's rows, its numbers of leaf points and leaf values, and the index of tau among the
    values."""

    rows: list
    points: int
    values: int
    tau: int


@dataclass(frozen=True)
class DualProof:
    """metric <= ``upper`` over the whole class, by ``multipliers`` nonzero exact multipliers of
    ``constraints`` (their SHA-256 ``digest``), a Gram matrix ``gram`` x ``gram`` whose S has rank
    at most ``face``; ``margin``: t of step 2 (the smallest eigenvalue of V^T S V, in floats)."""

    upper: Fraction
    multipliers: int
    constraints: int
    gram: int
    face: int
    margin: float
    digest: str

    def to_dict(self) -> dict:
        return {"upper": {"exact": str(self.upper), "float": float(self.upper)},
                "multipliers": self.multipliers, "constraints": self.constraints, "gram": self.gram,
                "face": self.face, "margin": self.margin, "sha256": self.digest}

    # -- shown to a reader (:mod:`fedbound.display`) ---------------------------------------------
    def __repr__(self) -> str:
        return brief("DualProof", upper=float(self.upper), multipliers=self.multipliers)

    def _repr_html_(self) -> str:
        """The proved bound (its decimal and exact forms), what proves it, the checks."""
        return box("PEP worst case, proved", [
            fields([("worst case <=", float(self.upper)), ("exact", clip(str(self.upper), 120)),
                    ("multipliers", f"{self.multipliers} nonzero of {self.constraints} constraints, exact rationals"),
                    ("checked exactly", "the F part, the signs, S >= 0 (LDL^T in fractions)"),
                    ("Gram matrix", f"{self.gram} x {self.gram}, S of rank at most {self.face}"),
                    ("margin (floats)", self.margin), ("SHA-256", self.digest)])],
            subtitle=f"<= {shown(float(self.upper))}").text


def pep_data(problem: PEP) -> Data:
    """The rational rows of a built PEPit ``PEP`` (its objective tau, its constraints and its
    functions' interpolation conditions, as PEPit sends them to a solver); :class:`NotProved` for an
    LMI constraint (a consensus class: its dual block is not built here)."""
    from PEPit.expression import Expression

    problem._prepare_constraints(verbose=0)
    if problem._list_of_prepared_psd:
        raise NotProved("the PEP has LMI constraints (a consensus class); exact dual certificates cover "
                        "scalar constraints only")
    points, values, rows = {}, {}, []
    for constraint in problem._list_of_prepared_constraints:
        if not constraint.activated:
            continue
        G, F, c = {}, {}, Fraction(0)
        for key, coefficient in constraint.expression.decomposition_dict.items():
            q = rational(coefficient)
            if isinstance(key, Expression):
                f = values.setdefault(key, len(values))
                F[f] = F.get(f, 0) + q
            elif isinstance(key, tuple):
                i, j = sorted(points.setdefault(p, len(points)) for p in key)
                G[i, j] = G.get((i, j), 0) + q
            else:
                c += q
        rows.append(Row(constraint.equality_or_inequality == "equality", G, F, c))
    return Data(rows, len(points), len(values), values[problem.objective])


def exact_pep(m: Method, cfg: dict) -> Data:
    """The rational PEP of method ``m`` at validated options ``cfg``, built from their exact values
    (:class:`NotProved` where a coefficient may have been rounded: :class:`fedbound.pep.exact.Inexact`)."""
    exact = exact_options(cfg)
    try:
        env = PepEnv(**m.setting(exact), label=f"PEP of {m.name}")
        m.build(env, exact)
        env.close()
        return pep_data(env.problem)
    except Inexact as exc:
        raise NotProved(f"the PEP's data is not exact: {exc}") from None


def prove(m: Method | str, cfg: dict, bound: Fraction | float) -> DualProof:
    """A :class:`DualProof` that the metric of method ``m`` (a :class:`~fedbound.pep.method.Method`
    or its name) at options ``cfg`` is <= ``bound`` over its function class (module doc), or
    :class:`NotProved` saying why. The options' floats are read as their binary values; ``bound``
    is a fraction (exact) or a float (its binary value).

    >>> from fractions import Fraction
    >>> p = prove("gd", dict(steps=1, lr=1.0, L=1.0, mu=0.1), Fraction(82, 100))
    >>> float(p.upper) <= 0.82
    True
    """
    m = method(m) if isinstance(m, str) else m
    if not isinstance(m, Method) or not isinstance(cfg, dict):
        raise InputTypeError(f"prove takes a PEP method (or its name) and a dict of its options, got "
                             f"{validate.show(m)} and {validate.show(cfg)}")
    if isinstance(bound, bool) or not isinstance(bound, (int, float, Fraction)) or not math.isfinite(bound):
        raise ValidationError(f"bound must be a finite number (a Fraction for an exact one), got "
                              f"{validate.show(bound)}")
    bound = Fraction(bound)
    cfg = m.config(**cfg)
    data = exact_pep(m, cfg)
    A, Fm, c = _arrays(data)
    lower, first = _solve(data, A, Fm, c, _range(A), None, None)
    if first is None:
        raise NotProved(f"the dual of the PEP was not solved numerically ({lower})")
    if lower >= float(bound):
        raise NotProved(f"the numerical dual's optimum {lower:.10g} is not below the bound {float(bound):.10g}")
    target = (lower + float(bound)) / 2
    tried = []
    for threshold in THRESHOLDS:
        used = np.abs(first) > threshold * np.abs(first).max()
        V = _range(A[used])
        t, lam = _solve(data, A, Fm, c, V, used, target)
        if lam is None:
            tried.append(f"threshold {threshold:g}: {t}")
            continue
        why, proof = _exact(data, np.where(used, lam, 0.0), bound)
        if proof is not None:
            return DualProof(proof[0], proof[1], len(data.rows), data.points, V.shape[1], float(t), proof[2])
        tried.append(f"threshold {threshold:g}: {why}")
    raise NotProved("no exact dual certificate: " + "; ".join(tried))


def _arrays(data: Data) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows as floats: A (k x n x n, symmetric), the F part (values x k), the constants (k)."""
    k, n = len(data.rows), data.points
    A, Fm, c = np.zeros((k, n, n)), np.zeros((data.values, k)), np.zeros(k)
    for r, row in enumerate(data.rows):
        for (i, j), q in row.G.items():
            A[r, i, j] += float(q) / (1 if i == j else 2)
            A[r, j, i] += 0.0 if i == j else float(q) / 2
        for f, q in row.F.items():
            Fm[f, r] = float(q)
        c[r] = float(row.c)
    return A, Fm, c


def _range(A: np.ndarray) -> np.ndarray:
    """An orthonormal basis (columns) of the sum of the ranges of the symmetric matrices ``A``."""
    _, s, vt = np.linalg.svd(A.reshape(-1, A.shape[-1]), full_matrices=False)
    return vt[: int((s > 1e-9 * s[0]).sum())].T


def _solve(data: Data, A, Fm, c, V, used, target):
    """Step 1 (``target`` None: (min U, multipliers)) or step 2 ((t, multipliers)) of the module
    doc with Clarabel; multipliers None (and the status first) where it did not solve."""
    import cvxpy as cp

    k, r = len(data.rows), V.shape[1]
    lam, t = cp.Variable(k), cp.Variable()
    Z = cp.Variable((r, r), symmetric=True)
    upper = np.flatnonzero(np.triu(np.ones((r, r), bool)).reshape(-1))
    reduced = np.einsum("ai,kab,bj->kij", V, A, V).reshape(k, r * r)
    e = np.zeros(data.values)
    e[data.tau] = 1.0
    inequalities = np.flatnonzero([not row.equality for row in data.rows])
    rows = [Fm @ lam == e, cp.vec(Z, order="C")[upper] == reduced[:, upper].T @ lam, lam[inequalities] >= 0]
    if used is not None and not used.all():
        rows.append(lam[np.flatnonzero(~used)] == 0)
    U = -c @ lam
    if target is None:
        problem = cp.Problem(cp.Minimize(U), rows + [Z >> 0])
    else:
        problem = cp.Problem(cp.Maximize(t), rows + [Z - t * np.eye(r) >> 0, U <= target, t <= 1])
    try:
        with warnings.catch_warnings():     # an inaccurate solve is refused below, by its status
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            problem.solve(solver="CLARABEL")
    except cp.error.SolverError as exc:
        return f"solver error ({exc})", None
    if problem.status != cp.OPTIMAL or lam.value is None:
        return problem.status, None
    return (problem.value if target is None else t.value), lam.value


def _exact(data: Data, lam: np.ndarray, bound: Fraction):
    """Step 3 and 4 of the module doc: (why not, None) or (None, (U, nonzero multipliers, digest))."""
    rows = data.rows
    q = [Fraction(float(x)) for x in lam]
    q = [x if row.equality or x > 0 else Fraction(0) for x, row in zip(q, rows)]
    residual = [Fraction(int(f == data.tau)) - sum(q[r] * row.F.get(f, 0) for r, row in enumerate(rows))
                for f in range(data.values)]
    correction = _solve_exactly(rows, residual, sorted(range(len(rows)), key=lambda r: -abs(q[r])), data.values)
    if correction is None:
        return "the F part cannot be restored exactly", None
    for r, d in correction.items():
        q[r] += d
    if any(x < 0 for x, row in zip(q, rows) if not row.equality):
        return "a multiplier of an inequality is negative once the F part is restored", None
    S = [[Fraction(0)] * data.points for _ in range(data.points)]
    for x, row in zip(q, rows):
        if x:
            for (i, j), a in row.G.items():
                if i == j:
                    S[i][i] += x * a
                else:
                    S[i][j] += x * a / 2
                    S[j][i] += x * a / 2
    if not is_psd(S):
        return "S = sum_k lambda_k A_k is not positive semidefinite in exact arithmetic", None
    U = -sum(x * row.c for x, row in zip(q, rows))
    if U > bound:
        return f"the exact dual value {float(U):.12g} is above the bound {float(bound):.12g}", None
    digest = hashlib.sha256(";".join(str(x) for x in q).encode()).hexdigest()
    return None, (U, sum(1 for x in q if x), digest)


def _solve_exactly(rows: list, residual: list, order: list, values: int) -> dict | None:
    """Corrections d (row -> Fraction) with sum_r d_r a_r = residual in fractions, on the first
    columns of ``order`` that are independent (Gauss-Jordan); None where the residual is not in
    their span."""
    M = [[Fraction(row.F.get(f, 0)) for row in rows] for f in range(values)]
    b = list(residual)
    free, pivots = set(range(values)), []
    for r in order:
        f = next((f for f in free if M[f][r] != 0), None)
        if f is None:
            continue
        free.discard(f)
        pivots.append((f, r))
        for g in range(values):
            if g != f and M[g][r] != 0:
                ratio = M[g][r] / M[f][r]
                M[g] = [a - ratio * p for a, p in zip(M[g], M[f])]
                b[g] -= ratio * b[f]
        if not free:
            break
    if any(b[f] != 0 for f in free):
        return None
    return {r: b[f] / M[f][r] for f, r in pivots}


def is_psd(S: list) -> bool:
    """Whether the symmetric matrix of fractions ``S`` is positive semidefinite: symmetric Gaussian
    elimination (LDL^T without pivoting); a negative pivot, or a zero pivot with a nonzero entry in
    its row, means not."""
    S = [row[:] for row in S]
    n = len(S)
    for p in range(n):
        d = S[p][p]
        if d < 0 or (d == 0 and any(S[p][j] != 0 for j in range(p + 1, n))):
            return False
        if d == 0:
            continue
        for i in range(p + 1, n):
            if S[i][p] != 0:
                ratio = S[i][p] / d
                for j in range(p + 1, n):
                    S[i][j] -= ratio * S[p][j]
    return True


__all__ = ["DualProof", "NotProved", "prove", "exact_pep", "pep_data", "is_psd", "THRESHOLDS"]
