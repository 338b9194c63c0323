"""SD-GT (seed 003, Alg. 1): invariants, exactness, the aggregator flag F2, the pure round map."""
import dataclasses

import pytest
import torch
from torch.func import jacrev

from fedbound.algorithms import SDGT, run, sdgt_round
from fedbound.errors import InputTypeError, UnknownNameError, ValidationError

SIZES = (3, 4, 5)  # unequal subnet sizes, n = 12


def fixed_point_state(alg, task):
    """x_i = x_g = x*, z_i = gbar_s(x*) - grad f_i(x*), y_i = psi_s = -gbar_s(x*) (sdgt.md 2.1)."""
    state = alg.init()
    net = alg.net
    X = task.x_star.expand(net.n, -1).clone()
    G = task.grad(X)
    g_sub = net.subnet_mean(G)
    return dataclasses.replace(state, X=X, x_g=task.x_star.clone(), Y=net.expand(-g_sub),
                               Z=net.expand(g_sub) - G, psi=-g_sub)


def test_z_sums_to_zero_in_every_subnet_every_round(make_network, make_quadratic):
    task = make_quadratic(12, 5, seed=1, sigma=0.5)
    alg = SDGT(task, make_network(SIZES), lr=0.05, local_steps=3, clients_per_subnet=[1, 2, 2], seed=3)
    state = alg.init()
    for _ in range(30):
        assert alg.net.subnet_sum(state.Z).abs().max() <= 1e-12
        state = alg.step(state)
    assert alg.net.subnet_sum(state.Z).abs().max() <= 1e-12


@pytest.mark.parametrize("sigma", [0.0, 0.5])
def test_server_recursion_40_under_full_participation(make_network, make_quadratic, sigma):
    """x_g^{t+1} = x_g^t - gamma (1/n) sum_k sum_i g_i^{t,k}  (eq. (40) [L684])."""
    task = make_quadratic(12, 5, seed=2, sigma=sigma)
    alg = SDGT(task, make_network(SIZES), lr=0.05, local_steps=4, record_inner=True, seed=1)
    state = alg.init()
    for _ in range(20):
        new = alg.step(state)
        predicted = state.x_g - alg.gamma * new.inner_G.sum(dim=(0, 1)) / task.n
        assert torch.max(torch.abs(new.x_g - predicted)) <= 1e-12
        # m_s/n weights make sum_s m_s psi_s = 0 under full participation (sdgt.md 2.1)
        assert torch.max(torch.abs(alg.net.m_t @ new.psi)) <= 1e-12
        state = new


def test_initial_trackers_hit_their_targets_without_noise(make_network, make_quadratic):
    """y_i^1 = grad f(x0) - gbar_s(x0), z_i^1 = gbar_s(x0) - grad f_i(x0): Y_1 = Z_1 = 0 [L400]."""
    task = make_quadratic(12, 5, seed=4)
    alg = SDGT(task, make_network(SIZES), lr=0.05, local_steps=2)
    state = alg.init()
    G = task.grad(state.X)
    g_sub = alg.net.expand(alg.net.subnet_mean(G))
    assert torch.allclose(state.Y, task.global_grad(task.x0) - g_sub, rtol=0, atol=1e-13)
    assert torch.allclose(state.Z, g_sub - G, rtol=0, atol=1e-13)
    printed = SDGT(task, make_network(SIZES), lr=0.05, local_steps=2, init="printed").init()
    assert torch.count_nonzero(printed.Y) == 0 and torch.count_nonzero(printed.Z) == 0


def test_exact_convergence_with_partial_sampling_and_unequal_subnets(make_network, make_quadratic):
    task = make_quadratic(12, 5, seed=1)
    alg = SDGT(task, make_network(SIZES), lr=0.05, local_steps=3, clients_per_subnet=[1, 2, 2], seed=0)
    traj = run(alg, 300)
    assert traj.dist2[-1] <= 1e-20                                     # ||x_g - x*|| <= 1e-10
    assert torch.max(torch.abs(traj.final_state.X - task.x_star)) <= 1e-10


@pytest.mark.parametrize("h", [None, [1, 2, 2]])
def test_fixed_point_of_subnet_weighted_aggregator_and_bias_of_papers(make_network, make_quadratic,
                                                                      h):
    """From the exact fixed point, the m_s/n aggregator stays at x*, the printed 1/(S h_s)
    aggregator moves x_g by K gamma (gbar - (1/S) sum_s gbar_s)(x*) (flag F2)."""
    task = make_quadratic(12, 5, seed=1)
    K, gamma = 3, 0.05
    for aggregator in ("subnet_weighted", "paper"):
        alg = SDGT(task, make_network(SIZES), lr=gamma, local_steps=K, clients_per_subnet=h, aggregator=aggregator)
        start = fixed_point_state(alg, task)
        moved = alg.step(start).x_g - task.x_star
        g_sub = alg.net.subnet_mean(task.grad(task.x_star.expand(task.n, -1)))
        predicted = K * gamma * (task.global_grad(task.x_star) - g_sub.mean(dim=0))
        expected = torch.zeros_like(moved) if aggregator == "subnet_weighted" else predicted
        assert torch.max(torch.abs(moved - expected)) <= 1e-12
    assert torch.linalg.norm(predicted) > 1e-3  # the bias is real for these unequal sizes


def test_paper_aggregator_plateaus_away_from_optimum(make_network, make_quadratic):
    task = make_quadratic(12, 5, seed=1)
    alg = SDGT(task, make_network(SIZES), lr=0.05, local_steps=3, aggregator="paper")
    traj = run(alg, 300)
    assert traj.dist2[-1] > 1e-6
    assert abs(traj.dist2[-1] - traj.dist2[-20]) <= 1e-10 * traj.dist2[-1]  # stationary plateau


def test_time_varying_K_and_h_overrides_apply_to_one_round(make_network, make_quadratic):
    task = make_quadratic(12, 5, seed=5)
    alg = SDGT(task, make_network(SIZES), lr=0.05, local_steps=3, clients_per_subnet=[1, 1, 1], record_inner=True)
    state = alg.step(alg.init(), local_steps=5, clients_per_subnet=[3, 2, 1])
    assert state.K == 5 and state.inner_X.shape == (5, 12, 5)
    assert state.h.tolist() == [3, 2, 1]
    assert [int(state.mask[alg.net.subnet_of == s].sum()) for s in range(3)] == [3, 2, 1]
    state = alg.step(state)
    assert state.K == 3 and state.inner_X.shape[0] == 3 and state.h.tolist() == [1, 1, 1]


def test_inner_iterates_and_reset_rules(make_network, make_quadratic):
    """inner_X[0] is the round's start X^{t,1}; sampled clients restart at x_g, unsampled ones keep
    x^{t,K+1} and y; z changes for every client."""
    task = make_quadratic(12, 5, seed=6)
    alg = SDGT(task, make_network(SIZES), lr=0.05, local_steps=2, clients_per_subnet=[1, 2, 3], record_inner=True)
    s1 = alg.step(alg.init())
    s2 = alg.step(s1)
    assert torch.equal(s2.inner_X[0], s1.X)
    m = s2.mask
    assert torch.equal(s2.X[m], s2.x_g.expand(int(m.sum()), -1))
    assert torch.equal(s2.X[~m], s2.X_end[~m])
    assert torch.equal(s2.Y[~m], s1.Y[~m])
    assert torch.equal(s2.Y[m], alg.net.expand(s2.psi)[m])
    assert bool(torch.all(torch.any(s2.Z != s1.Z, dim=1)))


@pytest.mark.parametrize("sampled", [None, "partial"])
def test_round_fn_is_the_step_and_is_affine_on_quadratics(make_network, make_quadratic, sampled):
    """The pure round map reproduces step() and its jacrev Jacobian is the exact linear operator."""
    task = make_quadratic(12, 4, seed=7)
    h = None if sampled is None else [1, 2, 3]
    alg = SDGT(task, make_network(SIZES), lr=0.05, local_steps=2, clients_per_subnet=h, seed=2)
    state = alg.step(alg.init())
    nxt = alg.step(state)
    mask = None if sampled is None else nxt.mask
    round_map = alg.round_fn(sampled=mask)
    args = (state.X, state.Y, state.Z, state.x_g, state.psi)
    out = round_map(*args)
    for got, want in zip(out, (nxt.X, nxt.Y, nxt.Z, nxt.x_g, nxt.psi)):
        assert torch.max(torch.abs(got - want)) <= 1e-12

    flat_sizes = [a.numel() for a in args]

    def unflatten(v):
        return [p.reshape(a.shape) for p, a in zip(torch.split(v, flat_sizes), args)]

    def flat_map(v):
        return torch.cat([o.reshape(-1) for o in round_map(*unflatten(v))])

    v0 = torch.cat([a.reshape(-1) for a in args])
    J = jacrev(flat_map)(v0)
    offset = flat_map(torch.zeros_like(v0))
    v1 = torch.randn(v0.shape, generator=torch.Generator().manual_seed(0), dtype=v0.dtype)
    assert torch.max(torch.abs(flat_map(v1) - (J @ v1 + offset))) <= 1e-10


def test_sdgt_round_without_global_aggregation_keeps_server_state(make_network, make_quadratic):
    task = make_quadratic(12, 5, seed=8)
    alg = SDGT(task, make_network(SIZES), lr=0.05, local_steps=2, global_aggregation=False)
    state = alg.init()
    out = sdgt_round(state.X, state.Y, state.Z, state.x_g, state.psi, grad_fn=task.grad,
                     net=alg.net, K=2, gamma=0.05, omega=alg.omega, global_aggregation=False)
    assert torch.equal(out.x_g, state.x_g) and torch.equal(out.psi, state.psi)
    assert torch.equal(out.Y, state.Y) and torch.equal(out.X, out.X_end)
    nxt = alg.step(state)
    assert nxt.last_comm.uploads == 0 and not bool(nxt.mask.any())


def test_invalid_settings_raise_one_line_errors(make_network, make_quadratic):
    task = make_quadratic(12, 5)
    net = make_network(SIZES)
    with pytest.raises(ValidationError, match="lr must be"):
        SDGT(task, net, lr=-1.0, local_steps=2)
    with pytest.raises(ValidationError, match="local_steps must be"):
        SDGT(task, net, lr=0.1, local_steps=0)
    with pytest.raises(ValidationError, match=r"h_s must be an integer in \[1, 5\], got 6"):
        SDGT(task, net, lr=0.1, local_steps=2, clients_per_subnet=[1, 2, 6])
    with pytest.raises(UnknownNameError, match="aggregator must be one of"):
        SDGT(task, net, lr=0.1, local_steps=2, aggregator="mean")
    alg = SDGT(task, net, lr=0.1, local_steps=2)
    with pytest.raises(InputTypeError, match="local_steps must be an integer or None, got 1.5"):
        alg.step(alg.init(), local_steps=1.5)
