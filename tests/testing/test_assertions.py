"""Assertions of fedbound.testing: pass on good input, fail with the numbers on bad input; and
the module's documented example, a property test of SD-GT against its theory."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings

from fedbound.algorithms import SDGT, SDFedAvg, run
from fedbound.testing import (assert_bound_held, assert_fixed_point_reached,
                              assert_invariant_held, assert_linear_rate, networks,
                              quadratic_tasks)
from fedbound.verify import mean_ci

torch.set_num_threads(1)


def test_fixed_point_assertion():
    assert assert_fixed_point_reached(np.array([1.0, 2.0 + 1e-12]), [1.0, 2.0]) < 1e-11
    with pytest.raises(AssertionError, match="fixed point not reached"):
        assert_fixed_point_reached(np.ones((3, 2)), np.zeros(2), tol=1e-3)


def test_invariant_assertion():
    states = [np.zeros(3), np.full(3, 1e-14)]
    assert assert_invariant_held(lambda s: s, states) == 1e-14
    with pytest.raises(AssertionError, match="at state 1"):
        assert_invariant_held(lambda s: s, [np.zeros(3), np.ones(3)])


def test_linear_rate_assertion():
    t = np.arange(60)
    fit = assert_linear_rate(2.0 * 0.8 ** t, at_most=0.81, equals=0.8, tol=1e-10)
    assert abs(fit.factor - 0.8) < 1e-12
    with pytest.raises(AssertionError, match="exceeds"):
        assert_linear_rate(2.0 * 0.8 ** t, at_most=0.79)
    with pytest.raises(AssertionError, match="not linear"):
        assert_linear_rate(1.0 / (1.0 + t))


def test_bound_assertion_uses_confidence_intervals():
    est = mean_ci(np.array([[1.0, 0.5], [1.2, 0.6], [0.8, 0.4]]))
    assert assert_bound_held(est, [2.0, 1.0]).holds
    with pytest.raises(AssertionError, match="inconclusive"):
        assert_bound_held(est, [1.05, 1.0])


@settings(max_examples=8, deadline=None)
@given(networks(S=2, m=3, equal_sizes=True), quadratic_tasks(n=6, d=3, kappa=(1.0, 4.0)))
def test_sdgt_is_exact_on_any_network_and_heterogeneous_quadratic(network, task):
    """The module docstring's example: SD-GT reaches x* with partial sampling, and the subnet
    sums of z stay 0 (seed 003 (39) [L680])."""
    alg = SDGT(task, network, lr=1 / (4 * 2 * task.L), local_steps=2, clients_per_subnet=2)   # Lemma 1's cap
    states = [alg.init()]
    for _ in range(400):
        states.append(alg.step(states[-1]))
    assert_invariant_held(lambda s: alg.net.subnet_sum(s.Z), states, atol=1e-10)
    assert_fixed_point_reached(states[-1].x_g, task.x_star, tol=1e-8)


def test_sd_fedavg_is_not_exact():
    """Contrast: without trackers the fixed point is biased under heterogeneity (papers/sdgt.md
    7.4 item 1), so the same assertion fails."""
    from fedbound.network import Network
    from fedbound.tasks import Quadratic

    task = Quadratic.generate(6, 3, kappa=4.0, mu=0.5, heterogeneity=2.0, seed=1)
    network = Network.from_topology("ring", 2, 3)
    traj = run(SDFedAvg(task, network, lr=0.05, local_steps=3), 300)
    with pytest.raises(AssertionError, match="fixed point not reached"):
        assert_fixed_point_reached(traj, task.x_star, tol=1e-6)
