"""SD-GT's audit as a referee reads it (issue 22; seed 003, papers/sdgt.md): every instance a claim's
sampler draws, and every counterexample the audit reports, is realizable: p comes from a subnet of
m_p <= n clients sampling 1 <= h_p <= m_p of them (p = 1 - (1 - h_p/m_p)^2, [L158-L160], [L242]),
q = 1 for a single client, T > K where Theorems 1-2 assume it, mu <= L; and the verdicts carry the
severity their planted cause implies (typo, condition, rate) with fitted exponents."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fedbound.theory import get
from fedbound.theory.audit import claims_of, run_audit
from fedbound.theory.sdgt.common import p_from_h

CLAIMS = claims_of("sdgt")
#: rounding allowance of the equality p = 1 - (1 - h_p/m_p)^2
RTOL = 1e-12


def broken_relations(c: dict) -> list[str]:
    """The relations SD-GT's definitions imply that the constants ``c`` (scalars or arrays) break,
    typed here from the paper, independently of the results' declarations."""
    bad = []

    def need(name, ok):
        if not np.all(ok):
            bad.append(name)

    if "p" in c:
        p = np.asarray(c["p"], dtype=float)
        need("0 < p <= 1", (p > 0) & (p <= 1))
        if "m_p" in c:
            m, h = np.asarray(c["m_p"], dtype=float), np.asarray(c["h_p"], dtype=float)
            need("1 <= h_p <= m_p integers", (h >= 1) & (h <= m) & (h == np.round(h)) & (m == np.round(m)))
            need("p = 1 - (1 - h_p/m_p)^2", np.abs(p - p_from_h(h, m)) <= RTOL * p)
            for top in ("n", "m_max"):
                if top in c:
                    need(f"m_p <= {top}", m <= np.asarray(c[top]))
        if "n" in c:
            n = np.asarray(c["n"], dtype=float)
            need("p >= (2n - 1)/n^2", p >= (2 * n - 1) / n ** 2 * (1 - RTOL))
    if "q" in c:
        q = np.asarray(c["q"], dtype=float)
        need("0 < q <= 1", (q > 0) & (q <= 1))
        if "n" in c:
            need("q = 1 when n = 1", (np.asarray(c["n"]) > 1) | (q == 1))
    if "mu" in c:
        need("mu <= L", np.asarray(c["mu"]) <= np.asarray(c["L"]))
    if "T" in c and "K" in c and c_result(c) in ("sdgt.cor1", "sdgt.cor2"):
        need("T > K", np.asarray(c["T"]) > np.asarray(c["K"]))
    return bad


def c_result(c: dict) -> str:
    return c.get("_result", "")


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32 - 1))
@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: f"{c.id}[{c.variant}]")
def test_every_sampled_instance_is_admissible(claim, seed):
    """2000 instances per example (4000 per claim), plus the corners of the unit cube."""
    rng = np.random.default_rng(seed)
    z = np.vstack([rng.random((2000, claim.sampler.dim)), np.zeros(claim.sampler.dim),
                   np.ones(claim.sampler.dim)])
    c = claim.sampler.constants(z)
    c["_result"] = claim.result_id
    assert broken_relations(c) == []
    scalars = {k: v for k, v in c.items() if k != "_result" and np.ndim(v) <= 1}
    ok, broken = get(claim.result_id).admissible(scalars)
    assert np.all(ok), broken


def test_the_audit_of_sdgt():
    """One audit run (small scale) for the three checks below."""
    reports = {(r.claim, r.variant): r for r in run_audit("sdgt", samples=300, seed=3, iterations=3)}
    every_reported_point_is_realizable(reports)
    severities(reports)
    order_claims_fitted_by_scaling(reports)


def every_reported_point_is_realizable(reports):
    """The counterexample (or closest point) of every claim satisfies the relations; no audited
    point was refused as inadmissible."""
    results = {(c.id, c.variant): c.result_id for c in CLAIMS}
    for key, report in reports.items():
        point = {**report.worst, "_result": results[key]}
        assert broken_relations(point) == [], key
        scalars = {k: v for k, v in report.worst.items()}
        ok, broken = get(report.result_id).admissible(scalars)
        assert np.all(ok), (key, broken)
        assert report.n_inadmissible == 0, key


def test_every_claim_declares_what_it_is():
    for c in CLAIMS:
        assert c.kind in ("printed", "consistency") and c.tests in ("bound", "condition")
        assert (c.kind == "consistency") == bool(c.conditions), (c.id, c.variant)
        if c.tests == "condition":
            assert c.scaling == (), c.id
            assert c.regime is not None or "gamma/cap" not in c.sampler.names(), c.id


def severities(reports):
    """Planted in the paper: swapped bounds (F29) and alpha^K for alpha^(K-1) (F36) are typos; the
    missing 1/4 of gamma_bar's first entry (F18) a typo too; the re-derived D1 < 0 for p < 0.75 q
    (F13) a condition; exp(-mu K gamma T/2) (F22) a wrong rate."""
    assert reports[("thm5.contains_root", "printed")].severity == "typo"
    assert reports[("thm5.contains_root", "corrected")].severity == "holds"
    assert reports[("lemma3.alpha_K", "printed")].severity == "typo"
    for v in ("main", "appendix", "rederived"):
        assert reports[("thm3.A_l1", v)].severity == "typo"
        report = reports[(f"thm3.A_l1_quarter_cap_{v}", v)]
        assert report.verdict == "holds" and report.kind == "consistency" and report.conditions
    d_signs = reports[("thm1.D_signs", "rederived")]
    assert d_signs.severity == "condition" and d_signs.interior_ratio > 1
    assert d_signs.worst["p"] < 0.75 * d_signs.worst["q"]
    assert reports[("cor2.step_within_caps", "printed")].severity == "condition"
    assert reports[("thm2.84_from_83", "printed")].severity == "typo"       # F16: the caps suffice
    assert reports[("cor3.exp_rate", "printed")].severity == "rate"


def order_claims_fitted_by_scaling(reports):
    """Corollary 3's linear rate per unit of mu K gamma T is exp(-1/4), not (103)'s exp(-1/2); the
    floor is O(gamma), not O(gamma^5); Corollaries 1-2 are O(T^-1/2)."""
    rate = reports[("cor3.linear_rate", "printed")]
    assert rate.severity == "rate"
    assert rate.scaling["fitted"] == pytest.approx(math.exp(-0.25), rel=0.02)
    assert reports[("cor3.linear_rate", "rederived")].verdict == "holds"
    floor = reports[("cor3.floor_order", "printed")]
    assert floor.severity == "rate" and floor.scaling["fitted"] == pytest.approx(-1.0, abs=0.05)
    for cor in ("cor1.order", "cor2.order"):
        for v in ("printed", "rederived"):
            r = reports[(cor, v)]
            assert r.verdict == "holds" and r.scaling["interval"][0] <= -0.5 + 0.02, (cor, v)
            assert r.scaling["grid"][-1] / r.scaling["grid"][0] >= 100      # two decades at least
    for v in ("printed", "rederived"):
        assert reports[("cor3.order", v)].scaling["fitted"] > -1
