"""SD-GT Theorems 4 and 5 (fedbound/theory/sdgt/thm45.py) against formulas typed here from
papers/sdgt.md 4.7 (seed 003, (112) [L1188], Theorem 4 [L1200-L1208], Theorem 5 [L1212-L1232])."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from fedbound.theory import get
from fedbound.theory.audit import run_audit
from fedbound.theory.sdgt.thm45 import k_star


def x_typed(H, lam2, lam3, E, c):
    """X of (119)-(122) with 1/p^2 replaced by c."""
    return (0.5 * math.sqrt(lam2 * H) + 2 / 3 * (lam2 * c * H) ** (2 / 3)) / (lam3 * E)


def root_118(p, H, lam2, lam3, E):
    """The root in K of (118), by brentq on log K (independent of fedbound.control)."""
    def f(k):
        K = math.exp(k)
        return 0.5 * math.sqrt(lam2 * H) * K ** -1.5 + 2 / 3 * (lam2 * H / p ** 2) ** (2 / 3) * K ** (-5 / 3) - lam3 * E
    return math.exp(brentq(f, -60, 60, xtol=1e-14, rtol=1e-14))


def interval(variant, H, lam2, lam3, E, m):
    ex = get("sdgt.thm5").evaluate(variant, Hhat=H, lambda2=lam2, lambda3=lam3, E_d2d_sum=E, m_max=m).extras
    return float(ex["K_lower"]), float(ex["K_upper"])


def test_thm4_bound_and_step_match_the_typed_formulas():
    c = dict(E1=2.0, D=0.25, D5=3.0, T=500, Kmin=2, Kmax=7, gamma=1e-5, L=1.5, sigma=0.7, pmin=0.4, q=0.6, n=12)
    ev = get("sdgt.thm4").evaluate(**c)
    g, L, s = c["gamma"], c["L"], c["sigma"]
    expected = (c["E1"] / (c["D"] * c["T"] * c["Kmin"] * g)
                + c["D5"] * L ** 2 * c["Kmax"] ** 2 * g ** 2 * s ** 2 / (c["D"] * c["pmin"] ** 4 * c["q"] ** 2 * c["Kmin"])
                + L * c["Kmax"] * g * s ** 2 / (2 * c["D"] * c["n"] * c["Kmin"]))
    assert float(ev.bound) == pytest.approx(expected, rel=1e-12)
    step = min(math.sqrt(2 * c["E1"] * c["Kmax"] * c["n"] / (L * s ** 2 * c["T"])),
               (2 * c["E1"] * c["pmin"] ** 4 * c["q"] ** 2 * c["Kmax"] / (L * s ** 2 * c["T"])) ** (1 / 3),
               c["pmin"] ** 2 * c["q"] ** 2 / (945 * c["Kmax"] * L))
    assert float(ev.extras["gamma_choice"]) == pytest.approx(step, rel=1e-12)
    assert float(ev.caps["thm4"]) == pytest.approx(c["pmin"] ** 2 * c["q"] ** 2 / (945 * c["Kmax"] * L), rel=1e-12)
    assert float(ev.caps["lemma3"]) == pytest.approx(1 / (8 * c["Kmax"] * L), rel=1e-12)   # lemma caps at K^max
    gamma, binding = get("sdgt.thm4").max_step(L=L, pmin=c["pmin"], q=c["q"], Kmax=c["Kmax"])
    assert binding == "thm4" and float(gamma) == pytest.approx(step, rel=1e-12)


def test_thm4_rejects_kmin_above_kmax():
    from fedbound.errors import ValidationError
    with pytest.raises(ValidationError, match="Kmin must be <= Kmax"):
        get("sdgt.thm4").evaluate(E1=1, D=0.25, D5=1, T=10, Kmin=5, Kmax=2, gamma=1e-4, L=1, sigma=1,
                                  pmin=0.5, q=0.5, n=4)


def test_thm5_notes_example_printed_bounds_cross():
    """papers/sdgt.md 4.7: lambda2 = 0.1, H = 1, m_s = 10, lambda3 sum E^D2D = 1.5e-5."""
    H, lam2, lam3, E, m = 1.0, 0.1, 1.5e-5, 1.0, 10
    ex = get("sdgt.thm5").evaluate("printed", Hhat=H, lambda2=lam2, lambda3=lam3, E_d2d_sum=E, m_max=m).extras
    assert float(ex["X_lo"]) == pytest.approx(x_typed(H, lam2, lam3, E, 1), rel=1e-12) and 1.9e4 < ex["X_lo"] < 2.1e4
    assert float(ex["X_hi"]) == pytest.approx(x_typed(H, lam2, lam3, E, m ** 2), rel=1e-12) and 2.1e5 < ex["X_hi"] < 2.2e5
    lower, upper = interval("printed", H, lam2, lam3, E, m)
    assert lower == pytest.approx(x_typed(H, lam2, lam3, E, m ** 2) ** 0.6, rel=1e-12)
    assert upper == pytest.approx(x_typed(H, lam2, lam3, E, 1) ** (2 / 3), rel=1e-12)
    assert lower > upper                                  # the printed interval is empty
    for p in (1.0, 0.5, 1 / m):
        k = root_118(p, H, lam2, lam3, E)
        assert not lower <= k <= upper
        c_lower, c_upper = interval("corrected", H, lam2, lam3, E, m)
        assert c_lower <= k <= c_upper


def test_k_star_solves_118():
    p = np.array([1.0, 0.3, 0.05])
    k = k_star(p, 2.0, 0.1, 1e-4, 3.0)
    expected = [root_118(x, 2.0, 0.1, 1e-4, 3.0) for x in p]
    np.testing.assert_allclose(k, expected, rtol=1e-10)
    assert np.all(np.diff(k) > 0)                         # K* increases with 1/p (the F29 argument)


@settings(max_examples=60, deadline=None)
@given(H=st.floats(1e-6, 1e3), lam2=st.floats(1e-4, 10.0), lam3=st.floats(1e-8, 1.0),
       E=st.floats(1e-3, 1e3), m=st.integers(1, 1000), z=st.floats(0.0, 1.0))
def test_corrected_interval_contains_the_root(H, lam2, lam3, E, m, z):
    p = m ** -z                                           # any p in [1/max_s m_s, 1]
    k = root_118(p, H, lam2, lam3, E)
    lower, upper = interval("corrected", H, lam2, lam3, E, m)
    assert lower * (1 - 1e-9) <= k <= upper * (1 + 1e-9)


@pytest.fixture(scope="module")
def thm5_audit():
    return {r.variant: r for r in run_audit("sdgt", samples=400, seed=1, iterations=10, only=["thm5"])}


def test_audit_thm5(thm5_audit):
    printed, corrected = thm5_audit["printed"], thm5_audit["corrected"]
    assert corrected.verdict == "holds" and corrected.violation_ratio <= 1 + 1e-9
    assert printed.verdict == "fails" and printed.flag == "F29" and printed.violation_ratio > 1
    c = printed.worst
    k = root_118(c["p"], c["Hhat"], c["lambda2"], c["lambda3"], c["E_d2d_sum"])
    lower, upper = interval("printed", c["Hhat"], c["lambda2"], c["lambda3"], c["E_d2d_sum"], c["m_max"])
    assert 1 / c["m_max"] <= c["p"] <= 1
    assert not lower <= k <= upper                        # the counterexample is real
    assert max(lower / k, k / upper) == pytest.approx(printed.violation_ratio, rel=1e-8)


def test_provenance_and_flags():
    thm4, thm5 = get("sdgt.thm4"), get("sdgt.thm5")
    assert "1188" in thm4.provenance.lines and "1212" in thm5.provenance.lines
    assert {f.id for f in thm4.known_issues} >= {"F38"} and {f.id for f in thm5.known_issues} == {"F29"}
    assert list(thm5.variants) == ["printed", "corrected"]
