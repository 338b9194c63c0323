"""SD-GT Theorem 1 (76) and Corollary 1 (13) (seed 003 [L242-L260], [L888-L920], [L1037-L1049]).

The one-step inequality (72) is rebuilt symbolically from the registered Lemmas 1, 3-6 and the
auxiliary inequality (71); its coefficients must be the re-derived D, D1..D4 and its noise the
reconstructed D5 (papers/sdgt.md 4.4 [DERIVED]). Printed and re-derived variants are compared at
constants where they disagree.
"""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.theory import get
from fedbound.theory.sdgt import lemmas as lm
from fedbound.theory.sdgt import thm1
from fedbound.theory.sdgt.common import E1, p, q
from fedbound.theory.sdgt.common import K
from fedbound.theory.symbols import L, T, gamma, n, sigma

SHIFT = {lm.E_t: 0, lm.G_t: lm.G_prev, lm.Delta_t: lm.Delta_prev, lm.Gamma_t: lm.Gamma_prev,
         lm.Y_t: lm.Y_prev, lm.Z_t: lm.Z_prev}
ERRORS = (lm.G_prev, lm.Y_prev, lm.Z_prev, lm.Gamma_prev, lm.Delta_prev)


def one_step_increment(tracking_variant: str) -> sp.Expr:
    """H_t - H_{t-1} <= ... from Lemma 1 (at t-1), Lemmas 4-6, and (71) (Lemma 3 at t-1), with
    Lemma 5's gradient at t-1 (F39) and Lemmas 4-5 in ``tracking_variant``."""
    bound = {rid: get(rid).variant(v).bound for rid, v in (
        ("sdgt.lemma1", "printed"), ("sdgt.lemma3", "printed"), ("sdgt.lemma6", "printed"),
        ("sdgt.lemma4", tracking_variant), ("sdgt.lemma5", tracking_variant))}
    c0, c1, c2 = thm1.c0, thm1.c1, thm1.c2
    kg = K * gamma
    return sp.expand(
        bound["sdgt.lemma1"].subs(SHIFT, simultaneous=True)
        + c0 * kg ** 3 / p * (bound["sdgt.lemma4"] - lm.Y_prev)
        + c0 * kg ** 3 / q * (bound["sdgt.lemma5"].subs(lm.G_t, lm.G_prev) - lm.Z_prev)
        + c1 * kg / p * (bound["sdgt.lemma6"] - lm.Gamma_prev)
        + c2 * gamma * L ** 2 * (-lm.Delta_prev + bound["sdgt.lemma3"].subs(SHIFT, simultaneous=True)))


def test_one_step_inequality_72_has_the_rederived_coefficients_and_D5():
    inc = one_step_increment("rederived")
    D = thm1.REDERIVED_D
    assert sp.simplify(inc.coeff(lm.G_prev) + D["D"] * K * gamma) == 0
    assert sp.simplify(inc.coeff(lm.Y_prev) + D["D1"]) == 0
    assert sp.simplify(inc.coeff(lm.Z_prev) + D["D2"]) == 0
    assert sp.simplify(inc.coeff(lm.Gamma_prev) + D["D3"]) == 0
    assert sp.simplify(inc.coeff(lm.Delta_prev) + D["D4"]) == 0
    noise = inc.subs({x: 0 for x in ERRORS})
    expected = (thm1.D5_reconstructed * L ** 2 / (p ** 4 * q ** 2 * K) * K ** 3 * gamma ** 3 * sigma ** 2
                + L / (2 * n * K) * K ** 2 * gamma ** 2 * sigma ** 2)
    assert sp.simplify(noise - expected) == 0
    note = thm1.c2 * L ** 2 * K ** 2 * gamma ** 3 * sigma ** 2 * (384 / (p ** 3 * q) + 384 / (p * q ** 3)
                                                                  + 6 / p + 3)
    assert sp.simplify(noise - L * gamma ** 2 * K * sigma ** 2 / (2 * n) - note) == 0


def test_printed_73_matches_the_derivation_only_for_D_and_D3():
    inc = one_step_increment("printed")
    P = thm1.PRINTED_D
    assert sp.simplify(inc.coeff(lm.G_prev) + P["D"] * K * gamma) == 0
    assert sp.simplify(inc.coeff(lm.Gamma_prev) + P["D3"]) == 0
    assert sp.simplify(inc.coeff(lm.Y_prev) + P["D1"]) != 0  # F13
    assert sp.simplify(inc.coeff(lm.Delta_prev) + P["D4"]) != 0  # F14


def _thm1_extras(variant, **c):
    base = dict(E1=1.0, D=0.24, D5=1.0, K=4, L=1.0, T=1000, n=10, sigma=1.0, c2=2.01)
    base.update(c)
    if "gamma" not in base:
        base["gamma"] = float(get("sdgt.thm1").max_step(variant, **base)[0])
    return get("sdgt.thm1").evaluate(variant, **base)


def test_D1_differs_in_sign_between_printed_and_rederived_for_small_p():
    """F13: with c0 = 192 L^2 c2/(pq), the re-derived D1 < 0 for p below ~0.75 q."""
    printed, rederived = (_thm1_extras(v, p=0.1, q=1.0) for v in ("printed", "rederived"))
    assert printed.extras["D1"] > 0 > rederived.extras["D1"]
    assert printed.extras["D2"] > 0 > rederived.extras["D2"]
    assert _thm1_extras("rederived", p=1.0, q=0.5).extras["D1"] > 0


def test_D4_differs_in_sign_when_q_is_small_against_p():
    """F14: with Lemma 1's term and the tight Lemma 4-5 terms, D4 < 0 at p = 1, q = 0.01."""
    printed, rederived = (_thm1_extras(v, p=1.0, q=0.01) for v in ("printed", "rederived"))
    assert printed.extras["D4"] > 0 > rederived.extras["D4"]


@settings(max_examples=100, deadline=None)
@given(p_=st.floats(0.01, 1), q_=st.floats(0.01, 1), K_=st.integers(1, 100), L_=st.floats(0.01, 100),
       frac=st.floats(1e-3, 1))
def test_D_stays_in_the_note_range_under_74(p_, q_, K_, L_, frac):
    """With c2 = 2.01 and gamma <= p^2 q/(945 K L), D of (73) lies in (0.2497, 0.25)."""
    gamma_ = frac * p_ ** 2 * q_ / (945 * K_ * L_)
    ev = _thm1_extras("printed", p=p_, q=q_, K=K_, L=L_, gamma=gamma_)
    assert 0.2497 < ev.extras["D"] <= 0.25
    assert ev.extras["D3"] >= 0


def test_theorem1_cap_is_74_and_binds():
    gamma_max, binding = get("sdgt.thm1").max_step(K=5, L=2.0, p=0.64, q=0.5)
    assert gamma_max == pytest.approx(0.64 ** 2 * 0.5 / (945 * 5 * 2.0)) and binding == "thm1 (74)"


def test_printed_bound_is_76():
    ev = _thm1_extras("printed", p=0.5, q=0.5, gamma=1e-4)
    expected = (1 / (0.24 * 1000 * 4 * 1e-4) + 1 * 4 * 1e-8 / (0.24 * 0.5 ** 6)
                + 1e-4 / (2 * 0.24 * 10))
    assert ev.bound == pytest.approx(expected, rel=1e-12)


def test_rederived_bound_is_76_with_73_and_reconstructed_D5_plus_the_H1_term():
    printed = get("sdgt.thm1").variant("printed").bound
    rederived = get("sdgt.thm1").variant("rederived").bound
    explicit = printed.subs({thm1.D: thm1.D_coef, thm1.D5: thm1.D5_reconstructed}, simultaneous=True)
    h1 = thm1.c0 * K ** 2 * gamma ** 2 * sigma ** 2 * (1 / p + 1 / q) / (thm1.D_coef * T)
    assert sp.simplify(rederived - explicit - h1) == 0


# -- Corollary 1 -----------------------------------------------------------------------------------
COR1 = dict(E1=1.0, D=0.24, D5=1.0, K=5, L=1.0, n=10, p=0.64, q=0.5, sigma=1.0)


@settings(max_examples=100, deadline=None)
@given(E1_=st.floats(1e-3, 1e3), D_=st.floats(0.01, 0.25), D5_=st.floats(1e-3, 1e3), K_=st.integers(1, 50),
       L_=st.floats(0.01, 100), n_=st.integers(1, 1000), p_=st.floats(0.01, 1), q_=st.floats(0.01, 1),
       sigma_=st.floats(1e-3, 10), T_=st.integers(1, 10 ** 8))
def test_rederived_corollary1_step_attains_its_bound(E1_, D_, D5_, K_, L_, n_, p_, q_, sigma_, T_):
    """Lemma 7 in eta = K gamma: (76) at the chosen step <= the explicit rate, step within the cap."""
    ev = get("sdgt.cor1").evaluate("rederived", E1=E1_, D=D_, D5=D5_, K=K_, L=L_, n=n_, p=p_, q=q_,
                                   sigma=sigma_, T=T_)
    assert ev.extras["gamma"] <= ev.extras["gamma_cap"] * (1 + 1e-12)
    assert ev.extras["theorem_bound_at_step"] <= ev.bound * (1 + 1e-12)


def test_printed_corollary1_rate_is_below_theorem1_at_its_own_step():
    """F9/F41 counterexample: with u = L and e without 1/D, the printed explicit form (100) is smaller
    than (76) evaluated at the printed step, so the printed corollary does not follow there."""
    printed = get("sdgt.cor1").evaluate("printed", **COR1, T=1000)
    assert printed.extras["theorem_bound_at_step"] > 10 * printed.bound
    rederived = get("sdgt.cor1").evaluate("rederived", **COR1, T=1000)
    assert rederived.extras["theorem_bound_at_step"] <= rederived.bound


def test_corollary1_step_entries_are_values_of_K_gamma():
    """F7: the printed first entry equals the re-derived first entry of eta = K gamma; F8 (ii) with
    (v): the second entry of eta is (E1 p^4 q^2 K/(D5 L^2 sigma^2 T))^(1/3); F6: cap with q^2."""
    rederived_eta = get("sdgt.cor1").variant("rederived").extras["eta"]
    printed_gamma = get("sdgt.cor1").variant("printed").extras["gamma"]
    first = sp.sqrt(2 * E1 * K * n / (L * sigma ** 2 * T))
    second = sp.cbrt(E1 * p ** 4 * q ** 2 * K / (thm1.D5 * L ** 2 * sigma ** 2 * T))
    re_args = rederived_eta.args
    assert any(sp.simplify(a - first) == 0 for a in re_args)
    assert any(sp.simplify(a - second) == 0 for a in re_args)
    assert any(sp.simplify(a - first) == 0 for a in printed_gamma.args)
    assert any(sp.simplify(a - p ** 2 * q ** 2 / (945 * K * L)) == 0 for a in printed_gamma.args)
    ev = get("sdgt.cor1").evaluate("printed", **COR1, T=10 ** 9)
    assert ev.extras["gamma"] < ev.extras["gamma_cap"]  # q^2 cap is below (74) for q < 1


def test_corollary1_rates_in_T():
    exponents = sorted(get("sdgt.cor1").rate_exponents("rederived").values())
    assert exponents == [sp.Integer(-1), sp.Rational(-2, 3), sp.Rational(-1, 2)]


def test_corollary1_printed_and_rederived_u():
    printed = get("sdgt.cor1").evaluate("printed", **COR1, T=100)
    rederived = get("sdgt.cor1").evaluate("rederived", **COR1, T=100)
    assert printed.extras["u"] == COR1["L"]
    assert rederived.extras["u"] == pytest.approx(945 * COR1["L"] / (0.64 ** 2 * 0.5))
    assert rederived.extras["e"] == pytest.approx(printed.extras["e"] / COR1["D"])
    assert np.isclose(printed.extras["r0"], rederived.extras["r0"])


def test_corollary1_conditions_are_theorem1s_plus_the_printed_q2_cap():
    """F6 as conditions: printed Corollary 1 binds at p^2 q^2/(945KL), the rederived one at (74)."""
    c = dict(K=5, L=1.0, p=0.64, q=0.5)
    gamma, binding = get("sdgt.cor1").max_step("printed", **c)
    assert gamma == pytest.approx(0.64 ** 2 * 0.25 / (945 * 5)) and binding == "cor1 cap (F6)"
    gamma, binding = get("sdgt.cor1").max_step("rederived", **c)
    assert gamma == pytest.approx(0.64 ** 2 * 0.5 / (945 * 5)) and binding == "thm1 (74)"
