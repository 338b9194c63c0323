"""Verdict logic of fedbound.verify.check: holds / violated / inconclusive."""
import html
import json

import numpy as np
import pytest

from fedbound.verify import (Check, bound_check, equality_check, interval_check, mean_ci,
                             upper_bound_status)


def test_deterministic_bound():
    assert upper_bound_status(np.array([1.0, 2.0]), np.array([1.0, 3.0])) == "holds"
    assert upper_bound_status(np.array([1.0, 3.5]), np.array([1.0, 3.0])) == "violated"


def test_monte_carlo_bound_uses_the_interval():
    est = mean_ci(np.array([0.9, 1.1, 1.0, 0.95, 1.05]))        # mean 1, interval ~ +-0.1
    assert upper_bound_status(est, 1.5) == "holds"
    assert upper_bound_status(est, 1.02) == "inconclusive"
    assert upper_bound_status(est, 0.5) == "violated"
    # a prediction with its own half-width widens the undecided zone
    assert upper_bound_status(est, 1.2, predicted_halfwidth=0.15) == "inconclusive"


def test_bound_check_reports_the_worst_round_and_is_json_ready():
    check = bound_check("demo", np.array([1.0, 2.0, 0.5]), np.array([2.0, 2.5, 4.0]),
                        variant="printed", extra=np.arange(3))
    assert check.holds and check.measured == 2.0 and check.predicted == 2.5
    assert check.ratio == pytest.approx(0.8)
    text = json.dumps(check.to_dict())
    assert '"variant": "printed"' in text and "holds" in check.summary()


def test_equality_and_interval_checks():
    assert equality_check("eq", 0.5, 0.5 + 1e-8, tol=1e-6).holds
    assert equality_check("eq", 0.5, 0.51, tol=1e-6).violated
    assert equality_check("eq", 0.5, 0.51, tol=1e-6, measurement_error=0.01).status == "inconclusive"
    est = mean_ci(np.array([1.0, 1.2, 0.8, 1.1, 0.9]))
    assert interval_check("mc", est, 1.0).holds and interval_check("mc", est, 2.0).violated


def test_status_is_validated():
    with pytest.raises(ValueError):
        Check("x", "maybe", 1.0, 1.0, 1.0)


def test_summary_says_the_size_of_a_ratio_and_few_seeds():
    """A bound far above the measurement says by how much (powers of ten), a measurement above the
    bound by what factor; an interval over few seeds says so; 1 - x keeps its digits."""
    import numpy as np

    from fedbound.stats import mean_ci
    from fedbound.verify.check import bound_check

    est = mean_ci(np.array([[1.0], [1.2], [0.9]]), nonnegative=True)
    loose = bound_check("t", est[0], 2.0e15)
    assert "the bound is a factor of 10^15 above the measurement" in loose.summary()
    assert loose.summary().endswith("-> holds [3 seeds: few]")
    over = bound_check("t", 2.5, 1.0)
    assert "measured a factor of 2.5 above the bound" in over.summary() and "few" not in over.summary()
    near = bound_check("t", 0.99999995, 1.0)
    assert "measured 1 - 5.0e-08 <= predicted 1" in near.summary()


@pytest.mark.parametrize("conditions, words", [
    (["gamma <= gamma_bar (main)"], "gamma <= gamma_bar (main) fails"),
    (["A4 (convex f) with known x*, f*: --task mlp-gmm is non-convex"],
     "A4 (convex f) with known x*, f* fails: --task mlp-gmm is non-convex"),
    (["A3 with finite kappa^2 (inf at beta^2 = 2: need more)"],      # a colon inside brackets
     "A3 with finite kappa^2 (inf at beta^2 = 2: need more) fails"),
    (["FedAda2's results need G (A2); the task does not know it"],  # a sentence: as it is
     "FedAda2's results need G (A2); the task does not know it"),
    (["L <= 1", "mu > 0: mu = 0 here"], "L <= 1 fails; mu > 0 fails: mu = 0 here"),
    ([], "its conditions fail"),
])
def test_not_applicable_says_which_condition_fails_in_a_sentence(conditions, words):
    from fedbound.verify.check import not_applicable
    check = not_applicable("thm", conditions, variant="main")
    assert check.summary() == f"thm [main]: not applicable: {words}"
    assert words in html.unescape(check._repr_html_())
