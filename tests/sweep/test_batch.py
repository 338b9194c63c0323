"""Seeds batched like clients reproduce their single runs bitwise, for every registered algorithm
that batches (registry-driven: a new template algorithm is covered without editing this file)."""
import functools

import numpy as np
import pytest

from fedbound.algorithms import registry, run
from fedbound.sweep import runner
from fedbound.sweep.batch import batchable, run_seeds
from fedbound.tasks import LeastSquares, Quadratic

#: values for required options of the registry (by option name); others: 0.05 (float), 2 (int)
REQUIRED = {"lr": 0.05, "mu": 0.1, "gamma": 0.01}
#: the algorithms this module's docstring claims batch
CLAIMED = {"fedavg", "fedprox", "fedavgm", "fedadagrad", "fedadam", "fedyogi"}
SEEDS = (3, 0, 7, 11)
ROUNDS = 12


def options_for(spec, task):
    out = {}
    for o in spec.options:
        if o.required:
            out[o.name] = REQUIRED.get(o.name, 0.05 if o.parse is float else 2)
    names = {o.name for o in spec.options}
    if "local_steps" in names:
        out["local_steps"] = 3
    if "clients_per_round" in names:
        out["clients_per_round"] = task.n // 2
    return out


def built(name, task, seeds):
    spec = registry.get(name)
    if spec.network != "none":
        return None
    return [registry.build(name, task, seed=s, **options_for(spec, task)) for s in seeds]


def assert_close(single: dict, batched: dict):
    """Every column bitwise equal (NaN where the single run has NaN)."""
    assert single.keys() == batched.keys()
    for key, a in single.items():
        b = batched[key]
        assert a.shape == b.shape, key
        assert np.array_equal(a, b, equal_nan=True), \
            f"{key}: batched differs from the single run by up to {np.nanmax(np.abs(a - b)):.3g}"


@functools.lru_cache
def make(kind: str):
    if kind == "lsq":
        return LeastSquares.generate(8, 6, 4, seed=1)
    return Quadratic.generate(8, 4, kappa=5.0, mu=0.5, seed=2)


@pytest.mark.parametrize("kind,sigma", [("lsq", 0.0), ("lsq", 0.3), ("quadratic", 0.3)])
@pytest.mark.parametrize("name", registry.names())
def test_batched_seeds_match_single_runs(name, kind, sigma):
    task = make(kind)
    noisy = task.with_noise(sigma) if sigma > 0 else task
    algs = built(name, noisy, SEEDS)
    if algs is None or not batchable(algs[0]):
        assert name not in CLAIMED, f"{name} is documented to batch"
        return
    for alg, cols in zip(algs, run_seeds(algs, ROUNDS)):
        assert_close(run(alg, ROUNDS).columns(), cols)


def test_the_documented_algorithms_batch_and_sdgt_does_not():
    task = LeastSquares.generate(8, 6, 4, seed=1)
    got = {n for n in registry.names() if (a := built(n, task, [0])) is not None and batchable(a[0])}
    assert CLAIMED <= got
    assert "sdgt" not in got


def test_uneven_local_steps_do_not_batch():
    task = LeastSquares.generate(8, 6, 4, seed=1)
    alg = registry.build("fedavg", task, lr=0.05, local_steps=2)
    assert batchable(alg)
    from fedbound.algorithms import FedAvg
    assert not batchable(FedAvg(task, lr=0.05, local_steps=np.arange(1, 9)))


def test_a_diverging_seed_in_a_batch_falls_back_to_single_runs():
    """A batch with a non-finite value reruns its seeds one by one: the diverged cells carry the
    single run's message (with its round), the others the single run's metrics."""
    text = ('{"algorithm": "fedavg", "task": {"name": "lsq", "n": 6, "d": 3, "rows": 5}, "rounds": 40, '
            '"grid": {"lr": 40.0, "local_steps": 4, "clients_per_round": 3, "seed": [0, 1, 2, 3]}}')
    spec = runner.spec_mod.loads(text)
    cells = [(i, c.key) for i, c in enumerate(spec.cells)]
    results = runner.compute(spec.canonical, cells)
    problem = runner.Problem(spec)
    for (_, key), result in zip(cells, results):
        alg = problem.algorithm(runner.spec_mod.Cell.from_key(key))
        try:
            single = run(alg, spec.rounds).columns()
        except Exception as exc:  # noqa: BLE001 - compared with the batch's record
            assert result.status == "diverged" and result.error == str(exc)
        else:
            assert result.status == "done"
            assert_close(single, result.columns)
    assert any(r.status == "diverged" for r in results)


def test_batches_are_bounded_by_seeds_and_memory():
    from fedbound.algorithms.federated.seeds import BATCH_BYTES, MAX_SEEDS, seeds_per_batch

    small = LeastSquares.generate(10, 20, 5, seed=0)
    assert seeds_per_batch(small, 50) == MAX_SEEDS
    big = LeastSquares.generate(200, 50, 100, seed=0)
    size = seeds_per_batch(big, 100)
    assert 1 <= size < MAX_SEEDS and size * 2 * big.client_bytes * big.n <= BATCH_BYTES


def test_a_server_transform_that_reduces_over_the_model_does_not_batch():
    """A server step scaled by the whole model's gradient norm is not row by row on a (B, d)
    stack: the probe sees it and the algorithm runs one seed at a time."""
    import torch

    from fedbound.algorithms import Federated
    from fedbound.algorithms.optim import client, server
    from fedbound.algorithms.optim.base import Transform

    task = LeastSquares.generate(8, 6, 4, seed=1)
    normalized = Transform(lambda params: (), lambda g, state, params: (-g / torch.linalg.norm(g), state))
    assert batchable(Federated(task, client=client.sgd(0.1), server=server.sgd(1.0)))
    assert not batchable(Federated(task, client=client.sgd(0.1), server=normalized))


@pytest.mark.parametrize("sigma", [0.0, 0.3])
def test_seeds_aggregated_one_by_one_match_single_runs(monkeypatch, sigma):
    """The weighted mean is one batched product over the seeds only where a probe shows it gives
    each seed's own product bitwise; the seed-by-seed aggregation it falls back to (another BLAS)
    reproduces the single runs too."""
    from fedbound.algorithms.federated import seeds

    monkeypatch.setattr(seeds, "_mean_in_one_product", lambda *args: False)
    task = make("lsq").with_noise(sigma) if sigma else make("lsq")
    algs = [registry.build("fedavg", task, seed=s, lr=0.05, local_steps=3, clients_per_round=4)
            for s in SEEDS]
    for alg, cols in zip(algs, run_seeds(algs, ROUNDS)):
        assert_close(run(alg, ROUNDS).columns(), cols)


def test_seeds_sampled_per_group_match_single_runs():
    """Uniform participation per group of clients (q_s of each group, not drawn together by
    draw_each) batches seed by seed and reproduces the single runs."""
    from fedbound.algorithms import FedAvg
    from fedbound.network.sampling import UniformParticipation

    task = make("lsq").with_noise(0.3)
    algs = [FedAvg(task, lr=0.05, local_steps=2, seed=s,
                   participation=UniformParticipation(8, [1, 2], sizes=np.array([4, 4])))
            for s in SEEDS]
    assert batchable(algs[0])
    for alg, cols in zip(algs, run_seeds(algs, ROUNDS)):
        assert_close(run(alg, ROUNDS).columns(), cols)
