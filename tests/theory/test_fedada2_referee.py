"""FedAda2's audit as a referee reads it (issue 22; fedbound/theory/fedada2/audit.py, seed 004,
papers/fedada2.md): every sampled instance and every reported counterexample is admissible (the
relations the paper's definitions imply, e.g. beta1^2 < beta2 [L1448], v~0 >= tau^2 [L842]), the
client lemmas' counterexamples are full-batch realizable (non-zero gradients), what each claim is
(kind, conditions, corrected reading), Theorem 20's vacuity and rate, and Proposition 9 (iv) by
Monte Carlo."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.theory import get
from fedbound.theory.audit import claims_of, run_audit
from fedbound.theory.fedada2 import audit as A
from fedbound.theory.order_claim import OrderClaim

CLAIMS = claims_of("fedada2")
DRAWS = 1000          # instances per hypothesis example; 3 examples: thousands per claim
#: relations checked directly (not through Result.admissible), as numpy on the constants
DIRECT = {"beta1^2 < beta2": (("beta1", "beta2"), lambda c: c["beta1"] ** 2 < c["beta2"]),
          "vtilde0 >= tau^2": (("vtilde0", "tau"), lambda c: c["vtilde0"] >= c["tau"] ** 2 * (1 - 1e-12))}


def _constants(claim, rng, n):
    c = claim.sampler.constants(rng.random((n, claim.sampler.dim)))
    if isinstance(claim, OrderClaim):      # the order claim overwrites T with the grid, whole rounds
        c = {**c, claim.variable: np.round(rng.choice(claim.grid(), n))}
    return c


def _check_admissible(result_id, c):
    ok, broken = get(result_id).admissible({k: v for k, v in c.items() if np.ndim(v) <= 1})
    assert np.all(ok), (result_id, broken)
    for name, (needs, test) in DIRECT.items():
        if all(k in c for k in needs):
            assert np.all(test(c)), (result_id, name)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: f"{c.id}[{c.variant}]")
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1))
def test_every_sampled_instance_is_admissible(claim, seed):
    rng = np.random.default_rng(seed)
    c = _constants(claim, rng, DRAWS)
    _check_admissible(claim.result_id, c)
    if "update_scale" in c:          # full-batch realizable: no all-zero gradient (audit module doc)
        assert np.all(c["update_scale"] > 0)


@pytest.fixture(scope="module")
def reports():
    return {(r.claim, r.variant): r for r in run_audit("fedada2", samples=300, iterations=2)}


def test_every_reported_point_is_admissible_and_none_was_excluded(reports):
    for (claim_id, _), r in reports.items():
        assert r.n_inadmissible == 0, claim_id
        worst = {k: np.array([v]) for k, v in r.worst.items()}
        _check_admissible(r.result_id, worst)
        if r.verdict == "fails" and "update_scale" in worst:
            assert worst["update_scale"][0] > 0


def test_kinds_conditions_and_corrected_readings(reports):
    by_id = {c.id: c for c in CLAIMS}
    assert len(by_id) == len(CLAIMS)                       # ids are unique: `corrected` names one claim
    for c in CLAIMS:
        if getattr(c, "corrected", ""):
            assert c.corrected in by_id and by_id[c.corrected].kind == "consistency"
    # the verdicts that hold only after the repairs of SM3 say so
    assert set(by_id["lemma15.phi1.proved"].conditions) == {A.MU_CARRY_OVER, A.MU0_IS_V0}
    assert set(by_id["sm3.accumulator.carry_over"].conditions) == {A.MU_CARRY_OVER, A.MU0_IS_V0}
    assert by_id["lemma15.phi1.mu_reset"].conditions == (A.MU0_IS_V0,)
    assert by_id["sm3.accumulator"].conditions == ()        # checked at v0 = 0, Alg. 2's own mu_0
    assert by_id["thm20.vanishes"].kind == "consistency" and by_id["thm20.nonvacuous"].kind == "consistency"
    assert by_id["prop9_iv.series"].kind == "printed" and by_id["thm20.rate"].kind == "printed"
    assert reports[("lemma15.phi1", "printed")].severity == "typo"          # the inner eta_l (notes 8.1)
    assert reports[("prop14.movement", "printed, z = 1")].severity == "typo"
    assert reports[("prop14.movement", "printed, z = 1")].interior_ratio <= 1 + 1e-9   # holds for eta_l <= 1
    assert reports[("sm3.accumulator", "printed")].severity == "typo"


def test_theorem20_is_vacuous_at_typical_constants(reports):
    for key in (("thm20.nonvacuous", "printed"), ("thm20.nonvacuous.rederived", "rederived")):
        r = reports[key]
        assert r.verdict == "fails" and r.severity == "vacuous" and r.tests == "nonvacuous"
        assert r.random_violation_fraction == 1.0
    # even the closest approach is far above the trivial bound min(d G^2, 2 L f_gap)
    c = A.TYPICAL.constants(np.random.default_rng(0).random((2000, A.TYPICAL.dim)))
    ratio = A._bound("fedada2.thm20", "printed")(c) / A.trivial_bound(c)
    assert np.min(ratio) > 1 and np.median(ratio) > 1e10


def test_theorem20_step_condition_and_known_issue():
    thm20 = get("fedada2.thm20")
    assert not thm20.variant("printed").conditions                  # the paper states none [L160]
    (cond,) = thm20.variant("rederived").conditions
    assert cond.variable_name == "eta_l" and "L1075" in cond.source
    assert "step" in [f.id for f in thm20.known_issues]
    T = np.array([100.0])
    point = {"f_gap": 1.0, "eta": 1.0, "L": 2.0, "d": 10.0, "K": 3.0, "z": 1.0, "G": 1.0, "eps": 0.1,
             "eps_s": 1e-3, "tau": 1e-2, "beta1_tilde": 0.0, "v0": 0.0, "vtilde0": 1e-4}
    ev = thm20.evaluate("rederived", **{**point, "T": T, "eta_l": np.array([0.2])})
    assert not all(np.all(v) for v in ev.conditions_hold.values())  # 0.2 > 100^-1/2
    ev = thm20.evaluate("rederived", **{**point, "T": T, "eta_l": np.array([0.1])})
    assert all(np.all(v) for v in ev.conditions_hold.values())


def test_theorem20_rate_exponents(reports):
    printed = reports[("thm20.rate", "printed")].scaling
    rederived = reports[("thm20.rate.rederived", "rederived")]
    assert printed["fitted"] == pytest.approx(-0.5, abs=0.02)
    assert rederived.severity == "rate" and rederived.scaling["fitted"] == pytest.approx(0.0, abs=0.02)
    assert np.log10(printed["grid"][-1] / printed["grid"][0]) >= 2
    assert reports[("cor24.rate", "printed")].scaling["fitted"] == pytest.approx(-0.5, abs=0.02)
    assert reports[("cor24.rate.rederived", "rederived")].severity == "rate"


def test_prop9_iv_is_checked_by_monte_carlo_never_one_realization(reports):
    for key in (("prop9_iv.expectation", "printed"), ("prop9_iv.expectation.proof", "proof")):
        mc = reports[key].monte_carlo
        assert mc["realizations"] >= 1000 and mc["instances"] >= 16
        lo, hi = mc["interval"]
        assert lo <= mc["mean"] <= hi and hi < mc["bound"]
    # the toy is the deterministic bound's: |x_T| <= |x0| + K sum 1/t^2 on every path
    c = {"N": 4, "cohort": 2, "K": 3, "eps": 0.1, "x0": 1.0, "T": 6}
    x2 = A.prop9_toy(c, np.random.default_rng(3), 500)
    assert np.all(np.sqrt(x2) <= 1.0 + 3 * sum(1 / t ** 2 for t in range(1, 7)) + 1e-12)
