"""Communication counters against hand counts from the graphs' edge numbers."""
import numpy as np
import pytest

from fedbound.algorithms import (
    SCAFFOLD, SDGT, EnergyModel, GradientTracking, Scaffnew, SDFedAvg, run,
)


def edges(topology, m):
    """Undirected edges of a ring (a cycle for m >= 3, one edge for m = 2) or a complete graph."""
    if topology == "ring":
        return m if m >= 3 else m - 1
    return m * (m - 1) // 2


@pytest.mark.parametrize("topology", ["ring", "complete"])
def test_sdgt_counters_match_hand_counts(make_network, make_quadratic, topology):
    sizes, h, K, T, d = [2, 4, 5], [1, 2, 5], 3, 4, 6
    directed = 2 * sum(edges(topology, m) for m in sizes)
    E_ds, E_d2d = np.array([10.0, 20.0, 40.0]), np.array([0.5, 1.0, 2.0])
    alg = SDGT(make_quadratic(sum(sizes), d), make_network(sizes, topology), lr=0.05, local_steps=K,
               clients_per_subnet=h, energy=EnergyModel(E_ds, E_d2d))
    traj = run(alg, T)
    c = traj.comm
    assert c["d2d_exchanges"][-1] == T * (K + 1)
    assert c["d2d_messages"][-1] == T * (K + 1) * directed
    assert c["d2d_floats"][-1] == T * (K + 1) * directed * d
    assert c["uploads"][-1] == T * sum(h) and c["upload_floats"][-1] == T * sum(h) * d
    assert c["downloads"][-1] == T * sum(h) and c["download_floats"][-1] == T * sum(h) * 2 * d
    per_round = (1 / 2 * 10 + 2 / 4 * 20 + 5 / 5 * 40) + K * (0.5 + 1.0 + 2.0)
    assert c["energy"][-1] == pytest.approx(T * per_round, rel=1e-14)
    assert c["d2d_messages"][0] == 0 and np.all(np.diff(c["d2d_messages"]) == (K + 1) * directed)


def test_time_varying_K_and_charged_tracking_exchange(make_network, make_quadratic):
    sizes, Ks = [3, 3], [1, 4, 2]
    alg = SDGT(make_quadratic(6, 3), make_network(sizes), lr=0.05, local_steps=2,
               energy=EnergyModel([1.0, 1.0], [1.0, 3.0], charge_tracking_exchanges=True))
    state = alg.init()
    for K in Ks:
        state = alg.step(state, local_steps=K)
    directed = 2 * sum(edges("ring", m) for m in sizes)
    assert state.comm.d2d_messages == sum(K + 1 for K in Ks) * directed
    assert state.comm.energy_d2d == pytest.approx(sum(K + 1 for K in Ks) * (1.0 + 3.0))
    assert state.comm.energy_ds == pytest.approx(len(Ks) * 2.0)
    assert state.last_comm.d2d_exchanges == Ks[-1] + 1


def test_baseline_counters(make_network, make_quadratic):
    sizes, d, K, T = [3, 5], 4, 3, 2
    task = make_quadratic(8, d)
    network = make_network(sizes)
    directed = 2 * sum(edges("ring", m) for m in sizes)
    fedavg = run(SDFedAvg(task, network, lr=0.05, local_steps=K, clients_per_subnet=[1, 2], reset="all"), T).comm
    assert fedavg["d2d_messages"][-1] == T * K * directed
    assert fedavg["uploads"][-1] == T * 3 and fedavg["downloads"][-1] == T * 8
    assert fedavg["download_floats"][-1] == T * 8 * d
    scaffold = run(SCAFFOLD(task, lr=0.05, local_steps=K, network=network, clients_per_subnet=[1, 2]), T).comm
    assert scaffold["d2d_messages"][-1] == 0
    assert scaffold["upload_floats"][-1] == T * 3 * 2 * d
    assert scaffold["download_floats"][-1] == T * 3 * 2 * d
    assert scaffold["energy_d2d"][-1] == 0.0
    assert scaffold["energy_ds"][-1] == pytest.approx(T * (1 / 3 + 2 / 5))
    scaffnew = run(Scaffnew(task, lr=0.05, local_steps=K), T).comm
    assert scaffnew["uploads"][-1] == T * 8 and scaffnew["energy_ds"][-1] == pytest.approx(T * 8)
    gt = run(GradientTracking(task, make_network([8], "complete"), lr=0.05), T).comm
    assert gt["d2d_messages"][-1] == T * 2 * 2 * edges("complete", 8)
    assert gt["uploads"][-1] == 0 and gt["energy_d2d"][-1] == pytest.approx(T * 1.0)
