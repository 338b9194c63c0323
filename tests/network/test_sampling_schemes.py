"""Participation schemes of the federated round: exact inclusion probabilities (binomial 99.9 %
intervals), unbiasedness of the weighted aggregate, shapes and validation."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from scipy import stats

from fedbound.errors import ValidationError
from fedbound.network.sampling import (FullParticipation, PoissonParticipation, UniformParticipation,
                                       WithReplacement, compute_mask)

N, DRAWS = 8, 20_000
P = torch.tensor([0.05, 0.1, 0.2, 0.05, 0.15, 0.25, 0.1, 0.1], dtype=torch.float64)
SIZES = [3, 5]


def draws(scheme, p=P, count=DRAWS, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return [scheme.draw(p, gen) for _ in range(count)]


def inclusion_counts(parts):
    counts = np.zeros(N)
    for part in parts:
        counts += np.bincount(part.clients.numpy(), minlength=N) > 0
    return counts


def assert_binomial(counts, prob, count=DRAWS):
    low, high = stats.binom.interval(0.999, count, prob)
    assert np.all((low <= counts) & (counts <= high)), (counts, low, high)


def assert_unbiased(parts, p):
    """E[sum_j w_j v_{c_j}] = sum_i p_i v_i for the fixed values v_i = i + 1 (5 standard errors)."""
    v = torch.arange(1.0, N + 1, dtype=torch.float64)
    agg = np.array([float(part.weights @ v.index_select(0, part.clients)) for part in parts])
    se = agg.std(ddof=1) / np.sqrt(len(agg))
    assert abs(agg.mean() - float(p @ v)) <= 5 * se, (agg.mean(), float(p @ v), se)


def test_full_participation_draws_nothing():
    gen = torch.Generator().manual_seed(0)
    before = gen.get_state()
    part = FullParticipation().draw(P, gen)
    assert part.full and torch.equal(part.clients, torch.arange(N)) and torch.equal(part.weights, P)
    assert torch.equal(gen.get_state(), before)


@pytest.mark.parametrize("weighting", ["normalized", "unbiased"])
def test_uniform_without_replacement(weighting):
    parts = draws(UniformParticipation(N, 3, weighting=weighting))
    assert all(part.k == 3 and len(set(part.clients.tolist())) == 3 for part in parts[:100])
    assert all(torch.equal(part.clients, torch.sort(part.clients).values) for part in parts[:100])
    assert_binomial(inclusion_counts(parts), np.full(N, 3 / N))
    if weighting == "unbiased":            # weights p_i n / q
        assert_unbiased(parts, P)
        assert torch.allclose(parts[0].weights, P[parts[0].clients] * N / 3)
    else:                                  # normalized weights sum to 1; unbiased for uniform p
        assert all(abs(float(part.weights.sum()) - 1) < 1e-12 for part in parts[:100])
        u = torch.full((N,), 1 / N, dtype=torch.float64)
        assert_unbiased(draws(UniformParticipation(N, 3), p=u), u)


@pytest.mark.parametrize("weighting", ["normalized", "unbiased"])
def test_uniform_per_group(weighting):
    scheme = UniformParticipation(N, [1, 2], sizes=SIZES, weighting=weighting)
    parts = draws(scheme, count=5000)
    for part in parts[:100]:
        c = part.clients
        assert int((c < 3).sum()) == 1 and int((c >= 3).sum()) == 2
    assert_binomial(inclusion_counts(parts), np.repeat([1 / 3, 2 / 5], SIZES), count=5000)
    if weighting == "unbiased":
        assert_unbiased(parts, P)
    else:   # group totals are kept: sum of weights in group s = sum_{i in C_s} p_i
        part = parts[0]
        low = part.clients < 3
        assert abs(float(part.weights[low].sum()) - float(P[:3].sum())) < 1e-12
        u = torch.full((N,), 1 / N, dtype=torch.float64)
        assert_unbiased(draws(scheme, p=u, count=5000), u)


def test_with_replacement_multiplicities():
    parts = draws(WithReplacement(4))
    counts = np.zeros(N)
    for part in parts:
        assert part.k == 4 and torch.allclose(part.weights, torch.full((4,), 0.25, dtype=torch.float64))
        counts += np.bincount(part.clients.numpy(), minlength=N)
    # each of the 4 draws picks client i with probability p_i: multiplicity ~ Binomial(4 DRAWS, p_i)
    low, high = stats.binom.interval(0.999, 4 * DRAWS, P.numpy())
    assert np.all((low <= counts) & (counts <= high))
    assert any(len(set(p.clients.tolist())) < 4 for p in parts[:200])     # repeats occur
    assert_unbiased(parts, P)


@pytest.mark.parametrize("weighting", ["unbiased", "normalized"])
def test_poisson(weighting):
    rate = np.linspace(0.2, 0.9, N)
    parts = draws(PoissonParticipation(N, rate, weighting=weighting))
    assert_binomial(inclusion_counts(parts), rate)
    if weighting == "unbiased":
        assert_unbiased(parts, P)
    sizes = np.array([p.k for p in parts])
    assert abs(sizes.mean() - rate.sum()) < 5 * sizes.std() / np.sqrt(DRAWS)


def test_compute_mask_is_uniform_of_size_M():
    gen = torch.Generator().manual_seed(3)
    masks = torch.stack([compute_mask(N, 3, gen) for _ in range(DRAWS)])
    assert bool(torch.all(masks.sum(dim=1) == 3))
    assert_binomial(masks.sum(dim=0).numpy(), np.full(N, 3 / N))


def test_same_seed_same_draws():
    a = draws(UniformParticipation(N, 3), count=5, seed=9)
    b = draws(UniformParticipation(N, 3), count=5, seed=9)
    assert all(torch.equal(x.clients, y.clients) and torch.equal(x.weights, y.weights) for x, y in zip(a, b))


def test_bad_schemes_are_rejected():
    with pytest.raises(ValidationError, match=r"clients per round must be .*\[1, 8\]"):
        UniformParticipation(N, 9)
    with pytest.raises(ValidationError, match="must add up to n = 8"):
        UniformParticipation(N, 1, sizes=[3, 3])
    with pytest.raises(ValueError, match="weighting"):
        UniformParticipation(N, 2, weighting="flower")
    with pytest.raises(ValidationError, match="participation rate"):
        PoissonParticipation(N, 1.5)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), data=st.data(), weighting=st.sampled_from(["normalized", "unbiased"]),
       seeds=st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=6))
def test_draw_each_gives_each_generator_its_draw(n, data, weighting, seeds):
    """Row b of draw_each is draw with generator b, bitwise (clients and weights), for any p."""
    q = data.draw(st.integers(1, n))
    raw = np.array(data.draw(st.lists(st.floats(0.01, 1.0), min_size=n, max_size=n)))
    p = torch.as_tensor(raw / raw.sum())
    scheme = UniformParticipation(n, q, weighting=weighting)
    clients, weights = scheme.draw_each(p, [torch.Generator().manual_seed(s) for s in seeds])
    for b, s in enumerate(seeds):
        one = scheme.draw(p, torch.Generator().manual_seed(s))
        assert torch.equal(clients[b], one.clients) and torch.equal(weights[b], one.weights)


def test_draw_each_refuses_groups():
    scheme = UniformParticipation(4, [1, 1], sizes=np.array([2, 2]))
    with pytest.raises(ValidationError, match="without groups"):
        scheme.draw_each(torch.full((4,), 0.25, dtype=torch.float64), [torch.Generator()])


def test_uniform_draws_refuse_weights_of_another_n_and_no_generators():
    scheme = UniformParticipation(4, 2)
    with pytest.raises(ValidationError, match="one weight per client"):
        scheme.draw(torch.full((3,), 1 / 3, dtype=torch.float64), torch.Generator())
    with pytest.raises(ValidationError, match="one weight per client"):
        scheme.draw_each(torch.full((3,), 1 / 3, dtype=torch.float64), [torch.Generator()])
    with pytest.raises(ValidationError, match="at least one generator"):
        scheme.draw_each(torch.full((4,), 0.25, dtype=torch.float64), [])


@pytest.mark.parametrize("scheme, shown", [
    (FullParticipation(), "FullParticipation()"),
    (UniformParticipation(10, 3), "UniformParticipation(n=10, q=3, weighting='normalized')"),
    (UniformParticipation(10, [2, 1], sizes=np.array([5, 5]), weighting="unbiased"),
     "UniformParticipation(n=10, q=[2, 1], weighting='unbiased', group_sizes=[5, 5])"),
    (WithReplacement(4), "WithReplacement(q=4)"),
    (PoissonParticipation(10, 0.3), "PoissonParticipation(n=10, rate=0.3, weighting='unbiased')"),
    (PoissonParticipation(3, [0.1, 0.2, 0.3]), "PoissonParticipation(n=3, rate=[0.1, 0.2, 0.3], weighting='unbiased')"),
])
def test_a_scheme_prints_its_settings(scheme, shown):
    """A scheme handed to registry.build (or shown in a notebook) prints what it draws, not an address."""
    assert repr(scheme) == shown
