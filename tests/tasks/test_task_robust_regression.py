"""AFGA's bounded-gradient robust regression: exact L, G, optimum and heterogeneity constants."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from fedbound.tasks import RobustRegression


def client_hessian(task, i, x):
    return torch.autograd.functional.hessian(lambda z: task.local_losses(z)[i], x)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 5), d=st.integers(1, 4), seed=st.integers(0, 10**6))
def test_smoothness_and_gradient_bounds(n, d, seed):
    task = RobustRegression.generate(n, d, heterogeneity=2.0, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(5):
        x = torch.as_tensor(rng.standard_normal(d) * 3, dtype=torch.float64)
        i = int(rng.integers(n))
        lam = torch.linalg.eigvalsh(client_hessian(task, i, x))
        assert float(lam[-1]) <= task.L + 1e-12
        assert float(lam[0]) >= -task.weak_convexity - 1e-12
        assert float(torch.linalg.vector_norm(task.grad(x)[i])) <= task.G + 1e-12
    i = int(rng.integers(n))
    lam = torch.linalg.eigvalsh(client_hessian(task, i, task.centers[i]))
    assert float(lam[-1]) == pytest.approx(task.L, abs=1e-12)          # attained at x = b_i
    lam = torch.linalg.eigvalsh(client_hessian(task, i, task.centers[i] + np.sqrt(3.0)))
    assert float(lam[0]) == pytest.approx(-task.weak_convexity, abs=1e-12)
    g = task.grad(task.centers[i] + 1.0)[i]
    assert float(torch.linalg.vector_norm(g)) == pytest.approx(task.G, abs=1e-12)
    assert float(g.abs().max()) == pytest.approx(task.G_inf, abs=1e-12)


@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 6), d=st.integers(1, 3), seed=st.integers(0, 10**6))
def test_optimum_is_global_and_stationary(n, d, seed):
    task = RobustRegression.generate(n, d, heterogeneity=3.0, seed=seed)
    assert float(torch.linalg.vector_norm(task.global_grad(task.x_star))) <= 1e-10
    b = task.centers.numpy()
    for j in range(d):   # dense grid per coordinate, independent of the task's search
        t = np.linspace(b[:, j].min() - 1, b[:, j].max() + 1, 20001)
        f = np.mean(np.log1p((t[:, None] - b[None, :, j]) ** 2), axis=1)
        assert np.mean(np.log1p((task.x_star[j].item() - b[:, j]) ** 2)) <= f.min() + 1e-12


def test_grad_matches_autograd():
    task = RobustRegression.generate(4, 5, seed=3)
    X = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    auto = torch.autograd.grad(task.local_losses(X).sum(), X)[0]
    assert torch.allclose(task.grad(X), auto, rtol=0, atol=1e-12)


def test_global_smoothness_is_the_max_curvature_of_f():
    task = RobustRegression.generate(5, 3, heterogeneity=0.7, seed=1)
    b = task.centers.numpy()
    t = np.linspace(b.min() - 3, b.max() + 3, 200001)
    u = t[:, None, None] - b[None]
    curv = np.mean(2 * (1 - u**2) / (1 + u**2) ** 2, axis=1)       # (T, d)
    assert task.L_global == pytest.approx(curv.max(), abs=1e-8)
    assert task.L_global <= task.L


def loop_sigma_g2_coordinate(b_j, t):
    u = t[:, None] - b_j[None, :]
    grads = 2 * u / (1 + u**2)
    return np.mean((grads - grads.mean(axis=1, keepdims=True)) ** 2, axis=1)


def test_heterogeneity_constants_match_dense_search():
    task = RobustRegression.generate(6, 3, heterogeneity=1.5, seed=2)
    b = task.centers.numpy()
    t = np.linspace(b.min() - 20, b.max() + 20, 400001)
    expected = sum(loop_sigma_g2_coordinate(b[:, j], t).max() for j in range(3))
    assert task.sigma_g2() == pytest.approx(expected, rel=1e-7)
    assert task.sigma_g2() >= expected
    subnet_of = np.array([0, 0, 0, 1, 1, 1])
    intra = [sum(loop_sigma_g2_coordinate(b[subnet_of == k, j], t).max() for j in range(3)) for k in range(2)]
    assert np.allclose(task.intra_cluster(subnet_of), intra, rtol=1e-7)
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.standard_normal(3) * 3
        assert task.sigma_g2(at=x) <= task.sigma_g2() + 1e-12
        grads = task.grad(torch.as_tensor(x)).numpy()
        means = [grads[subnet_of == k].mean(0) for k in range(2)]
        inter = np.mean([m @ m for m in means]) - 1.5**2 * grads.mean(0) @ grads.mean(0)
        assert task.inter_cluster(subnet_of, alpha=1.5, at=x) == pytest.approx(inter, abs=1e-12)
        assert inter <= task.inter_cluster(subnet_of, alpha=1.5) + 1e-12


def test_sphere_noise_keeps_gradients_bounded():
    task = RobustRegression.generate(3, 4, seed=0).with_noise(0.5, "sphere")
    assert task.G == pytest.approx(2.0 + 0.5) and task.G_inf == pytest.approx(1.5)
    g = task.stochastic_grad(task.centers + 1.0, torch.Generator().manual_seed(0))
    assert float(torch.linalg.vector_norm(g, dim=1).max()) <= task.G + 1e-12
    assert RobustRegression.generate(3, 4, seed=0).with_noise(0.5).G == float("inf")
