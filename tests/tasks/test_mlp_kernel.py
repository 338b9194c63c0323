"""The compiled local steps of the MLP (``fedbound/tasks/_kernels.c``, issue 35) equal the numpy
steps: :func:`fedbound.tasks.mlp.descend` with backend "compiled" and "numpy" on the same float32
models and batches, over random widths (multiples of the kernel's vectors and not), numbers of
clients (the kernel runs a vector's lanes of clients at once: part of a group, one, several), depths
(logistic regression to three hidden layers), sequences of batches (full batch, minibatches, a
mix), both forms of the first layer and every instruction set this CPU runs; the kernel's own
checks of its arrays; the choice of its instruction set; and that it is built where a C compiler
is."""
import shutil

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from fedbound.errors import ValidationError
from fedbound.tasks import mlp

kernel = mlp._kernels
needs_kernel = pytest.mark.skipif(kernel is None, reason="the kernel is not built (no C compiler)")

#: max |compiled - exact| of float32 models after the steps, beyond 4x what float32 steps are off
#: by themselves (exact: the same steps in float64, torch; float32: numpy's and torch's steps, the
#: larger, as one order of summation can be lucky: numpy 3.9e-6 off where torch is 2.6e-5, in a
#: relu example of three hidden layers and 27 clients whose weights move by 5.8). All compute the
#: same products and functions in another order (register tiles against BLAS, a rational tanh
#: within 4.5e-7, each row's softmax shifted by its max against one shift): a few hundred roundings
#: of entries of size <= ~1 (eps 6e-8), as tests/tasks/test_mlp_backends.py; where the entries are
#: larger (relu layers of +-5 biases, logits of tens), float32's error grows with them, hence the 4x
TOL = 2e-5


def _off(ours, X, shapes, lr, batches, activation, form):
    """max |ours - exact| and what it may be: TOL + 4 max |float32 steps - exact| (numpy's and
    torch's)."""
    steps = len(batches)
    exact = mlp.descend(X.double(), shapes, lr, steps, lambda s: tuple(t.double() for t in batches[s]),
                        activation, "torch", form)
    float32 = max(float((mlp.descend(X, shapes, lr, steps, batches.__getitem__, activation, backend,
                                     form).double() - exact).abs().max()) for backend in ("numpy", "torch"))
    return float((ours.double() - exact).abs().max()), TOL + 4 * float32


def _problem(seed, k, m, dims, classes, relu):
    """Models X (k, d) and a pool of 4 batches (features with ones, targets, weights), float32.
    With relu every hidden unit keeps one side of its kink through the steps (biases +-5, weights
    of at most 1 / (6 in), features in [-1, 1]): a float32 rounding cannot flip a derivative, so
    both sides take the same steps."""
    rng = np.random.default_rng(seed)
    widths = dims + [classes]
    parts = []
    for i, (fan_in, fan_out) in enumerate(zip(widths, widths[1:])):
        hidden = i < len(widths) - 2
        if relu and hidden:
            W = rng.uniform(-1, 1, (k, fan_out * fan_in)) / (6 * fan_in)
            b = 5.0 * rng.choice([-1.0, 1.0], (k, fan_out))
        else:
            W, b = rng.uniform(-1, 1, (k, fan_out * fan_in)), rng.uniform(-1, 1, (k, fan_out))
        parts += [W, b]
    X = torch.from_numpy(np.concatenate(parts, axis=1).astype(np.float32))
    shapes = tuple(s for a, b in zip(widths, widths[1:]) for s in ((b, a), (b,)))
    pool = []
    for _ in range(4):
        features = mlp.with_ones(torch.from_numpy(rng.uniform(-1, 1, (k, m, dims[0])).astype(np.float32)))
        labels = torch.from_numpy(rng.integers(classes, size=(k, m)))
        mask = torch.from_numpy((rng.uniform(size=(k, m)) < 0.8).astype(np.float32))
        mask[:, 0] = 1.0   # every client has a sample
        w = mlp.sample_weights(mask)
        pool.append((features, mlp.targets(labels, w, classes), w))
    return X, shapes, pool


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(1, 40), m=st.integers(1, 21),
       dims=st.lists(st.integers(1, 40), min_size=1, max_size=4), classes=st.integers(2, 19),
       relu=st.booleans(), lr=st.floats(0.01, 0.1), order=st.lists(st.integers(0, 3), min_size=0, max_size=5),
       form=st.sampled_from(["samples", "weights"]), isa=st.sampled_from(list(kernel.isas()) if kernel else ["base"]))
@needs_kernel
def test_compiled_steps_equal_numpy_steps(seed, k, m, dims, classes, relu, lr, order, form, isa):
    X, shapes, pool = _problem(seed, k, m, dims, classes, relu)
    batches = [pool[i] for i in order]
    before = X.clone()
    activation = "relu" if relu else "tanh"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(mlp.KERNEL_ISA_VARIABLE, isa)
        mlp.kernel_isa.cache_clear()
        try:
            ours = mlp.descend(X, shapes, lr, len(order), batches.__getitem__, activation, "compiled", form)
        finally:
            mlp.kernel_isa.cache_clear()
    assert torch.equal(X, before)   # the input models are not written
    assert ours.dtype == torch.float32 and ours.shape == X.shape
    off, allowed = _off(ours, X, shapes, lr, batches, activation, form)
    assert off <= allowed


def _gathered(seed, n, m, k, D, classes, steps, batch):
    """A task's arrays (features with ones (n, m, D + 1), labels, presence) and a round's rows in
    them: k clients' full batches (``batch`` None) or ``steps`` minibatches of ``batch`` each
    (random positions and validity, a valid row in every block); with the same rows written out
    by a plain loop (features, -w onehot(y), w: validity over its block's), and the spans."""
    rng = np.random.default_rng(seed)
    features = mlp.with_ones(torch.from_numpy(rng.uniform(-1, 1, (n, m, D)).astype(np.float32)))
    labels = torch.from_numpy(rng.integers(classes, size=(n, m)))
    presence = torch.from_numpy((rng.uniform(size=(n, m)) < 0.7).astype(np.float32))
    presence[:, 0] = 1.0
    ids = torch.from_numpy(rng.integers(n, size=k))
    if batch is None:
        positions = valid = None
        width, spans = m, [(0, m)] * steps
        at = np.tile(np.arange(m), (k, 1))
        validity = presence.numpy()[ids.numpy()]
    else:
        width, spans = batch, [(s * batch, (s + 1) * batch) for s in range(steps)]
        at = rng.integers(m, size=(k, steps * batch))
        valid = torch.from_numpy(rng.uniform(size=at.shape) < 0.7)
        valid[:, ::batch] = True
        positions, validity = torch.from_numpy(at), valid.numpy().astype(np.float32)
    r = at.shape[1]
    R = np.empty((k, r, D + 1), np.float32)
    T = np.zeros((k, r, classes), np.float32)
    w = np.empty((k, r, 1), np.float32)
    for j in range(k):
        for q in range(r):
            i, p, b0 = int(ids[j]), int(at[j, q]), q - q % width
            R[j, q] = features[i, p].numpy()
            w[j, q, 0] = validity[j, q] / validity[j, b0:b0 + width].sum(dtype=np.float32)
            T[j, q, int(labels[i, p])] = -w[j, q, 0]
    rows = mlp.GatheredRows(features, labels, presence, ids, positions, valid, width, classes)
    return rows, tuple(torch.from_numpy(a) for a in (R, T, w)), spans


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 6), m=st.integers(1, 12), k=st.integers(1, 40),
       dims=st.lists(st.integers(1, 24), min_size=1, max_size=3), classes=st.integers(2, 12),
       steps=st.integers(1, 4), batch=st.one_of(st.none(), st.integers(1, 6)), relu=st.booleans(),
       form=st.sampled_from(["samples", "weights"]), isa=st.sampled_from(list(kernel.isas()) if kernel else ["base"]))
@needs_kernel
def test_gathered_rows_equal_given_rows(seed, n, m, k, dims, classes, steps, batch, relu, form, isa):
    """The kernel's gathered rows (:class:`fedbound.tasks.mlp.GatheredRows`, each client's samples,
    targets and weights read where they are) give the steps of the same rows given as arrays (a
    plain loop here), and so do the numpy steps on the rows :meth:`GatheredRows.arrays` gathers."""
    X, shapes, _ = _problem(seed, k, 1, dims, classes, relu)
    rows, given, spans = _gathered(seed, n, m, k, dims[0], classes, steps, batch)
    activation = "relu" if relu else "tanh"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(mlp.KERNEL_ISA_VARIABLE, isa)
        mlp.kernel_isa.cache_clear()
        try:
            ours, theirs = (mlp.descend_rows(X, shapes, 0.05, r, spans, activation, "compiled", form)
                            for r in (rows, given))
        finally:
            mlp.kernel_isa.cache_clear()
    # the same kernel on the same rows: the weights' sums alone may round apart (1 ulp of w)
    assert float((ours - theirs).abs().max()) <= 1e-6
    numpy = mlp.descend_rows(X, shapes, 0.05, rows, spans, activation, "numpy", form)
    exact = mlp.descend_rows(X.double(), shapes, 0.05, tuple(a.double() for a in given), spans, activation,
                             "torch", form)
    assert float((numpy.double() - exact).abs().max()) <= TOL
    assert float((ours.double() - exact).abs().max()) <= TOL


@pytest.mark.parametrize("backend", ["compiled", "numpy", "torch"])
def test_gathered_rows_that_do_not_fit_are_a_validation_error(backend):
    """A client or sample outside the task's arrays: a ValidationError from every backend (the
    kernel's own check, numpy's and torch's index errors), never a read out of bounds."""
    if backend == "compiled" and kernel is None:
        pytest.skip("the kernel is not built (no C compiler)")
    X, shapes, _ = _problem(0, 2, 1, [4], 3, relu=False)
    rows, _, spans = _gathered(0, 3, 4, 2, 4, 3, 2, 2)
    for bad in (rows._replace(ids=torch.tensor([0, 3])), rows._replace(positions=rows.positions + 4)):
        with pytest.raises(ValidationError, match="outside|do not fit"):
            mlp.descend_rows(X, shapes, 0.1, bad, spans, "tanh", backend)
    if backend == "compiled":   # the kernel's own type check, as a ValidationError
        with pytest.raises(ValidationError, match="features: a C-contiguous float32 array"):
            mlp.descend_rows(X, shapes, 0.1, rows._replace(features=rows.features.double()), spans, "tanh", backend)


@pytest.mark.parametrize("backend", ["compiled", "numpy", "torch"])
def test_steps_on_no_rows_move_nothing(backend):
    """A step on no rows (a, a) has no gradient: the models come back unchanged from every backend
    (numpy's softmax raised its ValueError on the empty logits)."""
    if backend == "compiled" and kernel is None:
        pytest.skip("the kernel is not built (no C compiler)")
    X, shapes, pool = _problem(1, 3, 4, [5], 3, relu=False)
    rows = tuple(t[:, :0] for t in pool[0])
    for spans in ([(0, 0)], [(0, 0), (0, 0)]):
        assert torch.equal(mlp.descend_rows(X, shapes, 0.1, rows, spans, "tanh", backend), X)
    some = tuple(t[:, :2] for t in pool[0])
    assert torch.allclose(mlp.descend_rows(X, shapes, 0.1, some, [(0, 2), (1, 1)], "tanh", backend),
                          mlp.descend_rows(X, shapes, 0.1, some, [(0, 2)], "tanh", backend), atol=1e-6)


@needs_kernel
def test_compiled_steps_on_digits_sized_rounds():
    """The benchmark's shapes (digits' 64-32-10 MLP, 15 samples, 5 full-batch steps, 10 clients;
    minibatches of 5): the compiled and numpy steps agree to float32 rounding."""
    X, shapes, pool = _problem(0, 10, 15, [64, 32], 10, relu=False)
    for batches in ([pool[0]] * 5, [(F[:, :5], T[:, :5], w[:, :5]) for F, T, w in pool]):
        ours = mlp.descend(X, shapes, 0.2, len(batches), batches.__getitem__, "tanh", "compiled")
        ref = mlp.descend(X, shapes, 0.2, len(batches), batches.__getitem__, "tanh", "numpy")
        assert float((ours - ref).abs().max()) <= TOL


@needs_kernel
def test_one_model_for_all_clients_is_read_once():
    """A round's clients start from the global model expanded (stride 0): the kernel reads that one
    row for every client, the same steps as from a copy per client (one process, one kernel: the
    same operations in the same order, so the same bits)."""
    X, shapes, pool = _problem(3, 37, 9, [7, 20], 4, relu=False)
    shared = X[:1].expand(37, X.shape[1])
    assert shared.stride(0) == 0
    ours, copied = (mlp.descend(Y, shapes, 0.1, 3, lambda s: pool[s], "tanh", "compiled")
                    for Y in (shared, shared.contiguous()))
    assert torch.equal(ours, copied)


@needs_kernel
def test_default_backend_is_compiled_for_float32_on_one_thread():
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert mlp.backend_for(torch.zeros(2, 3)) == "compiled"
        assert mlp.backend_for(torch.zeros(2, 3, dtype=torch.float64)) == "numpy"
    finally:
        torch.set_num_threads(before)
    with pytest.raises(ValidationError, match="float32 CPU models"):
        X, shapes, pool = _problem(0, 2, 3, [4, 5], 3, relu=False)
        mlp.descend(X.double(), shapes, 0.1, 1, lambda s: tuple(t.double() for t in pool[0]), "tanh", "compiled")


@needs_kernel
def test_instruction_set_from_the_environment(monkeypatch):
    try:
        monkeypatch.setenv(mlp.KERNEL_ISA_VARIABLE, "base")
        mlp.kernel_isa.cache_clear()
        assert mlp.kernel_isa() == "base"
        monkeypatch.setenv(mlp.KERNEL_ISA_VARIABLE, "sse9")
        mlp.kernel_isa.cache_clear()
        with pytest.raises(ValidationError, match="FEDBOUND_KERNEL_ISA must be one of"):
            mlp.kernel_isa()
        monkeypatch.delenv(mlp.KERNEL_ISA_VARIABLE)
        mlp.kernel_isa.cache_clear()
        assert mlp.kernel_isa() == kernel.isas()[0]
    finally:
        mlp.kernel_isa.cache_clear()


def _arrays(k=2, r=3, D=4, h=5, C=3):
    d = h * (D + 1) + C * (h + 1)
    return dict(X=np.zeros((k, d), np.float32), out=np.zeros((k, d), np.float32), widths=(D, h, C),
                R=np.ones((k, r, D + 1), np.float32), T=np.zeros((k, r, C), np.float32),
                w=np.full((k, r), 1 / r, np.float32), spans=np.array([[0, r, 0]], np.int32))


@needs_kernel
@pytest.mark.parametrize("change, message", [
    (dict(X=np.zeros((2, 38), np.float64)), "models: a C-contiguous float32 array"),
    (dict(R=np.ones((2, 3, 4), np.float32)), "array shapes do not match the widths"),
    (dict(X=np.zeros((3, 43), np.float32)), "array shapes do not match the widths"),   # 2 clients
    (dict(widths=(4, 5)), "array shapes do not match the widths"),
    (dict(widths=tuple(range(1, 19))), "widths: inputs, up to 15 hidden layers"),
    (dict(widths=(4,)), "widths: inputs"),
    (dict(widths=(4, 0, 3)), "widths must be in"),
    (dict(spans=np.array([[0, 4, 0]], np.int32)), "a step's rows are outside the inputs"),
    (dict(spans=np.array([[0, 3, 0]], np.int64)), "spans: a C-contiguous int32 array"),
    (dict(w=np.ones((3, 2), np.float32).T), "not C-contiguous"),
])
def test_kernel_checks_its_arrays(change, message):
    """The kernel's own checks (what :func:`fedbound.tasks.mlp._compiled_steps` hands it is right
    by construction; a wrong array is a ValueError, never a read out of bounds)."""
    a = {**_arrays(), **change}
    with pytest.raises((ValueError, BufferError), match=message):
        kernel.descend(a["X"], a["out"], a["widths"], (a["R"], a["T"], a["w"]), a["spans"], 0.1, False, True, "base")
    with pytest.raises(ValueError, match="no kernel for the instruction set"):
        b = _arrays()
        kernel.descend(b["X"], b["out"], b["widths"], (b["R"], b["T"], b["w"]), b["spans"], 0.1, False, True, "avx9")


def _gathered_arrays(n=3, m=4, k=2, D=4, C=3):
    return dict(F=np.ones((n, m, D + 1), np.float32), y=np.zeros((n, m), np.int64),
                presence=np.ones((n, m), np.float32), ids=np.array([0, 2]),
                pos=np.zeros((k, 4), np.int64), valid=np.ones((k, 4), bool), width=2)


@needs_kernel
@pytest.mark.parametrize("change, message", [
    (dict(ids=np.array([0, 3])), "ids: a client outside the features"),
    (dict(ids=np.array([-1, 0])), "ids: a client outside the features"),
    (dict(pos=np.full((2, 4), 4)), "positions: a sample outside the features"),
    (dict(y=np.full((3, 4), 3)), "labels: a class outside the widths"),
    (dict(y=np.full((3, 4), -1)), "labels: a class outside the widths"),
    (dict(valid=None), "positions and valid: both or neither"),
    (dict(width=3), "array shapes do not match the widths"),
    (dict(width=0), "width >= 1"),
    (dict(ids=np.array([0, 1, 2])), "array shapes do not match the widths"),
    (dict(y=np.zeros((3, 4), np.int32)), "labels: a C-contiguous int64 array"),
    (dict(valid=np.ones((2, 4), np.float32)), "valid: a C-contiguous bool array"),
])
def test_kernel_checks_its_gathered_rows(change, message):
    """Gathered rows: every client, sample and label in bounds before anything is read."""
    a, g = _arrays(), {**_gathered_arrays(), **change}
    rows = (g["F"], g["y"], g["presence"], g["ids"], g["pos"], g["valid"], g["width"])
    with pytest.raises(ValueError, match=message):
        kernel.descend(a["X"], a["out"], a["widths"], rows, a["spans"], 0.1, False, True, "base")


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_the_kernel_is_built_where_a_compiler_is():
    """`pip install -e .` (the Makefile's setup) builds the kernel wherever a C compiler is: a
    silently skipped build would leave every float32 round on the slower numpy steps."""
    assert mlp._kernels is not None
    assert "base" in kernel.isas()
