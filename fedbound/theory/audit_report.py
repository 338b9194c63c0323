"""The outcome of auditing a claim (:func:`fedbound.theory.audit.audit_claim`): a
:class:`ClaimReport`, as JSON (:meth:`ClaimReport.to_dict`) or a plain-text table
(:func:`format_table`), grouped by severity (:func:`format_by_severity`).

Beside the verdict a report carries what a referee reads (:mod:`fedbound.theory.claim`): ``kind``
(printed / consistency), ``severity`` (holds, typo, constant, condition, rate, vacuous),
``conditions`` (the repairs the verdict depends on), ``regime`` and ``interior_ratio`` (the worst
ratio inside the regime of use), ``n_inadmissible`` (sampled points that broke a relation of the
result: excluded, never counterexamples) with the relations they broke, ``growth`` (the fitted
exponent of the violation ratio along each scaling parameter at the counterexample), ``scaling``
(an order claim's fitted exponent, interval and curve), ``monte_carlo`` (an expectation claim's
estimate and interval), ``worst_unit`` (a sampled claim's worst point as the unit-cube coordinates
of its sampler, from which :func:`fedbound.theory.audit.evaluate_claim` evaluates it again), and
what backs the verdict (issue 32): ``evidence``, one of proved, proved-on-box, refuted,
not-refuted, statistical, numeric (:mod:`fedbound.theory.certify.evidence`), with its
``certificate`` (the method and what backs it: an unsat query's hash, the boxes, an exact
counterexample and ratio, the points sampled, an interval and its confidence, a tolerance)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from fedbound.argtypes import NonNegative, NonNegativeInt, Probability
from fedbound.display import box, brief, details, fields, shown, table
from fedbound.jsonable import jsonable
from fedbound.readout import by_size, ratio_words
from fedbound.theory.argtypes import ExtendedReal

#: the severity of a verdict, mildest first (:mod:`fedbound.theory.claim`)
SEVERITIES = ("holds", "typo", "constant", "condition", "rate", "vacuous")


@dataclass
class ClaimReport:
    """The outcome of :func:`~fedbound.theory.audit.audit_claim` (see :mod:`fedbound.theory.audit`)."""

    claim: str
    result_id: str
    variant: str
    statement: str
    flag: str
    verdict: str
    violation_ratio: ExtendedReal
    log10_ratio: ExtendedReal
    worst: dict[str, ExtendedReal]
    worst_part: str | None
    part_ratios: dict[str, ExtendedReal]
    failing_parts: list[str]
    random_violation_fraction: Probability
    n_evaluated: NonNegativeInt
    n_invalid: NonNegativeInt
    found_by: str
    seconds: NonNegative = field(default=0.0)
    kind: str = "printed"
    severity: str = "holds"
    conditions: list[str] = field(default_factory=list)
    tests: str = "bound"
    regime: str | None = None
    interior_ratio: ExtendedReal | None = None
    interior_worst: dict[str, ExtendedReal] | None = None
    n_inadmissible: NonNegativeInt = 0
    inadmissible: list[str] = field(default_factory=list)
    growth: dict[str, float] = field(default_factory=dict)
    scaling: dict[str, object] | None = None
    monte_carlo: dict[str, object] | None = None
    worst_unit: list[float] | None = None
    evidence: str = ""
    certificate: dict[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready dict with numbers only (strict JSON): a non-finite number is ``null``, and
        ``infinite`` names the fields that are +inf: a violation ratio is infinite where the right
        side is <= 0 and the left side positive, or beyond the float range (``log10_ratio`` then
        holds it)."""
        data = jsonable(self.__dict__, nonfinite="null")
        data["infinite"] = sorted(k for k, v in self.__dict__.items()
                                  if isinstance(v, float) and math.isinf(v) and v > 0)
        return data

    # -- shown to a reader (:mod:`fedbound.display`) ---------------------------------------------
    def size_words(self) -> str:
        """The violation ratio lhs/rhs in words (:func:`fedbound.readout.ratio_words`)."""
        return ratio_words(self.violation_ratio, self.log10_ratio, lhs_name="the claimed side",
                           rhs_name="the bound")

    def __repr__(self) -> str:
        return brief("ClaimReport", self.claim, verdict=self.verdict, severity=self.severity,
                     size=self.size_words())

    def _repr_html_(self) -> str:
        """The verdict, its severity and kind, the size of the worst ratio in words (and inside the
        regime of use), the worst point, the parts that fail, the conditions it depends on, the
        evidence where the report has one, and how the search went."""
        rows: list[tuple[str, object]] = [
            ("claim", self.statement), ("result", f"{self.result_id} [{self.variant}]"),
            ("verdict", f"{self.verdict} ({self.severity}, {self.kind}, tests {self.tests})"),
            ("worst lhs/rhs", f"{self.size_words()} ({format_ratio(self)})")]
        if self.interior_ratio is not None:
            rows.append((f"in the regime of use ({self.regime})", ratio_words(self.interior_ratio)))
        rows += [("evidence", describe_evidence(self))] if self.evidence else []
        rows += [("failing parts", ", ".join(self.failing_parts))] if self.failing_parts else []
        rows += [("if", "; ".join(self.conditions))] if self.conditions else []
        rows += [("flag", self.flag)] if self.flag else []
        for name in ("scaling", "monte_carlo"):
            value = getattr(self, name)
            rows += [(name.replace("_", "-"), ", ".join(f"{k}={shown(v)}" for k, v in value.items()
                                                        if not isinstance(v, (list, dict))))] if value else []
        rows.append(("search", f"{self.n_evaluated} points ({self.n_invalid} invalid, {self.n_inadmissible} "
                               f"inadmissible), found by {self.found_by}, {shown(self.seconds, 3)} s"))
        point = table(["constant", "value"], [[k, v] for k, v in self.worst.items()])
        fails = self.verdict == "fails"
        return box(self.claim, [fields(rows), details("counterexample" if fails else "worst point", [point],
                                                      expanded=fails)],
                   subtitle=f"{self.verdict}, {self.severity}").text


def format_value(v: ExtendedReal) -> str:
    """A number for a table: an integer as such, else 4 significant digits; inf and -inf by name."""
    if not math.isfinite(v):
        return "inf" if v > 0 else ("-inf" if v < 0 else "nan")
    if v == round(v) and abs(v) < 1e6:
        return str(int(round(v)))
    return f"{v:.4g}"


def format_ratio(report: ClaimReport) -> str:
    """The violation ratio; 1-2.3e-20 style where it rounds to 1, 10^x where it overflows."""
    v, log10 = report.violation_ratio, report.log10_ratio
    if not math.isfinite(v) and math.isfinite(log10):
        return f"10^{log10:.1f}"
    if math.isfinite(log10) and log10 != 0 and f"{v:.4g}" == "1":
        return f"1{math.expm1(log10 * math.log(10)):+.1e}"
    return format_value(v)


def format_table(reports: list[ClaimReport]) -> str:
    """A plain-text table, largest violation ratio first (:func:`fedbound.readout.by_size`): claim,
    variant, verdict, the ratio lhs/rhs in words (:meth:`ClaimReport.size_words`: a factor of 2.47,
    a factor of 10^47, infinite: the bound is 0), worst point (failing parts)."""
    rows = [("claim", "variant", "verdict", "size (lhs/rhs)", "worst counterexample / closest point")]
    for r in sort_by_size(reports):
        point = " ".join(f"{k}={format_value(v)}" for k, v in r.worst.items())
        where_ = f"[{', '.join(r.failing_parts)}] " if r.failing_parts else ""
        rows.append((r.claim, r.variant, r.verdict, r.size_words(), where_ + point))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row[:4], widths)) + "  " + row[4] for row in rows)


def sort_by_size(reports: list[ClaimReport]) -> list[ClaimReport]:
    """The reports by the size of their violation ratio, largest first (an infinite ratio first,
    one beyond the float range by its log10)."""
    return by_size(list(reports), lambda r: (r.violation_ratio, r.log10_ratio))


def describe_evidence(report: ClaimReport) -> str:
    """The evidence of a verdict in a few words: its kind and what backs it (the method's name,
    the box count, the exact ratio, the points sampled, the interval, the tolerance)."""
    c = report.certificate
    kind = report.evidence
    if kind == "proved":
        how = "exact witness" if "witness" in c else f"z3, {c.get('branches', 1)} branch(es), " \
                                                     f"query sha256 {str(c.get('query_sha256', ''))[:12]}"
    elif kind == "proved-on-box":
        how = f"{c['boxes']} boxes" if "boxes" in c else "z3 on the box"
    elif kind == "refuted":
        ratio = c.get("counterexample", {}).get("ratio", {})
        exact = str(ratio.get("exact", ""))
        how = ("exact ratio infinite (the bound is 0 or negative)" if exact == "oo"
               else f"exact ratio {exact}" if exact and len(exact) <= 24
               else f"exact ratio {str(ratio.get('decimal', ''))[:14]}")
    elif kind == "not-refuted":
        how = f"{c.get('points', report.n_evaluated)} points" + (
            f", exact closest {c['closest_exact']['ratio']['decimal'][:10]}" if "closest_exact" in c else "")
    elif kind == "statistical":
        lo, hi = c.get("interval", [math.nan, math.nan])
        how = f"{100 * c.get('confidence', 0):g}% interval [{lo:.4g}, {hi:.4g}]"
    else:
        how = f"tolerance {c['tolerance']}" if "tolerance" in c else c.get("method", "")[:40]
    return f"{kind}: {how}"


def evidence_line(reports: list[ClaimReport]) -> str:
    """``evidence: 3 proved, 1 proved-on-box, ...`` (the kinds present, in the order of
    :data:`fedbound.theory.certify.evidence.EVIDENCE`)."""
    from fedbound.theory.certify.evidence import counts

    present = [f"{n} {kind}" for kind, n in counts([r.evidence for r in reports]).items() if n]
    return "evidence: " + (", ".join(present) or "none")


def format_by_severity(reports: list[ClaimReport]) -> str:
    """The table of :func:`format_table` once per severity present (worst first), each headed by
    the severity and its count; a claim's kind and conditions follow its row."""
    blocks = []
    for severity in reversed(SEVERITIES):
        group = [r for r in reports if r.severity == severity]
        if not group:
            continue
        lines = format_table(group).splitlines()
        notes = []
        for r, line in zip(sort_by_size(group), lines[1:]):
            extra = [r.kind] + ([describe_evidence(r)] if r.evidence else []) + (
                [f"if {'; '.join(r.conditions)}"] if r.conditions else [])
            if r.interior_ratio is not None:
                extra.append(f"in regime ({r.regime}): {ratio_words(r.interior_ratio)}")
            notes.append(f"{line}  [{', '.join(extra)}]")
        blocks.append(f"{severity} ({len(group)}):\n" + "\n".join([lines[0], *notes]))
    return "\n\n".join(blocks)
