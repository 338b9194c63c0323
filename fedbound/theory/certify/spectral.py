r"""Spectral conditions as real algebra (issue 32, item 5): the spectral radius of a symbolic
nonnegative matrix, and comparisons of it rewritten as signs of principal minors.

A claim about ``rho(A)`` for a matrix A whose entries are expressions of the parameters (SD-GT
Theorem 3's 4 x 4 A, seed 003 (92)-(97)) cannot be traced to a closed form: rho is a root of a
quartic. Traced over symbols, :func:`spectral_quantities` gives it as :class:`PerronRoot` (A), an
opaque real; a comparison of it with an expression t free of it is decided through the M-matrix
characterizations (Berman and Plemmons, *Nonnegative Matrices in the Mathematical Sciences*, 1994,
ch. 6, Theorem 2.3 (E17) and Theorem 4.6 (A1); A >= 0 entrywise, so rho(A) is the Perron root and
tI - A is a Z-matrix):

* rho(A) < t   iff every leading principal minor of tI - A is > 0 (a nonsingular M-matrix);
* rho(A) <= t  iff every principal minor of tI - A is >= 0 (an M-matrix);
* rho(A) >= t  iff some leading principal minor of tI - A is <= 0, so rho(A) > t is replaced by
  this weaker formula (it adds rho = t): a query whose violation is weaker is unsatisfiable only if
  the original one is, and a model is only a candidate, re-checked exactly by the certifier.

Polynomials in t and the entries replace the root: what z3's nonlinear real arithmetic decides, and
the tangency of rho(A) -> 1 as gamma -> 0 (SD-GT: 1 - rho ~ mu K gamma/2) becomes the sign of
determinants that factor through gamma, with no interval to shrink. Where A may have a negative
entry the characterizations do not hold; each rewritten relation R becomes ``(some A_ij < 0) or R'``,
true wherever R is (:func:`relation`), so an unsat answer proves A >= 0 on the domain as well.
Only relations that occur positively (conditions assumed, violations asked) may be rewritten.
"""
from __future__ import annotations

from itertools import combinations

import sympy as sp

from fedbound.errors import FedboundError


class Unsupported(FedboundError):
    """A spectral relation outside what the characterizations decide (rho in a nonlinear term,
    two different matrices, a negated or mixed occurrence)."""


class PerronRoot(sp.Function):
    """rho(A), the spectral radius of a symbolic square matrix A (its only argument, an
    ImmutableMatrix), an opaque real number: compared only through :func:`relation`."""

    is_real = True

    def _sympystr(self, printer) -> str:
        return f"rho({printer._print(self.args[0].tolist())})"


def perron_root(M: sp.Matrix) -> PerronRoot:
    """rho(M) of a symbolic square matrix as an opaque real (module doc)."""
    return PerronRoot(sp.ImmutableMatrix(M))


def leading_minors(B: sp.Matrix) -> list[sp.Basic]:
    """det B[:k, :k] for k = 1..r."""
    return [B[:k, :k].det(method="berkowitz") for k in range(1, B.rows + 1)]


def principal_minors(B: sp.Matrix) -> list[sp.Basic]:
    """det B[S, S] for every nonempty subset S of the indices (2^r - 1 of them)."""
    r = B.rows
    return [B.extract(list(S), list(S)).det(method="berkowitz")
            for k in range(1, r + 1) for S in combinations(range(r), k)]


def _atoms(e: sp.Basic) -> set:
    return e.atoms(PerronRoot)


def involves(e: sp.Basic) -> bool:
    """Whether an expression or relation contains a :class:`PerronRoot`."""
    return bool(_atoms(e))


_FLIP = {sp.Lt: sp.Gt, sp.Le: sp.Ge, sp.Gt: sp.Lt, sp.Ge: sp.Le, sp.Eq: sp.Eq}


def relation(r: sp.Basic, max_order: int = 6) -> sp.Basic:
    """A relation between rho(A) and expressions free of it, as a formula in principal minors
    (module doc): ``Or(some entry of A < 0, R')`` with R' the characterization (exact for <, <=,
    >= and =; for > the weaker "rho(A) >= t"). :class:`Unsupported` unless ``r`` is affine in one
    PerronRoot with a nonzero numeric coefficient, or its matrix is larger than ``max_order``."""
    atoms = _atoms(r)
    if len(atoms) != 1 or type(r) not in _FLIP:
        raise Unsupported(f"a spectral relation {type(r).__name__} with {len(atoms)} spectral radii")
    (rho,) = atoms
    x = sp.Dummy("rho", real=True)
    d = sp.expand((r.lhs - r.rhs).subs(rho, x))
    a, c = d.coeff(x, 1), d.coeff(x, 0)
    if not (a.is_number and a != 0 and (d - a * x - c).expand() == 0):
        raise Unsupported("the spectral radius enters nonlinearly")
    op = type(r) if a > 0 else _FLIP[type(r)]        # a rho + c  op  0  <=>  rho  op'  -c/a
    t = -c / a
    M = sp.Matrix(rho.args[0])
    if M.rows > max_order:
        raise Unsupported(f"the spectral radius of a {M.rows} x {M.rows} matrix: beyond order "
                          f"{max_order} at this level (--prove)")
    # minors of placeholders (a 4 x 4 determinant is 24 products of them), then the entries put in:
    # no product of the entries' expressions is ever expanded
    r = M.rows
    tau, x = sp.Dummy("t"), sp.Matrix(r, r, lambda i, j: sp.Dummy(f"a{i}{j}"))
    B = tau * sp.eye(r) - x
    values = {tau: t, **{x[i, j]: M[i, j] for i in range(r) for j in range(r)}}

    def put(minors):
        return [m.xreplace(values) for m in minors]

    lead = put(leading_minors(B))
    below = sp.And(*(sp.Gt(m, 0) for m in lead))                 # rho < t
    at_most = sp.And(*(sp.Ge(m, 0) for m in put(principal_minors(B))))  # rho <= t
    at_least = sp.Or(*(sp.Le(m, 0) for m in lead))               # rho >= t
    rewritten = {sp.Lt: below, sp.Le: at_most, sp.Ge: at_least, sp.Gt: at_least,
                 sp.Eq: sp.And(at_most, at_least)}[op]
    negative = sp.Or(*(sp.Lt(e, 0) for e in M if not (e.is_number and e >= 0)))
    return sp.Or(negative, rewritten)


__all__ = ["Unsupported", "PerronRoot", "perron_root", "leading_minors", "principal_minors",
           "involves", "relation"]
