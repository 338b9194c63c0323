r"""Rate fits: slopes of log-linear and log-log lines with confidence intervals.

* Linear convergence, :math:`e_t \approx C c^t` (Theorem 3, seed 003 (98) [L1033]): fit
  :math:`\log e_t = a + t \log c` by least squares; the per-round contraction is
  :math:`c = \exp(\text{slope})`.
* Sub-linear convergence, :math:`e_T \approx C T^{s}` (Theorems 1-2, e.g. slope -1 for
  :math:`(1/T)\sum_t \mathcal{E}_t` with sigma = 0, papers/sdgt.md 4.5): fit
  :math:`\log e_T = a + s \log T`.

The interval is the ordinary least-squares one, slope :math:`\pm t_{N-2,(1+c)/2}\,\mathrm{se}`,
exact when the residuals of the log values are i.i.d. Gaussian.

>>> import numpy as np
>>> t = np.arange(1, 51)
>>> fit = fit_log_linear(t, 3.0 * 0.9 ** t)
>>> round(fit.factor, 12)
0.9
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from fedbound import validate
from fedbound.display import brief, shown
from fedbound.errors import require


@dataclass(frozen=True)
class SlopeFit:
    """Least-squares line ``y = intercept + slope * x`` with a confidence interval for the slope.

    For a log-linear fit, :attr:`factor` is the per-step contraction ``exp(slope)`` and
    :attr:`factor_low`/:attr:`factor_high` its interval.
    """

    slope: float
    intercept: float
    stderr: float
    low: float
    high: float
    r2: float
    points: int
    confidence: float
    kind: str  # "linear", "log-linear" or "log-log"

    @property
    def factor(self) -> float:
        return float(np.exp(self.slope))

    @property
    def factor_low(self) -> float:
        return float(np.exp(self.low))

    @property
    def factor_high(self) -> float:
        return float(np.exp(self.high))

    def contains(self, slope: float) -> bool:
        return bool(self.low <= slope <= self.high)

    def __repr__(self) -> str:
        factor = {"factor": f"{shown(self.factor)} [{shown(self.factor_low)}, {shown(self.factor_high)}]"} \
            if self.kind == "log-linear" else {}
        return brief("SlopeFit", self.kind, slope=f"{shown(self.slope)} [{shown(self.low)}, {shown(self.high)}]",
                     **factor, r2=self.r2, points=self.points)

    def to_dict(self) -> dict:
        out = {k: getattr(self, k) for k in
               ("kind", "slope", "intercept", "stderr", "low", "high", "r2", "points", "confidence")}
        if self.kind == "log-linear":
            out.update(factor=self.factor, factor_low=self.factor_low, factor_high=self.factor_high)
        return out


#: largest |x| and |y| of a slope fit: their squares and sums of squares stay finite
FIT_MAX_ABS = 1e150


def fit_slope(x: np.ndarray, y: np.ndarray, confidence: float = 0.95, kind: str = "linear") -> SlopeFit:
    """Ordinary least squares of ``y`` on ``x`` with a Student-t interval for the slope."""
    x = validate.real_array("x", x, max_abs=FIT_MAX_ABS).ravel()
    y = validate.real_array("values to fit", y, max_abs=FIT_MAX_ABS).ravel()
    require(x.shape == y.shape, f"x and y must have the same length, got {x.size} and {y.size}")
    require(x.size >= 3, f"a slope fit with an interval needs at least 3 points, got {x.size}")
    kind = validate.one_of("kind", kind, ("linear", "log-linear", "log-log"))
    confidence = validate.number("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    xc = x - x.mean()
    sxx = float(xc @ xc)
    require(sxx > 0, "x values of a slope fit must not all be equal")
    slope = float(xc @ (y - y.mean()) / sxx)
    intercept = float(y.mean() - slope * x.mean())
    resid = y - intercept - slope * x
    dof = x.size - 2
    se = float(np.sqrt(resid @ resid / dof / sxx))
    half = float(stats.t.ppf(0.5 + confidence / 2, dof)) * se
    syy = float((y - y.mean()) @ (y - y.mean()))
    r2 = 1.0 - float(resid @ resid) / syy if syy > 0 else 1.0
    return SlopeFit(slope, intercept, se, slope - half, slope + half, r2, x.size, confidence, kind)


def _positive(values) -> np.ndarray:
    v = validate.real_array("values", values)
    require(v.size >= 1, "values must not be empty")
    require(bool(np.all(v > 0)), f"values must be > 0 for a log fit, got min {np.min(v):g}")
    return v


def fit_log_linear(t: np.ndarray, values: np.ndarray, confidence: float = 0.95) -> SlopeFit:
    """Fit ``log values = a + slope * t``; ``factor = exp(slope)`` is the contraction per step."""
    return fit_slope(t, np.log(_positive(values)), confidence, "log-linear")


def fit_log_log(t: np.ndarray, values: np.ndarray, confidence: float = 0.95) -> SlopeFit:
    """Fit ``log values = a + slope * log t`` (the exponent of a power law)."""
    return fit_slope(np.log(_positive(t)), np.log(_positive(values)), confidence, "log-log")


def asymptotic_factor(errors: np.ndarray, floor: float = 1e-9) -> tuple[float, float, int]:
    r"""Per-step contraction of a linearly converging sequence, measured at its tail.

    Returns ``(c, error, t)``: :math:`c = e_{t+1}/e_t` at the last index t whose
    :math:`e_{t+1} \ge \text{floor}\cdot e_0` (so that rounding stays negligible), and an estimate
    of :math:`|c - \lim r|`. When the dominant root is real and simple the ratios
    :math:`r_t = e_{t+1}/e_t` approach their limit geometrically, :math:`r_t - r \approx C\theta^t`;
    with :math:`\hat\theta = (r_t - r_{t-1})/(r_{t-1} - r_{t-2})` the remaining error is
    :math:`|r_t - r_{t-1}|\,|\hat\theta|/(1 - |\hat\theta|)` (inf when :math:`|\hat\theta| \ge 1`,
    e.g. complex dominant roots, whose ratios oscillate).
    """
    e = _positive(errors).ravel()
    floor = validate.number("floor", floor, low=0.0, high=1.0, low_open=True, high_open=True)
    require(e.size >= 4, f"need at least 4 errors, got {e.size}")
    ok = np.flatnonzero(e[1:] >= floor * e[0])
    require(ok.size >= 3 and ok[-1] >= 2,
            f"errors fall below {floor:g} x the first one too fast to measure a ratio")
    t = int(ok[-1])
    r = e[t - 1:t + 2] / e[t - 2:t + 1]            # r_{t-2}, r_{t-1}, r_t
    step, before = r[2] - r[1], r[1] - r[0]
    if step == 0.0:
        return float(r[2]), 0.0, t
    theta = abs(step / before) if before != 0.0 else np.inf
    error = abs(step) * theta / (1.0 - theta) if theta < 1.0 else np.inf
    return float(r[2]), float(error), t


__all__ = ["SlopeFit", "fit_slope", "fit_log_linear", "fit_log_log", "asymptotic_factor"]
