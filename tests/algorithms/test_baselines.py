"""Baselines: SD-FedAvg's heterogeneity bias, its options, SCAFFOLD, Scaffnew, ATC-GT."""
import pytest
import torch

from fedbound.algorithms import SCAFFOLD, SDGT, GradientTracking, Scaffnew, SDFedAvg, run

SIZES = (3, 4, 5)


def test_sd_fedavg_plateaus_at_a_bias_while_sdgt_converges(make_network, make_quadratic):
    task = make_quadratic(12, 5, seed=1)
    network = make_network(SIZES)
    fedavg = run(SDFedAvg(task, network, lr=0.05, local_steps=5), 300)
    sdgt = run(SDGT(task, network, lr=0.05, local_steps=5), 300)
    assert sdgt.dist2[-1] <= 1e-20
    assert fedavg.dist2[-1] > 1e-6                                          # bias
    assert abs(fedavg.dist2[-1] - fedavg.dist2[-20]) <= 1e-10 * fedavg.dist2[-1]  # plateau


def test_sd_fedavg_bias_comes_from_heterogeneity(make_network, make_quadratic):
    task = make_quadratic(12, 5, seed=1, heterogeneity=0.0)
    traj = run(SDFedAvg(task, make_network(SIZES), lr=0.05, local_steps=5), 300)
    assert traj.dist2[-1] <= 1e-20


def test_sd_fedavg_options_coincide_under_full_participation(make_network, make_quadratic):
    task = make_quadratic(12, 5, seed=2)
    network = make_network(SIZES)
    base = run(SDFedAvg(task, network, lr=0.05, local_steps=3), 30)
    for options in ({"aggregation": "absolute"}, {"reset": "all"}):
        other = run(SDFedAvg(task, network, lr=0.05, local_steps=3, **options), 30)
        assert torch.max(torch.abs(base.x_g - other.x_g)) <= 1e-12


def test_sd_fedavg_reset_rules_with_partial_sampling(make_network, make_quadratic):
    task = make_quadratic(12, 5, seed=3)
    network = make_network(SIZES)
    for reset in ("sampled", "all"):
        alg = SDFedAvg(task, network, lr=0.05, local_steps=3, clients_per_subnet=[1, 2, 2], reset=reset, seed=4)
        state = alg.step(alg.step(alg.init()))
        m = state.mask
        assert torch.equal(state.X[m], state.x_g.expand(int(m.sum()), -1))
        rest = state.X[~m]
        expected = state.X_end[~m] if reset == "sampled" else state.x_g.expand_as(rest)
        assert torch.equal(rest, expected)


@pytest.mark.parametrize("sampling", ["subnets", "uniform", "full"])
def test_scaffold_converges_exactly_and_keeps_c_the_mean_of_c_i(make_network, make_quadratic,
                                                               sampling):
    task = make_quadratic(12, 5, seed=1)
    kwargs = {"subnets": {"network": make_network(SIZES), "h": [1, 2, 2]},
              "uniform": {"h": 5}, "full": {}}[sampling]
    alg = SCAFFOLD(task, lr=0.05, local_steps=3, seed=1, **kwargs)
    state = alg.init()
    for _ in range(200):
        state = alg.step(state)
        assert torch.max(torch.abs(state.c - state.C.dense().mean(dim=0))) <= 1e-12
    assert float(torch.sum((state.x_g - task.x_star) ** 2)) <= 1e-20


def test_scaffnew_converges_exactly(make_quadratic):
    task = make_quadratic(12, 5, seed=1)
    traj = run(Scaffnew(task, lr=0.05, local_steps=4), 150)
    assert traj.dist2[-1] <= 1e-20


def test_gradient_tracking_converges_exactly(make_network, make_quadratic):
    task = make_quadratic(12, 5, seed=1)
    traj = run(GradientTracking(task, make_network([12], "complete"), lr=0.1), 300)
    assert traj.dist2[-1] <= 1e-20
