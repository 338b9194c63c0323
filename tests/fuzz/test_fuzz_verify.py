"""Fuzz of fedbound.verify and fedbound.testing (issue 8): bad settings and seeds are FedboundErrors;
every assertion of fedbound.testing FAILS (never passes) on NaN, infinite or empty data."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedbound import testing as T
from fedbound import verify as V
from fuzz_values import bad_values, is_always_invalid, outcome


def _length(v) -> int:
    """len(v) for the x axis of a fit, whatever junk v is (the fit itself must reject the junk)."""
    try:
        return int(np.asarray(v, dtype=object).size) if not isinstance(v, (list, tuple)) else len(v)
    except (ValueError, TypeError):
        return 1


EXAMPLES = 8


@pytest.fixture(scope="module")
def small():
    from fedbound.network import Network
    from fedbound.tasks import Quadratic
    return Quadratic.generate(4, 2, kappa=4.0, mu=0.5, seed=0), Network.from_topology("ring", 2, 2)


@pytest.mark.parametrize("field", ["task", "network", "K", "gamma", "h", "sigma"])
@settings(max_examples=EXAMPLES)
@given(value=bad_values())
def test_sdgt_setting(small, field, value):
    task, net = small
    kwargs = {"task": task, "network": net, "K": 2, "gamma": 0.05, "h": 1, "sigma": 0.0, field: value}
    kind, setting = outcome("verify", V.SDGTSetting, invalid=is_always_invalid(value), **kwargs)
    if kind == "ok":
        outcome("verify", setting.constants)


@settings(max_examples=EXAMPLES * 3)
@given(seeds=bad_values())
def test_monte_carlo_seeds(seeds):
    outcome("verify", V.monte_carlo, lambda s: np.array([s, 1.0]), seeds,
            invalid=is_always_invalid(seeds) or (isinstance(seeds, int) and seeds <= 0))


@pytest.mark.parametrize("param", ["rounds", "seed", "tol"])
@settings(max_examples=EXAMPLES)
@given(value=bad_values())
def test_fixed_point_arguments(small, param, value):
    task, net = small
    setting = V.SDGTSetting(task, net, K=2, gamma=0.05, h=1)
    kwargs = {"rounds": 3, param: value}
    outcome("verify", V.fixed_point, setting, invalid=is_always_invalid(value), **kwargs)


@pytest.mark.parametrize("fn", [V.mean_ci, lambda v: V.fit_log_linear(np.arange(_length(v)), v),
                                lambda v: V.fit_slope(np.arange(_length(v)), v),
                                V.asymptotic_factor], ids=["mean_ci", "fit_log_linear", "fit_slope",
                                                           "asymptotic_factor"])
@settings(max_examples=EXAMPLES * 2)
@given(values=st.one_of(bad_values(), st.lists(st.floats(allow_nan=True), min_size=0, max_size=6)))
def test_estimators(fn, values):
    outcome("verify", fn, values)


NONFINITE = [math.nan, math.inf, -math.inf]


def _poison(data, where: int, bad: float):
    data = np.array(data, dtype=float)
    data.flat[where % data.size] = bad
    return data


@settings(max_examples=EXAMPLES * 3)
@given(bad=st.sampled_from(NONFINITE), where=st.integers(0, 59))
def test_assertions_fail_on_nonfinite_data(bad, where):
    """Each assertion holds on the clean data and must fail once one entry is NaN or infinite."""
    t = np.arange(60)
    errors = 2.0 * 0.8 ** t
    poisoned = _poison(errors, where, bad)
    cases = [
        (T.assert_linear_rate, (errors,), (poisoned,), {"at_most": 0.81}),
        (T.assert_power_rate, (2.0 / (t + 1.0),), (_poison(2.0 / (t + 1.0), where, bad),), {}),
        (T.assert_bound_held, (errors, 2.0 * 0.85 ** t), (poisoned, 2.0 * 0.85 ** t), {}),
        (T.assert_fixed_point_reached, (np.ones(3), np.ones(3)), (_poison(np.ones(3), where, bad), np.ones(3)), {}),
        (T.assert_fixed_point_reached, (np.ones(3), np.ones(3)), (np.ones(3), _poison(np.ones(3), where, bad)), {}),
        (T.assert_invariant_held, (lambda s: s, [0.0, 0.0]), (lambda s: s, [0.0, bad]), {}),
        (T.assert_invariant_held, (lambda s: s, [0.0]), (lambda s: s, [0.0], bad), {}),
    ]
    for fn, clean, dirty, kw in cases:
        fn(*clean, **kw)                                  # holds on clean data
        with pytest.raises(AssertionError):
            outcome("testing", fn, *dirty, **kw)


@pytest.mark.parametrize("fn,args", [
    (T.assert_linear_rate, ([],)), (T.assert_power_rate, ([],)), (T.assert_bound_held, ([], [])),
    (T.assert_fixed_point_reached, ([], [])), (T.assert_invariant_held, (lambda s: s, [])),
    (T.assert_bound_held, (np.zeros((0, 3)), 1.0))], ids=lambda v: getattr(v, "__name__", ""))
def test_assertions_fail_on_empty_input(fn, args):
    with pytest.raises(AssertionError):
        outcome("testing", fn, *args)


@pytest.mark.parametrize("fn,args,param", [
    (T.assert_linear_rate, (2.0 * 0.8 ** np.arange(30),), p) for p in
    ("at_most", "equals", "tol", "confidence", "min_r2", "floor", "rtol", "exact_rtol")] + [
    (T.assert_power_rate, (1.0 / np.arange(1.0, 31.0),), p) for p in
    ("at_most", "equals", "rounds", "atol", "confidence", "min_r2", "exact_rtol")] + [
    (T.assert_bound_held, (np.ones(3), np.ones(3) * 2), "rtol"),
    (T.assert_bound_held, (np.ones(3), np.ones(3) * 2), "atol"),
    (T.assert_fixed_point_reached, (np.ones(3), np.ones(3)), "tol"),
    (T.assert_invariant_held, (lambda s: s, [0.0]), "atol")])
@settings(max_examples=EXAMPLES)
@given(value=bad_values())
def test_assertion_parameters(fn, args, param, value):
    """A bad tolerance never makes an assertion pass silently: it raises (FedboundError, or
    AssertionError when the value is a legal but failing threshold)."""
    try:
        kind, _ = outcome("testing", fn, *args, **{param: value})
    except AssertionError:
        return
    assert kind == "error" or not is_always_invalid(value), f"{fn.__name__} passed with {param}={value!r}"
