"""MLP classifier: vmap gradients equal autograd, padding is invisible, minibatches, accuracy."""
import numpy as np
import pytest
import torch

from fedbound.errors import ValidationError
from fedbound.tasks import MLPClassifier

Z999 = 3.2905


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_vmap_gradients_match_autograd(activation):
    task = MLPClassifier.generate(5, num_samples=300, dim=6, num_classes=4, hidden=(8, 5), activation=activation,
                                  alpha=0.5, seed=1)
    X = (task.x0 + 0.1 * torch.randn(task.n, task.d, dtype=torch.float64)).requires_grad_(True)
    auto = torch.autograd.grad(task.local_losses(X).sum(), X)[0]
    assert torch.allclose(task.grad(X), auto, rtol=0, atol=1e-10)
    assert task.L is None and task.mu is None and task.x_star is None and task.f_star is None


def test_padding_does_not_change_client_losses():
    """Each client's loss equals the plain module loss on its own (unpadded) data, client by client."""
    task = MLPClassifier.generate(4, num_samples=200, dim=3, num_classes=3, hidden=(4,), alpha=0.3, seed=2)
    assert len(set(task.data.sizes.tolist())) > 1
    X = task.x0 + 0.1 * torch.randn(task.n, task.d, dtype=torch.float64)
    losses = task.local_losses(X)
    for i in range(task.n):
        m = int(task.data.sizes[i])
        logits = task.logits(X[i], task.data.features[i, :m])
        ref = torch.nn.functional.cross_entropy(logits, task.data.labels[i, :m])
        assert float(losses[i]) == pytest.approx(float(ref), abs=1e-12)


def test_minibatch_gradients_are_unbiased():
    task = MLPClassifier.generate(3, num_samples=120, dim=3, num_classes=3, hidden=(4,), batch_size=4, seed=3)
    assert task.sigma2 is None and task.with_noise(1.0).sigma2 is None
    full = task.grad(task.x0)
    gen = torch.Generator().manual_seed(0)
    draws = torch.stack([task.stochastic_grad(task.x0, gen) for _ in range(800)]) - full
    sample = draws[:, :, :6].reshape(800, -1).numpy()
    assert np.all(np.abs(sample.mean(0)) <= Z999 * sample.std(0, ddof=1) / np.sqrt(800) + 1e-15)
    whole = MLPClassifier.generate(3, num_samples=120, dim=3, num_classes=3, hidden=(4,), batch_size=10**6, seed=3)
    assert torch.allclose(whole.stochastic_grad(whole.x0, gen), full, atol=1e-14)


def test_gradient_descent_learns_the_mixture():
    task = MLPClassifier.generate(6, num_samples=600, dim=8, num_classes=4, hidden=(16,), alpha=1.0, seed=0)
    x = task.x0.clone()
    start = task.accuracy(x)
    for _ in range(150):
        x = x - 0.5 * task.global_grad(x)
    assert task.accuracy(x) > max(0.7, start + 0.2)
    assert task.sigma2 == 0.0


def test_digits_one_class_per_client():
    task = MLPClassifier.generate(10, dataset="digits", partition="one_class", hidden=(8,), seed=0)
    assert task.d == 64 * 8 + 8 + 8 * 10 + 10
    for i in range(task.n):
        m = int(task.data.sizes[i])
        assert torch.unique(task.data.labels[i, :m]).numel() == 1
    assert 0.0 <= task.accuracy(task.x0) <= 1.0


def test_bad_input_is_rejected():
    with pytest.raises(ValidationError, match="activation"):
        MLPClassifier.generate(2, activation="gelu")
    with pytest.raises(ValidationError, match="dataset"):
        MLPClassifier.generate(2, dataset="mnist")
    with pytest.raises(ValidationError, match="alpha must be > 0"):
        MLPClassifier.generate(2, alpha=0.0)
    with pytest.raises(ValidationError, match="test_features"):
        MLPClassifier([np.zeros((2, 3))], [np.array([0, 1])], np.zeros((2, 4)), np.array([0, 1]))
