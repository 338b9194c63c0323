"""Topologies and Metropolis-Hastings weights."""
import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fedbound.errors import InputTypeError, UnknownNameError, ValidationError
from fedbound.network import (TOPOLOGIES, is_connected, metropolis_weights, ring_weights,
                              topology_options, topology_weights)
from fedbound.network.topology import (chain_adjacency, grid_adjacency, ring_adjacency,
                                       star_adjacency)

SETTINGS = settings(max_examples=40, deadline=None)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 15), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1))
def test_metropolis_weights_symmetric_doubly_stochastic_positive_diagonal(m, prob, seed):
    adjacency = nx.to_numpy_array(nx.gnp_random_graph(m, prob, seed=seed))
    if m > 1 and not adjacency.any():   # a graph without edges has no Metropolis mixing: refused
        with pytest.raises(ValidationError, match="no edges"):
            metropolis_weights(adjacency)
        return
    W = metropolis_weights(adjacency)
    assert np.array_equal(W, W.T)
    assert np.allclose(W.sum(axis=0), 1, atol=1e-13) and np.allclose(W.sum(axis=1), 1, atol=1e-13)
    assert np.all(W >= 0) and np.all(np.diag(W) > 0)
    degree = adjacency.sum(axis=1)
    for i, j in zip(*np.nonzero(adjacency)):
        assert W[i, j] == 1.0 / (1.0 + max(degree[i], degree[j]))
    assert np.array_equal(W != 0, (adjacency != 0) | np.eye(m, dtype=bool))


def test_metropolis_rejects_directed_pattern():
    with pytest.raises(ValidationError, match=r"adjacency must be symmetric .* edge \(0, 1\)"):
        metropolis_weights([[0, 1], [0, 0]])


@SETTINGS
@given(st.sampled_from(TOPOLOGIES), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_every_topology_is_doubly_stochastic_symmetric_connected(name, m, seed):
    options = {"prob": 0.6} if name == "erdos_renyi" else {}
    W = topology_weights(name, m, seed=seed, **options)
    assert W.shape == (m, m) and W.dtype == np.float64
    assert np.all(W >= 0)
    assert np.allclose(W.sum(axis=0), 1, atol=1e-12) and np.allclose(W.sum(axis=1), 1, atol=1e-12)
    assert np.array_equal(W, W.T)
    assert is_connected(W)


def test_ring_weights_afga():
    W = ring_weights(5)
    assert np.allclose(np.diag(W), 1 / 3) and W[0, 1] == W[0, 4] == pytest.approx(1 / 3)
    assert np.array_equal(ring_weights(1), [[1.0]])
    assert np.allclose(ring_weights(2), [[1 / 3, 2 / 3], [2 / 3, 1 / 3]])
    assert np.allclose(ring_weights(4, self_weight=0.5)[0], [0.5, 0.25, 0, 0.25])
    with pytest.raises(ValidationError, match=r"self_weight must be in \[0, 1\)"):
        ring_weights(4, self_weight=1.0)


def test_adjacency_shapes():
    assert nx.is_isomorphic(nx.from_numpy_array(ring_adjacency(7).astype(int)), nx.cycle_graph(7))
    assert nx.is_isomorphic(nx.from_numpy_array(chain_adjacency(7).astype(int)), nx.path_graph(7))
    assert nx.is_isomorphic(nx.from_numpy_array(star_adjacency(7).astype(int)), nx.star_graph(6))
    assert nx.is_isomorphic(nx.from_numpy_array(grid_adjacency(12, cols=4).astype(int)),
                            nx.grid_2d_graph(3, 4))
    assert nx.is_isomorphic(nx.from_numpy_array(grid_adjacency(9).astype(int)), nx.grid_2d_graph(3, 3))
    assert grid_adjacency(7).sum() // 2 == 8  # 3 columns, rows of 3, 3, 1: 2+2 + 3+1 edges


def test_erdos_renyi_reproducible_and_validated():
    a = topology_weights("erdos_renyi", 20, seed=5, prob=0.3)
    assert np.array_equal(a, topology_weights("erdos_renyi", 20, seed=5, prob=0.3))
    assert not np.array_equal(a, topology_weights("erdos_renyi", 20, seed=6, prob=0.3))
    for prob in (0.0, 1.5, -0.1, None):
        with pytest.raises(ValidationError, match=r"prob must be in \(0, 1\]"):
            topology_weights("erdos_renyi", 5, prob=prob)
    with pytest.raises(ValidationError, match="disconnected in all 100 draws"):
        topology_weights("erdos_renyi", 50, seed=0, prob=0.001)


def test_names_sizes_and_options_are_checked():
    with pytest.raises(UnknownNameError, match="unknown topology 'torus'; valid names: ring"):
        topology_weights("torus", 5)
    for m in (0, -3):
        with pytest.raises(ValidationError, match="m must be an integer >= 1"):
            topology_weights("ring", m)
    for m in (2.5, True, "5"):
        with pytest.raises(InputTypeError, match="m must be an integer, got"):
            topology_weights("ring", m)
    with pytest.raises(ValidationError, match="topology 'ring' has no option 'prob'; valid options: self_weight"):
        topology_weights("ring", 5, prob=0.5)
    assert topology_options("erdos_renyi") == ("prob", "max_tries")
    assert topology_options("complete") == ()


def test_metropolis_refuses_a_graph_without_edges():
    """Two or more nodes and no edge: no mixing at all, refused by name (it was the identity,
    silently; issue 31). A single node is its own (trivial) graph."""
    with pytest.raises(ValidationError, match="no edges between its 3 nodes"):
        metropolis_weights(np.zeros((3, 3)))
    assert metropolis_weights(np.zeros((1, 1))).tolist() == [[1.0]]
