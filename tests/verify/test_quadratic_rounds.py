"""Exact quadratic round maps of FedAvg/FedProx/FedNova (fedbound.verify.quadratic_rounds)."""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.errors import FedboundError
from fedbound.local_solver import LocalSolver
from fedbound.verify.quadratic_rounds import (
    QuadraticProblem, accumulation, fixed_point, limit_fixed_point, round_map,
)


def random_problem(seed: int, n: int, d: int, identity: bool = False) -> QuadraticProblem:
    rng = np.random.default_rng(seed)
    if identity:
        H = np.broadcast_to(np.eye(d), (n, d, d))
    else:
        G = rng.standard_normal((n, d, d))
        H = G @ np.swapaxes(G, 1, 2) / d + 0.2 * np.eye(d)
    p = rng.uniform(0.5, 1.5, n)
    return QuadraticProblem.build(H, rng.standard_normal((n, d)), p / p.sum())


def loop_round(problem, tau, lr, mu, rho, gamma, c, x):
    """Independent reference: one round as a per-client loop of local steps (plain numpy)."""
    x_new = x.copy()
    for i in range(problem.n):
        y, u = x.copy(), np.zeros_like(x)
        for k in range(int(tau[i])):
            g = problem.H[i] @ (y - problem.b[i])
            u = rho * u + g + mu * (y - x)
            y = y - lr * gamma ** k * u
        x_new += c[i] * (y - x)
    return x_new


# ---- accumulation vectors: the notes' closed forms (fednova.md sec. 2.3, App. B L389-L439) -------
@given(tau=st.integers(1, 40), lr=st.floats(1e-3, 0.5), mu=st.floats(0.0, 1.5),
       rho=st.floats(0.0, 0.95), gamma=st.floats(0.3, 1.0))
def test_accumulation_closed_forms(tau, lr, mu, rho, gamma):
    k = np.arange(tau)
    np.testing.assert_allclose(accumulation(LocalSolver(lr), tau), np.ones(tau), rtol=1e-12)
    alpha = lr * mu
    prox = accumulation(LocalSolver(lr, mu=mu), tau)
    np.testing.assert_allclose(prox, (1 - alpha) ** (tau - 1 - k), rtol=1e-10, atol=1e-14)
    mom = accumulation(LocalSolver(lr, momentum=rho), tau)
    np.testing.assert_allclose(mom, (1 - rho ** (tau - k)) / (1 - rho), rtol=1e-10)
    # ||a||_1 of momentum, (45) [L430]
    np.testing.assert_allclose(mom.sum(), (tau - rho * (1 - rho ** tau) / (1 - rho)) / (1 - rho),
                               rtol=1e-10)
    np.testing.assert_allclose(accumulation(LocalSolver(lr, lr_decay=gamma), tau), gamma ** k, rtol=1e-12)


def test_accumulation_recovered_from_simulated_run():
    """a = the coefficients of the gradients recovered from a run with random (non-quadratic)
    gradients: -Delta/lr = G a, G the (d, tau) matrix of the gradients used."""
    rng = np.random.default_rng(3)
    tau, lr, mu, rho, gamma = 7, 0.1, 0.7, 0.6, 0.9
    G = rng.standard_normal((tau + 3, tau))  # full column rank
    y, u, x = np.zeros(tau + 3), np.zeros(tau + 3), np.zeros(tau + 3)
    for k in range(tau):
        u = rho * u + G[:, k] + mu * (y - x)
        y = y - lr * gamma ** k * u
    coeffs = np.linalg.lstsq(G, -(y - x) / lr, rcond=None)[0]
    np.testing.assert_allclose(coeffs, accumulation(LocalSolver(lr, mu, rho, gamma), tau), rtol=1e-12)


# ---- the affine map equals a per-client loop ------------------------------------------------------
@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 4), d=st.integers(1, 4),
       agg=st.sampled_from(["mean", "normalized"]), mu=st.sampled_from([0.0, 0.5]),
       rho=st.sampled_from([0.0, 0.5]), gamma=st.sampled_from([1.0, 0.8]))
def test_round_map_equals_loop(seed, n, d, agg, mu, rho, gamma):
    problem = random_problem(seed, n, d)
    rng = np.random.default_rng(seed + 1)
    tau = rng.integers(1, 7, n)
    lr = 0.05
    rmap = round_map(problem, tau, LocalSolver(lr, mu, rho, gamma), agg)
    x = rng.standard_normal(d)
    np.testing.assert_allclose(rmap(x), loop_round(problem, tau, lr, mu, rho, gamma, rmap.c, x),
                               rtol=1e-12, atol=1e-12)


def test_fednova_weights_are_tau_eff_p_over_norms():
    problem = random_problem(0, 3, 2)
    tau = np.array([1, 4, 9])
    rmap = round_map(problem, tau, LocalSolver(0.1), "normalized", tau_eff="steps")
    np.testing.assert_allclose(rmap.c, (problem.p @ tau) * problem.p / tau, rtol=1e-15)


def test_framework_identity_5_6():
    """FedAvg's update is FedNova's rule (4) with the implicit tau_eff = sum p_i ||a_i||_1 and
    w_i = p_i ||a_i||_1 / tau_eff (eq. (5)-(6) [L115-L116]), for every linear solver."""
    problem = random_problem(1, 4, 3)
    tau = np.array([2, 5, 1, 8])
    for solver in (LocalSolver(0.05), LocalSolver(0.05, mu=0.8), LocalSolver(0.05, momentum=0.7),
                   LocalSolver(0.05, lr_decay=0.9)):
        avg = round_map(problem, tau, solver, "mean")
        tau_eff = float(problem.p @ avg.a_norm)
        w = problem.p * avg.a_norm / tau_eff
        surrogate = QuadraticProblem.build(problem.H, problem.b, w)
        nova = round_map(surrogate, tau, solver, "normalized", tau_eff=tau_eff)
        np.testing.assert_allclose(nova.M, avg.M, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(nova.v, avg.v, rtol=1e-12, atol=1e-14)


def test_equal_steps_fednova_equals_fedavg():
    problem = random_problem(2, 5, 3)
    a = round_map(problem, 6, LocalSolver(0.05), "mean")
    b = round_map(problem, 6, LocalSolver(0.05), "normalized")
    np.testing.assert_allclose(b.M, a.M, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(b.v, a.v, rtol=1e-14, atol=1e-15)


# ---- fixed points: Lemma 1 / App. A in exact arithmetic -------------------------------------------
def test_lemma1_eq29_exact():
    """(29) [L376-L380]: H_i = I, p_i = 1/m: x~ = sum_i [1-(1-lr)^tau_i] e_i / sum_i [1-(1-lr)^tau_i],
    evaluated in exact rationals, equals the float64 fixed point to 1e-12."""
    rng = np.random.default_rng(5)
    m, d = 6, 3
    e = np.round(rng.standard_normal((m, d)), 3)
    tau = rng.integers(1, 20, m)
    lr = sp.Rational(1, 20)
    K = [1 - (1 - lr) ** int(t) for t in tau]
    exact = [sum(K[i] * sp.Rational(repr(float(e[i, j]))) for i in range(m)) / sum(K) for j in range(d)]
    problem = QuadraticProblem.build(np.broadcast_to(np.eye(d), (m, d, d)), e)
    got = fixed_point(problem, tau, LocalSolver(0.05), "mean")["fixed_point"]
    np.testing.assert_allclose(got, np.array([float(v) for v in exact]), rtol=1e-12, atol=1e-14)


def test_notes_test_vector():
    """fednova.md sec. 4.1: m = 2, d = 1, e = (1, -1), tau = (1, 3), p = 1/2, lr = 0.1."""
    problem = QuadraticProblem.build(np.ones((2, 1, 1)), [[1.0], [-1.0]])
    def fp(solver, agg):
        return fixed_point(problem, [1, 3], solver, agg)["fixed_point"][0]
    assert fp(LocalSolver(0.1), "mean") == pytest.approx(-0.460916442, abs=1e-9)
    assert fp(LocalSolver(0.1, mu=1.0), "mean") == pytest.approx(-0.418604651, abs=1e-9)
    assert fp(LocalSolver(0.1), "normalized") == pytest.approx(0.050788091, abs=1e-9)
    assert limit_fixed_point(problem, [1, 3], LocalSolver(0.1))[0] == pytest.approx(-0.5, abs=1e-15)
    assert limit_fixed_point(problem, [1, 3], LocalSolver(0.1), "normalized")[0] == pytest.approx(0.0, abs=1e-15)


def test_appendix_a_eq28_general_hessians():
    """(28): x~ = (sum p_i K_i H_i)^{-1} sum p_i K_i e_i, K_i = [I - (I - lr mu I - lr H_i)^tau_i]
    (H_i + mu I)^{-1}, and the notes' derived FedNova point with K_i / ||a_i||_1."""
    problem = random_problem(7, 4, 3)
    tau = np.array([3, 1, 6, 2])
    lr, mu = 0.07, 0.4
    d = problem.d
    K = [(np.eye(d) - np.linalg.matrix_power(np.eye(d) - lr * mu * np.eye(d) - lr * problem.H[i], t))
         @ np.linalg.inv(problem.H[i] + mu * np.eye(d)) for i, t in enumerate(tau)]
    e = problem.e
    A = sum(problem.p[i] * K[i] @ problem.H[i] for i in range(4))
    v = sum(problem.p[i] * K[i] @ e[i] for i in range(4))
    fedprox = fixed_point(problem, tau, LocalSolver(lr, mu=mu), "mean")
    np.testing.assert_allclose(fedprox["fixed_point"], np.linalg.solve(A, v), rtol=1e-11)
    norms = (1 - (1 - lr * mu) ** tau) / (lr * mu)
    A = sum(problem.p[i] * K[i] @ problem.H[i] / norms[i] for i in range(4))
    v = sum(problem.p[i] * K[i] @ e[i] / norms[i] for i in range(4))
    nova = fixed_point(problem, tau, LocalSolver(lr, mu=mu), "normalized")
    np.testing.assert_allclose(nova["fixed_point"], np.linalg.solve(A, v), rtol=1e-11)


def test_iterating_the_map_reaches_the_fixed_point():
    problem = random_problem(11, 5, 4)
    tau = np.array([1, 2, 5, 3, 4])
    rmap = round_map(problem, tau, LocalSolver(0.05, momentum=0.5), "normalized")
    assert rmap.spectral_radius() < 1
    x = np.zeros(problem.d)
    for _ in range(3000):
        x = rmap(x)
    np.testing.assert_allclose(x, rmap.fixed_point(), rtol=0, atol=1e-10)


@pytest.mark.parametrize("agg", ["mean", "normalized"])
def test_limits_approached_with_slope_one(agg):
    problem = random_problem(13, 6, 3)
    tau = np.array([1, 3, 8, 2, 5, 13])
    target = limit_fixed_point(problem, tau, LocalSolver(1.0, mu=0.5), agg)
    lrs = np.geomspace(1e-5, 1e-3, 6)
    err = [np.linalg.norm(fixed_point(problem, tau, LocalSolver(lr, mu=0.5), agg)["fixed_point"] - target)
           for lr in lrs]
    slope = np.polyfit(np.log(lrs), np.log(err), 1)[0]
    assert slope == pytest.approx(1.0, abs=0.03)


def test_fednova_only_consistent_as_lr_to_zero():
    """fednova.md sec. 7.4: on the Fig. 2 setup (m = 30, e_i ~ N(0, 0.01 I), tau_i in [1, 96]) at
    lr = 0.05 FedNova's exact fixed point is farther from x* than FedAvg's; at lr = 1e-4 it is
    more than 100x closer. Computed for several draws."""
    for seed in range(5):
        rng = np.random.default_rng(seed)
        e = rng.normal(0.0, 0.1, (30, 10))
        tau = rng.integers(1, 97, 30)
        problem = QuadraticProblem.build(np.broadcast_to(np.eye(10), (30, 10, 10)), e)
        def dist(lr, agg):
            return fixed_point(problem, tau, LocalSolver(lr), agg)["distance_to_x_star"]
        assert dist(0.05, "normalized") > dist(0.05, "mean")
        assert 100 * dist(1e-4, "normalized") < dist(1e-4, "mean")


@pytest.mark.parametrize("bad", [
    dict(lr=0.0), dict(lr=float("nan")), dict(lr="a"), dict(mu=-1.0), dict(momentum=1.0), dict(lr_decay=0.0),
    dict(lr_decay=1.5), dict(lr=[0.1, 0.2, 0.3]),
])
def test_bad_solver_parameters(bad):
    problem = random_problem(0, 2, 2)
    with pytest.raises(FedboundError):
        round_map(problem, 3, LocalSolver(**{"lr": 0.1, **bad}))


@pytest.mark.parametrize("args", [
    dict(H=np.ones((2, 2, 3)), b=np.zeros((2, 2))), dict(H=-np.ones((1, 1, 1)), b=np.zeros((1, 1))),
    dict(H=np.ones((2, 1, 1)), b=np.zeros((2, 1)), p=[0.2, 0.2]),
    dict(H=np.ones((2, 1, 1)), b=np.zeros((3, 1))), dict(H=[[["x"]]], b=[[0.0]]),
    dict(H=np.array([[[1.0, 2.0], [0.0, 1.0]]]), b=np.zeros((1, 2))),
])
def test_bad_problems(args):
    with pytest.raises(FedboundError):
        QuadraticProblem.build(**args)


@pytest.mark.parametrize("tau", [0, -1, 2.5, [1, 2, 3], "3", float("inf")])
def test_bad_steps(tau):
    with pytest.raises(FedboundError):
        round_map(random_problem(0, 2, 2), tau, LocalSolver(0.1))
