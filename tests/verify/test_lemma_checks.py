"""One-step checks of SD-GT Lemmas 1-6 (fedbound.verify.lemmas)."""
from dataclasses import replace

import numpy as np

from fedbound.verify import (LEMMA_LHS, ErrorQuantities, lemma_check, lemma_step, lemmas,
                             mean_ci)


def test_lemmas_hold_with_monte_carlo(setting):
    """Partial sampling and gradient noise, gamma = half the smallest lemma cap; every variant
    of every lemma holds round by round beyond Monte-Carlo noise."""
    setting = replace(setting, sigma=0.5)
    setting = replace(setting, gamma=lemma_step(setting))
    checks = lemmas(setting, rounds=8, seeds=60)
    assert {c.name for c in checks} == set(LEMMA_LHS)
    assert {(c.name, c.variant) for c in checks} >= {("sdgt.lemma2", "rederived"),
                                                       ("sdgt.lemma4", "rederived")}
    for check in checks:
        assert check.details["conditions_all_hold"], check.name
        assert check.holds, check.summary()
        assert 0 < check.ratio < 1


def _quantities(rounds, **values):
    """Synthetic deterministic quantities (one seed) for rounds 1..rounds+1."""
    def est(v):
        return mean_ci(np.asarray(v, dtype=float)[None])
    zero = np.zeros(rounds + 1)
    fields = {k: est(values.get(k, zero)) for k in ("E", "D", "G", "Gamma", "Y", "Z")}
    return ErrorQuantities(x_bar=np.zeros((rounds + 1, 1)), Delta=est(values.get("Delta", zero[:-1])),
                           **fields)


CONSTANTS = {"L": 1.0, "mu": 0.5, "K": 2, "gamma": 0.01, "sigma": 0.0, "p": 0.5, "q": 0.5, "n": 4}


def test_a_violation_is_reported_with_its_round():
    # Lemma 6 with sigma = 0 and everything else 0 at round t-1: Gamma_t must be 0
    q = _quantities(3, Gamma=[0.0, 0.0, 1.0, 0.0])
    check = lemma_check("sdgt.lemma6", q, CONSTANTS)
    assert check.violated and check.measured == 1.0 and check.predicted == 0.0
    assert list(check.details["rounds"]) == [2, 3, 4]


def test_rhs_is_the_theory_expression_at_measured_values():
    # Lemma 4 (printed): Y_t <= (1 - p/2) Y_{t-1} + 10 L^2/p Delta_{t-1} + 12/p gamma^2 L^2 K^2 G_{t-1}
    q = _quantities(2, Y=[1.0, 0.75, 0.5], Delta=[0.01, 0.02], G=[2.0, 1.0, 0.5])
    check = lemma_check("sdgt.lemma4", q, CONSTANTS, "printed")
    c = CONSTANTS
    rhs = ((1 - c["p"] / 2) * np.array([1.0, 0.75]) + 10 / c["p"] * np.array([0.01, 0.02])
           + 12 / c["p"] * c["gamma"] ** 2 * c["K"] ** 2 * np.array([2.0, 1.0]))
    np.testing.assert_allclose(check.details["predicted"], rhs, rtol=1e-12)
    assert check.holds
