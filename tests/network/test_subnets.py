"""Network: S subnets, block-diagonal W, rho_s, q, JSON round trip."""
import dataclasses
import json

import numpy as np
import pytest
from scipy.linalg import block_diag

from fedbound.errors import UnknownNameError, ValidationError
from fedbound.network import Network, rho_tight, ring_weights, spectral_gap, spectral_norm


def test_structure_and_block_diagonal_W():
    blocks = [ring_weights(3), ring_weights(4), ring_weights(5)]
    network = Network.from_blocks(blocks)
    assert (network.S, network.n) == (3, 12)
    assert network.m.dtype == np.int64 and network.m.tolist() == [3, 4, 5]
    assert network.offsets.tolist() == [0, 3, 7, 12]
    assert network.subnet_of.tolist() == [0] * 3 + [1] * 4 + [2] * 5
    assert network.members(1).tolist() == [3, 4, 5, 6]
    W = network.W
    assert W.dtype == np.float64 and np.array_equal(W, block_diag(*blocks))
    assert network.coordinates is None
    with pytest.raises(ValidationError, match=r"subnet index s must be in \[0, 2\], got 3"):
        network.members(3)


def test_per_subnet_measures_and_q():
    network = Network.from_topology("ring", 3, [3, 10, 50])
    assert network.rho.tolist() == [rho_tight(ring_weights(k)) for k in (3, 10, 50)]
    assert network.spectral_norms.tolist() == [spectral_norm(ring_weights(k)) for k in (3, 10, 50)]
    assert network.spectral_gaps.tolist() == [spectral_gap(ring_weights(k)) for k in (3, 10, 50)]
    assert network.q == network.rho.min() == network.rho[2]
    assert round(float(network.spectral_norms[1]), 4) == 0.8727


def test_immutable():
    network = Network.from_topology("chain", 2, 4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        network.S = 5
    with pytest.raises(ValueError):
        network.blocks[0][0, 0] = 0.0
    with pytest.raises(ValueError):
        network.rho[0] = 0.0
    W = network.W
    W[0, 0] = 7.0  # W is a fresh copy
    assert network.W[0, 0] != 7.0


def test_blocks_are_validated_and_must_mix():
    with pytest.raises(ValidationError, match=r"^subnet 1: W row sums must be 1"):
        Network.from_blocks([ring_weights(3), [[0.5, 0.5], [0.4, 0.5]]])
    with pytest.raises(ValidationError, match=r"^subnet 0: W's graph must be connected"):
        Network.from_blocks([np.eye(2)])
    for m in (4, 6, 8, 100):  # bipartite ring: eigenvalue -1, ||W - J||_2 = 1 up to round-off
        with pytest.raises(ValidationError, match=r"subnet 0: rho_s .* must be in \(0, 1\]"):
            Network.from_blocks([ring_weights(m, self_weight=0.0)])
    with pytest.raises(ValidationError, match=r"coordinates must have shape \(3, 2\), got \(2, 2\)"):
        Network.from_blocks([ring_weights(3)], coordinates=np.zeros((2, 2)))


def test_from_topology_sizes_and_independent_random_subnets():
    network = Network.from_topology("erdos_renyi", 2, 12, seed=3, prob=0.4)
    assert not np.array_equal(network.blocks[0], network.blocks[1])
    again = Network.from_topology("erdos_renyi", 2, 12, seed=3, prob=0.4)
    assert all(np.array_equal(a, b) for a, b in zip(network.blocks, again.blocks))
    with pytest.raises(ValidationError, match="list of S = 3 sizes"):
        Network.from_topology("ring", 3, [4, 4])
    with pytest.raises(ValidationError, match="number of subnets S must be an integer >= 1, got 0"):
        Network.from_topology("ring", 0, 4)


def test_from_json_forms(tmp_path):
    spec = {"seed": 7, "subnets": [
        {"m": 10, "topology": "ring", "E": 12.0, "E_d2d": 0.1},
        {"m": 6, "topology": "erdos_renyi", "prob": 0.7},
        {"W": [[0.5, 0.5], [0.5, 0.5]], "E": 3.0},
    ]}
    network = Network.from_json(spec)
    assert network.m.tolist() == [10, 6, 2]
    assert np.array_equal(network.blocks[0], ring_weights(10))
    path = tmp_path / "net.json"
    path.write_text(json.dumps(spec))
    from_file = Network.from_json(str(path))
    assert all(np.array_equal(a, b) for a, b in zip(network.blocks, from_file.blocks))
    ring = Network.from_json({"subnets": [{"m": 4, "topology": "ring", "self_weight": 0.5}]})
    assert ring.blocks[0][0, 0] == 0.5


def test_to_json_round_trip():
    network = Network.random_geometric(2, 5, seed=1)
    back = Network.from_json(json.loads(json.dumps(network.to_json())))
    assert all(np.array_equal(a, b) for a, b in zip(network.blocks, back.blocks))
    assert np.array_equal(network.coordinates, back.coordinates)


@pytest.mark.parametrize("spec, error, match", [
    ({}, ValidationError, 'non-empty list "subnets"'),
    ({"subnets": []}, ValidationError, 'non-empty list "subnets"'),
    ({"subnets": [{"m": 3}]}, ValidationError, 'exactly one of "W" or "topology"'),
    ({"subnets": [{"topology": "ring"}]}, ValidationError, 'needs "m"'),
    ({"subnets": [{"m": 3, "topology": "hypercube"}]}, UnknownNameError, "unknown topology 'hypercube'"),
    ({"subnets": [{"m": 3, "W": [[1.0]]}]}, ValidationError, "m = 3 but W is 1x1"),
    ({"subnets": [{"W": [[0.9, 0.1], [0.2, 0.8]]}]}, ValidationError, "subnet 0: W column sums"),
    ({"subnets": [{"m": 0, "topology": "ring"}]}, ValidationError, "m must be an integer >= 1, got 0"),
])
def test_from_json_errors(spec, error, match):
    with pytest.raises(error, match=match) as info:
        Network.from_json(spec)
    assert "\n" not in str(info.value)


def test_from_json_bad_file(tmp_path):
    with pytest.raises(ValidationError, match="cannot read network spec"):
        Network.from_json(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValidationError, match="not valid JSON"):
        Network.from_json(bad)
