"""The federated round template and the FedOpt family: equality with a plain numpy FedAvg, every
degenerate case in which one algorithm reduces to another, heterogeneous local steps against a
per-client loop, gossip and compute sets, control variates against SCAFFOLD, accounting."""
import numpy as np
import pytest
import torch

from fedbound.algorithms import (SCAFFOLD, ControlVariates, EpochSteps, FedAdagrad, FedAdam, FedAvg,
                                 FedAvgM, FedProx, FedYogi, Federated, Normalized, RandomSteps,
                                 ScaffoldFL, run)
from fedbound.algorithms.optim import client, server
from fedbound.network import Network
from fedbound.network.sampling import WithReplacement
from fedbound.tasks import LeastSquares, LogisticRegression

N, M, D = 10, 6, 4


@pytest.fixture(scope="module")
def lsq():
    return LeastSquares.generate(N, M, D, seed=0)


def numpy_fedavg(A, y, x0, lr, K, rounds_clients):
    """FedAvg as in McMahan et al.: each sampled client runs K full-gradient steps on
    f_i = 1/(2m)||A_i x - y_i||^2 from x, the server averages the sampled models."""
    m = A.shape[1]
    x = x0.copy()
    for clients in rounds_clients:
        models = []
        for i in clients:
            xi = x.copy()
            for _ in range(K):
                xi = xi - lr * A[i].T @ (A[i] @ xi - y[i]) / m
            models.append(xi)
        x = np.mean(models, axis=0)
    return x


@pytest.mark.parametrize("clients_per_round", [3, N])
def test_fedavg_equals_a_plain_numpy_fedavg(lsq, clients_per_round):
    alg = FedAvg(lsq, lr=0.1, local_steps=4, clients_per_round=clients_per_round, seed=3)
    state, sampled = alg.init(), []
    for _ in range(6):
        state = alg.step(state)
        sampled.append(state.clients.numpy())
        assert len(set(sampled[-1].tolist())) == clients_per_round
    expected = numpy_fedavg(lsq.A.numpy(), lsq.y.numpy(), lsq.x0.numpy(), 0.1, 4, sampled)
    np.testing.assert_allclose(state.x_g.numpy(), expected, rtol=0, atol=1e-12)


def trajectories_equal(a, b, rounds=5):
    ta, tb = run(a, rounds), run(b, rounds)
    return torch.equal(ta.x_g, tb.x_g)


def test_fedprox_with_mu_zero_and_fedavgm_with_momentum_zero_are_fedavg(lsq):
    noisy = lsq.with_noise(0.3)
    common = {"lr": 0.05, "local_steps": 3, "clients_per_round": 4, "seed": 1}
    fedavg = FedAvg(noisy, **common)
    assert trajectories_equal(FedProx(noisy, proximal_mu=0.0, **common), fedavg)
    assert trajectories_equal(FedAvgM(noisy, server_momentum=0.0, **common), fedavg)
    assert not trajectories_equal(FedProx(noisy, proximal_mu=0.5, **common), fedavg)


def test_fedavgm_server_lr_scales_the_step_of_fedavg(lsq):
    """One round: FedAvgM (any momentum) and FedAvg with server_lr eta both give x + eta Delta."""
    a = FedAvg(lsq, lr=0.05, local_steps=3, server_lr=0.5)
    b = FedAvgM(lsq, lr=0.05, local_steps=3, server_lr=0.5, server_momentum=0.9)
    torch.testing.assert_close(a.step(a.init()).x_g, b.step(b.init()).x_g, rtol=0, atol=1e-15)


def test_one_local_step_with_full_participation_is_gradient_descent(lsq):
    alg = FedAvg(lsq, lr=0.1, local_steps=1)
    state, x = alg.init(), lsq.x0.clone()
    for _ in range(5):
        state = alg.step(state)
        x = x - 0.1 * lsq.global_grad(x)
    torch.testing.assert_close(state.x_g, x, rtol=0, atol=1e-12)


def test_fedyogi_and_fedadam_agree_on_the_first_round(lsq):
    """From v_0 = 0 Yogi's v_1 = v_0 - (1 - b2) g^2 sign(v_0 - g^2) = (1 - b2) g^2 = Adam's v_1."""
    options = {"lr": 0.05, "local_steps": 2, "server_lr": 0.1, "beta1": 0.9, "beta2": 0.99, "tau": 1e-3}
    a, b = FedAdam(lsq, **options), FedYogi(lsq, **options)
    torch.testing.assert_close(a.step(a.init()).x_g, b.step(b.init()).x_g, rtol=0, atol=1e-15)
    assert not torch.equal(run(a, 3).x_g[-1], run(b, 3).x_g[-1])


def test_fedadagrad_first_round_is_a_sign_step(lsq):
    """v_1 = g^2, m_1 = g (beta1 = 0): x_1 = x_0 - eta g / (|g| + tau)."""
    alg = FedAdagrad(lsq, lr=0.05, local_steps=2, server_lr=0.1, tau=1e-9)
    avg = FedAvg(lsq, lr=0.05, local_steps=2)
    g = lsq.x0 - avg.step(avg.init()).x_g
    torch.testing.assert_close(alg.step(alg.init()).x_g, lsq.x0 - 0.1 * g / (g.abs() + 1e-9),
                               rtol=0, atol=1e-14)


def test_normalized_averaging_with_equal_steps_is_the_weighted_mean(lsq):
    """FedNova = FedAvg when all tau_i are equal and the solver is the same [001 L83]."""
    common = {"client": client.momentum(0.05, 0.5), "server": server.sgd(1.0), "local_steps": 3,
              "clients_per_round": 4, "seed": 2}
    plain, nova = Federated(lsq, **common), Federated(lsq, aggregation=Normalized(), **common)
    torch.testing.assert_close(run(plain, 4).x_g, run(nova, 4).x_g, rtol=0, atol=1e-13)


def test_normalized_averaging_rescales_each_update_by_tau_eff_over_tau_i(lsq):
    """SGD clients: Delta = (sum_j w_j tau_j) sum_i w_i Delta_i / tau_i (FedNova sec. 2.5)."""
    tau = np.arange(N) % 3 + 1
    nova = Federated(lsq, client=client.sgd(0.05), server=server.sgd(1.0), local_steps=tau,
                     aggregation=Normalized())
    plain = Federated(lsq, client=client.sgd(0.05), server=server.sgd(1.0), local_steps=tau)
    X, _ = plain.local_work(lsq.x0, None, torch.as_tensor(tau), None, torch.Generator())
    w, t = lsq.weights, torch.as_tensor(tau, dtype=torch.float64)
    expected = lsq.x0 + float(w @ t) * ((w / t) @ (X - lsq.x0))
    torch.testing.assert_close(nova.step(nova.init()).x_g, expected, rtol=0, atol=1e-14)


def per_client_loop(task, x, clients, tau, lr):
    """The reference: every client alone, tau_i plain SGD steps with exact gradients."""
    out = []
    for i, steps in zip(clients.tolist(), tau.tolist()):
        xi = x.clone()
        for _ in range(steps):
            xi = xi - lr * task.grad(xi[None], clients=torch.tensor([i]))[0]
        out.append(xi)
    return torch.stack(out)


@pytest.mark.parametrize("solver", ["sgd", "prox", "momentum"])
def test_heterogeneous_local_steps_in_one_round_equal_a_per_client_loop(lsq, solver):
    tau = np.array([1, 5, 2, 3, 3, 1, 4, 2, 5, 1])
    transform = {"sgd": client.sgd(0.05), "prox": client.prox(0.05, 0.3),
                 "momentum": client.momentum(0.05, 0.7)}[solver]
    alg = Federated(lsq, client=transform, server=server.sgd(1.0), local_steps=tau,
                    clients_per_round=6, seed=4)
    state = alg.step(alg.init())
    clients = state.clients
    assert torch.equal(state.tau, torch.as_tensor(tau)[clients])
    assert state.last_comm.gradient_evaluations == int(tau[clients.numpy()].sum())
    X, grads = alg.local_work(lsq.x0, clients, state.tau, None, torch.Generator())
    assert grads == int(state.tau.sum())
    if solver == "sgd":
        expected = per_client_loop(lsq, lsq.x0, clients, state.tau, 0.05)
    else:   # the same transform, client by client, as its own one-row round
        expected = torch.cat([alg.local_work(lsq.x0, clients[j:j + 1], state.tau[j:j + 1], None,
                                             torch.Generator())[0] for j in range(6)])
    torch.testing.assert_close(X, expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(state.x_g, lsq.x0 + state.weights @ (X - lsq.x0), rtol=0, atol=1e-12)


def test_random_and_epoch_local_steps():
    task = LogisticRegression.generate(6, dim=3, num_classes=3, sizes=np.array([8, 20, 13, 5, 9, 30]))
    epochs = EpochSteps(2, task.num_examples, batch_size=4)
    assert epochs.tau.tolist() == [4, 10, 6, 2, 4, 15]
    alg = FedAvg(task, lr=0.1, local_steps=epochs, clients_per_round=3, seed=0)
    state = alg.step(alg.init())
    assert state.tau.tolist() == epochs.tau[state.clients].tolist()
    alg = FedAvg(task, lr=0.1, local_steps=RandomSteps(2, 5), seed=0)
    taus = torch.cat([s.tau for s in _states(alg, 20)])
    assert set(taus.tolist()) == {2, 3, 4, 5}
    with pytest.raises(ValueError, match="would take floor"):
        EpochSteps(0.1, task.num_examples, batch_size=4)


def _states(alg, rounds):
    state, out = alg.init(), []
    for _ in range(rounds):
        state = alg.step(state)
        out.append(state)
    return out


def numpy_scaffold(A, y, x0, lr, tau, server_lr, rounds_clients):
    """SCAFFOLD (Karimireddy et al. 2020, Alg. 1, option II), one client at a time: client i runs
    tau_i steps y <- y - lr (grad f_i(y) - c_i + c) from x; c_i^+ = c_i - c + (x - y)/(tau_i lr);
    x <- x + server_lr mean_S (y_i - x); c <- c + (1/n) sum_S (c_i^+ - c_i)."""
    n, m, d = A.shape
    x, c, C = x0.copy(), np.zeros(d), np.zeros((n, d))
    for clients in rounds_clients:
        deltas, dcs = [], []
        for i in clients:
            yi = x.copy()
            for _ in range(tau[i]):
                yi = yi - lr * (A[i].T @ (A[i] @ yi - y[i]) / m - C[i] + c)
            ci = C[i] - c + (x - yi) / (tau[i] * lr)
            deltas.append(yi - x)
            dcs.append(ci - C[i])
            C[i] = ci
        x = x + server_lr * np.mean(deltas, axis=0)
        c = c + np.sum(dcs, axis=0) / n
    return x, c, C


@pytest.mark.parametrize("clients_per_round", [4, N])
def test_scaffold_fl_equals_a_plain_numpy_scaffold_with_unequal_local_steps(lsq, clients_per_round):
    tau = np.array([1, 3, 2, 5, 4, 1, 2, 3, 6, 2])
    alg = ScaffoldFL(lsq, lr=0.05, local_steps=tau, server_lr=0.7,
                     clients_per_round=clients_per_round, seed=2)
    state, sampled = alg.init(), []
    for _ in range(7):
        state = alg.step(state)
        sampled.append(state.clients.numpy())
    x, c, C = numpy_scaffold(lsq.A.numpy(), lsq.y.numpy(), lsq.x0.numpy(), 0.05, tau, 0.7, sampled)
    np.testing.assert_allclose(state.x_g.numpy(), x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(state.c.numpy(), c, rtol=0, atol=1e-12)
    np.testing.assert_allclose(state.C.dense().numpy(), C, rtol=0, atol=1e-12)
    assert state.last_comm.upload_floats == 2 * D * clients_per_round


def test_scaffold_fl_reproduces_sdgt_baseline_scaffold_under_full_participation(lsq):
    """The template with option-II control variates is SD-GT's SCAFFOLD baseline (own round)."""
    template = ScaffoldFL(lsq, lr=0.05, local_steps=3)
    reference = SCAFFOLD(lsq, lr=0.05, local_steps=3)
    a, b = template.init(), reference.init()
    for _ in range(8):
        a, b = template.step(a), reference.step(b)
        torch.testing.assert_close(a.x_g, b.x_g, rtol=0, atol=1e-12)
        torch.testing.assert_close(a.C.dense(), b.C.dense(), rtol=0, atol=1e-12)
        torch.testing.assert_close(a.c, b.c, rtol=0, atol=1e-12)
    assert a.last_comm.upload_floats == 2 * N * D


def test_control_variates_converge_exactly_with_partial_participation(lsq):
    alg = Federated(lsq, client=client.sgd(0.05), server=server.sgd(1.0), local_steps=3,
                    clients_per_round=4, control_variates=ControlVariates(0.05), seed=0)
    traj = run(alg, 400)
    assert traj.dist2[-1] <= 1e-20 and traj.dist2[0] > 1e-2


def test_gossip_with_identity_and_a_full_compute_set_change_nothing(lsq):
    common = {"lr": 0.05, "local_steps": 3, "clients_per_round": 4, "seed": 5}
    base = run(FedAvg(lsq, **common), 4).x_g
    identity = Network.from_topology("complete", N, 1)       # N singleton subnets: W = I
    torch.testing.assert_close(run(FedAvg(lsq, gossip=identity, **common), 4).x_g, base,
                               rtol=0, atol=1e-13)


def test_gossip_with_averaging_is_centralized_local_sgd(lsq):
    """AFGA reduction (ii): W = J makes all rows equal after every step, so the round is local SGD
    on the average model with the average gradient of the compute set (afga.md 2.2)."""
    J = Network([np.full((N, N), 1.0 / N)])
    alg = Federated(lsq, client=client.sgd(0.05), server=server.sgd(1.0), local_steps=3,
                    clients_per_round=4, gossip=J, compute_per_step=N, seed=0)
    x = lsq.x0.clone()
    state = alg.step(alg.init())
    for _ in range(3):
        x = x - 0.05 * lsq.global_grad(x)
    torch.testing.assert_close(state.x_g, x, rtol=0, atol=1e-13)
    assert state.last_comm.d2d_exchanges == 3 and state.last_comm.uploads == 4
    assert state.last_comm.gradient_evaluations == 3 * N


def test_compute_set_counts_only_the_chosen_clients(lsq):
    ring = Network.from_topology("ring", 1, N)
    alg = Federated(lsq, client=client.sgd(0.05), server=server.sgd(1.0), local_steps=4,
                    clients_per_round=3, gossip=ring, compute_per_step=2, seed=0)
    state = alg.step(alg.init())
    assert state.last_comm.gradient_evaluations == 4 * 2
    assert state.last_comm.d2d_messages == 4 * 2 * N


def test_sampling_with_replacement_runs_each_copy_with_its_own_noise(lsq):
    noisy = lsq.with_noise(1.0)
    alg = FedAvg(noisy, lr=0.05, local_steps=2, participation=WithReplacement(30), seed=0)
    state = alg.step(alg.init())
    assert state.clients.numel() == 30 and torch.unique(state.clients).numel() < 30
    assert state.last_comm.uploads == 30 and state.last_comm.gradient_evaluations == 60


def test_accounting_per_round_and_cumulative(lsq):
    alg = FedAdam(lsq, lr=0.05, local_steps=3, clients_per_round=4)
    traj = run(alg, 5)
    assert traj.comm["uploads"].tolist() == [0, 4, 8, 12, 16, 20]
    assert traj.comm["upload_floats"][-1] == 20 * D and traj.comm["download_floats"][-1] == 20 * D
    assert traj.comm["gradient_evaluations"][-1] == 5 * 4 * 3
    assert traj.comm["d2d_messages"][-1] == 0
    assert traj.comm["energy"][-1] == pytest.approx(5 * 4 / N)
    prox = run(FedProx(lsq, lr=0.05, proximal_mu=0.1, local_steps=3, clients_per_round=4), 2)
    assert prox.comm["client_state_floats"][-1] == 2 * 4 * D       # the anchor x^(t) per client


def test_bad_options_are_rejected(lsq):
    with pytest.raises(ValueError, match=r"clients_per_round must be .*\[1, 10\]"):
        FedAvg(lsq, lr=0.1, clients_per_round=11)
    with pytest.raises(ValueError, match="lr"):
        FedAvg(lsq, lr=-1.0)
    with pytest.raises(ValueError, match="local steps"):
        FedAvg(lsq, lr=0.1, local_steps=0)
    with pytest.raises(ValueError, match="not both"):
        FedAvg(lsq, lr=0.1, clients_per_round=2, participation=WithReplacement(2))


@pytest.mark.parametrize("clients_per_round", [None, 7])
def test_blocks_of_clients_give_the_same_round(lsq, clients_per_round):
    """Local work in cache-sized blocks of clients (here one client per block) equals one block."""
    tau = np.array([1, 5, 2, 3, 3, 1, 4, 2, 5, 1])
    common = {"client": client.prox(0.05, 0.2), "server": server.sgd(1.0), "local_steps": tau,
              "clients_per_round": clients_per_round, "control_variates": ControlVariates(0.05),
              "seed": 3}
    whole, blocks = Federated(lsq, **common), Federated(lsq, **common)
    blocks.block_bytes = 1
    assert max(1, blocks.block_bytes // lsq.client_bytes) == 1
    a, b = whole.init(), blocks.init()
    for _ in range(3):
        a, b = whole.step(a), blocks.step(b)
        assert torch.equal(a.clients, b.clients)
        torch.testing.assert_close(a.x_g, b.x_g, rtol=0, atol=1e-12)
        torch.testing.assert_close(a.C.dense(), b.C.dense(), rtol=0, atol=1e-12)
    assert a.comm == b.comm
