"""Tasks by name, the Task interface shared by every task, and its summary."""
import math

import numpy as np
import pytest
import torch

from fedbound.errors import UnknownNameError, ValidationError
from fedbound.tasks import TASKS, Task, make_task


def small(name) -> dict:
    """The task's size options at their first registered example, float64 (lsq-convex chooses its
    own d > n rows)."""
    spec = TASKS.get(name)
    sizes = ("n", "rows") if name == "lsq-convex" else ("n", "d", "rows")
    return {o.name: o.examples[0] for o in spec.options if o.name in sizes} | {
        "seed": 1, "float64": True}


@pytest.mark.parametrize("name", TASKS.names())
def test_every_task_has_the_stacked_interface(name):
    task = make_task(name, **small(name))
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
    with pytest.raises(UnknownNameError, match="task must be one of .*, got 'lasso'"):
        make_task("lasso")
    with pytest.raises(UnknownNameError, match="did you mean 'n'"):
        make_task("quadratic", nn=3)
    with pytest.raises(UnknownNameError, match="option of mlp-digits"):
        make_task("mlp-digits", d=3)


def test_the_old_generator_names_still_work_and_warn():
    from fedbound.deprecation import FedboundDeprecationWarning
    from fedbound.tasks import LeastSquares
    with pytest.warns(FedboundDeprecationWarning, match="make_task\\('least_squares'"):
        task = make_task("least_squares", n=3, m=4, d=5, seed=1)
    reference = LeastSquares.generate(3, 4, 5, seed=1)
    assert isinstance(task, LeastSquares) and torch.equal(task.x_star, reference.x_star)


def test_unreadable_npz(tmp_path):
    from fedbound.tasks import LeastSquares
    (tmp_path / "junk.npz").write_text("not a zip")
    with pytest.raises(ValidationError, match="not a readable .npz"):
        LeastSquares.from_npz(tmp_path / "junk.npz")
    np.save(tmp_path / "one.npy", np.zeros(3))
    with pytest.raises(ValidationError, match="single array"):
        LeastSquares.from_npz(tmp_path / "one.npy")
