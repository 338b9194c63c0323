"""Assertions of fedbound.testing: pass on good input, fail with the measured and the predicted
numbers on bad input (exact two-point contractions, noisy rates, bounds at the floating-point
floor); and the module's documented example, a property test of SD-GT against its theory."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings

from fedbound.algorithms import SDGT, SDFedAvg, run
from fedbound.errors import FedboundError
from fedbound.testing import (assert_bound_held, assert_fixed_point_reached,
                              assert_invariant_held, assert_linear_rate, assert_power_rate, networks,
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


def test_an_exact_contraction_needs_two_points():
    """Two errors (or an exactly geometric sequence) give the factor with a zero-width interval;
    r^2 and the tail ratio need no more points."""
    fit = assert_linear_rate([3.0, 2.4], at_most=0.8, equals=0.8, tol=1e-12)
    assert fit.points == 2 and fit.factor == pytest.approx(0.8, rel=1e-15) and fit.low == fit.high
    with pytest.raises(AssertionError, match=r"linear rate: measured contraction 0.8 \(exact, 2 points\) "
                                             r"exceeds the predicted at most 0.79 \(rtol 1e-10\)"):
        assert_linear_rate([3.0, 2.4], at_most=0.79)
    with pytest.raises(AssertionError, match=r"measured tail contraction 0.8 .* differs from the predicted "
                                             r"0.7 by 1.00e-01 > tol 1.0e-06"):
        assert_linear_rate([3.0, 2.4], equals=0.7)
    with pytest.raises(AssertionError, match=r"measured contraction 1.25 \(exact, 2 points\) is not < 1"):
        assert_linear_rate([2.4, 3.0])
    with pytest.raises(AssertionError, match="a contraction needs two errors"):
        assert_linear_rate([1.0, 1e-12, 1e-24])          # below floor x e_0 after the first
    assert assert_linear_rate([1.0, 1e-12, 1e-24], floor=1e-30).factor == pytest.approx(1e-12)


def test_the_floating_point_floor_is_left_out():
    """0.5^t reaches the rounding floor of its sum with x* at t ~ 50; the errors below floor x e_0
    (1e-9 by default) are not fitted, so the contraction is exact."""
    e = 0.5 ** np.arange(120) + 1e-17
    fit = assert_linear_rate(e, equals=0.5, tol=1e-6)
    assert fit.points == 30


def test_noisy_rates_use_the_confidence_interval():
    rng = np.random.default_rng(0)
    t = np.arange(80)
    e = 2.0 * 0.9 ** t * np.exp(0.01 * rng.standard_normal(t.size))
    fit = assert_linear_rate(e, at_most=0.91)
    assert fit.stderr > 0 and fit.factor_low < 0.9 < fit.factor_high
    with pytest.raises(AssertionError, match=r"linear rate: measured contraction 0.9\d+ \(95% CI "
                                             r"\[0.89\d+, 0.90\d+\], r\^2 [01].\d{4}, 80 points\) exceeds the "
                                             r"predicted at most 0.895"):
        assert_linear_rate(e, at_most=0.895)
    noisier = 2.0 * 0.9 ** t * np.exp(0.5 * rng.standard_normal(t.size))
    with pytest.raises(AssertionError, match=r"the fit of log e_t has r\^2 0.\d+ < min_r2 0.99"):
        assert_linear_rate(noisier)
    assert assert_linear_rate(noisier, min_r2=0.5).factor < 1


def test_power_rate_assertion():
    T = np.arange(1.0, 101.0)
    fit = assert_power_rate(3.0 / T, at_most=-1.0, equals=-1.0, atol=1e-12)
    assert fit.slope == pytest.approx(-1.0) and fit.low == fit.high
    assert assert_power_rate([2.0, 1.0], rounds=[1, 2], equals=-1.0, atol=1e-12).points == 2
    with pytest.raises(AssertionError, match=r"power rate: measured exponent -0.5 \(exact, 100 points\) "
                                             r"exceeds the predicted at most -1 \(\+ atol 0.05\)"):
        assert_power_rate(1 / np.sqrt(T), at_most=-1.0)
    with pytest.raises(AssertionError, match=r"differs from the predicted -1 by more than atol 0.05"):
        assert_power_rate(1 / np.sqrt(T), equals=-1.0)
    rng = np.random.default_rng(1)
    noisy = 3.0 / T * np.exp(0.02 * rng.standard_normal(T.size))
    fit = assert_power_rate(noisy, at_most=-1.0, atol=0.02)
    assert fit.stderr > 0
    with pytest.raises(AssertionError, match="values must be > 0"):
        assert_power_rate([1.0, 0.0])
    with pytest.raises(FedboundError, match="rounds must be positive and increasing"):
        assert_power_rate([1.0, 0.5], rounds=[0, 1])
    with pytest.raises(FedboundError, match=r"rounds must give one T per value \(2\), got 3"):
        assert_power_rate([1.0, 0.5], rounds=[1, 2, 3])


def test_bound_assertion_uses_confidence_intervals():
    est = mean_ci(np.array([[1.0, 0.5], [1.2, 0.6], [0.8, 0.4]]))
    assert assert_bound_held(est, [2.0, 1.0]).holds
    with pytest.raises(AssertionError, match=r"bound inconclusive: the interval reaches above the bound "
                                             r"\(more seeds would decide\) at index 0: measured 1 \(95% CI "
                                             r"\[0.503\d*, 1.49\d*\]\) > predicted 1.05"):
        assert_bound_held(est, [1.05, 1.0])
    with pytest.raises(AssertionError, match=r"thm violated: the measurement is above the bound at index 1: "
                                             r"measured 0.5 \(95% CI .*\) > predicted 0.1 \(ratio 5;"):
        assert_bound_held(est, [2.0, 0.1], name="thm")


def test_bounds_at_the_floating_point_floor():
    """A squared distance at its rounding floor against a bound that is exactly 0 (a noiseless
    floor): only an absolute tolerance can hold; the relative one covers the bound's rounding."""
    with pytest.raises(AssertionError, match=r"bound violated: the measurement is above the bound: "
                                             r"measured 1e-33 > predicted 0 \(ratio inf; allowed 0 with rtol "
                                             r"1e-10, atol 0\)"):
        assert_bound_held(1e-33, 0.0)
    check = assert_bound_held(1e-33, 0.0, atol=1e-30)
    assert check.holds and check.details["atol"] == 1e-30
    assert assert_bound_held(1.0 + 1e-12, 1.0).holds                  # within rtol 1e-10
    with pytest.raises(AssertionError, match="at index 0"):
        assert_bound_held([1.0 + 1e-8], [1.0])
    assert assert_bound_held([1.0 + 1e-8], [1.0], rtol=1e-7).holds
    with pytest.raises(FedboundError, match=r"measured \(shape \(3,\)\) and bound \(shape \(2,\)\) do not "
                                            r"broadcast"):
        assert_bound_held(np.ones(3), np.ones(2))
    with pytest.raises(FedboundError, match="atol must be"):
        assert_bound_held(1.0, 2.0, atol=-1.0)


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
