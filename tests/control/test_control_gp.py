"""Problem (31) as an exact DGP (sdgt.md 5.4): brute-force agreement, (118), tightness,
monotonicity, DPP caching, solver checks, and no finite-set constraints anywhere."""
import ast
import math
from pathlib import Path

import cvxpy as cp
import numpy as np
import pytest

import fedbound
from fedbound.control import (ControlProblem, NetSpec, compiled_gp, k_stationary_root, reduced_objective,
                              solve_gp, solve_reduced)
from fedbound.errors import SolverError


def random_problem(rng, variant="paper", K_cap=None):
    S = int(rng.integers(1, 5))
    E = 10 ** rng.uniform(0, 2, S)
    spec = NetSpec(m=rng.integers(1, 31, S), E=E, E_d2d=E * 10 ** rng.uniform(-2, 0, S))
    lam = tuple(10 ** rng.uniform([-1, -2, -5], [0.5, 0, -3]))
    cap = int(rng.choice([50, 1000, 10000])) if K_cap is None else K_cap
    return ControlProblem(spec, H=10 ** rng.uniform(-3, 0), lambdas=lam, K_cap=cap, variant=variant)


def grid_minimum(pb, n=1500):
    """Brute force over a fine (K, p) grid of the reduced objective phi(K, p): log-spaced K in
    [1, K_cap]; p = 1 - t^2 with t uniform (u(p) = 1 - t is then uniform) plus every kink."""
    K = np.exp(np.linspace(0.0, math.log(pb.K_cap), n))
    t_max = math.sqrt(1 - pb.p_floor)
    t = np.unique(np.concatenate([np.linspace(0.0, t_max, n), np.clip(1 - 1 / pb.spec.m, 0, t_max)]))
    values = reduced_objective(K[:, None], (1 - t * t)[None, :], pb)
    return float(values.min())


@pytest.mark.parametrize("variant", ["paper", "static", "cor1"])
def test_gp_equals_fine_grid_and_reduced_route(variant):
    rng = np.random.default_rng({"paper": 1, "static": 2, "cor1": 3}[variant])
    for _ in range(6):
        pb = random_problem(rng, variant)
        gp = solve_gp(pb)
        grid = grid_minimum(pb)
        # the GP is the minimum over a set containing every grid point (to solver tolerance) ...
        assert gp.value <= grid * (1 + 1e-7)
        # ... and the grid comes within its resolution of it
        assert grid <= gp.value * (1 + 1e-4)
        red = solve_reduced(pb)
        assert red.value == pytest.approx(gp.value, rel=1e-6)
        assert red.max_violation <= 1e-12


def test_k_star_solves_118_at_the_optimal_p():
    rng = np.random.default_rng(11)
    checked = 0
    while checked < 8:
        pb = random_problem(rng, K_cap=10 ** 6)
        gp = solve_gp(pb)
        if not 1.5 < gp.K < pb.K_cap / 1.5:
            continue
        root = k_stationary_root(gp.p, pb.H, pb.lambdas, float(pb.spec.E_d2d.sum()), pb.variant)
        # J is flat in K at its minimum: a 1e-8 objective tolerance allows ~1e-4 relative in K
        assert gp.K == pytest.approx(root, rel=3e-3)
        red = solve_reduced(pb)
        assert red.K == pytest.approx(k_stationary_root(red.p, pb.H, pb.lambdas,
                                                        float(pb.spec.E_d2d.sum())), rel=1e-10)
        checked += 1


def test_relaxation_is_tight():
    rng = np.random.default_rng(12)
    for _ in range(10):
        sol = solve_gp(random_problem(rng))
        assert abs(sol.slack) <= 1e-6          # p* = min_s u_s (2 - u_s)
        assert sol.max_violation <= 1e-6


def _monotone_cases(solve, n, seed):
    """Pairs (base, cheaper D2D) and (base, larger lambda3) on random instances."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        pb = random_problem(rng, variant=str(rng.choice(["paper", "static", "cor1"])), K_cap=10 ** 6)
        cheaper = NetSpec(m=pb.spec.m, E=pb.spec.E, E_d2d=pb.spec.E_d2d * 10 ** rng.uniform(-2, -0.05))
        lam = pb.lambdas[:2] + (pb.lambdas[2] * 10 ** rng.uniform(0.05, 2),)
        base = solve(pb)
        d2d = solve(ControlProblem(cheaper, pb.H, pb.lambdas, pb.K_cap, pb.variant))
        lam3 = solve(ControlProblem(pb.spec, pb.H, lam, pb.K_cap, pb.variant))
        yield base, d2d, lam3


@pytest.mark.parametrize("solve, n, rtol, atol", [(solve_gp, 12, 3e-3, 1e-5),
                                                  (solve_reduced, 300, 1e-8, 1e-7)])
def test_monotonicity(solve, n, rtol, atol):
    moved = 0
    for base, d2d, lam3 in _monotone_cases(solve, n, seed=13):
        assert d2d.K >= base.K * (1 - rtol)                 # cheaper D2D -> more D2D rounds
        assert lam3.K <= base.K * (1 + rtol)                # larger lambda3 -> fewer rounds ...
        assert lam3.p <= base.p + atol                      # ... and less sampling
        assert np.all(lam3.u <= base.u + atol)
        moved += d2d.K > base.K * 1.01 and lam3.K < base.K / 1.01
    assert moved >= n // 2                                  # the instances do exercise the claim


def test_problem_is_dpp_and_compiled_once_per_shape():
    spec = NetSpec(m=[10, 8, 12], E=[42.0, 90.0, 5.0], E_d2d=[0.4, 0.9, 0.05])
    a, b = ControlProblem(spec, H=1.0), ControlProblem(spec, H=0.01, lambdas=(2, 0.3, 1e-4), K_cap=9)
    assert compiled_gp(a).is_dgp(dpp=True)
    assert compiled_gp(a) is compiled_gp(b)
    assert compiled_gp(ControlProblem(spec, variant="cor1")) is not compiled_gp(a)
    first, second = solve_gp(a), solve_gp(b)
    assert second.K <= 9 * (1 + 1e-6) and first.K > 9       # the re-solve used the new values


def test_zero_costs_are_dropped_not_approximated():
    spec = NetSpec(m=[6, 9], E=[0.0, 30.0], E_d2d=[0.0, 0.0])
    pb = ControlProblem(spec, H=0.3, K_cap=40)
    gp, red = solve_gp(pb), solve_reduced(pb)
    assert gp.K == pytest.approx(40, rel=1e-6)               # no D2D cost: K at the cap
    assert gp.value == pytest.approx(red.value, rel=1e-6)


def test_failed_solves_raise_solver_error():
    pb = ControlProblem(NetSpec(m=[10, 8], E=[42.0, 90.0], E_d2d=[0.4, 0.9]), H=0.01, K_cap=5000)
    with pytest.raises(SolverError, match="violates a constraint"):
        solve_gp(pb, solver="SCS", max_iters=2)
    with pytest.raises(SolverError, match="GP solver OSQP failed"):
        solve_gp(pb, solver="OSQP")


def test_rejected_clarabel_attempt_is_retried_then_reported(monkeypatch):
    pb = ControlProblem(NetSpec(m=[10, 8, 3], E=[42.0, 90.0, 7.0], E_d2d=[0.4, 0.9, 0.1]), H=0.2, K_cap=300)
    prob = compiled_gp(pb)
    real, calls = prob.solve, []

    def flaky(*args, **kwargs):
        calls.append(kwargs)
        if len(calls) == 1:
            raise cp.error.SolverError("Solver 'CLARABEL' failed.")
        return real(*args, **kwargs)

    monkeypatch.setattr(prob, "solve", flaky)
    sol = solve_gp(pb)
    assert len(calls) == 2 and sol.settings == "CLARABEL: max_step_fraction=0.9"
    assert sol.value == pytest.approx(solve_reduced(pb).value, rel=1e-6)

    def broken(*args, **kwargs):
        raise cp.error.SolverError("Solver 'CLARABEL' failed.")

    monkeypatch.setattr(prob, "solve", broken)
    with pytest.raises(SolverError, match=r"GP solver CLARABEL failed for S=3: .* \(after 3 settings\)"):
        solve_gp(pb)


def test_no_finite_set_constraint_in_the_package():
    """cvxpy silently relaxes a finite-set constraint without a mixed-integer solver (anchors.md 4.3)."""
    banned = "Finite" + "Set"
    root = Path(fedbound.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            name = getattr(node, "attr", None) or getattr(node, "id", None)
            if name == banned or (isinstance(node, ast.alias) and node.name.endswith(banned)):
                offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert offenders == []
