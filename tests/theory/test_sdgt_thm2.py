"""SD-GT Theorem 2 (89) and Corollary 2 (15)-(16) (seed 003 [L274-L293], [L922-L991], [L1051-L1064]).

The step-size conditions (83)/(88) are checked against what each line of (84) and (87) needs
(flags F16 (a)-(d)); the re-derived bound is rebuilt from (87); printed and re-derived variants are
compared at constants where they disagree.
"""
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.theory import get
from fedbound.theory.sdgt.common import R, p, q
from fedbound.theory.sdgt.common import K
from fedbound.theory.symbols import L, T, gamma, n, sigma

THM2 = dict(K=5, L=1.0, p=0.64, q=0.5, R=1.0, T=1000, n=10, sigma=1.0)
unit = st.floats(0.01, 1.0)


def caps(variant, **c):
    result = get("sdgt.thm2")
    return result.evaluate(variant, **{**THM2, **c, "gamma": 1.0}).caps


def test_printed_caps_are_83_and_88_plus_the_lemma_caps():
    printed = {c.name: c for c in get("sdgt.thm2").variant("printed").conditions}
    assert set(printed) == {"thm2 (83a)", "thm2 (83b)", "thm2 (83c)", "thm2 (83d)", "thm2 (88)",
                            "lemma2", "lemma2-proof", "lemma3", "lemma4", "lemma5"}
    pp = sp.Min(p, q)
    assert printed["thm2 (83a)"].cap == pp ** 2 / (173 * K ** sp.Rational(3, 2) * L)
    assert printed["thm2 (88)"].cap == pp / (88 * sp.sqrt(K ** 2 * L))
    assert set(get("sdgt.thm2").variant("rederived").conditions) >= set(
        get("sdgt.thm2").variant("printed").conditions[5:])


def test_p_prime_is_min_of_p_and_q():
    result = get("sdgt.thm2")
    for v in ("printed",):
        a = result.max_step(v, K=3, L=1.0, p=0.3, q=0.8)
        b = result.max_step(v, K=3, L=1.0, p=0.8, q=0.3)
        assert a[0] == pytest.approx(b[0]) and a[1] == b[1]
    assert result.max_step(K=1, L=1.0, p=1.0, q=1.0)[0] == pytest.approx(1 / 173)


def test_84_first_line_fails_at_173_but_the_contraction_it_serves_holds():
    """F16 (b): at gamma = p'^2/(173 K^(3/2) L), 7524 gamma^2 K^3 L^2/p'^3 = 0.2514 p' > p'/4; the
    Gamma coefficient 1 - p/2 + 7524 ... still is <= 1 - p'/8 (exact arithmetic)."""
    pp, K_, L_ = sp.Rational(1, 2), 4, 3
    g = pp ** 2 / (173 * sp.Integer(K_) ** sp.Rational(3, 2) * L_)
    lhs = 7524 * g ** 2 * K_ ** 3 * L_ ** 2 / pp ** 3
    assert lhs > pp / 4
    assert 1 - pp / 2 + lhs <= 1 - pp / 8


def test_84_noise_line_holds_at_the_printed_1_over_87_for_every_p():
    """The 1/150.2 of F16 (c) is not needed: 9(1-p)p'^3 <= 9*27/256, so 1/87 leaves room."""
    for p_ in np.linspace(0.01, 1, 100):
        pp = p_  # worst case p' = p
        g2K3L2 = 1 / 87 ** 2
        assert 9 * (1 - p_) * pp ** 3 + 1728 + 67716 * g2K3L2 <= 1740
    noise_cap = caps("rederived", K=1, L=1.0, p=0.75, q=1.0)["thm2 noise"]
    assert noise_cap > 1 / 87 and noise_cap == pytest.approx(math.sqrt((12 - 9 * 0.25 * 0.75 ** 3) / 67716))


def test_84_gradient_line_as_printed_cannot_hold_for_small_p():
    """F16 (d): with 108/p'^3 the third line of (84) needs 108/p'^2 <= 120, false for p' < 0.95."""
    pp = 0.5
    assert 108 / pp ** 3 > 120 / pp
    assert caps("rederived", p=pp, q=pp)["thm2 gradient"] > 0


def test_printed_88_cap_is_looser_than_87_needs_for_L_above_1():
    """F16 (a): p'/(88 sqrt(K^2 L)) violates 3840 gamma^2 K^2 L^2/p'^2 <= 1/2 when L > 1.008."""
    c = caps("printed", L=4.0)
    pp, K_ = 0.5, 5
    g = c["thm2 (88)"]
    assert 3840 * g ** 2 * K_ ** 2 * 4.0 ** 2 / pp ** 2 > 0.5
    assert caps("rederived", L=4.0)["thm2 (88)"] == pytest.approx(pp / (math.sqrt(7680) * K_ * 4.0))
    assert caps("printed", L=0.1)["thm2 (88)"] < caps("rederived", L=0.1)["thm2 (88)"]


@settings(max_examples=200, deadline=None)
@given(K_=st.integers(1, 1000), L_=st.floats(1e-3, 1e3), p_=unit, q_=unit)
def test_the_printed_cap_set_as_a_whole_satisfies_every_rederived_requirement(K_, L_, p_, q_):
    """Each printed constant is sloppy, but min of all printed caps <= min of the re-derived ones."""
    printed = get("sdgt.thm2").max_step("printed", K=K_, L=L_, p=p_, q=q_)[0]
    rederived = get("sdgt.thm2").max_step("rederived", K=K_, L=L_, p=p_, q=q_)[0]
    assert printed <= rederived * (1 + 1e-12)


def test_rederived_bound_is_87_divided_by_one_half():
    """(87) with G_1 = 72 K^2 L gamma^2 (6/p'^2) * 2 sigma^2 and 1 - delta = p'/8, divided by 1/2."""
    pp = sp.Min(p, q)
    G1 = 72 * K ** 2 * L * gamma ** 2 * 6 / pp ** 2 * 2 * sigma ** 2
    rhs87 = (R / (gamma * K * T) + 3 * G1 / (pp / 8 * T) + 2 * gamma * sigma ** 2 / n
             + 9 * K * gamma ** 2 * L * sigma ** 2 + 3480 * gamma ** 2 * K * L * sigma ** 2 / (pp ** 3 * pp / 8))
    assert sp.simplify(2 * rhs87 - get("sdgt.thm2").variant("rederived").bound) == 0


def test_bound_variants_disagree_in_both_directions():
    thm = get("sdgt.thm2")
    c = dict(THM2, p=1.0, q=1.0, K=1, n=1, T=10 ** 9, gamma=1e-4)
    assert thm.bound("rederived", **c) > thm.bound("printed", **c)  # the missing factor 2
    c.update(p=0.5, q=0.5, T=100)
    assert thm.bound("printed", **c) > thm.bound("rederived", **c)  # 1/(p^4 q^4) vs 1/p'^4
    assert thm.bound("printed", **c) == pytest.approx(
        2 / (1e-4 * 1 * 100) + 2e-4 + 9e-8 + 62592e-8 / 0.5 ** 8)


def test_sigma_zero_bound_is_the_deterministic_rate():
    thm = get("sdgt.thm2")
    c = dict(THM2, sigma=0.0, gamma=1e-3)
    for v in ("printed", "rederived"):
        assert thm.bound(v, **c) == pytest.approx(2 * 1.0 / (1e-3 * 5 * 1000))


# -- Corollary 2 -----------------------------------------------------------------------------------
COR2 = dict(K=5, L=1.0, p=1.0, q=1.0, R=1.0, n=10, sigma=1.0)


def test_printed_corollary2_step_violates_theorem2_caps():
    """F17: for p = q = 1 (and T small enough for the cap entry to be the min) the printed step is p^2 q^2/(101 K^(3/2) L) > 1/(173 K^(3/2) L)."""
    ev = get("sdgt.cor2").evaluate("printed", **COR2, T=10)
    assert ev.extras["gamma"] == pytest.approx(1 / (101 * 5 ** 1.5))
    assert ev.extras["gamma"] > ev.extras["gamma_cap"]
    assert ev.extras["gamma_cap"] == pytest.approx(1 / (173 * 5 ** 1.5))


@settings(max_examples=100, deadline=None)
@given(K_=st.integers(1, 50), L_=st.floats(0.01, 100), p_=unit, q_=unit, R_=st.floats(1e-3, 1e3),
       n_=st.integers(1, 1000), sigma_=st.floats(0, 10), extra_T=st.integers(0, 10 ** 8))
def test_rederived_corollary2_step_attains_its_bound(K_, L_, p_, q_, R_, n_, sigma_, extra_T):
    ev = get("sdgt.cor2").evaluate("rederived", K=K_, L=L_, p=p_, q=q_, R=R_, n=n_, sigma=sigma_,
                                   T=K_ + extra_T)
    assert ev.extras["gamma"] <= ev.extras["gamma_cap"] * (1 + 1e-12)
    assert ev.extras["theorem_bound_at_step"] <= ev.bound * (1 + 1e-12)


def test_printed_corollary2_rate_is_below_theorem2_at_its_own_step():
    """F9 counterexample: with u = L the printed explicit form is below (89) at the printed step."""
    ev = get("sdgt.cor2").evaluate("printed", **dict(COR2, p=0.64, q=0.5), T=1000)
    assert ev.extras["theorem_bound_at_step"] > ev.bound


def test_corollary2_second_entry_constant():
    """1/39 in (15) stands for (2/62592)^(1/3) = 1/31.5 with the 9L term dropped (papers/sdgt.md 4.5)."""
    ev = get("sdgt.cor2").evaluate("printed", **dict(COR2, L=1.0, sigma=1.0), T=10 ** 6)
    r0, e = float(ev.extras["r0"]), float(ev.extras["e"])
    lemma7_entry = (r0 / (e * 10 ** 6)) ** (1 / 3)
    printed_entry = (1.0 * 5 / 10 ** 6) ** (1 / 3) / 39
    assert lemma7_entry / printed_entry == pytest.approx(39 * (2 / (9 + 62592)) ** (1 / 3), rel=1e-12)
    assert lemma7_entry > printed_entry


def test_corollary2_rates_in_T():
    for v in ("printed", "rederived"):
        exponents = sorted(get("sdgt.cor2").rate_exponents(v).values())
        assert exponents == [sp.Integer(-1), sp.Rational(-2, 3), sp.Rational(-1, 2)]


def test_corollary2_printed_cap_binds_only_for_small_p_q():
    """F17 as conditions: at p = q = 1 the cap of (15) is above (83a), which binds; for small p q the
    cap of (15) is the smaller one."""
    bindings = {pq: get("sdgt.cor2").max_step("printed", K=5, L=1.0, p=pq[0], q=pq[1])[1]
                for pq in ((1.0, 1.0), (0.5, 0.9), (0.1, 0.2))}
    assert bindings == {(1.0, 1.0): "thm2 (83a)", (0.5, 0.9): "thm2 (83a)", (0.1, 0.2): "cor2 cap (F17)"}
