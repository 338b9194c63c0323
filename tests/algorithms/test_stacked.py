"""StackedNetwork: every mixing mode applies W = blkdiag(W_s); reductions match plain sums."""
import numpy as np
import pytest
import torch
from torch.func import jacrev

from fedbound.algorithms import StackedNetwork

CASES = [  # (topology, sizes, expected mixing mode)
    ("ring", [24, 30], "gather"),
    ("ring", [24, 24], "gather"),
    ("ring", [8, 8, 8], "bmm"),
    ("complete", [3, 4, 5], "blocks"),
    ("complete", [1, 1, 1, 1], "bmm"),
]


@pytest.mark.parametrize("topology,sizes,mode", CASES)
def test_every_mixing_mode_is_the_block_diagonal_matmul(make_network, topology, sizes, mode):
    network = make_network(sizes, topology)
    net = StackedNetwork.from_network(network)
    assert net.mixing == mode
    W = torch.tensor(network.W)
    X = torch.randn(net.n, 7, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert torch.max(torch.abs(net.mix(X) - W @ X)) <= 1e-14
    assert torch.equal(net.W, W)
    J = jacrev(lambda v: net.mix(v.reshape(net.n, 3)).reshape(-1))(X[:, :3].reshape(-1))
    assert torch.max(torch.abs(J - torch.kron(W, torch.eye(3, dtype=W.dtype)))) <= 1e-15


@pytest.mark.parametrize("topology,sizes,mode", CASES)
def test_subnet_reductions(make_network, topology, sizes, mode):
    net = StackedNetwork.from_network(make_network(sizes, topology))
    gen = torch.Generator().manual_seed(1)
    X = torch.randn(net.n, 4, generator=gen, dtype=torch.float64)
    sampled = torch.zeros(net.n, dtype=torch.bool)
    for s in range(net.S):  # the first client of every subnet and every third one
        sampled[net.offsets[s]] = True
        sampled[net.offsets[s]:net.offsets[s + 1]:3] = True
    for s in range(net.S):
        block = slice(int(net.offsets[s]), int(net.offsets[s + 1]))
        assert torch.allclose(net.subnet_sum(X)[s], X[block].sum(0), rtol=0, atol=1e-14)
        assert torch.allclose(net.sampled_mean(X, None)[s], X[block].mean(0), rtol=0, atol=1e-14)
        picked = X[block][sampled[block]]
        assert torch.allclose(net.sampled_mean(X, sampled)[s], picked.mean(0), rtol=0, atol=1e-14)
    assert torch.equal(net.expand(net.subnet_sum(X))[net.offsets[-2]], net.subnet_sum(X)[-1])
    assert net.directed_links.tolist() == [int(np.count_nonzero(b - np.diag(np.diag(b))))
                                           for b in make_network(sizes, topology).blocks]
