"""Per-subnet sampling: beta_s, p, and the uniform-without-replacement mask."""
import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from scipy import stats

from fedbound.errors import ValidationError
from fedbound.network import Network, beta_from_h, p_from_h, sample_mask


def test_beta_and_p_sdgt_default():
    """SD-GT default: h_s = 4 of 10 -> beta_s = 0.6, p = 0.64 ([L506], notes sdgt.md §6.1)."""
    assert beta_from_h(4, [10, 10, 10]).tolist() == pytest.approx([0.6] * 3)
    assert p_from_h(4, [10, 10, 10]) == pytest.approx(0.64)
    assert p_from_h([10, 5], [10, 10]) == pytest.approx(0.75)  # min over subnets
    assert p_from_h([3, 5], [3, 5]) == 1.0  # full participation: beta = 0, p = 1


@pytest.mark.parametrize("h, m, match", [
    (0, [5, 5], r"h\[0\] = 0 must be in \[1, m_0 = 5\]"),
    ([2, 6], [5, 5], r"h\[1\] = 6 must be in \[1, m_1 = 5\]"),
    ([1, 2, 3], [5, 5], "one entry per subnet"),
    (2.5, [5, 5], "h must be an integer"),
])
def test_invalid_h(h, m, match):
    with pytest.raises(ValidationError, match=match):
        beta_from_h(h, m)
    with pytest.raises(ValidationError, match=match):
        sample_mask(Network.from_topology("ring", len(m), m), h, torch.Generator().manual_seed(0))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=5), st.data())
def test_mask_has_exactly_h_per_subnet(sizes, data):
    network = Network.from_topology("complete", len(sizes), sizes)
    h = [data.draw(st.integers(1, k)) for k in sizes]
    generator = torch.Generator().manual_seed(data.draw(st.integers(0, 2**31)))
    for _ in range(3):
        mask = sample_mask(network, h, generator)
        assert mask.dtype == torch.bool and mask.shape == (network.n,)
        counts = [int(mask[network.members(s)].sum()) for s in range(network.S)]
        assert counts == h


def test_same_seed_same_mask_and_fresh_draws_across_calls():
    network = Network.from_topology("ring", 3, 20)
    a = sample_mask(network, 5, torch.Generator().manual_seed(11))
    b = sample_mask(network, 5, torch.Generator().manual_seed(11))
    assert torch.equal(a, b)
    generator = torch.Generator().manual_seed(11)
    draws = [sample_mask(network, 5, generator) for _ in range(5)]
    assert torch.equal(draws[0], a)
    assert any(not torch.equal(draws[0], d) for d in draws[1:])


def test_inclusion_frequency_and_uniform_subsets():
    """Monte Carlo: each client is sampled with frequency h_s/m_s (99.9 % binomial interval), and
    in a subnet with m = 4, h = 2 all 6 subsets are equally likely (chi-square, p > 0.001)."""
    sizes, h, draws = [3, 4, 7], [1, 2, 5], 20_000
    network = Network.from_topology("complete", 3, sizes)
    generator = torch.Generator().manual_seed(2024)
    masks = torch.stack([sample_mask(network, h, generator) for _ in range(draws)]).numpy()
    counts = masks.sum(axis=0)
    prob = np.repeat(np.array(h) / np.array(sizes), sizes)
    low, high = stats.binom.interval(0.999, draws, prob)
    assert np.all((low <= counts) & (counts <= high)), (counts, low, high)
    subnet1 = masks[:, network.members(1)]
    subsets = {pair: 0 for pair in itertools.combinations(range(4), 2)}
    for row in subnet1:
        subsets[tuple(np.flatnonzero(row))] += 1
    assert stats.chisquare(list(subsets.values())).pvalue > 1e-3
