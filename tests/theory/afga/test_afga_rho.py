"""The rho-condition of AFGA (seed 000, (30)-(32), Theorems 4.6 / D.3) on real mixing matrices."""
import numpy as np
import pytest

from fedbound.errors import ValidationError
from fedbound.network import ring_weights, spectral_norm
from fedbound.theory import get
from fedbound.theory.afga.experiments import REPORTED_RHO, SETTINGS, rho_max
from fedbound.theory.afga.rho import FORMS, largest_rho, rho_condition


def test_known_ring_values_from_the_matrices():
    assert round(spectral_norm(ring_weights(50)), 4) == 0.9947
    assert round(spectral_norm(ring_weights(10)), 4) == 0.8727
    assert spectral_norm(ring_weights(3)) < 1e-15
    by_name = {s.name: rho_max(s) for s in SETTINGS}
    assert round(by_name["AFGA S2 ring N=50 M=5"], 4) == 0.9947
    assert round(by_name["CAFGA S2 ring K=5 n=10 m=1"], 4) == 0.8727
    for s in SETTINGS:   # the symmetric ring's eigenvalues: 1/3 + (2/3) cos(2 pi k/n)
        expected = 1 / 3 + 2 / 3 * np.cos(2 * np.pi / s.n) if s.topology == "ring" else 0.0
        assert rho_max(s) == pytest.approx(expected, abs=1e-13)


@pytest.mark.parametrize("form", FORMS)
def test_every_ring_experiment_fails_and_the_complete_graph_holds(form):
    for s in SETTINGS:
        for I in (12, 24, 48, 100):
            check = rho_condition(rho_max(s), s.m, s.n, I, form=form)
            assert bool(check.holds) == (s.topology == "complete"), (s.name, form, I)
            assert (check.margin < 0) == (s.topology == "ring")
    for s, r in REPORTED_RHO:   # the unspecified topologies of Fig. 1, at their printed rho
        assert not rho_condition(r, s.m, s.n, 24, form=form).holds


def test_theorem_form_numbers_of_the_notes():
    assert largest_rho("theorem", 5, 100) == pytest.approx(5 / 105)
    assert largest_rho("theorem", 5, 50) == pytest.approx(5 / 55)
    assert largest_rho("theorem", 1, 20) == pytest.approx(1 / 21)
    assert largest_rho("theorem", 1, 10) == pytest.approx(1 / 11)
    # a 1/3-weight ring satisfies it only for n <= 3 (n = 4 gives rho = 1/3 > 1/5)
    assert rho_condition(spectral_norm(ring_weights(3)), 1, 3).holds
    assert not rho_condition(spectral_norm(ring_weights(4)), 1, 4).holds


@pytest.mark.parametrize("form", FORMS)
def test_largest_rho_is_the_boundary(form):
    rng = np.random.default_rng(0)
    n = rng.integers(2, 500, 300).astype(float)
    m = np.ceil(rng.uniform(0, 1, 300) * n)
    I = rng.integers(1, 200, 300).astype(float)
    top = largest_rho(form, m, n, I)
    inside = top < 1
    below = rho_condition(top[inside] * (1 - 1e-9), m[inside], n[inside], I[inside], form=form)
    above = rho_condition(np.minimum(top[inside] * (1 + 1e-9), 1 - 1e-16), m[inside], n[inside],
                          I[inside], form=form)
    assert np.all(below.holds) and not np.any(above.holds)
    assert np.all(rho_condition(0.999999, m[~inside], n[~inside], I[~inside], form=form).holds)


def test_30_does_not_imply_31_but_31_implies_30_and_the_theorem_form_implies_both():
    # counterexample: full participation m = n makes (30) vacuous (n - m = 0)
    assert rho_condition(0.9, 10, 10, 24, "exact").holds and not rho_condition(0.9, 10, 10, 24, "sufficient").holds
    # and with m < n: small I caps H = I, (30) admits rho with rho^2/(1-rho) > m^2/n^2
    rho = largest_rho("exact", 5, 50, 1)
    assert rho_condition(rho, 5, 50, 1, "exact").holds and not rho_condition(rho, 5, 50, 1, "sufficient").holds
    rng = np.random.default_rng(1)
    n = rng.integers(2, 1000, 2000).astype(float)
    m = np.ceil(rng.uniform(0, 1, 2000) * n)
    I = rng.integers(1, 1000, 2000).astype(float)
    for premise in ("sufficient", "theorem"):
        r = largest_rho(premise, m, n, I) * rng.uniform(0, 1, 2000)
        assert np.all(rho_condition(r, m, n, I, "exact").holds)
    r = largest_rho("theorem", m, n) * rng.uniform(0, 1, 2000)
    assert np.all(rho_condition(r, m, n, I, "sufficient").holds)


def test_rho_condition_result_variants_and_bad_input():
    result = get("afga.rho_condition")
    assert set(result.variants) == set(FORMS)
    ev = result.evaluate("theorem", rho=0.5, m=1, n=10)
    assert ev.extras["predicate_lhs"] == 0.5 and ev.extras["predicate_rhs"] == pytest.approx(1 / 11)
    with pytest.raises(ValidationError, match="m must be <= n"):
        rho_condition(0.1, 11, 10)
    with pytest.raises(ValidationError, match="pass I_value"):
        rho_condition(0.1, 1, 10, form="exact")
    with pytest.raises(ValidationError, match="rho"):
        rho_condition(1.0, 1, 10)
