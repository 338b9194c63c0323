"""Small labelled data sets that work offline (for the classifier tasks).

* ``gaussian_mixture``: C classes in R^D, class means mu_c ~ N(0, (separation^2 / D) I), so that
  E||mu_c - mu_c'||^2 = 2 separation^2; samples x ~ N(mu_c, I); balanced classes (afga.md Q3: a synthetic
  10-class Gaussian mixture; sdgt.md sec. 7.3: "MLP on synthetic Gaussian-mixture data").
* ``digits``: scikit-learn's bundled 8x8 digits (1797 samples, 64 features scaled to [0, 1], 10 classes),
  standing in for MNIST on a CPU.
* ``train_test_split``: seeded stratified split.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

from fedbound import resources, validate
from fedbound.argtypes import Count, NonNegative, Range, Seed
from fedbound.errors import require
from fedbound.tasks.base import check_size


def gaussian_mixture(num_samples: Count = 2000, dim: Count = 32, num_classes: Annotated[int, Range(2)] = 10, *,
                     separation: NonNegative = 3.0, seed: Seed = 0) -> tuple[np.ndarray, np.ndarray]:
    """(features (N, dim), labels (N,)) with N = num_samples, label i mod num_classes before shuffling."""
    num_samples, dim = check_size("num_samples", num_samples), check_size("dim", dim)
    num_classes = check_size("num_classes", num_classes, low=2)
    resources.require_memory(f"a Gaussian mixture of {num_samples} samples in dimension {dim}",
                             4 * num_samples * dim + num_classes * dim)
    separation = validate.number("separation", separation, low=0)
    rng = validate.rng(seed)
    means = separation * rng.standard_normal((num_classes, dim)) / np.sqrt(dim)
    labels = rng.permutation(np.arange(num_samples) % num_classes)
    return means[labels] + rng.standard_normal((num_samples, dim)), labels


def digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled digits: (features (1797, 64) in [0, 1], labels (1797,))."""
    from sklearn.datasets import load_digits
    data = load_digits()
    return data.data / 16.0, data.target.astype(np.int64)


def train_test_split(features: np.ndarray, labels: np.ndarray,
                     test_fraction: Annotated[float, Range(0.0, 1.0, low_open=True, high_open=True)], *,
                     seed: Seed = 0):
    """Stratified seeded split of features (N, ...) and labels (N,): (train_features, train_labels,
    test_features, test_labels)."""
    features, labels = np.asarray(features), np.asarray(labels)
    require(labels.ndim == 1, f"labels must be a 1-D array, got shape {labels.shape}")
    require(features.ndim >= 1 and features.shape[0] == labels.size,
            f"features must have one row per label ({labels.size}), got shape {features.shape}")
    test_fraction = validate.number("test_fraction", test_fraction, low=0.0, high=1.0, low_open=True, high_open=True)
    rng = validate.rng(seed)
    test = np.zeros(labels.size, dtype=bool)
    for c in np.unique(labels):   # loop over classes
        idx = rng.permutation(np.flatnonzero(labels == c))
        test[idx[: int(round(test_fraction * idx.size))]] = True
    return features[~test], labels[~test], features[test], labels[test]
