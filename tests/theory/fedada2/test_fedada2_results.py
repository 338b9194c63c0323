"""FedAda2's registered results (fedbound/theory/fedada2): formulas against the notes'
(papers/fedada2.md) numbers and hand-typed forms, the 16 switch variants of Theorem 20, c(beta), the
rate exponents of Corollaries 23/24 and the heavy-tail constructions.

The generic engine tests (tests/theory/test_engine.py) already check every variant's compiled
numbers against exact sympy to 1e-12 and the vectorized evaluation; here are the paper facts.
"""
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from fedbound.errors import UnknownNameError
from fedbound.theory import get
from fedbound.theory.fedada2 import heavy_tail as H
from fedbound.theory.fedada2.common import c_beta, c_beta_numeric, u0_exact, u0_numeric
from fedbound.theory.fedada2.corollaries import ratio_exponents
from fedbound.theory.fedada2.thm20 import PRINTED, REDERIVED, SWITCHES

# the sanity run of the notes (4.9): d = 4, K = 3, eps = 0.1, eps_s = 1e-3, tau = 1e-2, b = 0.9, eta = 1,
# eta_l = T^-1/2, G = 2.67, L = 1.85 (z = 1, v0 = 0; v~0 = tau^2)
NOTES_RUN = dict(f_gap=1.0, eta=1.0, L=1.85, d=4, K=3, z=1, G=2.67,
                 eps=0.1, eps_s=1e-3, tau=1e-2, beta1_tilde=0.9, v0=0.0, vtilde0=1e-4)


def psi_by_hand(c: dict, norm="vector", denom="sqrt_v0", smooth="L", phi1="printed") -> dict:
    """Theorem 20 [L844-L862] typed from the notes (4.5, 4.6, 4.9) in numpy, independently of sympy."""
    K, z, G, eps, v0, el, d = (c[k] for k in ("K", "z", "G", "eps", "v0", "eta_l",
                                              "d"))
    eta, tau, b, T, L = (c[k] for k in ("eta", "tau", "beta1_tilde", "T", "L"))
    n = math.ceil(K / z)
    a = math.sqrt(n) * math.sqrt(math.log(1 + n * G ** 2 / eps ** 2))
    delay = (K - n) * G / (math.sqrt(v0) + eps)
    p1 = el * (a + el * delay) if phi1 == "printed" else el * (a + delay)
    p2 = min(eta * math.sqrt(1 - b), eta * p1 / tau)
    s = d if norm == "vector" else 1
    n1, n2 = s * p1 ** 2, s * p2 ** 2
    lt = 2 * math.sqrt(d) * G / (el * c["eps_s"])
    g1 = el * K / (math.sqrt(v0 + d * K * G ** 2) + eps)
    a1 = 1 / (2 * math.sqrt(v0 + d * K * G ** 2) + 2 * eps)
    den = (math.sqrt(v0) if denom == "sqrt_v0" else v0) + eps
    power = 1 if smooth == "L" else 2
    cb = float(c_beta_numeric(b))
    psi = [c["f_gap"], eta ** 2 * L * T * d * n1 / tau ** 2,
           (1 - b ** T) * eta * el * K * lt ** power * T * n1 / (a1 * tau * den ** 2),
           (1 - b) * eta * el * K * L ** power * T * cb * n2 / (a1 * tau * den ** 2),
           eta * d * math.sqrt(n1) * G * (1 - b + math.log(1 + T * n1 / tau ** 2)) / tau,
           3 * (1 - b) * eta * g1 * T / (4 * (math.sqrt(T * n1 + c["vtilde0"]) + tau))]
    return {"bound": sum(psi[:5]) / psi[5], **{f"Psi{i + 1}": x for i, x in enumerate(psi)}}


# -- c(beta) and u0 (Lemma 21) ------------------------------------------------------------------

@pytest.mark.parametrize("beta,u0,c", [(0.0, 1, 1.0), (0.5, 17, 6.0561), (0.9, 202, 1710.0047),
                                       (0.95, 482, 14820.002), (0.99, 3214, 1970100.0003)])
def test_c_beta_matches_the_notes_table(beta, u0, c):
    assert u0_numeric(beta) == u0 and u0_exact(Fraction(str(beta))) == u0
    assert float(c_beta_numeric(beta)) == pytest.approx(c, abs=1e-3)


@pytest.mark.parametrize("beta", [Fraction(1, 3), Fraction(1, 2), Fraction(7, 10), Fraction(9, 10)])
def test_c_beta_equals_its_definition_summed_in_exact_rationals(beta):
    """sum_{u=0}^{u0} b^u u^2 + 1/u0 with u0 from its definition (the last v with b^v v^4 >= 1, plus 1)."""
    last = max([v for v in range(1, 2000) if v ** 4 * beta ** v >= 1], default=0)
    u0 = last + 1
    exact = sum(beta ** u * u * u for u in range(u0 + 1)) + Fraction(1, u0)
    assert u0_exact(beta) == u0 == u0_numeric(float(beta))
    assert float(c_beta_numeric(float(beta))) == pytest.approx(float(exact), rel=1e-14)
    assert float(sp.N(c_beta(sp.Rational(beta.numerator, beta.denominator)), 30)) == pytest.approx(
        float(exact), rel=1e-15)


def test_c_beta_is_vectorized_and_exceeds_the_series_sum():
    """c is not monotone (1/u0 drops where u0 jumps) but always >= sum_u b^u u^2 = b(1+b)/(1-b)^3."""
    beta = np.linspace(0, 0.999, 200)
    c = c_beta_numeric(beta)
    np.testing.assert_allclose(c, [float(c_beta_numeric(b)) for b in beta], rtol=1e-14)
    assert np.all(c >= beta * (1 + beta) / (1 - beta) ** 3)
    assert c_beta_numeric(0.22) > c_beta_numeric(0.25)


# -- Theorem 20 and its switches ----------------------------------------------------------------

def settings_name(settings: dict) -> str:
    """"norm=...,denom=...,smooth=...,phi1=...": the engine resolves any full setting to its variant."""
    return ",".join(f"{k}={v}" for k, v in settings.items())


ALL_SETTINGS = [dict(zip([sw.name for sw in SWITCHES], combo))
                for combo in itertools.product(*(list(sw.options) for sw in SWITCHES))]


def test_thm20_has_the_16_switch_variants_with_printed_default():
    thm = get("fedada2.thm20")
    assert len(thm.variants) == 16 and thm.default_variant == "printed"
    assert list(thm.variants)[:2] == ["printed", "phi1=proved"]
    assert thm.variant("printed").settings == PRINTED
    assert thm.variant("rederived").settings == REDERIVED
    assert thm.variant("smooth=L2,phi1=proved") is thm.variant("rederived")
    assert "smooth=L2,phi1=proved" not in thm.variants   # named "rederived" instead
    seen = set()
    for settings in ALL_SETTINGS:
        v = thm.variant(settings_name(settings))
        seen.add(v.name)
        assert dict(v.settings) == settings
        changed = ",".join(f"{k}={o}" for k, o in settings.items() if o != PRINTED[k])
        assert v.name == {"": "printed", "smooth=L2,phi1=proved": "rederived"}.get(changed, changed)
        for key, value in settings.items():
            assert f"{key}={value}" in v.description
    assert seen == set(thm.variants)
    with pytest.raises(UnknownNameError):
        thm.variant("norm=matrix")


@pytest.mark.parametrize("settings", ALL_SETTINGS, ids=settings_name)
def test_thm20_variant_equals_the_hand_typed_formula(settings):
    thm = get("fedada2.thm20")
    rng = np.random.default_rng(sum(map(len, settings.values())))
    for _ in range(3):
        c = dict(NOTES_RUN, T=float(rng.integers(1, 5000)), eta_l=float(10 ** rng.uniform(-3, 0.5)),
                 z=float(rng.integers(1, 4)), v0=float(rng.uniform(0, 2)),
                 beta1_tilde=float(rng.uniform(0, 0.99)), d=float(rng.integers(1, 50)))
        ev = thm.evaluate(settings_name(settings), **c)
        hand = psi_by_hand(c, **settings)
        assert float(ev.bound) == pytest.approx(hand["bound"], rel=1e-11)
        for i in range(1, 7):
            assert float(ev.extras[f"Psi{i}"]) == pytest.approx(hand[f"Psi{i}"], rel=1e-11)


def test_thm20_printed_reproduces_the_notes_sanity_run():
    """notes 4.9: RHS = 2.7e13 / 1.4e13 / 6.9e12 at T = 64 / 256 / 1024 (vector mode), scalar ~8x
    smaller, log-log slope about -1/2."""
    T = np.array([64.0, 256.0, 1024.0])
    thm = get("fedada2.thm20")
    vector = thm.bound("printed", **NOTES_RUN, T=T, eta_l=T ** -0.5)
    scalar = thm.bound("norm=scalar", **NOTES_RUN, T=T, eta_l=T ** -0.5)
    np.testing.assert_allclose(vector, [2.7e13, 1.4e13, 6.9e12], rtol=0.03)
    np.testing.assert_allclose(vector / scalar, 8.0, rtol=0.01)
    assert np.diff(np.log(vector)) / np.log(4) == pytest.approx([-0.5, -0.5], abs=0.01)


def test_thm20_L2_correction_stops_the_decay_and_z1_removes_the_delay_term():
    T = 2.0 ** np.arange(10, 40, 6)
    thm = get("fedada2.thm20")
    printed = thm.bound("printed", **NOTES_RUN, T=T, eta_l=T ** -0.5)
    corrected = thm.bound("rederived", **NOTES_RUN, T=T, eta_l=T ** -0.5)
    assert np.all(np.diff(np.log(printed)) / np.diff(np.log(T)) < -0.45)
    assert np.all(np.abs(np.diff(np.log(corrected)) / np.diff(np.log(T))) < 0.01)
    # z = 1: Lemma 15's printed and proved Phi1 coincide (K - ceil(K/z) = 0)
    same = {k: thm.bound(f"phi1={k}", **NOTES_RUN, T=100, eta_l=0.3)
            for k in ("printed", "proved")}
    assert same["printed"] == pytest.approx(same["proved"], rel=1e-14)


# -- Corollaries 23 and 24 ----------------------------------------------------------------------

def test_cor23_exponents_are_the_proofs():
    p1, p2 = sp.symbols("p1 p2", real=True)
    A, B = ratio_exponents("A"), ratio_exponents("B")
    subs = lambda e: e.subs({s: {"p1": p1, "p2": p2}[s.name] for s in e.free_symbols})  # noqa: E731
    assert [sp.simplify(subs(A[f"psi{i}/psi6"])) for i in range(1, 6)] == \
        [-(p1 + p2 + 1), p1 + p2, p2, 2 * p1 + 2 * p2, -1]
    assert [sp.simplify(subs(B[f"psi{i}/psi6"])) for i in range(1, 6)] == \
        [-p1 - sp.Rational(1, 2), p1 + 2 * p2 + sp.Rational(1, 2), 2 * p2 + sp.Rational(1, 2),
         2 * p1 + 3 * p2 + sp.Rational(1, 2), p2 - sp.Rational(1, 2)]
    assert sp.simplify(subs(ratio_exponents("A", "L2")["psi3/psi6"])) == 0
    assert sp.simplify(subs(ratio_exponents("B", "L2")["psi3/psi6"])) == p2 + sp.Rational(1, 2)
    assert sp.simplify(subs(ratio_exponents("A", client="adam")["psi5/psi6"])) == 2 * p2
    assert sp.simplify(subs(ratio_exponents("B", client="adam")["psi5/psi6"])) == 3 * p2 + sp.Rational(1, 2)
    ev = get("fedada2.cor23").evaluate("case_A", p1=0.0, p2=-0.5)
    assert max(ev.extras[f"psi{i}/psi6"] for i in range(1, 6)) == pytest.approx(-0.5)


def test_cor24_rate_exponents():
    printed = get("fedada2.cor24").rate_exponents("printed")
    assert max(printed.values()) == sp.Rational(-1, 2)
    rederived = get("fedada2.cor24").rate_exponents("rederived")
    assert max(rederived.values()) == 0      # the psi3 ratio no longer vanishes (notes 8.2)


# -- lemmas, Theorem 25, Corollaries 27/29 --------------------------------------------------------

def test_lemma_formulas_against_the_notes():
    c = dict(K=5, z=2, G=2.0, eps=0.5, v0=0.25, eta_l=0.1)
    n = 3
    a = math.sqrt(n * math.log(1 + n * 4 / 0.25))
    assert get("fedada2.lemma15").bound("printed", **c) == pytest.approx(0.1 * (a + 0.1 * 2 * 2 / 1.0))
    assert get("fedada2.lemma15").bound("proved", **c) == pytest.approx(0.1 * (a + 2 * 2 / 1.0))
    assert get("fedada2.lemma16").bound(eta=2.0, beta1_tilde=0.75, Phi1=10.0, tau=1.0) == 1.0
    assert get("fedada2.lemma17").bound(d=6, K=5, G=2.0) == 120
    assert get("fedada2.lemma30").bound("printed", **c, B=2.0) == pytest.approx(0.2 * (2 + 1 + 10 / 1.0))
    assert get("fedada2.lemma30").bound("tight", **c, B=2.0) == pytest.approx(0.2 * (3 + 2 * 2 / 1.0))
    # Lemma 28: z = 1 drops Phi0; (0.9, 0.999), K = 5: eta_l K sqrt(sum) = 9.26 eta_l (notes 4.14)
    adam = dict(K=5, z=1, G=1.0, eps=1e-8, eta_l=1.0, beta1=0.9, beta2=0.999, B=1.0)
    assert get("fedada2.lemma28").bound(**adam) == pytest.approx(9.26, abs=0.005)
    assert get("fedada2.lemma28").bound(**{**adam, "z": 2}) > 1e7
    assert get("fedada2.lemma26").bound(eta_l=0.1, xi_plus=1.5, K=3, A_max=2.0, G=1.0,
                                        m_min=0.5) == pytest.approx(0.1 * 1.5 * 12 * 2 / 1.0)


def test_thm25_cor27_cor29_use_the_theorem20_form():
    thm25 = get("fedada2.thm25")
    c = dict(NOTES_RUN, T=100.0, eta_l=0.1, xi_plus=1.2, xi_minus=0.8, a_min=1.0, A_max=1.0, m_min=0.1,
             M_max=5.0)
    ev = thm25.evaluate(**{k: v for k, v in c.items() if k in thm25.constants()})
    alpha1 = 0.8 * 1.0 / (3 * 4 * 5.0)
    C = 1.2 ** 2 * 12 * 1.0 / (2 * alpha1 * 0.01 * 0.1 ** 2)
    assert float(ev.extras["C"]) == pytest.approx(C, rel=1e-12)
    assert float(ev.extras["gamma1"]) == pytest.approx(0.1 * 0.8 / 5.0, rel=1e-12)
    cor27 = get("fedada2.cor27")
    c27 = dict(NOTES_RUN, T=100.0, eta_l=0.1, K_minus=2, beta1=0.9, beta2=0.999, eps_w=0.5, B=1.0,
               z=2)
    g1 = cor27.evaluate(**{k: v for k, v in c27.items() if k in cor27.constants()}).extras["gamma1"]
    by_hand = 0.1 * 0.5 * sum((1 - 0.9 ** p) / (2.67 * math.sqrt(1 - 0.999 ** math.ceil(p / 2)) + 0.1)
                              for p in (1, 2))
    assert float(g1) == pytest.approx(by_hand, rel=1e-13)
    cor29 = get("fedada2.cor29")
    c29 = dict(NOTES_RUN, T=100.0, eta_l=0.1, K_minus=3, eps_w=0.5, B=1.0)
    ev29 = cor29.evaluate(**{k: v for k, v in c29.items() if k in cor29.constants()})
    assert float(ev29.extras["gamma1"]) == pytest.approx(0.1 * 0.5 * 3 / (math.sqrt(3 * 2.67 ** 2) + 0.1))
    for rid in ("fedada2.thm25", "fedada2.cor27", "fedada2.cor29"):
        assert set(get(rid).variants) == {"printed", "rederived"}


# -- heavy tails (Propositions 9, 10, Theorem 13) -------------------------------------------------

def test_heavy_tail_constants():
    assert get("fedada2.prop9_ii").bound(eps_hat=0.0) == pytest.approx(2 * math.sqrt(3))
    assert get("fedada2.prop10_ii").bound(eps_hat=0.5) == pytest.approx(4.0)
    iv = get("fedada2.prop9_iv")
    assert iv.bound("printed", x0=1.0) == 4.0
    assert iv.bound("proof", x0=1.0, K=3) == 20.0
    assert iv.bound("corrected", x0=1.0, K=3) == pytest.approx(2 + 18 * (math.pi ** 2 / 6) ** 2)
    # the deterministic movement K sum 1/t^2 exceeds the printed K * 1 and stays below K pi^2/6
    assert 3 < H.movement_bound(3, 1000) < 3 * math.pi ** 2 / 6
    ev = get("fedada2.prop9_ii").evaluate("printed", eps=0.5, eps_hat=0.2, eta_l=0.6)
    assert not ev.all_conditions_hold and float(ev.extras["t0"]) == H.t0(0.5, 0.2) == 2
    assert get("fedada2.prop9_i").evaluate(p_heavy=0.3, eta_l=0.1, cohort=3).extras[
        "heavy_tail_coefficient"] == pytest.approx(0.3 * 0.01 / 9)
    assert get("fedada2.thm13").evaluate(mu=1.0, eta_l=0.1, cohort=2).extras["noise_coefficient"] == \
        pytest.approx(0.01 / 8)
    assert get("fedada2.prop9_iii").max_step(eps=0.25)[0] == 0.5
    prop14 = get("fedada2.prop14")
    assert prop14.bound("printed", K=3, T=4) == 12 and prop14.bound("rederived", K=3, T=4, eta_l=0.5) == 6


def test_t0_is_the_smallest_admissible_integer():
    for eps, eh in [(0.5, 0.2), (1.0, 0.0), (0.1, 0.44), (0.03, 0.1)]:
        t0 = H.t0(eps, eh)
        assert 1 / ((1 + t0) * (1 - eh)) < eps
        assert t0 == 1 or 1 / (t0 * (1 - eh)) >= eps
    np.testing.assert_allclose(H.adagrad_schedule([1, 2], 0.5, 0.2), 1 / ((np.array([1, 2]) + 2) * 0.8))


def test_constructions_and_their_moments():
    laws = H.prop9_laws(4)
    assert laws[0] == ("student_t", 2.0) and laws[-1] == ("student_t", 5.0)
    assert [H.second_moment(*law) for law in laws] == [math.inf, 3.0, 2.0, 5 / 3]
    assert H.prop10_laws(3, 0.3)[0] == ("cauchy", 0.3) and H.second_moment("cauchy", 0.3) == math.inf
    with pytest.raises(ValueError):
        H.prop10_laws(3, 0.5)


def test_noise_functionals_match_the_notes_quadratures():
    """notes 4.1/4.2: I(eps) at x = 0 for t_2 and sup_x E|xi|/(|x + xi| + eps) for t_2 and Cauchy(0, 0.3)."""
    assert H.i_eps("student_t", 2.0, 1.0) == pytest.approx(0.557, abs=1e-3)
    assert H.i_eps("student_t", 2.0, 0.1) == pytest.approx(1.742, abs=1e-3)
    assert H.noise_bound("student_t", 2.0, 0.5) == pytest.approx(0.644, abs=2e-3)
    assert H.noise_bound("cauchy", 0.3, 1.0) == pytest.approx(0.295, abs=2e-3)
    assert H.noise_bound("student_t", 2.0, 0.1) < 2 * math.sqrt(3)
