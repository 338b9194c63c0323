"""Mixing measures (spectral_norm, rho_tight, spectral_gap), SD-GT Assumption 2, validation."""
import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fedbound.errors import ValidationError
from fedbound.network import (TOPOLOGIES, Network, averaging_matrix, is_connected,
                              is_doubly_stochastic, metropolis_weights, mixing_summary, rho_tight,
                              ring_weights, spectral_gap, spectral_norm, topology_weights,
                              validate_mixing_matrix)

SETTINGS = settings(max_examples=40, deadline=None)


@st.composite
def mixing_matrices(draw):
    """W of every topology (random size 1..40, ER seeds) and of RGG subnets."""
    name = draw(st.sampled_from(TOPOLOGIES + ("rgg",)))
    seed = draw(st.integers(0, 2**32 - 1))
    if name == "rgg":
        network = Network.random_geometric(draw(st.integers(1, 3)), draw(st.integers(1, 6)), seed=seed)
        return network.blocks[draw(st.integers(0, network.S - 1))]
    options = {"prob": draw(st.floats(0.5, 1.0))} if name == "erdos_renyi" else {}
    return topology_weights(name, draw(st.integers(1, 40)), seed=seed, **options)


# ---- reference values ------------------------------------------------------------------------

@pytest.mark.parametrize("m, expected", [(50, 0.9947), (10, 0.8727), (3, 0.0)])
def test_afga_ring_reference_values(m, expected):
    """AFGA's rho = ||W - J||_2 for its 1/3-weight ring (notes afga.md §8: 0.9947, 0.8727, 0)."""
    assert round(spectral_norm(ring_weights(m)), 4) == expected
    assert np.isclose(spectral_norm(ring_weights(m)),
                      np.linalg.norm(ring_weights(m) - averaging_matrix(m), ord=2), atol=1e-12)


def test_ring_spectrum_formula():
    """Ring eigenvalues are 1/3 + (2/3) cos(2 pi k/m): the norm is the largest |.| over k != 0."""
    for m in range(2, 30):
        k = np.arange(1, m)
        expected = np.max(np.abs(1 / 3 + 2 / 3 * np.cos(2 * np.pi * k / m)))
        assert spectral_norm(ring_weights(m)) == pytest.approx(expected, abs=1e-12)


# ---- identities and ranges -------------------------------------------------------------------

@SETTINGS
@given(mixing_matrices())
def test_generated_matrices_are_valid_and_measures_in_unit_interval(W):
    assert is_doubly_stochastic(W, atol=1e-12)
    validate_mixing_matrix(W)
    for value in (spectral_norm(W), rho_tight(W), spectral_gap(W)):
        assert -1e-12 <= value <= 1 + 1e-12


@SETTINGS
@given(mixing_matrices())
def test_measure_identities(W):
    norm = spectral_norm(W)
    assert rho_tight(W) == 1.0 - norm ** 2
    m = W.shape[0]
    assert norm == pytest.approx(np.linalg.norm(W - averaging_matrix(m), ord=2), abs=1e-12)
    eig = np.sort(np.linalg.eigvalsh(W))  # ascending; eig[-1] = 1
    if m > 1:
        assert norm == pytest.approx(max(abs(eig[-2]), abs(eig[0])), abs=1e-12)
        assert spectral_gap(W) == pytest.approx(1 - abs(eig[-2]), abs=1e-12)
        assert spectral_gap(W) >= 1 - norm - 1e-12  # the gap ignores lambda_min
    summary = mixing_summary(W)
    assert (summary["spectral_norm"], summary["rho_tight"], summary["spectral_gap"]) == (
        norm, rho_tight(W), spectral_gap(W))


@SETTINGS
@given(st.integers(1, 40))
def test_complete_graph_is_exact_averaging(m):
    W = topology_weights("complete", m)
    assert spectral_norm(W) == pytest.approx(0.0, abs=1e-12)
    assert rho_tight(W) == pytest.approx(1.0, abs=1e-12)
    assert np.allclose(W, averaging_matrix(m), atol=1e-15)


def test_spectral_gap_ignores_negative_eigenvalue():
    """Ring with self weight 0 and even m: eigenvalue -1, gap > 0 but no contraction."""
    W = ring_weights(6, self_weight=0.0)
    assert spectral_norm(W) == pytest.approx(1.0, abs=1e-12)
    assert rho_tight(W) == pytest.approx(0.0, abs=1e-12)
    assert spectral_gap(W) == pytest.approx(0.5, abs=1e-12)


def test_nonsymmetric_doubly_stochastic_uses_operator_norm():
    P = np.roll(np.eye(4), 1, axis=1)  # a cyclic permutation, doubly stochastic, not symmetric
    W = 0.5 * np.eye(4) + 0.5 * P
    assert spectral_norm(W) == pytest.approx(np.linalg.norm(W - averaging_matrix(4), 2), abs=1e-12)
    assert spectral_gap(W) == pytest.approx(1 - abs(0.5 + 0.5j), abs=1e-12)


# ---- SD-GT Assumption 2 with rho_tight -------------------------------------------------------

@SETTINGS
@given(mixing_matrices(), st.integers(1, 5), st.sampled_from([1e-3, 1.0, 1e3]), st.integers(0, 2**32 - 1))
def test_assumption2_holds_with_rho_tight(W, d, scale, seed):
    """||X(W - J)||_F^2 <= (1 - rho)||X(I - J)||_F^2 for random X (SD-GT [L223-L226])."""
    m = W.shape[0]
    J = averaging_matrix(m)
    X = scale * np.random.default_rng(seed).standard_normal((d, m))
    lhs = np.linalg.norm(X @ (W - J)) ** 2
    rhs = (1 - rho_tight(W)) * np.linalg.norm(X @ (np.eye(m) - J)) ** 2
    assert lhs <= rhs * (1 + 1e-10) + 1e-12 * np.linalg.norm(X) ** 2


@SETTINGS
@given(mixing_matrices(), st.integers(0, 2**32 - 1))
def test_assumption2_is_tight(W, seed):
    """Equality for X = a u^T with u the top left singular vector of W - J (u is orthogonal to 1)."""
    m = W.shape[0]
    J = averaging_matrix(m)
    U, sigma, _ = np.linalg.svd(W - J)
    if sigma[0] < 1e-9:  # W = J: both sides 0 only for X(I - J) = 0; nothing to be tight about
        return
    X = np.outer(np.random.default_rng(seed).standard_normal(3), U[:, 0])
    lhs = np.linalg.norm(X @ (W - J)) ** 2
    rhs = (1 - rho_tight(W)) * np.linalg.norm(X @ (np.eye(m) - J)) ** 2
    assert lhs == pytest.approx(rhs, rel=1e-10)


# ---- validation ------------------------------------------------------------------------------

@pytest.mark.parametrize("W, match", [
    (np.ones((2, 3)) / 3, r"square matrix .* shape \(2, 3\)"),
    ([[1.0, np.nan], [0.0, 1.0]], r"W must be finite, got nan at index \(0, 1\)"),
    ([[1.5, -0.5], [-0.5, 1.5]], r"W entries must be >= 0; W\[0, 1\] = -0.5"),
    ([[0.5, 0.5, 0, 0], [0.5, 0.5, 0, 0], [0, 0, 0.5, 0.5], [0, 0, 0.3, 0.5]],
     r"W row sums must be 1 \(doubly stochastic\); row 3 sums to 0.8$"),
    ([[0.5, 0.5], [0.7, 0.3]], r"W column sums must be 1 \(doubly stochastic\); column 0 sums to 1.2"),
    ([[0.5, 0.2, 0.3], [0.3, 0.5, 0.2], [0.2, 0.3, 0.5]], r"W must be symmetric; W\[0, 1\] = 0.2 but W\[1, 0\] = 0.3"),
    (np.eye(3), r"W's graph must be connected; it has 3 components"),
])
def test_validation_errors_are_one_line(W, match):
    with pytest.raises(ValidationError, match=match) as info:
        validate_mixing_matrix(W)
    assert "\n" not in str(info.value)


def test_validation_flags_can_be_relaxed():
    validate_mixing_matrix([[0.5, 0.2, 0.3], [0.3, 0.5, 0.2], [0.2, 0.3, 0.5]], symmetric=False)
    validate_mixing_matrix(np.eye(3), connected=False)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1))
def test_connectivity_matches_networkx(m, prob, seed):
    graph = nx.gnp_random_graph(m, prob, seed=seed)
    adjacency = nx.to_numpy_array(graph)
    assert is_connected(adjacency) == nx.is_connected(graph)
    if m > 1 and graph.number_of_edges() == 0:   # no mixing at all: refused by name (issue 31)
        with pytest.raises(ValidationError, match="no edges"):
            metropolis_weights(adjacency)
        return
    W = metropolis_weights(adjacency)
    if nx.is_connected(graph):
        validate_mixing_matrix(W)
    else:
        with pytest.raises(ValidationError, match="must be connected"):
            validate_mixing_matrix(W)
