"""The audit engine (fedbound/theory/audit.py) on synthetic claims, and SD-GT's claims
(fedbound/theory/sdgt/audit.py) whose counterexamples are re-checked here from formulas typed from
papers/sdgt.md."""
from dataclasses import replace
import json
import math

import numpy as np
import pytest
import sympy as sp

from fedbound.errors import UnknownNameError
from fedbound.theory import symbols as S
from fedbound.theory.audit import audit_claim, claims_of, run_audit
from fedbound.theory.audit_report import format_table
from fedbound.theory.claim import Claim, Param, Sampler, compile_expr, sign_parts

BOX = Sampler((Param("x", 1e-3, 1e3), Param("y", 0.0, 1.0, log=False), Param("k", 1, 50, integer=True)))


def synthetic(name, check, **kw):
    return Claim(name, "synthetic", "printed", name, "", BOX, check, **kw)


def test_params_map_the_unit_cube():
    z = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.5, 0.5, 0.5]])
    c = BOX.constants(z)
    np.testing.assert_allclose(c["x"], [1e-3, 1e3, 1.0])
    np.testing.assert_allclose(c["y"], [0.0, 1.0, 0.5])
    assert list(c["k"]) == [1, 50, round(50 ** 0.5)]


def test_verdicts_are_computed():
    holds = audit_claim(synthetic("holds", lambda c: (c["y"] * c["x"], 2 * c["x"])), samples=200, iterations=5)
    assert holds.verdict == "holds" and holds.violation_ratio == pytest.approx(0.5)   # sup at y = 1
    fails = audit_claim(synthetic("fails", lambda c: (c["k"] * c["y"], np.full_like(c["y"], 10.0))),
                        samples=200, iterations=5)
    assert fails.verdict == "fails" and fails.violation_ratio == pytest.approx(5.0)   # k = 50, y = 1
    assert fails.worst["k"] == 50 and fails.worst["y"] == pytest.approx(1.0)
    assert 0 < fails.random_violation_fraction < 1


def test_adversarial_search_finds_a_thin_violation():
    # violated only for x within ~1e-3 decades of 31.6 (of 6 decades) and y > 0.999: random
    # sampling misses it, the search climbs the smooth ratio to it
    def check(c):
        band = np.exp(-((np.log10(c["x"]) - 1.5) / 0.05) ** 2)
        return band * c["y"], np.full_like(c["y"], 0.999)
    report = audit_claim(synthetic("thin", check), samples=100, iterations=60)
    assert report.random_violation_fraction == 0
    assert report.verdict == "fails" and report.found_by == "search"
    assert report.violation_ratio == pytest.approx(1 / 0.999, rel=1e-6)


def test_parts_strict_and_log_claims():
    parts = audit_claim(synthetic("parts", lambda c: (np.stack([c["y"], 3 * c["y"]], -1), 2.0),
                                  parts=("one", "three")), samples=100, iterations=0)
    assert parts.failing_parts == ["three"] and parts.part_ratios["one"] == pytest.approx(0.5)
    assert parts.worst_part == "three" and parts.violation_ratio == pytest.approx(1.5)
    strict = audit_claim(synthetic("strict", lambda c: (np.ones_like(c["y"]), 1.0), strict=True),
                         samples=10, iterations=0)
    assert strict.verdict == "fails" and strict.violation_ratio == 1.0       # 1 < 1 is false
    assert audit_claim(synthetic("eq", lambda c: (np.ones_like(c["y"]), 1.0)), samples=10,
                       iterations=0).verdict == "holds"                     # 1 <= 1
    logs = audit_claim(synthetic("logs", lambda c: (1000 * c["y"], 1.0), log=True), samples=100, iterations=0)
    assert logs.verdict == "fails" and logs.log10_ratio == pytest.approx(999 / math.log(10))
    assert math.isinf(logs.violation_ratio) and "10^" in format_table([logs])


def test_rhs_nonpositive_means_infinite_violation():
    r = audit_claim(synthetic("neg", lambda c: (c["y"] + 1, -c["x"])), samples=50, iterations=0)
    assert r.verdict == "fails" and math.isinf(r.violation_ratio)
    data = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert data["violation_ratio"] is None and "violation_ratio" in data["infinite"]


def test_invalid_points_are_counted_not_ranked():
    r = audit_claim(synthetic("nan", lambda c: (np.where(c["y"] > 0.5, np.nan, c["y"]), 1.0)), samples=200,
                    iterations=0)
    assert r.verdict == "holds" and 0 < r.n_invalid < 200 + 8


def test_deterministic_for_a_fixed_seed():
    claims = ["lemma3", "thm2.84"]
    a = [r.to_dict() for r in run_audit("sdgt", samples=300, seed=7, iterations=5, only=claims)]
    b = [r.to_dict() for r in run_audit("sdgt", samples=300, seed=7, iterations=5, only=claims)]
    for x in a + b:
        x.pop("seconds")
    assert a == b
    c = [r.to_dict() for r in run_audit("sdgt", samples=300, seed=8, iterations=5, only=claims)]
    assert [x["random_violation_fraction"] for x in a] != [x["random_violation_fraction"] for x in c]


def test_sign_parts_and_compile_expr():
    import fedbound.theory.sdgt.common  # noqa: F401  (declares SD-GT's K and p)
    L, K, p = (S.constant(n, "sdgt").symbol for n in ("L", "K", "p"))
    pos, neg = sign_parts((1 - p) * L - 3 * K / p)
    assert sp.simplify(pos - L) == 0 and sp.simplify(neg - (p * L + 3 * K / p)) == 0
    x = sp.Symbol("x", real=True)
    with pytest.raises(ValueError):
        sign_parts(x - 1)
    f = compile_expr(sp.Matrix([[L, 0], [K * p, 1]]))
    out = f({"L": np.array([1.0, 2.0]), "K": 3.0, "p": 0.5})
    assert out.shape == (2, 2, 2) and out[1, 0, 0] == 2.0 and out[0, 1, 0] == 1.5 and out[1, 1, 1] == 1.0


def test_unknown_paper():
    with pytest.raises(UnknownNameError):
        claims_of("nope")


def test_every_sdgt_claim_is_tied_to_a_result_and_variant():
    from fedbound.theory import get
    claims = claims_of("sdgt")
    assert len({(c.id, c.variant) for c in claims}) == len(claims) >= 25
    for c in claims:
        assert c.variant in get(c.result_id).variants and c.statement


# -- SD-GT claims whose counterexamples are re-checked from the notes' formulas -------------------

@pytest.fixture(scope="module")
def sdgt_reports():
    only = ["lemma", "thm1", "cor1", "thm2", "cor2", "cor3.exp"]
    return {(r.claim, r.variant): r for r in run_audit("sdgt", samples=500, seed=0, iterations=10, only=only)}


def test_F13_rederived_D1_negative(sdgt_reports):
    """papers/sdgt.md 4.4 [DERIVED]: D1 = (c0/2 - 12 c1/p^2 - 24 L^2 c2) K^3 gamma^3 with (74) is
    negative for p below about 0.75 q; the printed D1 is not."""
    assert sdgt_reports[("thm1.D_signs", "printed")].verdict == "holds"
    report = sdgt_reports[("thm1.D_signs", "rederived")]
    assert report.verdict == "fails" and {"D1", "D2"} <= set(report.failing_parts)
    c = report.worst
    c0, c1 = 192 * c["L"] ** 2 * c["c2"] / (c["p"] * c["q"]), 6 * c["L"] ** 2 * c["c2"]
    assert c0 / 2 - 12 * c1 / c["p"] ** 2 - 24 * c["L"] ** 2 * c["c2"] < 0
    assert c["p"] < 0.75 * c["q"]
    assert c["gamma"] <= c["p"] ** 2 * c["q"] / (945 * c["K"] * c["L"]) * (1 + 1e-12)


def test_F36_alpha_K(sdgt_reports):
    report = sdgt_reports[("lemma3.alpha_K", "printed")]
    assert report.verdict == "fails"
    c = report.worst
    alpha = 1 + 1 / (c["K"] - 1) + 4 * c["K"] * c["gamma"] ** 2 * c["L"] ** 2
    assert alpha ** c["K"] > 3 and c["gamma"] <= 1 / (8 * c["K"] * c["L"]) * (1 + 1e-12)
    assert sdgt_reports[("lemma3.alpha_K_minus_1", "printed")].verdict == "holds"
    assert sdgt_reports[("lemma2.coefficient", "printed")].verdict == "holds"


def test_F16_84_from_83(sdgt_reports):
    report = sdgt_reports[("thm2.84_from_83", "printed")]
    assert report.verdict == "fails" and set(report.failing_parts) == {"84a", "84c"}
    assert report.part_ratios["84a"] == pytest.approx(7524 / 173 ** 2 * 4, rel=1e-6)   # (b): 173 vs 173.5
    c = report.worst
    pp = min(c["p"], c["q"])
    g, K, L = c["gamma"], c["K"], c["L"]
    assert 108 * g ** 2 * K ** 2 * L / pp ** 3 > 120 * L / pp * g ** 2 * K ** 2        # (d): 108/p'^3 term


def test_F17_cor2_step_violates_83(sdgt_reports):
    report = sdgt_reports[("cor2.step_within_caps", "printed")]
    assert report.verdict == "fails" and "thm2 (83a)" in report.failing_parts
    assert report.part_ratios["thm2 (83a)"] == pytest.approx(173 / 101, rel=1e-6)
    assert sdgt_reports[("cor1.step_within_caps", "printed")].verdict == "holds"


def test_F22_printed_exponent(sdgt_reports):
    report = sdgt_reports[("cor3.exp_rate", "printed")]
    assert report.verdict == "fails"
    c = report.worst
    x = c["mu"] * c["K"] * c["gamma"]
    assert c["T"] * math.log1p(-x / 4) > -x * c["T"] / 2
    assert sdgt_reports[("cor3.exp_rate", "rederived")].verdict == "holds"


def test_evidence_is_described_in_a_few_words():
    """The text, HTML and referee tables say what backs a verdict; an exact ratio too long to
    print, or infinite, is said as such (it printed 'exact ratio None')."""
    from fedbound.theory.audit_report import describe_evidence

    r = audit_claim(synthetic("neg", lambda c: (c["y"] + 1, -c["x"])), samples=50, iterations=0)
    long = {"counterexample": {"ratio": {"decimal": "16645.3903478288372545", "float": 16645.39}}}
    assert describe_evidence(replace(r, evidence="refuted", certificate=long)) == "refuted: exact ratio 16645.39034782"
    infinite = {"counterexample": {"ratio": {"exact": "oo", "decimal": None, "float": None}}}
    assert "infinite" in describe_evidence(replace(r, evidence="refuted", certificate=infinite))
    assert describe_evidence(replace(r, evidence="refuted", certificate={"counterexample": {"ratio": {
        "exact": "2", "decimal": "2.0", "float": 2.0}}})) == "refuted: exact ratio 2"
