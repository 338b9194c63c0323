"""MLP classifier: the gradients by hand equal autograd, padding is invisible, minibatches,
accuracy; fused local steps, batch orders and a user's data (issue 35)."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from fedbound.algorithms.threads import torch_threads
from fedbound.errors import ValidationError
from fedbound.tasks import MLPClassifier

Z999 = 3.2905


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_gradients_by_hand_match_autograd(activation):
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


# ---- fused steps, batch orders, a user's data (issue 35) ------------------------------------------
def _sgd_steps(task, X, lr, steps, generator, ids=None, round_index=None):
    """``steps`` plain SGD steps of the oracle, one gradient call per step (the unfused path)."""
    oracle = task.clients(ids).oracle(generator, round_index)
    for _ in range(steps):
        X = X - lr * oracle(X, None)
    return X


@pytest.mark.parametrize("activation", ["tanh", "relu"])
@pytest.mark.parametrize("batch_size,batches", [(None, None), (3, None), (3, 5)])
@pytest.mark.parametrize("clients", ["indices", "slice", "all"])
@pytest.mark.parametrize("threads", [1, 2])   # numpy's steps on one torch thread, torch's on two
def test_fused_steps_equal_the_gradient_steps(activation, batch_size, batches, clients, threads):
    """The fused steps read the clients' samples from the task's arrays (``[features | 1]``, labels,
    mask) at the view's indices, a slice or all of them; the gradient steps from the gathered data."""
    task = MLPClassifier.generate(6, num_samples=200, dim=5, num_classes=3, hidden=(7, 4),
                                  activation=activation, batch_size=batch_size, batches=batches, seed=2)
    ids = {"indices": torch.tensor([4, 1, 1, 5]), "slice": slice(1, 5), "all": None}[clients]
    k = 4 if ids is not None else task.n
    X = task.x0 + 0.05 * torch.randn(k, task.d, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    with torch_threads(threads):
        fused = task.clients(ids).oracle(torch.Generator().manual_seed(3), 2).descend(X, 0.3, 4)
    steps = _sgd_steps(task, X, 0.3, 4, torch.Generator().manual_seed(3), ids, 2)
    assert torch.allclose(fused, steps, rtol=0, atol=1e-12)


def test_the_features_are_held_once_with_their_column_of_ones():
    task = MLPClassifier.generate(5, num_samples=120, dim=4, num_classes=3, seed=1)
    held = task._features_with_ones
    assert held.shape == (*task.data.features.shape[:2], 5)
    assert task.data.features.data_ptr() == held.data_ptr()   # a view: the samples are not copied
    assert torch.equal(held[:, :, :4], task.data.features) and bool((held[:, :, 4] == 1).all())


def test_no_compiler_stack_is_imported_for_a_gradient():
    code = ("import sys, torch\nfrom fedbound.tasks import MLPClassifier\n"
            "t = MLPClassifier.generate(3, num_samples=60, dim=3, num_classes=3, hidden=(4,))\n"
            "t.grad(t.x0)\nprint('torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.split() == ["False"]   # torch.func's first grad imports it (1.5 s)


def test_gradient_flops_count_the_products():
    task = MLPClassifier.generate(3, num_samples=60, dim=3, num_classes=3, hidden=(4,), seed=0)
    rows = task.data.features.shape[1]
    assert task.gradient_flops == (4 * (3 * 4 + 4 * 3) + 2 * 4 * 3) * rows
    mini = MLPClassifier.generate(3, num_samples=60, dim=3, num_classes=3, hidden=(4,), batch_size=2, seed=0)
    assert mini.gradient_flops == (4 * (3 * 4 + 4 * 3) + 2 * 4 * 3) * 2


def test_seeded_batches_are_a_shuffle_per_client_and_round_whoever_else_computes():
    task = MLPClassifier.generate(5, num_samples=100, dim=3, num_classes=3, hidden=(4,), batch_size=3,
                                  batches=11, seed=0)
    sizes = task.data.sizes
    order = task.batches
    alone = order.positions(torch.tensor([2]), sizes[[2]], 4, 1, 3)[0][0]
    together = order.positions(torch.tensor([0, 2, 4]), sizes[[0, 2, 4]], 4, 1, 3)[0][1]
    assert torch.equal(alone, together)
    m = int(sizes[3])
    epoch = torch.cat([order.positions(torch.tensor([3]), sizes[[3]], 7, s, 3)[0][0]
                       for s in range(-(-m // 3))])[:m]
    assert sorted(epoch.tolist()) == list(range(m))             # one epoch: every sample once
    other_round = order.positions(torch.tensor([3]), sizes[[3]], 8, 0, 3)[0][0]
    assert m <= 3 or not torch.equal(other_round, order.positions(torch.tensor([3]), sizes[[3]], 7, 0, 3)[0][0])


def test_a_seeded_order_replays_as_given_indices():
    """The positions of a seeded order, given explicitly, give the same run."""
    from fedbound.algorithms import registry, run
    from fedbound.tasks.batches import GivenBatches, SeededBatches

    def task(batches):
        return MLPClassifier.generate(6, num_samples=120, dim=3, num_classes=3, hidden=(4,),
                                      batch_size=2, batches=batches, seed=1)
    seeded = SeededBatches(5)
    sizes = task(None).data.sizes
    given = np.stack([np.stack([np.stack([seeded.positions(torch.tensor([i]), sizes[[i]], t, s, 2)[0][0].numpy()
                                          for s in range(3)]) for i in range(6)]) for t in range(4)])
    runs = [run(registry.build("fedavg", task(b), lr=0.1, local_steps=3, clients_per_round=3), 4)
            for b in (seeded, GivenBatches(given), given)]
    assert torch.equal(runs[0].x_g, runs[1].x_g) and torch.equal(runs[0].x_g, runs[2].x_g)
    drawn = run(registry.build("fedavg", task(None), lr=0.1, local_steps=3, clients_per_round=3), 4)
    assert not torch.equal(drawn.x_g, runs[0].x_g)


def test_batch_orders_refuse_what_they_cannot_serve():
    with pytest.raises(ValidationError, match="batch_size"):
        MLPClassifier.generate(3, num_samples=60, dim=3, num_classes=3, hidden=(4,), batches=1)
    task = MLPClassifier.generate(3, num_samples=60, dim=3, num_classes=3, hidden=(4,), batch_size=2,
                                  batches=1)
    with pytest.raises(ValidationError, match="no round"):   # outside a federated round
        task.stochastic_grad(task.x0, torch.Generator())
    from fedbound.tasks.batches import GivenBatches
    short = MLPClassifier.generate(3, num_samples=60, dim=3, num_classes=3, hidden=(4,), batch_size=2,
                                   batches=GivenBatches(np.zeros((1, 3, 1, 2), dtype=int)))
    with pytest.raises(ValidationError, match="cover 1 rounds"):
        short.clients(None).oracle(torch.Generator(), 1)(short.x0.expand(3, short.d), None)
    bad = MLPClassifier.generate(3, num_samples=60, dim=3, num_classes=3, hidden=(4,), batch_size=2,
                                 batches=GivenBatches(np.full((1, 3, 1, 2), 10 ** 6)))
    with pytest.raises(ValidationError, match="batch positions of client"):
        bad.clients(None).oracle(torch.Generator(), 0)(bad.x0.expand(3, bad.d), None)


def test_a_users_data_set_partition_and_initial_model():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 4)), np.arange(30) % 3
    owner = np.array([2, 0, 1] * 10)
    x0 = rng.standard_normal(4 * 5 + 5 + 5 * 3 + 3)
    task = MLPClassifier.from_arrays(X, y, owner, hidden=(5,), x0=x0)
    assert task.n == 3 and torch.equal(task.x0, torch.as_tensor(x0))
    for i in range(3):
        assert torch.equal(task.data.features[i], torch.as_tensor(X[owner == i]))
    with pytest.raises(ValidationError, match="client \\[3\\]"):
        MLPClassifier.from_arrays(X, y, owner, n=4, hidden=(5,))
    with pytest.raises(ValidationError, match="partition"):
        MLPClassifier.from_arrays(X, y, owner[:-1], hidden=(5,))


def test_the_presets_read_a_users_npz(tmp_path):
    from fedbound.tasks import make_task

    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((40, 6)), np.arange(40) % 4
    d = 6 * 32 + 32 + 32 * 4 + 4
    path = tmp_path / "mine.npz"
    np.savez(path, features=X, labels=y, partition=np.arange(40) % 5, x0=np.zeros(d))
    task = make_task("mlp-gmm", data=str(path), batch_size=3, batch_seed=2, float64=True)
    assert (task.n, task.d, task.batch_size) == (5, d, 3) and float(task.x0.abs().sum()) == 0.0
    assert torch.equal(task.test_features, torch.as_tensor(X))         # the training rows
    only_x0 = tmp_path / "x0.npz"
    np.savez(only_x0, x0=np.full(64 * 32 + 32 + 32 * 10 + 10, 0.01))
    digits = make_task("mlp-digits", n=4, data=str(only_x0))
    assert digits.n == 4 and torch.allclose(digits.x0, torch.full((digits.d,), 0.01))
    for bad, match in ((dict(x0=np.zeros(3)), "x0"), (dict(features=X), "together"),
                       (dict(other=X), "none of the keys")):
        np.savez(tmp_path / "bad.npz", **bad)
        with pytest.raises(ValidationError, match=match):
            make_task("mlp-gmm", data=str(tmp_path / "bad.npz"))
    with pytest.raises(ValidationError, match="batch_size"):
        make_task("mlp-digits", n=4, batch_seed=1)


def test_the_global_gradient_in_blocks_of_clients_is_the_whole_one(monkeypatch):
    """global_grad and loss hold at most METRIC_BLOCK_BYTES of client gradients (memory flat in n)."""
    from fedbound.tasks import LeastSquares, base

    for task in (MLPClassifier.generate(7, num_samples=140, dim=3, num_classes=3, hidden=(4,), seed=1),
                 LeastSquares.generate(9, 4, 3, seed=0)):
        whole = task.weights @ task.grad(task.x0)
        loss = float(task.weights @ task.local_losses(task.x0))
        monkeypatch.setattr(base, "METRIC_BLOCK_BYTES", 2 * (task.d * 8 + task.client_bytes))
        assert torch.allclose(task.global_grad(task.x0), whole, rtol=0, atol=1e-13)
        assert task.loss(task.x0) == pytest.approx(loss, rel=1e-13, abs=0)
        monkeypatch.undo()
