"""SD-GT under Algorithm 2 (fedbound.control.sdgt.closed_loop): the loop applies the plan made from
its own estimates, energy is the cost model summed over rounds, Theorem 5's corrected interval
holds (the printed one fails where the notes say), and a seed fixes the run."""
import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.algorithms import SDGT, EnergyModel
from fedbound.control import (ClosedLoop, ControlProblem, NetSpec, k_stationary_root, objective,
                              participation, plan, theorem5_interval)
from fedbound.errors import UnknownNameError, ValidationError
from fedbound.network import Network
from fedbound.tasks import Quadratic

LAMBDAS = (1.0, 0.1, 1e-5)


def make_loop(seed=0, every=1, sizes=(4, 5), delta=1.0, K_cap=12, lambdas=(0.01, 0.1, 2e-4), **kw):
    """Noisy heterogeneous quadratic on two ring subnets with the controller's cost model."""
    network = Network.from_topology("ring", len(sizes), list(sizes))
    task = Quadratic.generate(network.n, 4, kappa=4.0, mu=0.5, seed=3).with_noise(0.3)
    E = np.array([30.0, 70.0, 50.0][: len(sizes)])
    spec = NetSpec(m=list(sizes), E=E, E_d2d=delta * E)
    alg = SDGT(task, network, lr=0.05, local_steps=3, seed=seed, energy=EnergyModel(spec.E, spec.E_d2d))
    return ClosedLoop(alg, spec, lambdas, K_cap, every=every, **kw)


def brute_force_plan(problem):
    """argmin of J over every K in 1..K_cap and h in prod_s 1..m_s (independent of integer.py)."""
    m = problem.spec.m
    best = (math.inf, None, None)
    for h in itertools.product(*(range(1, int(ms) + 1) for ms in m)):
        h = np.array(h)
        K = np.arange(1, problem.K_cap + 1)
        values = objective(K, participation(h, m), (h / m)[None, :], problem)
        i = int(np.argmin(values))
        if values[i] < best[0]:
            best = (float(values[i]), int(K[i]), tuple(int(v) for v in h))
    return best


def test_loop_applies_the_plan_of_its_own_estimates():
    loop = make_loop(every=1)
    gamma, lam1 = loop.alg.gamma, loop.problem.lambdas[0]
    state = loop.init()
    assert (state.K, state.h) == (1, (1, 1))                  # K_1 = 1, h_s = 20% of m_s (>= 1)
    controls = set()
    for t in range(1, 9):
        before = state
        state, log = loop.step(before)
        # this round used the controls decided after the previous round
        assert (log.t, log.K, log.h) == (t, before.K, before.h)
        # (28), (29) recomputed from the states with plain torch
        after = state.alg
        Y = torch.mean(torch.sum((before.alg.psi - after.psi) ** 2, dim=1)).item()
        mask = after.mask
        sq = torch.sum((after.X_end - after.x_g) ** 2, dim=1)
        sub = loop.alg.net.subnet_of
        Gamma = np.mean([sq[mask & (sub == s)].mean().item() for s in range(2)])
        assert log.Y_hat == pytest.approx(Y, rel=1e-12, abs=1e-300)
        assert log.Gamma_hat == pytest.approx(Gamma, rel=1e-12)
        # (30) with lambda1^2 as printed
        p_t = min(h * (2 * m - h) / m ** 2 for h, m in zip(log.h, (4, 5)))
        H = 1 / t + lam1 ** 2 * (log.K ** 3 * gamma ** 3 * Y / p_t ** 2 + log.K * gamma * Gamma / p_t)
        assert log.p == pytest.approx(p_t, rel=1e-15)
        assert log.H_hat == pytest.approx(H, rel=1e-12)
        # the next controls are the exact integer optimum of (31) at H-hat, found by enumeration
        problem = ControlProblem(loop.spec, H=log.H_hat, lambdas=loop.problem.lambdas,
                                 K_cap=loop.problem.K_cap)
        value, K_best, h_best = brute_force_plan(problem)
        assert (log.K_next, log.h_next) == (K_best, h_best)
        assert log.objective == pytest.approx(value, rel=1e-12)
        assert (state.K, state.h) == (K_best, h_best)
        controls.update({("K", log.K), ("h", log.h)})
    assert len({v for k, v in controls if k == "K"}) > 1      # the controller did change K ...
    assert len({v for k, v in controls if k == "h"}) > 2      # ... and the sampling


def test_control_every_r_rounds_keeps_the_plan_in_between():
    traj = make_loop(every=3).run(9)
    controlled = traj.column("controlled")
    assert controlled.tolist() == [False] + [t % 3 == 0 for t in range(1, 10)]
    K, K_next = traj.column("K"), traj.column("K_next")
    for t in range(1, 10):
        assert K[t] == K_next[t - 1]                          # every round runs the controls in force
        if not controlled[t]:
            assert K_next[t] == K[t] and np.isnan(traj.logs[t].H_hat)
    assert K[1:4].tolist() == [1, 1, 1]


def test_energy_is_the_cost_model_summed_over_rounds():
    loop = make_loop(delta=0.3)
    traj = loop.run(8)
    K, h = traj.column("K")[1:], traj.column("h")[1:]
    per_round = (h / loop.spec.m) @ loop.spec.E + K * loop.spec.E_d2d.sum()
    assert traj.column("energy_round")[1:] == pytest.approx(per_round, rel=1e-13)
    assert traj.column("energy")[1:] == pytest.approx(np.cumsum(per_round), rel=1e-13)
    assert traj.column("energy")[0] == 0.0


def test_same_seed_same_run_and_another_seed_another_run():
    a, b, c = make_loop(seed=5).run(6), make_loop(seed=5).run(6), make_loop(seed=6).run(6)
    for name in ("K", "h", "H_hat", "energy", "loss", "Y_hat", "Gamma_hat", "K_root"):
        assert np.array_equal(a.column(name), b.column(name), equal_nan=True), name
    assert torch.equal(a.final_state.alg.x_g, b.final_state.alg.x_g)
    assert not np.array_equal(a.column("loss"), c.column("loss"))


@settings(max_examples=25, deadline=None)
@given(S=st.integers(1, 4), seed=st.integers(0, 2 ** 31 - 1))
def test_corrected_theorem5_contains_the_continuous_K_star(S, seed):
    """Random (31) instances with K_cap far away: the continuous optimum K* of the GP is the root of
    (118) at the optimal p, and that root lies in the corrected Theorem 5 interval. Near its
    minimum the objective is flat in K (second order), so the solver's tolerance on the objective
    (about 1e-8) fixes K only to about its square root: K is compared to 1e-2 and the objective at
    the two K to 1e-6."""
    rng = np.random.default_rng(seed)
    E = rng.uniform(1, 100, S)
    spec = NetSpec(m=rng.integers(1, 31, S), E=E, E_d2d=E * 10 ** rng.uniform(-3, 1, S))
    lambdas = tuple(10 ** rng.uniform([-1, -3, -6], [1, 0, -3]))
    H = 10 ** rng.uniform(-4, 1)
    problem = ControlProblem(spec, H=H, lambdas=lambdas, K_cap=10 ** 7)
    decision = plan(problem, method="gp")
    p_star = decision.continuous.p
    root = k_stationary_root(p_star, H, lambdas, float(spec.E_d2d.sum()))
    if 1.01 < decision.continuous.K < problem.K_cap / 1.01:
        c = decision.continuous
        assert c.K == pytest.approx(root, rel=1e-2)
        assert objective(c.K, p_star, c.u, problem) == pytest.approx(
            objective(root, p_star, c.u, problem), rel=1e-6)
    interval = theorem5_interval(H, lambdas, spec)
    lo, hi = interval.corrected
    assert lo <= root <= hi, (root, interval)
    # the bound holds for the root at every admissible p, not only the optimal one
    for p in np.linspace(problem.p_floor, 1.0, 7):
        assert lo <= k_stationary_root(float(p), H, lambdas, float(spec.E_d2d.sum())) <= hi


def test_printed_theorem5_fails_on_the_notes_example():
    """sdgt.md 4.7 / F29: lambda2 = 0.1, H = 1, m_s = 10, lambda3 sum E^D2D = 1.5e-5."""
    spec = NetSpec(m=[10, 10, 10], E=[50.0, 50.0, 50.0], E_d2d=[0.5, 0.5, 0.5])
    interval = theorem5_interval(1.0, LAMBDAS, spec)
    p_lo, p_hi = interval.printed
    assert p_lo > p_hi                                        # the printed bounds cross
    assert p_lo == pytest.approx(1.6e3, rel=0.01) and p_hi == pytest.approx(7.4e2, rel=0.01)
    for p in (1.0, 0.5, 0.19):
        root = k_stationary_root(p, 1.0, LAMBDAS, 1.5)
        assert interval.contains(root) == {"printed": False, "corrected": True}


def test_logged_theorem5_verdicts_are_computed_from_the_logged_numbers():
    loop = make_loop(delta=0.01, K_cap=6, lambdas=(1.0, 0.1, 1e-3))
    traj = loop.run(5)
    for log in traj.logs[1:]:
        interval = theorem5_interval(log.H_hat, (1.0, 0.1, 1e-3), loop.spec)
        assert (log.thm5_corrected_lower, log.thm5_corrected_upper) == interval.corrected
        assert (log.thm5_printed_lower, log.thm5_printed_upper) == interval.printed
        assert log.corrected_contains_root
        assert log.printed_contains_root == (interval.printed[0] <= log.K_root <= interval.printed[1])
        assert log.K_root > log.K_next == 6                   # the cap binds, the bounds ignore it


def test_variant_cor1_has_no_theorem5_bounds_and_static_ignores_H():
    spec = NetSpec(m=[10], E=[50.0], E_d2d=[0.5])
    assert all(math.isnan(v) for v in theorem5_interval(0.3, LAMBDAS, spec, "cor1").corrected)
    assert theorem5_interval(0.3, LAMBDAS, spec, "static") == theorem5_interval(1.0, LAMBDAS, spec)
    free = NetSpec(m=[10], E=[50.0], E_d2d=[0.0])
    assert theorem5_interval(0.3, LAMBDAS, free).corrected == (math.inf, math.inf)


def test_bad_configurations_are_one_line_errors():
    loop = make_loop()
    alg, spec = loop.alg, loop.spec
    with pytest.raises(ValidationError, match="subnet sizes"):
        ClosedLoop(alg, NetSpec(m=[5, 4], E=[1.0, 1.0], E_d2d=[1.0, 1.0]))
    with pytest.raises(ValidationError, match="alg.energy"):
        ClosedLoop(alg, NetSpec(m=[4, 5], E=[1.0, 1.0], E_d2d=[1.0, 1.0]))
    with pytest.raises(ValidationError, match="gamma"):
        ClosedLoop(alg, NetSpec(m=[4, 5], E=spec.E, E_d2d=spec.E_d2d, gamma=0.5))
    with pytest.raises(ValidationError, match="every"):
        ClosedLoop(alg, spec, every=0)
    with pytest.raises(ValidationError, match="K_init"):
        ClosedLoop(alg, spec, K_cap=4, K_init=5)
    with pytest.raises(UnknownNameError, match="method"):
        ClosedLoop(alg, spec, method="grid")
    with pytest.raises(ValidationError, match="unknown log field"):
        loop.run(0).column("nope")
