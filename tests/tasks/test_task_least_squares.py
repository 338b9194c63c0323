"""SD-GT's AR(1) least squares: exact constants, optimum (strongly convex and convex), .npz round trip."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from fedbound.errors import ValidationError
from fedbound.tasks import LeastSquares, Quadratic, fednova_matrix
from fedbound.tasks.least_squares import ar1_rows


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 4), m=st.integers(1, 6), d=st.integers(1, 8), omega=st.floats(0.0, 0.95),
       seed=st.integers(0, 10**6))
def test_constants_and_optimum(n, m, d, omega, seed):
    task = LeastSquares.generate(n, m, d, omega=omega, seed=seed)
    x = torch.randn(d, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    hess = torch.stack([torch.autograd.functional.hessian(lambda z, i=i: task.local_losses(z)[i], x)
                        for i in range(n)])
    lam = torch.linalg.eigvalsh(hess)
    assert task.L == pytest.approx(float(lam[:, -1].max()), rel=1e-10)
    assert task.mu == pytest.approx(max(float(lam[:, 0].min()), 0.0), abs=1e-10 * task.L)
    lam_bar = torch.linalg.eigvalsh(hess.mean(0))
    assert task.L_global == pytest.approx(float(lam_bar[-1]), rel=1e-10)
    assert task.mu_global == pytest.approx(max(float(lam_bar[0]), 0.0), abs=1e-10 * task.L_global)
    if m < d:
        assert task.mu == 0.0
    if n * m < d:
        assert task.mu_global == 0.0
    assert float(torch.linalg.vector_norm(task.global_grad(task.x_star))) <= 1e-10
    X = torch.randn(n, d, dtype=torch.float64, generator=torch.Generator().manual_seed(seed + 1), requires_grad=True)
    auto = torch.autograd.grad(task.local_losses(X).sum(), X)[0]
    assert torch.allclose(task.grad(X), auto, rtol=0, atol=1e-10)


def test_convex_variant_projects_x0_onto_the_solutions():
    """d > n m (App. C-A): x* solves A x = y exactly and x* - x0 lies in the row space of the stacked A."""
    x0 = np.linspace(-1.0, 1.0, 40)
    base = LeastSquares.generate(3, 5, 40, omega=0.3, seed=2)
    task = LeastSquares(base._A, base._y, x0=x0)
    assert task.mu_global == 0.0 and task.f_star == pytest.approx(0.0, abs=1e-20)
    A = base._A.reshape(-1, 40)
    xs = task.x_star.numpy()
    assert np.allclose(A @ xs, base._y.reshape(-1), atol=1e-12)
    coef = np.linalg.lstsq(A.T, xs - x0, rcond=None)[0]
    assert np.allclose(A.T @ coef, xs - x0, atol=1e-12)


def test_paper_sizes_and_condition_number_targeting():
    task = LeastSquares.generate(condition_number=80.0, seed=0)
    assert (task.n, task.m, task.d) == (30, 30, 200)
    assert task.L / task.mu_global == pytest.approx(80.0, rel=1e-8)
    assert task.mu == 0.0 and task.mu_global > 0.0       # sdgt.md flag F34
    assert float(torch.linalg.vector_norm(task.global_grad(task.x_star))) <= 1e-10
    with pytest.raises(ValidationError, match="condition_number must be in"):
        LeastSquares.generate(4, 5, 6, condition_number=1.0, seed=0)
    with pytest.raises(ValidationError, match="n\\*m > d"):
        LeastSquares.generate(2, 3, 10, condition_number=50.0)


def test_ar1_rows_are_stationary():
    z = np.random.default_rng(0).standard_normal((20000, 6))
    a = ar1_rows(z, 0.8)
    var = a.var(axis=0)
    assert np.allclose(var, 1.0 / (1.0 - 0.64), rtol=0.05)
    corr = np.mean(a[:, 1:] * a[:, :-1], axis=0) / var[1:]
    assert np.allclose(corr, 0.8, atol=0.03)
    with pytest.raises(ValidationError, match="omega must be in"):
        ar1_rows(z, 1.0)


def test_npz_round_trip(tmp_path):
    task = LeastSquares.generate(3, 4, 5, seed=1)
    path = tmp_path / "ls.npz"
    task.to_npz(path)
    back = LeastSquares.from_npz(path)
    X = torch.randn(3, 5, dtype=torch.float64)
    assert torch.equal(back.grad(X), task.grad(X))
    assert back.L == task.L and torch.equal(back.x_star, task.x_star)


@pytest.mark.parametrize("arrays, match", [
    ({"A": np.zeros((2, 3, 4))}, "key 'y'"),
    ({"y": np.zeros((2, 3))}, "key 'A'"),
    ({"A": np.zeros((2, 3, 4)), "y": np.zeros((2, 4))}, "key 'y' must have shape \\(2, 3\\)"),
    ({"A": np.zeros((2, 3)), "y": np.zeros((2, 3))}, "key 'A' must have shape"),
])
def test_bad_npz_is_rejected(tmp_path, arrays, match):
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    with pytest.raises(ValidationError, match=match):
        LeastSquares.from_npz(path)


def test_bad_arrays_are_rejected():
    with pytest.raises(ValidationError, match="y must have shape"):
        LeastSquares(np.zeros((2, 3, 4)), np.zeros((3, 2)))
    with pytest.raises(ValidationError, match="noise_std"):
        LeastSquares.generate(2, 2, 2, noise_std=-1.0)


def test_heterogeneity_matches_the_equivalent_quadratic_form():
    """The row-space closed form of least squares equals the dense-Hessian one (and the loop definition)."""
    task = LeastSquares.generate(4, 6, 3, omega=0.5, seed=4)
    H = task.hessians.numpy()
    w = np.array([0.1, 0.2, 0.3, 0.4])
    beta2 = 2.0 * task.beta2_min(w)
    # same f_i up to constants: grad f_i = H_i x - e_i = H_i (x - H_i^{-1} e_i) when H_i is invertible
    b = np.linalg.solve(H, task.linear_terms.numpy()[:, :, None])[:, :, 0]
    twin = Quadratic(H, b, spd=False)
    assert task.kappa2(w, beta2) == pytest.approx(twin.kappa2(w, beta2), rel=1e-8)
    assert task.beta2_min(w) == pytest.approx(twin.beta2_min(w), rel=1e-8)
    x_max = task.maximiser(fednova_matrix(w, beta2))
    grads = [task.grad(torch.as_tensor(x_max))[i].numpy() for i in range(4)]
    mean = sum(wi * g for wi, g in zip(w, grads))
    loop = sum(wi * g @ g for wi, g in zip(w, grads)) - beta2 * mean @ mean
    assert loop == pytest.approx(task.kappa2(w, beta2), rel=1e-8)
