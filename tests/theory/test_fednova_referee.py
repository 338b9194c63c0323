"""FedNova's audit as a referee reads it (issue 22; fedbound/theory/fednova/audit.py): every instance
the samplers draw, and every counterexample the audit reports, is realizable, i.e. satisfies the
relations that the definitions (93)-(95) [L606-L608] of A, B, C imply (seed 001, (9) [L163]):
the declared ones (B <= C, checked by ``Result.admissible`` with the domains and order relations)
and the implied ones the results leave undeclared (A <= m tau_eff, A >= tau_eff/tau_bar, (100)
C <= a1_max^2 [L627], and their time-averaged forms (146)). Plus the referee's metadata: kinds,
corrected readings, regimes, and the severities of the known errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from fedbound.theory import get
from fedbound.theory.audit import claims_of, run_audit
from fedbound.theory.claim import Claim, compile_expr
from fedbound.theory.fednova.audit import geometric_norms
from fedbound.theory.fednova.thm1 import A_RELATIONS
from fedbound.theory.fednova.thm3 import TILDE_A_RELATIONS
from fedbound.theory.statement import compile_relation

#: relative tolerance of a relation test (the constants are derived in float64)
RTOL = 1e-9
CLAIMS = claims_of("fednova")
IMPLIED = [(r, compile_expr(r.lhs), compile_expr(r.rhs), compile_relation(r).names)
           for r in (*A_RELATIONS, *TILDE_A_RELATIONS)]


def _scalars(constants: dict) -> dict:
    return {k: np.asarray(v, dtype=float) for k, v in constants.items() if np.ndim(v) <= 1}


def assert_realizable(result_id: str, constants: dict) -> None:
    """Every declared relation (``admissible``: domains, order relations, the result's relations)
    and every implied one whose constants are present holds at every instance of ``constants``
    (the implied ones up to RTOL: derived constants meet them with equality, e.g. one-step clients)."""
    values = _scalars(constants)
    ok, broken = get(result_id).admissible(values)
    assert np.all(ok), (result_id, broken)
    for relation, lhs, rhs, names in IMPLIED:
        if names <= set(values):
            left, right = lhs(values), rhs(values)
            good = (left <= right + RTOL * np.abs(right) if relation.relation == "<=" else
                    left >= right - RTOL * np.abs(right))
            assert np.all(good), (result_id, str(relation))
    for c in ("C", "C_tilde"):
        if {c, "a1_max"} <= set(values):
            assert np.all(values[c] <= values["a1_max"] ** 2 * (1 + RTOL)), (result_id, c)


def _instances(claim, z: np.ndarray) -> list[dict]:
    """The constants the audit evaluates at unit-cube points ``z``: a Claim's, or an OrderClaim's
    base instances with its variable at each point of its grid (rounded: the grid is log-spaced
    reals, the integer T or m nearest to it is the realizable instance; no relation involves them)."""
    constants = claim.sampler.constants(z)
    if isinstance(claim, Claim):
        return [constants]
    return [{**constants, claim.variable: np.full(len(z), max(1.0, np.round(t)))} for t in claim.grid()]


@pytest.mark.parametrize("claim", CLAIMS, ids=[f"{c.id}:{c.variant}" for c in CLAIMS])
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_every_sampled_instance_is_realizable(claim, data):
    """Thousands of instances per claim (12 examples x 256 points, corners 0 and 1 included by
    hypothesis' float shrinking): every relation holds on each."""
    z = data.draw(hnp.arrays(np.float64, (256, claim.sampler.dim), elements=st.floats(0.0, 1.0)))
    for constants in _instances(claim, z):
        assert_realizable(claim.result_id, constants)


@pytest.fixture(scope="module")
def reports():
    return run_audit("fednova", samples=400, seed=3, iterations=3)


def test_every_reported_point_is_realizable(reports):
    """The counterexample (or closest point) of every claim, and the worst point inside its regime,
    satisfies every relation; no point the audit evaluated was inadmissible."""
    for r in reports:
        for point in (r.worst, r.interior_worst or {}):
            if point:
                assert_realizable(r.result_id, {k: np.asarray([v]) for k, v in point.items()})
        assert r.n_inadmissible == 0 and r.inadmissible == [], r.claim


def test_referee_metadata(reports):
    """Kinds, corrected readings and severities (papers/fednova.md 4.5, 4.8, 4.10): the factor-2
    slips of Lemma 4 and (139) and the mis-simplified (183) are typos of readings that hold; the
    tau_tilde order of Corollary 3's rate is wrong (severity rate, exponent about +1/2)."""
    by_id = {r.claim: r for r in reports}
    claims = {c.id: c for c in CLAIMS}
    for printed in ("lemma4.kappa2", "lemma4.chi2", "cor2.derivative_139", "cor3_sched.183"):
        corrected = claims[printed].corrected
        assert claims[printed].kind == "printed" and claims[corrected].kind == "consistency"
        assert by_id[printed].severity == "typo" and by_id[corrected].verdict == "holds"
    rate = by_id["cor3_sched.rate_tau_tilde"]
    assert rate.severity == "rate" and rate.scaling["fitted"] == pytest.approx(0.5, abs=0.02)
    for name in ("thm1_sched.rate_T", "thm1_sched.rate_m", "thm3_sched.rate_T", "cor3_sched.rate_T"):
        assert by_id[name].severity == "holds" and by_id[name].scaling["fitted"] <= -0.5 + 0.02
    assert all(r.severity == "holds" for r in reports if r.kind == "consistency")
    for c in CLAIMS:
        if getattr(c, "regime", None) is not None:
            assert by_id[c.id].interior_ratio is not None, c.id


@settings(max_examples=200, deadline=None)
@given(tau=st.integers(1, 1000), r=st.floats(1e-2, 1e2))
def test_geometric_norms_are_those_of_the_vector(tau, r):
    """The closed forms of the sampled clients' a_k = r^k / max(1, r^(tau-1)) equal the vector's."""
    k = np.arange(tau)
    a = np.exp(k * np.log(r) - max(0.0, (tau - 1) * np.log(r)))
    a1, a2, last = geometric_norms(np.float64(tau), np.float64(r))
    np.testing.assert_allclose([a1, a2, last], [a.sum(), (a * a).sum(), a[-1]], rtol=1e-9, atol=1e-300)
