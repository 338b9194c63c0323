"""The verdicts of an audit as what :func:`fedbound.theory.audit.run_audit` returns: a list of
:class:`~fedbound.theory.audit_report.ClaimReport` (:class:`Verdicts`) that shows itself as one
table, and the verdicts of several papers by paper (:class:`Audits`, from
:func:`fedbound.theory.audit.run_audits`).

The table sorts the verdicts by the size of their violation ratio, largest first
(:func:`fedbound.readout.by_size`: an infinite ratio first, a ratio beyond the float range by its
log10), and says each size in words (:func:`fedbound.readout.ratio_words`: "a factor of 2.5", "a
factor of 10^43"), with the verdict, its severity and kind, the ratio inside the regime of use and,
where a report carries one, its evidence (what backs the verdict: a proof, an exact
counterexample, samples).
"""
from __future__ import annotations

from typing import Iterable, Mapping

from fedbound.display import Html, box, brief, details, table
from fedbound.readout import ratio_words
from fedbound.theory.audit_report import SEVERITIES, ClaimReport, describe_evidence, sort_by_size


def rows(reports: Iterable[ClaimReport]) -> list[list]:
    """One table row per report, sorted by the size of its violation ratio, largest first."""
    out = []
    for r in sort_by_size(list(reports)):
        regime = "" if r.interior_ratio is None else ratio_words(r.interior_ratio)
        out.append([r.claim, f"{r.result_id} [{r.variant}]", r.verdict, r.severity, r.size_words(),
                    regime, r.kind, describe_evidence(r) if r.evidence else ""])
    return out


class Verdicts(list):
    """The reports of one audit (a list of :class:`~fedbound.theory.audit_report.ClaimReport`, in
    the audit's order), shown in a notebook as one table sorted by size (module doc)."""

    def __init__(self, reports: Iterable[ClaimReport] = ()):
        super().__init__(reports)

    def counts(self) -> dict[str, int]:
        """How many verdicts have each severity, worst first (those present)."""
        return {s: n for s in reversed(SEVERITIES) if (n := sum(r.severity == s for r in self))}

    def __repr__(self) -> str:
        return brief("Verdicts", claims=len(self), fails=sum(r.verdict == "fails" for r in self),
                     **self.counts())

    def _repr_html_(self) -> str:
        header = ["claim", "result", "verdict", "severity", "size (lhs/rhs)", "in the regime of use", "kind",
                  "evidence"]
        counts = ", ".join(f"{n} {s}" for s, n in self.counts().items())
        return box("audit", [table(header, rows(self))],
                   subtitle=f"{len(self)} claims: {counts}" if self else "no claims").text


def _counted(verdicts: Verdicts) -> str:
    n, fails = len(verdicts), sum(r.verdict == "fails" for r in verdicts)
    return f"{n} claim{'s' if n != 1 else ''}, {fails} fail{'s' if fails == 1 else ''}"


class Audits(dict):
    """The verdicts of several papers, by paper (``{paper: Verdicts}``), shown one table per paper."""

    def __init__(self, audits: Mapping[str, Iterable[ClaimReport]]):
        super().__init__({paper: Verdicts(reports) for paper, reports in audits.items()})

    def __repr__(self) -> str:
        return brief("Audits", **{paper: _counted(v) for paper, v in self.items()})

    def _repr_html_(self) -> str:
        parts = [details(f"{paper}: {_counted(v)}",
                         [Html(v._repr_html_())], expanded=len(self) == 1) for paper, v in self.items()]
        return box("audits", parts, subtitle=", ".join(self)).text


__all__ = ["rows", "Verdicts", "Audits"]
