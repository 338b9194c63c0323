"""Monte-Carlo intervals respect what they measure (fedbound.stats): a non-negative quantity's
interval lies within [0, inf) with the t-interval's coverage, the method is named, few samples are
said to be few."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays

from fedbound.stats import CLIPPED, FEW_SAMPLES, STUDENT_T, mean_ci

nonnegative_samples = st.integers(min_value=1, max_value=40).flatmap(
    lambda r: arrays(np.float64, (r, 3), elements=st.floats(0.0, 1e6)))


@given(nonnegative_samples, st.sampled_from([0.5, 0.9, 0.95, 0.99]))
def test_the_interval_of_a_nonnegative_metric_never_goes_below_zero(x, confidence):
    est = mean_ci(x, confidence, nonnegative=True)
    plain = mean_ci(x, confidence)
    assert np.all(est.low >= 0) and np.all(est.low <= est.mean) and np.all(est.mean <= est.high)
    # the same interval intersected with [0, inf): the same upper end, the lower end at 0 at most
    assert np.array_equal(est.high, plain.high)
    assert np.array_equal(est.low, np.maximum(plain.low, 0.0))
    assert est.method == CLIPPED and plain.method == STUDENT_T
    assert est.few == (1 < x.shape[0] < FEW_SAMPLES)


@given(nonnegative_samples, st.floats(0.0, 1e6))
def test_clipping_keeps_the_coverage(x, m):
    """For any candidate mean m >= 0 (the true mean of a non-negative quantity is one), the clipped
    interval contains m exactly when the t-interval does: the coverage is unchanged."""
    est, plain = mean_ci(x, nonnegative=True), mean_ci(x)
    assert np.array_equal(est.contains(m), plain.contains(m))


def test_two_seeds_of_a_squared_distance():
    """The issue's case: a 95% interval for a squared distance over 2 seeds reached below zero."""
    x = np.array([2.8e-5, 3.9e-4])
    plain, est = mean_ci(x), mean_ci(x, nonnegative=True)
    assert plain.low < 0 <= est.low == 0.0 and est.high == plain.high
    assert est.few and est.to_dict()["few"] and est.to_dict()["method"] == CLIPPED
    assert est.describe() == "95% Student-t, clipped to [0, inf) interval over 2 samples (few)"


def test_one_sample_is_not_few_and_many_are_not():
    assert not mean_ci(np.array([1.0])).few
    assert not mean_ci(np.ones(FEW_SAMPLES)).few


def test_nonnegative_must_be_a_boolean():
    from fedbound.errors import FedboundError

    with pytest.raises(FedboundError):
        mean_ci(np.ones(3), nonnegative="yes")


def test_samples_of_no_entries_give_empty_estimates():
    """Samples whose entries are empty arrays ((r, 0)): an estimate of no entries, not a crash in
    the message of a check that passed (found by the fuzz suite: the overflow message took the max
    of an empty array eagerly)."""
    est = mean_ci(np.zeros((2, 0)))
    assert est.mean.shape == est.low.shape == est.high.shape == (0,)
