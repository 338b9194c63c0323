r"""Monte-Carlo expectations with confidence intervals: the statistics every layer shares (sweeps'
reports, verify's checks, the testing assertions), so that none of them imports another for it.

The theorems of the papers are stated for expectations over client sampling and gradient noise,
e.g. for :math:`\bar x_g^t = E_{C'}[x_g^t]` (SD-GT, seed 003, [L238-L240]; papers/sdgt.md 1.4,
7.5). A measured expectation is the mean over R independent seeds, reported with a Student-t
interval

.. math:: \hat m \pm t_{R-1,\,(1+c)/2}\; s/\sqrt{R},

where :math:`s` is the sample standard deviation and :math:`c` the confidence level. With R = 1 the
interval has zero width: this is meant for deterministic runs (full participation, sigma = 0), where
every seed gives the same value.

A non-negative quantity (a squared distance, a loss gap, a squared gradient norm) has a non-negative
mean, and its interval says so: with ``nonnegative=True`` the t-interval is intersected with
[0, inf) (method :data:`CLIPPED`). The mean lies in [0, inf) whatever the samples, so the
intersection contains it exactly when the t-interval does: the coverage is the t-interval's, and no
end reads below 0 (a 95% interval ``[-0.00085, 0.00127]`` for a squared distance becomes
``[0, 0.00127]``). Each estimate names its ``method``.

Few samples are said to be few (:attr:`Estimate.few`): below :data:`FEW_SAMPLES` samples the
interval's width rests on a standard deviation estimated from so few values that its own relative
error, about 1/sqrt(2 (R - 1)), exceeds 24%, and on the mean being near normal.

>>> import numpy as np
>>> est = mean_ci(np.array([1.0, 2.0, 3.0, 4.0]))
>>> float(est.mean), bool(est.contains(2.5))
(2.5, True)
>>> est = mean_ci(np.array([0.0, 0.0, 1e-3]), nonnegative=True)
>>> float(est.low), est.method, est.few
(0.0, 'Student-t, clipped to [0, inf)', True)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
from scipy import stats

from fedbound import validate
from fedbound.display import box, brief, clip, fields, plot, sample_rows, shown, table
from fedbound.errors import ValidationError, require

#: the interval methods of :func:`mean_ci`: the Student-t interval, and the same intersected with
#: [0, inf) for a non-negative quantity (module doc)
STUDENT_T, CLIPPED = "Student-t", "Student-t, clipped to [0, inf)"
#: fewer samples than this are "few" (module doc)
FEW_SAMPLES = 10


@dataclass(frozen=True)
class Estimate:
    """A Monte-Carlo mean with its standard error and a two-sided confidence interval, computed by
    ``method`` (:data:`STUDENT_T` or :data:`CLIPPED`).

    Arrays broadcast elementwise: an estimate of a whole trajectory has ``mean.shape == (T,)``.
    """

    mean: np.ndarray
    stderr: np.ndarray
    low: np.ndarray
    high: np.ndarray
    samples: int
    confidence: float
    method: str = STUDENT_T

    @property
    def few(self) -> bool:
        """Whether the interval rests on few samples: more than one (one sample is a deterministic
        run's, with nothing to estimate) and fewer than :data:`FEW_SAMPLES` (module doc)."""
        return 1 < self.samples < FEW_SAMPLES

    def describe(self) -> str:
        """How the interval was computed, in words: ``95% Student-t interval over 3 samples (few)``."""
        few = " (few)" if self.few else ""
        return f"{self.confidence:.0%} {self.method} interval over {self.samples} samples{few}"

    def contains(self, value: float | np.ndarray) -> np.ndarray:
        """Whether ``value`` lies in the confidence interval (elementwise)."""
        return (self.low <= value) & (value <= self.high)

    def __getitem__(self, index) -> "Estimate":
        return Estimate(self.mean[index], self.stderr[index], self.low[index], self.high[index],
                        self.samples, self.confidence, self.method)

    def to_dict(self) -> dict:
        """JSON-ready dictionary (arrays as lists)."""
        def plain(a):
            a = np.asarray(a, dtype=float)
            return a.tolist() if a.ndim else float(a)
        return {"mean": plain(self.mean), "stderr": plain(self.stderr), "low": plain(self.low),
                "high": plain(self.high), "samples": self.samples, "confidence": self.confidence,
                "method": self.method, "few": self.few}

    # -- shown to a reader (:mod:`fedbound.display`) ---------------------------------------------
    def interval(self) -> str:
        """``mean [low, high]`` with the digits that matter; for arrays, the sizes of the arrays."""
        return f"{shown(self.mean)} [{shown(self.low)}, {shown(self.high)}]" if np.ndim(self.mean) == 0 \
            else f"mean {shown(np.asarray(self.mean))}"

    def __repr__(self) -> str:
        return clip(f"Estimate({self.interval()}; {self.describe()})")

    def _repr_html_(self) -> str:
        """A number: its mean, standard error and interval; a series: the mean against its index
        with the interval shaded (a log axis where it spans decades) and a small table."""
        mean = np.asarray(self.mean, dtype=float)
        if mean.ndim == 1:
            index = np.arange(mean.size)
            parts = [plot(index, {"mean": mean}, bands={"mean": (self.low, self.high)}, xlabel="index"),
                     table(["index", "mean", "low", "high", "stderr"],
                           [[int(i), mean[i], self.low[i], self.high[i], self.stderr[i]]
                            for i in sample_rows(mean.size)])]
        else:
            parts = [fields([("mean", self.mean), ("interval", f"[{shown(self.low)}, {shown(self.high)}]"),
                             ("standard error", self.stderr)])]
        return box("Monte-Carlo estimate", parts, subtitle=self.describe()).text


class Estimates(dict):
    """Estimates by name (the outputs of a Monte-Carlo grid that returns a dict per seed, such as a
    run's per-round metrics), displayed as one table; ``plotted``: the series a notebook plots
    against their index, named ``axis`` (the first four series when none is named)."""

    def __init__(self, estimates: Mapping[str, Estimate], plotted: tuple[str, ...] = (), axis: str = "index"):
        super().__init__(estimates)
        self.plotted, self.axis = tuple(plotted), axis

    def __repr__(self) -> str:
        return brief("Estimates", *self)

    def _repr_html_(self) -> str:
        """One row per name (a series by its last entry), the interval's method, and a plot of the
        plotted series with their intervals shaded."""
        rows, series, bands = [], {}, {}
        for name, est in self.items():
            mean = np.asarray(est.mean, dtype=float)
            pick = (lambda a: float(np.asarray(a, dtype=float)[-1])) if mean.ndim == 1 else np.asarray
            rows.append([name, f"{self.axis} {mean.size - 1}" if mean.ndim == 1 else "", pick(est.mean),
                         pick(est.low), pick(est.high)])
            wanted = name in self.plotted if self.plotted else len(series) < 4
            if mean.ndim == 1 and wanted and (not series or mean.size == len(next(iter(series.values())))):
                series[name], bands[name] = mean, (est.low, est.high)
        parts = [table(["name", "", "mean", "low", "high"], rows)]
        if series:
            parts.insert(0, plot(np.arange(len(next(iter(series.values())))), series, bands=bands,
                                 xlabel=self.axis))
        first = next(iter(self.values()), None)
        return box("Monte-Carlo estimates", parts, subtitle=first.describe() if first is not None else "").text


def mean_ci(samples: np.ndarray, confidence: float = 0.95, axis: int = 0,
            nonnegative: bool = False) -> Estimate:
    """Mean of ``samples`` along ``axis`` with a Student-t confidence interval; with
    ``nonnegative`` (the samples measure a quantity that cannot be negative) the interval
    intersected with [0, inf) (see module doc)."""
    confidence = validate.number("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    validate.boolean("nonnegative", nonnegative)
    x = validate.real_array("samples", samples)
    require(x.ndim >= 1, f"samples must have at least 1 dimension, got shape {x.shape}")
    axis = validate.integer("axis", axis, low=-x.ndim, high=x.ndim - 1)
    x = np.moveaxis(x, axis, 0)
    r = x.shape[0]
    require(r >= 1, "Monte-Carlo estimate needs at least 1 sample, got 0")
    with np.errstate(over="ignore", invalid="ignore"):
        mean = x.mean(axis=0)
        stderr = np.zeros_like(mean) if r == 1 else x.std(axis=0, ddof=1) / np.sqrt(r)
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(stderr))):
        # samples near the largest float64 overflow in the sum or the squares: the same numbers
        # computed on x / max|x| (per entry) and scaled back
        scale = np.max(np.abs(x), axis=0)
        scale = np.where(scale > 0, scale, 1.0)
        y = x / scale
        mean = y.mean(axis=0) * scale
        stderr = np.zeros_like(mean) if r == 1 else y.std(axis=0, ddof=1) / np.sqrt(r) * scale
    with np.errstate(over="ignore"):
        half = (stats.t.ppf(0.5 + confidence / 2, r - 1) if r > 1 else 0.0) * stderr
        low, high = mean - half, mean + half
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):   # (x has entries then)
        raise ValidationError(f"the confidence interval of samples of magnitude up to "
                              f"{float(np.max(np.abs(x))):.3g} overflows float64; rescale the samples")
    if nonnegative:
        return Estimate(mean, stderr, np.maximum(low, 0.0), np.maximum(high, 0.0), r, confidence,
                        CLIPPED)
    return Estimate(mean, stderr, low, high, r, confidence)


__all__ = ["Estimate", "Estimates", "mean_ci", "STUDENT_T", "CLIPPED", "FEW_SAMPLES"]
