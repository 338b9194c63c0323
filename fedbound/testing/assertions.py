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
import torch

from fedbound.verify.check import bound_check
from fedbound.verify.rates import SlopeFit, asymptotic_factor, fit_log_linear


def _array(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().double().numpy()
    return np.asarray(x, dtype=float)


def assert_fixed_point_reached(x, x_star, tol: float = 1e-10) -> float:
    """Assert ``||x - x_star||_2 <= tol``; ``x`` may be a model (d,), a stacked (n, d) set of
    client models (every row is compared), or a Trajectory (its last global model)."""
    if hasattr(x, "x_g") and hasattr(x, "rounds"):
        x = x.x_g[-1]
    x, x_star = _array(x), _array(x_star).reshape(-1)
    rows = x.reshape(-1, x_star.size)
    dist = float(np.max(np.linalg.norm(rows - x_star, axis=1)))
    assert dist <= tol, f"fixed point not reached: ||x - x*|| = {dist:.3e} > tol {tol:.1e}"
    return dist


def assert_invariant_held(invariant: Callable[[object], object], states: Iterable[object],
                          expected=0.0, atol: float = 1e-12) -> float:
    """Assert ``max |invariant(state) - expected| <= atol`` over all ``states``; returns the max.

    ``invariant(state)`` returns an array (e.g. the (S, d) subnet sums of z)."""
    worst, where = 0.0, None
    for t, state in enumerate(states):
        dev = float(np.max(np.abs(_array(invariant(state)) - _array(expected)), initial=0.0))
        if dev > worst:
            worst, where = dev, t
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
    ``tol`` of ``equals``. Returns the fit.
    """
    e = _array(errors).ravel()
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
    interval). Returns the :class:`~fedbound.verify.check.Check`."""
    check = bound_check(name, measured, bound, rtol=rtol)
    assert check.holds, f"{check.summary()}"
    return check


__all__ = ["assert_fixed_point_reached", "assert_invariant_held", "assert_linear_rate",
           "assert_bound_held"]
