r"""A bound read against what a reader already knows: its result's :class:`Reference` (a trivial bound,
or the quantity's initial value) and, where there is a run, the measured value.

A result declares its reference where the quantity it bounds has one (``Result(reference=...)``):

* ``kind="trivial"``: a bound that holds without the theorem, e.g. for
  min_t ||grad f(x_{t-1})||^2 the value at t = 1, ||grad f(x_0)||^2 <= 2 L (f(x_0) - f*) for L-smooth
  f bounded below, or <= d G^2 under coordinate-wise bounded gradients (FedAda2 A2); a bound above
  it tells the reader nothing they did not know;
* ``kind="initial"``: the quantity's value before the first round (||x_0 - x*||^2, or an upper
  bound on f(x_0) - f* such as L ||x_0 - x*||^2 / 2); a bound above it promises no progress.

Either way a bound above its reference is *vacuous*, and :class:`Reading` says by what factor, in
powers of ten (:func:`fedbound.readout.ratio_words`). Against a measured value (a Monte-Carlo mean
of what the bound bounds) a bound is *tight* when it lies within a factor :data:`TIGHT_FACTOR` above
the measurement, *loose* when further above it, and *below the measurement* when under it (a
violation, or measurement noise: :mod:`fedbound.verify.check` decides which).

>>> r = Reading(bound=9.4e16, reference=3.7, reference_text="min(d G^2, 2 L f_gap)", measured=0.0099)
>>> r.words()
'vacuous: a factor of 10^16 above the trivial bound min(d G^2, 2 L f_gap) = 3.7; loose: a factor of 10^19 above the measured 0.0099'
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np
import sympy as sp

from fedbound.argtypes import Choice, NonFinite, Range
from fedbound.display import box, clip, fields, shown
from fedbound.jsonable import jsonable
from fedbound.readout import number, ratio_words

#: what a reference is (module doc)
KINDS = {"trivial": "the trivial bound", "initial": "the initial value"}
#: a bound at most this factor above the measured value is "tight"
TIGHT_FACTOR = 2.0
#: a value of a reading: a number or an array, possibly infinite (a bound may overflow), not NaN
Value = Annotated[np.ndarray, NonFinite(), Range(allow_inf=True)]


@dataclass(frozen=True)
class Reference:
    """A value a result's bound is read against (module doc): the sympy expression ``expr`` in the
    result's constants, its ``text`` as a reader writes it (``"min(d G^2, 2 L f_gap)"``), its
    ``kind`` ("trivial" or "initial") and the ``source`` that justifies it (assumption, lines)."""

    expr: sp.Expr
    text: str
    kind: Annotated[str, Choice(tuple(KINDS))] = "trivial"
    source: str = ""

    def __post_init__(self):
        object.__setattr__(self, "expr", sp.sympify(self.expr))

    def describe(self) -> str:
        """``the trivial bound min(d G^2, 2 L f_gap) (A1, A2 [L130-L138])``."""
        return f"{KINDS[self.kind]} {self.text}" + (f" ({self.source})" if self.source else "")


@dataclass(frozen=True)
class Reading:
    """A bound against its reference (``reference``, of ``reference_kind``, written
    ``reference_text``) and the ``measured`` value, each None where there is none. Values broadcast
    (arrays: one reading per point). :meth:`words` says it in a sentence, :meth:`to_dict` as JSON."""

    bound: Value
    reference: Value | None = None
    reference_text: str = ""
    reference_kind: Annotated[str, Choice(tuple(KINDS))] = "trivial"
    measured: Value | None = None

    def _ratio(self, other) -> np.ndarray:
        b, o = np.broadcast_arrays(np.asarray(self.bound, dtype=float), np.asarray(other, dtype=float))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(o > 0, b / np.where(o > 0, o, 1.0), np.where(b > 0, np.inf, np.nan))

    @property
    def over_reference(self) -> np.ndarray | None:
        """bound / reference (None without a reference)."""
        return None if self.reference is None else self._ratio(self.reference)

    @property
    def over_measured(self) -> np.ndarray | None:
        """bound / measured (None without a measurement)."""
        return None if self.measured is None else self._ratio(self.measured)

    @property
    def vacuous(self) -> np.ndarray | None:
        """Whether the bound exceeds its reference (None without one)."""
        return None if self.reference is None else \
            np.asarray(self.bound, dtype=float) > np.asarray(self.reference, dtype=float)

    @property
    def tight(self) -> np.ndarray | None:
        """Whether measured <= bound <= TIGHT_FACTOR * measured (None without a measurement)."""
        if self.measured is None:
            return None
        ratio = self.over_measured
        return (ratio >= 1.0) & (ratio <= TIGHT_FACTOR)

    def words(self) -> str:
        """The reading in a sentence (module doc); for arrays, at the point where the bound is
        largest relative to its reference (or to the measurement)."""
        ratios = [r for r in (self.over_reference, self.over_measured) if r is not None]
        if not ratios:
            return "no reference and no measurement to read the bound against"
        first = np.atleast_1d(ratios[0])
        worst = int(np.argmax(np.where(np.isnan(first), -np.inf, first)))

        def at(x):
            return float(np.broadcast_to(np.asarray(x, dtype=float), np.shape(ratios[0])).flat[worst])

        def above(r: float, value: float, name: str) -> str:
            if np.isinf(r):
                return ratio_words(r, rhs=value, rhs_name=name)
            return f"{ratio_words(r)} above {name}"

        parts = []
        if self.reference is not None:
            ref, r = at(self.reference), at(self.over_reference)
            name = f"{KINDS[self.reference_kind]} {self.reference_text} = {number(ref, 3)}"
            parts.append(f"vacuous: {above(r, ref, name)}" if r > 1 else
                         f"below {name} ({ratio_words(r)} of it)")
        if self.measured is not None:
            m, r = at(self.measured), at(self.over_measured)
            name = f"the measured {number(m, 3)}"
            if r < 1:
                parts.append(f"below {name} ({ratio_words(r)} of it)")
            elif r <= TIGHT_FACTOR:
                parts.append(f"tight: within a factor of {number(TIGHT_FACTOR, 3)} of {name} "
                             f"({ratio_words(r)})")
            else:
                parts.append(f"loose: {above(r, m, name)}")
        where = "" if np.size(ratios[0]) <= 1 else f" (at the worst of {np.size(ratios[0])} points)"
        return "; ".join(parts) + where

    def to_dict(self) -> dict:
        """JSON-ready: the values, the ratios and the verdicts (null where not known)."""
        return jsonable({"bound": self.bound, "reference": self.reference,
                         "reference_text": self.reference_text or None,
                         "reference_kind": self.reference_kind if self.reference is not None else None,
                         "over_reference": self.over_reference, "vacuous": self.vacuous,
                         "measured": self.measured, "over_measured": self.over_measured,
                         "tight": self.tight, "tight_factor": TIGHT_FACTOR, "words": self.words()})

    def __repr__(self) -> str:
        return clip(f"Reading({self.words()})")

    def _repr_html_(self) -> str:
        """The bound, its reference and the measured value, the verdicts, and the reading in words."""
        rows: list[tuple[str, object]] = [("bound", self.bound)]
        if self.reference is not None:
            rows += [(f"{KINDS[self.reference_kind]}", f"{self.reference_text} = {shown(self.reference)}"),
                     ("vacuous", self.vacuous)]
        if self.measured is not None:
            rows += [("measured", self.measured), ("tight", self.tight)]
        return box("reading", [fields(rows), self.words()]).text


__all__ = ["Reference", "Reading", "KINDS", "TIGHT_FACTOR"]
