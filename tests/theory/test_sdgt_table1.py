"""SD-GT Table I and the special case (32) (seed 003 [L431-L437], [L464-L468])."""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.errors import UnknownNameError, ValidationError
from fedbound.theory import get
from fedbound.theory.sdgt.common import p, q
from fedbound.theory.sdgt.table1 import EQ32_TERMS, ROWS, rho, table1_rounds
from fedbound.theory.sdgt.common import K
from fedbound.theory.symbols import eps, n, sigma

ALL = dict(sigma=1.0, n=10, K=5, rho=0.5, p=0.8, q=0.5, eta=1.0, eta_s=2.0)
IDS = {"SCAFFOLD": "sdgt.table1.scaffold", "K-GT": "sdgt.table1.kgt", "LED": "sdgt.table1.led",
       "H-SGD": "sdgt.table1.hsgd", "SD-GT": "sdgt.table1.sdgt"}


def test_sdgt_row_with_p_1_and_q_rho_is_32_term_by_term():
    reduced = [t.subs({p: 1, q: rho}) for t in ROWS["SD-GT"]]
    assert len(reduced) == len(EQ32_TERMS)
    for a, b in zip(reduced, EQ32_TERMS):
        assert sp.simplify(a - b) == 0
    assert sp.simplify(get("sdgt.eq32").variant().bound
                       - get("sdgt.table1.sdgt").variant().bound.subs({p: 1, q: rho})) == 0


def test_32_is_no_worse_than_kgt_termwise_and_its_third_term_is_leds():
    """For rho in (0, 1]: each term of (32) over K-GT's is 1 or rho (sympy), the third equals LED's,
    the second lies between LED's and K-GT's."""
    ratios = [sp.simplify(a / b) for a, b in zip(EQ32_TERMS, ROWS["K-GT"])]
    assert ratios == [1, rho, rho]
    assert sp.simplify(EQ32_TERMS[2] - ROWS["LED"][2]) == 0
    assert sp.simplify(EQ32_TERMS[0] - ROWS["LED"][0]) == 0
    assert sp.simplify(ROWS["LED"][1] / EQ32_TERMS[1] - sp.sqrt(rho)) == 0


@settings(max_examples=200, deadline=None)
@given(rho_=st.floats(1e-6, 1.0), sigma_=st.floats(0, 100), n_=st.integers(1, 10 ** 4),
       K_=st.integers(1, 1000), eps_=st.floats(1e-8, 10))
def test_32_below_kgt_termwise_numerically(rho_, sigma_, n_, K_, eps_):
    subs = {rho: rho_, sigma: sigma_, n: n_, K: K_, eps: eps_}
    for ours, kgt, led in zip(EQ32_TERMS, ROWS["K-GT"], ROWS["LED"]):
        a, b, c = (float(t.subs(subs)) for t in (ours, kgt, led))
        assert a <= b * (1 + 1e-12)
    assert float(EQ32_TERMS[1].subs(subs)) >= float(ROWS["LED"][1].subs(subs)) * (1 - 1e-12)


def test_rate_exponents_in_eps():
    expected = {"SCAFFOLD": [-2, -1], "K-GT": [-2, sp.Rational(-3, 2), -1],
                "LED": [-2, sp.Rational(-3, 2), -1], "SD-GT": [-2, sp.Rational(-3, 2), -1]}
    for method, exps in expected.items():
        assert sorted(get(IDS[method]).rate_exponents(in_symbol="eps").values()) == exps
    assert sorted(get("sdgt.eq32").rate_exponents(in_symbol="eps").values()) == [-2, sp.Rational(-3, 2), -1]
    hsgd = sorted(get(IDS["H-SGD"]).rate_exponents(in_symbol="eps").values())
    assert hsgd[0] == -2 and hsgd[-1] == -1 and set(hsgd[1:-1]) == {sp.Rational(-3, 2)}


def test_noise_term_dominates_as_eps_goes_to_zero():
    for method in ("K-GT", "LED", "SD-GT"):
        total = sp.Add(*ROWS[method])
        assert sp.limit(ROWS[method][0] / total, eps, 0, "+") == 1


def test_table1_rounds_evaluates_every_row_and_32():
    rounds = table1_rounds(1e-2, **ALL)
    assert list(rounds) == ["SCAFFOLD", "K-GT", "LED", "H-SGD", "SD-GT", "SD-GT (32)"]
    assert rounds["SCAFFOLD"] == pytest.approx(1 / (10 * 5 * 1e-4) + 100)
    assert rounds["SD-GT"] == pytest.approx(
        1 / (50 * 1e-4) + 1 / (0.64 * 0.5 * np.sqrt(5)) * 1e3 + 1 / (0.64 * 0.5 * 1e-2))
    assert rounds["SD-GT (32)"] == pytest.approx(float(
        sp.Add(*EQ32_TERMS).subs({sigma: 1, n: 10, K: 5, rho: 0.5, eps: sp.Rational(1, 100)})))
    full = table1_rounds(1e-2, **{**ALL, "p": 1.0, "q": 0.5})
    assert full["SD-GT"] == pytest.approx(full["SD-GT (32)"])


def test_table1_rounds_is_vectorized():
    e = np.array([1e-1, 1e-2, 1e-3])
    rounds = table1_rounds(e, **ALL)
    for method, values in rounds.items():
        assert values.shape == (3,) and np.all(np.diff(values) > 0)
        for i in range(3):
            assert values[i] == pytest.approx(table1_rounds(e[i], **ALL)[method], rel=1e-14)


def test_table1_rounds_rejects_bad_constants():
    with pytest.raises(ValidationError, match=r"needs constant\(s\) rho"):
        table1_rounds(1e-2, **{k: v for k, v in ALL.items() if k != "rho"})
    with pytest.raises(ValidationError, match=r"rho .* must be in \(0, 1\], got 1.5"):
        table1_rounds(1e-2, **{**ALL, "rho": 1.5})
    with pytest.raises(ValidationError, match=r"eps .* must be in \(0, inf\)"):
        table1_rounds(-1.0, **ALL)
    with pytest.raises(UnknownNameError, match="unknown constant 'zeta'"):
        table1_rounds(1e-2, **ALL, zeta=1.0)


# -- which regime makes SD-GT's guarantee the weaker one (issue 34) ------------------------------------
from fedbound.theory.sdgt.table1 import AGREE_FACTOR, TABLE1, regime  # noqa: E402


@settings(max_examples=25)
@given(st.floats(0.05, 1.0), st.floats(0.05, 1.0), st.floats(0.0, 3.0), st.floats(1e-5, 1e-1))
def test_sdgt_is_never_stronger_than_scaffold_with_unit_constants(p, q, sigma, eps):
    """SD-GT's row minus SCAFFOLD's is sigma/(p^2 q sqrt K) eps^-3/2 + (1/(p^2 q) - 1)/eps >= 0."""
    values = dict(sigma=sigma, n=10, K=5, p=p, q=q, rho=0.5, eta=1.0, eta_s=1.0)
    r = regime(eps, **values)
    assert r["rounds"]["SD-GT"] >= r["rounds"]["SCAFFOLD"] * (1 - 1e-12)
    assert r["best"] != "SD-GT" or r["rounds"]["SD-GT"] == pytest.approx(r["rounds"]["SCAFFOLD"])
    assert sum(r["terms"].values()) == pytest.approx(r["rounds"]["SD-GT"], rel=1e-12)
    assert r["terms"][r["dominant"]] == max(r["terms"].values())


def test_the_eps_where_sdgt_comes_within_a_factor_of_2():
    values = dict(sigma=1.0, n=30, K=5, p=0.64, q=0.5, rho=0.5, eta=1.0, eta_s=1.0)
    r = regime(1e-3, **values)
    assert r["best"] == "SCAFFOLD" and r["factor"] == pytest.approx(r["rounds"]["SD-GT"] / r["rounds"]["SCAFFOLD"])
    e = r["agree_below"]

    def ratio(eps):
        return float(TABLE1["SD-GT"].bound(**values, eps=eps) / TABLE1["SCAFFOLD"].bound(**values, eps=eps))

    assert ratio(e) <= AGREE_FACTOR < ratio(e * 1.001)
    assert "weaker one" in r["words"] and "SCAFFOLD" in r["words"]


def test_without_noise_the_gap_stays():
    r = regime(1e-3, sigma=0.0, n=30, K=5, p=0.64, q=0.5, rho=0.5, eta=1.0, eta_s=1.0)
    assert r["agree_below"] is None and r["factor"] == pytest.approx(1 / (0.64 ** 2 * 0.5))
    assert "gap stays about 1/(p^2 q)" in r["words"]


def test_regime_needs_one_point():
    with pytest.raises(ValidationError, match="one point"):
        regime(1e-3, sigma=np.array([0.5, 1.0]), n=30, K=5, p=0.64, q=0.5, rho=0.5, eta=1.0, eta_s=1.0)
