"""The exact constants of a quadratic task are computed at their first read (issue 24: building a
1000-client least-squares task computed n eigendecompositions and a solve up front), by group,
shared with the task's noisy copies, and assignable; their values are those computed eagerly."""
import numpy as np
import torch

from fedbound.tasks import LeastSquares, Quadratic

NAMES = ("L", "mu", "L_global", "mu_global", "x_star", "f_star")


def test_nothing_is_computed_before_the_first_read_then_each_group_once():
    """The curvature constants (n eigendecompositions) and the optimum (one solve) are computed
    apart: a run that reads x* and f* (every run does) does not pay for L and mu."""
    task = LeastSquares.generate(5, 4, 3, seed=0)
    assert task._lazy_constants == {}
    noisy = task.with_noise(0.5)
    x_star = noisy.x_star
    assert {"x_star", "f_star"} <= set(task._lazy_constants) and "L" not in task._lazy_constants
    L = noisy.L
    assert set(NAMES) <= set(task._lazy_constants) and task.L == L and task.x_star is x_star


def test_the_global_metrics_equal_the_passes_over_the_clients():
    """The closed form of QuadraticTask.global_metrics (an expansion about x*) against the direct
    loss and gradient, at points near and far from x*."""
    for task in (LeastSquares.generate(6, 5, 4, seed=3), Quadratic.generate(5, 3, seed=1)):
        rng = np.random.default_rng(0)
        X = task.x_star + torch.as_tensor(rng.normal(size=(7, task.d)) * np.logspace(-8, 2, 7)[:, None])
        losses, grads = task.global_metrics(X)
        for x, loss, grad in zip(X, losses, grads):
            np.testing.assert_allclose(float(loss), task.loss(x), rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(grad.numpy(), task.global_grad(x).numpy(), rtol=1e-9,
                                       atol=1e-12 * max(1.0, float(task.global_grad(x).norm())))


def test_the_values_are_the_closed_forms():
    task = Quadratic.generate(4, 3, kappa=5.0, mu=0.5, heterogeneity=1.0, seed=2)
    H = task.hessians.detach().numpy()
    e = task.linear_terms.detach().numpy()
    lam = np.linalg.eigvalsh(H)
    np.testing.assert_allclose(task.L, lam[:, -1].max(), rtol=1e-12)
    np.testing.assert_allclose(task.mu, lam[:, 0].min(), rtol=1e-12)
    x_star = np.linalg.solve(H.mean(axis=0), e.mean(axis=0))
    np.testing.assert_allclose(task.x_star.numpy(), x_star, rtol=1e-10)
    assert float(task.f_star) == float(task.loss(task.x_star))


def test_an_assigned_constant_overrides_for_that_task_only():
    task = LeastSquares.generate(3, 4, 2, seed=1)
    copy = task.with_noise(0.1)
    task.L = None
    assert task.L is None and copy.L is not None and torch.equal(task.x_star, copy.x_star)
