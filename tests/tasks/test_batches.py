"""Batch orders (issue 35): the seeded order's keys are SplitMix64's, its shuffles are
permutations of each client's samples, compiled and in numpy alike; explicit orders are checked
where they are used."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.errors import FedboundError, InputTypeError
from fedbound.tasks import MLPClassifier
from fedbound.tasks import batches
from fedbound.tasks.batches import GivenBatches, SeededBatches, _mix, batch_order


def test_the_keys_are_splitmix64():
    """SplitMix64 from state 0 gives 0xE220A8397B1DCDAF, then 0x6E789E6AA1B965F4 (its reference
    implementation, Vigna's splitmix64.c): mix of the states golden * 0 and golden * 1."""
    golden = np.uint64(0x9E3779B97F4A7C15)
    assert int(_mix(np.array([0], dtype=np.uint64))[0]) == 0xE220A8397B1DCDAF
    assert int(_mix(np.array([golden], dtype=np.uint64))[0]) == 0x6E789E6AA1B965F4


def _splitmix(z: int) -> int:
    """SplitMix64's mixer on a Python integer, modulo 2^64 (the module doc's formula)."""
    mask = 2 ** 64 - 1
    z = (z + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), round_index=st.integers(0, 10**6),
       ids=st.lists(st.integers(0, 2**21), min_size=1, max_size=5),
       sizes=st.lists(st.integers(1, 12), min_size=5, max_size=5))
def test_the_shuffles_sort_the_keys_of_the_formula(seed, round_index, ids, sizes):
    """pi_{i,t} sorts h(i, t, r) = mix(mix(mix(mix(seed) + i) + t) + r) over r (stable), in Python
    integers: the ids' first keys that the order holds (ids < 2^20) and those it computes (above)
    alike, ids asked in any order and repeated."""
    order = SeededBatches(seed)
    m = np.array(sizes[:len(ids)])
    perm = order.permutations(np.array(ids), m, round_index)
    mask = 2 ** 64 - 1
    for j, (i, mj) in enumerate(zip(ids, m)):
        base = _splitmix((_splitmix((_splitmix(seed) + i) & mask) + round_index) & mask)
        keys = [_splitmix((base + r) & mask) for r in range(mj)]
        assert perm[j, :mj].tolist() == sorted(range(mj), key=lambda r: keys[r])


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


@pytest.mark.skipif(batches._kernels is None, reason="the kernels are not built (no C compiler)")
@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), round_index=st.integers(0, 2**40),
       ids=st.lists(st.integers(0, 2**40), min_size=0, max_size=8),
       sizes=st.lists(st.integers(0, 60), min_size=8, max_size=8), batch=st.integers(1, 70),
       step=st.integers(0, 50), steps=st.integers(0, 6))
def test_compiled_positions_are_the_numpy_ones(seed, round_index, ids, sizes, batch, step, steps):
    """The compiled seeded order (fedbound/tasks/_kernels.c) gives the numpy code's integers: the
    same positions and validity, clients of 0 samples, fewer than B and ids on both sides of the
    held 2^20 included."""
    order = SeededBatches(seed)
    ids, m = np.array(ids, dtype=np.int64), np.array(sizes[:len(ids)], dtype=np.int64)
    ours = batches.compiled_positions(order, ids, m, round_index, step, steps, batch)
    ref = SeededBatches(seed).numpy_positions(ids, m, round_index, step, steps, batch)
    for a, b in zip(ours, ref):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


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
    with pytest.raises(FedboundError, match="integer array"):   # ragged lists (found by the fuzz suite)
        batch_order([[0, 1], [2]])


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


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(1, 5), B=st.integers(1, 4), step=st.integers(0, 3),
       steps=st.integers(1, 3), as_function=st.booleans())
def test_given_steps_at_once_are_the_steps_one_by_one(seed, k, B, step, steps, as_function):
    """An explicit order's steps_positions (one slice of the array, or the function per step) is
    its positions step by step side by side, and an out-of-range position names its step."""
    rng = np.random.default_rng(seed)
    sizes = torch.as_tensor(rng.integers(1, 6, size=2 * k))
    arr = rng.integers(0, 6, size=(2, 2 * k, 6, B)) % sizes.numpy()[None, :, None, None]
    order = GivenBatches((lambda t, clients, s: arr[t, clients, s]) if as_function else arr)
    clients = torch.as_tensor(np.sort(rng.choice(2 * k, k, replace=False)))
    pos, valid = order.steps_positions(clients, sizes[clients], 1, step, steps, B)
    one = [order.positions(clients, sizes[clients], 1, step + s, B) for s in range(steps)]
    assert torch.equal(pos, torch.cat([p for p, _ in one], 1)) and bool(valid.all())
    bad = arr.copy()
    bad[1, int(clients[-1]), step + steps - 1, 0] = 99
    wrong = GivenBatches((lambda t, c, s: bad[t, c, s]) if as_function else bad)
    with pytest.raises(FedboundError, match=f"client {int(clients[-1])} .* step {step + steps - 1}"):
        wrong.steps_positions(clients, sizes[clients], 1, step, steps, B)


def test_minibatches_of_one_size_per_round():
    """A batch function whose minibatch size changes between the steps of a round is refused
    where a round asks for its steps at once (the steps are laid side by side)."""
    sizes = torch.tensor([5, 5])
    varying = GivenBatches(lambda t, clients, s: np.zeros((len(clients), 1 + s), dtype=int))
    with pytest.raises(FedboundError, match="same B at every step"):
        varying.steps_positions(torch.tensor([0, 1]), sizes, 0, 0, 2, 2)

    class Varying:   # a user's order, positions only
        def positions(self, clients, sizes, round_index, step, batch_size):
            return (torch.zeros(len(clients), 1 + step, dtype=torch.int64),
                    torch.ones(len(clients), 1 + step, dtype=torch.bool))
    task = MLPClassifier.generate(2, num_samples=20, dim=3, num_classes=2, hidden=(2,), seed=1,
                                  batch_size=2, batches=Varying())
    with pytest.raises(FedboundError, match="one size"):
        task.batch_positions(task.clients(torch.tensor([0, 1])).data, torch.Generator(),
                             torch.tensor([0, 1]), 0, 0, 2)
