"""Non-iid partitions of a labelled data set over n clients (each returns a list of n index arrays).

* ``dirichlet_partition``: label skew of Hsu et al. 2019 as used by SD-GT Fig. 7/10 [003 L482-L486],
  FedNova's CIFAR experiments (Dir(0.1)) and AFGA (alpha in {0.3, 0.6}): for every class c, proportions
  q_c ~ Dir(alpha 1_n) split the (shuffled) samples of class c among the clients. Every sample is assigned
  exactly once. Smaller alpha = more skew. Draws are repeated (same generator) until every client holds at
  least ``min_size`` samples.
* ``one_class_partition``: SD-GT's default for MNIST/CIFAR-10 [L484]: client i holds only class
  classes[i mod C]; the samples of a class are split evenly among its clients. With n < C the samples of the
  classes no client gets are left out.
"""
from __future__ import annotations

import numpy as np

from fedbound import validate
from fedbound.argtypes import Count, NonNegativeInt, Positive, Seed
from fedbound.errors import ValidationError, require
from fedbound.tasks.base import check_size


def _labels(labels) -> np.ndarray:
    y = np.asarray(labels)
    require(y.ndim == 1 and y.size >= 1, f"labels must be a non-empty 1-D array, got shape {y.shape}")
    require(y.dtype.kind in "iu", f"labels must be integers, got dtype {y.dtype}")
    return y


def dirichlet_partition(labels: np.ndarray, n: int, alpha: Positive, *, min_size: NonNegativeInt = 1,
                        seed: Seed = 0, max_tries: Count = 1000) -> list[np.ndarray]:
    """Dirichlet(alpha) label-skew partition of range(len(labels)) over n clients."""
    y = _labels(labels)
    n = check_size("n", n)
    alpha = validate.number("alpha", alpha, low=0, low_open=True)
    min_size = check_size("min_size", min_size, low=0)
    require(n * min_size <= y.size, f"min_size must be <= len(labels)/n = {y.size / n:.4g}, got {min_size}")
    rng = validate.rng(seed)
    classes = np.unique(y)
    for _ in range(max_tries):
        owner = np.empty(y.size, dtype=np.int64)
        for c in classes:   # loop over classes, not clients
            idx = rng.permutation(np.flatnonzero(y == c))
            cuts = (np.cumsum(rng.dirichlet(np.full(n, float(alpha))))[:-1] * idx.size).astype(int)
            owner[idx] = np.repeat(np.arange(n), np.diff(np.concatenate([[0], cuts, [idx.size]])))
        counts = np.bincount(owner, minlength=n)
        if counts.min() >= min_size:
            return [np.flatnonzero(owner == i) for i in range(n)]
    raise ValidationError(f"no Dirichlet(alpha={alpha}) draw gave every client >= min_size={min_size} samples "
                          f"in {max_tries} tries; lower min_size or raise alpha")


def one_class_partition(labels: np.ndarray, n: Count, *, seed: Seed = 0) -> list[np.ndarray]:
    """Client i gets class classes[i mod C] only; a class's samples are split evenly among its clients."""
    y = _labels(labels)
    n = check_size("n", n)
    rng = validate.rng(seed)
    classes = np.unique(y)
    of_client = classes[np.arange(n) % classes.size]
    parts: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * n
    for c in classes[: min(n, classes.size)]:
        clients = np.flatnonzero(of_client == c)
        idx = rng.permutation(np.flatnonzero(y == c))
        require(idx.size >= clients.size,
                f"class {c} has {idx.size} samples, fewer than its {clients.size} clients (n={n})")
        for client, chunk in zip(clients, np.array_split(idx, clients.size)):
            parts[client] = np.sort(chunk)
    return parts
