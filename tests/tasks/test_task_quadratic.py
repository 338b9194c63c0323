"""Quadratic task: exact constants, optimum, gradients, validation, closed-form heterogeneity."""
import numpy as np
import pytest
import scipy.optimize
import torch
from hypothesis import given, settings, strategies as st

from fedbound.errors import ValidationError
from fedbound.tasks import Quadratic, fednova_matrix


def autograd_hessians(task, x):
    """Hessian of every f_i at x, independently of the task's closed forms."""
    return torch.stack([torch.autograd.functional.hessian(lambda z, i=i: task.local_losses(z)[i], x)
                        for i in range(task.n)])


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 6), d=st.integers(1, 6), kappa=st.floats(1.0, 100.0), seed=st.integers(0, 10**6),
       hessian=st.sampled_from(["dense", "diagonal"]), shared=st.booleans())
def test_constants_are_extreme_hessian_eigenvalues(n, d, kappa, seed, hessian, shared):
    task = Quadratic.generate(n, d, kappa=kappa, mu=0.5, hessian=hessian, shared=shared, seed=seed)
    x = torch.randn(d, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    lam = torch.linalg.eigvalsh(autograd_hessians(task, x))
    assert task.L == pytest.approx(float(lam[:, -1].max()), rel=1e-12)
    assert task.mu == pytest.approx(float(lam[:, 0].min()), rel=1e-12)
    if (1 if shared else n) * d >= 2:
        assert task.L / task.mu == pytest.approx(kappa, rel=1e-10)
    lam_bar = torch.linalg.eigvalsh(torch.einsum("i,ijk->jk", task.weights, autograd_hessians(task, x)))
    assert task.L_global == pytest.approx(float(lam_bar[-1]), rel=1e-12)
    assert task.mu_global == pytest.approx(float(lam_bar[0]), rel=1e-12)
    assert float(torch.linalg.vector_norm(task.global_grad(task.x_star))) <= 1e-10
    assert task.f_star == pytest.approx(task.loss(task.x_star))


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 5), d=st.integers(1, 5), seed=st.integers(0, 10**6))
def test_grad_matches_autograd(n, d, seed):
    task = Quadratic.generate(n, d, kappa=5.0, seed=seed)
    X = torch.randn(n, d, dtype=torch.float64, generator=torch.Generator().manual_seed(seed), requires_grad=True)
    auto = torch.autograd.grad(task.local_losses(X).sum(), X)[0]
    assert torch.allclose(task.grad(X), auto, rtol=0, atol=1e-10)
    assert torch.allclose(task.global_grad(X[0].detach()), task.weights @ task.grad(X[0].detach()), atol=1e-12)


def test_psd_hessians_and_user_weights():
    H = np.stack([np.diag([1.0, 0.0]), np.diag([0.0, 2.0])])
    b = np.array([[1.0, 5.0], [-3.0, 2.0]])
    with pytest.raises(ValidationError, match="SPD"):
        Quadratic(H, b)
    task = Quadratic(H, b, spd=False, weights=[0.25, 0.75])
    assert task.mu == 0.0 and task.L == 2.0
    assert task.mu_global == pytest.approx(0.25) and task.L_global == pytest.approx(1.5)
    assert torch.allclose(task.x_star, torch.tensor([1.0, 2.0], dtype=torch.float64), atol=1e-14)


@pytest.mark.parametrize("H, b, match", [
    (np.ones((2, 3, 3)), np.zeros((2, 2)), "shape"),
    (np.array([[[1.0, 2.0], [0.0, 1.0]]]), np.zeros((1, 2)), "symmetric"),
    (np.array([[[1.0, 0.0], [0.0, -1.0]]]), np.zeros((1, 2)), "lambda_min"),
    (np.eye(2)[None], np.array([[np.nan, 0.0]]), "finite"),
    (np.eye(2), np.zeros((1, 2)), "3 dimensions"),
])
def test_bad_input_is_rejected(H, b, match):
    with pytest.raises(ValidationError, match=match):
        Quadratic(H, b)


@pytest.mark.parametrize("kwargs, match", [
    ({"n": 0, "d": 2}, "n must be an integer >= 1"),
    ({"n": 2, "d": 2, "kappa": 0.5}, "kappa must be >= 1"),
    ({"n": 2, "d": 2, "mu": -1.0}, "mu must be > 0"),
    ({"n": 2, "d": 2, "hessian": "full"}, "hessian must be one of"),
])
def test_bad_generator_arguments(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        Quadratic.generate(**kwargs)


def test_weights_are_validated():
    with pytest.raises(ValidationError, match="sum to 1"):
        Quadratic.generate(3, 2).kappa2(weights=[0.5, 0.5, 0.5])
    with pytest.raises(ValidationError, match="beta2 must be >= 1"):
        Quadratic.generate(3, 2).kappa2(beta2=0.5)


def loop_measure(task, x, weights, beta2):
    """FedNova's bracket by a plain loop over clients."""
    grads = [task.grad(torch.as_tensor(x))[i].numpy() for i in range(task.n)]
    mean = sum(w * g for w, g in zip(weights, grads))
    return sum(w * g @ g for w, g in zip(weights, grads)) - beta2 * mean @ mean


def test_kappa2_is_the_sup_of_the_loop_definition():
    task = Quadratic.generate(5, 3, kappa=4.0, seed=3)
    w = np.array([0.1, 0.3, 0.2, 0.15, 0.25])
    beta2 = 1.5 * task.beta2_min(w)
    kappa2 = task.kappa2(w, beta2)
    best = scipy.optimize.minimize(lambda x: -loop_measure(task, x, w, beta2), np.zeros(3), method="BFGS",
                                   options={"gtol": 1e-12})
    assert kappa2 == pytest.approx(-best.fun, rel=1e-8)
    x_max = task.maximiser(fednova_matrix(w, beta2))
    assert loop_measure(task, x_max, w, beta2) == pytest.approx(kappa2, rel=1e-10)
    for x in np.random.default_rng(0).standard_normal((20, 3)) * 5:
        assert loop_measure(task, x, w, beta2) <= kappa2 * (1 + 1e-12)
        assert task.kappa2(w, beta2, at=x) == pytest.approx(loop_measure(task, x, w, beta2), rel=1e-10, abs=1e-10)


def test_beta2_min_is_the_generalised_eigenvalue():
    """beta2_min = max_v sum_i w_i ||H_i v||^2 / ||Hbar v||^2 (loop over clients, scipy's generalised eigh);
    below it kappa^2 is infinite and the bracket grows like s^2 along the maximising v, above it is finite."""
    import scipy.linalg
    task = Quadratic.generate(4, 3, kappa=10.0, seed=1)
    w = task._weights_np
    H = [task.hessians[i].numpy() for i in range(task.n)]
    S = sum(wi * Hi @ Hi for wi, Hi in zip(w, H))
    Hbar = sum(wi * Hi for wi, Hi in zip(w, H))
    lam, V = scipy.linalg.eigh(S, Hbar @ Hbar)
    assert task.beta2_min() == pytest.approx(lam[-1], rel=1e-10)
    beta2 = (1.0 + lam[-1]) / 2.0
    assert task.kappa2(beta2=beta2) == float("inf")
    assert np.isfinite(task.kappa2(beta2=1.01 * lam[-1]))
    values = [loop_measure(task, s * V[:, -1], w, beta2) for s in (1e2, 1e4)]
    assert values[1] > 0.9e4 * values[0] > 0


def test_shared_hessian_closed_forms():
    """afga.md sec. 7.2 Q1: with one H, sigma_g^2 = (1/N) sum ||H (b_i - bbar)||^2, sigma_k^2 and sigma_c^2
    (alpha = 1, equal clusters) likewise; FedNova beta^2 = 1, kappa^2 = sum w_i ||e_i - ebar||^2."""
    task = Quadratic.generate(6, 4, kappa=8.0, shared=True, hessian="dense", seed=5)
    H, b = task.hessians[0].numpy(), task.centers.numpy()
    e = b @ H
    subnet_of = np.array([0, 0, 1, 1, 2, 2])
    expected_g = np.mean([np.sum((e[i] - e.mean(0)) ** 2) for i in range(6)])
    assert task.sigma_g2() == pytest.approx(expected_g, rel=1e-10)
    expected_k = [np.mean([np.sum((e[i] - e[subnet_of == k].mean(0)) ** 2) for i in np.flatnonzero(subnet_of == k)])
                  for k in range(3)]
    assert np.allclose(task.intra_cluster(subnet_of), expected_k, rtol=1e-10)
    expected_c = np.mean([np.sum((e[subnet_of == k].mean(0) - e.mean(0)) ** 2) for k in range(3)])
    assert task.inter_cluster(subnet_of) == pytest.approx(expected_c, rel=1e-10)
    assert task.beta2_min() == pytest.approx(1.0, abs=1e-10)
    assert task.kappa2() == pytest.approx(expected_g, rel=1e-10)


def test_sigma_g_is_infinite_for_different_hessians():
    task = Quadratic.generate(3, 2, kappa=3.0, seed=0)
    assert task.sigma_g2() == float("inf")
    u = np.array([1.0, 0.3])
    values = [task.sigma_g2(at=s * u) for s in (1e3, 1e6)]
    assert values[1] > 1e5 * values[0]


def test_dtype_option():
    task = Quadratic.generate(3, 2, seed=0, dtype=torch.float32)
    assert task.grad(torch.zeros(3, 2)).dtype == torch.float32
    assert task.x_star.dtype == torch.float32 and task.x0.dtype == torch.float32
    with pytest.raises(ValidationError, match="dtype"):
        Quadratic.generate(3, 2, dtype=torch.int64)
