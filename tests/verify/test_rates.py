"""Slope fits with confidence intervals (fedbound.verify.rates)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fedbound.errors import ValidationError
from fedbound.verify.rates import asymptotic_factor, fit_log_linear, fit_log_log, fit_slope


def test_log_linear_ci_contains_true_rate():
    rng = np.random.default_rng(0)
    t = np.arange(1, 81)
    rate = 0.93
    values = 5.0 * rate ** t * np.exp(rng.normal(0, 0.05, t.size))
    fit = fit_log_linear(t, values)
    assert fit.contains(np.log(rate))
    assert fit.factor_low <= rate <= fit.factor_high
    assert fit.kind == "log-linear" and fit.r2 > 0.99


def test_slope_ci_coverage_over_replicates():
    rng = np.random.default_rng(1)
    t = np.arange(30.0)
    hits = 0
    reps = 1000
    for _ in range(reps):
        fit = fit_slope(t, 2.0 - 0.1 * t + rng.normal(0, 0.3, t.size))
        hits += fit.contains(-0.1)
    assert abs(hits / reps - 0.95) < 4 * np.sqrt(0.95 * 0.05 / reps)


def test_log_log_power_law():
    T = np.array([10, 20, 40, 80, 160, 320])
    fit = fit_log_log(T, 7.0 / T)
    assert abs(fit.slope + 1.0) < 1e-12 and fit.contains(-1.0)


@settings(max_examples=30, deadline=None)
@given(st.floats(0.05, 0.99), st.floats(0.1, 10.0))
def test_exact_geometric_sequence(rate, scale):
    t = np.arange(40)
    e = scale * rate ** t
    assert abs(fit_log_linear(t, e).factor - rate) < 1e-10
    c, error, _ = asymptotic_factor(e, floor=1e-12)
    assert abs(c - rate) < 1e-12


def test_asymptotic_factor_converges_to_dominant_root():
    t = np.arange(400)
    e = 0.9 ** t + 3.0 * 0.5 ** t
    c, error, _ = asymptotic_factor(e)
    assert abs(c - 0.9) < 1e-6


def test_asymptotic_factor_error_estimate_covers_slow_transient():
    # a slowly decaying second root: the tail ratio is still far from 0.95, and the one-mode
    # error estimate says so
    t = np.arange(150)
    e = 0.95 ** t + 0.94 ** t
    c, error, _ = asymptotic_factor(e)
    assert abs(c - 0.95) > 1e-4
    assert abs(c - 0.95) <= 2 * error


def test_bad_inputs():
    with pytest.raises(ValidationError, match="> 0"):
        fit_log_linear([1, 2, 3], [1.0, 0.0, 1.0])
    with pytest.raises(ValidationError, match="at least 3"):
        fit_slope([1, 2], [1, 2])
