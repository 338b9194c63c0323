r"""Assertions that compare an algorithm's behaviour with the theory; each raises AssertionError
with the measured numbers, and returns what it measured.

* :func:`assert_fixed_point_reached`: :math:`\|x - x^\star\| \le` tol (exactness of gradient
  tracking: SD-GT reaches x* for any K, sampling and step size, papers/sdgt.md 2.1, 7.4 item 1).
* :func:`assert_invariant_held`: an invariant (e.g. :math:`\sum_{i\in C_s} z_i^t = 0`, seed 003
  (39) [L680]) is zero to ``atol`` in every state.
* :func:`assert_linear_rate`: a sequence converges linearly, with contraction at most / equal to a
  given factor (Theorem 3's :math:`1 - \mu K\gamma/4`, an operator's spectral radius).
* :func:`assert_bound_held`: measured values (a Monte-Carlo :class:`~fedbound.verify.Estimate` or
  an array) stay below a predicted bound; uses the verdict of :mod:`fedbound.verify.check`.

Example (runs as is)::

    import numpy as np
    from fedbound.testing import assert_linear_rate, assert_bound_held

    t = np.arange(60)
    errors = 2.0 * 0.8 ** t
    assert_linear_rate(errors, at_most=0.81)
    assert_bound_held(errors, 2.0 * 0.85 ** t)
"""
from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from fedbound import validate
from fedbound.errors import require
from fedbound.verify.check import bound_check
from fedbound.stats import Estimate
from fedbound.verify.rates import SlopeFit, asymptotic_factor, fit_log_linear


def _data(name: str, x, allow_inf: bool = False) -> np.ndarray:
    """Measured data as a float64 array. Data that cannot support the claim make the assertion
    FAIL (AssertionError), never pass: empty, NaN, or infinite (unless ``allow_inf``). Values that
    are not real numbers at all (strings, complex) are a usage error (a FedboundError)."""
    arr = validate.real_array(name, x, finite=False, allow_bool=True)
    assert arr.size > 0, f"{name} is empty: there is nothing to check"
    bad = np.isnan(arr) if allow_inf else ~np.isfinite(arr)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError(f"{name} has the non-finite value {arr[index]} at index {index}: "
                             "the assertion cannot hold")
    return arr


def assert_fixed_point_reached(x, x_star, tol: float = 1e-10) -> float:
    """Assert ``||x - x_star||_2 <= tol``; ``x`` may be a model (d,), a stacked (n, d) set of
    client models (every row is compared), or a Trajectory (its last global model)."""
    if hasattr(x, "x_g") and hasattr(x, "rounds"):
        x = x.x_g[-1]
    tol = validate.number("tol", tol, low=0.0)
    x, x_star = _data("x", x), _data("x_star", x_star).reshape(-1)
    require(x.size % x_star.size == 0,
            f"x (shape {x.shape}) must hold whole models of x_star's size {x_star.size}")
    rows = x.reshape(-1, x_star.size)
    dist = float(np.max(np.linalg.norm(rows - x_star, axis=1)))
    assert dist <= tol, f"fixed point not reached: ||x - x*|| = {dist:.3e} > tol {tol:.1e}"
    return dist


def assert_invariant_held(invariant: Callable[[object], object], states: Iterable[object],
                          expected=0.0, atol: float = 1e-12) -> float:
    """Assert ``max |invariant(state) - expected| <= atol`` over all ``states`` (at least one);
    returns the max. A NaN or infinite invariant value fails the assertion.

    ``invariant(state)`` returns an array (e.g. the (S, d) subnet sums of z)."""
    require(callable(invariant), f"invariant must be a function of a state, got {type(invariant).__name__}")
    atol = validate.number("atol", atol, low=0.0)
    expected = _data("expected", expected)
    worst, where, count = 0.0, None, 0
    for t, state in enumerate(states):
        value = _data(f"invariant(state {t})", invariant(state))
        dev = float(np.max(np.abs(value - expected)))
        count += 1
        if dev > worst:
            worst, where = dev, t
    assert count > 0, "no states given: the invariant was never checked"
    assert worst <= atol, f"invariant violated: max deviation {worst:.3e} > atol {atol:.1e} " \
                          f"at state {where}"
    return worst


def assert_linear_rate(errors, at_most: float | None = None, equals: float | None = None,
                       tol: float = 1e-6, confidence: float = 0.95, min_r2: float = 0.99,
                       floor: float = 1e-9) -> SlopeFit:
    r"""Assert that ``errors`` (positive, per round) converge linearly.

    Always: the log-linear fit has r^2 >= ``min_r2`` and contraction factor < 1.
    ``at_most``: the upper end of the factor's confidence interval is <= at_most (up to a relative
    1e-10 for rounding). ``equals``: the tail ratio :math:`e_{t+1}/e_t` (measured where
    :math:`e_t \ge` floor x e_0, see :func:`~fedbound.verify.rates.asymptotic_factor`) is within
    ``tol`` of ``equals``. Returns the fit. NaN, infinite, negative or empty errors fail.
    """
    e = _data("errors", errors).ravel()
    assert np.all(e >= 0), f"errors must be >= 0, got {e[e < 0][0]:g}: not a sequence of errors"
    assert e[0] > 0, "the first error is 0: there is no convergence to measure"
    floor = validate.number("floor", floor, low=0.0, high=1.0, low_open=True, high_open=True)
    min_r2 = validate.number("min_r2", min_r2, low=0.0, high=1.0)
    tol = validate.number("tol", tol, low=0.0)
    at_most = None if at_most is None else validate.number("at_most", at_most, low=0.0)
    equals = None if equals is None else validate.number("equals", equals, low=0.0)
    keep = np.flatnonzero(e >= floor * e[0])
    fit = fit_log_linear(keep, e[keep], confidence)
    assert fit.r2 >= min_r2 and fit.factor < 1.0, \
        f"not linear convergence: factor {fit.factor:.6g}, r^2 {fit.r2:.4f} (need < 1 and >= {min_r2})"
    if at_most is not None:
        assert fit.factor_high <= at_most * (1 + 1e-10), \
            f"contraction {fit.factor:.8g} (CI high {fit.factor_high:.8g}) exceeds {at_most:.8g}"
    if equals is not None:
        c, error, t = asymptotic_factor(e, floor)
        assert abs(c - equals) <= tol, \
            f"tail contraction {c:.10g} at round {t} differs from {equals:.10g} by " \
            f"{abs(c - equals):.2e} > tol {tol:.1e} (estimated measurement error {error:.1e})"
    return fit


def assert_bound_held(measured, bound, rtol: float = 1e-10, name: str = "bound"):
    """Assert ``measured <= bound`` (elementwise; an Estimate must hold with its whole confidence
    interval). Returns the :class:`~fedbound.verify.check.Check`. NaN or infinite measurements,
    a NaN bound and empty input fail (an infinite bound holds trivially)."""
    rtol = validate.number("rtol", rtol, low=0.0)
    if isinstance(measured, Estimate):
        for part in ("mean", "low", "high"):
            _data(f"measured {part}", getattr(measured, part))
    else:
        measured = _data("measured", measured)
    _data("bound", bound, allow_inf=True)
    check = bound_check(name, measured, bound, rtol=rtol)
    assert check.holds, f"{check.summary()}"
    return check


__all__ = ["assert_fixed_point_reached", "assert_invariant_held", "assert_linear_rate",
           "assert_bound_held"]
