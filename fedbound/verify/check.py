r"""The outcome of comparing a measurement with a prediction of the theory: :class:`Check`.

A check is computed, never written by hand. For an upper bound ``measured <= predicted`` measured
by Monte Carlo with a confidence interval [low, high] (see :mod:`fedbound.verify.montecarlo`):

* ``"holds"`` when the whole interval is below the prediction, high <= predicted;
* ``"violated"`` when the whole interval is above it, low > predicted (a counterexample beyond
  Monte-Carlo noise);
* ``"inconclusive"`` otherwise (more seeds would decide);
* ``"not applicable"`` when the run is outside the theorem's conditions (``details["conditions"]``
  names the ones that fail): nothing is claimed, so nothing holds or fails.

For deterministic measurements the interval has zero width and the verdict is exact up to a
relative rounding tolerance ``rtol`` (default 1e-10, far below any bound's slack that matters).

:meth:`Check.summary` writes the numbers with the digits that matter and an upper bound's ratio
as a size (:mod:`fedbound.readout`: "the bound is a factor of 10^15 above the measurement"), and
says when its interval rests on few seeds (:attr:`fedbound.stats.Estimate.few`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Iterable, Literal

import numpy as np

from fedbound import validate
from fedbound.argtypes import NonFinite, NonNegative
from fedbound.display import MAX_ENTRIES, box, clip, details, fields, plot
from fedbound.errors import ValidationError
from fedbound.jsonable import jsonable
from fedbound.readout import PLAIN_LOW, number, ratio_words
from fedbound.stats import Estimate
from fedbound.verify.rates import SlopeFit

STATUSES = ("holds", "violated", "inconclusive", "not applicable")
#: a number of a check: NaN where nothing was compared ("not applicable"), inf for a ratio over 0
Number = Annotated[float, NonFinite()]


@dataclass
class Check:
    """One measured-versus-predicted comparison.

    name: what is checked (e.g. ``"thm3-bound"``); variant: the theory variant used (``"printed"``,
    ``"rederived"``, ... or ``None``); status: one of :data:`STATUSES`; measured / predicted: the
    numbers compared (worst case over rounds where the check is per round); ratio: the largest
    measured/predicted; slope: a fitted rate with its interval, where relevant; details: further
    JSON-ready numbers (per-round arrays, constants, conditions).
    """

    name: str
    status: Literal["holds", "violated", "inconclusive", "not applicable"]
    measured: Number
    predicted: Number
    ratio: Number
    variant: str | None = None
    relation: str = "<="
    slope: SlopeFit | None = None
    details: dict = field(default_factory=dict)

    def __post_init__(self):
        validate.one_of("status", self.status, STATUSES)

    @property
    def holds(self) -> bool:
        return self.status == "holds"

    @property
    def violated(self) -> bool:
        return self.status == "violated"

    def summary(self) -> str:
        """One line: name [variant]: measured relation predicted (ratio, for an upper bound in
        words) -> status, and the seeds when few (``not applicable: CONDITION`` for a run outside
        the theorem's conditions)."""
        tag = f" [{self.variant}]" if self.variant else ""
        if self.status == "not applicable":
            return f"{self.name}{tag}: not applicable: {_failing_words(self.details.get('conditions'))}"
        size = ""   # the size in words where it needs reading: above the bound, or far below it
        if self.relation == "<=" and self.ratio > 1:
            size = f": measured {ratio_words(self.ratio)} above the bound"
        elif self.relation == "<=" and 0 < self.ratio < PLAIN_LOW:
            size = f": the bound is {ratio_words(1 / self.ratio)} above the measurement"
        few = [e for e in (self.details.get("measured"), self.details.get("estimate"))
               if isinstance(e, Estimate) and e.few and np.any(np.asarray(e.stderr) > 0)]
        seeds = f" [{few[0].samples} seeds: few]" if few else ""
        return (f"{self.name}{tag}: measured {number(self.measured)} {self.relation} predicted "
                f"{number(self.predicted)} (ratio {number(self.ratio, 4)}{size}) -> {self.status}{seeds}")

    def to_dict(self) -> dict:
        """Strict JSON: a non-finite number (the measurement of a check that does not apply) is
        null, named with its value in the object's ``nonfinite`` field."""
        return jsonable({"name": self.name, "variant": self.variant, "status": self.status,
                         "holds": self.holds, "measured": self.measured, "predicted": self.predicted,
                         "relation": self.relation, "ratio": self.ratio, "slope": self.slope,
                         "details": self.details}, nonfinite="named")

    # -- shown to a reader (:mod:`fedbound.display`) ---------------------------------------------
    def __repr__(self) -> str:
        return clip(f"Check({self.summary()})")

    def _repr_html_(self) -> str:
        """The verdict, measured against predicted with the ratio in words, the fitted slope, the
        reading of the bound; for a bound checked per horizon, the measured mean with its interval
        and the bound against the horizons; the other details folded."""
        d = self.details
        rows: list[tuple[str, object]] = [("checks", f"measured {self.relation} predicted"),
                                          ("measured", self.measured), ("predicted", self.predicted),
                                          ("ratio measured/predicted", self.ratio)]
        if self.status == "not applicable":
            rows = [("not applicable", _failing_words(d.get("conditions")))]
        elif self.relation == "<=" and np.isfinite(self.ratio) and self.ratio > 0:
            rows.append(("size", f"the bound is {ratio_words(1 / self.ratio)} above the measurement"
                         if self.ratio <= 1 else f"measured {ratio_words(self.ratio)} above the bound"))
        rows += [("slope", repr(self.slope))] if self.slope is not None else []
        reading = d.get("reading")
        rows += [("reading", reading.words())] if hasattr(reading, "words") else []
        estimate = d.get("measured", d.get("estimate"))
        rows += [("interval", estimate.describe())] if isinstance(estimate, Estimate) else []
        parts = [fields(rows)]
        horizons = np.asarray(d.get("horizons", []), dtype=float)
        if isinstance(estimate, Estimate) and np.ndim(estimate.mean) == 1 and horizons.size == np.size(estimate.mean) > 1:
            predicted = np.broadcast_to(np.asarray(d.get("predicted", np.nan), dtype=float), horizons.shape)
            parts.insert(0, plot(horizons, {"measured": np.asarray(estimate.mean), "bound": predicted},
                                 bands={"measured": (estimate.low, estimate.high)}, xlabel="T",
                                 ylabel=str(d.get("measure", ""))))
        shown_apart = ("reading", "measured", "estimate", "conditions")
        other = [(k, v.words() if hasattr(v, "words") else v.interval() if isinstance(v, Estimate) else v)
                 for k, v in d.items() if k not in shown_apart and not isinstance(v, dict)
                 and not (isinstance(v, list) and len(v) > MAX_ENTRIES)]
        if other:
            parts.append(details(f"{len(other)} details", [fields(other)]))
        title = f"{self.name} [{self.variant}]" if self.variant else self.name
        return box(title, parts, subtitle=self.status).text


def _failing_words(conditions: Iterable[str] | None) -> str:
    """The failing conditions of a check that does not apply, as one phrase, joined by "; " ("its
    conditions fail" when none is named). Each is read at its first ": " or "; " outside brackets:
    a condition with nothing after it fails ("gamma <= gamma_bar (main) fails"); one that explains
    itself after ": " fails before its explanation ("A4 (convex f) with known x*, f* fails: --task
    mlp-gmm is non-convex ..."); one that is a sentence ("FedAda2's results need G ...; the
    MLPClassifier task does not know it") is shown as it is."""
    words = []
    for condition in map(str, conditions or ()):
        depth, cut = 0, None
        for i, char in enumerate(condition):
            depth += (char in "([") - (char in ")]")
            if depth == 0 and condition.startswith((": ", "; "), i):
                cut = i
                break
        if cut is None:
            words.append(f"{condition} fails")
        elif condition[cut] == ":":
            words.append(f"{condition[:cut]} fails{condition[cut:]}")
        else:
            words.append(condition)
    return "; ".join(words) or "its conditions fail"


def not_applicable(name: str, conditions: Iterable[str], *, variant: str | None = None, **details) -> Check:
    """The :class:`Check` of a run outside a theorem's conditions (``conditions``: the failing
    ones, in words)."""
    nan = float("nan")
    return Check(name, "not applicable", nan, nan, nan, variant,
                 details={**details, "conditions": list(conditions), "theorem_applies": False})


def upper_bound_status(measured: Estimate | np.ndarray | float, predicted: float | np.ndarray,
                       predicted_halfwidth: NonNegative | np.ndarray = 0.0, rtol: NonNegative = 1e-10) -> str:
    """Verdict for ``measured <= predicted`` elementwise (all entries), see the module doc.

    ``predicted_halfwidth`` widens the comparison when the prediction itself is evaluated at
    Monte-Carlo estimates (e.g. a lemma's right-hand side at measured quantities).
    """
    if isinstance(measured, Estimate):
        low, high = np.asarray(measured.low), np.asarray(measured.high)
    else:
        low = high = np.asarray(measured, dtype=float)
    pred = np.asarray(predicted, dtype=float)
    half = np.asarray(predicted_halfwidth, dtype=float)
    _broadcastable(("measured", low), ("predicted", pred), ("predicted_halfwidth", half))
    slack = rtol * np.abs(pred)
    if np.all(high <= pred - half + slack):
        return "holds"
    if np.any(low > pred + half + slack):
        return "violated"
    return "inconclusive"


def _broadcastable(*named) -> None:
    """The arrays of the (name, array) pairs broadcast together, else a ValidationError naming them."""
    try:
        np.broadcast_shapes(*(np.shape(a) for _, a in named))
    except ValueError:
        raise ValidationError(" and ".join(f"{n} (shape {np.shape(a)})" for n, a in named)
                              + " must broadcast together") from None


def bound_check(name: str, measured: Estimate | np.ndarray, predicted: float | np.ndarray, *,
                predicted_halfwidth: NonNegative | np.ndarray = 0.0, variant: str | None = None,
                slope: SlopeFit | None = None, rtol: NonNegative = 1e-10, **details) -> Check:
    """A :class:`Check` of ``measured <= predicted`` (arrays: per round; the worst round is shown).

    ``measured`` and ``predicted`` broadcast together; the reported pair is the one with the
    largest ratio measured/predicted.
    """
    mean = np.asarray(measured.mean if isinstance(measured, Estimate) else measured, dtype=float)
    pred = np.asarray(predicted, dtype=float)
    _broadcastable(("measured", mean), ("predicted", pred))
    mean, pred_b = np.broadcast_arrays(mean, pred)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(pred_b > 0, mean / pred_b, np.where(mean > 0, np.inf, 0.0))
    worst = int(np.argmax(ratios)) if ratios.size else 0
    status = upper_bound_status(measured, predicted, predicted_halfwidth, rtol)
    return Check(name, status, float(mean.flat[worst]), float(pred_b.flat[worst]),
                 float(ratios.flat[worst]), variant, "<=", slope,
                 {**details, "measured": measured, "predicted": pred})


def equality_check(name: str, measured: float, predicted: float, tol: NonNegative, *,
                   measurement_error: NonNegative = 0.0, variant: str | None = None,
                   slope: SlopeFit | None = None, **details) -> Check:
    """A :class:`Check` of ``|measured - predicted| <= tol`` for a deterministic measurement whose
    own error is estimated as ``measurement_error``: holds when the difference is within ``tol``,
    violated when it exceeds ``tol + 2 * measurement_error`` (the factor 2 covers the estimate
    being a one-mode extrapolation, see :func:`~fedbound.verify.rates.asymptotic_factor`),
    inconclusive in between."""
    measured, predicted = float(measured), float(predicted)
    diff = abs(measured - predicted)
    status = ("holds" if diff <= tol else
              "violated" if diff > tol + 2.0 * measurement_error else "inconclusive")
    ratio = measured / predicted if predicted != 0 else float("inf")
    return Check(name, status, measured, predicted, ratio, variant, "==", slope,
                 {**details, "abs_difference": diff, "tol": tol,
                  "measurement_error": measurement_error})


def interval_check(name: str, estimate: Estimate, value: float, *, variant: str | None = None,
                   **details) -> Check:
    """A :class:`Check` that an exactly computed ``value`` lies in the confidence interval of a
    Monte-Carlo ``estimate`` of the same quantity (a statistical test at the interval's level:
    a correct implementation fails it with probability 1 - confidence)."""
    mean, value = float(estimate.mean), float(value)
    status = "holds" if estimate.low <= value <= estimate.high else "violated"
    ratio = mean / value if value != 0 else float("inf")
    return Check(name, status, mean, value, ratio, variant, "~=", None,
                 {**details, "estimate": estimate})

def reproduction_verdict(cases: Iterable[tuple[bool, bool]]) -> str:
    """One verdict for a paper's claim from its cases (at least one), each a pair (reproduced,
    contradicted): ``"REPRODUCED"`` when every case reproduces it, ``"NOT reproduced"`` when some
    case contradicts it (beyond the intervals, as each case decides), ``"INCONCLUSIVE"`` otherwise."""
    cases = list(cases)
    if not cases:
        raise ValidationError("cases must hold at least one (reproduced, contradicted) pair, got none")
    for i, case in enumerate(cases):
        if not isinstance(case, (tuple, list)) or len(case) != 2:
            raise ValidationError(f"cases[{i}] must be a pair (reproduced, contradicted), got "
                                  f"{validate.show(case)}")
        validate.boolean(f"cases[{i}][0]", case[0])
        validate.boolean(f"cases[{i}][1]", case[1])
    if all(ok for ok, _ in cases):
        return "REPRODUCED"
    return "NOT reproduced" if any(bad for _, bad in cases) else "INCONCLUSIVE"


__all__ = ["reproduction_verdict", "Check", "STATUSES", "not_applicable", "upper_bound_status", "bound_check", "equality_check",
           "interval_check"]
