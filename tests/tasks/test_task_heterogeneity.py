"""The heterogeneity measures at a point equal their definitions (plain loops over clients)."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from fedbound.errors import ValidationError
from fedbound.tasks import (
    LogisticRegression, Quadratic, fednova_matrix, inter_cluster_matrix, intra_cluster_matrices, measure_at,
    sigma_g_matrix,
)


def loop_fednova(G, w, beta2):
    mean = sum(w[i] * G[i] for i in range(len(G)))
    return sum(w[i] * G[i] @ G[i] for i in range(len(G))) - beta2 * mean @ mean


def loop_intra(G, subnet_of):
    out = []
    for k in np.unique(subnet_of):
        members = [i for i in range(len(G)) if subnet_of[i] == k]
        mean = sum(G[i] for i in members) / len(members)
        out.append(sum((G[i] - mean) @ (G[i] - mean) for i in members) / len(members))
    return out


def loop_inter(G, subnet_of, alpha):
    means = [sum(G[i] for i in range(len(G)) if subnet_of[i] == k) / np.sum(subnet_of == k)
             for k in np.unique(subnet_of)]
    mean = sum(G) / len(G)
    return sum(m @ m for m in means) / len(means) - alpha**2 * mean @ mean


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 8), d=st.integers(1, 5), seed=st.integers(0, 10**6), beta2=st.floats(1.0, 5.0),
       alpha=st.floats(1.0, 3.0), shift=st.floats(0.0, 100.0))
def test_measures_at_a_point_match_loops(n, d, seed, beta2, alpha, shift):
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((n, d)) + shift
    w = rng.dirichlet(np.ones(n))
    subnet_of = rng.integers(0, 3, n) * 7        # arbitrary integer labels
    Gt = torch.as_tensor(G)
    scale = 1.0 + shift**2
    assert measure_at(Gt, fednova_matrix(w, beta2)) == pytest.approx(loop_fednova(G, w, beta2), abs=1e-12 * scale * beta2)
    assert measure_at(Gt, sigma_g_matrix(n)) == pytest.approx(loop_fednova(G, np.full(n, 1 / n), 1.0), abs=1e-12 * scale)
    intra = [measure_at(Gt, K) for K in intra_cluster_matrices(subnet_of, n)]
    assert np.allclose(intra, loop_intra(G, subnet_of), rtol=1e-10, atol=1e-12 * scale)
    assert measure_at(Gt, inter_cluster_matrix(subnet_of, n, alpha)) == pytest.approx(
        loop_inter(G, subnet_of, alpha), abs=1e-12 * scale * alpha**2)


def test_task_methods_at_a_point():
    task = LogisticRegression.generate(6, dim=3, num_classes=3, max_size=30, seed=0)
    x = torch.randn(task.d, dtype=torch.float64)
    G = task.grad(x).numpy()
    subnet_of = np.array([0, 0, 1, 1, 2, 2])
    w = task._weights_np
    assert task.kappa2(beta2=2.0, at=x) == pytest.approx(loop_fednova(G, w, 2.0), abs=1e-12)
    assert task.sigma_g2(at=x) == pytest.approx(loop_fednova(G, w, 1.0), abs=1e-12)
    assert np.allclose(task.intra_cluster(subnet_of, at=x), loop_intra(G, subnet_of), atol=1e-12)
    assert task.inter_cluster(subnet_of, at=x) == pytest.approx(loop_inter(G, subnet_of, 1.0), abs=1e-12)
    assert task.sigma_g2() is None and task.kappa2() is None and task.beta2_min() is None   # sups unknown
    assert task.intra_cluster(subnet_of) is None and task.inter_cluster(subnet_of) is None


def test_cluster_assignment_is_validated():
    task = Quadratic.generate(4, 2, seed=0)
    with pytest.raises(ValidationError, match="subnet_of must have shape"):
        task.intra_cluster(np.array([0, 1]))
    with pytest.raises(ValidationError, match="subnet_of must hold integers"):
        task.intra_cluster(np.array([0.0, 1.0, 0.0, 1.0]))
    with pytest.raises(ValidationError, match="alpha must be >= 1"):
        task.inter_cluster(np.array([0, 0, 1, 1]), alpha=0.5)


def test_unequal_clusters_make_sigma_c_infinite_at_alpha_one():
    """With unequal cluster sizes the mean of the cluster gradients is not grad f, so for alpha = 1 the
    bracket is affine with a non-zero slope (unbounded); alpha > 1 makes it finite."""
    task = Quadratic.generate(5, 3, kappa=1.0, seed=2)        # H_i = I for all i
    subnet_of = np.array([0, 0, 0, 1, 1])
    assert task.inter_cluster(subnet_of) == float("inf")
    assert np.isfinite(task.inter_cluster(subnet_of, alpha=1.1))
