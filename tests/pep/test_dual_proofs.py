"""Exact dual certificates of a PEP (issue 32, item 5): fedbound.pep.exact and fedbound.pep.dual."""
import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound.pep.audit import at_cap, claims, exact_proofs, paper_options, traced_floats
from fedbound.pep.certificate import method, worst_case
from fedbound.pep.dual import NotProved, exact_pep, is_psd, prove
from fedbound.pep.exact import Exact, Inexact, rational
from fedbound.pep.numeric import QuadraticEnv
from fedbound.theory.audit import audit_claim
from fedbound.theory.certify import trace

SDGT = dict(subnets=2, per_subnet=2, local_steps=1, rounds=1, L=1.0, mu=0.1, zeta=1.0, lam=0.5)
small = st.fractions(min_value=-8, max_value=8, max_denominator=64)


@given(small, small, st.sampled_from(["+", "-", "*", "/"]))
def test_exact_arithmetic_is_the_rationals(a, b, op):
    if op == "/" and b == 0:
        return
    ops = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y, "/": lambda x, y: x / y}
    got = ops[op](Exact(a), Exact(b))
    assert isinstance(got, Exact) and got.q == ops[op](a, b)
    assert float(got) == float(ops[op](a, b))
    mixed = ops[op](Exact(a), float(b)) if Fraction(float(b)) == b else None   # a short plain float is exact
    assert mixed is None or mixed.q == ops[op](a, b)


def test_a_long_plain_float_is_refused_as_possibly_rounded():
    third = Exact(Fraction(1, 3))
    assert (third * 3).q == 1                       # exact: 1/3 * 3 = 1, where floats give 1.0 by luck
    with pytest.raises(Inexact, match="rounded"):
        third * (1.0 / 3)                           # 1.0/3 was rounded before it met an Exact
    with pytest.raises(Inexact):
        rational(0.1 + 0.2)
    assert rational(0.5) == Fraction(1, 2) and rational(3) == 3
    assert isinstance(np.float64(0.25) * Exact(Fraction(1, 3)), float)   # numpy first: a plain float ...
    with pytest.raises(Inexact):
        rational(np.float64(0.25) * Exact(Fraction(1, 3)))             # ... that the data check refuses


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(0, 2**31 - 1), st.booleans())
def test_is_psd_agrees_with_the_eigenvalues(n, seed, indefinite):
    """B^T B (rank <= n - 1 half of the time: singular PSD) is PSD; subtracting a multiple of a unit
    vector's square below its quadratic form makes it indefinite."""
    rng = np.random.default_rng(seed)
    rows = n - 1 if seed % 2 and n > 1 else n
    B = [[Fraction(int(v), 4) for v in rng.integers(-4, 5, n)] for _ in range(rows)]
    S = [[sum(B[k][i] * B[k][j] for k in range(rows)) for j in range(n)] for i in range(n)]
    if indefinite:
        i = int(rng.integers(n))
        S[i][i] -= S[i][i] + 1            # e_i^T S e_i = -1 < 0
    eig = np.linalg.eigvalsh(np.array(S, dtype=float))
    assert is_psd(S) == (not indefinite)
    assert (eig.min() >= -1e-9) == (not indefinite)


def test_sdgt_at_the_exact_cap_is_proved_with_an_upper_bound_above_the_worst_case():
    m = method("sdgt")
    gamma = at_cap("sdgt.thm3", "main", L=1.0, mu=0.1, K=1, p=1.0, q=0.75)
    cfg = m.config(**SDGT, lr=gamma)
    th = trace.exactly(lambda: m.theory(traced_floats(cfg)))
    assert th.applies                                                  # admissible in exact arithmetic
    bound = trace.to_sympy(th.value)
    assert bound == (1 - sp.Rational(0.1) * sp.Rational(gamma) / 4)   # (1 - mu K gamma/4)^T, exactly
    proof = prove(m, cfg, Fraction(int(bound.p), int(bound.q)))
    worst = worst_case("sdgt", cfg)[0].value
    assert worst <= float(proof.upper) * (1 + 1e-7) and proof.upper <= Fraction(int(bound.p), int(bound.q))
    assert proof.multipliers <= proof.constraints and proof.face < proof.gram   # the translation kernel


def test_the_upper_bound_holds_on_instances_of_the_class():
    """A proved upper bound is above the metric of explicit quadratic instances of the class (a
    necessary check of the proof, independent of the SDP)."""
    m = method("sdgt")
    cfg = m.config(**SDGT, lr=1e-3)
    proof = prove(m, cfg, Fraction(1))
    rng = np.random.default_rng(0)
    for _ in range(10):
        h = rng.uniform(0.1, 1.0, size=(4, 3))               # f_i in the class: h in [mu, L]
        g = rng.normal(size=(4, 50, 3))
        g -= g.mean(axis=0)                                  # x* = 0 minimizes the mean
        env = QuadraticEnv(h, g, rng.normal(size=(50, 3)))
        m.build(env, cfg)
        metric = env.scaled_metric()                         # the conditions (||x0||^2 <= 1, zeta) met
        assert np.all(np.isfinite(metric)) and metric.max() > 0.5
        assert metric.max() <= float(proof.upper) * (1 + 1e-9)


def test_a_bound_below_the_worst_case_is_not_proved_and_one_just_above_is():
    m = method("sdgt")
    cfg = m.config(**SDGT, lr=1e-3)
    worst = worst_case("sdgt", cfg)[0].value
    with pytest.raises(NotProved, match="not below the bound"):
        prove(m, cfg, Fraction(worst) * (1 - Fraction(1, 10**6)))
    assert prove(m, cfg, Fraction(worst) * (1 + Fraction(1, 10**4))).upper <= Fraction(worst) * (1 + Fraction(1, 10**4))


def test_a_pep_with_a_rounded_coefficient_is_not_proved():
    m = method("fedavg")
    cfg = m.config(n=3, local_steps=1, rounds=1, lr=0.5, L=1.0, mu=0.1, zeta=0.3)   # the mean: 1.0/3
    with pytest.raises(NotProved, match="not exact"):
        exact_pep(m, cfg)


def test_the_pep_claims_are_proved_at_every_setting():
    for claim in claims():
        report = audit_claim(claim)
        assert report.evidence == "proved", report.certificate
        settings_ = report.certificate["settings"]
        assert len(settings_) == report.n_evaluated == len(claim.points())
        for s, ratio in zip(settings_, report.certificate["numeric"]["worst_over_bound"]):
            upper = Fraction(s["upper"]["exact"])
            bound = sp.sympify(s["bound"]["exact"])
            assert sp.Rational(upper.numerator, upper.denominator) <= bound
            assert ratio <= s["upper_over_bound"] * (1 + 1e-6) and s["upper_over_bound"] <= 1


def test_a_step_at_the_cap_is_the_last_float_below_the_exact_cap():
    from fedbound.theory.registry import get

    constants = dict(L=1.0, mu=0.1, K=2, p=1.0, q=0.75)
    x = at_cap("sdgt.thm3", "main", **constants)
    exact = trace.exactly(lambda: get("sdgt.thm3").max_step(
        variant="main", **traced_floats(constants))[0])
    cap = trace.to_sympy(np.asarray(exact, dtype=object).item())
    assert sp.Rational(x) <= cap < sp.Rational(math.nextafter(x, math.inf))


def test_exact_proofs_say_why_where_the_theorem_does_not_apply():
    m = method("sdgt")
    cfg = m.config(**SDGT, lr=float(at_cap("sdgt.thm3", "main", L=1.0, mu=0.1, K=1, p=1.0, q=0.75)) * 1.5)
    with pytest.raises(NotProved, match="does not apply"):
        exact_proofs(m, [cfg])
    assert paper_options(m, {"gamma": 0.1})["lr"] == 0.1


@pytest.mark.parametrize("args", [("sdgt", {}, float("nan")), ("sdgt", {}, "1"), ("sdgt", [], 1.0), (3, {}, 1.0),
                                  ("sdgtt", {}, 1.0), ("sdgt", {"lr": -1.0}, 1.0)])
def test_bad_input_to_prove_is_a_clear_error(args):
    from fedbound.errors import FedboundError

    with pytest.raises(FedboundError) as info:
        prove(*args)
    assert "\n" not in str(info.value)
