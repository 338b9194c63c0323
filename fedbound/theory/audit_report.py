"""The outcome of auditing a claim (:func:`fedbound.theory.audit.audit_claim`): a
:class:`ClaimReport`, as JSON (:meth:`ClaimReport.to_dict`) or a plain-text table
(:func:`format_table`)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from fedbound.jsonable import jsonable


@dataclass
class ClaimReport:
    """The outcome of :func:`~fedbound.theory.audit.audit_claim` (see :mod:`fedbound.theory.audit`)."""

    claim: str
    result_id: str
    variant: str
    statement: str
    flag: str
    verdict: str
    violation_ratio: float
    log10_ratio: float
    worst: dict[str, float]
    worst_part: str | None
    part_ratios: dict[str, float]
    failing_parts: list[str]
    random_violation_fraction: float
    n_evaluated: int
    n_invalid: int
    found_by: str
    seconds: float = field(default=0.0)

    def to_dict(self) -> dict:
        """JSON-ready dict (inf written as the string "inf")."""
        return jsonable(self.__dict__)


def format_value(v: float) -> str:
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
    """A plain-text table: claim, variant, verdict, violation ratio, worst point (failing parts)."""
    rows = [("claim", "variant", "verdict", "ratio", "worst counterexample / closest point")]
    for r in reports:
        point = " ".join(f"{k}={format_value(v)}" for k, v in r.worst.items())
        where_ = f"[{', '.join(r.failing_parts)}] " if r.failing_parts else ""
        rows.append((r.claim, r.variant, r.verdict, format_ratio(r), where_ + point))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row[:4], widths)) + "  " + row[4] for row in rows)
