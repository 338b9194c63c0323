"""Theorem D.3 / Theorem 4.6 of AFGA (seed 000, (3), (8), (33)): explicit terms, K = 1 reduction,
flag 24's restored term, the schedule's rates and the O-form's predicted exponents."""
import numpy as np
import pytest
import sympy as sp

from fedbound.theory import get
from fedbound.theory.afga.common import DEFAULT_CONSTANTS
from fedbound.theory.afga.theorems import predicted_exponents, schedule_exponents

D3 = dict(DEFAULT_CONSTANTS, L=1.0, sigma=0.5, sigma_l=0.7, sigma_c=0.3, G=2.0, d=100,
          eps_ams=0.1, beta1=0.9, f_gap=3.0, I=24, K=5, n=10, m=1,
          rho=0.05, eta=2.0, eta_l=1e-4, R=1000, alpha=1.5)


def test_explicit_bound_is_8_C0_times_the_sum_of_the_eight_terms():
    ev = get("afga.thmD3").evaluate("printed", **D3)
    t = ev.extras
    total = t["T1"] + t["T2"] + t["T3"] + t["T4"] + t["T5"] + t["T6"] * t["T7"] + t["T8"]
    assert ev.bound == pytest.approx(8 * t["C0"] * total, rel=1e-13)
    assert t["C0"] == pytest.approx(np.sqrt(1e-8 * 24 ** 2 * 4 + 0.1))
    assert len(ev.terms) == 7


def test_theorem_46_is_theorem_D3_at_K_equal_1():
    d3, t46 = get("afga.thmD3"), get("afga.thm46")
    c46 = {k: v for k, v in D3.items() if k not in ("K", "n", "m", "sigma_l",
                                                   "sigma_c")}
    c46.update(N=50, M=5, sigma_g=0.7)
    cd3 = dict(D3, K=1, n=50, m=5, sigma_l=0.7, sigma_c=0.0, alpha=1.0)
    for variant in ("printed", "rederived"):
        assert t46.bound(variant, **c46) == pytest.approx(d3.bound(variant, **{
            k: cd3[k] for k in d3.constants(variant)}), rel=1e-13)


def test_rederived_restores_the_I_sigma2_over_n_term_of_flag_24():
    d3 = get("afga.thmD3")
    p, r = d3.evaluate("printed", **D3), d3.evaluate("rederived", **D3)
    c0 = p.extras["C0"]
    extra = 8 * c0 * 1.0 * 1.0 * 1e-8 / (4 * np.sqrt(0.1)) * 24 * 0.25 / 10
    assert r.bound - p.bound == pytest.approx(extra, rel=1e-9)
    # at rho = 0 a sigma^2/R-type term survives in the rederived T2 (the O-form's claim is not exact)
    zero = dict(D3, rho=0.0, sigma_c=0.0, sigma_l=0.0)
    assert d3.evaluate("rederived", **zero).extras["T2"] > 0 == d3.evaluate("printed", **zero).extras["T2"]


def test_schedule_rates_match_the_term_by_term_claims():
    """Under eta = c_eta n sqrt(I/m), eta_l = c_l/(I sqrt(R)) [L2276-2280]: the slowest terms decay
    like R^{-1/2} (T1's Delta f part, T3-T5), then R^{-1} (T1's G^2 part, T2), the rest (T1's
    C_beta^2 eta eta_l part, T6 T7, T8) like R^{-3/2}, as the paper says [L2281-2540]."""
    half, one, three_halves = sp.Rational(-1, 2), sp.Integer(-1), sp.Rational(-3, 2)
    expected = {"T1": {half, one, three_halves}, "T2": {one}, "T3": {half}, "T4": {half}, "T5": {half},
                "T6*T7": {three_halves}, "T8": {three_halves}}
    for rid in ("afga.thmD3", "afga.thm46"):
        exponents = schedule_exponents(rid)
        assert {k: set(v.values()) for k, v in exponents.items()} == expected, rid
        assert [t for t, x in exponents["T1"].items() if x == half] == [
            t for t in exponents["T1"] if "f_gap" in t]


def test_predicted_exponents_of_the_O_forms():
    assert predicted_exponents("afga.thm46") == {"R": sp.Rational(-1, 2), "I": sp.Rational(-1, 2),
                                                 "M": sp.Rational(-1, 2)}
    assert predicted_exponents("afga.thmD3") == {"R": sp.Rational(-1, 2), "I": sp.Rational(-1, 2),
                                                 "M": sp.Rational(-1, 2)}
    o = get("afga.thm46").rate_exponents("O")
    assert sorted(set(o.values())) == [-1, sp.Rational(-1, 2)]


def test_rounds_to_eps_on_the_schedule():
    thm = get("afga.thm46")
    c = dict(DEFAULT_CONSTANTS, L=1.0, sigma=0.5, sigma_g=0.7, G=2.0, d=10, eps_ams=0.1,
             beta1=0.9, f_gap=3.0, I=24, N=50, M=5, rho=0.0, c_eta=1.0,
             c_l=0.1)
    target = (thm.bound("rederived-schedule", **c, R=12345) + thm.bound("rederived-schedule", **c, R=12346)) / 2
    R = thm.rounds_to_eps(target, "rederived-schedule", **c)
    assert R == 12346
    assert thm.bound("rederived-schedule", **c, R=R) <= target < thm.bound("rederived-schedule", **c, R=R - 1)


def test_eq29_shares_T1_and_T3_with_33_and_holds_without_the_rho_condition():
    """(29)'s 2 eta_l sigma^2/N times A/2 is (33)'s T3; with sigma = sigma_l = sigma_c = 0 both
    reduce to 8 C0 T1; on a ring experiment's rho (outside (30)) (29) is still defined."""
    d3 = get("afga.thmD3")
    quiet = dict(D3, sigma=0.0, sigma_l=0.0, sigma_c=0.0)
    c29 = {k: quiet[k] for k in d3.constants("eq29")}
    ev = d3.evaluate("printed", **quiet)
    assert d3.bound("eq29", **c29) == pytest.approx(8 * ev.extras["C0"] * ev.extras["T1"], rel=1e-12)
    noisy = {k: D3[k] for k in d3.constants("eq29")}
    only_sigma = dict(noisy, sigma_l=0.0, sigma_c=0.0, rho=0.0)
    diff = d3.bound("eq29", **only_sigma) - d3.bound("eq29", **{**only_sigma, "sigma": 0.0})
    ev = d3.evaluate("printed", **dict(D3, sigma_l=0.0, sigma_c=0.0, rho=0.0))
    t3 = 8 * ev.extras["C0"] * ev.extras["T3"]
    sampling = 8 * ev.extras["C0"] * (0.1 ** -1 * 2.0 * 1.0 * (0.81 / 0.01 + 3) / 2) * 64 * 9 / 90 * (
        64 * 1e-12 * 24 * 0.25 / 10)
    assert diff == pytest.approx(t3 + sampling, rel=1e-9)
    assert np.isfinite(d3.bound("eq29", **dict(noisy, rho=0.8727)))


@pytest.mark.parametrize("variant", ["printed", "rederived"])
def test_theorems_carry_the_step_size_conditions_of_afga_stepsize(variant):
    """(a)/(a'), (25), (27) on eta_l: Theorem D.3's max_step equals afga.stepsize's; Theorem 4.6's
    equals it at K = 1, n = N, m = M, alpha = 1."""
    step = get("afga.stepsize")
    d3, _ = get("afga.thmD3").max_step(variant, variable="eta_l", **D3)
    assert d3 == step.max_step(variant, variable="eta_l", **D3)[0]
    afga = {k: v for k, v in D3.items() if k not in ("K", "n", "m", "sigma_l", "sigma_c", "alpha")}
    t46, binding = get("afga.thm46").max_step(variant, variable="eta_l", **afga, N=10, M=1, sigma_g=0.7)
    ref, ref_binding = step.max_step(variant, variable="eta_l", **D3 | dict(K=1, n=10, m=1, alpha=1.0))
    assert t46 == pytest.approx(ref, rel=1e-12) and binding == ref_binding
