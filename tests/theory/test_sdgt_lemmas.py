"""SD-GT Lemmas 1-6 (seed 003 (20)-(25) [L339-L383], proofs [L702-L882]).

Besides the encoding (constants, conditions), the proof steps that give each printed or re-derived
constant are checked over random admissible step sizes, and every variant difference is shown at
constants where the variants disagree.
"""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.theory import get
from fedbound.theory.sdgt import lemmas
from fedbound.theory.sdgt.common import K
from fedbound.theory.symbols import L, gamma, mu, n, sigma

unit = st.floats(0.01, 1.0)
K_values = st.integers(1, 200)
fraction = st.floats(0.0, 1.0, exclude_min=True, exclude_max=True)

ZERO_ERRORS = dict(Delta_t=0.0, Gamma_t=0.0, Y_t=0.0, Z_t=0.0, G_t=0.0, E_t=0.0, R_t=0.0,
                   Delta_prev=0.0, Gamma_prev=0.0, Y_prev=0.0, Z_prev=0.0, G_prev=0.0)


def _at(rid, variant="printed", **c):
    result = get(rid)
    return float(result.bound(variant, **{k: v for k, v in {**ZERO_ERRORS, **c}.items()
                                          if k in result.constants(variant)}))


def test_lemma_caps_are_those_of_the_master_table():
    caps = {rid: {c.name: (c.cap, c.strict) for c in get(rid).variant().conditions}
            for rid in ("sdgt.lemma1", "sdgt.lemma2", "sdgt.lemma3", "sdgt.lemma4", "sdgt.lemma5",
                        "sdgt.lemma6")}
    assert caps["sdgt.lemma1"] == {"lemma1": (1 / (4 * K * L), False)}
    assert caps["sdgt.lemma2"]["lemma2"] == (1 / (36 * K * L), True)
    assert caps["sdgt.lemma3"] == {"lemma3": (1 / (8 * K * L), True)}
    assert caps["sdgt.lemma4"] == {"lemma4": (1 / (sp.sqrt(6) * K * L), True)}
    assert caps["sdgt.lemma5"] == {"lemma5": (1 / (sp.sqrt(6) * K * L), True)}
    assert caps["sdgt.lemma6"] == {}
    gamma_max, binding = get("sdgt.lemma2").max_step(K=4, L=2.0)
    assert gamma_max == pytest.approx(1 / 288) and binding == "lemma2 (strict)"


def test_lemma1_is_descent_with_the_printed_coefficients():
    b = _at("sdgt.lemma1", K=4, L=2.0, gamma=0.01, n=5, sigma=1.0, E_t=3.0, G_t=2.0, Delta_t=0.5)
    assert b == pytest.approx(3.0 - 0.01 * 4 / 4 * 2.0 + 0.01 * 4 * 0.5 + 2 * 0.01 ** 2 * 4 / 10)


@settings(max_examples=200, deadline=None)
@given(K=K_values, L=st.floats(0.01, 100), frac=fraction)
def test_lemma1_proof_step_holds_with_L_K2_gamma2_but_not_always_with_the_printed_L2(K, L, frac):
    """(64) [L848]: the gradient coefficient L K^2 gamma^2 - gamma K/2 <= -gamma K/4 for
    gamma <= 1/(4KL) (F11: with the printed L^2 K^2 gamma^2 it needs L <= 1 as well)."""
    g = frac / (4 * K * L)
    assert L * K ** 2 * g ** 2 - g * K / 2 <= -g * K / 4 * (1 - 1e-12)
    assert L ** 3 * K * g ** 2 + g * L ** 2 / 2 <= g * L ** 2  # the Delta coefficient of (64)


def test_lemma1_printed_L2_typo_breaks_the_descent_for_large_L():
    K_, L_ = 1, 10.0
    g = 1 / (4 * K_ * L_)
    assert L_ ** 2 * K_ ** 2 * g ** 2 - g * K_ / 2 > -g * K_ / 4  # F11: (63) as printed


@settings(max_examples=200, deadline=None)
@given(K=K_values, L=st.floats(0.01, 100), frac=fraction)
def test_lemma2_proof_coefficient_of_the_gap_is_at_most_minus_gamma_K(K, L, frac):
    """[L879]: -2 gamma K + 8 gamma^2 K^2 L + 36 K^3 gamma^3 L^2 <= -gamma K for gamma <= 1/(36KL)."""
    g = frac / (36 * K * L)
    assert -2 * g * K + 8 * g ** 2 * K ** 2 * L + 36 * K ** 3 * g ** 3 * L ** 2 <= -g * K


def test_lemma2_variants_differ_in_contraction_and_noise():
    """F10: rederived contraction mu gamma K/2 (vs mu gamma/2), noise 9 K^2 gamma^3 L sigma^2 (vs 9K)."""
    printed, rederived = (get("sdgt.lemma2").variant(v).bound for v in ("printed", "rederived"))
    R_t = lemmas.R_t
    assert sp.simplify(printed - rederived - (mu * gamma * (K - 1) / 2 * R_t
                                              - 9 * K * (K - 1) * gamma ** 3 * L * sigma ** 2)) == 0
    c = dict(K=8, L=1.0, mu=0.5, gamma=1e-3, n=10, p=0.5, sigma=0.0, R_t=1.0)
    assert _at("sdgt.lemma2", "rederived", **c) < _at("sdgt.lemma2", "printed", **c)  # more contraction
    c.update(mu=0.0, sigma=1.0)
    assert _at("sdgt.lemma2", "rederived", **c) > _at("sdgt.lemma2", "printed", **c)  # more noise
    c.update(K=1)
    assert _at("sdgt.lemma2", "rederived", **c) == _at("sdgt.lemma2", "printed", **c)


@settings(max_examples=200, deadline=None)
@given(K=st.integers(2, 500), L=st.floats(0.01, 100), frac=fraction)
def test_lemma3_proof_sums_of_alpha_powers(K, L, frac):
    """(46): with alpha = 1 + 1/(K-1) + 4 K gamma^2 L^2 and gamma < 1/(8KL): alpha^(K-1) <= 3 and
    sum_{k'=0}^{K-2} alpha^k' <= 3K. (alpha^K <= 3, as printed, fails for K = 2: F36.)"""
    g = frac / (8 * K * L)
    alpha = 1 + 1 / (K - 1) + 4 * K * g ** 2 * L ** 2
    assert alpha ** (K - 1) <= 3
    assert sum(alpha ** k for k in range(K - 1)) <= 3 * K


def test_lemma3_printed_alpha_power_claim_fails_at_K_2():
    alpha = 1 + 1 / (2 - 1) + 4 * 2 * (1e-3) ** 2
    assert alpha ** 2 > 3  # "alpha^(k-1) <= alpha^K <= 3" of (46) [L730] is false; F36


def test_lemma3_matches_47_times_K():
    c = dict(K=3, L=1.0, gamma=0.01, p=0.5, sigma=2.0, Gamma_t=1.0, Y_t=2.0, Z_t=3.0, G_t=4.0)
    per_k = (3 * 0.5 * 1.0 + 24 * 9 * 1e-4 * (2.0 + 3.0) + 6 * 9 * 1e-4 * 4.0 + 3 * 3 * 1e-4 * 4.0)
    assert _at("sdgt.lemma3", **c) == pytest.approx(3 * per_k)


@settings(max_examples=200, deadline=None)
@given(K=K_values, L=st.floats(0.01, 100), p=unit, frac=fraction)
def test_lemma4_rederived_coefficients_follow_from_the_proof(K, L, p, frac):
    """(53) [L772]: 6L^2/(pK) + 12 gamma^2 L^4 K/p <= 8L^2/(pK) <= 10L^2/p, and the noise
    6 gamma^2 L^2 K sigma^2/p + sigma^2/K <= 2 sigma^2/(pK), for gamma < 1/(sqrt(6)KL)."""
    g = frac / (np.sqrt(6) * K * L)
    delta = 6 * L ** 2 / (p * K) + 12 * g ** 2 * L ** 4 * K / p
    assert delta <= 8 * L ** 2 / (p * K) * (1 + 1e-12) and 8 * L ** 2 / (p * K) <= 10 * L ** 2 / p
    assert 6 * g ** 2 * L ** 2 * K / p + 1 / K <= 2 / (p * K) * (1 + 1e-12)


def test_lemma4_variants_differ_in_the_drift_coefficient():
    """F12: at K = 5 the re-derived drift coefficient is 8L^2/(5p), the printed one 10L^2/p."""
    c = dict(K=5, L=1.0, gamma=0.01, p=0.5, sigma=0.0, Delta_prev=1.0)
    assert _at("sdgt.lemma4", "printed", **c) == pytest.approx(10 / 0.5)
    assert _at("sdgt.lemma4", "rederived", **c) == pytest.approx(8 / (0.5 * 5))


@settings(max_examples=200, deadline=None)
@given(K=K_values, L=st.floats(0.01, 100), q=unit, frac=fraction)
def test_lemma5_rederived_coefficients_follow_from_the_proof(K, L, q, frac):
    """(56) [L797]: 24L^2/(qK) + 12 K gamma^2 L^4/q <= 26 L^2/(qK) for gamma < 1/(sqrt(6)KL)."""
    g = frac / (np.sqrt(6) * K * L)
    assert 24 * L ** 2 / (q * K) + 12 * K * g ** 2 * L ** 4 / q <= 26 * L ** 2 / (q * K) * (1 + 1e-12)
    assert 6 * L ** 2 * K * g ** 2 / q + 1 / K <= 2 / (q * K) * (1 + 1e-12)


def test_lemma5_variants_differ_in_drift_coefficient_and_gradient_round():
    """F12 and F39: rederived uses 26L^2/(qK) and the gradient at round t-1."""
    lemma5 = get("sdgt.lemma5")
    assert "G_t" in lemma5.constants("printed") and "G_prev" not in lemma5.constants("printed")
    assert "G_prev" in lemma5.constants("rederived") and "G_t" not in lemma5.constants("rederived")
    c = dict(K=4, L=1.0, gamma=0.01, q=0.5, sigma=0.0, Delta_prev=1.0)
    assert _at("sdgt.lemma5", "printed", **c) == pytest.approx(26 / 0.5)
    assert _at("sdgt.lemma5", "rederived", **c) == pytest.approx(26 / (0.5 * 4))
    c.update(Delta_prev=0.0, G_t=1.0, G_prev=0.0)
    assert _at("sdgt.lemma5", "printed", **c) > 0 and _at("sdgt.lemma5", "rederived", **c) == 0


def test_lemma6_has_no_step_condition_and_contracts_at_rate_p_over_2():
    lemma6 = get("sdgt.lemma6")
    assert lemma6.variant().conditions == ()
    assert _at("sdgt.lemma6", K=3, L=1.0, gamma=0.01, p=0.4, sigma=0.0, Gamma_prev=2.0) == \
        pytest.approx((1 - 0.4 / 2) * 2.0)
    with pytest.raises(Exception, match="no step-size condition"):
        lemma6.max_step(K=3, L=1.0)


@pytest.mark.parametrize("rid", ["sdgt.lemma1", "sdgt.lemma2", "sdgt.lemma3", "sdgt.lemma4",
                                 "sdgt.lemma5", "sdgt.lemma6"])
def test_error_quantities_are_nonnegative_constants(rid):
    result = get(rid)
    c = {nm: 1.0 for nm in result.constants()}
    c.update(K=2, p=0.5, q=0.5, mu=0.5)
    error_name = next(nm for nm in result.constants() if nm in ZERO_ERRORS)
    c[error_name] = -1.0
    with pytest.raises(Exception, match=rf"{error_name} .* must be in \[0, inf\)"):
        result.evaluate(**c)


def test_noise_terms_are_linear_in_sigma_squared():
    for rid in ("sdgt.lemma1", "sdgt.lemma2", "sdgt.lemma3", "sdgt.lemma4", "sdgt.lemma5", "sdgt.lemma6"):
        for v in get(rid).variants.values():
            assert sp.degree(sp.expand(v.bound), sigma) == 2, rid
            assert n not in v.bound.free_symbols or rid in ("sdgt.lemma1", "sdgt.lemma2")
