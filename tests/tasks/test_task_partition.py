"""Dirichlet and one-class-per-client partitions."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fedbound.errors import ValidationError
from fedbound.tasks import dirichlet_partition, one_class_partition


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 12), classes=st.integers(1, 6), per_class=st.integers(5, 40),
       alpha=st.floats(0.05, 100.0), seed=st.integers(0, 10**6))
def test_dirichlet_assigns_every_sample_exactly_once(n, classes, per_class, alpha, seed):
    labels = np.random.default_rng(seed).permutation(np.repeat(np.arange(classes), per_class))
    parts = dirichlet_partition(labels, n, alpha, min_size=0, seed=seed)
    assert len(parts) == n
    allocated = np.concatenate(parts)
    assert np.array_equal(np.sort(allocated), np.arange(labels.size))


def test_dirichlet_min_size_and_skew():
    labels = np.repeat(np.arange(10), 100)
    parts = dirichlet_partition(labels, 20, 0.1, min_size=5, seed=0)
    assert min(len(p) for p in parts) >= 5
    skewed = np.mean([np.bincount(labels[p], minlength=10).max() / len(p) for p in parts])
    flat = np.mean([np.bincount(labels[p], minlength=10).max() / len(p)
                    for p in dirichlet_partition(labels, 20, 1000.0, seed=0)])
    assert skewed > 0.5 > 0.2 > flat


@pytest.mark.parametrize("alpha", [0.0, -1.0, float("nan")])
def test_dirichlet_rejects_nonpositive_alpha(alpha):
    with pytest.raises(ValidationError, match="alpha must be > 0"):
        dirichlet_partition(np.arange(10) % 2, 3, alpha)


def test_dirichlet_rejects_bad_sizes():
    with pytest.raises(ValidationError, match="n must be an integer >= 1"):
        dirichlet_partition(np.arange(10) % 2, 0, 1.0)
    with pytest.raises(ValidationError, match="min_size must be <="):
        dirichlet_partition(np.arange(10) % 2, 4, 1.0, min_size=3)
    with pytest.raises(ValidationError, match="labels must be integers"):
        dirichlet_partition(np.linspace(0, 1, 10), 2, 1.0)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 25), classes=st.integers(1, 10), seed=st.integers(0, 10**6))
def test_one_class_per_client(n, classes, seed):
    labels = np.random.default_rng(seed).permutation(np.repeat(np.arange(classes), 30))
    parts = one_class_partition(labels, n, seed=seed)
    assert len(parts) == n
    for p in parts:
        assert len(p) >= 1 and np.unique(labels[p]).size == 1
    allocated = np.concatenate(parts)
    assert np.unique(allocated).size == allocated.size
    used = np.unique(labels[allocated])
    assert used.size == min(n, classes)
    assert allocated.size == np.isin(labels, used).sum()


def test_one_class_needs_enough_samples():
    with pytest.raises(ValidationError, match="fewer than its"):
        one_class_partition(np.array([0, 0, 1]), 4)
