"""Client optimizers against established implementations on the same gradient sequence, float64,
1e-12: torch.optim (SGD with momentum and Nesterov, Adagrad, Adam), optax (SM3), the plain-numpy
references of FedAda2's delayed AGDU, ADMU and SM3-II pseudocode that its audit uses
(fedbound.theory.fedada2.audit: agdu, admu, sm3_ii; one reference of each in the code base) and a
plain-numpy loop of SM3-I (Alg. 3 of 004_a1d7c636af01c22e.txt) written here."""
from __future__ import annotations

import math

import jax
import numpy as np
import optax
import pytest
import torch

from fedbound.algorithms.optim import client
from fedbound.errors import InputTypeError, UnknownNameError, ValidationError
from fedbound.theory.fedada2 import audit as reference

jax.config.update("jax_enable_x64", True)

ROWS, D, STEPS = 3, 7, 25


@pytest.fixture
def field(oracles):
    return oracles.Field((ROWS, D), STEPS, seed=1)


@pytest.mark.parametrize("beta", [0.0, 0.5, 0.9])
@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_equals_torch_sgd(oracles, field, beta, nesterov):
    ours, _ = oracles.run_transform(client.momentum(0.05, beta, nesterov=nesterov), field)
    # torch refuses nesterov=True with momentum 0; Nesterov with beta = 0 is plain SGD
    ref = oracles.run_torch(torch.optim.SGD, field, lr=0.05, momentum=beta, dampening=0.0,
                            nesterov=nesterov and beta > 0)
    torch.testing.assert_close(ours, ref, **oracles.TOL)


def test_sgd_equals_torch_sgd_and_decay_equals_torch_exponential_lr(oracles, field):
    ours, _ = oracles.run_transform(client.sgd(0.05), field)
    torch.testing.assert_close(ours, oracles.run_torch(torch.optim.SGD, field, lr=0.05), **oracles.TOL)
    # decayed learning rate lr * gamma^k: torch SGD stepped by ExponentialLR(gamma) after every step
    ours, _ = oracles.run_transform(client.sgd(0.05, decay=0.8), field)
    p = torch.nn.Parameter(field.x0.clone())
    opt = torch.optim.SGD([p], lr=0.05)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.8)
    ref = []
    for k in range(field.steps):
        p.grad = field.grad(p.detach(), k)
        opt.step()
        sched.step()
        ref.append(p.detach().clone())
    torch.testing.assert_close(ours, torch.stack(ref), **oracles.TOL)


@pytest.mark.parametrize("v0", [0.0, 0.3])
def test_adagrad_equals_torch_adagrad(oracles, field, v0):
    ours, _ = oracles.run_transform(client.adagrad(0.1, 1e-6, v0=v0), field)
    ref = oracles.run_torch(torch.optim.Adagrad, field, lr=0.1, eps=1e-6,
                            initial_accumulator_value=v0)
    torch.testing.assert_close(ours, ref, **oracles.TOL)


@pytest.mark.parametrize("b1,b2", [(0.9, 0.999), (0.5, 0.9), (0.0, 0.0)])
def test_adam_equals_torch_adam(oracles, field, b1, b2):
    ours, _ = oracles.run_transform(client.adam(0.01, b1, b2, 1e-8), field)
    ref = oracles.run_torch(torch.optim.Adam, field, lr=0.01, betas=(b1, b2), eps=1e-8)
    torch.testing.assert_close(ours, ref, **oracles.TOL)


def _numpy_loop(field, step):
    """x_{k+1} = x_k - step(k, g_k) per the paper's pseudocode, rows independent, in numpy."""
    x = field.x0.numpy().copy()
    out = []
    for k in range(field.steps):
        g = field.grad(torch.from_numpy(x), k).numpy()
        x = x - step(k + 1, g)
        out.append(x.copy())
    return np.stack(out)


def _recorded(transform, field):
    """Our trajectory (steps, rows, d) on the field and the gradients it saw (rows, steps, d)."""
    x = field.x0.clone()
    state = transform.init(x)
    xs, gs = [], []
    for k in range(field.steps):
        g = field.grad(x, k)
        updates, state = transform.update(g, state, x)
        x = x + updates
        xs.append(x)
        gs.append(g)
    return torch.stack(xs).numpy(), torch.stack(gs, 1).numpy()


def _reference_trajectory(field, g, displacement):
    """x_k = x_0 + displacement(g_1..g_k) for every k: a reference of the audit returns x_K - x_0
    for a batch of gradient sequences (rows, K, d); fed the gradients our run saw, it reproduces
    our trajectory only if every step agrees."""
    x0 = field.x0.numpy()
    return np.stack([x0 + displacement(g[:, :k]) for k in range(1, g.shape[1] + 1)])


@pytest.mark.parametrize("z", [1, 2, 3, 30])
def test_adagrad_delay_equals_agdu_reference(oracles, field, z):
    """AGDU (Alg. 9, L1490-1512): v_t = v_{t-1} + g_t^2 only when (t-1)/z is integral."""
    lr, eps, v0 = 0.1, 1e-3, 0.2
    ours, g = _recorded(client.adagrad(lr, eps, v0=v0, delay=z), field)
    full = np.full(ROWS, 1.0)
    ref = _reference_trajectory(field, g, lambda gk: reference.agdu(gk, z * full, eps * full, lr * full,
                                                                     v0 * full))
    np.testing.assert_allclose(ours, ref, **oracles.TOL)


@pytest.mark.parametrize("z", [1, 2, 4])
@pytest.mark.parametrize("bias_correction", [True, False])
def test_adam_delay_equals_admu_closed_form(oracles, field, z, bias_correction):
    """ADMU (Alg. 7, L1357-1375) through its closed form (eq. (19), L1385-1391):
    m_t = (1-b1) sum_r b1^(t-r) g_r, v_t = (1-b2) sum_{r=1}^{ceil(t/z)} b2^(ceil(t/z)-r) g_{(r-1)z+1}^2,
    bias exponents t and ceil(t/z)."""
    lr, b1, b2, eps = 0.01, 0.8, 0.95, 1e-6
    seen = []

    def step(t, g):
        seen.append(g)
        m = (1 - b1) * sum(b1 ** (t - r) * seen[r - 1] for r in range(1, t + 1))
        n = math.ceil(t / z)
        v = (1 - b2) * sum(b2 ** (n - r) * seen[(r - 1) * z] ** 2 for r in range(1, n + 1))
        if bias_correction:
            m, v = m / (1 - b1 ** t), v / (1 - b2 ** n)
        return lr * m / (np.sqrt(v) + eps)

    ours, _ = oracles.run_transform(
        client.adam(lr, b1, b2, eps, bias_correction=bias_correction, delay=z), field)
    np.testing.assert_allclose(ours.numpy(), _numpy_loop(field, step), rtol=1e-11, atol=1e-12)
    # and the recursion of Alg. 7 as the audit's reference writes it
    _, g = _recorded(client.adam(lr, b1, b2, eps, bias_correction=bias_correction, delay=z), field)
    full = np.full(ROWS, 1.0)
    ref = _reference_trajectory(field, g, lambda gk: reference.admu(
        gk, gk.shape[1] * full, z * full, b1 * full, b2 * full, eps * full, lr * full, bias_correction))
    np.testing.assert_allclose(ours.numpy(), ref, rtol=1e-11, atol=1e-12)


# --------------------------------------------------------------------------------------- SM3
SHAPES = [(2, 3), (4,), (3, 2)]  # d = 6 + 4 + 6 = 16, q = 5 + 4 + 5 = 14


def _covers(shapes):
    """The cover as explicit sets of flat indices: rows and columns of each matrix, singletons of
    each vector (what fedada2.md 7.6 prescribes), built independently of the implementation."""
    sets, offset = [], 0
    for s in shapes:
        idx = np.arange(math.prod(s)).reshape(s) + offset
        if len(s) == 1:
            sets += [[j] for j in idx]
        else:
            sets += [list(row) for row in idx] + [list(col) for col in idx.T]
        offset += math.prod(s)
    return sets, offset


def _sm3_i_loop(field, shapes, lr, eps, z):
    """FedAda2's SM3-I pseudocode (Alg. 3, L701-716), one client and one coordinate at a time, with
    refresh at (k-1)/z integral and eps outside the root."""
    sets, d = _covers(shapes)
    member = [[r for r, S in enumerate(sets) if j in S] for j in range(d)]
    x = field.x0.numpy().copy()
    rows = x.shape[0]
    mu = np.zeros((rows, len(sets)))
    nu = np.zeros((rows, d))
    out = []
    for k in range(1, field.steps + 1):
        g = field.grad(torch.from_numpy(x), k - 1).numpy()
        for i in range(rows):
            if (k - 1) % z == 0:
                for r, S in enumerate(sets):
                    mu[i, r] += max(g[i, j] ** 2 for j in S)
            for j in range(d):
                nu[i, j] = min(mu[i, r] for r in member[j])
        x = x - lr * g / (np.sqrt(nu) + eps)
        out.append(x.copy())
    return np.stack(out)


@pytest.mark.parametrize("variant,z,carry_over", [
    ("II", 1, True), ("II", 2, True), ("II", 3, False), ("II", 4, True),
    ("I", 1, True), ("I", 3, True)])
def test_sm3_equals_paper_pseudocode(oracles, variant, z, carry_over):
    """SM3-II (Alg. 4 / eq. (SM3), L695, L717-736; mu reset every step as printed, or carried over
    on non-refresh steps) against the audit's reference ``sm3_ii`` over the cover of ``_covers``
    (v0 = 0); SM3-I against the loop above."""
    field = oracles.Field((2, 16), 13, seed=2)
    transform = client.sm3(0.05, SHAPES, variant=variant, delay=z, eps=1e-3, carry_over=carry_over)
    if variant == "I":
        ours, _ = oracles.run_transform(transform, field)
        np.testing.assert_allclose(ours.numpy(), _sm3_i_loop(field, SHAPES, 0.05, 1e-3, z), **oracles.TOL)
        return
    ours, g = _recorded(transform, field)
    sets, d = _covers(SHAPES)
    cover = np.array([[j in S for j in range(d)] for S in sets])
    full = np.ones(2)
    ref = _reference_trajectory(field, g, lambda gk: reference.sm3_ii(
        gk, z * full, 1e-3 * full, 0.05 * full, 0 * full, carry_over=carry_over, cover=cover)["delta"])
    np.testing.assert_allclose(ours, ref, **oracles.TOL)


def test_sm3_carry_over_matters_with_delay(oracles):
    """The literal reset (carry_over=False) loses the history at the next refresh (fedada2.md 2.4):
    the two rules must give different trajectories when z > 1, and equal ones when z = 1."""
    field = oracles.Field((2, 16), 9, seed=3)
    runs = {(z, c): oracles.run_transform(client.sm3(0.05, SHAPES, delay=z, carry_over=c), field)[0]
            for z in (1, 3) for c in (True, False)}
    assert torch.equal(runs[1, True], runs[1, False])
    assert not torch.allclose(runs[3, True], runs[3, False])


def test_sm3_ii_equals_optax_sm3(oracles):
    """optax.scale_by_sm3 is SM3-II over the same cover (for each axis one accumulator per index;
    singletons for vectors). Conventions mapped: optax b1 = 0 (its momentum on the preconditioned
    update; FedAda2's SM3 has none) and b2 = 1 (accumulate, not EMA); optax puts eps inside the root
    and returns 0 where the accumulator is 0, fedbound puts eps outside, so the update is compared with
    optax eps = 0 and fedbound eps = 1e-300 (sqrt(nu) + 1e-300 == sqrt(nu) in float64 for the nu of
    this run, all >= 1e-6), which leaves g / sqrt(nu) on both sides. The accumulators mu are compared
    exactly (they do not involve eps)."""
    field = oracles.Field((2, 16), 12, seed=4)
    ours, state = oracles.run_transform(client.sm3(0.05, SHAPES, eps=1e-300), field)
    opt = optax.chain(optax.scale_by_sm3(b1=0.0, b2=1.0, eps=0.0), optax.scale(-0.05))
    sizes = [math.prod(s) for s in SHAPES]
    for row in range(2):
        x = field.x0[row].numpy()
        split = lambda v: [jax.numpy.asarray(p.reshape(s)) for p, s in
                           zip(np.split(v, np.cumsum(sizes)[:-1]), SHAPES)]
        opt_state = opt.init(split(x))
        for k in range(field.steps):
            g = (field.h[row] * torch.from_numpy(x) - field.c[row] + field.xi[k, row]).numpy()
            upd, opt_state = opt.update(split(g), opt_state)
            x = x + np.concatenate([np.asarray(u).ravel() for u in upd])
            np.testing.assert_allclose(ours[k, row].numpy(), x, **oracles.TOL)
        optax_mu = opt_state[0].mu
        for ours_acc, ref_acc in zip(state.accumulators, optax_mu):
            for a, b in zip(ours_acc, ref_acc):
                np.testing.assert_allclose(a[row].numpy(), np.asarray(b), **oracles.TOL)


@pytest.mark.parametrize("variant", ["I", "II"])
@pytest.mark.parametrize("z", [1, 3])
def test_sm3_singleton_cover_equals_adagrad(oracles, field, variant, z):
    """Vectors get singleton covers: SM3-I and SM3-II are then diagonal AdaGrad (AGDU with the same
    delay), fedada2.md 7.4."""
    ours, _ = oracles.run_transform(client.sm3(0.1, [D], variant=variant, delay=z, eps=1e-4), field)
    ref, _ = oracles.run_transform(client.adagrad(0.1, 1e-4, delay=z), field)
    torch.testing.assert_close(ours, ref, **oracles.TOL)


@pytest.mark.parametrize("z", [1, 2, 3])
@pytest.mark.parametrize("bias_correction", [True, False])
def test_sm3_adam_singleton_cover_equals_admu(oracles, z, bias_correction):
    """SM3-Adam over singleton covers keeps nu = Adam's v: the trajectory is ADMU's (Alg. 7)."""
    field = oracles.Field((3, D), 9, seed=4)
    ours, _ = oracles.run_transform(client.sm3_adam(0.05, [D], 0.8, 0.95, 1e-3, bias_correction, delay=z), field)
    ref, _ = oracles.run_transform(client.adam(0.05, 0.8, 0.95, 1e-3, bias_correction, delay=z), field)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), **oracles.TOL)


def test_sm3_adam_state_floats():
    shapes, d = [(100, 50), 50], 100 * 50 + 50
    assert client.sm3_adam(0.1, shapes).state_floats(d) == d + 150 + 50 + 1
    assert client.sm3_adam(0.1, shapes, delay=2).state_floats(d) == 2 * d + 200 + 1


def test_sm3_state_floats_show_memory_saving():
    """SM3 keeps q = sum of the dimensions of each tensor (rows + columns), AdaGrad keeps d: for a
    100 x 50 matrix and a 50-vector, q = 200 against d = 5050 (plus the step counter each)."""
    shapes = [(100, 50), (50,)]
    d = 5050
    assert client.sm3(0.1, shapes).state_floats(d) == 150 + 50 + 1
    assert client.adagrad(0.1, 1e-8).state_floats(d) == d + 1
    assert client.adam(0.1).state_floats(d) == 2 * d + 1
    # SM3-II with a delay must keep the last nu (nu_k = nu_{k-1} on non-refresh steps)
    assert client.sm3(0.1, shapes, delay=2).state_floats(d) == 200 + 1 + d
    assert client.sm3(0.1, shapes, variant="I", delay=2).state_floats(d) == 200 + 1
    params = torch.zeros(4, d, dtype=torch.float64)
    state = client.sm3(0.1, shapes).init(params)
    assert state.count.shape == (4,) and state.preconditioner is None
    assert sum(a.shape[1] for acc in state.accumulators for a in acc) == 150 + 50
    with pytest.raises(ValidationError, match="d = 5051"):
        client.sm3(0.1, shapes).state_floats(5051)


def test_sm3_shapes_checked_at_init():
    t = client.sm3(0.1, [(2, 3), 4])
    with pytest.raises(ValidationError, match="hold 10 parameters.*d = 11"):
        t.init(torch.zeros(2, 11, dtype=torch.float64))
    assert t.init(torch.zeros(2, 10, dtype=torch.float64)).count.shape == (2,)


# --------------------------------------------------------------------------------------- validation
@pytest.mark.parametrize("make,exc", [
    (lambda: client.sgd(0.0), ValidationError),
    (lambda: client.sgd(float("nan")), ValidationError),
    (lambda: client.sgd(float("inf")), ValidationError),
    (lambda: client.sgd("0.1"), InputTypeError),
    (lambda: client.sgd(0.1, decay=0.0), ValidationError),
    (lambda: client.sgd(0.1, decay=1.5), ValidationError),
    (lambda: client.prox(0.1, -1.0), ValidationError),
    (lambda: client.momentum(0.1, 1.0), ValidationError),
    (lambda: client.momentum(0.1, -0.1), ValidationError),
    (lambda: client.momentum(0.1, 0.9, nesterov=1), InputTypeError),
    (lambda: client.adagrad(0.1, 0.0), ValidationError),
    (lambda: client.adagrad(0.1, 1e-8, v0=-1.0), ValidationError),
    (lambda: client.adagrad(0.1, 1e-8, delay=0), ValidationError),
    (lambda: client.adagrad(0.1, 1e-8, delay=1.5), InputTypeError),
    (lambda: client.adam(0.1, b1=1.0), ValidationError),
    (lambda: client.adam(0.1, b2=-0.5), ValidationError),
    (lambda: client.adam(0.1, bias_correction="yes"), InputTypeError),
    (lambda: client.sm3(0.1, [(2, 0)]), ValidationError),
    (lambda: client.sm3(0.1, [(2, 2.5)]), InputTypeError),
    (lambda: client.sm3(0.1, []), InputTypeError),
    (lambda: client.sm3(0.1, "3x4"), InputTypeError),
    (lambda: client.sm3(0.1, [4], variant="III"), UnknownNameError),
    (lambda: client.sm3(0.1, [4], variant="I", carry_over=False), ValidationError),
    (lambda: client.sm3_adam(0.1, [4], b2=1.0), ValidationError),
    (lambda: client.adagrad(0.1, 1e-3, delay=10 ** 30), ValidationError),
    (lambda: client.drop_small_steps(0.0), ValidationError),
    (lambda: client.drop_small_steps(0.1, lr=-1.0), ValidationError),
    (lambda: client.sgd(0.1).accumulation(0), ValidationError),
])
def test_bad_arguments_are_named(make, exc):
    with pytest.raises(exc):
        make()
