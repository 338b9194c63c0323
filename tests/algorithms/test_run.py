"""The run loop: bitwise reproducibility, pure steps, divergence detection, the callback hook."""
import dataclasses

import numpy as np
import pytest
import torch

from fedbound.algorithms import (
    SCAFFOLD, SDGT, GradientTracking, Scaffnew, SDFedAvg, check_finite, run,
)
from fedbound.algorithms import registry
from fedbound.algorithms.client_rows import ClientRows
from fedbound.errors import DivergenceError, ValidationError

SIZES = (3, 4, 5)


def build(name, task, make_network, seed=0, gamma=0.05):
    network = make_network(SIZES)
    return {
        "SD-GT": lambda: SDGT(task, network, lr=gamma, local_steps=3, clients_per_subnet=[1, 2, 2], seed=seed),
        "SD-FedAvg": lambda: SDFedAvg(task, network, lr=gamma, local_steps=3, clients_per_subnet=[1, 2, 2], seed=seed),
        "SCAFFOLD": lambda: SCAFFOLD(task, lr=gamma, local_steps=3, network=network, clients_per_subnet=[1, 2, 2],
                                     seed=seed),
        "Scaffnew": lambda: Scaffnew(task, lr=gamma, local_steps=3, seed=seed),
        "ATC-GT": lambda: GradientTracking(task, make_network([12]), lr=gamma, seed=seed),
    }[name]()


def tensors(state):
    values = {f.name: getattr(state, f.name) for f in dataclasses.fields(state)}
    return {name: value.dense() if isinstance(value, ClientRows) else value
            for name, value in values.items() if isinstance(value, (torch.Tensor, ClientRows))}


NAMES = ["SD-GT", "SD-FedAvg", "SCAFFOLD", "Scaffnew", "ATC-GT"]


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_gives_a_bitwise_identical_run(make_network, make_quadratic, name):
    task = make_quadratic(12, 5, seed=1, sigma=0.3)
    a = run(build(name, task, make_network, seed=7), 15)
    b = run(build(name, task, make_network, seed=7), 15)
    c = run(build(name, task, make_network, seed=8), 15)
    assert torch.equal(a.x_g, b.x_g)
    for key, value in tensors(a.final_state).items():
        assert torch.equal(value, tensors(b.final_state)[key]), key
    assert not torch.equal(a.x_g, c.x_g)
    assert all(np.array_equal(a.comm[k], b.comm[k]) for k in a.comm)


@pytest.mark.parametrize("name", NAMES)
def test_step_is_a_pure_function_of_the_state(make_network, make_quadratic, name):
    task = make_quadratic(12, 5, seed=1, sigma=0.3)
    alg = build(name, task, make_network)
    state = alg.step(alg.init())
    first, second = alg.step(state), alg.step(state)
    for key, value in tensors(first).items():
        assert torch.equal(value, tensors(second)[key]), key


@pytest.mark.parametrize("name", NAMES)
def test_divergence_stops_the_run_and_names_the_round(make_network, make_quadratic, name):
    task = make_quadratic(12, 5, seed=1)
    alg = build(name, task, make_network, gamma=50.0)
    with pytest.raises(DivergenceError, match=r"diverged at round \d+") as info:
        run(alg, 10_000)
    assert 1 <= info.value.round_index < 10_000
    assert f"round {info.value.round_index}:" in str(info.value)


def test_a_metric_that_overflows_is_a_divergence():
    """Finite models so far apart that a per-round metric overflows (CAFGA's consensus errors at
    lr = 1e200; found by the fuzz suite as NaN/inf metrics in a returned trajectory)."""
    from fedbound.algorithms import registry
    from fedbound.tasks import LeastSquares

    alg = registry.build("cafga-a", LeastSquares.generate(10, 4, 3, seed=0), seed=0, lr=1e200)
    with pytest.raises(DivergenceError, match=r"diverged at round 1: the metric consensus_\w+ = inf"):
        run(alg, 2)


@pytest.mark.parametrize("lr", [5.0, 1e50])
def test_a_global_metric_that_overflows_is_named_by_its_round(lr):
    """f(x_g) overflows while x_g is still finite (|x_g| ~ 1e160): the run names that round, the
    first whose loss is not finite, though it evaluates the metrics in chunks of METRIC_CHUNK
    rounds, and also when the model itself overflows a few rounds later in the same chunk
    (lr = 1e50)."""
    from fedbound.algorithms import registry
    from fedbound.algorithms.run import METRIC_CHUNK
    from fedbound.tasks import LeastSquares

    task = LeastSquares.generate(10, 4, 3, seed=0)
    alg = registry.build("fedavg", task, seed=0, lr=lr, local_steps=1)
    state, first = alg.init(), None
    while first is None:   # the round by hand: step, evaluate, stop at the first infinite loss
        state = alg.step(state)
        if not bool(torch.isfinite(task.global_metrics(state.x_g[None])[0]).all()):
            first = state.t
    assert bool(torch.isfinite(state.x_g).all())
    while bool(torch.isfinite(state.x_g).all()):
        state = alg.step(state)
    end_of_chunk = (first // METRIC_CHUNK + 1) * METRIC_CHUNK
    if lr == 5.0:    # the chunk evaluation finds it, the model still finite
        assert first > 2 * METRIC_CHUNK and state.t > end_of_chunk
    else:            # the model overflows before the chunk is evaluated
        assert state.t < end_of_chunk
    with pytest.raises(DivergenceError, match=rf"diverged at round {first}: f\(x_g\) = inf") as info:
        run(alg, first + 3 * METRIC_CHUNK)
    assert info.value.round_index == first


def test_check_finite_accepts_finite_and_flags_nan(make_network, make_quadratic):
    task = make_quadratic(12, 5)
    alg = SDGT(task, make_network(SIZES), lr=0.05, local_steps=2)
    state = alg.init()
    check_finite(state, alg.name)
    bad = dataclasses.replace(state, Z=state.Z.clone().index_fill_(0, torch.tensor([3]), np.nan))
    with pytest.raises(DivergenceError, match="SD-GT diverged at round 0: state Z"):
        check_finite(bad, alg.name)


def test_callback_overrides_the_next_round_and_metrics_are_recorded(make_network, make_quadratic):
    task = make_quadratic(12, 5, seed=1)
    alg = SDGT(task, make_network(SIZES), lr=0.05, local_steps=2)
    traj = run(alg, 4, callback=lambda state: {"K": state.t + 2})
    assert traj.K.tolist() == [0, 2, 3, 4, 5]
    assert traj.rounds.tolist() == [0, 1, 2, 3, 4] and traj.x_g.shape == (5, 5)
    x = traj.x_g[-1]
    assert traj.loss_gap[-1] == pytest.approx(task.loss(x) - task.f_star, abs=1e-14)
    assert traj.dist2[-1] == pytest.approx(float(torch.sum((x - task.x_star) ** 2)), rel=1e-14)
    assert traj.grad_norm2[-1] == pytest.approx(float(torch.sum(task.global_grad(x) ** 2)),
                                                rel=1e-14)
    assert set(traj.to_dict()) >= {"loss", "loss_gap", "dist2", "grad_norm2", "K", "comm"}


def test_run_validates_rounds(make_network, make_quadratic):
    alg = SDGT(make_quadratic(12, 5), make_network(SIZES), lr=0.05, local_steps=2)
    with pytest.raises(ValidationError, match="rounds must be"):
        run(alg, -1)


@pytest.mark.parametrize("name", NAMES)
def test_float32_tasks_run_in_float32(make_network, name):
    from fedbound.tasks import Quadratic
    task = Quadratic.generate(12, 5, kappa=4.0, mu=0.5, seed=1, dtype=torch.float32)
    traj = run(build(name, task, make_network), 50)
    assert all(t.dtype == torch.float32 for t in tensors(traj.final_state).values()
               if t.is_floating_point())
    assert traj.dist2[-1] < traj.dist2[0]


@pytest.mark.parametrize("every", [1, 3, 4, 20])
def test_eval_every_evaluates_on_its_schedule_and_changes_nothing_else(make_network, make_quadratic,
                                                                      every):
    """Metrics on a schedule (issue 24): the same run (one process, the same arithmetic: equal
    bitwise), the global model's metrics at r % every == 0 and at the last round, nan elsewhere."""
    task = make_quadratic(12, 5, seed=1, sigma=0.3)
    full = run(build("SD-GT", task, make_network, seed=3), 10)
    sparse = run(build("SD-GT", task, make_network, seed=3), 10, eval_every=every)
    assert torch.equal(full.x_g, sparse.x_g) and sparse.eval_every == every
    assert all(np.array_equal(full.comm[k], sparse.comm[k]) for k in full.comm)
    due = (full.rounds % every == 0) | (full.rounds == 10)
    for metric in ("loss", "loss_gap", "dist2", "grad_norm2"):
        np.testing.assert_array_equal(getattr(sparse, metric)[due], getattr(full, metric)[due])
        assert np.all(np.isnan(getattr(sparse, metric)[~due])), metric
    with pytest.raises(ValidationError, match="eval_every must be an integer >= 1, got 0"):
        run(build("SD-GT", task, make_network), 3, eval_every=0)


def test_metrics_holds_every_per_round_metric():
    """Trajectory.metrics: the global model's four metrics and the algorithm's own, by name (issue
    33: it was empty while traj.dist2 held the distance); the repr is one short line."""
    from fedbound.tasks import Quadratic

    task = Quadratic.generate(6, 3, kappa=4.0, mu=0.5, seed=0)
    traj = run(registry.build("afga", task, lr=0.05, local_steps=2, clients_per_round=3, server_lr=0.05), 4)
    assert set(traj.metrics) == {"loss", "loss_gap", "dist2", "grad_norm2", *traj.algorithm_metrics}
    assert traj.algorithm_metrics and traj.metrics["dist2"] is traj.dist2
    for name, values in traj.algorithm_metrics.items():
        assert traj.metrics[name] is values
    assert len(repr(traj)) < 120 and "\n" not in repr(traj)


def test_growth_names_the_first_error_that_grew_past_the_threshold():
    """Trajectory.growth: the first of f - f*, ||x_g - x*||^2, ||grad f||^2 (known and positive at
    round 0) that ends at least GROWTH_NOTED times above its round-0 value, with its exact factor; at
    the threshold it is noted, just under it not; a converging run and unknown errors give None."""
    from fedbound.tasks import make_task

    task = make_task("lsq", n=6, d=4, float64=True)
    grows = run(registry.build("fedavg", task, lr=10.0), 5)
    metric, factor = grows.growth()
    assert metric == "loss_gap" and factor >= grows.GROWTH_NOTED
    assert factor == pytest.approx(grows.loss_gap[-1] / grows.loss_gap[0], rel=1e-12)
    assert grows.growth_words().startswith("f - f* grew by a factor of 10^")
    assert "the run diverges" in grows._repr_html_()
    converges = run(registry.build("fedavg", task, lr=0.01), 5)
    assert converges.growth() is None and converges.growth_words() is None
    nan = np.full(2, np.nan)
    at = dataclasses.replace(converges, rounds=np.arange(2), loss_gap=np.array([2.0, 2e6]), dist2=nan,
                             grad_norm2=np.array([1.0, 1e9]))
    assert at.growth() == ("loss_gap", 1e6)
    under = dataclasses.replace(at, loss_gap=np.array([2.0, 2e6 * (1 - 1e-9)]))
    assert under.growth() == ("grad_norm2", 1e9)
    unknown = dataclasses.replace(at, loss_gap=nan, grad_norm2=np.array([0.0, 5.0]))
    assert unknown.growth() is None
