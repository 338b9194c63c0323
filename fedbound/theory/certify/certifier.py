r"""The certifier: evidence for the verdict of a sampled claim (issue 32).

:func:`certify` takes a :class:`~fedbound.theory.claim.Claim`, the float audit's report and the
raw points the audit found worst (violations first), and spends at most the budget of its ``level``
(:data:`BUDGETS`, ``fedbound audit --prove LEVEL``):

1. **exact re-check** (every level): the audit's worst points evaluated in exact arithmetic
   (:func:`~fedbound.theory.certify.form.exact_point`): an admissible point where a part is
   violated exactly is a refutation (evidence ``refuted``, its exact ratio); no float tolerance
   decides it, either way (a violation of 1e-14 relative is one, a float excess at equality is not);
2. **proof** (level >= 1): the claim traced to a symbolic form
   (:func:`~fedbound.theory.certify.form.symbolic_form`), then z3 on the whole domain (``proved``)
   or on the sampled box (``proved-on-box``) for real algebra
   (:mod:`~fedbound.theory.certify.smt`), interval branch and bound on the box for powers,
   logarithms and exponentials (:mod:`~fedbound.theory.certify.interval`); a model z3 finds is
   re-checked exactly like 1 (a refutation only if it is admissible and violates exactly);
3. otherwise ``not-refuted`` (the sampling, and the exact ratio at the closest point), or
   ``numeric`` where the claim's code cannot be evaluated exactly (a numeric procedure: an
   eigenvalue solver, an implicit root) and its float verdict rests on the 1e-12 tolerance.

A "nonvacuous" claim (the bound below a trivial one *somewhere* in the regime) is proved by an
exact witness; its "fails" (vacuous at every sampled point) is ``not-refuted``.

The verdict follows the evidence: ``refuted`` fails, ``proved``, ``proved-on-box`` and
``not-refuted`` hold; ``numeric`` keeps the float verdict.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Annotated, Sequence

import sympy as sp

from fedbound.argtypes import Range
from fedbound.theory.certify import form as F
from fedbound.theory.certify import trace as T
from fedbound.theory.audit_report import ClaimReport
from fedbound.theory.certify.evidence import exact_number
from fedbound.theory.claim import Claim


@dataclass(frozen=True)
class Budget:
    """What a level spends per claim: exact re-checks of the audit's worst points (``points`` for a
    claim the float audit found failing, ``closest`` for one it found holding; each within
    ``point_seconds``), the symbolic trace
    (at most ``paths`` paths), z3 (``rlimit`` resource units per query, z3's deterministic measure
    of work; a spectral radius of a matrix of order at most ``spectral_order``, whose 2^r - 1
    principal minors it is asked about) and interval branch and bound (at most ``boxes`` boxes);
    ``seconds`` only caps the wall
    clock of the proof search, far above what the counts cost, so that the evidence does not depend
    on the machine's load."""

    points: int
    closest: int
    point_seconds: float
    paths: int
    rlimit: int
    boxes: int
    seconds: float
    spectral_order: int


#: the budget of each ``--prove`` level: 0 re-checks the audit's points exactly and proves nothing,
#: 1 (the default) tries a quick proof, 2 and 3 spend about ten and a hundred times more
#: (SD-GT Theorem 3's 4 x 4 rho(A) claims are tried from level 2: at level 1 z3 spent its whole
#: 4 s on each of them and answered unknown)
BUDGETS = {0: Budget(4, 2, 1.0, 0, 0, 0, 0.0, 0),
           1: Budget(4, 2, 1.0, 8, 4_000_000, 2_000, 4.0, 3),
           2: Budget(12, 6, 10.0, 64, 60_000_000, 50_000, 60.0, 4),
           3: Budget(32, 16, 60.0, 256, 600_000_000, 1_000_000, 600.0, 6)}
#: a ``--prove`` level
Level = Annotated[int, Range(0, max(BUDGETS))]
#: the tolerance the float audit decides with (module doc of :mod:`fedbound.theory.audit`)
FLOAT_RTOL = 1e-12
@dataclass
class Certified:
    """The outcome of :func:`certify`: ``evidence`` (one of
    :data:`~fedbound.theory.certify.evidence.EVIDENCE`), the ``certificate`` (JSON-ready), the
    ``verdict`` the evidence gives (None: the float verdict stands) and, for a refutation, the
    ``failing`` parts."""

    evidence: str
    certificate: dict
    verdict: str | None = None
    failing: list[str] = field(default_factory=list)


def certify(claim: Claim, report: ClaimReport, candidates: Sequence[dict], level: Level = 1) -> Certified:
    """Evidence for ``report`` (the float audit of ``claim``) from the raw points ``candidates``
    (parameter name -> value, worst first) within the budget of ``level`` (module doc)."""
    budget = BUDGETS[level]
    whole, _ = F.variables(claim)
    wanted = budget.points if (report.verdict == "fails" or claim.tests == "nonvacuous") else budget.closest
    points, error = [], None
    for raw in candidates[:wanted]:
        try:
            point = F.exact_point(claim, raw, whole, budget.point_seconds)
        except (T.Untraceable, T.Invalid) as exc:
            error = f"{type(exc).__name__}: {exc}"
            break
        points.append(point)
        if point.counterexample and claim.tests != "nonvacuous":
            return _refuted(claim, [point])
        if claim.tests == "nonvacuous" and point.admissible and point.inside and not any(point.violated):
            break
    if claim.tests == "nonvacuous":
        return _nonvacuous(claim, report, points, error)
    out = None
    if level > 0 and error is None:
        try:
            out = _prove(claim, budget, whole)
        except Exception as exc:    # noqa: BLE001 - a proof search that breaks proves nothing; the
            out = f"{type(exc).__name__}: {exc}"[:300]    # sampled evidence stands, and says so
    if isinstance(out, Certified):
        return out
    sampled = _sampled(claim, report, points, error)
    if out:
        sampled.certificate["proof_search"] = out
    return sampled


def _names(claim) -> list:
    return list(claim.parts) or [claim.id]


def _refuted(claim, points: list, method: str = "") -> Certified | None:
    for p in points:
        if p.counterexample:
            names = _names(claim)
            return Certified("refuted", {
                "method": method or "exact re-evaluation of the audit's worst point (rationals of its "
                                    "floats, the build and both sides in exact arithmetic)",
                "counterexample": p.to_dict(claim.parts),
                "relations_checked": "domains, order relations and relations of the result, exactly"},
                "fails", [nm for nm, v in zip(names, p.violated) if v])
    return None


def _closest(points: list) -> dict | None:
    ok = [p for p in points if p.admissible]
    if not ok:
        return None
    best = ok[0]
    for p in ok[1:]:
        if F._greater(p.ratios[p.worst()], best.ratios[best.worst()]):
            best = p
    i = best.worst()
    return {"ratio": exact_number(best.ratios[i]), "at_equality": best.lhs[i] == best.rhs[i]
            or bool(best.ratios[i] == 1)}


def _sampling(report) -> dict:
    return {"points": report.n_evaluated, "search": "random samples (log-uniform), the corners of the "
            "box (up to 1024) and differential evolution with a Powell polish, maximizing lhs/rhs",
            "found_by": report.found_by}


def _sampled(claim, report, points: list, error: str | None) -> Certified:
    certificate = {"method": "sampled: " + _sampling(report)["search"], **_sampling(report)}
    closest = _closest(points)
    if closest is not None:
        certificate["closest_exact"] = closest
        certificate["exact_points"] = len(points)
        return Certified("not-refuted", certificate, "holds")
    certificate["exact"] = error or "no admissible point re-evaluated exactly"
    tolerance_decides = report.verdict == "fails" or report.violation_ratio > 1
    if tolerance_decides:
        certificate.update(method="floating point only: " + certificate["method"],
                           tolerance=FLOAT_RTOL if not claim.log else f"{FLOAT_RTOL} (absolute, logs)")
        return Certified("numeric", certificate)
    return Certified("not-refuted", certificate, "holds")


def _nonvacuous(claim, report, points: list, error: str | None) -> Certified:
    """A witness proves "somewhere below the trivial bound"; vacuity itself is only sampled."""
    for p in points:
        if p.admissible and p.inside and not any(p.violated):
            return Certified("proved", {"method": "an exact witness: an admissible point of the "
                                                  "regime where the bound is below the trivial one",
                                        "witness": p.to_dict(claim.parts)}, "holds")
    certificate = {"method": "sampled: " + _sampling(report)["search"], **_sampling(report)}
    if report.verdict == "fails":
        certificate["reading"] = ("no witness among the sampled points: the bound's vacuity over the "
                                  "regime is not refuted, not proved")
    if error:
        certificate["exact"] = error
    if report.verdict == "holds" and error:
        return Certified("numeric", {**certificate, "tolerance": FLOAT_RTOL})
    return Certified("not-refuted", certificate)


# -- proofs ------------------------------------------------------------------------------------

def _prove(claim, budget: Budget, whole) -> Certified | str:
    """A proof (Certified), or what the search tried and why it proved nothing (a line: the claim's
    code not traced to a formula, and why; what z3 answered; where interval branch and bound
    stopped)."""
    deadline = time.perf_counter() + budget.seconds
    try:
        form = F.symbolic_form(claim, max_paths=budget.paths, seconds=budget.seconds)
    except T.PathLimit as exc:
        return f"not traced to a formula: {exc} at this level (--prove)"
    except (T.Untraceable, T.Invalid) as exc:
        return f"not traced to a formula: {exc}"
    tried = ""
    if not form.transcendental:
        out = _smt(claim, form, budget, whole, deadline)
        if isinstance(out, Certified):
            return out
        tried = out
    remaining = deadline - time.perf_counter()
    if budget.boxes and remaining > 0:
        from fedbound.theory.certify import interval

        try:
            answer = interval.prove(form, seconds=remaining, max_boxes=budget.boxes,
                                    spectral_order=budget.spectral_order)
        except interval.Unsupported as exc:
            return tried or f"not z3's (transcendental) nor the interval method's: {exc}"
        if answer.proved:
            return Certified("proved-on-box", answer.certificate(), "holds")
        tried = "; ".join(filter(None, (tried, f"interval branch and bound on the box: {answer.reason} "
                                               f"after {answer.boxes:,} boxes")))
    return tried or "out of this level's time before a proof was tried (--prove)"


def _smt(claim, form, budget: Budget, whole, deadline: float) -> Certified | str:
    from fedbound.theory.certify import smt

    tried = ""
    for box in (False, True):
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            return tried
        try:
            answer = smt.decide(form, box=box, rlimit=budget.rlimit, timeout=remaining,
                                spectral_order=budget.spectral_order)
        except smt.Unsupported as exc:
            return tried or (f"not z3's: {exc}" if "spectral" in str(exc) else "")
        tried = (f"z3 {answer.status} on the {'box' if box else 'whole domain'} within "
                 f"{budget.rlimit:,} resource units per query{answer.note}")
        variables = form.box if box else form.variables
        domain = "; ".join(v.describe() for v in variables)
        if answer.status == "unsat":
            kind = "proved-on-box" if box or any(v.sampled for v in variables) else "proved"
            return Certified(kind, answer.certificate(domain, False), "holds")
        if answer.status == "sat" and not form.fresh:
            refuted = _model(claim, form, answer, whole)
            if refuted is not None:
                return refuted
    return tried


def _model(claim, form, answer, whole) -> Certified | None:
    """A z3 model re-checked exactly at the claim's own code (integers rounded where the real
    relaxation gave fractions); a refutation only if admissible and violated exactly."""
    raw = {}
    for v in form.variables:
        value = answer.model[v.name]
        if v.integer and value.denominator != 1:
            value = Fraction(round(value))
        raw[v.name] = sp.Rational(value.numerator, value.denominator)
    try:
        point = F.exact_point(claim, raw, whole)
    except (T.Untraceable, T.Invalid):
        return None
    return _refuted(claim, [point], "a model of z3's query (real relaxation, integers rounded), "
                                    "re-evaluated in exact arithmetic at the claim's own code")


__all__ = ["Budget", "BUDGETS", "Level", "Certified", "certify"]
