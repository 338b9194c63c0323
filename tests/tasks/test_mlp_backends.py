"""The MLP's local SGD steps on numpy views of CPU tensors equal those in torch (issue 35):
:func:`fedbound.tasks.mlp.descend` with backend "numpy" and "torch" on the same models and
batches, over random shapes, activations, dtypes and seeds; and a federated round either way."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from fedbound.algorithms import registry
from fedbound.tasks import MLPClassifier, mlp

#: max |numpy - torch| of the models after the steps: both compute the same products and
#: elementwise functions in another order (tanh as numpy's tanh against torch's 2 sigmoid(2z) - 1),
#: a few hundred roundings of entries of size <= ~1 at float32 (eps 6e-8) or float64 (eps 1e-16)
TOL = {torch.float32: 2e-5, torch.float64: 1e-12}


def _problem(seed, k, m, dims, classes, dtype, padded):
    gen = torch.Generator().manual_seed(seed)
    shapes = tuple(s for a, b in zip(dims, dims[1:] + [classes]) for s in ((b, a), (b,)))
    d = sum(int(np.prod(s)) for s in shapes)
    X = (0.5 * torch.randn(k, d, generator=gen, dtype=torch.float64)).to(dtype)
    features = mlp.with_ones(torch.randn(k, m, dims[0], generator=gen, dtype=torch.float64).to(dtype))
    labels = torch.randint(classes, (k, m), generator=gen)
    mask = torch.ones(k, m, dtype=dtype)
    if padded:   # clients with fewer samples: the padding weighs 0
        mask[:, m // 2 + 1:] = (torch.rand(k, m - m // 2 - 1, generator=gen) < 0.5).to(dtype)
    w = mlp.sample_weights(mask)
    return X, shapes, (features, mlp.targets(labels, w, classes), w)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(1, 6), m=st.integers(1, 9),
       dims=st.lists(st.integers(1, 9), min_size=2, max_size=3), classes=st.integers(2, 6),
       activation=st.sampled_from(["tanh", "relu"]), dtype=st.sampled_from([torch.float32, torch.float64]),
       steps=st.integers(1, 4), lr=st.floats(0.01, 0.5), padded=st.booleans(), same=st.booleans())
def test_numpy_steps_equal_torch_steps(seed, k, m, dims, classes, activation, dtype, steps, lr, padded,
                                       same):
    if activation == "relu" and dtype == torch.float32:
        dtype = torch.float64   # a float32 rounding may flip relu's kink at 0: a different step
    X, shapes, full = _problem(seed, k, m, dims, classes, dtype, padded)
    batches = [full if same else _problem(seed + s + 1, k, m, dims, classes, dtype, padded)[2]
               for s in range(steps)]
    before = X.clone()
    ours = mlp.descend(X, shapes, lr, steps, batches.__getitem__, activation, backend="numpy")
    ref = mlp.descend(X, shapes, lr, steps, batches.__getitem__, activation, backend="torch")
    assert torch.equal(X, before)                       # the input models are not written
    assert ours.dtype == dtype and ours.shape == X.shape
    assert float((ours - ref).abs().max()) <= TOL[dtype]
    # and the torch steps are SGD on the gradient by hand (itself equal to autograd's,
    # tests/tasks/test_task_classifier.py)
    layers = mlp.augmented(X, shapes)
    for b in batches:
        for V, G in zip(layers, mlp.gradient(layers, *b, activation)):
            V -= lr * G
    assert float((mlp.flatten(layers) - ref).abs().max()) <= TOL[dtype]



@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(1, 5), m=st.integers(1, 9),
       dims=st.lists(st.integers(1, 12), min_size=1, max_size=3), classes=st.integers(2, 6),
       activation=st.sampled_from(["tanh", "relu"]), backend=st.sampled_from(["numpy", "torch"]),
       dtype=st.sampled_from([torch.float32, torch.float64]), lr=st.floats(0.01, 0.5),
       padded=st.booleans(), order=st.lists(st.integers(0, 3), min_size=0, max_size=5))
def test_first_layer_in_sample_space_equals_weight_space(seed, k, m, dims, classes, activation, backend,
                                                         dtype, lr, padded, order):
    """The first layer's steps in sample space (U_1 = U_1(0) - R^T D, each step's pre-activation
    from the Gram matrix of the rows seen) equal its steps in weight space, on any sequence of
    batches: the same batch again (full batch), distinct ones (minibatches), or a mix (``order``:
    step s takes batch order[s]; no step at all); one layer (logistic regression) to three."""
    if activation == "relu" and dtype == torch.float32:
        dtype = torch.float64   # a float32 rounding may flip relu's kink at 0: a different step
    X, shapes, _ = _problem(seed, k, m, dims, classes, dtype, padded)
    pool = [_problem(seed + i + 1, k, m, dims, classes, dtype, padded)[2] for i in range(4)]
    batches = [pool[i] for i in order]
    ours, ref = (mlp.descend(X, shapes, lr, len(order), batches.__getitem__, activation, backend, form)
                 for form in ("samples", "weights"))
    assert float((ours - ref).abs().max()) <= TOL[dtype]


def test_backend_follows_device_dtype_and_threads():
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        # float32: the compiled steps where they are built (tests/tasks/test_mlp_kernel.py)
        assert mlp.backend_for(torch.zeros(2, 3)) == ("numpy" if mlp._kernels is None else "compiled")
        assert mlp.backend_for(torch.zeros(2, 3, dtype=torch.float64)) == "numpy"
        assert mlp.backend_for(torch.zeros(2, 3, dtype=torch.float16)) == "torch"
        torch.set_num_threads(2)
        assert mlp.backend_for(torch.zeros(2, 3)) == "torch"   # a large round: torch's threads
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("batch_size", [None, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rounds_equal_either_way(monkeypatch, batch_size, dtype):
    """FedAvg's rounds on the MLP: the numpy steps, and the compiled ones in float32, equal the
    torch steps (also with a seeded batch order, and padded clients of unequal sizes)."""
    def rounds(backend):
        monkeypatch.setattr(mlp, "backend_for", lambda X: backend)
        task = MLPClassifier.generate(12, num_samples=150, dim=5, num_classes=3, hidden=(6,), seed=4,
                                      batch_size=batch_size, batches=None if batch_size is None else 7,
                                      dtype=dtype)
        assert len(set(task.data.sizes.tolist())) > 1
        alg = registry.build("fedavg", task, seed=1, lr=0.3, local_steps=3, clients_per_round=5)
        state = alg.init()
        for _ in range(3):
            state = alg.step(state)
        return state.x_g
    ref = rounds("torch")
    assert float((rounds("numpy") - ref).abs().max()) <= TOL[dtype]
    if dtype == torch.float32 and mlp._kernels is not None:
        assert float((rounds("compiled") - ref).abs().max()) <= TOL[dtype]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), spread=st.sampled_from([1.0, 30.0, 79.0, 81.0, 500.0, 1e4]),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_numpy_softmax_shift_either_way(seed, spread, dtype):
    """numpy's logits' gradient shifts by one number where the logits' range is at most
    SHIFT_RANGE and by each row's max elsewhere (rows far apart, ``spread``): both equal torch's
    row-max softmax to rounding, and nothing overflows or divides by zero."""
    rng = np.random.default_rng(seed)
    k, m, C = 3, 4, 5
    Z = (rng.standard_normal((k, m, C)) + spread * rng.uniform(-1, 1, (k, m, 1))).astype(dtype)
    labels = rng.integers(C, size=(k, m))
    w = np.full((k, m, 1), 1 / m, dtype=dtype)
    T = mlp.BACKENDS["numpy"].targets(labels, w, C)
    ours = mlp.BACKENDS["numpy"].logit_gradient(Z.copy(), T, w)
    ref = mlp.BACKENDS["torch"].logit_gradient(torch.from_numpy(Z.copy()), torch.from_numpy(T),
                                               torch.from_numpy(w)).numpy()
    assert np.isfinite(ours).all()
    # one shift rounds Z - max Z to eps |Z - max Z| <= 2 eps max |Z| (the order of Z's own
    # rounding), a relative error of the softmax's entries, times w
    eps = np.finfo(dtype).eps
    tol = 8 * eps * max(1.0, float(np.abs(Z).max())) * float(w.max())
    assert np.abs(ours - ref).max() <= tol
    # each row: w (softmax - onehot) sums to 0
    assert np.abs(ours.sum(axis=2)).max() <= 8 * eps


@pytest.mark.parametrize("backend", ["torch", "numpy"] + ([] if mlp._kernels is None else ["compiled"]))
def test_steps_on_rows_are_the_steps_on_batches(backend):
    """descend_rows on one set of rows (step s on rows a..b, numpy arrays handed to any backend)
    takes the steps of descend on those rows' slices; rows outside the set are a clear error."""
    X, shapes, (features, T, w) = _problem(5, 3, 8, [4, 6], 3, torch.float32, True)
    spans = [(0, 4), (4, 8), (0, 8)]
    rows = tuple(t.numpy() for t in (features, T, w))
    ours = mlp.descend_rows(X, shapes, 0.2, rows, spans, "tanh", backend)
    ref = mlp.descend(X, shapes, 0.2, 3, lambda s: tuple(t[:, slice(*spans[s])] for t in (features, T, w)),
                      "tanh", backend)
    assert float((ours - ref).abs().max()) <= TOL[torch.float32]
    from fedbound.errors import ValidationError
    with pytest.raises(ValidationError, match=r"0 <= a <= b <= 8"):
        mlp.descend_rows(X, shapes, 0.2, rows, [(0, 9)], "tanh", backend)


@pytest.mark.parametrize("backend", ["torch", "numpy"] + ([] if mlp._kernels is None else ["compiled"]))
def test_steps_record_nothing_for_autograd(backend):
    """Models that require grad, with grad mode on: every backend takes the same steps as on
    detached models and hands back a tensor autograd recorded nothing for (the torch steps run
    under no_grad, the others never reach autograd), leaving the models as they were."""
    X, shapes, rows = _problem(3, 4, 6, [5, 7], 3, torch.float32, False)
    spans = [(0, 6)] * 3
    ref = mlp.descend_rows(X, shapes, 0.1, rows, spans, "tanh", backend)
    leaf = X.clone().requires_grad_(True)
    assert torch.is_grad_enabled()
    ours = mlp.descend_rows(leaf, shapes, 0.1, rows, spans, "tanh", backend)
    assert ours.grad_fn is None and not ours.requires_grad
    assert torch.equal(leaf.detach(), X)
    assert float((ours - ref).abs().max()) <= TOL[torch.float32]
