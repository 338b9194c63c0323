"""FedNova (seed 001_530825e753327090.txt) on the round template: the accumulation vectors a_i three
ways, identity (5)-(6), exact finite-eta fixed points, the eta -> 0 limits, the degenerate cases
(FedNova = FedAvg, VR with one client = local GD), Alg. 2's correction flag, the tau_eff policies,
participation by name, Gaussian local steps and Assumption 3 at the algorithm's weights."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.algorithms import (FedAvg, FedAvgVR, FedNova, FedProx, Federated, GaussianSteps,
                                 Normalized, RandomEpochSteps, run)
from fedbound.algorithms import registry
from fedbound.algorithms.federated.fednova import local_solver
from fedbound.algorithms.optim import client, server
from fedbound.algorithms.optim.registry import NESTEROV
from fedbound.cli.main import main
from fedbound.errors import FedboundError
from fedbound.network.sampling import (FullParticipation, UniformParticipation, WithReplacement,
                                       named_participation)
from fedbound.tasks import LeastSquares, Quadratic
from fedbound.theory.fednova.accumulation import implicit_weights
from fedbound.theory.fednova.adapter import assumption3, surrogate_weights
from fedbound.local_solver import LocalSolver
from fedbound.verify.quadratic_rounds import (QuadraticProblem, accumulation,
                                              fixed_point, limit_fixed_point, round_map)

LR = 0.1
#: (solver options of FedNova/local_solver, the same solver for quadratic_rounds)
SOLVERS = {
    "sgd": ({}, LocalSolver(LR)),
    "prox": ({"mu": 0.7}, LocalSolver(LR, mu=0.7)),
    "momentum": ({"momentum": 0.6}, LocalSolver(LR, momentum=0.6)),
    "decay": ({"lr_decay": 0.8}, LocalSolver(LR, lr_decay=0.8)),
}


def hetero_quadratic(n=4, d=3, seed=0, p=None):
    """Unequal SPD H_i (eigenvalues in [0.5, 2]) and minimisers b_i, weights p."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, d, d)))
    lam = rng.uniform(0.5, 2.0, (n, d))
    H = np.einsum("nij,nj,nkj->nik", Q, lam, Q)
    b = rng.standard_normal((n, d))
    return Quadratic(H, b, weights=p)


class Scripted(Quadratic):
    """A quadratic with H_i = 0 whose stochastic gradients are prescribed random vectors, recorded
    as the round draws them (the 'simulated run' of the a_i check)."""

    def __init__(self, d, steps, seed=0):
        super().__init__(np.zeros((1, d, d)), np.zeros((1, d)), spd=False)
        self.script = torch.as_tensor(np.random.default_rng(seed).standard_normal((steps, d)))
        self.drawn = []

    def _sampled_grad_on(self, X, data, generator):
        g = self.script[len(self.drawn)].expand_as(X).clone()
        self.drawn.append(g[0])
        return g


# ---- a_i: closed form = differentiation of the solver = a simulated run ------------------------------
@pytest.mark.parametrize("name", SOLVERS)
def test_accumulation_closed_form_equals_autograd_and_a_simulated_run(name):
    options, linear = SOLVERS[name]
    tau, d = 7, 12
    solver = local_solver(LR, **options)
    closed = solver.accumulation(tau)
    # differentiation: d(-Delta/lr)/d g_k = a_k I for the transform run on leaf gradients
    grads = [torch.zeros(1, d, dtype=torch.float64, requires_grad=True) for _ in range(tau)]
    x0 = torch.randn(1, d, dtype=torch.float64)
    X, state = x0, solver.init(x0)
    for g in grads:
        U, state = solver.update(g, state, X)
        X = X + U
    minus_delta = -(X - x0).sum() / LR
    derived = np.array([float(v.sum()) / d for v in torch.autograd.grad(minus_delta, grads)])
    # a simulated run of the round template: recover a from -Delta/lr = G a (G: the drawn gradients)
    task = Scripted(d, tau)
    alg = Federated(task, client=solver, server=server.sgd(1.0), local_steps=tau)
    Y, _ = alg.local_work(task.x0, None, torch.tensor([tau]), None, torch.Generator())
    G = torch.stack(task.drawn, dim=1).numpy()
    recovered = np.linalg.lstsq(G, -(Y[0] - task.x0).numpy() / LR, rcond=None)[0]
    adjoint = accumulation(linear, tau)
    for other in (derived, recovered, adjoint):
        np.testing.assert_allclose(other, closed, rtol=0, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), m=st.integers(1, 6), d=st.integers(1, 4))
def test_identity_5_6_for_any_accumulation(data, m, d):
    """sum_i p_i Delta_i = -tau_eff sum_i w_i eta d_i with the implicit tau_eff, w of (6) [L115-L116]."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    taus = rng.integers(1, 8, m)
    a = [rng.uniform(0.01, 3.0, t) for t in taus]
    G = [rng.standard_normal((d, t)) for t in taus]
    p = rng.dirichlet(np.ones(m))
    delta = [-LR * Gi @ ai for Gi, ai in zip(G, a)]
    a1 = np.array([ai.sum() for ai in a])
    tau_eff, w = implicit_weights(p, a1)
    lhs = sum(pi * di for pi, di in zip(p, delta))
    rhs = -tau_eff * sum(wi * LR * Gi @ ai / ni for wi, Gi, ai, ni in zip(w, G, a, a1))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12, atol=1e-14)


# ---- exact finite-eta fixed points ----------------------------------------------------------------
CASES = {
    "fedavg": (lambda task, tau: FedAvg(task, lr=LR, local_steps=tau), "fedavg", LocalSolver(LR), "accumulation"),
    "fedprox": (lambda task, tau: FedProx(task, lr=LR, proximal_mu=0.7, local_steps=tau), "fedavg",
                LocalSolver(LR, mu=0.7), "accumulation"),
    **{f"fednova-{name}": ((lambda opts: lambda task, tau: FedNova(task, lr=LR, local_steps=tau, **opts))(o),
                           "fednova", lin, "accumulation") for name, (o, lin) in SOLVERS.items()},
    "fednova-prox-steps": (lambda task, tau: FedNova(task, lr=LR, local_steps=tau, proximal_mu=0.7, tau_eff="steps"),
                           "fednova", LocalSolver(LR, mu=0.7), "steps"),
}


@pytest.mark.parametrize("case", CASES)
def test_runs_reach_the_exact_finite_eta_fixed_point(case):
    build, aggregation, linear, policy = CASES[case]
    p = np.array([0.1, 0.2, 0.3, 0.4])
    task = hetero_quadratic(p=p)
    tau = [1, 3, 5, 8]
    problem = QuadraticProblem.build(*task.arrays())
    exact = fixed_point(problem, tau, linear, aggregation, policy)
    assert exact["converges"]
    start = float(np.linalg.norm(task.x0.numpy() - exact["fixed_point"])) + 1.0
    rounds = math.ceil(math.log(1e-13 / start) / math.log(exact["spectral_radius"])) + 10
    x = run(build(task, tau), rounds).x_g[-1].numpy()
    assert np.linalg.norm(x - exact["fixed_point"]) <= 1e-10
    if aggregation == "fedavg":      # the biased fixed point of Lemma 1 / (28), not x*
        assert exact["distance_to_x_star"] > 1e-3


@pytest.mark.parametrize("aggregation", ["fedavg", "fednova"])
@pytest.mark.parametrize("name", ["sgd", "prox", "momentum"])
def test_fixed_points_approach_the_eta_to_0_limits_with_slope_1(aggregation, name):
    """||x~(eta) - lim|| = O(eta) (fednova.md 4.1; FedNova: lim = x*, FedAvg: the surrogate's minimizer)."""
    task = hetero_quadratic(p=np.array([0.1, 0.2, 0.3, 0.4]))
    problem = QuadraticProblem.build(*task.arrays())
    tau = [1, 3, 5, 8]
    mu = 0.7 if name == "prox" else 0.0
    rho = 0.6 if name == "momentum" else 0.0
    limit = limit_fixed_point(problem, tau, LocalSolver(1e-3, 0.0, rho), aggregation)
    etas = np.geomspace(1e-5, 1e-3, 5)
    errors = [np.linalg.norm(fixed_point(problem, tau, LocalSolver(e, mu, rho), aggregation)["fixed_point"] - limit)
              for e in etas]
    slope = np.polyfit(np.log(etas), np.log(errors), 1)[0]
    assert abs(slope - 1.0) < 0.05, slope


def test_fednova_at_finite_eta_can_be_farther_from_x_star_than_fedavg():
    """fednova.md 7.4, Fig. 2 setup (m = 30, H_i = I, b_i ~ N(0, 0.01 I), tau_i in [1, 96]): at
    eta = 0.05 FedNova's exact fixed point is not x*, and the decay 0.05 -> 0.01 -> 0.002 shrinks it."""
    rng = np.random.default_rng(0)
    m, d = 30, 10
    problem = QuadraticProblem.build(np.stack([np.eye(d)] * m), 0.1 * rng.standard_normal((m, d)))
    tau = rng.integers(1, 97, m)
    dist = {e: fixed_point(problem, tau, LocalSolver(e), "normalized")["distance_to_x_star"]
            for e in (0.05, 0.01, 0.002)}
    assert dist[0.05] > dist[0.01] > dist[0.002] > 0
    assert dist[0.002] < fixed_point(problem, tau, LocalSolver(0.002), "mean")["distance_to_x_star"]


# ---- degenerate cases ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sgd", "prox", "momentum"])
@pytest.mark.parametrize("participation", [None, "uniform"])
def test_fednova_with_equal_steps_is_fedavg_bitwise(name, participation):
    options, _ = SOLVERS[name]
    task = hetero_quadratic(n=6, p=np.random.default_rng(1).dirichlet(np.ones(6))).with_noise(0.3)
    sampling = {} if participation is None else {"participation": participation, "clients_per_round": 3}
    nova = run(FedNova(task, lr=LR, local_steps=4, seed=3, **options, **sampling), 6)
    plain = run(Federated(task, client=local_solver(LR, **options), server=server.sgd(1.0), local_steps=4,
                          seed=3, **sampling), 6)
    assert torch.equal(nova.x_g, plain.x_g)


@pytest.mark.parametrize("vr", ["corrected", "literal"])
def test_variance_reduction_with_one_client_is_plain_local_gd(vr):
    task = hetero_quadratic(n=1)
    plain = run(FedAvg(task, lr=LR, local_steps=5), 8).x_g
    assert torch.equal(run(FedNova(task, lr=LR, local_steps=5, vr=vr), 8).x_g, plain)
    assert torch.equal(run(FedAvgVR(task, lr=LR, local_steps=5, vr=vr), 8).x_g, plain)


def test_corrected_vr_reaches_x_star_and_the_literal_listing_does_not():
    """Alg. 2's flag (fednova.md 2.7): with the correction from uncorrected normalized gradients, x*
    is a fixed point at any eta (the corrected local gradients vanish there); Alg. 2 read literally
    settles at c = delta/2 and stays biased."""
    task = hetero_quadratic(p=np.array([0.1, 0.2, 0.3, 0.4]))
    tau = [1, 3, 5, 8]
    corrected = run(FedNova(task, lr=LR, local_steps=tau, vr="corrected"), 150).dist2[-1]
    literal = run(FedNova(task, lr=LR, local_steps=tau, vr="literal"), 150).dist2[-1]
    plain = run(FedNova(task, lr=LR, local_steps=tau), 150).dist2[-1]
    assert corrected < 1e-20
    assert literal > 1e-6 and plain > 1e-6


def test_variance_reduction_refuses_repeated_participants():
    task = hetero_quadratic()
    alg = FedNova(task, lr=LR, local_steps=2, vr="corrected", participation=WithReplacement(8))
    with pytest.raises(FedboundError, match="without repeats"):
        run(alg, 3)


# ---- tau_eff policies against the exact round map -------------------------------------------------
@pytest.mark.parametrize("policy", ["accumulation", "steps", 7.5, lambda w, tau, a: float(np.max(a))])
def test_tau_eff_policies_match_the_round_map(policy):
    task = hetero_quadratic(p=np.array([0.1, 0.2, 0.3, 0.4]))
    tau = [1, 3, 5, 8]
    problem = QuadraticProblem.build(*task.arrays())
    rmap = round_map(problem, tau, LocalSolver(LR, momentum=0.6), "normalized", policy)
    x1 = FedNova(task, lr=LR, local_steps=tau, momentum=0.6, tau_eff=policy).step(
        FedNova(task, lr=LR, local_steps=tau, momentum=0.6).init()).x_g
    np.testing.assert_allclose(x1.numpy(), rmap(task.x0.numpy()), rtol=0, atol=1e-14)


def test_server_and_hybrid_momentum_keep_the_fixed_point():
    """Hybrid momentum (client + server) is a heavy-ball server step on -Delta: with beta = 0 it is
    bitwise plain FedNova; with beta > 0 it converges to the same fixed point."""
    task = hetero_quadratic()
    tau = [1, 3, 5, 8]
    base = run(FedNova(task, lr=LR, local_steps=tau, momentum=0.5), 150).x_g
    zero = run(FedNova(task, lr=LR, local_steps=tau, momentum=0.5, server_momentum=0.0), 150).x_g
    assert torch.equal(base, zero)
    hybrid = run(FedNova(task, lr=LR, local_steps=tau, momentum=0.5, server_momentum=0.5), 150).x_g
    np.testing.assert_allclose(hybrid[-1].numpy(), base[-1].numpy(), rtol=0, atol=1e-10)


def test_local_solver_refuses_combinations():
    with pytest.raises(FedboundError, match="at most one"):
        local_solver(LR, mu=0.1, momentum=0.5)


# ---- participation and local steps ----------------------------------------------------------------
def test_named_participation_schemes():
    assert isinstance(named_participation("full", 5), FullParticipation)
    uniform = named_participation("uniform", 5, 2)
    assert isinstance(uniform, UniformParticipation) and uniform.weighting == "normalized"
    assert named_participation("unbiased", 5, 2).weighting == "unbiased"
    assert isinstance(named_participation("with-replacement", 5, 9), WithReplacement)
    for bad in (("full", 5, 3), ("uniform", 5, None), ("poisson", 5, 2)):
        with pytest.raises(FedboundError):
            named_participation(*bad)


def test_unbiased_sampling_makes_the_fednova_direction_unbiased():
    """Scheme (ii) (weights p_i n/q [L87]): E[sum_S w_i d_i] = sum_i p_i d_i over the draws."""
    task = hetero_quadratic(n=6, p=np.random.default_rng(2).dirichlet(np.ones(6)))
    scheme = named_participation("unbiased", 6, 2)
    gen = torch.Generator().manual_seed(0)
    d = torch.as_tensor(np.random.default_rng(3).standard_normal((6, 3)))
    draws = [scheme.draw(task.weights, gen) for _ in range(4000)]
    mean = sum(part.weights @ d.index_select(0, part.clients) for part in draws) / len(draws)
    stderr = torch.stack([part.weights @ d.index_select(0, part.clients) for part in draws]).std(0) / math.sqrt(len(draws))
    assert torch.all((mean - task.weights @ d).abs() <= 4 * stderr)


def test_gaussian_steps_are_rounded_and_clipped():
    scheme = GaussianSteps(20.0, 20.0, low=1, high=96)
    tau = scheme.draw(torch.arange(20000), torch.Generator().manual_seed(0))
    assert tau.dtype == torch.int64 and int(tau.min()) == 1 and int(tau.max()) <= 96
    assert torch.all(GaussianSteps(5.0, 0.0).draw(torch.arange(4), torch.Generator()) == 5)


# ---- the surrogate objective and Assumption 3 at the algorithm's weights -------------------------
def test_surrogate_weights_and_assumption3():
    rng = np.random.default_rng(4)
    b = rng.standard_normal((4, 3))
    task = Quadratic(np.stack([np.eye(3)] * 4), b, weights=[0.1, 0.2, 0.3, 0.4])
    tau = np.array([1, 3, 5, 8])
    tau_eff, w = surrogate_weights(task, "fedavg", {"lr": LR, "local_steps": tau})
    p = task.arrays()[2]
    np.testing.assert_allclose(w, p * tau / (p @ tau), rtol=1e-14)
    assert tau_eff == pytest.approx(p @ tau, rel=1e-14)
    nova = assumption3(task, "fednova", {"lr": LR, "local_steps": tau})
    np.testing.assert_allclose(nova["w"], p)
    assert nova["chi2"] == 0.0 and nova["beta2"] == 1.0
    # H_i = I: kappa^2 = sum_i w_i ||b_i - b_w||^2 at beta^2 = 1 (fednova.md 4.12)
    avg = assumption3(task, "fedavg", {"lr": LR, "local_steps": tau})
    centre = avg["w"] @ b
    assert avg["kappa2"] == pytest.approx(float(avg["w"] @ np.sum((b - centre) ** 2, 1)), rel=1e-10)
    assert avg["chi2"] == pytest.approx(float(np.sum((p - avg["w"]) ** 2 / avg["w"])), rel=1e-12)


def test_normalized_refuses_adaptive_solvers():
    from fedbound.algorithms.optim import client
    task = hetero_quadratic()
    alg = Federated(task, client=client.adam(0.01), server=server.sgd(1.0), local_steps=2,
                    aggregation=Normalized())
    with pytest.raises(FedboundError, match="linear in the gradients"):
        run(alg, 1)


def test_random_epoch_steps():
    n_i = np.array([40, 100, 400])
    scheme = RandomEpochSteps(1, 5, n_i, 20)
    tau = torch.stack([scheme.draw(torch.arange(3), torch.Generator().manual_seed(s)) for s in range(200)])
    E = tau.numpy() * 20 / n_i                 # floor(E n_i / B) with n_i / B integral: E exactly
    assert set(np.unique(E).tolist()) == {1.0, 2.0, 3.0, 4.0, 5.0}
    cont = RandomEpochSteps(1.0, 5.0, n_i, 20, integer_epochs=False).draw(torch.arange(3), torch.Generator())
    assert np.all((cont.numpy() >= n_i // 20) & (cont.numpy() <= 5 * n_i // 20))
    with pytest.raises(FedboundError):
        RandomEpochSteps(3, 2, n_i, 20)


def test_rounds_without_participants_leave_the_model_unchanged():
    from fedbound.network.sampling import PoissonParticipation
    task = hetero_quadratic()
    alg = FedNova(task, lr=LR, local_steps=[1, 2, 3, 4], vr="corrected",
                  participation=PoissonParticipation(4, 0.2), seed=1)
    traj = run(alg, 20)
    empty = [r for r in range(1, 21) if traj.comm["uploads"][r] == traj.comm["uploads"][r - 1]]
    assert empty and all(torch.equal(traj.x_g[r], traj.x_g[r - 1]) for r in empty)


# ---- Nesterov momentum, client and server (issue 25) -----------------------------------------------
def test_nesterov_is_the_registered_switch_and_off_by_default():
    """One declaration (fedbound.algorithms.optim.registry.NESTEROV, FedAvgM's too); the default is
    the paper's heavy ball, bitwise the run with nesterov=False."""
    assert registry.get("fednova").option("nesterov") is NESTEROV is registry.get("fedavgm").option("nesterov")
    task = hetero_quadratic().with_noise(0.1)
    for options in ({"momentum": 0.5}, {"server_momentum": 0.4}, {"momentum": 0.5, "server_momentum": 0.4},
                    {"proximal_mu": 0.3, "server_momentum": 0.4}):
        common = dict(lr=LR, local_steps=[1, 3, 5, 8], clients_per_round=3, seed=2, **options)
        default = run(registry.build("fednova", task, **common), 5).x_g
        assert torch.equal(default, run(registry.build("fednova", task, nesterov=False, **common), 5).x_g)
        assert not torch.equal(default, run(registry.build("fednova", task, nesterov=True, **common), 5).x_g)


def test_nesterov_client_round_is_normalized_by_its_own_accumulation():
    """Client Nesterov (u <- rho u + g, x <- x - eta (g + rho u)): a_k = (1 - rho^(tau-k+1))/(1 - rho)
    (1 + rho times the heavy-ball a_k); the FedNova round is x + sum_i p_i (tau_eff/||a_i||_1) Delta_i,
    tau_eff = sum_i p_i ||a_i||_1, with Delta_i a per-client Nesterov loop."""
    task, rho, steps = hetero_quadratic(), 0.6, [1, 3, 5, 8]
    alg = registry.build("fednova", task, lr=LR, local_steps=steps, momentum=rho, nesterov=True)
    x0 = task.x0.numpy()
    deltas, norms = [], []
    for i, tau in enumerate(steps):
        x, u = x0.copy(), np.zeros_like(x0)
        for _ in range(tau):
            g = task.grad(torch.as_tensor(x)[None], torch.tensor([i]))[0].numpy()
            u = rho * u + g
            x = x - LR * (g + rho * u)
        deltas.append(x - x0)
        a = (1 - rho ** (tau - np.arange(tau) + 1)) / (1 - rho)
        np.testing.assert_allclose(alg.client.accumulation(tau), a, rtol=1e-14)
        norms.append(a.sum())
    p, norms = task.weights.numpy(), np.array(norms)
    expected = x0 + sum(p[i] * (p @ norms) / norms[i] * deltas[i] for i in range(len(steps)))
    np.testing.assert_allclose(alg.step(alg.init()).x_g.numpy(), expected, rtol=0, atol=1e-13)


def test_nesterov_server_first_step_is_one_plus_beta_times_heavy_balls():
    """Server Nesterov x <- x - server_lr (g + beta v) with v_1 = g: the first round moves (1 + beta)
    times the heavy-ball server's first round (g = -tau_eff eta sum_i p_i d_i, the same clients)."""
    task, beta = hetero_quadratic().with_noise(0.1), 0.4
    common = dict(lr=LR, local_steps=[1, 3, 5, 8], clients_per_round=3, server_lr=0.7, server_momentum=beta,
                  seed=6)
    heavy = registry.build("fednova", task, **common)
    nesterov = registry.build("fednova", task, nesterov=True, **common)
    x0 = heavy.init().x_g
    torch.testing.assert_close(nesterov.step(nesterov.init()).x_g - x0,
                               (1 + beta) * (heavy.step(heavy.init()).x_g - x0), rtol=1e-13, atol=1e-16)
    gen = torch.Generator().manual_seed(0)
    x, g = torch.randn(3, dtype=torch.float64, generator=gen), torch.randn(3, dtype=torch.float64, generator=gen)
    direct = server.momentum(0.7, beta, nesterov=True)
    assert torch.equal(nesterov.server.update(g, nesterov.server.init(x), x)[0],
                       direct.update(g, direct.init(x), x)[0])
    assert torch.equal(nesterov.client.update(g[None], nesterov.client.init(x[None]), x[None])[0],
                       client.sgd(LR).update(g[None], (), x[None])[0])     # SGD clients: no momentum


def test_nesterov_needs_a_momentum():
    task = hetero_quadratic()
    with pytest.raises(FedboundError, match="nesterov needs a momentum"):
        FedNova(task, lr=LR, nesterov=True)
    with pytest.raises(FedboundError, match="nesterov applies to the momentum solver"):
        local_solver(LR, mu=0.1, nesterov=True)
    with pytest.raises(FedboundError, match="nesterov"):
        FedNova(task, lr=LR, momentum=0.5, nesterov="yes")


def test_nesterov_on_the_command_line(tmp_path, capsys):
    rng = np.random.default_rng(0)
    data = tmp_path / "data.npz"
    np.savez(data, A=rng.normal(size=(5, 8, 3)), y=rng.normal(size=(5, 8)))
    base = ["run", "fednova", "--task", "lsq", "--data", str(data), "--lr", "0.05", "--local-steps",
            "1,3,5,8,2", "--momentum", "0.5", "--server-momentum", "0.3", "--rounds", "3", "--sigma", "0",
            "--float64", "--seed", "0", "--json"]
    lsq = LeastSquares.from_npz(data)
    common = dict(lr=0.05, local_steps=[1, 3, 5, 8, 2], momentum=0.5, server_momentum=0.3, seed=0)
    for flags, nesterov in (([], False), (["--nesterov"], True), (["--no-nesterov"], False)):
        out = tmp_path / f"out{len(flags)}{nesterov}"
        assert main([*base, "--out", str(out), *flags]) == 0
        config = json.loads(capsys.readouterr().out)["config"]
        assert config.get("nesterov", False) is nesterov
        python = run(registry.build("fednova", lsq, nesterov=nesterov, **common), 3).x_g[-1]
        assert np.array_equal(np.load(out / "x_final.npy"), python.numpy())
    assert main(["run", "fednova", "--lr", "0.05", "--rounds", "1", "--nesterov", "--out",
                 str(tmp_path / "x")]) == 2
    assert "nesterov needs a momentum" in capsys.readouterr().err
