"""FedAda2 and its baselines on the round template: equality with plain numpy loops of the paper's
pseudo-code (Alg. 2 with SM3-II over row/column covers, SU / server Adam; DJA's mapped init;
Alg. 5 blended clients), degenerate reductions, the accounting against Table 2 for the actual
parameter shapes, the DP mechanism and the exact heavy-tail movement bound of client AdaGrad."""
import json
import math
import re

import numpy as np
import pytest
import torch

from fedbound.algorithms import FedAvg, Federated, registry, run
from fedbound.algorithms.federated.fedada2 import (DJA, DP, Blended, ClippedMean, FedAda2, JointZero, Strategy,
                                         gaussian_noise, make_server, noise_seed, per_client)
from fedbound.algorithms.optim import client, server
from fedbound.algorithms.optim.registry import (CLIENT_BIAS_CORRECTION, CLIENT_OPTIMIZERS,
                                                SERVER_OPTIMIZERS, V0)
from fedbound.cli.flags import choices_of
from fedbound.cli.main import main
from fedbound.deprecation import FedboundDeprecationWarning
from fedbound.errors import FedboundError
from fedbound.sweep import spec as sweep_spec
from fedbound.tasks import LeastSquares, MLPClassifier
from fedbound.tasks.heavy_tailed import HeavyTailedQuadratic
from fedbound.theory.fedada2 import costs

TOL = dict(rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def lsq():
    return LeastSquares.generate(6, 8, 5, seed=0)


@pytest.fixture(scope="module")
def mlp():
    return MLPClassifier.generate(4, hidden=(5,), dim=6, num_classes=3, num_samples=120, seed=1)


# ---- plain numpy references ------------------------------------------------------------------
def sm3_ii_step(g, mu, shapes, lr, eps):
    """One SM3-II step (Alg. 4 [L717-L736], z = 1) on the flat gradient g over the tensors of
    ``shapes``: matrix -> (row, column) accumulators, vector -> singletons."""
    out, new_mu, off = [], [], 0
    for s, acc in zip(shapes, mu):
        n = math.prod(s)
        gs = g[off:off + n].reshape(s)
        off += n
        if len(s) == 2:
            rows, cols = acc
            nu = np.minimum(rows[:, None], cols[None, :]) + gs ** 2
            new_mu.append((nu.max(axis=1), nu.max(axis=0)))
        else:
            nu = acc[0] + gs ** 2
            new_mu.append((nu,))
        out.append((-lr * gs / (np.sqrt(nu) + eps)).reshape(-1))
    return np.concatenate(out), new_mu


def reference_fedada2(task, x0, rounds, K, lr, eps, eta, tau, b1, server_kind="adagrad",
                      b2=0.999, bias=False):
    """Alg. 2 [L667-L690] with full participation and full-batch gradients, server SU (AdaGrad with
    momentum, v_0 = tau^2, tau outside the root) or server Adam (C.2), all in numpy."""
    shapes = task.parameter_shapes
    x, m, v = x0.copy(), np.zeros_like(x0), np.full_like(x0, tau ** 2)
    for t in range(1, rounds + 1):
        deltas = []
        for i in range(task.n):
            xi = x.copy()
            mu = [tuple(np.zeros(k) for k in s) if len(s) == 2 else (np.zeros(s[0]),) for s in shapes]
            for _ in range(K):
                g = task.grad(torch.as_tensor(xi)[None], torch.tensor([i]))[0].numpy()
                step, mu = sm3_ii_step(g, mu, shapes, lr, eps)
                xi = xi + step
            deltas.append(xi - x)
        delta = np.mean(deltas, axis=0)
        m = b1 * m + (1 - b1) * delta
        v = v + delta ** 2 if server_kind == "adagrad" else b2 * v + (1 - b2) * delta ** 2
        mh, vh = (m / (1 - b1 ** t), v / (1 - b2 ** t)) if bias else (m, v)
        x = x + eta * mh / (np.sqrt(vh) + tau)
    return x


@pytest.mark.parametrize("server_kind,bias", [("adagrad", False), ("adam", False), ("adam", True)])
def test_fedada2_equals_the_papers_pseudocode_with_row_column_covers(mlp, server_kind, bias):
    b1 = 0.5 if server_kind == "adagrad" else 0.9
    alg = FedAda2(mlp, lr=0.05, local_steps=3, client_eps=1e-3, server_lr=0.1, tau=1e-2, beta1=b1,
                  server_optimizer=server_kind, bias_correction=bias, seed=0)
    state = alg.init()
    for _ in range(3):
        state = alg.step(state)
    ref = reference_fedada2(mlp, mlp.x0.numpy(), 3, 3, 0.05, 1e-3, 0.1, 1e-2, b1, server_kind, bias=bias)
    np.testing.assert_allclose(state.x_g.numpy(), ref, **TOL)


def test_mlp_exposes_its_parameter_shapes_and_sm3_uses_rows_and_columns(mlp):
    assert mlp.parameter_shapes == ((5, 6), (5,), (3, 5), (3,))
    assert sum(math.prod(s) for s in mlp.parameter_shapes) == mlp.d
    alg = FedAda2(mlp, lr=0.05, local_steps=2, seed=0)
    q = (5 + 6) + 5 + (3 + 5) + 3
    assert alg.client.state_floats(mlp.d) == q + 1 == costs.client_state_floats(mlp.parameter_shapes, "sm3")


def test_on_a_vector_model_fedada2_is_jointzero_adagrad(lsq):
    """Singleton covers: SM3 is diagonal AdaGrad, so FedAda2 and JointZero coincide bitwise."""
    noisy = lsq.with_noise(0.2)
    common = dict(lr=0.05, local_steps=4, clients_per_round=3, server_lr=0.2, tau=1e-2, beta1=0.3, seed=2)
    a, b = run(FedAda2(noisy, **common), 6), run(JointZero(noisy, **common), 6)
    assert torch.equal(a.x_g, b.x_g)


def test_on_a_vector_model_fedada2_sm3_adam_is_jointzero_adam(lsq):
    common = dict(lr=0.05, local_steps=4, clients_per_round=3, server_optimizer="adam", client_beta1=0.8,
                  client_beta2=0.95, delay=2, seed=2)
    a = run(FedAda2(lsq, client_optimizer="sm3_adam", **common), 5)
    b = run(JointZero(lsq, client_optimizer="adam", **common), 5)
    torch.testing.assert_close(a.x_g, b.x_g, **TOL)


def test_dja_with_the_identity_mapping_is_jointzero(lsq):
    common = dict(lr=0.05, local_steps=3, clients_per_round=4, server_lr=0.2, tau=1e-2, seed=1)
    dja = DJA(lsq, mapping=lambda server_state, client_state: client_state, sent_vectors=0, **common)
    assert torch.equal(run(dja, 5).x_g, run(JointZero(lsq, **common), 5).x_g)


@pytest.mark.parametrize("client_kind,mapping", [("adagrad", "second_moment"), ("adam", "second_moment"),
                                                 ("adam", "moments")])
def test_dja_initializes_the_client_from_the_server_state(lsq, client_kind, mapping):
    """Reference loop: server AdaGrad state (m~, v~) of the pseudo-gradient g = -Delta; each client
    starts AdaGrad at v = v~ (or Adam at m = m~ and/or v = v~, no bias correction)."""
    lr, eps, eta, tau, b1, K, rounds = 0.05, 1e-2, 0.3, 1e-2, 0.4, 3, 4
    b1c, b2c = 0.9, 0.99
    alg = DJA(lsq, lr=lr, local_steps=K, client_optimizer=client_kind, mapping=mapping, client_eps=eps,
              client_beta1=b1c, client_beta2=b2c, server_lr=eta, tau=tau, beta1=b1, seed=0)
    traj = run(alg, rounds)
    A, y = lsq.A.numpy(), lsq.y.numpy()
    x, m_s, v_s = lsq.x0.numpy().copy(), np.zeros(lsq.d), np.full(lsq.d, tau ** 2)
    for _ in range(rounds):
        deltas = []
        for i in range(lsq.n):
            xi = x.copy()
            mc = m_s.copy() if mapping == "moments" else np.zeros(lsq.d)
            vc = v_s.copy()
            for _ in range(K):
                g = A[i].T @ (A[i] @ xi - y[i]) / A.shape[1]
                if client_kind == "adagrad":
                    vc = vc + g ** 2
                    xi = xi - lr * g / (np.sqrt(vc) + eps)
                else:
                    mc = b1c * mc + (1 - b1c) * g
                    vc = b2c * vc + (1 - b2c) * g ** 2
                    xi = xi - lr * mc / (np.sqrt(vc) + eps)
            deltas.append(xi - x)
        g_server = -np.mean(deltas, axis=0)
        m_s = b1 * m_s + (1 - b1) * g_server
        v_s = v_s + g_server ** 2
        x = x - eta * m_s / (np.sqrt(v_s) + tau)
    np.testing.assert_allclose(traj.x_g[-1].numpy(), x, **TOL)


def test_floats_per_round_and_client_memory_match_table2_for_the_actual_shapes(mlp):
    """Accounting counters of real runs against fedbound.theory.fedada2.costs.table2: per
    participant, FedAda2 communicates FedAvg's 2d floats, DJA 3d (1.5x); client memory d + the
    optimizer state is Table 2's refined model for these shapes (SM3: d + q + 1)."""
    shapes, d, k = mlp.parameter_shapes, mlp.d, 3
    common = dict(lr=0.05, local_steps=2, clients_per_round=k, seed=0)
    algs = {"FedAvg": FedAvg(mlp, **common), "FedAda2": FedAda2(mlp, **common),
            "DJA": DJA(mlp, **common), "JointZero": JointZero(mlp, **common),
            "JointZero (Adam)": JointZero(mlp, client_optimizer="adam", **common),
            "FedAda2 (SM3-Adam)": FedAda2(mlp, client_optimizer="sm3_adam", server_optimizer="adam", **common)}
    printed, refined = costs.table2(shapes), costs.table2(shapes, "refined")
    per_client = {}
    for name, alg in algs.items():
        c = run(alg, 3).final_state.last_comm
        assert c.uploads == c.downloads == k
        per_client[name] = (c.upload_floats + c.download_floats) // k
        memory = d + c.client_state_floats // k
        assert memory == refined[name].memory, name
        if name in printed:
            assert per_client[name] == printed[name].communication, name
    assert per_client["FedAda2"] == per_client["FedAvg"] == 2 * d
    assert per_client["DJA"] == 3 * d == 1.5 * per_client["FedAvg"]
    assert costs.relative_communication(shapes)["DJA"] == per_client["DJA"] / per_client["FedAvg"]
    # SM3 holds fewer floats than the full diagonal: d + q + 1 < 2d + 1 for this MLP
    assert refined["FedAda2"].memory < refined["JointZero"].memory


def test_dja_moments_sends_two_vectors(lsq):
    alg = DJA(lsq, lr=0.05, client_optimizer="adam", mapping="moments", clients_per_round=2, seed=0)
    c = run(alg, 1).final_state.last_comm
    assert c.download_floats == 2 * 3 * lsq.d and c.upload_floats == 2 * lsq.d


# ---- blended optimization ------------------------------------------------------------------------
STRATEGIES = [(lambda: client.sgd(0.05), 2, 1.0), (lambda: client.adagrad(0.05, 1e-2), 4, 0.7),
              (lambda: client.adam(0.05, 0.9, 0.99, 1e-3, delay=2), 3, 1.3)]


def blended(task, **options):
    return Blended(task, strategies=[Strategy(make(), K, w) for make, K, w in STRATEGIES],
                   assignment=[0, 1, 2, 1, 0, 2], server_lr=0.3, tau=1e-2, beta1=0.2, **options)


def test_blended_noisy_round_equals_a_per_client_loop(lsq):
    """Alg. 5 [L1163-L1185]: client i runs its own optimizer for its own K from x_{t-1},
    Delta_t = (1/S) sum_i w(O_l(i)) Delta_i, then SU. With one client per block the round draws
    each client's noise in turn, so a loop over the sampled clients, each with its own transform,
    replays it exactly (participation first, then the clients in order)."""
    noisy = lsq.with_noise(0.1)
    alg = blended(noisy, clients_per_round=4, seed=5)
    alg.block_bytes = 1          # every client its own block: for_clients bound per block
    state = alg.init()
    srv = server.adagrad(0.3, eps=1e-2, v0=1e-4, b1=0.2)
    x, s_state = state.x_g.clone(), srv.init(state.x_g)
    assignment = [0, 1, 2, 1, 0, 2]
    for _ in range(4):
        gen = torch.Generator()
        gen.set_state(state.rng)
        state = alg.step(state)
        clients = alg.participation.scheme.draw(noisy.weights, gen).clients
        deltas = []
        for i in clients.tolist():
            make, K, w = STRATEGIES[assignment[i]]
            t = make()
            xi = x[None].clone()
            st = t.init(xi)
            for _ in range(K):
                u, st = t.update(noisy.stochastic_grad(xi, gen, clients=torch.tensor([i])), st, xi)
                xi = xi + u
            deltas.append(w * (xi[0] - x))
        u, s_state = srv.update(-torch.stack(deltas).mean(0), s_state, x)
        x = x + u
        torch.testing.assert_close(state.x_g, x, **TOL)


def test_blended_deterministic_round_equals_loop_and_counts_each_clients_memory(lsq):
    """Full participation, exact gradients: the blended round equals the per-client loop in any
    blocking; client memory is the sum of each participant's own optimizer state."""
    alg, alg_blocks = blended(lsq, seed=0), blended(lsq, seed=0)
    alg_blocks.block_bytes = 1
    ta, tb = run(alg, 3), run(alg_blocks, 3)
    torch.testing.assert_close(ta.x_g, tb.x_g, **TOL)
    x = lsq.x0.clone()
    srv = server.adagrad(0.3, eps=1e-2, v0=1e-4, b1=0.2)
    s_state = srv.init(x)
    assignment = [0, 1, 2, 1, 0, 2]
    for _ in range(3):
        deltas = []
        for i in range(lsq.n):
            make, K, w = STRATEGIES[assignment[i]]
            t = make()
            xi = x[None].clone()
            st = t.init(xi)
            for _ in range(K):
                u, st = t.update(lsq.grad(xi, torch.tensor([i])), st, xi)
                xi = xi + u
            deltas.append(w * (xi[0] - x))
        u, s_state = srv.update(-torch.stack(deltas).mean(0), s_state, x)
        x = x + u
    torch.testing.assert_close(ta.x_g[-1], x, **TOL)
    d = lsq.d
    per = [0, d + 1, 2 * d + 1]
    assert ta.final_state.last_comm.client_state_floats == sum(per[a] for a in assignment)
    assert ta.final_state.last_comm.gradient_evaluations == sum(STRATEGIES[a][1] for a in assignment)


def test_blended_with_one_strategy_is_the_plain_algorithm(lsq):
    common = dict(local_steps=3, clients_per_round=3, server_lr=0.2, tau=1e-2, seed=4)
    noisy = lsq.with_noise(0.3)
    one = Blended(noisy, strategies=[Strategy(client.adagrad(0.05, 1e-3), 3, 1.0)], assignment=[0] * 6,
                  **{k: v for k, v in common.items() if k != "local_steps"})
    assert torch.equal(run(one, 5).x_g, run(JointZero(noisy, lr=0.05, **common), 5).x_g)


def test_per_client_transform_refuses_to_be_chained():
    from fedbound.algorithms.optim import chain
    with pytest.raises(FedboundError, match="cannot be chained"):
        chain(per_client([client.sgd(1.0)], [0, 0]), client.drop_small_steps(0.1))


def test_per_client_transform_unbound_uses_row_index_as_client():
    t = per_client([client.sgd(1.0), client.sgd(2.0)], [0, 1, 1])
    g = torch.ones(3, 2, dtype=torch.float64)
    u, _ = t.update(g, t.init(g), g)
    assert u[:, 0].tolist() == [-1.0, -2.0, -2.0]


# ---- DP ------------------------------------------------------------------------------------------
def test_clipped_mean_clips_each_update_to_norm_c():
    D = torch.tensor([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]], dtype=torch.float64)
    w = torch.full((3,), 1 / 3, dtype=torch.float64)
    out = ClippedMean(1.0)(D, w, None, None)
    torch.testing.assert_close(out, torch.tensor([0.6 + 0.3, 0.8 + 0.4], dtype=torch.float64) / 3)


def test_dp_without_noise_and_a_large_clip_is_the_plain_run(lsq):
    common = dict(lr=0.05, local_steps=2, clients_per_round=3, seed=0)
    plain = run(FedAda2(lsq, **common), 4).x_g
    assert torch.equal(run(FedAda2(lsq, dp=DP(1e9, 0.0), **common), 4).x_g, plain)
    noisy = FedAda2(lsq, dp=DP(0.1, 1.0), **common)
    state = noisy.init()
    once, twice = noisy.step(state), noisy.step(state)
    assert torch.equal(once.x_g, twice.x_g) and not torch.equal(run(noisy, 4).x_g, plain)


def test_dp_noise_has_std_sigma_c_over_cohort(lsq):
    """The Gaussian mechanism's noise on the aggregate: the DP server is the plain server fed
    g + N(0, (sigma c / cohort)^2) drawn from the run's seed, and that noise has the stated std
    (40000 draws)."""
    alg = FedAda2(lsq, lr=0.1, clients_per_round=5, dp=DP(clip=2.0, noise_multiplier=1.5), server_lr=0.1,
                  tau=1e-2, seed=3)
    assert isinstance(alg.aggregation, ClippedMean) and alg.aggregation.clip == 2.0
    x0 = torch.zeros(lsq.d, dtype=torch.float64)
    u, _ = alg.server.update(torch.zeros_like(x0), alg.server.init(x0), x0)
    gen = torch.Generator().manual_seed(noise_seed(3))
    noise = torch.randn(lsq.d, generator=gen, dtype=torch.float64) * (1.5 * 2.0 / 5)
    plain = make_server("adagrad", 0.1, 1e-2)
    torch.testing.assert_close(u, plain.update(noise, plain.init(x0), x0)[0], **TOL)
    noise = gaussian_noise(server.sgd(1.0), 1.5 * 2.0 / 5, seed=0)
    x = torch.zeros(40000, dtype=torch.float64)
    u, _ = noise.update(torch.zeros_like(x), noise.init(x), x)
    assert abs(float(u.std()) / (1.5 * 2.0 / 5) - 1) < 0.02   # 5 standard errors (1/sqrt(2*40000))


def test_dp_accountant_reproduces_the_papers_epsilon():
    """Section 6 / H.1 [L204-L206, L1639]: sigma = 1, q = 40/400, 500 rounds, delta = 1/400:
    eps = 13.1 at order 2."""
    task = LeastSquares.generate(400, 2, 3, seed=0)
    alg = FedAda2(task, lr=0.1, clients_per_round=40, dp=DP(clip=0.1, noise_multiplier=1.0))
    eps, order = alg.privacy(500, 1 / 400)
    assert abs(eps - 13.1) < 0.05 and order == 2


# ---- heavy tails: the exact movement bound -------------------------------------------------------
@pytest.mark.parametrize("law", ["student_t", "cauchy"])
def test_client_adagrad_never_moves_farther_than_eta_K_T(law):
    """Prop. 9 (iv) / Prop. 14 [L443-L463, L651-L661]: zero-initialized client AdaGrad (z = 1) has
    |step_j| = eta |g_j| / (sqrt(sum g_j^2) + eps) < eta per coordinate, so with server averaging
    |x_t - x_0|_inf <= eta K t for every path. 3000 paths (coordinates) of the
    heavy-tailed toy problem; FedAvg crosses the radius eta K in its first round."""
    R, T, K, eta = 3000, 20, 3, 0.1
    task = (HeavyTailedQuadratic.student_t_clients(10, d=R) if law == "student_t"
            else HeavyTailedQuadratic.cauchy_client(10, d=R))
    ada = Federated(task, client=client.adagrad(eta, 1e-3), server=server.sgd(1.0), local_steps=K,
                    clients_per_round=3, seed=0)
    state, x0 = ada.init(torch.ones(R)), torch.ones(R, dtype=torch.float64)
    for t in range(1, T + 1):
        state = ada.step(state)
        assert float(torch.max(torch.abs(state.x_g - x0))) <= eta * K * t
    fa = FedAvg(task, lr=eta, local_steps=K, clients_per_round=3, seed=0)
    s = fa.step(fa.init(torch.ones(R)))       # one round: FedAvg's step is unbounded
    assert float(torch.max(torch.abs(s.x_g - x0))) > eta * K


# ---- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda t: FedAda2(t, lr=0.1, sm3_variant="III"),
    lambda t: FedAda2(t, lr=0.1, client_optimizer="adagrad"),
    lambda t: FedAda2(t, lr=0.1, client_optimizer="sm3_adam", sm3_variant="I"),
    lambda t: FedAda2(t, lr=0.1, server_optimizer="yogi"),
    lambda t: FedAda2(t, lr=0.1, server_optimizer="adagrad", bias_correction="adam"),
    lambda t: FedAda2(t, lr=0.1, client_bias_correction=True),         # the SM3 client has none
    lambda t: FedAda2(t, lr=0.1, sm3_variant="I", carry_over=False),   # SM3-I never resets mu
    lambda t: FedAda2(t, lr=0.1, client_optimizer="sm3_adam", carry_over=False),
    lambda t: JointZero(t, lr=0.1, client_optimizer="adam", client_v0=0.1),
    lambda t: JointZero(t, lr=0.1, client_bias_correction=True),       # the AdaGrad client has none
    lambda t: DJA(t, lr=0.1, client_bias_correction=True),
    lambda t: FedAda2(t, lr=0.1, v0=-1.0),
    lambda t: FedAda2(t, lr=0.1, server_optimizer="adam", bias_correction="kingma"),
    lambda t: DJA(t, lr=0.1, mapping="moments"),
    lambda t: DJA(t, lr=0.1, mapping=lambda a, b: b),
    lambda t: DJA(t, lr=0.1, mapping="nope"),
    lambda t: FedAda2(t, lr=0.1, dp=(1.0, 1.0)),
    lambda t: Blended(t, strategies=[], assignment=[0] * 6),
    lambda t: Blended(t, strategies=[Strategy(client.sgd(0.1))], assignment=[0, 1, 0, 0, 0, 0]),
    lambda t: Blended(t, strategies=[Strategy(client.sgd(0.1), 0)], assignment=[0] * 6),
    lambda t: Blended(t, strategies=[client.sgd(0.1)], assignment=[0] * 6),
])
def test_bad_options_are_clear_errors(lsq, make):
    with pytest.raises(FedboundError):
        make(lsq)


# ---- every switch of the server and client transforms is an option (issue 25) ---------------------
TAU = 1e-2
SERVER_SWITCHES = {"bias_correction": "none", "v0": TAU ** 2, "eps_inside_sqrt": False}
#: (algorithm, options, the paper's value of every switch they leave out)
PAPER_VALUES = [
    ("fedada2", {}, {**SERVER_SWITCHES, "carry_over": True, "client_bias_correction": False}),
    ("fedada2", {"server_optimizer": "adam", "client_optimizer": "sm3_adam", "delay": 2},
     {**SERVER_SWITCHES, "client_bias_correction": True, "carry_over": True}),
    ("fedada2", {"delay": 2, "local_steps": 5}, {"carry_over": True}),
    ("jointzero", {}, {**SERVER_SWITCHES, "client_v0": 0.0, "client_bias_correction": False}),
    ("jointzero", {"client_optimizer": "adam", "server_optimizer": "adam"},
     {**SERVER_SWITCHES, "client_bias_correction": True, "client_v0": 0.0}),
    ("dja", {}, {**SERVER_SWITCHES, "client_bias_correction": False}),
    ("dja", {"client_optimizer": "adam", "mapping": "moments"}, {"client_bias_correction": False}),
]


@pytest.mark.parametrize("name,options,paper", PAPER_VALUES)
def test_the_switches_default_to_the_papers_choices(mlp, name, options, paper):
    """Leaving the switches out runs what giving the paper's values runs, bitwise: server v_0 = tau^2
    and tau outside the root [L668], no server bias correction (notes 2.2), SM3's mu carried over,
    bias-corrected ADMU (Alg. 7) but DJA's uncorrected (its moments start from the server's)."""
    common = {"lr": 0.05, "local_steps": 3, "clients_per_round": 3, "tau": TAU, "seed": 4, **options}
    build = registry.build if "mapping" not in options else \
        (lambda name, task, **o: DJA(task, **o))
    default = run(build(name, mlp.with_noise(0.1), **common), 3).x_g
    assert torch.equal(default, run(build(name, mlp.with_noise(0.1), **common, **paper), 3).x_g)


def test_the_default_server_is_the_papers_su(transform_steps):
    su = make_server("adagrad", 0.1, TAU, 0.3)
    assert torch.equal(transform_steps(su, 7), transform_steps(server.adagrad(0.1, TAU, v0=TAU ** 2, b1=0.3), 7))
    adam = make_server("adam", 0.1, TAU)
    assert torch.equal(transform_steps(adam, 7), transform_steps(server.adam(0.1, 0.9, 0.999, TAU, v0=TAU ** 2), 7))


def test_every_switch_is_declared_once():
    """The server switches are the optimizers' own Option objects; the client ones are the client
    optimizers' declarations under the family's client_ names (same check and parser)."""
    adam, sm3 = SERVER_OPTIMIZERS.get("adam"), CLIENT_OPTIMIZERS.get("sm3")
    for name in ("fedada2", "jointzero", "dja"):
        spec = registry.get(name)
        for switch in ("bias_correction", "v0", "eps_inside_sqrt"):
            assert spec.option(switch) is adam.option(switch)
        assert spec.option("client_bias_correction").check is CLIENT_BIAS_CORRECTION.check
    assert registry.get("fedada2").option("carry_over") is sm3.option("carry_over")
    assert registry.get("jointzero").option("client_v0").check is V0.check


@pytest.mark.parametrize("name", ["fedada2", "jointzero", "dja"])
@pytest.mark.parametrize("switches,direct", [
    ({"server_optimizer": "adam", "bias_correction": "flower", "v0": 0.3, "eps_inside_sqrt": True},
     lambda: server.adam(0.1, 0.9, 0.999, TAU, bias_correction="flower", v0=0.3, eps_inside_sqrt=True)),
    ({"server_optimizer": "adam", "bias_correction": "adam"},
     lambda: server.adam(0.1, 0.9, 0.999, TAU, bias_correction="adam", v0=TAU ** 2)),
    ({"v0": 0.3, "eps_inside_sqrt": True},
     lambda: server.adagrad(0.1, TAU, v0=0.3, eps_inside_sqrt=True)),
])
def test_the_server_switches_reach_the_transform(lsq, name, switches, direct, transform_steps):
    built = registry.build(name, lsq, lr=0.05, tau=TAU, **switches)
    assert torch.equal(transform_steps(built.server, lsq.d), transform_steps(direct(), lsq.d))
    default = registry.build(name, lsq, lr=0.05, tau=TAU,
                             server_optimizer=switches.get("server_optimizer", "adagrad"))
    assert not torch.equal(transform_steps(built.server, lsq.d), transform_steps(default.server, lsq.d))


def test_first_round_with_tau_inside_the_root_is_the_hand_computed_step(lsq):
    """SU with ``eps_inside_sqrt`` and ``v0``: x_1 = x_0 + eta (1 - b1) Delta / sqrt(v0 + Delta^2 + tau),
    Delta the clients' mean update (the same clients with the server x + Delta give it)."""
    eta, b1, v0 = 0.2, 0.3, 0.05
    common = dict(local_steps=3, clients_per_round=4, seed=5)
    alg = registry.build("fedada2", lsq.with_noise(0.1), lr=0.05, server_lr=eta, tau=TAU, beta1=b1,
                         v0=v0, eps_inside_sqrt=True, **common)
    x1 = alg.step(alg.init()).x_g
    clients = Federated(lsq.with_noise(0.1), client=alg.client, server=server.sgd(1.0), **common)
    x0 = clients.init().x_g
    delta = clients.step(clients.init()).x_g - x0
    torch.testing.assert_close(x1, x0 + eta * (1 - b1) * delta / torch.sqrt(v0 + delta ** 2 + TAU),
                               rtol=1e-14, atol=1e-16)
    default = registry.build("fedada2", lsq.with_noise(0.1), lr=0.05, server_lr=eta, tau=TAU, beta1=b1,
                             **common)
    torch.testing.assert_close(default.step(default.init()).x_g,
                               x0 + eta * (1 - b1) * delta / (torch.sqrt(TAU ** 2 + delta ** 2) + TAU),
                               rtol=1e-14, atol=1e-16)


def test_the_client_switches_reach_the_transform(lsq, mlp, transform_steps):
    shapes, rows = mlp.parameter_shapes, (3, mlp.d)
    cases = [
        (registry.build("fedada2", mlp, lr=0.05, delay=2, carry_over=False).client,
         client.sm3(0.05, shapes, delay=2, eps=1e-3, carry_over=False),
         registry.build("fedada2", mlp, lr=0.05, delay=2).client, rows),
        (registry.build("fedada2", mlp, lr=0.05, client_optimizer="sm3_adam",
                        client_bias_correction=False).client,
         client.sm3_adam(0.05, shapes, 0.9, 0.999, 1e-3, bias_correction=False),
         registry.build("fedada2", mlp, lr=0.05, client_optimizer="sm3_adam").client, rows),
        (registry.build("jointzero", lsq, lr=0.05, client_v0=0.2).client,
         client.adagrad(0.05, 1e-3, v0=0.2), registry.build("jointzero", lsq, lr=0.05).client,
         (3, lsq.d)),
        (registry.build("jointzero", lsq, lr=0.05, client_optimizer="adam",
                        client_bias_correction=False).client,
         client.adam(0.05, 0.9, 0.999, 1e-3, bias_correction=False),
         registry.build("jointzero", lsq, lr=0.05, client_optimizer="adam").client, (3, lsq.d)),
        (registry.build("dja", lsq, lr=0.05, client_optimizer="adam",
                        client_bias_correction=True).base_client,
         client.adam(0.05, 0.9, 0.999, 1e-3, bias_correction=True),
         registry.build("dja", lsq, lr=0.05, client_optimizer="adam").base_client, (3, lsq.d)),
    ]
    for built, direct, default, shape in cases:
        assert torch.equal(transform_steps(built, shape), transform_steps(direct, shape))
        assert not torch.equal(transform_steps(built, shape), transform_steps(default, shape))


def test_first_client_steps_are_the_hand_computed_ones(lsq):
    """AdaGrad from v_0: -lr g / (sqrt(v_0 + g^2) + eps); Adam's first step without bias correction
    -lr (1 - b1) g / (sqrt((1 - b2) g^2) + eps), with it -lr g / (|g| + eps)."""
    g = torch.tensor([[0.3, -2.0, 0.01]], dtype=torch.float64)
    x = torch.zeros_like(g)

    def first(t):
        return t.update(g, t.init(x), x)[0]
    ada = registry.build("jointzero", lsq, lr=0.05, client_v0=0.2).client
    torch.testing.assert_close(first(ada), -0.05 * g / (torch.sqrt(0.2 + g ** 2) + 1e-3), rtol=1e-15, atol=0)
    adam = registry.build("jointzero", lsq, lr=0.05, client_optimizer="adam", client_bias_correction=False,
                          client_beta1=0.8, client_beta2=0.9).client
    torch.testing.assert_close(first(adam), -0.05 * 0.2 * g / (torch.sqrt(0.1 * g ** 2) + 1e-3),
                               rtol=1e-15, atol=0)
    corrected = registry.build("jointzero", lsq, lr=0.05, client_optimizer="adam").client
    torch.testing.assert_close(first(corrected), -0.05 * g / (g.abs() + 1e-3), rtol=1e-14, atol=0)


@pytest.mark.parametrize("name,flags,options,base", [
    ("fedada2", ["--server-optimizer", "adam", "--bias-correction", "flower", "--v0", "1e-4",
                 "--eps-inside-sqrt"],
     dict(server_optimizer="adam", bias_correction="flower", v0=1e-4, eps_inside_sqrt=True),
     dict(server_optimizer="adam")),
    ("fedada2", ["--delay", "2", "--no-carry-over"], dict(delay=2, carry_over=False), dict(delay=2)),
    ("fedada2", ["--client-optimizer", "sm3_adam", "--no-client-bias-correction"],
     dict(client_optimizer="sm3_adam", client_bias_correction=False), dict(client_optimizer="sm3_adam")),
    ("jointzero", ["--client-v0", "0.5"], dict(client_v0=0.5), {}),
    ("jointzero", ["--client-optimizer", "adam", "--no-client-bias-correction"],
     dict(client_optimizer="adam", client_bias_correction=False), dict(client_optimizer="adam")),
    ("dja", ["--client-optimizer", "adam", "--client-bias-correction"],
     dict(client_optimizer="adam", client_bias_correction=True), dict(client_optimizer="adam")),
])
def test_the_switches_on_the_command_line(tmp_path, capsys, lsq_file, name, flags, options, base):
    """``fedbound run NAME --flag value`` runs what registry.build(name, ..., option=value) runs,
    and the switch changes the run."""
    code = main(["run", name, "--task", "lsq", "--data", str(lsq_file), "--lr", "0.05", "--local-steps",
                 "4", "--rounds", "3", "--sigma", "0", "--float64", "--seed", "0", "--out",
                 str(tmp_path / "out"), "--json", *flags])
    assert code == 0
    config = json.loads(capsys.readouterr().out)["config"]
    assert all(config[k] == v for k, v in options.items())
    task = LeastSquares.from_npz(lsq_file)
    python = run(registry.build(name, task, lr=0.05, local_steps=4, seed=0, **options), 3).x_g[-1]
    x_final = np.load(tmp_path / "out" / "x_final.npy")
    assert np.array_equal(x_final, python.numpy())
    other = run(registry.build(name, task, lr=0.05, local_steps=4, seed=0, **base), 3).x_g[-1]
    assert not np.array_equal(x_final, other.numpy())


def test_command_line_help_and_refusals(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--bias-correction {none,adam,flower}" in text
    for flag in ("--no-carry-over", "--no-client-bias-correction", "--no-eps-inside-sqrt",
                 "--client-v0 CLIENT_V0"):
        assert flag in text
    chosen = re.search(r"--client-optimizer \{([^}]*)\}", text).group(1).split(",")
    assert {"sm3", "sm3_adam", "adagrad", "adam"} == set(chosen)     # the union over the algorithms
    assert choices_of(registry.get("fedada2").option("sm3_variant")) == ("I", "II")
    assert choices_of(registry.get("fedada2").option("v0")) is None
    base = ["run", "fedada2", "--lr", "0.05", "--rounds", "1", "--out", str(tmp_path)]
    for flags, message in ((["--client-bias-correction"], "client_bias_correction applies to the adam"),
                           (["--bias-correction", "adam"], "bias_correction applies to the Adam server"),
                           (["--bias-correction", "flwer"], "did you mean 'flower'"),
                           (["--client-v0", "0.1"], "--client-v0 does not apply to fedada2")):
        assert main([*base, *flags]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err


def test_the_switches_in_a_sweep_spec():
    spec = sweep_spec.loads(json.dumps({
        "algorithm": ["fedada2", "jointzero"], "task": {"name": "lsq", "n": 4, "d": 3}, "rounds": 2,
        "grid": {"lr": 0.05, "v0": 1e-4, "eps_inside_sqrt": True, "client_v0": [0.0, 0.5]}}))
    cells = {(c.algorithm, c.options.get("client_v0"), c.options["v0"], c.options["eps_inside_sqrt"])
             for c in spec.cells}
    assert cells == {("fedada2", None, 1e-4, True), ("jointzero", 0.0, 1e-4, True),
                     ("jointzero", 0.5, 1e-4, True)}


def test_the_old_server_bias_correction_keyword_still_works_and_warns(lsq):
    new = run(FedAda2(lsq, lr=0.05, server_optimizer="adam", bias_correction="adam", seed=1), 3).x_g
    with pytest.warns(FedboundDeprecationWarning, match="server_bias_correction"):
        old = FedAda2(lsq, lr=0.05, server_optimizer="adam", server_bias_correction=True, seed=1)
    assert torch.equal(run(old, 3).x_g, new)
    with pytest.raises(FedboundError, match="not both"):
        FedAda2(lsq, lr=0.05, server_optimizer="adam", server_bias_correction=True, bias_correction="adam")
