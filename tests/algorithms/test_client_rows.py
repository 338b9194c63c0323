"""Per-client rows (issue 24, "memory per client"): ClientRows against a dense numpy reference
(hypothesis: chains and branches of updates, old stores unchanged, zeros for clients without a row,
empty updates), the memory and per-round cost of SCAFFOLD, FedDyn and FedNova's VR on it, and
divergence detection in its rows."""
import dataclasses

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from fedbound.algorithms import check_finite, registry
from fedbound.algorithms.client_rows import ClientRows
from fedbound.errors import DivergenceError, FedboundError, InputTypeError
from fedbound.tasks import Quadratic

STRATEGIES = {"scaffold-fl": {}, "feddyn": {"alpha": 0.5}, "fedavg-vr": {}}


@st.composite
def histories(draw):
    """n, d and updates (parent version, distinct clients, integer rows) applied to earlier
    versions: mostly the newest (a run), sometimes an older one (a state stepped twice)."""
    n, d = draw(st.integers(1, 12)), draw(st.integers(1, 3))
    updates = []
    for version in range(draw(st.integers(1, 25))):
        parent = draw(st.one_of(st.just(version), st.integers(0, version)))
        clients = draw(st.lists(st.integers(0, n - 1), unique=True, max_size=min(n, 4)))
        rows = draw(st.lists(st.integers(-9, 9), min_size=len(clients) * d, max_size=len(clients) * d))
        updates.append((parent, clients, np.array(rows, dtype=float).reshape(len(clients), d)))
    return n, d, updates


@settings(max_examples=150)
@given(histories(), st.data())
def test_client_rows_match_a_dense_reference_and_old_stores_never_change(history, data):
    n, d, updates = history
    stores, dense = [ClientRows.zeros(n, d, torch.float64)], [np.zeros((n, d))]
    written = [set()]
    for parent, clients, rows in updates:
        ids = torch.tensor(clients, dtype=torch.int64)
        stores.append(stores[parent].with_rows(ids, torch.from_numpy(rows)))
        dense.append(dense[parent].copy())
        dense[-1][clients] = rows
        written.append(written[parent] | set(clients))
        np.testing.assert_array_equal(stores[-1].last.numpy(), rows)
        asked = data.draw(st.lists(st.integers(0, n - 1), max_size=2 * n))
        np.testing.assert_array_equal(stores[-1].gather(torch.tensor(asked, dtype=torch.int64)).numpy(),
                                      dense[-1][asked].reshape(len(asked), d))
    for store, expected, held in zip(stores, dense, written):   # every version as it was built
        np.testing.assert_array_equal(store.dense().numpy(), expected)
        assert store.held == len(held) and (store.n, store.d) == (n, d)
        assert store.nbytes <= (1 + 1.25 * max(store.held, 1)) * d * 8 + 8 * n


def test_an_update_appends_in_place_and_a_second_child_of_the_same_store_copies():
    """The rows of a chain share one buffer (O(k d) per update); a store updated twice (a state
    stepped twice) gives the second child its own buffer, and neither child changes the other."""
    ones = torch.ones(20, 2, dtype=torch.float64)
    rows = ClientRows.zeros(100, 2, torch.float64).with_rows(torch.arange(20), ones)
    rows = rows.with_rows(torch.tensor([20]), torch.full((1, 2), 2.0, dtype=torch.float64))  # room for 5 more
    before = rows.dense().clone()
    a = rows.with_rows(torch.tensor([50]), torch.full((1, 2), 3.0, dtype=torch.float64))
    b = rows.with_rows(torch.tensor([50]), torch.full((1, 2), 4.0, dtype=torch.float64))
    storage = [r.last.untyped_storage().data_ptr() for r in (rows, a, b)]
    assert storage[0] == storage[1] != storage[2]
    assert torch.equal(rows.dense(), before)
    assert a.gather(torch.tensor([50, 51])).tolist() == [[3.0, 3.0], [0.0, 0.0]]
    assert b.gather(torch.tensor([50, 0])).tolist() == [[4.0, 4.0], [1.0, 1.0]]
    assert a.held == b.held == 22 and rows.held == 21
    empty = a.with_rows(torch.tensor([], dtype=torch.int64), torch.zeros(0, 2, dtype=torch.float64))
    assert torch.equal(empty.dense(), a.dense()) and empty.last.shape == (0, 2)


def test_bad_updates_are_refused_with_the_reason():
    rows = ClientRows.zeros(5, 2, torch.float64)
    two = torch.zeros(2, 2, dtype=torch.float64)
    for clients, value, match in ((torch.tensor([1, 1]), two, "distinct"),
                                  (torch.tensor([0, 5]), two, r"in \[0, 5\)"),
                                  (torch.tensor([0.0, 1.0]), two, "integer"),
                                  (torch.tensor([0, 1]), torch.zeros(2, 3, dtype=torch.float64),
                                   r"shape \(2, 2\)"),
                                  (torch.tensor([0, 1]), torch.zeros(2, 2), "float64")):
        with pytest.raises(FedboundError, match=match):
            rows.with_rows(clients, value)
    with pytest.raises(FedboundError, match=r"in \[0, 5\)"):
        rows.gather(torch.tensor([-1]))


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_rows_are_held_only_for_clients_that_participated(name):
    """1000 clients, 10 per round, 5 rounds: at most 50 rows, held exactly for the participants."""
    task = Quadratic.generate(1000, 4, kappa=4.0, mu=0.5, seed=0)
    alg = registry.build(name, task, lr=0.05, local_steps=2, clients_per_round=10, seed=0, **STRATEGIES[name])
    state, seen = alg.init(), set()
    for _ in range(5):
        state = alg.step(state)
        seen |= set(state.clients.tolist())
    assert state.C.held == len(seen) <= 50
    assert state.C.nbytes <= (1 + 1.25 * len(seen)) * task.d * 8 + 8 * task.n     # vs n d * 8 dense
    held = torch.zeros(task.n, dtype=torch.bool)
    held[list(seen)] = True
    assert not state.C.dense()[~held].any() and bool(state.C.dense()[held].abs().sum(dim=1).gt(0).all())


class LargestTensor(TorchDispatchMode):
    """The largest number of entries of a tensor that a torch operation creates."""

    largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        sizes = [t.numel() for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
        self.largest = max([self.largest, *sizes])
        return out


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_a_round_allocates_no_tensor_of_all_clients_rows(name):
    """The round's cost is linear in the participants: no (n, d) tensor is created (the dense
    store rewrote all n d entries every round)."""
    task = Quadratic.generate(1000, 4, kappa=4.0, mu=0.5, seed=0)
    alg = registry.build(name, task, lr=0.05, local_steps=2, clients_per_round=10, seed=0, **STRATEGIES[name])
    state = alg.init()
    for _ in range(3):
        with LargestTensor() as mode:
            state = alg.step(state)
        assert mode.largest < task.n * task.d, mode.largest
    with LargestTensor() as mode:
        state.C.dense()
    assert mode.largest == task.n * task.d    # the probe sees an (n, d) tensor where there is one


def test_a_non_finite_row_is_a_divergence_naming_the_round():
    task = Quadratic.generate(10, 3, kappa=4.0, mu=0.5, seed=0)
    alg = registry.build("scaffold-fl", task, lr=0.05, local_steps=2, clients_per_round=4, seed=0)
    state = alg.step(alg.step(alg.init()))
    check_finite(state, alg.name)
    nan = torch.full((1, 3), float("nan"), dtype=torch.float64)
    bad = dataclasses.replace(state, C=state.C.with_rows(torch.tensor([7]), nan))
    with pytest.raises(DivergenceError, match="diverged at round 2: state C is non-finite") as info:
        check_finite(bad, alg.name)
    assert info.value.round_index == 2


def test_the_state_takes_client_rows_not_a_dense_tensor():
    task = Quadratic.generate(10, 3, kappa=4.0, mu=0.5, seed=0)
    state = registry.build("feddyn", task, lr=0.05, alpha=0.5, seed=0).init()
    with pytest.raises(InputTypeError, match="C must be"):
        dataclasses.replace(state, C=torch.zeros(10, 3, dtype=torch.float64))
    assert dataclasses.replace(state, C=ClientRows.zeros(10, 3)).C.held == 0
