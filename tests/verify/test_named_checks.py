"""Named checks: fixed point, server recursion (fedbound.verify.checks)."""
from dataclasses import replace

from fedbound.verify import fixed_point, server_recursion


def test_fixed_point_with_partial_sampling(setting):
    (check,) = fixed_point(setting, rounds=500)
    assert check.holds, check.summary()
    assert check.details["max_client_distance"] <= check.predicted
    assert check.slope is not None and check.slope.factor < 1


def test_server_recursion_exact_under_full_participation_with_noise(setting):
    (check,) = server_recursion(replace(setting, h=None, sigma=0.5), rounds=10, seeds=2)
    assert check.holds and check.measured <= check.predicted
    assert check.details["mode"].startswith("exact")


def test_server_recursion_in_expectation_under_partial_sampling(setting):
    (check,) = server_recursion(replace(setting, sigma=0.5), rounds=6, seeds=60)
    assert check.details["mode"].startswith("Monte-Carlo")
    assert check.holds, check.summary()
