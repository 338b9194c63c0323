"""SD-GT Theorem 3 and Corollary 3 (fedbound/theory/sdgt/thm3.py) against formulas typed here from
papers/sdgt.md 4.6 (seed 003 [L299-L327], (93)-(98) [L1013-L1033], (103)-(105) [L1068-L1082]),
evaluated independently with mpmath at 50 digits."""
import json
import math

import mpmath as mp
import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fedbound.cli.main import main
from fedbound.theory import get
from fedbound.theory.audit import run_audit

mp.mp.dps = 50
VARIANTS = ("main", "appendix", "rederived")
GAMMA_BAR_FORM = {"main": "main", "appendix": "appendix", "rederived": "appendix"}


def gamma_bar_typed(L, mu, K, p, q, form):
    """gamma_bar: main text [L303-L304] (K mu) or (97) [L1029] (K mu/4)."""
    km = K * mu if form == "main" else K * mu / 4
    pq = min(p, q)
    return min(pq * mu / (K * (14 * L ** 2 + 240 * L ** 3)), 1 / (18 * K * L), 4 / (mu * K),
               pq * p / (2 * (45 * K * L + 108 * K * L ** 2 + km)),
               pq ** 2 / (2 * (86 * K ** 2 + 864 * K ** 2 * L + km)))


def A_typed(c, variant):
    """A of papers/sdgt.md 4.6 with mpmath numbers: (93), the main text (1 - p/2) I + gamma K L M
    [L313], or the rederived one (F19)."""
    L, mu, K, p, q, g = (mp.mpf(c[k]) for k in ("L", "mu", "K", "p", "q", "gamma"))
    if variant == "main":
        M = mp.matrix([
            [(p - mu * g * K) / (2 * g * K * L), 9 * (1 - p), 72 * K ** 2 * g, 72 * K ** 2 * g],
            [14 * g * K * L / p, 36 * g * L / p, 14 * K / (p * L), 14 * K / (p * L)],
            [72 * g ** 2 * K ** 2 * L ** 3 / p, 30 * L / p, 240 * K ** 2 * g * L / p, 240 * K ** 2 * g * L / p],
            [168 * g ** 2 * K ** 2 * L ** 3 / q, 78 * L / q, 624 * K ** 2 * g * L / q, 624 * K ** 2 * g * L / q]])
        return (1 - p / 2) * mp.eye(4) + g * K * L * M
    A = mp.matrix([
        [1 - mu * K * g / 2, 9 * g * K * L * (1 - p), 72 * K ** 3 * L * g ** 2, 72 * K ** 3 * L * g ** 2],
        [14 * g ** 2 * K ** 2 * L ** 2 / p, 1 - p / 2 + 36 * g ** 2 * K * L ** 2 / p, 14 * K ** 2 * g / p,
         14 * K ** 2 * g / p],
        [72 * g ** 2 * K ** 2 * L ** 3 / p, 30 * L ** 2 * K * g / p, 1 - p / 2 + 240 * K ** 3 * g ** 2 * L ** 2 / p,
         240 * K ** 3 * g ** 2 * L ** 2 / p],
        [168 * g ** 2 * K ** 2 * L ** 3 / q, 78 * L ** 2 * K * g / q, 624 * K ** 3 * g ** 2 * L ** 2 / q,
         1 - q / 2 + 624 * K ** 3 * g ** 2 * L ** 2 / q]])
    if variant == "rederived":
        A[1, 1] = 1 - p / 2 + 36 * g ** 2 * K ** 2 * L ** 2 * (1 - p) / p
        A[2, 0] = 72 * g ** 3 * K ** 3 * L ** 4 / p
        A[3, 0] = 168 * g ** 3 * K ** 3 * L ** 4 / q
    return A


def b_typed(c, variant):
    """b (94) [L1017] (main text identical), or the rederived rows (F20)."""
    L, K, p, q, n, s, g = (mp.mpf(c[k]) for k in ("L", "K", "p", "q", "n", "sigma", "gamma"))
    if variant == "rederived":
        rows = [2 * g ** 2 * K / n + 9 * K ** 2 * g ** 3 * L, K * g ** 2 + 36 * K ** 3 * g ** 4 * L ** 2 / p,
                2 * g / (p * K) + 30 * K ** 2 * g ** 3 * L ** 2 / p, 2 * g / (q * K) + 78 * K ** 2 * g ** 3 * L ** 2 / q]
    else:
        rows = [2 * g ** 2 * K / n + 9 * K ** 2 * g ** 3 * L, K * g ** 2 + 3 * K ** 3 * g ** 4 * L ** 2,
                2 * g / (q * K) + 30 * K ** 3 * g ** 3 * L ** 2 / q, 2 * g / (q * K) + 78 * K ** 3 * g ** 3 * L ** 2 / q]
    return mp.matrix([r * s ** 2 for r in rows])


def l1_norm(A):
    return max(sum(abs(A[i, j]) for i in range(4)) for j in range(4))


def spectral_radius(A):
    return max(abs(e) for e in mp.eig(A, left=False, right=False))


constants = st.fixed_dictionaries({
    "L": st.floats(1e-3, 1e3), "mu_over_L": st.floats(1e-6, 1.0), "K": st.integers(1, 1000),
    "p": st.floats(1e-3, 1.0), "q": st.floats(1e-3, 1.0), "n": st.integers(1, 10000),
    "sigma": st.floats(1e-3, 1e3)})


def at_gamma_bar(raw, variant):
    c = dict(raw)
    c["mu"] = c.pop("mu_over_L") * c["L"]
    c["gamma"] = gamma_bar_typed(c["L"], c["mu"], c["K"], c["p"], c["q"], GAMMA_BAR_FORM[variant])
    return c


def evaluate(variant, c, **more):
    return get("sdgt.thm3").evaluate(variant, **{**c, "T": 10, "Lyap1": 1.0, **more})


@pytest.fixture(scope="module")
def thm3_audit():
    return {(r.claim, r.variant): r for r in run_audit("sdgt", samples=800, seed=3, iterations=10,
                                                       only=["thm3"])}


# -- the formulas -----------------------------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=constants)
def test_A_b_gamma_bar_match_the_typed_formulas(variant, raw):
    c = at_gamma_bar(raw, variant)
    ev = evaluate(variant, c)
    assert ev.extras["gamma_bar"] == pytest.approx(c["gamma"], rel=1e-12)
    A, b = A_typed(c, variant), b_typed(c, variant)
    np.testing.assert_allclose(ev.extras["A"], np.array(A.tolist(), dtype=float), rtol=1e-11, atol=0)
    np.testing.assert_allclose(ev.extras["b"][:, 0], np.array(b.tolist(), dtype=float)[:, 0], rtol=1e-11)
    gap = mp.eye(4) - A
    np.testing.assert_allclose(ev.extras["I_minus_A"], np.array(gap.tolist(), dtype=float), rtol=1e-9,
                               atol=1e-300)


@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=15, deadline=None)
@given(raw=constants, log_fraction=st.floats(-12.0, 0.0))
def test_spectral_numbers_are_accurate_down_to_tiny_steps(variant, raw, log_fraction):
    """1 - rho(A) and ||(I - A)^{-1} b||_1 to 1e-9 relative (50-digit reference) although 1 - rho(A)
    ~ mu K gamma/2 can be 1e-20 next to eigenvalues ~ p/2 (where eigvals and LU lose all digits)."""
    c = at_gamma_bar(raw, variant)
    c["gamma"] *= 10 ** log_fraction
    ev = evaluate(variant, c)
    A = A_typed(c, variant)
    tau = min(mp.re(e) for e in mp.eig(mp.eye(4) - A, left=False, right=False))
    floor = sum(abs(x) for x in mp.lu_solve(mp.eye(4) - A, b_typed(c, variant)))
    assert float(ev.extras["radius_margin"]) == pytest.approx(float(tau), rel=1e-9)
    assert float(ev.extras["floor"]) == pytest.approx(float(floor), rel=1e-9)


def differing(X, Y):
    return {(i, j) for i in range(X.rows) for j in range(X.cols) if sp.simplify(X[i, j] - Y[i, j]) != 0}


@pytest.mark.parametrize("key, first, second, entries", [
    ("A", "main", "appendix", {(2, 0), (3, 0), (3, 3)}),       # F19 (i): extra gamma K L; (ii): 1 - p/2 at (4,4)
    ("A", "rederived", "appendix", {(1, 1), (2, 0), (3, 0)}),  # F19 (iii): (2,2); (i): main-text (3,1), (4,1)
    ("A", "rederived", "main", {(1, 1), (3, 3)}),
    ("b", "main", "appendix", set()),                          # (94) [L1017] = [L314]
    ("b", "rederived", "appendix", {(1, 0), (2, 0), (3, 0)}),  # F20: rows 2-4
])
def test_variants_differ_where_the_notes_say(key, first, second, entries):
    thm3 = get("sdgt.thm3")
    assert differing(thm3.variant(first).extras[key], thm3.variant(second).extras[key]) == entries


def test_gamma_bar_forms_differ_in_the_last_two_entries():
    """F18: K mu (main text) vs K mu/4 ((97)); the rederived variant uses (97)."""
    thm3 = get("sdgt.thm3")
    main_entries = [c.cap for c in thm3.variant("main").conditions]
    appendix_entries = [c.cap for c in thm3.variant("appendix").conditions]
    assert [sp.simplify(x - y) != 0 for x, y in zip(main_entries, appendix_entries)] == [
        False, False, False, True, True]
    assert [c.cap for c in thm3.variant("rederived").conditions] == appendix_entries


# -- the paper's claims at gamma = gamma_bar -------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=constants)
def test_claims_at_gamma_bar(variant, raw, thm3_audit):
    """A >= 0 and rho(A) < 1 hold (checked at 50 digits); ||A||_1 <= 1 - mu K gamma/4 (F18) fails at
    some constants: wherever it fails here, the audit reports it failing."""
    c = at_gamma_bar(raw, variant)
    A = A_typed(c, variant)
    assert all(A[i, j] >= 0 for i in range(4) for j in range(4))
    rho = spectral_radius(A)
    assert rho < 1
    assert thm3_audit[("thm3.rho_lt_1", variant)].verdict == "holds"
    ev = evaluate(variant, c)
    assert float(1 - rho) == pytest.approx(float(ev.extras["radius_margin"]), rel=1e-9)
    contraction = mp.mpf(c["mu"]) * c["K"] * mp.mpf(c["gamma"]) / 4
    if l1_norm(A) > 1 - contraction:
        assert thm3_audit[("thm3.A_l1", variant)].verdict == "fails"


@pytest.mark.parametrize("variant", VARIANTS)
def test_audit_finds_the_F18_counterexample_and_it_is_real(variant, thm3_audit):
    report = thm3_audit[("thm3.A_l1", variant)]
    assert report.verdict == "fails" and report.flag == "F18" and "col1" in report.failing_parts
    c = report.worst
    assert c["gamma"] <= gamma_bar_typed(c["L"], c["mu"], c["K"], c["p"], c["q"],
                                         GAMMA_BAR_FORM[variant]) * (1 + 1e-12)
    A = A_typed(c, variant)
    assert l1_norm(A) > 1 - mp.mpf(c["mu"]) * c["K"] * mp.mpf(c["gamma"]) / 4
    # the reported ratio is the per-column quotient (off-diagonal + mu K gamma/4)/(1 - A_11)
    off = sum(A[i, 0] for i in range(1, 4))
    ratio = (off + mp.mpf(c["mu"]) * c["K"] * mp.mpf(c["gamma"]) / 4) / (1 - A[0, 0])
    assert float(ratio) == pytest.approx(report.violation_ratio, rel=1e-9)
    assert 1 < report.violation_ratio <= 2.5 + 1e-9   # first gamma_bar entry: off <= mu K gamma


def test_audit_on_A_nonnegative_and_rate(thm3_audit):
    for variant in VARIANTS:
        assert thm3_audit[("thm3.A_nonnegative", variant)].verdict == "holds"
        rate = thm3_audit[("thm3.rho_rate", variant)]
        assert rate.verdict == "holds" and rate.violation_ratio < 1


# -- the bound (98) --------------------------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
def test_bound_is_transient_plus_unsquared_floor(variant):
    c = dict(L=2.0, mu=0.05, K=3, p=0.6, q=0.3, n=20, sigma=1.5)
    c["gamma"] = gamma_bar_typed(c["L"], c["mu"], c["K"], c["p"], c["q"], GAMMA_BAR_FORM[variant]) / 3
    ev = get("sdgt.thm3").evaluate(variant, **c, T=50, Lyap1=2.0)
    A, b = A_typed(c, variant), b_typed(c, variant)
    floor = sum(abs(x) for x in mp.lu_solve(mp.eye(4) - A, b))
    transient = (1 - mp.mpf(c["mu"]) * c["K"] * mp.mpf(c["gamma"]) / 4) ** 50 * 2
    assert float(ev.extras["floor"]) == pytest.approx(float(floor), rel=1e-10)
    assert float(ev.bound) == pytest.approx(float(transient + floor), rel=1e-10)
    assert float(ev.extras["A_l1"]) == pytest.approx(float(l1_norm(A)), rel=1e-12)
    assert float(ev.extras["spectral_radius"]) == pytest.approx(float(spectral_radius(A)), rel=1e-12)
    assert all(ev.conditions_hold.values())


def test_no_floor_when_the_recursion_does_not_contract():
    c = dict(L=1.0, mu=0.01, K=1, p=0.01, q=0.5, n=5, sigma=1.0, gamma=0.2)  # far above gamma_bar
    ev = get("sdgt.thm3").evaluate("appendix", **c, T=10, Lyap1=1.0)
    assert spectral_radius(A_typed(c, "appendix")) >= 1
    assert ev.extras["spectral_radius"] >= 1 and np.isinf(ev.extras["floor"]) and np.isinf(ev.bound)
    assert not all(ev.conditions_hold.values())


def test_vectorized_over_constants():
    ev = get("sdgt.thm3").evaluate("main", L=np.array([0.5, 1.0, 2.0]), mu=0.01, K=2, p=0.5, q=0.5, n=10,
                                   sigma=1.0, gamma=1e-7, T=5, Lyap1=1.0)
    assert ev.extras["A"].shape == (3, 4, 4) and ev.bound.shape == (3,)
    one = get("sdgt.thm3").evaluate("main", L=1.0, mu=0.01, K=2, p=0.5, q=0.5, n=10, sigma=1.0,
                                    gamma=1e-7, T=5, Lyap1=1.0)
    assert ev.bound[1] == pytest.approx(float(one.bound), rel=1e-14)


def test_bound_cli_json_has_the_recursion_numbers(capsys):
    args = ["bound", "sdgt.thm3", "--variant", "main", "--json"] + [
        x for kv in ("L=1", "mu=0.01", "K=2", "p=0.5", "q=0.4", "n=10", "sigma=1", "gamma=1e-6", "T=100",
                     "Lyap1=1") for x in ("--set", kv)]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["variant"] == "main"
    assert np.array(out["A"]).shape == (4, 4)
    for key in ("A_l1", "spectral_radius", "gamma_bar", "floor", "bound"):
        assert math.isfinite(out[key])


# -- Corollary 3 ----------------------------------------------------------------------------------

def step_105(c, form):
    gb = gamma_bar_typed(c["L"], c["mu"], c["K"], c["p"], c["q"], form)
    x = c["mu"] * c["K"] * (c["R"] + 2 * gb * c["sigma"] ** 2) * c["T"] / c["sigma"] ** 2
    return min(gb, math.log(max(1.0, x)) / (c["mu"] * c["K"] * c["T"]))


@pytest.mark.parametrize("T", [10, 10 ** 4, 10 ** 8])
def test_cor3_step_and_bounds(T):
    c = dict(L=1.0, mu=0.02, K=2, p=0.5, q=0.4, n=10, sigma=0.5, R=3.0, T=T)
    cor3 = get("sdgt.cor3")
    printed, rederived = cor3.evaluate("printed", **c), cor3.evaluate("rederived", **c)
    g_p, g_r = step_105(c, "main"), step_105(c, "appendix")
    assert float(printed.extras["gamma"]) == pytest.approx(g_p, rel=1e-12)
    assert float(rederived.extras["gamma"]) == pytest.approx(g_r, rel=1e-12)
    lyap = c["R"] + 2 * g_p * c["sigma"] ** 2
    x = c["mu"] * c["K"] * g_p
    expected = math.exp(-x * T / 2) * lyap + c["K"] ** 5 * c["L"] ** 5 * c["sigma"] ** 2 * g_p ** 5 / (c["p"] * c["q"])
    assert float(printed.bound) == pytest.approx(expected, rel=1e-10)
    # rederived = (98) at the step (105): Theorem 3's rederived bound at that gamma with Lyap1 = R + 2 gamma sigma^2
    thm3 = get("sdgt.thm3").evaluate("rederived", **{k: c[k] for k in ("L", "mu", "K", "p", "q", "n", "sigma", "T")},
                                      gamma=g_r, Lyap1=c["R"] + 2 * g_r * c["sigma"] ** 2)
    assert float(rederived.bound) == pytest.approx(float(thm3.bound), rel=1e-10)


def test_cor3_F22_floor_is_not_order_gamma5():
    """The computed floor falls like gamma (b has gamma sigma^2/(qK) entries), not like gamma^5."""
    c = dict(L=1.0, mu=0.05, K=2, p=0.5, q=0.5, n=10, sigma=1.0)
    thm3 = get("sdgt.thm3")
    gb = gamma_bar_typed(c["L"], c["mu"], c["K"], c["p"], c["q"], "appendix")
    floors = [float(thm3.evaluate("appendix", **c, gamma=gb * f, T=1, Lyap1=0.0).extras["floor"])
              for f in (1e-2, 1e-3)]
    assert 0.05 < floors[1] / floors[0] < 0.2                       # first order in small gamma
    order = [c["K"] ** 5 * c["L"] ** 5 * c["sigma"] ** 2 * (gb * f) ** 5 / (c["p"] * c["q"]) for f in (1e-2, 1e-3)]
    assert floors[1] / order[1] > 1e3 * floors[0] / order[0]       # floor / O-term grows as gamma -> 0


def test_cor3_F22_printed_exponent_understates_the_transient():
    x, T = 1e-3, 10 ** 4     # mu K gamma and T
    assert (1 - x / 4) ** T > math.exp(-x * T / 2)       # the printed (103) step is false
    assert (1 - x / 4) ** T <= math.exp(-x * T / 4)      # the rederived one holds


def test_results_have_provenance_and_flags():
    thm3, cor3 = get("sdgt.thm3"), get("sdgt.cor3")
    assert thm3.provenance.seed.startswith("003_") and "1005-1033" in thm3.provenance.lines
    assert "1066-1088" in cor3.provenance.lines
    assert {f.id for f in thm3.known_issues} >= {"F18", "F19", "F20", "F21"}
    assert {f.id for f in cor3.known_issues} >= {"F22", "F23"}
    assert list(thm3.variants) == list(VARIANTS) and list(cor3.variants) == ["printed", "rederived"]
    for v in thm3.variants.values():
        assert len(v.conditions) == 5 and v.description
