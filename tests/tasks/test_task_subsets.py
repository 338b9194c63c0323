"""Gradients for a subset of clients (issue 9, Speed): every task gives grad, stochastic_grad and
local_losses for the clients idx only, equal to the rows idx of the all-client values, with
randomness drawn for those rows only; example-count aggregation weights."""
import numpy as np
import pytest
import torch

from fedbound.tasks import (HeavyTailedQuadratic, LeastSquares, LogisticRegression, MLPClassifier,
                            Quadratic, RobustRegression)

N, D = 7, 4
TASKS = {
    "quadratic": lambda: Quadratic.generate(N, D, seed=0),
    "least_squares": lambda: LeastSquares.generate(N, 5, D, seed=1),
    "logistic": lambda: LogisticRegression.generate(N, dim=3, num_classes=3, max_size=15, batch_size=4, seed=2),
    "robust": lambda: RobustRegression.generate(N, D, seed=3),
    "heavy_tailed": lambda: HeavyTailedQuadratic.generate(N, D, law="student_t", spread=1.0, seed=4),
    "mlp": lambda: MLPClassifier.generate(N, dim=4, num_classes=3, num_samples=70, hidden=(3,),
                                          batch_size=3, seed=5),
}


@pytest.fixture(params=list(TASKS), scope="module")
def task(request):
    return TASKS[request.param]()


def test_subset_gradients_and_losses_are_the_rows_of_the_full_ones(task):
    X = torch.randn(task.n, task.d, generator=torch.Generator().manual_seed(0), dtype=task.dtype)
    idx = torch.tensor([5, 0, 5, 2])            # a repeat: with-replacement sampling
    full_g, full_f = task.grad(X), task.local_losses(X)
    torch.testing.assert_close(task.grad(X[idx], clients=idx), full_g[idx], rtol=0, atol=1e-12)
    torch.testing.assert_close(task.local_losses(X[idx], clients=idx), full_f[idx], rtol=0, atol=1e-12)
    view = task.clients(idx)
    torch.testing.assert_close(view.grad(X[idx]), full_g[idx], rtol=0, atol=1e-12)
    rows = torch.tensor([3, 1])
    torch.testing.assert_close(view.grad(X[idx][rows], rows=rows), full_g[idx][rows], rtol=0, atol=1e-12)
    assert torch.equal(view.weights, task.weights[idx])


def test_subset_stochastic_gradients_draw_for_the_subset_only(task):
    noisy = task.with_noise(0.5)
    idx = torch.tensor([1, 4, 4])
    X = noisy.x0.expand(3, -1)
    gen = torch.Generator().manual_seed(7)
    G = noisy.stochastic_grad(X, gen, clients=idx)
    assert G.shape == (3, task.d)
    assert not torch.equal(G[1], G[2])                 # independent noise per copy
    same = noisy.clients(idx).stochastic_grad(X, torch.Generator().manual_seed(7))
    assert torch.equal(G, same)
    if task.sigma2 == 0.25:   # no own sampling: the noise is exactly one (3, d) draw
        from fedbound.tasks import gradient_noise
        noise = gradient_noise((3, task.d), 0.5, "gaussian", torch.Generator().manual_seed(7))
        torch.testing.assert_close(G - task.grad(X, clients=idx), noise, rtol=0, atol=1e-12)


def test_subset_stochastic_gradients_are_unbiased():
    task = LeastSquares.generate(N, 5, D, seed=1).with_noise(1.0)
    idx = torch.tensor([2, 6])
    gen = torch.Generator().manual_seed(0)
    X = torch.zeros(2, D, dtype=torch.float64)
    mean = sum(task.stochastic_grad(X, gen, clients=idx) for _ in range(4000)) / 4000
    # noise std per coordinate 1/sqrt(D); the mean of 4000 draws has std 1/sqrt(4000 D) ~ 0.008
    torch.testing.assert_close(mean, task.grad(X, clients=idx), rtol=0, atol=0.05)


def test_bad_client_indices_are_rejected(task):
    with pytest.raises(ValueError, match=r"clients must be indices in \[0, 6\]"):
        task.grad(task.x0, clients=torch.tensor([0, 7]))
    with pytest.raises(ValueError, match="integer indices"):
        task.grad(task.x0, clients=torch.tensor([0.0]))
    with pytest.raises(ValueError, match=r"X must have shape \(2, "):
        task.grad(torch.zeros(3, task.d), clients=torch.tensor([0, 1]))


def test_example_count_weights():
    sizes = np.array([3, 5, 2])
    rng = np.random.default_rng(0)
    feats = [rng.standard_normal((s, 2)) for s in sizes]
    labels = [np.arange(s) % 2 for s in sizes]
    task = LogisticRegression(feats, labels, weights="examples")
    assert np.array_equal(task.num_examples, sizes)
    torch.testing.assert_close(task.weights, torch.as_tensor(sizes / sizes.sum()))
    lsq = LeastSquares(np.ones((2, 3, 2)), np.ones((2, 3)), weights="examples")
    torch.testing.assert_close(lsq.weights, torch.tensor([0.5, 0.5], dtype=torch.float64))
    with pytest.raises(ValueError, match="weights must be 'uniform', 'examples'"):
        LeastSquares(np.ones((2, 3, 2)), np.ones((2, 3)), weights="sizes")
