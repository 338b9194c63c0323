"""The objective variants of (27)/(31) and the K-stationarity root of (118) (seed 003 [L404-L430], [L1226])."""
import math

import numpy as np
import pytest

from fedbound.control import ControlProblem, NetSpec, k_stationary_root, objective, participation
from fedbound.control.sdgt.objective import best_u, k_minimizer, reduced_objective
from fedbound.errors import UnknownNameError, ValidationError

SPEC = NetSpec(m=[10, 4, 7], E=[42.0, 3.5, 80.0], E_d2d=[0.4, 0.01, 1.2])
LAM = (0.7, 0.2, 3e-4)


def paper_formula(K, beta, H, lam, spec, k_power=1.0):
    """(31) written from the paper's beta_s, independent of the module's coefficient code;
    k_power = 1 gives (lambda2 H/(K p^2))^2/3, k_power = 1/2 the F24 variant."""
    l1, l2, l3 = lam
    p = min(1 - b * b for b in beta)
    return (l1 * H / p ** 2 + math.sqrt(l2 * H / K) + (l2 * H / (K ** k_power * p ** 2)) ** (2 / 3)
            + l3 * (sum((1 - b) * e for b, e in zip(beta, spec.E)) + K * sum(spec.E_d2d)))


@pytest.mark.parametrize("variant, H_used, k_power", [("paper", 0.37, 1.0), ("static", 1.0, 1.0),
                                                      ("cor1", 0.37, 0.5)])
def test_objective_matches_the_printed_formula(variant, H_used, k_power):
    h = np.array([3, 4, 2])
    u = h / SPEC.m
    K = 17.0
    pb = ControlProblem(SPEC, H=0.37, lambdas=LAM, K_cap=100, variant=variant)
    got = objective(K, participation(h, SPEC.m), u, pb)
    want = paper_formula(K, 1 - u, H_used, LAM, SPEC, k_power)
    assert got == pytest.approx(want, rel=1e-13)


def test_participation_is_exact_min_of_one_minus_beta_squared():
    h = np.array([[3, 4, 2], [10, 1, 7]])
    beta = 1 - h / SPEC.m
    assert np.allclose(participation(h, SPEC.m), np.min(1 - beta ** 2, axis=-1), rtol=0, atol=1e-15)


def test_best_u_is_cheapest_feasible():
    for p in np.linspace(0.05, 0.999, 40):
        u = best_u(p, SPEC.m)
        assert np.all(u * (2 - u) >= p - 1e-14) and np.all(u >= 1 / SPEC.m - 1e-15)
        below = u - 1e-7
        assert np.all((below * (2 - below) < p) | (below < 1 / SPEC.m))


@pytest.mark.parametrize("variant", ["paper", "static", "cor1"])
def test_k_root_solves_118_and_minimizes(variant):
    rng = np.random.default_rng(0)
    for _ in range(30):
        p, H = rng.uniform(0.05, 1), 10 ** rng.uniform(-3, 1)
        lam = tuple(10 ** rng.uniform([-1, -2, -6], [0.5, 0, -2]))
        d2d = 10 ** rng.uniform(-2, 1)
        K = k_stationary_root(p, H, lam, d2d, variant)
        h = 1.0 if variant == "static" else H
        e = 1 / 3 if variant == "cor1" else 2 / 3
        # (118) [L1226] as printed for e = 2/3; the same stationarity with e = 1/3 for cor1
        lhs = 0.5 * math.sqrt(lam[1] * h) * K ** -1.5 + e * (lam[1] * h / p ** 2) ** (2 / 3) * K ** (-1 - e)
        assert lhs == pytest.approx(lam[2] * d2d, rel=1e-10)
        spec = NetSpec(m=[5], E=[1.0], E_d2d=[d2d])
        pb = ControlProblem(spec, H=H, lambdas=lam, K_cap=10 ** 9, variant=variant)
        f = lambda k: reduced_objective(k, p, pb)
        assert f(K) <= min(f(K * 1.001), f(K / 1.001))


def test_k_minimizer_clips_to_the_box():
    spec = NetSpec(m=[5, 5], E=[1.0, 1.0], E_d2d=[1.0, 1.0])
    big = ControlProblem(spec, H=1.0, lambdas=(1, 0.1, 1e-8), K_cap=30)
    assert k_minimizer(0.5, big) == 30.0                      # root far above the cap
    small = ControlProblem(spec, H=1.0, lambdas=(1, 0.1, 10.0), K_cap=30)
    assert k_minimizer(0.5, small) == 1.0                     # root below 1
    free = ControlProblem(NetSpec(m=[5], E=[1.0], E_d2d=[0.0]), K_cap=30)
    assert k_minimizer(0.5, free) == 30.0                     # no D2D cost


def test_invalid_inputs_raise_one_line_errors():
    with pytest.raises(UnknownNameError, match="unknown objective variant 'nope'"):
        ControlProblem(SPEC, variant="nope")
    with pytest.raises(ValidationError, match="lambda2 must be finite and > 0"):
        ControlProblem(SPEC, lambdas=(1, 0, 1))
    with pytest.raises(ValidationError, match="K_cap must be an integer >= 1, got 0"):
        ControlProblem(SPEC, K_cap=0)
    with pytest.raises(ValidationError, match="H must be finite and > 0"):
        ControlProblem(SPEC, H=-1.0)
    with pytest.raises(ValidationError, match="E_d2d_sum must be finite and > 0"):
        k_stationary_root(0.5, 1.0, LAM, 0.0)
