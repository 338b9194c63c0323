"""AFGA / CAFGA / FedAMSGrad (fedbound.algorithms.federated.afga; seed 000, notes papers/afga.md 2 and 7.1).

The exact reductions of notes 2.2: AFGA with W = I and no re-sampling is FedAMSGrad; AFGA with
W = J is averaged local SGD with step eta_l M/N (a reference written here, drawing S_r and S_{r,t}
in the template's documented order); gossip preserves the network average; a round costs I M
gradients. The server equals optax.amsgrad with the epsilon placement mapped explicitly.
"""
from __future__ import annotations

import dataclasses
import json

import jax
import numpy as np
import optax
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.algorithms import registry, run
from fedbound.algorithms.federated.afga import AFGA, CAFGA, FedAMSGrad, server_transform
from fedbound.algorithms.optim import server
from fedbound.algorithms.optim.registry import SERVER_OPTIMIZERS
from fedbound.algorithms.stacked import StackedNetwork
from fedbound.cli.main import main
from fedbound.errors import FedboundError
from fedbound.network import Network, ring_weights, topology_weights
from fedbound.network.sampling import compute_mask
from fedbound.tasks import LeastSquares, Quadratic

jax.config.update("jax_enable_x64", True)

N, D = 12, 4


@pytest.fixture
def task():
    return Quadratic.generate(N, D, kappa=4.0, mu=0.5, hessian="diagonal", shared=True, seed=1)


def _numpy_amsgrad(eta, b1, b2, eps):
    """AFGA eq. (2) [000 L126-L129] in numpy: x + eta m / sqrt(vhat + eps), m_0 = v_0 = vhat_0 = 0."""
    state = {}

    def step(x, delta):
        m = b1 * state.get("m", 0.0) + (1 - b1) * delta
        v = b2 * state.get("v", 0.0) + (1 - b2) * delta ** 2
        vhat = np.maximum(state.get("vhat", 0.0), v)
        state.update(m=m, v=v, vhat=vhat)
        return x + eta * m / np.sqrt(vhat + eps)
    return step


def test_identity_gossip_without_resampling_is_fedamsgrad(task):
    """W = I_N and S_{r,t} = S_r: the unselected clients never move, so AFGA is FedAMSGrad under
    the same random numbers (notes 2.2 (i), flag 4)."""
    noisy = task.with_noise(0.3)
    options = dict(lr=0.05, server_lr=0.1, local_steps=3, clients_per_round=4, tau=1e-3, seed=7)
    afga = run(AFGA(noisy, StackedNetwork([np.eye(N)]), resample=False, **options), 15)
    fedams = run(FedAMSGrad(noisy, **options), 15)
    np.testing.assert_allclose(afga.x_g.numpy(), fedams.x_g.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(afga.comm["gradient_evaluations"], fedams.comm["gradient_evaluations"])
    np.testing.assert_allclose(afga.metrics["vhat_max"][1:], fedams.metrics["vhat_max"][1:], rtol=1e-12)


@pytest.mark.parametrize("M,I", [(3, 4), (12, 2), (1, 5)])
def test_complete_gossip_is_local_sgd_with_step_eta_l_M_over_N(task, M, I):
    """W = J: after each gossip every model is the network average, which moves by
    -eta_l (1/N) sum_{i in S_{r,t}} grad f_i = -(eta_l M/N) (mini-batch mean of the M computing
    clients); Delta_r = xbar_I - x_r whatever S_r is (notes 2.2 (ii))."""
    eta_l, eta, eps, seed, R = 0.1, 0.05, 1e-2, 3, 6
    alg = AFGA(task, Network.from_topology("complete", 1, N), lr=eta_l, server_lr=eta,
               local_steps=I, clients_per_round=M, tau=eps, seed=seed)
    traj = run(alg, R)
    gen = torch.Generator().manual_seed(seed)
    server = _numpy_amsgrad(eta, 0.9, 0.99, eps)
    x = task.x0.numpy().copy()
    for r in range(R):
        if M < N:    # S_r (drawn first; it does not matter for W = J), then the compute sets
            torch.randperm(N, generator=gen)
        masks = [compute_mask(N, M, gen).numpy() for _ in range(I)]
        y = x.copy()
        for mask in masks:
            grads = task.grad(torch.as_tensor(np.tile(y, (N, 1)))).numpy()
            y = y - eta_l * M / N * grads[mask].mean(axis=0)
        x = server(x, y - x)
        np.testing.assert_allclose(traj.x_g[r + 1].numpy(), x, rtol=0, atol=1e-11)
    assert np.all(traj.metrics["consensus_intra"][1:] < 1e-24)     # every row equal


networks = st.sampled_from(["ring", "complete", "grid", "chain"])


@settings(max_examples=25, deadline=None)
@given(topology=networks, K=st.integers(1, 4), n=st.integers(2, 9), seed=st.integers(0, 99))
def test_gossip_preserves_the_average(topology, K, n, seed):
    """(1/N) 1^T W X = (1/N) 1^T X for AFGA's ring, the clusters' block-diagonal W and the (a)
    variant's rings (notes 2.2 (iii)); per cluster as well (CAFGA's xbar^k, eq. (9))."""
    W = StackedNetwork([topology_weights(topology, n)] * K)
    X = torch.randn(K * n, 5, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    Y = W.mix(X)
    np.testing.assert_allclose(Y.mean(dim=0), X.mean(dim=0), atol=1e-13)
    np.testing.assert_allclose(W.subnet_mean(Y), W.subnet_mean(X), atol=1e-13)


@pytest.mark.parametrize("name,options,per_round", [
    ("fedamsgrad", {"clients_per_round": 4}, 4),
    ("afga", {"clients_per_round": 4}, 4),
    ("cafga", {"clients_per_round": 6, "clusters": 3}, 6),
    ("afga-a", {"clients_per_round": 4}, 4),
    ("cafga-a", {"clients_per_round": 6, "clusters": 3, "adapted_compute": 1}, 3),
])
def test_gradient_evaluations_per_round_are_I_M(task, name, options, per_round):
    """Re-sampling costs no extra gradients: I M per round, R I M in total [L53-L54, L210-L211]
    (CAFGA (a) with adapted_compute c: I c K)."""
    I, R = 3, 5
    traj = run(registry.build(name, task.with_noise(0.1), lr=0.05, local_steps=I, **options), R)
    np.testing.assert_array_equal(traj.comm["gradient_evaluations"], np.arange(R + 1) * I * per_round)


def test_server_equals_optax_amsgrad():
    """AFGA's server on a Delta sequence equals optax.amsgrad fed g = -Delta, with the epsilon
    placement mapped: the paper's eps inside the root is optax's eps_root, optax's eps (outside) is
    0, and both bias corrections are off (no bias correction in eq. (2))."""
    rng = np.random.default_rng(0)
    deltas = rng.standard_normal((40, 7)) * np.geomspace(1e-3, 1, 40)[:, None]
    eta, b1, b2, eps = 0.05, 0.9, 0.99, 1e-6
    opt = optax.amsgrad(eta, b1=b1, b2=b2, eps=0.0, eps_root=eps, bias_correction_mu=False,
                        bias_correction_nu=False)
    transform = server_transform("amsgrad", eta, b1, b2, eps)
    x = torch.zeros(7, dtype=torch.float64)
    state, ox, ostate = transform.init(x), jax.numpy.zeros(7), opt.init(jax.numpy.zeros(7))
    for delta in deltas:
        upd, state = transform.update(-torch.as_tensor(delta), state, x)
        x = x + upd
        oupd, ostate = opt.update(jax.numpy.asarray(-delta), ostate, ox)
        ox = optax.apply_updates(ox, oupd)
        np.testing.assert_allclose(x.numpy(), np.asarray(ox), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(state.max_second_moment.numpy(), np.asarray(ostate[0].nu_max),
                               rtol=1e-12)
    # the other placement (optax's default eps outside the root) is a different optimizer
    outside = optax.amsgrad(eta, b1=b1, b2=b2, eps=eps, bias_correction_mu=False, bias_correction_nu=False)
    ostate, ox = outside.init(jax.numpy.zeros(7)), jax.numpy.zeros(7)
    for delta in deltas:
        oupd, ostate = outside.update(jax.numpy.asarray(-delta), ostate, ox)
        ox = optax.apply_updates(ox, oupd)
    assert np.max(np.abs(np.asarray(ox) - x.numpy())) > 1e-6


def test_cafga_samples_m_per_cluster_and_averages_over_clusters(task):
    """S^k_r and every S^k_{r,t} hold m clients of each cluster; Delta_r = (1/K) sum_k (1/m)
    sum_{i in S^k_r} Delta^i_r, i.e. weight 1/(K m) per reporter (Alg. 2 lines 4, 7, 20)."""
    alg = CAFGA(task, clusters=3, lr=0.05, local_steps=4, clients_per_round=6)
    state = alg.step(alg.init())
    np.testing.assert_array_equal(np.bincount(state.clients.numpy() // 4, minlength=3), [2, 2, 2])
    np.testing.assert_allclose(state.weights.numpy(), 1 / 6)
    masks = alg.compute_masks(N, 50, torch.Generator().manual_seed(0))
    assert np.all(masks.numpy().reshape(50, 3, 4).sum(axis=2) == 2)


def test_adapted_variant_with_one_reporter_is_fedamsgrad(task):
    """AFGA (a) with M = 1: the ring over S_r is the single client (W = [1]) and S_{r,t} = S_r, so
    without gradient noise it is FedAMSGrad with one client per round (notes 2.4); its ring over
    M >= 3 reporters sends 2M messages per local step."""
    options = dict(lr=0.05, server_lr=0.1, local_steps=3, tau=1e-3, seed=2)
    adapted = AFGA(task, comm_adapted=True, clients_per_round=1, **options)
    fedams = FedAMSGrad(task, clients_per_round=1, **options)
    a, f = adapted.init(), fedams.init()
    for _ in range(8):      # the ring order draws random numbers: each round from the same rng
        a, f = adapted.step(a), fedams.step(dataclasses.replace(f, rng=a.rng))
        np.testing.assert_allclose(a.x_g.numpy(), f.x_g.numpy(), rtol=0, atol=1e-12)
    five = run(AFGA(task, comm_adapted=True, clients_per_round=5, **options), 4)
    np.testing.assert_array_equal(five.comm["d2d_messages"], np.arange(5) * 3 * 2 * 5)


def test_adapted_ring_mixes_the_reporters_in_a_fresh_order(task):
    """The (a) round equals its definition: the reporters' models, permuted by the round's ring
    order, run local SGD with one ring mixing (self weight 1/3) after each step."""
    alg = AFGA(task, comm_adapted=True, clients_per_round=5, lr=0.1, local_steps=2, seed=4)
    x = task.x0 + 1.0
    rows = torch.tensor([0, 2, 3, 7, 11])
    gen = torch.Generator().manual_seed(9)
    X, _ = alg.local_work(x, rows, torch.full((5,), 2), None, gen)
    gen = torch.Generator().manual_seed(9)
    order = torch.argsort(torch.rand(5, generator=gen, dtype=torch.float64)).numpy()
    W = ring_weights(5)
    Y = np.broadcast_to(x.numpy(), (5, D)).copy()
    ids = rows.numpy()[order]
    for _ in range(2):
        Y = W @ (Y - 0.1 * task.grad(torch.as_tensor(Y), torch.as_tensor(ids)).numpy())
    np.testing.assert_allclose(X.numpy()[order], Y, atol=1e-13)


def test_sgd_server_delta_norm_is_the_model_change(task):
    """With the SGD server at eta = 1, x_{r+1} - x_r = Delta_r, so the logged ||Delta_r|| is the
    model change; round 0 logs the initial state (zeros); consensus errors are positive."""
    traj = run(AFGA(task.with_noise(0.2), lr=0.05, server_optimizer="sgd", server_lr=1.0, local_steps=3,
                    clients_per_round=4), 6)
    change = np.linalg.norm(np.diff(traj.x_g.numpy(), axis=0), axis=1)
    np.testing.assert_allclose(traj.metrics["delta_norm"][1:], change, rtol=1e-12)
    assert traj.metrics["delta_norm"][0] == 0 and "vhat_max" not in traj.metrics
    assert np.all(traj.metrics["consensus_intra"][1:] > 0)


@pytest.mark.parametrize("bad", [
    dict(clients_per_round=5, clusters=3),          # M not a multiple of K
    dict(clusters=5),                               # N = 12 not divisible by 5
    dict(server_optimizer="adamw"),
    dict(adapted_compute=2),                        # only for the (a) variant
    dict(v0=0.1),                                   # AMSGrad starts from v_0 = 0
    dict(server_optimizer="sgd", eps_inside_sqrt=True),
    dict(server_optimizer="sgd", bias_correction="adam"),
    dict(bias_correction="kingma"),
])
def test_bad_options_are_clear_errors(task, bad):
    with pytest.raises(FedboundError):
        CAFGA(task, lr=0.1, **bad)


def test_compute_sets_are_uniform_and_independent_of_the_report_set(task):
    """S_{r,t} is M of N uniformly without replacement, independent of S_r (Alg. 1 line 6; Lemma
    F.6's P{i in S} = M/N, P{i, j in S} = M(M-1)/(N(N-1))): Monte-Carlo frequencies over 4000 steps
    within 99.9% binomial intervals, and a reporter computes as often as any client."""
    from scipy import stats

    M, steps = 3, 4000
    alg = AFGA(task, lr=0.1, clients_per_round=M)
    reporters = torch.tensor([0, 1, 2])
    masks = alg.compute_masks(N, steps, torch.Generator().manual_seed(5), reporters).numpy()
    assert np.all(masks.sum(axis=1) == M)
    low, high = stats.binom.interval(0.999, steps, M / N)
    counts = masks.sum(axis=0)
    assert np.all((counts >= low) & (counts <= high)), counts
    pair = M * (M - 1) / (N * (N - 1))
    low, high = stats.binom.interval(0.999, steps, pair)
    assert low <= int(np.sum(masks[:, 0] & masks[:, 5])) <= high


# ---- the adaptive servers' switches are options (issue 25) ------------------------------------------
FAMILY = ("fedamsgrad", "afga", "cafga", "afga-a", "cafga-a")


@pytest.mark.parametrize("name", FAMILY)
@pytest.mark.parametrize("server_optimizer,paper", [
    (None, {"bias_correction": "none", "eps_inside_sqrt": True}),         # eq. (2)
    ("adam", {"bias_correction": "none", "eps_inside_sqrt": False, "v0": 0.0}),
    ("sgd", {"bias_correction": "none", "eps_inside_sqrt": False, "v0": 0.0}),
])
def test_the_switches_default_to_the_papers_choices(task, name, server_optimizer, paper,
                                                   transform_steps):
    """Leaving the switches out runs what giving the paper's values runs, bitwise (AMSGrad: eps inside
    the root, no bias correction, v_0 = 0; Adam: eps outside); the default server is eq. (2)."""
    if name == "fedamsgrad" and server_optimizer is not None:
        return
    chosen = {} if server_optimizer is None else {"server_optimizer": server_optimizer}
    if name == "fedamsgrad":
        paper = {k: v for k, v in paper.items() if k != "v0"}
    common = dict(lr=0.05, local_steps=2, clients_per_round=6, server_lr=0.05, tau=1e-3, seed=3, **chosen)
    cluster = {"clusters": 3} if name.startswith("cafga") else {}
    noisy = task.with_noise(0.2)
    default = run(registry.build(name, noisy, **common, **cluster), 3).x_g
    assert torch.equal(default, run(registry.build(name, noisy, **common, **cluster, **paper), 3).x_g)
    if server_optimizer is None:
        amsgrad = registry.build(name, noisy, **common, **cluster).server
        assert torch.equal(transform_steps(amsgrad, 5), transform_steps(server.amsgrad(
            0.05, 0.9, 0.99, 1e-3, eps_inside_sqrt=True, bias_correction="none"), 5))


def test_every_switch_is_declared_once():
    amsgrad, adam = SERVER_OPTIMIZERS.get("amsgrad"), SERVER_OPTIMIZERS.get("adam")
    for name in FAMILY:
        for switch in ("bias_correction", "eps_inside_sqrt"):
            assert registry.get(name).option(switch) is amsgrad.option(switch)
        if name != "fedamsgrad":
            assert registry.get(name).option("v0") is adam.option("v0")


@pytest.mark.parametrize("name", FAMILY)
@pytest.mark.parametrize("switches,direct", [
    ({"eps_inside_sqrt": False}, lambda: server.amsgrad(0.05, 0.9, 0.99, 1e-3, eps_inside_sqrt=False)),
    ({"bias_correction": "adam"}, lambda: server.amsgrad(0.05, 0.9, 0.99, 1e-3, bias_correction="adam")),
    ({"bias_correction": "flower", "eps_inside_sqrt": False},
     lambda: server.amsgrad(0.05, 0.9, 0.99, 1e-3, bias_correction="flower", eps_inside_sqrt=False)),
    ({"server_optimizer": "adam", "v0": 0.2, "eps_inside_sqrt": True, "bias_correction": "adam"},
     lambda: server.adam(0.05, 0.9, 0.99, 1e-3, v0=0.2, eps_inside_sqrt=True, bias_correction="adam")),
])
def test_the_switches_reach_the_server_transform(task, name, switches, direct, transform_steps):
    if name == "fedamsgrad" and "server_optimizer" in switches:
        return
    cluster = {"clusters": 3} if name.startswith("cafga") else {}
    common = dict(lr=0.05, server_lr=0.05, tau=1e-3, clients_per_round=6, **cluster)
    built = registry.build(name, task, **common, **switches)
    assert torch.equal(transform_steps(built.server, 5), transform_steps(direct(), 5))
    default = registry.build(name, task, **common, **{k: v for k, v in switches.items()
                                                      if k == "server_optimizer"})
    assert not torch.equal(transform_steps(built.server, 5), transform_steps(default.server, 5))


def test_first_round_is_the_hand_computed_server_step(task):
    """FedAMSGrad's first round: x_1 = x_0 + eta m_1 / sqrt(vhat_1 + eps) (eq. (2)) with m_1 = (1 - b1)
    Delta, vhat_1 = (1 - b2) Delta^2; ``eps_inside_sqrt=False``: / (sqrt(vhat_1) + eps);
    ``bias_correction="adam"``: m^ = Delta, vhat^ = Delta^2, x_1 = x_0 + eta Delta / sqrt(Delta^2 + eps)."""
    eta, b1, b2, eps = 0.1, 0.9, 0.99, 1e-3
    common = dict(lr=0.05, local_steps=3, clients_per_round=4, server_lr=eta, beta1=b1, beta2=b2,
                  tau=eps, seed=2)
    noisy = task.with_noise(0.2)
    sgd = registry.build("afga", noisy, server_optimizer="sgd", **{**common, "server_lr": 1.0})
    x0 = sgd.init().x_g
    delta = sgd.step(sgd.init()).x_g - x0        # the same clients, x + Delta
    expected = {
        (): x0 + eta * (1 - b1) * delta / torch.sqrt((1 - b2) * delta ** 2 + eps),
        (("eps_inside_sqrt", False),): x0 + eta * (1 - b1) * delta / (torch.sqrt((1 - b2) * delta ** 2) + eps),
        (("bias_correction", "adam"),): x0 + eta * delta / torch.sqrt(delta ** 2 + eps),
    }
    for switches, x1 in expected.items():
        alg = registry.build("afga", noisy, **common, **dict(switches))
        torch.testing.assert_close(alg.step(alg.init()).x_g, x1, rtol=1e-13, atol=1e-16)
    adam = registry.build("afga", noisy, server_optimizer="adam", v0=0.5, **common)
    torch.testing.assert_close(adam.step(adam.init()).x_g, x0 + eta * (1 - b1) * delta / (
        torch.sqrt(b2 * 0.5 + (1 - b2) * delta ** 2) + eps), rtol=1e-13, atol=1e-16)


@pytest.mark.parametrize("name,flags,options,base", [
    ("fedamsgrad", ["--no-eps-inside-sqrt", "--bias-correction", "adam"],
     dict(eps_inside_sqrt=False, bias_correction="adam"), {}),
    ("afga", ["--bias-correction", "flower"], dict(bias_correction="flower"), {}),
    ("afga", ["--server-optimizer", "adam", "--v0", "0.2", "--eps-inside-sqrt"],
     dict(server_optimizer="adam", v0=0.2, eps_inside_sqrt=True), dict(server_optimizer="adam")),
    ("cafga", ["--clusters", "2", "--no-eps-inside-sqrt"], dict(clusters=2, eps_inside_sqrt=False),
     dict(clusters=2)),
])
def test_the_switches_on_the_command_line(tmp_path, capsys, name, flags, options, base):
    """``fedbound run NAME --flag value`` runs what registry.build(name, ..., option=value) runs,
    and the switch changes the run."""
    rng = np.random.default_rng(0)
    data = tmp_path / "data.npz"
    np.savez(data, A=rng.normal(size=(6, 8, 3)), y=rng.normal(size=(6, 8)))
    code = main(["run", name, "--task", "lsq", "--data", str(data), "--lr", "0.05", "--local-steps", "2",
                 "--server-lr", "0.05", "--tau", "1e-3", "--rounds", "3", "--sigma", "0", "--float64",
                 "--seed", "0", "--out", str(tmp_path / "out"), "--json", *flags])
    assert code == 0
    config = json.loads(capsys.readouterr().out)["config"]
    assert all(config[k] == v for k, v in options.items())
    lsq = LeastSquares.from_npz(data)
    common = dict(lr=0.05, local_steps=2, server_lr=0.05, tau=1e-3, seed=0)
    python = run(registry.build(name, lsq, **common, **options), 3).x_g[-1]
    x_final = np.load(tmp_path / "out" / "x_final.npy")
    assert np.array_equal(x_final, python.numpy())
    assert not np.array_equal(x_final, run(registry.build(name, lsq, **common, **base), 3).x_g[-1].numpy())
