"""Tasks by name, the Task interface shared by every task, and its summary."""
import math

import numpy as np
import pytest
import torch

from fedbound.errors import UnknownNameError, ValidationError
from fedbound.tasks import TASKS, Task, make_task

SMALL = {
    "quadratic": {"n": 3, "d": 2},
    "least_squares": {"n": 3, "m": 4, "d": 5},
    "logistic": {"n": 3, "dim": 2, "num_classes": 3, "max_size": 30},
    "robust_regression": {"n": 3, "d": 2},
    "heavy_tailed": {"n": 3, "d": 2},
    "mlp": {"n": 3, "num_samples": 60, "dim": 3, "num_classes": 3, "hidden": (4,)},
}


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_task_has_the_stacked_interface(name):
    task = make_task(name, seed=1, **SMALL[name])
    assert isinstance(task, Task) and task.dtype == torch.float64
    n, d = task.n, task.d
    X = task.x0 + 0.1 * torch.randn(n, d, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    assert task.grad(X).shape == (n, d) and task.local_losses(X).shape == (n,)
    assert task.stochastic_grad(X, torch.Generator().manual_seed(0)).shape == (n, d)
    assert task.global_grad(X[0]).shape == (d,) and isinstance(task.loss(X[0]), float)
    assert torch.allclose(task.grad(X[0]), task.grad(X[0].expand(n, d)))
    Xg = X.clone().requires_grad_(True)
    auto = torch.autograd.grad(task.local_losses(Xg).sum(), Xg)[0]
    assert torch.allclose(task.grad(X), auto, rtol=0, atol=1e-10)
    noisy = task.with_noise(0.5)
    assert noisy.sigma2 is None or noisy.sigma2 == pytest.approx(task.sigma2 + 0.25)
    summary = task.constants()
    assert summary["n"] == n and summary["task"] == type(task).__name__
    assert all(v is None or isinstance(v, (int, float, str, list)) for v in summary.values())
    if task.x_star is not None:
        assert float(torch.linalg.vector_norm(task.global_grad(task.x_star))) <= 1e-10
        assert math.isfinite(task.f_star)
    with pytest.raises(ValidationError, match="X must have shape"):
        task.grad(torch.zeros(n + 1, d))


def test_unknown_name():
    with pytest.raises(UnknownNameError, match="unknown task 'lasso'; valid names"):
        make_task("lasso")


def test_unreadable_npz(tmp_path):
    from fedbound.tasks import LeastSquares
    (tmp_path / "junk.npz").write_text("not a zip")
    with pytest.raises(ValidationError, match="not a readable .npz"):
        LeastSquares.from_npz(tmp_path / "junk.npz")
    np.save(tmp_path / "one.npy", np.zeros(3))
    with pytest.raises(ValidationError, match="single array"):
        LeastSquares.from_npz(tmp_path / "one.npy")
