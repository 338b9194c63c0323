"""Least squares without a factorization of the stacked data (issue 24): x* from the shared
eigendecomposition of the mean Hessian plus iterative refinement on the true residual, checked
against np.linalg.lstsq (the previous solve); the mean Hessian is computed once for both groups
of constants; the data are not copied.

Tolerance of the comparison with lstsq (Wedin's perturbation bound for least squares, Higham,
Accuracy and Stability of Numerical Algorithms, sec. 20.1): a solver that is backward stable, or
as accurate as one, returns x with

    ||x - x*|| <= c eps kappa (||x*|| + (kappa + 1) ||r*|| / sigma_max),

kappa = sigma_max / sigma_min of W^(1/2) A (nonzero singular values for a rank-deficient A, whose
null space the rounding does not change), r* the weighted residual. Both lstsq (SVD) and the
refinement are, so they agree to twice that; c = 64 covers the modest size factors (observed
ratios below 1). For consistent data (r* = 0) this is the tight c eps kappa ||x*||. For the
rank-deficient case, x* - x0 must also be orthogonal to null(A) to c eps kappa ||x*|| (the
projection of x0 onto argmin f), the accuracy of a null space computed from A itself.
"""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from fedbound.errors import ValidationError
from fedbound.tasks import LeastSquares
from fedbound.tasks.base import DATA_MAX_ABS, as_float64
from fedbound.tasks.least_squares import ar1_rows

EPS = np.finfo(float).eps


def problem(n, m, d, rank, kappa, noise, seed, weighted, with_x0):
    """Data whose weighted stacked matrix W^(1/2) A has the singular values 1 ... 1/kappa (rank
    ``rank``), W = diag(p_i / m) row by row; y = A x_true + noise."""
    rng = np.random.default_rng(seed)
    N = n * m
    p = rng.dirichlet(np.ones(n)) if weighted else np.full(n, 1.0 / n)
    U = np.linalg.qr(rng.standard_normal((N, rank)))[0]
    V = np.linalg.qr(rng.standard_normal((d, rank)))[0]
    sig = np.logspace(0.0, -np.log10(kappa), rank)
    scale = np.repeat(np.sqrt(p / m), m)
    A = ((U * sig) @ V.T) / scale[:, None]
    y = A @ rng.standard_normal(d) + noise * rng.standard_normal(N) / scale
    x0 = rng.standard_normal(d) if with_x0 else np.zeros(d)
    return A.reshape(n, m, d), y.reshape(n, m), p, x0, V, sig


def lstsq_optimum(A, y, p, x0):
    """The previous solve: x0 + the min-norm lstsq correction of the weighted stacked system."""
    n, m, d = A.shape
    scale = np.repeat(np.sqrt(p / m), m)
    R = A.reshape(-1, d)
    r = (y.reshape(-1) - R @ x0) * scale
    x = x0 + np.linalg.lstsq(R * scale[:, None], r, rcond=None)[0]
    return x, np.linalg.norm((y.reshape(-1) - R @ x) * scale)


def check_against_lstsq(A, y, p, x0, V, sig, c=64.0):
    task = LeastSquares(A, y, weights=p, x0=x0)
    fallbacks = []
    task._solve_optimum_lstsq = lambda: fallbacks.append(1) or LeastSquares._solve_optimum_lstsq(task)
    x = task.x_star.numpy()
    ref, res = lstsq_optimum(A, y, p, x0)
    kappa = sig[0] / sig[-1]
    size = np.linalg.norm(ref) + np.linalg.norm(x0)
    tol = c * EPS * kappa * (size + (kappa + 1) * res / sig[0])
    err = np.linalg.norm(x - ref)
    assert err <= tol, f"||x - x_lstsq|| = {err:.3g} > {tol:.3g} (kappa {kappa:.3g})"
    if V.shape[1] < V.shape[0]:   # rank-deficient: x* - x0 in the row space of A
        null = np.linalg.svd(V.T)[2][V.shape[1]:]   # orthonormal basis of null(A)
        off = np.linalg.norm(null @ (x - x0))
        assert off <= c * EPS * kappa * size, f"x* - x0 leaves the row space by {off:.3g}"
    return fallbacks, err / (EPS * kappa * (size + (kappa + 1) * res / sig[0]))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 12), m=st.integers(1, 8), d=st.integers(1, 16), rank_frac=st.floats(0.05, 1.0),
       log_kappa=st.sampled_from([0.0, 1.0, 2.0, 4.0, 6.0]), noise=st.sampled_from([0.0, 1e-3, 0.3]),
       seed=st.integers(0, 2**32 - 1), weighted=st.booleans(), with_x0=st.booleans())
def test_the_optimum_is_lstsq_to_the_conditioning(n, m, d, rank_frac, log_kappa, noise, seed, weighted,
                                                  with_x0):
    """Full-rank and rank-deficient data (argmin an affine set: x* stays the projection of x0),
    kappa(W^(1/2) A) = 1 to 1e6, consistent and noisy targets, uniform and random weights."""
    rank = max(1, min(n * m, d, round(rank_frac * min(n * m, d))))
    A, y, p, x0, V, sig = problem(n, m, d, rank, 10.0 ** log_kappa, noise, seed, weighted, with_x0)
    fallbacks, _ = check_against_lstsq(A, y, p, x0, V, sig)
    assert not fallbacks   # kappa <= 1e6: the refinement converges, no lstsq


@pytest.mark.parametrize("kappa", [1e2, 1e6])
@pytest.mark.parametrize("rank", [40, 25])
@pytest.mark.parametrize("noise", [0.0, 0.1])
def test_well_and_ill_conditioned_data_larger(kappa, rank, noise):
    """n = 60 clients x m = 20 rows, d = 40 (rank 40: full, 25: argmin a 15-dimensional affine
    set), random weights and x0: within 64 eps kappa (||x*|| + ||x0|| + (kappa + 1) ||r|| /
    sigma_max) of lstsq, and in fact within eps kappa of it."""
    A, y, p, x0, V, sig = problem(60, 20, 40, rank, kappa, noise, 7, True, True)
    fallbacks, ratio = check_against_lstsq(A, y, p, x0, V, sig)
    assert not fallbacks and ratio <= 1.0


@pytest.mark.parametrize("kappa", [1e8, 1e10])
def test_beyond_the_normal_equations_lstsq_solves(kappa):
    """kappa(A) >= 1e7: the normal equations cannot resolve A, the refinement does not converge or
    a dropped direction is no null direction; the previous lstsq solve takes over."""
    A, y, p, x0, V, sig = problem(20, 10, 12, 12, kappa, 0.1, 3, False, True)
    fallbacks, _ = check_against_lstsq(A, y, p, x0, V, sig)
    assert fallbacks


def test_the_mean_hessian_and_its_eigendecomposition_are_computed_once(monkeypatch):
    """Both groups of constants and the global metrics share one Hbar and one eigh of it (the
    stacked product is the expensive part of a large task's start-up)."""
    calls = {"hessian": 0, "eigh": 0}
    mean_hessian, eigh = LeastSquares._mean_hessian, np.linalg.eigh

    def counting_hessian(self, w):
        calls["hessian"] += 1
        return mean_hessian(self, w)

    def counting_eigh(a, *args, **kwargs):
        calls["eigh"] += 1
        return eigh(a, *args, **kwargs)

    monkeypatch.setattr(LeastSquares, "_mean_hessian", counting_hessian)
    monkeypatch.setattr(np.linalg, "eigh", counting_eigh)
    task = LeastSquares.generate(8, 5, 6, seed=0)
    noisy = task.with_noise(0.1)
    noisy.x_star
    task.global_metrics(torch.zeros(2, 6, dtype=torch.float64))
    task.L, noisy.mu_global, task.constants()
    assert calls == {"hessian": 1, "eigh": 1}
    lam = np.linalg.eigvalsh(mean_hessian(task, task._weights_np))
    assert task.L_global == pytest.approx(lam[-1], rel=1e-13)


def test_weighted_mean_hessian_in_blocks():
    """Unequal weights: blocks of clients scaled by sqrt(w_i / m) (here three blocks) sum to
    sum_i w_i A_i^T A_i / m."""
    rng = np.random.default_rng(4)
    n, m, d = 2500, 20, 50
    task = LeastSquares(rng.standard_normal((n, m, d)), rng.standard_normal((n, m)),
                        weights=rng.dirichlet(np.ones(n)))
    w = task._weights_np
    ref = np.einsum("n,nmi,nmj->ij", w / m, task._A, task._A)
    H = task._mean_hessian(w)
    np.testing.assert_allclose(H, ref, rtol=0, atol=1e-13 * np.abs(ref).max())
    assert np.array_equal(H, H.T)


def test_the_data_are_used_without_a_copy():
    """Arrays only the task holds (generate, from_npz) are used without a copy (no 400 MB copy at
    1e4 clients); a user's arrays are copied, so that changing them afterwards changes nothing;
    other arrays are converted; the validation still rejects what it rejected."""
    rng = np.random.default_rng(0)
    A, y = rng.standard_normal((4, 3, 2)), rng.standard_normal((4, 3))
    owned = LeastSquares._owning(A, y)
    assert owned._A is A and owned._y is y and np.shares_memory(owned.A.numpy(), A)
    task = LeastSquares(A, y)
    assert not np.shares_memory(task._A, A) and np.array_equal(task._A, A)
    A[0, 0, 0] += 1.0
    assert task._A[0, 0, 0] != A[0, 0, 0]
    for other in (A.astype(np.float32), np.asfortranarray(A), A[:, :, ::-1], torch.as_tensor(A).float()):
        converted = LeastSquares._owning(other, y)
        assert not np.shares_memory(converted._A, A) and converted._A.flags.c_contiguous
    readonly = A.copy()
    readonly.flags.writeable = False
    assert LeastSquares._owning(readonly, y)._A is not readonly
    assert np.shares_memory(LeastSquares._owning(torch.as_tensor(A), y)._A, A)
    for value, match in ((np.nan, "finite"), (np.inf, "finite"), (-np.inf, "finite"),
                         (2 * DATA_MAX_ABS, "absolute value")):
        bad = A.copy()
        bad[1, 2, 0] = value
        with pytest.raises(ValidationError, match=match + ".*index \\(1, 2, 0\\)"):
            LeastSquares(bad, y)
    with pytest.raises(ValidationError, match="3 dimensions"):
        as_float64("A", y, 3, copy=False)
    with pytest.raises(ValidationError, match="shape"):
        LeastSquares(A, y[:, :2])
    assert as_float64("A", A, 3) is not A   # the default still copies


def test_ar1_rows_in_blocks_are_the_column_recursion():
    """The blocked recursion gives the bits of the column-by-column one over all rows (here four
    blocks of rows), for a C- or Fortran-ordered z, and in place (what ``generate`` does)."""
    z = np.random.default_rng(1).standard_normal((300000, 2, 3))
    a = np.empty_like(z)
    a[..., 0] = z[..., 0] / np.sqrt(1.0 - 0.7**2)
    for col in range(1, 3):
        a[..., col] = 0.7 * a[..., col - 1] + z[..., col]
    assert np.array_equal(ar1_rows(z, 0.7), a)
    assert np.array_equal(ar1_rows(np.asfortranarray(z), 0.7), a)
    assert ar1_rows(z, 0.7, out=z) is z and np.array_equal(z, a)
    with pytest.raises(ValidationError, match="out must be"):
        ar1_rows(z, 0.7, out=np.empty((3, 2)))
