"""The rho-condition of AFGA (seed 000, (30)-(32), Theorems 4.6 / D.3) on real mixing matrices."""
import json

import numpy as np
import pytest

from fedbound.cli.main import main
from fedbound.errors import ValidationError
from fedbound.network import ring_weights, spectral_norm
from fedbound.theory import get
from fedbound.theory.afga.experiments import REPORTED_RHO, SETTINGS, rho_max
from fedbound.theory.afga.rho import FORMS, PREDICATES, largest_rho, rho_condition


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
    if np.any(~inside):   # where the largest rho is 1, every rho < 1 satisfies the form
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


@pytest.mark.parametrize("form", FORMS)
def test_each_form_is_an_engine_predicate_reported_holds_or_fails(form):
    """The predicate of each form agrees with its two sides and with largest_rho's closed forms."""
    rng = np.random.default_rng(3)
    n = rng.integers(2, 200, 500).astype(float)
    m = np.ceil(rng.uniform(0, 1, 500) * n)
    I = rng.integers(1, 200, 500).astype(float)
    rho = rng.uniform(0, 0.999, 500)
    ev = get("afga.rho_condition").evaluate(form, rho=rho, m=m, n=n, I=I)
    (name, holds), = ev.predicates.items()
    np.testing.assert_array_equal(holds, ev.extras["predicate_lhs"] <= ev.extras["predicate_rhs"])
    top = largest_rho(form, m, n, I)
    clear = np.abs(rho - top) > 1e-9 * top     # away from the boundary, rounding cannot decide
    np.testing.assert_array_equal(holds[clear], (rho <= top)[clear])
    assert 0 < holds.mean() < 1


def test_order_relations_m_le_n_and_M_le_N_are_enforced_by_the_engine():
    with pytest.raises(ValidationError, match="m must be <= n"):
        get("afga.rho_condition").evaluate("theorem", rho=0.1, m=np.array([1, 11]), n=10)
    with pytest.raises(ValidationError, match="M must be <= N"):
        get("afga.thm46").evaluate("O", rho=0.1, M=60, N=50, I=10, f_gap=1, L=1, sigma=1, sigma_g=1,
                                   G=1, R=100)


def test_theorems_report_the_rho_condition_they_need():
    """(33) needs (30) and the theorems state rho <= m/(m+n) (M/(M+N) for Theorem 4.6): on the
    paper's ring(50) with M = 5 both fail, at rho = 0 both hold."""
    c = dict(I=24, L=1.0, N=50, M=5, eta=1.0, eta_l=1e-4, beta1=0.9, eps_ams=1e-2, G=1.0, sigma=1.0, C1=64.0,
             sigma_g=1.0, d=10, f_gap=1.0, C=1.0, C2=1.0, C3=1.0, C4=1.0, R=1000)
    thm = get("afga.thm46")
    assert set(thm.evaluate("printed", **c, rho=0.0).predicates.values()) == {True}
    ring = next(s for s in SETTINGS if s.name == "AFGA S2 ring N=50 M=5")
    failing = thm.evaluate("printed", **c, rho=rho_max(ring))
    assert failing.predicates == {"rho-condition (30)": False, "rho <= m/(m+n)": False}


def test_cli_bound_reports_the_predicate(capsys):
    code = main(["bound", "afga.rho_condition", "--variant", "exact", "--json",
                 *(a for pair in ("rho=0.8727", "m=1", "n=10", "I=24") for a in ("--set", pair))])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["predicates"] == [
        {"name": "rho-condition (30)", "statement": str(PREDICATES["exact"]), "holds": False}]


def test_an_iteration_count_is_checked_whatever_the_form():
    """I_value is checked in its domain even by the forms that do not use it (issue 31): never a
    silently ignored bad value."""
    from fedbound.errors import ValidationError
    from fedbound.theory.afga.rho import rho_condition

    for form in ("theorem", "sufficient", "exact"):
        with pytest.raises(ValidationError, match="I .* must be an integer >= 1, got -1"):
            rho_condition(0.5, 2, 10, I_value=-1, form=form)
    assert rho_condition(0.1, 2, 10, I_value=3).form == "theorem"
