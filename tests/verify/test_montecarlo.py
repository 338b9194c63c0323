"""Monte-Carlo means and their confidence intervals (fedbound.verify.montecarlo)."""
import numpy as np
import pytest

from fedbound.errors import ValidationError
from fedbound.verify.montecarlo import mean_ci, monte_carlo

REPLICATES = 4000


def coverage(draw, truth, samples, confidence=0.95):
    est = mean_ci(draw((samples, REPLICATES)), confidence)
    return float(np.mean(est.contains(truth)))


def binomial_tolerance(confidence, width=4.0):
    return width * np.sqrt(confidence * (1 - confidence) / REPLICATES)


@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_coverage_gaussian_small_samples(confidence):
    rng = np.random.default_rng(0)
    cov = coverage(lambda shape: rng.normal(1.5, 2.0, shape), 1.5, samples=5, confidence=confidence)
    assert abs(cov - confidence) < binomial_tolerance(confidence)


def test_coverage_exponential_large_samples():
    # skewed, but the t interval is asymptotically exact: mean of Exp(scale 2) is 2
    rng = np.random.default_rng(1)
    cov = coverage(lambda shape: rng.exponential(2.0, shape), 2.0, samples=400)
    assert abs(cov - 0.95) < binomial_tolerance(0.95) + 0.01


def test_interval_shrinks_like_inverse_sqrt():
    rng = np.random.default_rng(2)
    small = mean_ci(rng.normal(size=100))
    large = mean_ci(rng.normal(size=10000))
    ratio = (small.high - small.low) / (large.high - large.low)
    assert 7 < ratio < 13   # sqrt(100) = 10 up to sampling noise of the std


def test_single_sample_is_exact_and_monte_carlo_runs_seeds():
    est = monte_carlo(lambda s: np.array([3.0, 4.0]), seeds=1)
    assert est.samples == 1 and np.all(est.low == est.mean) and np.all(est.high == est.mean)
    est = monte_carlo(lambda s: np.array([s, 2.0 * s]), seeds=[1, 2, 3])
    np.testing.assert_allclose(est.mean, [2.0, 4.0])
    assert est.to_dict()["samples"] == 3 and est[0].mean == 2.0


def test_bad_confidence():
    with pytest.raises(ValidationError, match="confidence"):
        mean_ci([1.0, 2.0], confidence=1.5)
