"""SD-GT's random geometric fog network (seed 003, [L480])."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.spatial.distance import cdist

from fedbound.errors import ValidationError
from fedbound.network import (REGION_SIDE, Network, is_connected, metropolis_weights,
                              sample_geometric_network)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_rgg_subnets_connected_sizes_and_q(S, m, seed):
    network = Network.random_geometric(S, m, seed=seed)
    assert network.S == S and network.m.tolist() == [m] * S
    assert all(is_connected(W) for W in network.blocks)
    assert 0 < network.q <= 1
    assert network.coordinates.shape == (S * m, 2)
    assert np.all((network.coordinates >= 0) & (network.coordinates <= REGION_SIDE))


def test_rgg_reproducible_with_seed():
    a, b, c = (Network.random_geometric(3, 10, seed=s) for s in (4, 4, 5))
    assert all(np.array_equal(x, y) for x, y in zip(a.blocks, b.blocks))
    assert np.array_equal(a.coordinates, b.coordinates)
    assert not np.array_equal(a.coordinates, c.coordinates)


def test_link_rule_and_metropolis_weights():
    """Link iff dist <= min(r_i, r_j), inside a subnet only; W_s = Metropolis-Hastings."""
    draw = sample_geometric_network(3, 6, (0.5, 3.5), seed=2)
    starts = np.concatenate([[0], np.cumsum(draw.sizes)])
    for s, A in enumerate(draw.adjacency):
        xy = draw.coordinates[starts[s]:starts[s + 1]]
        r = draw.radii[starts[s]:starts[s + 1]]
        expected = cdist(xy, xy) <= np.minimum.outer(r, r)
        np.fill_diagonal(expected, False)
        assert np.array_equal(A, expected)
    network = Network.random_geometric(3, 6, seed=2)
    assert all(np.array_equal(W, metropolis_weights(A)) for W, A in zip(network.blocks, draw.adjacency))


def test_balanced_grouping_is_exact_and_local():
    """Balanced: exactly m_s per subnet (also unequal sizes); each subnet is spatially compact."""
    draw = sample_geometric_network(3, [4, 8, 6], (2.0, 3.5), seed=0)
    assert draw.sizes.tolist() == [4, 8, 6]
    starts = np.concatenate([[0], np.cumsum(draw.sizes)])
    labels = np.repeat(np.arange(3), draw.sizes)
    centres = np.stack([draw.coordinates[starts[s]:starts[s + 1]].mean(axis=0) for s in range(3)])
    own = cdist(draw.coordinates, centres)[np.arange(labels.size), labels]
    assert own.mean() < cdist(draw.coordinates, centres).mean()


def test_unbalanced_kmeans_sizes_sum_to_n():
    sizes = {tuple(Network.random_geometric(3, 10, seed=s, balanced=False).m) for s in range(6)}
    assert all(sum(k) == 30 for k in sizes)
    assert any(len(set(k)) > 1 for k in sizes)  # plain k-means gives unequal subnets


def test_default_q_in_documented_range():
    """Region side 4 is chosen so that SD-GT's defaults (3 x 10, radii [0.5, 3.5]) give q in 0.1-0.9."""
    qs = [Network.random_geometric(seed=s).q for s in range(10)]
    assert 0.1 <= np.median(qs) <= 0.9
    sparse = [Network.random_geometric(radius_range=(0.5, 1.5), seed=s).q for s in range(3)]
    assert max(sparse) < np.median(qs)  # smaller radii, sparser subnets (Fig. 4 [L510])


def test_rgg_bad_arguments():
    with pytest.raises(ValidationError, match=r"0 < r_min <= r_max, got \[3.0, 1.0\]"):
        Network.random_geometric(3, 10, radius_range=(3.0, 1.0))
    with pytest.raises(ValidationError, match="S must be an integer >= 1"):
        Network.random_geometric(0, 10)
    with pytest.raises(ValidationError, match="disconnected subnet in all 5 draws"):
        Network.random_geometric(2, 10, radius_range=(0.01, 0.02), max_tries=5)
