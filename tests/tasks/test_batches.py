"""Batch orders (issue 35): the seeded order's keys are SplitMix64's, its shuffles are
permutations of each client's samples; explicit orders are checked where they are used."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.errors import FedboundError, InputTypeError
from fedbound.tasks import MLPClassifier
from fedbound.tasks.batches import GivenBatches, SeededBatches, _mix, batch_order


def test_the_keys_are_splitmix64():
    """SplitMix64 from state 0 gives 0xE220A8397B1DCDAF, then 0x6E789E6AA1B965F4 (its reference
    implementation, Vigna's splitmix64.c): mix of the states golden * 0 and golden * 1."""
    golden = np.uint64(0x9E3779B97F4A7C15)
    assert int(_mix(np.array([0], dtype=np.uint64))[0]) == 0xE220A8397B1DCDAF
    assert int(_mix(np.array([golden], dtype=np.uint64))[0]) == 0x6E789E6AA1B965F4


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), round_index=st.integers(0, 10**6),
       sizes=st.lists(st.integers(1, 40), min_size=1, max_size=6), batch=st.integers(1, 50))
def test_a_seeded_shuffle_is_a_permutation_and_steps_walk_it(seed, round_index, sizes, batch):
    order = SeededBatches(seed)
    ids = np.arange(len(sizes)) * 7
    m = np.array(sizes)
    perm = order.permutations(ids, m, round_index)
    for j, mj in enumerate(sizes):
        assert sorted(perm[j, :mj].tolist()) == list(range(mj))
    pos, valid = order.positions(torch.as_tensor(ids), torch.as_tensor(m), round_index, 2, batch)
    for j, mj in enumerate(sizes):
        take = min(batch, mj)
        assert int(valid[j].sum()) == take
        expected = perm[j, (2 * take + np.arange(take)) % mj]
        assert pos[j, :take].tolist() == expected.tolist()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), round_index=st.integers(0, 10**6),
       sizes=st.lists(st.integers(1, 40), min_size=1, max_size=6), batch=st.integers(1, 50),
       step=st.integers(0, 30), steps=st.integers(1, 6))
def test_steps_at_once_are_the_steps_one_by_one(seed, round_index, sizes, batch, step, steps):
    """steps_positions of steps s..s+K-1 (one vectorized draw) is the K calls of positions side by
    side, and a task's batch_positions of K steps is the same with an order that offers only
    positions (the loop)."""
    order = SeededBatches(seed)
    ids, m = torch.arange(len(sizes)) * 3, torch.as_tensor(sizes)
    pos, valid = order.steps_positions(ids, m, round_index, step, steps, batch)
    one = [SeededBatches(seed).positions(ids, m, round_index, step + s, batch) for s in range(steps)]
    assert torch.equal(pos, torch.cat([p for p, _ in one], 1))
    assert torch.equal(valid, torch.cat([v for _, v in one], 1))

    class OneByOne:   # a user's order: positions only
        def positions(self, clients, sizes, round_index, step, batch_size):
            return order.positions(clients, sizes, round_index, step, batch_size)
    task = MLPClassifier.generate(len(sizes), num_samples=40 * len(sizes), dim=3, num_classes=2,
                                  hidden=(2,), seed=1, batch_size=batch, batches=seed)
    data = task.clients(ids // 3).data
    got = task.batch_positions(data, torch.Generator(), ids, round_index, step, steps)
    task.set_batches(OneByOne())
    loop = task.batch_positions(data, torch.Generator(), ids, round_index, step, steps)
    assert all(torch.equal(a, b) for a, b in zip(got, loop))


def test_batch_order_from_what_a_user_gives():
    assert batch_order(None) is None and isinstance(batch_order(3), SeededBatches)
    assert isinstance(batch_order(np.zeros((1, 2, 1, 1), dtype=int)), GivenBatches)
    assert isinstance(batch_order(lambda t, clients, s: np.zeros((len(clients), 2), dtype=int)), GivenBatches)
    with pytest.raises(InputTypeError):
        batch_order("random")
    with pytest.raises(FedboundError, match="integer array"):
        GivenBatches(np.zeros((2, 2)))
    with pytest.raises(FedboundError, match=">= 0"):
        GivenBatches(-np.ones((1, 1, 1, 1), dtype=int))


def test_a_batch_function_is_checked_where_it_is_used():
    sizes = torch.tensor([3, 4])
    ok = GivenBatches(lambda t, clients, s: np.stack([[s % 3, 0]] * len(clients)))
    pos, valid = ok.positions(torch.tensor([0, 1]), sizes, 0, 2, 2)
    assert pos.tolist() == [[2, 0], [2, 0]] and bool(valid.all())
    with pytest.raises(InputTypeError, match="must return"):
        GivenBatches(lambda t, clients, s: [[0.5]]).positions(torch.tensor([0]), sizes[:1], 0, 0, 1)
    with pytest.raises(FedboundError, match="client 1"):
        GivenBatches(lambda t, clients, s: np.full((2, 1), 3)).positions(torch.tensor([0, 1]),
                                                                         torch.tensor([4, 3]), 0, 0, 1)
