"""Monte-Carlo grids from Python (fedbound.sweep.evaluate, runs): the grid's configurations and
every seed are computed once, gathered per configuration exactly as a hand loop would, estimated
with the interval of mean_ci; runs batch seeds bitwise like one run per seed; diverged runs are
recorded and refused when read."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.algorithms import registry, run
from fedbound.errors import FedboundError, InputTypeError, UnknownNameError, ValidationError
from fedbound.sweep import Executor, evaluate, runs, using
from fedbound.sweep import grid as G
from fedbound.sweep.batch import batchable
from fedbound.tasks import LeastSquares
from fedbound.verify.montecarlo import mean_ci, monte_carlo


def noisy_output(seed, a, b):
    gen = np.random.default_rng(seed)
    return np.array([a * b + gen.normal(), a - b])


def test_grid_crosses_lists_and_pairs_zip_groups_in_order():
    grid = G.normalize({"a": [1, 2], "b": 5, "zip": [{"c": [1, 2, 3], "d": ["x", "y", "z"]}]})
    got = G.configurations(grid)
    assert got == [{"a": a, "b": 5, "c": c, "d": d} for a in (1, 2) for c, d in zip((1, 2, 3), "xyz")]
    assert G.size(grid) == 6


@pytest.mark.parametrize("grid,error", [
    ({"zip": {"c": [1, 2], "d": [1]}}, ValidationError),           # unequal lengths
    ({"c": 1, "zip": {"c": [1, 2]}}, ValidationError),              # a name twice
    ({"a": []}, ValidationError),
    ({"a": {"b": 1}}, ValidationError),
    ({1: [1, 2]}, InputTypeError),
    ({"zip": [{"zip": [1]}]}, ValidationError),
    ([1, 2], InputTypeError),
])
def test_bad_grids_are_refused(grid, error):
    with pytest.raises(error):
        G.configurations(G.normalize(grid))


def test_known_names_get_a_did_you_mean():
    with pytest.raises(UnknownNameError, match="gamma"):
        G.normalize({"gamam": [1]}, known=["gamma", "K"])


@settings(max_examples=30, deadline=None)
@given(a=st.lists(st.floats(-5, 5), min_size=1, max_size=3, unique=True),
       b=st.lists(st.floats(-5, 5), min_size=1, max_size=2, unique=True),
       seeds=st.lists(st.integers(0, 1000), min_size=1, max_size=4, unique=True))
def test_evaluate_equals_the_hand_loop(a, b, seeds):
    ev = evaluate(noisy_output, {"a": a, "b": b}, seeds)
    assert ev.configurations == [{"a": x, "b": y} for x in a for y in b]
    for x in a:
        for y in b:
            loop = np.stack([noisy_output(s, x, y) for s in seeds])
            assert np.array_equal(ev.stack(a=x, b=y), loop)
            est, ref = ev.estimate(a=x, b=y), mean_ci(loop)
            assert np.array_equal(est.mean, ref.mean) and np.array_equal(est.high, ref.high)


def test_dict_and_tuple_outputs_stack_per_entry():
    ev = evaluate(lambda seed, k: {"x": np.full(2, seed * k), "pair": (seed, torch.tensor([k]))},
                  {"k": [1.0, 2.0]}, seeds=[4, 5])
    out = ev.stack(k=2.0)
    assert np.array_equal(out["x"], [[8.0, 8.0], [10.0, 10.0]])
    assert np.array_equal(out["pair"][0], [4, 5]) and out["pair"][1].shape == (2, 1)
    est = ev.estimate(k=1.0)
    assert float(est["pair"][0].mean) == 4.5
    assert [c for c, _ in ev.items()] == [{"k": 1.0}, {"k": 2.0}]


def test_bad_uses_are_one_line_errors():
    ev = evaluate(lambda seed, k: np.zeros(seed + 1), {"k": [1]}, seeds=2)
    with pytest.raises(ValidationError, match="one shape"):
        ev.stack(k=1)
    with pytest.raises(ValidationError, match="no configuration"):
        ev.stack(k=3)
    with pytest.raises(ValidationError, match="seeds argument"):
        evaluate(noisy_output, {"seed": [1, 2]})
    with pytest.raises(InputTypeError, match="callable"):
        evaluate(3.0)
    with pytest.raises(ValidationError, match="cannot take"):
        evaluate(noisy_output, {"a": 1, "c": 2})
    with pytest.raises(ValidationError, match="cannot take"):
        runs(lambda seed: None, 3, {"lr": [0.1]})
    with pytest.raises(ValidationError):
        evaluate(noisy_output, {"a": 1, "b": 2}, seeds=0)
    with pytest.raises(InputTypeError, match="Executor"):
        with using("ray"):
            pass


def test_monte_carlo_is_evaluate_without_a_grid():
    est = monte_carlo(lambda s: noisy_output(s, 1.0, 2.0), 6)
    ref = evaluate(noisy_output, {"a": 1.0, "b": 2.0}, 6).estimate(a=1.0, b=2.0)
    assert np.array_equal(est.mean, ref.mean) and np.array_equal(est.low, ref.low)


def test_the_default_executor_is_embedded_and_using_restores_it():
    from fedbound.sweep.executor import current

    assert current() == Executor()
    with using(Executor(ray=False)) as chosen:
        assert current() is chosen
    assert current() == Executor()


@pytest.fixture(scope="module")
def noisy_task():
    return LeastSquares.generate(8, 6, 4, seed=1).with_noise(0.3)


def make_fedavg(task):
    return lambda seed, lr, local_steps=3: registry.build("fedavg", task, seed=seed, lr=lr,
                                                          local_steps=local_steps, clients_per_round=4)


def test_runs_batch_seeds_bitwise_like_single_runs(noisy_task):
    make = make_fedavg(noisy_task)
    assert batchable(make(0, 0.05))
    ev = runs(make, 15, {"lr": [0.02, 0.05], "local_steps": [1, 3]}, seeds=[3, 0, 9])
    for c in ev.configurations:
        stacked = ev.stack(**c)
        for i, seed in enumerate(ev.seeds):
            single = run(make(seed, **c), 15).columns()
            for key, value in single.items():
                assert np.array_equal(stacked[key][i], value, equal_nan=True), (c, seed, key)


def test_runs_of_an_algorithm_that_does_not_batch(noisy_task):
    from fedbound.network import Network

    net = Network.from_topology("ring", 2, 4)
    make = lambda seed, gamma: registry.build("sdgt", noisy_task, net, seed=seed, lr=gamma, local_steps=2, clients_per_subnet=2)
    assert not batchable(make(0, 0.02))
    ev = runs(make, 10, {"gamma": [0.02]}, seeds=2)
    assert np.array_equal(ev.stack(gamma=0.02)["dist2"][1], run(make(1, 0.02), 10).columns()["dist2"])


def test_a_diverged_run_is_recorded_and_refused_when_read(noisy_task):
    ev = runs(make_fedavg(noisy_task), 200, {"lr": [0.05, 40.0]}, seeds=2)
    assert ev.stack(lr=0.05)["loss"].shape == (2, 201)
    assert {c for c, _ in ev.failures} == {1} and len(ev.failures) == 2
    with pytest.raises(FedboundError, match="diverged"):
        ev.stack(lr=40.0)


def test_runs_refuses_what_is_not_an_algorithm():
    with pytest.raises(InputTypeError, match="algorithm"):
        runs(lambda seed: 3, 5)


def test_run_cells_batches_only_algorithms_that_batch(noisy_task):
    """Several algorithms that do not batch (per-client state) run one by one, not as one batch."""
    from fedbound.sweep.batch import run_cells

    algs = [registry.build("scaffold-fl", noisy_task, seed=s, lr=0.05, local_steps=3,
                           clients_per_round=4) for s in (0, 1)]
    assert not any(batchable(a) for a in algs)
    for alg, (status, cols, _, _) in zip(algs, run_cells(algs, 8)):
        assert status == "done"
        assert np.array_equal(cols["dist2"], run(alg, 8).columns()["dist2"])
