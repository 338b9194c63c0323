"""Certified integer decisions (K, h_s) equal exhaustive enumeration; the Plan's bounds."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fedbound.control import ControlProblem, NetSpec, integer_optimum, objective, participation, plan
from fedbound.control.sdgt.baseline import official_grid
from fedbound.errors import UnknownNameError


def brute_force(pb):
    """min of J over every K in 1..K_cap and every h in prod_s {1..m_s}."""
    m = pb.spec.m
    h = np.array(list(itertools.product(*[range(1, int(x) + 1) for x in m])))
    K = np.arange(1, pb.K_cap + 1)
    values = objective(K[:, None], participation(h, m)[None, :], (h / m)[None, :, :], pb)
    return float(values.min())


positive = st.floats(1e-3, 1e2)


@st.composite
def small_problems(draw):
    S = draw(st.integers(1, 3))
    m = draw(st.lists(st.integers(1, 5), min_size=S, max_size=S))
    E = draw(st.lists(st.floats(0.0, 1e2), min_size=S, max_size=S))
    E_d2d = draw(st.lists(st.floats(0.0, 10.0), min_size=S, max_size=S))
    lam = (draw(positive), draw(positive), draw(st.floats(1e-6, 1.0)))
    return ControlProblem(NetSpec(m=m, E=E, E_d2d=E_d2d), H=draw(st.floats(1e-4, 10.0)), lambdas=lam,
                          K_cap=draw(st.integers(1, 20)),
                          variant=draw(st.sampled_from(["paper", "static", "cor1"])))


@settings(max_examples=150, deadline=None)
@given(small_problems())
def test_integer_optimum_equals_exhaustive_enumeration(pb):
    best = integer_optimum(pb)
    assert best.value == pytest.approx(brute_force(pb), rel=1e-12, abs=0)
    # the returned point is feasible and its value is what it claims
    assert 1 <= best.K <= pb.K_cap and all(1 <= h <= m for h, m in zip(best.h, pb.spec.m))
    u = np.array(best.h) / pb.spec.m
    # the same formula, but integer_optimum evaluates it over a batch of decisions (a matrix-vector
    # product where this is a dot product): a few ulp apart, not bitwise
    assert objective(best.K, participation(best.h, pb.spec.m), u, pb) == pytest.approx(best.value, rel=1e-14, abs=0)
    assert best.certificate.levels <= sum(int(m) for m in pb.spec.m)


@pytest.mark.parametrize("method", ["gp", "reduced"])
def test_plan_lower_bound_gap_and_official_grid(method):
    rng = np.random.default_rng(21)
    for _ in range(8):
        S = int(rng.integers(1, 6))
        E = rng.uniform(1, 100, S)
        spec = NetSpec(m=rng.integers(1, 25, S), E=E, E_d2d=E * 10 ** rng.uniform(-2, 0))
        pb = ControlProblem(spec, H=10 ** rng.uniform(-3, 0), K_cap=49)
        result = plan(pb, method=method)
        assert result.lower_bound <= result.objective * (1 + 1e-6)
        assert result.gap == pytest.approx(result.objective - result.lower_bound)
        assert result.p == pytest.approx(min(1 - b * b for b in result.beta), abs=1e-15)
        assert result.energy_per_round == pytest.approx(
            float(np.dot(np.array(result.h) / spec.m, spec.E) + result.K * spec.E_d2d.sum()))
        # the released code's grid (same K range, one shared sample count) is a subset of ours
        assert result.objective <= official_grid(pb).value


def test_plan_to_dict_and_bad_method():
    pb = ControlProblem(NetSpec(m=[10, 8], E=[42.0, 90.0], E_d2d=[0.4, 0.9]), H=0.05, K_cap=200)
    d = plan(pb).to_dict()
    for key in ("K", "h", "beta", "p", "objective", "energy_per_round", "lower_bound", "gap",
                "continuous", "certificate"):
        assert key in d
    assert set(d["continuous"]) >= {"K", "p", "u"}
    with pytest.raises(UnknownNameError, match="unknown controller method"):
        plan(pb, method="grid")


def test_large_network_uses_few_candidates():
    rng = np.random.default_rng(3)
    spec = NetSpec(m=rng.integers(5, 60, 100), E=rng.uniform(1, 100, 100), E_d2d=rng.uniform(0.01, 1, 100))
    best = integer_optimum(ControlProblem(spec, H=0.1, K_cap=1000))
    cert = best.certificate
    assert cert.levels <= sum(range(5, 60)) and cert.search_space > 10 ** 100
