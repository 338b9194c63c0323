"""Multinomial logistic regression on Synthetic(alpha, beta): gradients, Hessian, mu exact, L bound, x*,
minibatch variance."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from fedbound.errors import ValidationError
from fedbound.tasks import LogisticRegression

Z999 = 3.2905


def small(seed=0, **kw):
    return LogisticRegression.generate(5, dim=4, num_classes=3, max_size=40, seed=seed, **kw)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6), l2=st.sampled_from([1e-3, 1e-1]))
def test_gradients_hessian_and_constants(seed, l2):
    task = small(seed, l2=l2)
    rng = torch.Generator().manual_seed(seed)
    X = torch.randn(task.n, task.d, dtype=torch.float64, generator=rng, requires_grad=True)
    auto = torch.autograd.grad(task.local_losses(X).sum(), X)[0]
    assert torch.allclose(task.grad(X), auto, rtol=0, atol=1e-10)
    x = 3 * torch.randn(task.d, dtype=torch.float64, generator=rng)
    hess = torch.autograd.functional.hessian(lambda z: task.weights @ task.local_losses(z), x)
    assert torch.allclose(task.hessian_global(x), hess, rtol=0, atol=1e-10)
    for i in range(task.n):      # per client: mu exact, L an upper bound of the stated form
        Hi = torch.autograd.functional.hessian(lambda z: task.local_losses(z)[i], x)
        lam = torch.linalg.eigvalsh(Hi)
        assert float(lam[0]) == pytest.approx(task.mu, rel=1e-7)
        m = int(task.data.sizes[i])
        A = task.data.features[i, :m]
        bound = 0.5 * float(torch.linalg.eigvalsh(A.T @ A / m)[-1]) + l2
        assert float(lam[-1]) <= bound + 1e-12 and bound <= task.L + 1e-12
    assert task.mu == task.mu_global == l2
    assert {"L", "L_global"} <= task.bounds
    assert float(torch.linalg.vector_norm(task.global_grad(task.x_star))) <= 1e-10
    assert task.f_star == pytest.approx(task.loss(task.x_star))


def test_synthetic_sizes_and_weighting():
    task = LogisticRegression.generate(8, dim=6, num_classes=4, max_size=300, weighting="data", seed=3)
    sizes = task.data.sizes.numpy()
    assert sizes.min() >= 50 and sizes.max() <= 300
    assert np.allclose(task.weights.numpy(), sizes / sizes.sum())
    assert task.d == 4 * 7
    rng = np.random.default_rng(3)
    assert np.array_equal(sizes, np.minimum(rng.lognormal(4.0, 2.0, 8).astype(int) + 50, 300))
    assert float(torch.linalg.vector_norm(task.global_grad(task.x_star))) <= 1e-10


def test_user_arrays_and_no_regulariser():
    feats = [np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([[1.0, 1.0]])]
    labels = [np.array([0, 1]), np.array([2])]
    task = LogisticRegression(feats, labels, l2=0.0)
    assert task.num_classes == 3 and task.d == 9 and task.x_star is None and task.f_star is None
    assert task.local_losses(torch.zeros(9)).numpy() == pytest.approx([np.log(3)] * 2)


@pytest.mark.parametrize("kwargs, match", [
    ({"l2": -1.0}, "l2 must be >= 0"),
    ({"num_classes": 2}, "labels must be < num_classes"),
    ({"batch_size": 0}, "batch_size must be None or an integer >= 1"),
])
def test_bad_input_is_rejected(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        LogisticRegression([np.zeros((2, 3))], [np.array([0, 2])], **kwargs)


def test_minibatch_gradient_is_unbiased_with_the_finite_population_variance():
    task = LogisticRegression.generate(3, dim=3, num_classes=3, sizes=np.array([12, 7, 30]), batch_size=5, seed=1)
    assert "sigma2" in task.bounds
    x = torch.randn(task.d, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    full = task.grad(x)
    gen = torch.Generator().manual_seed(1)
    draws = torch.stack([task.stochastic_grad(x, gen) for _ in range(4000)]) - full     # (T, n, d)
    sq = torch.sum(draws**2, dim=2).numpy()
    for i in range(task.n):
        m = int(task.data.sizes[i])
        A = task.data.features[i, :m]
        W = x.reshape(task.num_classes, -1)
        P = torch.softmax(A @ W.T, dim=1) - torch.nn.functional.one_hot(task.data.labels[i, :m], task.num_classes)
        per_sample = (P[:, :, None] * A[:, None, :]).reshape(m, -1)
        S2 = float(torch.mean(torch.sum((per_sample - per_sample.mean(0)) ** 2, dim=1)))
        exact = (m - 5) / (5 * (m - 1)) * S2
        half = Z999 * sq[:, i].std(ddof=1) / np.sqrt(sq.shape[0])
        assert abs(sq[:, i].mean() - exact) <= half
        assert exact <= task.sigma2
        mean = draws[:, i, :4].numpy()
        assert np.all(np.abs(mean.mean(0)) <= Z999 * mean.std(0, ddof=1) / np.sqrt(mean.shape[0]) + 1e-15)


def test_a_negative_zero_is_zero():
    """beta = -0.0 passes `>= 0` but numpy's normal refuses a scale of -0.0 ("scale < 0"): the
    validation layer hands every number on as +0.0 where it is zero (found by the fuzz suite)."""
    a, b = (LogisticRegression.generate(4, alpha=0.5, beta=beta, dim=3, num_classes=2, seed=1)
            for beta in (-0.0, 0.0))
    assert torch.equal(a.data.features, b.data.features)
