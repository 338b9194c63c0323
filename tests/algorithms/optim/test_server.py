"""Server optimizers against established implementations, float64, 1e-12.

The server transform is fed the pseudo-gradient g = x - aggregate; torch.optim and optax are fed the
same g as their gradient, so their update -lr * f(g) is the FedOpt update x + lr * f'(Delta) with
Delta = -g (m flips sign with g, v depends on g^2 only). Flower's strategies and the papers' formulas,
written with Delta and "x + eta m / ...", are plain-numpy loops below.
"""
from __future__ import annotations

import jax
import numpy as np
import optax
import pytest
import torch

from fedbound.algorithms.optim import server
from fedbound.errors import InputTypeError, ValidationError

jax.config.update("jax_enable_x64", True)

D, ROUNDS = 9, 30


@pytest.fixture
def field(oracles):
    return oracles.Field((D,), ROUNDS, seed=5)


def _delta_loop(field, step):
    """The papers' server loop: Delta_r = -g_r (aggregate - x), x <- x + step(r, Delta_r), numpy."""
    x = field.x0.numpy().copy()
    out = []
    for r in range(field.steps):
        delta = -field.grad(torch.from_numpy(x), r).numpy()
        x = x + step(r + 1, delta)
        out.append(x.copy())
    return np.stack(out)


def test_sgd_lr1_is_fedavg():
    gen = torch.Generator().manual_seed(0)
    clients = torch.randn(5, D, dtype=torch.float64, generator=gen)
    x = torch.randn(D, dtype=torch.float64, generator=gen)
    t = server.sgd()
    updates, _ = t.update(x - clients.mean(0), t.init(x), x)
    torch.testing.assert_close(x + updates, clients.mean(0), rtol=1e-15, atol=1e-15)
    updates, _ = server.sgd(0.5).update(x - clients.mean(0), (), x)
    torch.testing.assert_close(x + updates, 0.5 * x + 0.5 * clients.mean(0), rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("beta,nesterov", [(0.9, False), (0.5, True)])
def test_momentum_equals_torch_sgd(oracles, field, beta, nesterov):
    ours, _ = oracles.run_transform(server.momentum(0.7, beta, nesterov=nesterov), field)
    ref = oracles.run_torch(torch.optim.SGD, field, lr=0.7, momentum=beta, nesterov=nesterov)
    torch.testing.assert_close(ours, ref, **oracles.TOL)


def test_momentum_equals_flower_fedavgm(oracles, field):
    """Flower's FedAvgM: momentum_vector = pseudo_gradient in round 1, then
    server_momentum * momentum_vector + pseudo_gradient; x <- x - server_lr * momentum_vector."""
    buf = None

    def step(r, delta):
        nonlocal buf
        buf = -delta if r == 1 else 0.9 * buf - delta
        return -0.7 * buf

    ours, _ = oracles.run_transform(server.momentum(0.7, 0.9), field)
    np.testing.assert_allclose(ours.numpy(), _delta_loop(field, step), **oracles.TOL)


@pytest.mark.parametrize("v0", [0.0, 0.25])
def test_adagrad_equals_torch_adagrad(oracles, field, v0):
    ours, _ = oracles.run_transform(server.adagrad(0.3, 1e-4, v0=v0), field)
    ref = oracles.run_torch(torch.optim.Adagrad, field, lr=0.3, eps=1e-4,
                            initial_accumulator_value=v0)
    torch.testing.assert_close(ours, ref, **oracles.TOL)


def test_adagrad_momentum_equals_fedada2_su(oracles, field):
    """FedAda2's server update SU (L98-104 of 004_a1d7c636af01c22e.txt): m = b m + (1-b) Delta,
    v = v + Delta^2, x <- x + eta m / (sqrt(v) + tau), v_0 = tau^2."""
    eta, b, tau = 0.3, 0.6, 0.05
    m, v = np.zeros(D), np.full(D, tau ** 2)

    def step(r, delta):
        nonlocal m, v
        m = b * m + (1 - b) * delta
        v = v + delta ** 2
        return eta * m / (np.sqrt(v) + tau)

    ours, _ = oracles.run_transform(server.adagrad(eta, tau, v0=tau ** 2, b1=b), field)
    np.testing.assert_allclose(ours.numpy(), _delta_loop(field, step), **oracles.TOL)


@pytest.mark.parametrize("b1,b2", [(0.9, 0.999), (0.5, 0.9)])
def test_adam_bias_corrected_equals_torch_adam(oracles, field, b1, b2):
    ours, _ = oracles.run_transform(server.adam(0.05, b1, b2, 1e-6, bias_correction=True), field)
    ref = oracles.run_torch(torch.optim.Adam, field, lr=0.05, betas=(b1, b2), eps=1e-6)
    torch.testing.assert_close(ours, ref, **oracles.TOL)


@pytest.mark.parametrize("eps_inside_sqrt", [False, True])
def test_adam_default_equals_fedopt_loop(oracles, field, eps_inside_sqrt):
    """FedAdam of Reddi et al. Alg. 2 (= Flower's flwr.server.strategy.FedAdam before 2025): no bias
    correction, v_0 given, tau outside the root (or inside, the flag)."""
    eta, b1, b2, tau, v0 = 0.05, 0.9, 0.99, 1e-3, 1e-6
    m, v = np.zeros(D), np.full(D, v0)

    def step(r, delta):
        nonlocal m, v
        m = b1 * m + (1 - b1) * delta
        v = b2 * v + (1 - b2) * delta ** 2
        return eta * m / (np.sqrt(v + tau) if eps_inside_sqrt else np.sqrt(v) + tau)

    ours, _ = oracles.run_transform(
        server.adam(eta, b1, b2, tau, eps_inside_sqrt=eps_inside_sqrt, v0=v0), field)
    np.testing.assert_allclose(ours.numpy(), _delta_loop(field, step), **oracles.TOL)


@pytest.mark.parametrize("b1,v0", [(0.9, 0.0), (0.0, 0.3)])
def test_yogi_equals_optax_yogi(oracles, field, b1, v0):
    """optax.yogi = chain(scale_by_yogi(b1, b2, eps), scale_by_learning_rate(lr)); scale_by_yogi
    bias-corrects m and v and starts BOTH m and v at initial_accumulator_value (1e-6 by default).
    Mapped: ``bias_correction=True``, eps_root = 0, and initial_accumulator_value = v0 with either
    v0 = 0 (then m_0 = 0 as here) or b1 = 0 (then m_0 does not enter)."""
    opt = optax.chain(optax.scale_by_yogi(b1=b1, b2=0.9, eps=1e-3, eps_root=0.0,
                                          initial_accumulator_value=v0),
                      optax.scale_by_learning_rate(0.02))
    x = field.x0.numpy().copy()
    opt_state = opt.init(jax.numpy.asarray(x))
    ref = []
    for r in range(field.steps):
        g = field.grad(torch.from_numpy(x), r).numpy()
        upd, opt_state = opt.update(jax.numpy.asarray(g), opt_state)
        x = x + np.asarray(upd)
        ref.append(x.copy())
    ours, _ = oracles.run_transform(server.yogi(0.02, b1, 0.9, 1e-3, v0=v0, bias_correction=True),
                                    field)
    np.testing.assert_allclose(ours.numpy(), np.stack(ref), **oracles.TOL)


def test_yogi_default_equals_flower_fedyogi(oracles, field):
    """Flower's FedYogi: m = b1 m + (1-b1) Delta, v = v - (1-b2) Delta^2 sign(v - Delta^2) from v = 0,
    x <- x + eta m / (sqrt(v) + tau), no bias correction."""
    m, v = np.zeros(D), np.zeros(D)

    def step(r, delta):
        nonlocal m, v
        m = 0.9 * m + 0.1 * delta
        v = v - 0.01 * delta ** 2 * np.sign(v - delta ** 2)
        return 0.01 * m / (np.sqrt(v) + 1e-3)

    ours, _ = oracles.run_transform(server.yogi(), field)
    np.testing.assert_allclose(ours.numpy(), _delta_loop(field, step), **oracles.TOL)


def test_amsgrad_equals_torch_amsgrad(oracles, field):
    """torch.optim.Adam(amsgrad=True): eps outside the root and bias correction after the running max:
    the flags eps_inside_sqrt=False, bias_correction=True."""
    ours, _ = oracles.run_transform(
        server.amsgrad(0.05, 0.9, 0.99, 1e-6, eps_inside_sqrt=False, bias_correction=True), field)
    ref = oracles.run_torch(torch.optim.Adam, field, lr=0.05, betas=(0.9, 0.99), eps=1e-6,
                            amsgrad=True)
    torch.testing.assert_close(ours, ref, **oracles.TOL)


def test_amsgrad_default_equals_afga_eq2(oracles, field):
    """AFGA's FedAMSGrad (eq. (2), L126-129 of 000_bd1b5016b2d2bc05.txt): vhat running max from 0,
    x <- x + eta m / sqrt(vhat + eps), no bias correction, beta2 = 0.99. A small eps makes the
    placement inside/outside the root matter, so torch's AMSGrad cannot stand in for it."""
    eta, eps = 0.05, 1e-2
    m, v, vhat = np.zeros(D), np.zeros(D), np.zeros(D)

    def step(r, delta):
        nonlocal m, v, vhat
        m = 0.9 * m + 0.1 * delta
        v = 0.99 * v + 0.01 * delta ** 2
        vhat = np.maximum(vhat, v)
        return eta * m / np.sqrt(vhat + eps)

    ours, _ = oracles.run_transform(server.amsgrad(eta, eps=eps), field)
    ref = _delta_loop(field, step)
    np.testing.assert_allclose(ours.numpy(), ref, **oracles.TOL)
    outside, _ = oracles.run_transform(server.amsgrad(eta, eps=eps, eps_inside_sqrt=False), field)
    assert np.abs(outside.numpy() - ref).max() > 1e-3


def test_state_floats():
    assert server.sgd().state_floats(10) == 0
    assert server.momentum(beta=0.9).state_floats(10) == 10
    assert server.adagrad().state_floats(10) == 21
    assert server.adam().state_floats(10) == 21
    assert server.yogi().state_floats(10) == 21
    assert server.amsgrad().state_floats(10) == 31
    x = torch.zeros(10, dtype=torch.float64)
    assert sum(t.numel() for t in server.amsgrad().init(x)) == 31


@pytest.mark.parametrize("make,exc", [
    (lambda: server.sgd(0.0), ValidationError),
    (lambda: server.momentum(1.0, 1.0), ValidationError),
    (lambda: server.adagrad(eps=0.0), ValidationError),
    (lambda: server.adagrad(v0=-1.0), ValidationError),
    (lambda: server.adagrad(b1=1.0), ValidationError),
    (lambda: server.adam(b2=1.0), ValidationError),
    (lambda: server.adam(lr=float("nan")), ValidationError),
    (lambda: server.adam(bias_correction=1), InputTypeError),
    (lambda: server.yogi(eps=-1e-3), ValidationError),
    (lambda: server.amsgrad(eps_inside_sqrt="no"), InputTypeError),
    (lambda: server.amsgrad(b1=-0.1), ValidationError),
])
def test_bad_arguments_are_named(make, exc):
    with pytest.raises(exc):
        make()
