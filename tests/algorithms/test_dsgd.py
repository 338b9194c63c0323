"""DSGD (D-PSGD, Lian et al. 2017): equal to a plain numpy loop, exact average dynamics, W = I is
independent local GD, and on heterogeneous quadratics a constant step leaves the known O(gamma)
consensus bias that gradient tracking removes."""
import numpy as np
import pytest
import torch

from fedbound.algorithms import DSGD, GradientTracking, run
from fedbound.network import Network
from fedbound.tasks import Quadratic

N, D = 8, 4


@pytest.fixture(scope="module")
def quad():
    return Quadratic.generate(N, D, kappa=5.0, mu=0.2, heterogeneity=1.0, seed=3)


def test_dsgd_equals_a_plain_numpy_loop(quad):
    net = Network.from_topology("ring", 1, [N])
    W = net.W
    H, e = quad.hessians.numpy(), quad.linear_terms.numpy()
    X = np.tile(quad.x0.numpy(), (N, 1))
    state = (alg := DSGD(quad, net, lr=0.05)).init()
    for _ in range(12):
        G = np.einsum("nij,nj->ni", H, X) - e
        X = W @ X - 0.05 * G
        state = alg.step(state)
        np.testing.assert_allclose(state.X.numpy(), X, rtol=0, atol=1e-13)
        np.testing.assert_allclose(state.x_g.numpy(), X.mean(axis=0), rtol=0, atol=1e-13)
    assert state.last_comm.uploads == 0 and state.last_comm.d2d_exchanges == 1


def test_average_follows_the_mean_gradient_and_mixing_keeps_the_average(quad):
    noisy = quad.with_noise(0.2)
    ring = Network.from_topology("ring", 1, [N])
    alg = DSGD(noisy, ring, lr=0.03, seed=1)
    s0 = alg.step(alg.init())
    s1 = alg.step(s0)
    mixed = alg.net.mix(s0.X)
    torch.testing.assert_close(mixed.mean(dim=0), s0.X.mean(dim=0), rtol=0, atol=1e-14)
    G = (mixed - s1.X) / 0.03            # the round's stochastic gradients, recovered
    torch.testing.assert_close(s1.x_g, s0.x_g - 0.03 * G.mean(dim=0), rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="one connected subnet"):
        DSGD(quad, Network.from_topology("ring", 2, [4, 4]), lr=0.05)


def test_constant_step_leaves_a_consensus_bias_that_tracking_removes(quad):
    ring = Network.from_topology("ring", 1, [N])
    dsgd = run(DSGD(quad, ring, lr=0.05), 1500)
    gt = run(GradientTracking(quad, ring, lr=0.05), 1500)
    assert gt.dist2[-1] <= 1e-20
    assert dsgd.dist2[-1] > 1e-8                                           # O(gamma) bias
    assert abs(dsgd.dist2[-1] - dsgd.dist2[-50]) <= 1e-9 * dsgd.dist2[-1]  # a fixed point
