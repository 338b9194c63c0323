r"""Claims about orders, checked by scaling (issue 22): "the bound is O(T^-1/2)", "linear rate",
"independent of T".

An :class:`OrderClaim` says that a quantity q(c, t) (a bound, a rate, a floor; ``value``) behaves like
t^a in the variable t (``variable``: T, n, 1/eps, ...) with the claimed exponent a (``claimed``;
``relation`` "<=" for an upper order O(t^a), "==" for an exact one). The audit draws ``points``
admissible base instances c from the claim's sampler (the variable itself is overwritten), evaluates
q on ``steps`` values of t spaced log-uniformly over ``decades`` (at least two decades), and fits the
exponent at every base point by least squares of log q against log t. The interval of a fit is its
Student-t interval (``confidence``) from the regression's residuals; the claim fails when, at some
base point, the whole interval lies beyond the claim (above a + ``tol`` for "<=", outside
[a - tol, a + tol] for "=="), and the report gives the worst base point, its fitted exponent, the
interval and the curve q(t) / t^a (``scaling``), which the referee's report plots. A failing order
is a wrong rate: severity ``rate``.

A linear rate q ~ r^t is claimed with ``linear=True``: log q is fitted against t (evenly spaced over
10^low..10^high) and the slope log r_fit compared with log r, the claimed rate. ``claimed`` may be a
function of the constants (a rate such as 1 - mu gamma K/4), evaluated at each base instance.
"""
from __future__ import annotations

import math
import time
import zlib
from dataclasses import dataclass, field
from typing import Annotated, Callable

import numpy as np

from fedbound import validate
from fedbound.argtypes import Count, NonNegative, Range, Seed
from fedbound.errors import require
from fedbound.theory.audit import admissible
from fedbound.theory.audit_report import ClaimReport
from fedbound.theory.claim import KINDS, Identified


@dataclass(frozen=True)
class OrderClaim(Identified):
    """A claimed order of ``value(constants) -> q`` in ``variable`` (module doc)."""

    value: Callable[[dict], np.ndarray]
    variable: str
    claimed: float | Callable[[dict], np.ndarray]
    decades: tuple[float, float]
    relation: str = "<="
    linear: bool = False
    points: Count = 64
    steps: Annotated[int, Range(4)] = 13
    tol: NonNegative = 0.02
    confidence: Annotated[float, Range(0.0, 1.0, low_open=True, high_open=True)] = 0.99
    kind: str = "printed"
    conditions: tuple[str, ...] = ()
    tests: str = field(default="bound", init=False)

    def __post_init__(self):
        require(self.relation in ("<=", "=="), f"order claim {self.id}: relation must be <= or ==")
        require(self.kind in KINDS, f"order claim {self.id}: kind must be one of {', '.join(KINDS)}")
        low, high = self.decades
        require(self.linear or high - low >= 2, f"order claim {self.id}: the exponent is fitted over "
                                                f"at least two decades, got 10^{low}..10^{high}")
        require(self.points >= 1 and self.steps >= 4, f"order claim {self.id}: points >= 1, steps >= 4")

    def grid(self) -> np.ndarray:
        """The values of the variable: log-spaced over ``decades`` (evenly spaced integers from
        10^low to 10^high for a linear rate)."""
        low, high = self.decades
        if self.linear:
            return np.linspace(10 ** low, 10 ** high, self.steps)
        return np.logspace(low, high, self.steps)

    def audit(self, seed: Seed = 0, **_) -> ClaimReport:
        """Fit the exponent at ``points`` admissible base instances (module doc)."""
        started = time.perf_counter()
        rng = np.random.default_rng([validate.seed(seed), zlib.crc32(f"{self.id}/{self.variant}".encode())])
        base = self.sampler.constants(rng.random((self.points, self.sampler.dim)))
        t = self.grid()
        columns = []
        for value in t:
            with np.errstate(all="ignore"):
                q = self.value({**base, self.variable: np.full(self.points, value)})
            columns.append(np.broadcast_to(np.asarray(q, dtype=float), (self.points,)))
        q = np.stack(columns, axis=1)                               # (points, steps)
        ok, broken = admissible(self.result_id, {k: v for k, v in base.items() if k != self.variable},
                                self.points)
        usable = ok & np.all(np.isfinite(q) & (q > 0), axis=1)
        require(usable.any(), f"order claim {self.id}: no admissible base instance gives a positive "
                              f"finite value on the grid")
        x = t if self.linear else np.log(t)
        fits = [_fit(x, np.log(row), self.confidence) for row in q[usable]]
        slopes = np.array([f[0] for f in fits])
        claimed = np.broadcast_to(np.asarray(self.claimed(base) if callable(self.claimed) else
                                             self.claimed, dtype=float), (self.points,))[usable]
        targets = np.log(claimed) if self.linear else claimed
        if self.relation == "<=":
            excess = np.array([lo - a for (_, lo, _), a in zip(fits, targets)])   # the interval's lower end
        else:
            excess = np.array([max(lo - a, a - hi) for (_, lo, hi), a in zip(fits, targets)])
        fails = bool(np.max(excess) > self.tol)
        worst = int(np.argmax(excess if fails or self.relation == "==" else slopes - targets))
        slope, lo, hi = fits[worst]
        target = float(targets[worst])
        index = np.flatnonzero(usable)[worst]
        point = {k: float(np.asarray(v).reshape(-1)[index if np.ndim(v) else 0])
                 for k, v in base.items() if k != self.variable}
        scale = np.exp(target * x) if self.linear else t ** target
        curve = q[index] / scale
        ratio = float(math.exp(slope - target)) if self.linear else float(slope - target)
        return ClaimReport(
            claim=self.id, result_id=self.result_id, variant=self.variant, statement=self.statement,
            flag=self.flag, verdict="fails" if fails else "holds",
            violation_ratio=float(np.max(curve) / curve[0]), log10_ratio=float(np.log10(np.max(curve) / curve[0])),
            worst=point, worst_part=None, part_ratios={}, failing_parts=[],
            random_violation_fraction=float(np.mean(excess > self.tol)), n_evaluated=q.size,
            n_invalid=int(np.sum(~np.all(np.isfinite(q), axis=1))), found_by="scaling",
            seconds=time.perf_counter() - started, kind=self.kind,
            severity="rate" if fails else "holds", conditions=list(self.conditions), tests="bound",
            n_inadmissible=int(np.sum(~ok)), inadmissible=broken,
            scaling={"variable": self.variable, "relation": self.relation, "linear": self.linear,
                     "claimed": float(claimed[worst]), "fitted": float(math.exp(slope)) if self.linear else float(slope),
                     "interval": [float(math.exp(lo)), float(math.exp(hi))] if self.linear else [float(lo), float(hi)],
                     "confidence": self.confidence, "exponent_gap": ratio,
                     "grid": t.tolist(), "ratio": curve.tolist(),
                     "largest_gap": float(np.max(slopes - targets)),
                     "base_points": int(usable.sum())},
            evidence="statistical",
            certificate={"method": "least-squares exponent of log q against " + (
                             f"{self.variable}" if self.linear else f"log {self.variable}") + " at "
                             "each admissible base instance, with its Student-t interval; fails where "
                             f"a whole interval lies beyond the claim by more than {self.tol:g}",
                         "interval": [float(lo), float(hi)], "confidence": self.confidence,
                         "fitted": float(slope), "claimed": target, "tolerance": self.tol,
                         "base_points": int(usable.sum()), "steps": self.steps,
                         "decades": list(self.decades)})


def _fit(x: np.ndarray, y: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Slope of the least-squares line of y on x with its Student-t interval (exact data: a zero
    width interval)."""
    n = len(x)
    xc = x - x.mean()
    slope = float(np.dot(xc, y - y.mean()) / np.dot(xc, xc))
    residuals = y - y.mean() - slope * xc
    se = math.sqrt(max(float(np.dot(residuals, residuals)), 0.0) / (n - 2) / float(np.dot(xc, xc)))
    from scipy import stats   # 0.3 s to import: only where an exponent is fitted

    half = float(stats.t.ppf(0.5 + confidence / 2, n - 2)) * se
    return slope, slope - half, slope + half
