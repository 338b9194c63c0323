"""Linear algebra of the papers' linear recursions ``v_t <= A v_{t-1} + b`` (A >= 0 elementwise).

:func:`spectral_quantities` gives ||A||_1, the spectral radius and the fixed point (I - A)^{-1} b,
batched over leading axes, keeping relative accuracy where a tiny eigenvalue of I - A sits next to
large ones (M-matrix elimination without pivoting, :func:`_eliminate`). Used by SD-GT Theorem 3 and
Corollary 3 (seed 003, (92)-(98)) and their audit; generic over the recursion.
"""
from __future__ import annotations

import numpy as np

from fedbound.errors import ValidationError
from fedbound.theory.argtypes import ExtendedArray


def spectral_quantities(A: ExtendedArray, b: ExtendedArray,
                        gap: ExtendedArray | None = None) -> dict[str, np.ndarray]:
    """||A||_1 (max column sum), spectral radius and the fixed point (I - A)^{-1} b of ``v <= A v + b``.

    ``A`` has shape (..., r, r) and ``b`` shape (..., r) or (..., r, 1); batched over leading axes.
    ``gap`` is ``I - A`` when the caller can compute it without cancellation (from the symbolic
    ``I - A``: entries like mu K gamma/2 survive even where 1 - mu K gamma/2 rounds to 1). Also
    returned: ``l1_margin`` = 1 - ||A||_1 and ``radius_margin`` = 1 - rho(A).

    For A >= 0 (every recursion of the papers) I - A is a Z-matrix: rho(A) < 1 iff it is a
    nonsingular M-matrix, 1 - rho(A) is its smallest eigenvalue, found from the pivots of
    I - A - tI (:func:`_smallest_eigenvalue`), and the fixed point (for b >= 0) comes from
    elimination without pivoting (:func:`_eliminate`); both keep the relative accuracy that eigvals
    and LU lose when a
    tiny eigenvalue (mu K gamma/2) sits next to large ones (p/2). Other A use eigvals and LU. The
    fixed point bounds the recursion only when rho(A) < 1; where rho(A) >= 1 or A is not finite,
    ``fixed_point`` and ``floor`` = ||(I - A)^{-1} b||_1 are inf.
    """
    if _traced(A, b, gap):
        return _exact_quantities(np.asarray(A, dtype=object), np.asarray(b, dtype=object))
    A, b = np.asarray(A, dtype=float), np.asarray(b, dtype=float)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2] or A.shape[-1] == 0:
        raise ValidationError(f"A must be square matrices (..., r, r), r >= 1, got shape {A.shape}")
    b = b[..., 0] if b.ndim == A.ndim else b
    r = A.shape[-1]
    if b.ndim < 1 or b.shape[-1] != r:
        raise ValidationError(f"b must have shape (..., {r}) or (..., {r}, 1) to match A {A.shape}, "
                              f"got shape {b.shape}")
    if gap is not None:
        gap = np.asarray(gap, dtype=float)
        if gap.shape[-2:] != (r, r):
            raise ValidationError(f"gap must have the shape of A (..., {r}, {r}), got {gap.shape}")
    try:
        shape = np.broadcast_shapes(b.shape[:-1], A.shape[:-2], () if gap is None else gap.shape[:-2])
    except ValueError:
        raise ValidationError(f"the leading axes of A {A.shape} and b {b.shape} do not broadcast") from None
    eye = np.eye(r)
    gap = eye - A if gap is None else gap
    A, gap = (np.broadcast_to(m, shape + (r, r)).reshape(-1, r, r) for m in (A, gap))
    b = np.broadcast_to(b, shape + (r,)).reshape(-1, r)
    diag = np.diagonal(gap, axis1=-2, axis2=-1)
    l1_margin = np.min(np.where(diag <= 1, diag, 2 - diag) - np.sum(np.abs(A) * (1 - eye), axis=-2), axis=-1)
    finite = np.all(np.isfinite(gap) & np.isfinite(A), axis=(-2, -1))
    eig = np.full(A.shape[:-1], np.nan, dtype=complex)
    eig[finite] = np.linalg.eigvals(gap[finite])
    one_minus = np.abs(1 - eig)
    radius_margin = np.min((2 * eig.real - np.abs(eig) ** 2) / (1 + one_minus), axis=-1)
    radius = np.max(one_minus, axis=-1)
    nonneg = finite & np.all(A >= 0, axis=(-2, -1))
    radius_margin[nonneg] = _smallest_eigenvalue(gap[nonneg], np.min(eig[nonneg].real, axis=-1))
    radius[nonneg] = 1 - radius_margin[nonneg]
    # an infinite entry (a step size so large that A overflows): no contraction, radius inf
    radius[~finite], radius_margin[~finite], l1_margin[~finite] = np.inf, -np.inf, -np.inf
    contracts = finite & (radius_margin > 0)
    accurate = contracts & nonneg & np.all(b >= 0, axis=-1)
    fixed = np.full(b.shape, np.inf)
    fixed[accurate] = _m_solve(gap[accurate], b[accurate])
    rest = contracts & ~accurate
    try:
        fixed[rest] = np.linalg.solve(gap[rest], b[rest][..., None])[..., 0]
    except np.linalg.LinAlgError:  # an exactly singular I - A in the batch: solve one by one
        fixed[rest] = [_solve_or_inf(m, v) for m, v in zip(gap[rest], b[rest])]
    out = {"A_l1": 1 - l1_margin, "spectral_radius": radius, "l1_margin": l1_margin,
           "radius_margin": radius_margin, "floor": np.sum(np.abs(fixed), axis=-1)}
    out = {k: v.reshape(shape) for k, v in out.items()}
    out["fixed_point"] = fixed.reshape(shape + (r,))
    return out


def _traced(*values) -> bool:
    return any(isinstance(v, np.ndarray) and v.dtype == object and v.size
               and getattr(v.flat[0], "__fedbound_traced__", False) for v in values)


def _exact_quantities(A: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`spectral_quantities` at the exact numbers of the audit's certifier
    (:mod:`fedbound.theory.certify.trace`): the spectral radius exactly, as the largest modulus of
    the roots of det(tI - A) (sympy's isolated algebraic roots: every comparison of it is decided
    with guaranteed digits; for A >= 0 the largest real root, Perron-Frobenius), the margins, and
    (I - A)^{-1} b by exact elimination where rho(A) < 1."""
    import sympy as sp

    from fedbound.theory.certify.trace import Traced, array, decide, to_sympy

    b = b[..., 0] if b.ndim == A.ndim else b
    if any(to_sympy(x).free_symbols for x in A.reshape(-1)):
        return _symbolic_quantities(A, b)
    shape, r = A.shape[:-2], A.shape[-1]
    A = A.reshape(-1, r, r)
    b = np.broadcast_to(b, shape + (r,)).reshape(-1, r)
    t = sp.Symbol("t")
    out = {k: [] for k in ("A_l1", "spectral_radius", "l1_margin", "radius_margin", "floor", "fixed_point")}
    for a, v in zip(A, b):
        M = sp.Matrix(r, r, [to_sympy(x) for x in a.reshape(-1)])
        poly = sp.Poly(M.charpoly(t).as_expr(), t)
        if all(decide(sp.Ge(x, 0, evaluate=False)) for x in M):
            roots = sp.real_roots(poly)
            radius = roots[-1]
        else:
            moduli = [sp.Abs(z) for z in poly.all_roots()]
            radius = moduli[0]
            for z in moduli[1:]:
                if decide(sp.Gt(z, radius, evaluate=False)):
                    radius = z
        l1 = [1 - sum(sp.Abs(M[i, j]) for i in range(r)) for j in range(r)]     # 1 - column sums
        l1_margin = l1[0]
        for x in l1[1:]:
            if decide(sp.Lt(x, l1_margin, evaluate=False)):
                l1_margin = x
        if decide(sp.Lt(radius, 1, evaluate=False)):
            fixed = list((sp.eye(r) - M).LUsolve(sp.Matrix([to_sympy(x) for x in v])))
            floor = sum(sp.Abs(x) for x in fixed)
        else:
            fixed, floor = [sp.oo] * r, sp.oo
        for key, value in (("A_l1", 1 - l1_margin), ("spectral_radius", radius), ("l1_margin", l1_margin),
                           ("radius_margin", 1 - radius), ("floor", floor)):
            out[key].append(Traced(value))
        out["fixed_point"].append([Traced(x) for x in fixed])
    result = {k: array(v).reshape(shape) for k, v in out.items() if k != "fixed_point"}
    result["fixed_point"] = array(out["fixed_point"]).reshape(shape + (r,))
    return result


def _symbolic_quantities(A: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`spectral_quantities` of matrices whose entries are expressions of the parameters
    (the audit's certifier tracing a claim over symbols): the spectral radius as the opaque
    :class:`~fedbound.theory.certify.spectral.PerronRoot` (z3 compares it through principal
    minors) and ||A||_1 as the Max of the column sums, with no branch taken; the fixed point and
    the floor are left out (a claim that reads them raises
    :class:`~fedbound.theory.certify.trace.Untraceable`: a numeric procedure)."""
    import sympy as sp

    from fedbound.theory.certify.spectral import perron_root
    from fedbound.theory.certify.trace import Traced, Untraceable, array, to_sympy

    shape, r = A.shape[:-2], A.shape[-1]
    out = {k: [] for k in ("A_l1", "spectral_radius", "l1_margin", "radius_margin")}
    for a in A.reshape(-1, r, r):
        M = sp.Matrix(r, r, [to_sympy(x) for x in a.reshape(-1)])
        radius = perron_root(M)
        l1 = sp.Max(*(sp.Add(*(sp.Abs(M[i, j], evaluate=False) for i in range(r)))
                      for j in range(r)), evaluate=False)
        for key, value in (("A_l1", l1), ("spectral_radius", radius), ("l1_margin", 1 - l1),
                           ("radius_margin", 1 - radius)):
            out[key].append(Traced(value))

    class Quantities(dict):
        def __missing__(self, key):
            if key in ("floor", "fixed_point"):
                raise Untraceable(f"the {key} of a symbolic recursion: a numeric procedure")
            raise KeyError(key)

    return Quantities({k: array(v).reshape(shape) for k, v in out.items()})


def _ordered(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The coordinate order of decreasing diagonal and G permuted to it (rows and columns)."""
    order = np.argsort(-np.diagonal(G, axis1=-2, axis2=-1), axis=-1)
    return order, np.take_along_axis(np.take_along_axis(G, order[..., :, None], -2), order[..., None, :], -1)


def _eliminate(S: np.ndarray, t, x: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Gaussian elimination without pivoting of the (ordered) Z-matrices S - tI (..., r, r): the
    pivots (..., r) and, if ``x`` is given, (S - tI)^{-1} x. S - tI is a nonsingular M-matrix iff
    every pivot is > 0; each update then subtracts a product of two nonpositive numbers and, for
    x >= 0, the solve only adds nonnegative terms, so only pivots can cancel. Eliminating the
    largest diagonal first leaves the slow mode (the tiny pivot) last."""
    r = S.shape[-1]
    S = S - np.asarray(t, dtype=float)[..., None, None] * np.eye(r)
    x = None if x is None else x.astype(float)
    with np.errstate(all="ignore"):
        for k in range(r - 1):
            factor = S[..., k + 1:, k] / np.where(S[..., k, k] > 0, S[..., k, k], np.nan)[..., None]
            S[..., k + 1:, k + 1:] -= factor[..., :, None] * S[..., k, k + 1:][..., None, :]
            if x is not None:
                x[..., k + 1:] -= factor * x[..., k, None]
        if x is not None:
            for k in reversed(range(r)):
                x[..., k] = (x[..., k] - np.sum(S[..., k, k + 1:] * x[..., k + 1:], axis=-1)) / S[..., k, k]
    return np.diagonal(S, axis1=-2, axis2=-1), x


def _m_solve(G: np.ndarray, b: np.ndarray) -> np.ndarray:
    """G^{-1} b for nonsingular M-matrices G and b >= 0, by :func:`_eliminate` (accurate)."""
    order, S = _ordered(G)
    x = _eliminate(S, 0.0, np.take_along_axis(b, order, -1))[1]
    out = np.empty_like(x)
    np.put_along_axis(out, order, x, -1)
    return out


def _smallest_eigenvalue(G: np.ndarray, guess: np.ndarray, max_steps: int = 200) -> np.ndarray:
    """The smallest eigenvalue tau of the Z-matrices G (= 1 - rho(A) for G = I - A, A >= 0): the
    sup of t with all pivots of G - tI positive. From the eigvals ``guess``, the fixed point
    t <- t + (last pivot of G - tI) (fast when the slow mode is well separated, where eigvals is
    inaccurate), accepted where the pivot signs confirm it to relative 1e-12; elsewhere bisection
    between Gershgorin's column bound and min_j G_jj, to relative width 1e-15."""
    _, S = _ordered(G)

    def ok(t):
        return np.all(_eliminate(S, t)[0] > 0, axis=-1)

    t = guess.copy()
    for _ in range(8):
        pivots = _eliminate(S, t)[0]
        step = np.nan_to_num(np.where(np.all(pivots[..., :-1] > 0, axis=-1), pivots[..., -1], 0.0))
        t = t + step
        if np.all(np.abs(step) <= 1e-15 * np.abs(t)):
            break
    width = 1e-12 * np.abs(t) + 1e-300
    done = ok(t - width) & ~ok(t + width)
    diag = np.diagonal(G, axis1=-2, axis2=-1)
    lo = np.min(2 * diag - np.sum(np.abs(G), axis=-2), axis=-1) - 1e-300
    hi = np.min(diag, axis=-1)
    for _ in range(max_steps):
        open_ = ~done & (hi - lo > 1e-15 * np.maximum(np.abs(lo), np.abs(hi)))
        if not np.any(open_):
            break
        mid = (lo[open_] + hi[open_]) / 2
        good = np.all(_eliminate(S[open_], mid)[0] > 0, axis=-1)
        lo[open_] = np.where(good, mid, lo[open_])
        hi[open_] = np.where(good, hi[open_], mid)
    return np.where(done, t, (lo + hi) / 2)


def _solve_or_inf(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(matrix, vector)
    except np.linalg.LinAlgError:
        return np.full(vector.shape, np.inf)


__all__ = ["spectral_quantities"]
