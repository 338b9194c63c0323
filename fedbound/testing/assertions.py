r"""Assertions that compare an algorithm's behaviour with the theory; each raises AssertionError
with the measured and the predicted numbers, and returns what it measured. Every tolerance is an
explicit parameter with a documented default:

* :func:`assert_fixed_point_reached`: :math:`\|x - x^\star\| \le` ``tol`` (default 1e-10;
  exactness of gradient tracking: SD-GT reaches x* for any K, sampling and step size,
  papers/sdgt.md 2.1, 7.4 item 1).
* :func:`assert_invariant_held`: an invariant (e.g. :math:`\sum_{i\in C_s} z_i^t = 0`, seed 003
  (39) [L680]) is zero to ``atol`` (default 1e-12) in every state.
* :func:`assert_linear_rate`: :math:`e_t \approx C c^t` with c < 1, at most / equal to a given
  factor (Theorem 3's :math:`1 - \mu K\gamma/4`, an operator's spectral radius): ``rtol`` on
  ``at_most`` (1e-10), ``tol`` on ``equals`` (1e-6), ``min_r2`` of the fit (0.99), ``floor``
  (1e-9 x e_0, below which errors are rounding), ``exact_rtol`` (1e-9: an exact contraction needs
  only two points).
* :func:`assert_power_rate`: :math:`v_T \approx C T^s` with s at most / equal to a given exponent
  (Theorem 1's 1/T): ``atol`` on the exponent (0.05), ``min_r2`` (0.99), ``exact_rtol`` (1e-9).
* :func:`assert_bound_held`: measured values (a Monte-Carlo :class:`~fedbound.stats.Estimate`,
  with its whole interval, or an array) stay below a predicted bound, ``measured <= bound (1 +
  rtol) + atol`` (rtol 1e-10 for the bound's rounding, atol 0 unless the measurement sits at its
  floating-point floor).

:func:`fedbound.testing.assert_matches_theory` runs an algorithm over Monte-Carlo seeds and checks
a theorem's bound and rate with these.

Example (runs as is)::

    import numpy as np
    from fedbound.testing import assert_bound_held, assert_linear_rate, assert_power_rate

    def test_user_claims():
        t = np.arange(60)
        errors = 2.0 * 0.8 ** t
        assert_linear_rate(errors, at_most=0.81)
        assert_linear_rate(errors[:2], equals=0.8, tol=1e-12)      # exact: two points suffice
        assert_bound_held(errors, 2.0 * 0.85 ** t)
        T = np.arange(1.0, 101.0)
        assert_power_rate(3.0 / T + 1e-4 / T ** 2, at_most=-1.0)      # 1/T, up to atol 0.05
        assert_bound_held(1e-33, 0.0, atol=1e-30)                   # a squared distance at its floor
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterable

import numpy as np

from fedbound import validate
from fedbound.algorithms.run import Trajectory
from fedbound.argtypes import Measured, MeasuredVector, Vector
from fedbound.errors import ValidationError, require
from fedbound.stats import Estimate
from fedbound.verify.check import Check, bound_check
from fedbound.verify.rates import SlopeFit, asymptotic_factor, fit_slope


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


def assert_fixed_point_reached(x: Measured | Trajectory, x_star: Measured, tol: float = 1e-10) -> float:
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
                          expected: float | Measured = 0.0, atol: float = 1e-12) -> float:
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


def _rate_fit(x: np.ndarray, logy: np.ndarray, confidence: float, exact_rtol: float,
              kind: str) -> tuple[SlopeFit, bool]:
    """The slope of ``logy`` on ``x`` and whether it is exact: two points, or every segment's
    slope within ``exact_rtol`` of the others (the interval then has zero width, r^2 = 1); else
    the least-squares fit with its Student-t interval (:func:`~fedbound.verify.rates.fit_slope`)."""
    steps = np.diff(logy) / np.diff(x)
    if x.size == 2 or float(np.ptp(steps)) <= exact_rtol:
        slope = float((logy[-1] - logy[0]) / (x[-1] - x[0]))
        return SlopeFit(slope, float(logy[0] - slope * x[0]), 0.0, slope, slope, 1.0, x.size,
                        confidence, kind), True
    return fit_slope(x, logy, confidence, kind), False


def _described(value: float, low: float, high: float, fit: SlopeFit, exact: bool) -> str:
    """``0.8 (exact, 2 points)`` or ``0.8 (95% CI [0.79, 0.81], r^2 0.9990, 60 points)``."""
    if exact:
        return f"{value:.10g} (exact, {fit.points} points)"
    return (f"{value:.10g} ({100 * fit.confidence:g}% CI [{low:.10g}, {high:.10g}], r^2 {fit.r2:.4f}, "
            f"{fit.points} points)")


def _fit_quality(fit: SlopeFit, exact: bool, min_r2: float, what: str, measured: str) -> None:
    assert exact or fit.r2 >= min_r2, \
        f"not {what}: the fit of {measured} has r^2 {fit.r2:.4f} < min_r2 {min_r2:g} (noisier data: " \
        f"lower min_r2)"


def assert_linear_rate(errors: MeasuredVector, at_most: float | None = None, equals: float | None = None,
                       tol: float = 1e-6, confidence: float = 0.95, min_r2: float = 0.99,
                       floor: float = 1e-9, rtol: float = 1e-10, exact_rtol: float = 1e-9) -> SlopeFit:
    r"""Assert that ``errors`` :math:`e_t` (positive, one per round t = 0, 1, ...) converge linearly,
    :math:`e_t \approx C c^t` with c < 1, and compare the measured contraction c with a prediction.

    Only the errors :math:`e_t \ge` ``floor`` x :math:`e_0` are used (at least two), so that the
    floating-point floor of a converged run is left out. An exact contraction is recognized: with
    two points, or when every per-round factor :math:`(e_{t'}/e_t)^{1/(t'-t)}` of consecutive points
    agrees to ``exact_rtol`` (relative), c is that factor with a zero-width interval. Otherwise c is
    :math:`\exp` of the least-squares slope of :math:`\log e_t` with its ``confidence`` interval,
    and the fit must have r^2 >= ``min_r2`` (default 0.99; lower it for noisy Monte-Carlo means).

    Always: c < 1. ``at_most``: the upper end of c's interval is <= at_most (1 + ``rtol``;
    default 1e-10, rounding). ``equals``: the tail ratio :math:`e_{t+1}/e_t` (c itself when exact;
    else at the last t with :math:`e_{t+1} \ge` floor x :math:`e_0`,
    :func:`~fedbound.verify.rates.asymptotic_factor`, at least 4 errors) is within the absolute
    ``tol`` (default 1e-6) of ``equals``. Returns the fit. NaN, infinite, negative or empty errors
    fail; a failure says the measured and the predicted contraction.
    """
    e = _data("errors", errors).ravel()
    assert np.all(e >= 0), f"errors must be >= 0, got {e[e < 0][0]:g}: not a sequence of errors"
    assert e[0] > 0, "the first error is 0: there is no convergence to measure"
    floor = validate.number("floor", floor, low=0.0, high=1.0, low_open=True, high_open=True)
    min_r2 = validate.number("min_r2", min_r2, low=0.0, high=1.0)
    tol = validate.number("tol", tol, low=0.0)
    rtol = validate.number("rtol", rtol, low=0.0)
    exact_rtol = validate.number("exact_rtol", exact_rtol, low=0.0)
    confidence = validate.number("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    at_most = None if at_most is None else validate.number("at_most", at_most, low=0.0)
    equals = None if equals is None else validate.number("equals", equals, low=0.0)
    keep = np.flatnonzero(e >= floor * e[0])
    assert keep.size >= 2, f"only e_0 is at or above floor x e_0 = {floor * e[0]:.3g}: a contraction " \
                           f"needs two errors (lower floor)"
    fit, exact = _rate_fit(keep.astype(float), np.log(e[keep]), confidence, exact_rtol, "log-linear")
    measured = _described(fit.factor, fit.factor_low, fit.factor_high, fit, exact)
    _fit_quality(fit, exact, min_r2, "linear convergence", "log e_t")
    assert fit.factor < 1.0, f"not linear convergence: measured contraction {measured} is not < 1"
    if at_most is not None:
        assert fit.factor_high <= at_most * (1 + rtol), \
            f"linear rate: measured contraction {measured} exceeds the predicted at most " \
            f"{at_most:.10g} (rtol {rtol:g})"
    if equals is not None:
        if exact:
            c, error, t = fit.factor, 0.0, int(keep[-1]) - 1
        else:
            assert e.size >= 4, f"the tail ratio needs at least 4 errors, got {e.size}"
            c, error, t = asymptotic_factor(e, floor)
        assert abs(c - equals) <= tol, \
            f"linear rate: measured tail contraction {c:.10g} (e_{{t+1}}/e_t at t = {t}, estimated " \
            f"measurement error {error:.1e}) differs from the predicted {equals:.10g} by " \
            f"{abs(c - equals):.2e} > tol {tol:.1e}"
    return fit


def assert_power_rate(values: MeasuredVector, at_most: float | None = None, equals: float | None = None,
                      rounds: Vector | None = None, atol: float = 0.05, confidence: float = 0.95, min_r2: float = 0.99,
                      exact_rtol: float = 1e-9) -> SlopeFit:
    r"""Assert that ``values`` :math:`v_T` (positive) follow a power of the rounds,
    :math:`v_T \approx C T^{s}` (e.g. s = -1 for a running average :math:`(1/T)\sum_{t<T} e_t` of a
    summable sequence, -1/2 for an SGD rate), and compare the measured exponent s with a prediction.

    ``rounds`` are the T of the values (default 1, 2, ...; each > 0, increasing). s is the slope of
    :math:`\log v_T` on :math:`\log T`: exact (zero-width interval) from two points or when every
    segment's slope agrees to ``exact_rtol``, else the least-squares slope with its ``confidence``
    interval, whose fit must have r^2 >= ``min_r2``. ``at_most``: the upper end of the interval is
    <= at_most + ``atol`` (the values decay at least as fast as :math:`T^{at\_most}`). ``equals``:
    the interval widened by ``atol`` contains equals. ``atol`` (absolute, on the exponent; default
    0.05) allows for a finite window of rounds, where a bound's lower-order terms still bend the
    log-log line. Returns the fit; a failure says the measured and the predicted exponent.
    """
    v = _data("values", values).ravel()
    assert np.all(v > 0), f"values must be > 0 for a power rate, got {v[v <= 0][0]:g}"
    t = np.arange(1.0, v.size + 1) if rounds is None else validate.real_array("rounds", rounds).ravel()
    require(t.size == v.size, f"rounds must give one T per value ({v.size}), got {t.size}")
    require(bool(np.all(t > 0)) and bool(np.all(np.diff(t) > 0)),
            "rounds must be positive and increasing (the log of T is fitted)")
    atol = validate.number("atol", atol, low=0.0)
    min_r2 = validate.number("min_r2", min_r2, low=0.0, high=1.0)
    exact_rtol = validate.number("exact_rtol", exact_rtol, low=0.0)
    confidence = validate.number("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    at_most = None if at_most is None else validate.number("at_most", at_most)
    equals = None if equals is None else validate.number("equals", equals)
    assert v.size >= 2, "a power rate needs two values, got one"
    fit, exact = _rate_fit(np.log(t), np.log(v), confidence, exact_rtol, "log-log")
    measured = _described(fit.slope, fit.low, fit.high, fit, exact)
    _fit_quality(fit, exact, min_r2, "a power of T", "log v_T on log T")
    if at_most is not None:
        assert fit.high <= at_most + atol, \
            f"power rate: measured exponent {measured} exceeds the predicted at most {at_most:.6g} " \
            f"(+ atol {atol:g})"
    if equals is not None:
        assert fit.low - atol <= equals <= fit.high + atol, \
            f"power rate: measured exponent {measured} differs from the predicted {equals:.6g} by " \
            f"more than atol {atol:g}"
    return fit


def _bound_verdict(measured, bound, rtol: float, atol: float, name: str,
                   where: Callable[[tuple], str] | None = None) -> tuple[Check, str]:
    """The :class:`~fedbound.verify.check.Check` of ``measured <= bound (1 + rtol) + atol``
    elementwise (an :class:`~fedbound.stats.Estimate` with its whole interval: "holds" when every
    upper end is below, "violated" when some lower end is above, else "inconclusive"), and, unless
    it holds, the failure message: measured vs predicted at the first failing entry, named by
    ``where(index)`` (default: "index (i, ...)"). Arguments as :func:`assert_bound_held` checks them."""
    if isinstance(measured, Estimate):
        low, mean, high = (np.asarray(getattr(measured, part), dtype=float)
                           for part in ("low", "mean", "high"))
    else:
        low = mean = high = np.asarray(measured, dtype=float)
    b = np.asarray(bound, dtype=float)
    try:
        shape = np.broadcast_shapes(mean.shape, b.shape)
    except ValueError:
        raise ValidationError(f"measured (shape {mean.shape}) and bound (shape {b.shape}) do not "
                              f"broadcast together") from None
    with np.errstate(invalid="ignore", over="ignore"):   # inf bounds and huge tolerances allow anything
        allowed = np.broadcast_to(b + rtol * np.abs(b) + atol, shape)
    low, mean, high = (np.broadcast_to(a, shape) for a in (low, mean, high))
    status = ("holds" if np.all(high <= allowed) else
              "violated" if np.any(low > allowed) else "inconclusive")
    check = replace(bound_check(name, measured, bound, rtol=0.0), status=status)   # the status is ours
    check.details.update(rtol=rtol, atol=atol)
    if status == "holds":
        return check, ""
    bad = low > allowed if status == "violated" else high > allowed
    i = tuple(int(k) for k in np.argwhere(bad)[0])
    at = where(i) if where is not None else (f"index {i[0] if len(i) == 1 else i}" if i else "")
    interval = ("" if low[i] == high[i] else
                f" ({100 * measured.confidence:g}% CI [{low[i]:.6g}, {high[i]:.6g}])")
    verdict = ("violated: the measurement is above the bound" if status == "violated" else
               "inconclusive: the interval reaches above the bound (more seeds would decide)")
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = mean[i] / np.broadcast_to(b, shape)[i]
    return check, (f"{name} {verdict}{' at ' + at if at else ''}: measured {mean[i]:.6g}{interval} > "
                   f"predicted {np.broadcast_to(b, shape)[i]:.6g} (ratio {ratio:.4g}; allowed "
                   f"{allowed[i]:.6g} with rtol {rtol:g}, atol {atol:g})")


def assert_bound_held(measured: float | Measured | Estimate, bound: float | Measured,
                      rtol: float = 1e-10, name: str = "bound", atol: float = 0.0):
    """Assert ``measured <= bound (1 + rtol) + atol`` elementwise; an Estimate must hold with its
    whole confidence interval: it holds when every upper end is below, is violated when some lower
    end is above, and is inconclusive otherwise. ``rtol`` (default 1e-10) absorbs the
    rounding of the bound's evaluation; ``atol`` (default 0) the floating-point floor of a
    measurement that converges to 0, e.g. ``(1e-15 * ||x*||)**2`` for squared distances in float64
    or ``1e-15 * |f*|`` for optimality gaps. Returns the :class:`~fedbound.verify.check.Check`.
    NaN or infinite measurements, a NaN bound and empty input fail (an infinite bound holds
    trivially); a failure says the measured and the predicted value where it fails."""
    rtol = validate.number("rtol", rtol, low=0.0)
    atol = validate.number("atol", atol, low=0.0)
    validate.instance("name", name, str, "a string")
    if isinstance(measured, Estimate):
        for part in ("mean", "low", "high"):
            _data(f"measured {part}", getattr(measured, part))
    else:
        measured = _data("measured", measured)
    _data("bound", bound, allow_inf=True)
    check, message = _bound_verdict(measured, bound, rtol, atol, name)
    assert check.holds, message
    return check


__all__ = ["assert_fixed_point_reached", "assert_invariant_held", "assert_linear_rate",
           "assert_power_rate", "assert_bound_held"]
