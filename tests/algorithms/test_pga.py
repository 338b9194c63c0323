"""PGA (Gossip-PGA, Chen et al. ICML 2021, Alg. 1): equal to a plain numpy loop with noise, period 1
is exact global averaging every step (whatever W), W = J needs no averaging, W = I is local SGD =
FedAvg with H local steps, and the counters charge the averaging rounds as server round trips."""
import math

import numpy as np
import pytest
import torch

from fedbound.algorithms import DSGD, PGA, FedAvg, StackedNetwork, registry, run
from fedbound.cli.main import main
from fedbound.network import Network
from fedbound.tasks import Quadratic

N, D, SIGMA = 8, 4, 0.3


@pytest.fixture(scope="module")
def quad():
    return Quadratic.generate(N, D, kappa=5.0, mu=0.2, heterogeneity=1.0, seed=3)


def noise_stream(seed):
    """The task's added Gaussian noise, drawn as fedbound draws it (one (N, D) block per call)."""
    gen = torch.Generator().manual_seed(seed)
    return lambda: torch.randn(N, D, generator=gen, dtype=torch.float64).numpy() * (SIGMA / math.sqrt(D))


def test_pga_equals_a_plain_numpy_loop_with_noise(quad):
    net = Network.from_topology("ring", 1, [N])
    W, H, e = net.W, quad.hessians.numpy(), quad.linear_terms.numpy()
    gamma, period, seed = 0.05, 3, 11
    alg = PGA(quad.with_noise(SIGMA), net, lr=gamma, period=period, seed=seed)
    state, noise = alg.init(), noise_stream(seed)
    X = np.tile(quad.x0.numpy(), (N, 1))
    for k in range(14):
        G = np.einsum("nij,nj->ni", H, X) - e + noise()
        Y = X - gamma * G
        X = np.tile(Y.mean(axis=0), (N, 1)) if (k + 1) % period == 0 else W @ Y
        state = alg.step(state)
        np.testing.assert_allclose(state.X.numpy(), X, rtol=0, atol=1e-12)
        np.testing.assert_allclose(state.x_g.numpy(), X.mean(axis=0), rtol=0, atol=1e-12)
        averaged = (k + 1) % period == 0
        assert state.last_comm.uploads == (N if averaged else 0)
        assert state.last_comm.d2d_exchanges == (0 if averaged else 1)


def test_period_one_is_exact_global_averaging_every_step_whatever_w(quad):
    """H = 1: every model is the average after each step, which moves by -gamma times the mean of
    the n stochastic gradients at the common model (parallel mini-batch SGD); W never acts."""
    noisy, gamma, seed = quad.with_noise(SIGMA), 0.05, 4
    ring = run(PGA(noisy, Network.from_topology("ring", 1, [N]), lr=gamma, period=1, seed=seed), 20)
    star = run(PGA(noisy, Network.from_topology("star", 1, [N]), lr=gamma, period=1, seed=seed), 20)
    torch.testing.assert_close(ring.x_g, star.x_g, rtol=0, atol=0)          # bitwise: W unused
    X = ring.final_state.X
    assert torch.equal(X, X[:1].expand_as(X))                                # exact consensus
    noise, x = noise_stream(seed), quad.x0.numpy()
    H, e = quad.hessians.numpy(), quad.linear_terms.numpy()
    for r in range(20):
        x = x - gamma * (np.einsum("nij,j->ni", H, x) - e + noise()).mean(axis=0)
        np.testing.assert_allclose(ring.x_g[r + 1].numpy(), x, rtol=0, atol=1e-12)
    assert ring.comm["d2d_exchanges"][-1] == 0 and ring.comm["uploads"][-1] == 20 * N


def test_complete_graph_makes_the_periodic_average_redundant(quad):
    """W = J: a gossip round already averages exactly, so any period gives the H = 1 models (to
    rounding); only the counters differ (gossip exchanges instead of uploads)."""
    noisy, complete = quad.with_noise(SIGMA), Network.from_topology("complete", 1, [N])
    one = run(PGA(noisy, complete, lr=0.05, period=1, seed=2), 15)
    four = run(PGA(noisy, complete, lr=0.05, period=4, seed=2), 15)
    np.testing.assert_allclose(four.x_g.numpy(), one.x_g.numpy(), rtol=0, atol=1e-12)
    assert four.comm["uploads"][-1] == 3 * N and four.comm["d2d_exchanges"][-1] == 12


def test_identity_gossip_is_local_sgd_that_is_fedavg_with_h_local_steps(quad):
    """W = I (no links; not a mixing Network, so set on the algorithm): between averages each client
    runs plain SGD on its own f_i, i.e. FedAvg with H local steps, full participation and server
    step 1; with the same seed even the noise is shared (both draw one (n, d) block per step)."""
    noisy, period, gamma = quad.with_noise(SIGMA), 3, 0.05
    pga = PGA(noisy, Network.from_topology("ring", 1, [N]), lr=gamma, period=period, seed=5)
    pga.net = StackedNetwork([np.eye(N)])
    traj = run(pga, 6 * period)
    fedavg = run(FedAvg(noisy, lr=gamma, local_steps=period, seed=5), 6)
    np.testing.assert_allclose(traj.x_g[::period].numpy(), fedavg.x_g.numpy(), rtol=0, atol=1e-12)


def test_counters_of_a_run(quad):
    """T iterations with period H: floor(T/H) averages (every client uploads and downloads d
    floats, energy E_s = 1 each) and T - floor(T/H) gossip rounds (one message per directed link,
    energy E^D2D = 1 each); one gradient per client per iteration."""
    net = Network.from_topology("ring", 1, [N])
    T, period = 17, 5
    comm = {k: v[-1] for k, v in run(PGA(quad, net, lr=0.05, period=period), T).comm.items()}
    averages, gossips, links = T // period, T - T // period, 2 * N
    assert comm["uploads"] == comm["downloads"] == averages * N
    assert comm["upload_floats"] == comm["download_floats"] == averages * N * D
    assert comm["d2d_exchanges"] == gossips and comm["d2d_messages"] == gossips * links
    assert comm["d2d_floats"] == gossips * links * D
    assert comm["energy_ds"] == averages and comm["energy_d2d"] == gossips
    assert comm["gradient_evaluations"] == T * N and comm["client_state_floats"] == 0


def test_average_follows_the_mean_gradient_like_dsgd(quad):
    """Both mixing and averaging keep the average: x_bar^{k+1} = x_bar^k - gamma mean_i g_i(x_i^k),
    the recursion DSGD's average follows too; the periodic average pulls the models together
    (a smaller consensus error than DSGD's after an averaging iteration, exactly 0)."""
    ring = Network.from_topology("ring", 1, [N])
    alg = PGA(quad, ring, lr=0.05, period=4)
    state = alg.init()
    for _ in range(8):
        new = alg.step(state)
        g = quad.grad(state.X).mean(dim=0)
        torch.testing.assert_close(new.x_g, state.x_g - 0.05 * g, rtol=0, atol=1e-14)
        state = new
    assert float(torch.sum((state.X - state.x_g) ** 2)) == 0.0      # iteration 8 averaged
    dsgd = run(DSGD(quad, ring, lr=0.05), 8).final_state
    assert float(torch.sum((dsgd.X - dsgd.x_g) ** 2)) > 1e-6


def test_registry_cli_and_validation(tmp_path, capsys, quad):
    ring = Network.from_topology("ring", 1, [N])
    assert registry.build("pga", quad, ring, lr=0.05).period == 10
    with pytest.raises(ValueError, match="period must be an integer >= 1"):
        PGA(quad, ring, lr=0.05, period=0)
    with pytest.raises(ValueError, match="PGA runs over one connected subnet"):
        PGA(quad, Network.from_topology("ring", 2, [4, 4]), lr=0.05)
    assert main(["run", "pga", "--n", "6", "--d", "3", "--rounds", "6", "--period", "3",
                 "--out", str(tmp_path), "--json"]) == 0
    capsys.readouterr()
    assert main(["list", "algorithms"]) == 0
    assert "pga" in capsys.readouterr().out


def test_the_constant_step_bias_shrinks_with_the_period_and_vanishes_at_one(quad):
    """Heterogeneous f_i, no noise, constant step: gossip SGD stalls at an O(gamma) consensus bias;
    the periodic average shrinks it monotonically in H, and H = 1 (gradient descent on f from a
    common model) converges to x* exactly. Measured (ring, n = 8, gamma = 0.05, 1500 iterations):
    ||x_g - x*||^2 = 2e-25 (H = 1), 7.8e-7 (2), 6.5e-6 (5), 3.4e-5 (20), 5.5e-5 (never), DSGD 1.6e-4."""
    ring = Network.from_topology("ring", 1, [N])
    gaps = [run(PGA(quad, ring, lr=0.05, period=H), 1500).dist2[-1] for H in (1, 2, 5, 20, 10**9)]
    assert gaps[0] <= 1e-20
    assert all(a < b for a, b in zip(gaps, gaps[1:]))
    assert gaps[-1] > 1e-5 and run(DSGD(quad, ring, lr=0.05), 1500).dist2[-1] > 1e-5
