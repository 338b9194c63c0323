"""Gradient noise: E||noise||^2 = sigma^2 by Monte Carlo (99.9% CI), heavy-tailed laws, sigma2 bookkeeping."""
import numpy as np
import pytest
import torch

from fedbound.errors import ValidationError
from fedbound.tasks import HeavyTailedQuadratic, LeastSquares, Quadratic, gradient_noise

Z999 = 3.2905   # two-sided 99.9% normal quantile


def assert_mean_in_ci(samples: np.ndarray, expected: float):
    half = Z999 * samples.std(ddof=1) / np.sqrt(samples.size)
    assert abs(samples.mean() - expected) <= half, (samples.mean(), expected, half)


@pytest.mark.parametrize("d, sigma", [(1, 0.7), (5, 2.0), (40, 0.1)])
def test_gaussian_noise_has_variance_sigma2(d, sigma):
    task = Quadratic.generate(8, d, seed=0).with_noise(sigma)
    assert task.sigma2 == pytest.approx(sigma**2)
    gen = torch.Generator().manual_seed(1)
    X = torch.randn(8, d, dtype=torch.float64)
    noise = torch.cat([task.stochastic_grad(X, gen) - task.grad(X) for _ in range(2000)]).numpy()
    assert_mean_in_ci(np.sum(noise**2, axis=1), sigma**2)
    for j in range(min(d, 3)):       # unbiased
        assert_mean_in_ci(noise[:, j], 0.0)


def test_sphere_noise_has_norm_sigma():
    noise = gradient_noise((500, 7), 1.3, "sphere", torch.Generator().manual_seed(0))
    assert torch.allclose(torch.linalg.vector_norm(noise, dim=1), torch.full((500,), 1.3, dtype=torch.float64))
    assert_mean_in_ci(noise[:, 0].numpy(), 0.0)


def test_noises_add_up_and_are_validated():
    task = LeastSquares.generate(3, 4, 2, seed=0)
    assert task.sigma2 == 0.0
    noisy = task.with_noise(0.3).with_noise(0.4, "sphere")
    assert noisy.sigma2 == pytest.approx(0.25)
    assert task.sigma2 == 0.0 and noisy.x_star is task.x_star
    with pytest.raises(ValidationError, match="sigma must be"):
        task.with_noise(-1.0)
    with pytest.raises(ValidationError, match="noise kind"):
        task.with_noise(1.0, "uniform")


def test_same_seed_same_noise():
    task = Quadratic.generate(4, 3, seed=0).with_noise(1.0)
    a = task.stochastic_grad(task.x0, torch.Generator().manual_seed(7))
    b = task.stochastic_grad(task.x0, torch.Generator().manual_seed(7))
    assert torch.equal(a, b)


def test_student_t_variance_is_nu_over_nu_minus_2():
    """Student-t with nu = 9 (finite 4th moment, so the CI is valid) and a Gaussian client, d = 2."""
    task = HeavyTailedQuadratic(["student_t", "gaussian"], [9.0, 0.5], d=2)
    assert np.allclose(task.client_sigma2, [2 * 9 / 7, 2 * 0.25])
    assert task.sigma2 == pytest.approx(2 * 9 / 7)
    gen = torch.Generator().manual_seed(3)
    xi = torch.stack([task.stochastic_grad(task.x_star, gen) - task.grad(task.x_star) for _ in range(20000)])
    sq = torch.sum(xi**2, dim=2).numpy()
    assert_mean_in_ci(sq[:, 0], 2 * 9 / 7)
    assert_mean_in_ci(sq[:, 1], 2 * 0.25)
    assert_mean_in_ci(xi[:, 0, 0].numpy(), 0.0)


def test_proposition_9_clients():
    task = HeavyTailedQuadratic.student_t_clients(5)
    assert task.client_sigma2[0] == float("inf")                       # t_2
    assert np.allclose(task.client_sigma2[1:], [3 / 1, 4 / 2, 5 / 3, 6 / 4])
    assert task.sigma2 == float("inf") and task.L == task.mu == 1.0
    assert float(task.x_star) == 0.0 and task.f_star == 0.0


def test_cauchy_variance_does_not_converge():
    """sigma2 = inf for a Cauchy client, and its Monte-Carlo second moment explodes while the Gaussian
    clients' estimate sits at sigma^2: with 10^6 draws of Cauchy(0, 0.3), P(mean xi^2 < 10^3) <=
    P(max |xi| < sqrt(10^9)) ~ exp(-2 * 0.3 * 10^6 / (pi sqrt(10^9))) < 0.003."""
    task = HeavyTailedQuadratic.cauchy_client(3, gamma=0.3, sigma=1.0, d=250000)
    assert task.sigma2 == float("inf") and task.client_sigma2[0] == float("inf")
    gen = torch.Generator().manual_seed(0)
    x = torch.zeros(task.d, dtype=torch.float64)
    xi = torch.cat([task.stochastic_grad(x, gen) - task.grad(x) for _ in range(4)], dim=1).numpy()
    assert xi.shape == (3, 10**6)
    assert np.mean(xi[0] ** 2) > 1e3
    assert_mean_in_ci(xi[1] ** 2, 1.0)
    assert np.median(np.abs(xi[0])) == pytest.approx(0.3, rel=0.01)   # the Cauchy median of |xi| is gamma


@pytest.mark.parametrize("laws, params, match", [
    (["student_t"], [0.0], "student_t parameter must be > 0"),
    (["levy"], [1.0], "noise law must be one of"),
    (["cauchy", "gaussian"], [1.0], "params must have one entry per law"),
])
def test_bad_laws_are_rejected(laws, params, match):
    with pytest.raises(ValidationError, match=match):
        HeavyTailedQuadratic(laws, params)
