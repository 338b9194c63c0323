"""Audit: test a paper's checkable claims over random and adversarial constants.

A claim (:class:`~fedbound.theory.claim.Claim`) is a statement "lhs <= rhs" (or "<") that a paper
asserts for every admissible choice of constants, with its domain and a vectorized check (see
:mod:`fedbound.theory.claim`).

:func:`audit_claim` evaluates a claim

1. at ``samples`` random points of the domain (uniform in the unit cube, mapped log-uniformly);
2. at the extremes of the domain (the corners of the cube, a random subset of 1024 if there are more);
3. by an adversarial search that maximizes log(lhs/rhs): scipy's differential evolution on the
   unit-cube (log-constant) coordinates, vectorized, started from the worst points of 1-2, then a
   bounded Powell polish of the best point.

The float evaluation searches: a point with lhs > rhs + rtol max(|lhs|, |rhs|) (``rtol`` = 1e-12;
strict claims at excess >= 0) is a float violation. The verdict is then decided by what backs it
(issue 32, :mod:`fedbound.theory.certify`, within the budget of the ``prove`` level): the worst
points re-evaluated in exact arithmetic (an admissible exact violation: ``fails``, evidence
``refuted``, even where the float excess was within the tolerance; a float excess that is none
exactly: no counterexample), then a proof on the whole domain or the sampled box (``holds``,
``proved`` or ``proved-on-box``), else ``holds`` as ``not-refuted`` (sampled only). Where the
claim's code cannot be evaluated exactly (a numeric procedure), the float verdict stands with
evidence ``numeric`` and its tolerance. Every report carries ``evidence`` and ``certificate``; the
certificate keeps the float verdict where exact arithmetic decided otherwise (``float_verdict``). The report (:class:`~fedbound.theory.audit_report.ClaimReport`) gives
the worst point's constants (the counterexample when the claim fails), the violation ratio max
lhs/rhs (inf where rhs <= 0 < lhs - rhs; for claims that hold, the closest approach), per-part
ratios, and the fraction of random samples that violate the claim.
Everything is deterministic for a given seed (each claim draws from its own stream seeded by
(seed, crc32 of claim id and variant))).

Admissible instances only: every point is checked against the claim's result
(:meth:`~fedbound.theory.statement.Statement.admissible`: domains, order relations, the result's
relations); a point that breaks one is excluded (never a counterexample) and counted in
``n_inadmissible`` with the relations broken. A claim with a :class:`~fedbound.theory.claim.Regime`
gets a second adversarial search restricted to it, and ``interior_ratio`` is the worst ratio over
the evaluated points inside the regime.

Severity (computed): ``holds``; ``vacuous`` for a "nonvacuous" claim (bound <= trivial bound), whose
verdict is "fails" only when the bound exceeds the trivial one at every admissible random point of
the regime; ``condition`` for a failing "condition" claim; for a failing "bound" claim ``rate`` when
the violation ratio grows along a scaling parameter (T, n, ...) at the counterexample, its fitted
exponent (``growth``, over the parameter's whole range, at least two decades) at least
:data:`RATE_EXPONENT`, and ``constant`` otherwise; ``typo`` when the claim's ``corrected`` reading
holds (:func:`run_audit` audits it too).

The audit is per paper: each paper's audit module registers its claims as a
:class:`~fedbound.papers.PaperAudit` of :data:`fedbound.papers.PAPERS` (e.g.
:mod:`fedbound.theory.sdgt.audit`); :func:`run_audit` audits one paper, :func:`run_audits` several
(``"all"``: every registered paper).
"""
from __future__ import annotations

import itertools
import math
import time
import zlib
from dataclasses import dataclass
from typing import Annotated, Mapping

import numpy as np
from scipy.optimize import differential_evolution, minimize

from fedbound.argtypes import Count, Measured, NonNegativeInt, Range, Seed
from fedbound.deprecation import renamed_attributes
from fedbound.errors import InputTypeError, UnknownNameError, require
from fedbound import resources, validate
from fedbound.papers import PAPERS as PAPER_AUDITS
from fedbound.validate import integer, listing, suggest
from fedbound.theory.argtypes import UnitPoints
from fedbound.theory.audit_report import ClaimReport
from fedbound.theory.certify.certifier import BUDGETS, Level, certify
from fedbound.theory.claim import Claim, SelfAuditing
from fedbound.theory.registry import RESULTS
from fedbound.theory.verdicts import Audits, Verdicts

MAX_CORNERS = 1024
#: the audit's worst points handed to the certifier (it re-checks as many as its level allows)
MAX_CANDIDATES = 32
#: adversarial-search generations at most (each evaluates a whole population): nothing may run for days
MAX_ITERATIONS = 10_000
#: memory allowance per random sample for the arrays a claim's check evaluates (lhs, rhs, parts)
ARRAYS_PER_SAMPLE = 16
_BIG = 1e100  # search objective clip (a log ratio; DE's statistics overflow near 1e300)
#: a failing bound's violation ratio growing at least like (scaling parameter)^RATE_EXPONENT: "rate"
RATE_EXPONENT = 0.1
#: points of the grid along a scaling parameter (severity rate / constant)
GROWTH_POINTS = 13
#: the adversarial search's generations: 0 (no search) to MAX_ITERATIONS
Iterations = Annotated[int, Range(0, MAX_ITERATIONS)]


# -- evaluation ----------------------------------------------------------------------------------

@dataclass
class _Points:
    """Evaluated points: unit coordinates, badness (log lhs/rhs) per part, violation per part,
    admissibility and membership of the claim's regime per point, the relations broken."""

    z: np.ndarray
    badness: np.ndarray
    violated: np.ndarray
    admissible: np.ndarray
    inside: np.ndarray
    broken: tuple[str, ...] = ()

    @property
    def score(self) -> np.ndarray:
        """Per point: max badness over parts (nan -> -inf, so invalid points never rank first)."""
        b = np.where(np.isnan(self.badness), -np.inf, self.badness)
        return np.max(b, axis=1)


def _as_parts(a, n: int, parts: int) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    return np.broadcast_to(a if a.ndim == 0 else a.reshape(n, -1), (n, parts))


def admissible(result_id: str, constants: Mapping[str, Measured], n: Count
               ) -> tuple[np.ndarray, list[str]]:
    """Which of the ``n`` instances of ``constants`` the result ``result_id`` admits (module doc),
    and the relations some break; every instance where the result is not registered (a claim about
    a formula of a proof). Claims of every kind (orders, expectations) read admissibility here."""
    if result_id not in RESULTS:
        return np.ones(n, dtype=bool), []
    scalars = {k: v for k, v in constants.items() if np.ndim(v) <= 1}
    ok, broken = RESULTS.get(result_id).admissible(scalars)
    return np.broadcast_to(ok, (n,)) if np.ndim(ok) <= 1 else ok.reshape(n, -1).all(axis=1), broken


def evaluate_claim(claim: Claim, z: UnitPoints) -> _Points:
    """Evaluate ``claim`` at unit-cube points ``z`` (N, dim)."""
    z = np.atleast_2d(z)
    n, parts = z.shape[0], max(len(claim.parts), 1)
    raw = claim.sampler.raw(z)
    constants = claim.sampler.build(dict(raw))
    ok, broken = admissible(claim.result_id, constants, n)
    with np.errstate(all="ignore"):
        inside = (np.ones(n, dtype=bool) if claim.regime is None else
                  np.broadcast_to(np.asarray(claim.regime.test({**raw, **constants}), dtype=bool), (n,)))
        out = claim.check(constants)
        lhs, rhs = _as_parts(out[0], n, parts), _as_parts(out[1], n, parts)
        excess = _as_parts(out[2], n, parts) if len(out) > 2 else lhs - rhs
        if claim.log:
            badness = excess.copy()
            violated = excess >= 0 if claim.strict else excess > claim.rtol
        else:
            badness = np.where(rhs > 0, np.log1p(np.maximum(excess / rhs, -1.0)),
                               np.where(excess > 0, np.inf, -np.inf))
            tol = claim.rtol * np.maximum(np.abs(lhs), np.abs(rhs))
            violated = excess >= 0 if claim.strict else excess > tol
    invalid = np.isnan(lhs) | np.isnan(rhs) | np.isnan(excess) | ~ok[:, None]
    badness[invalid] = np.nan
    return _Points(z, badness, violated & ~invalid, ok.copy(), inside & ok, tuple(broken))


def _corners(dim: int, rng: np.random.Generator) -> np.ndarray:
    if 2 ** dim <= MAX_CORNERS:
        return np.array(list(itertools.product((0.0, 1.0), repeat=dim)))
    return rng.integers(0, 2, size=(MAX_CORNERS, dim)).astype(float)


def _search(claim: Claim, start: np.ndarray, rng: np.random.Generator, iterations: int,
            polish_evaluations: int, inside: bool = False) -> np.ndarray:
    """Differential evolution from the population ``start`` then a Powell polish; returns the
    points it ends with (best of DE and of the polish). ``inside``: only points of the claim's
    regime count."""
    dim = claim.sampler.dim

    def objective(x: np.ndarray) -> np.ndarray:  # x: (dim, S) when vectorized, (dim,) otherwise
        points = evaluate_claim(claim, np.asarray(x).T.reshape(-1, dim))
        score = np.where(points.inside, points.score, -np.inf) if inside else points.score
        return -np.clip(np.nan_to_num(score, nan=-_BIG, neginf=-_BIG), -_BIG, _BIG)

    bounds = [(0.0, 1.0)] * dim
    result = differential_evolution(objective, bounds, init=start, maxiter=iterations, tol=0.0, atol=0.0,
                                     polish=False, vectorized=True, updating="deferred", rng=rng)
    best = np.clip(result.x, 0.0, 1.0)
    if polish_evaluations:
        polished = minimize(lambda x: float(objective(x)[0]), best, method="Powell",
                            bounds=bounds, options={"maxfev": polish_evaluations, "xtol": 1e-6})
        return np.vstack([best, np.clip(polished.x, 0.0, 1.0)])
    return best[None, :]


def audit_claim(claim: Claim | SelfAuditing, samples: Count = 20000, seed: Seed = 0,
                iterations: Iterations = 40, polish_evaluations: NonNegativeInt = 150,
                prove: Level = 1) -> ClaimReport:
    """Random, extreme and adversarial evaluation of one claim (see the module docstring), then
    the evidence for its verdict within the budget of the ``prove`` level
    (:mod:`fedbound.theory.certify`); a claim of another type (a bound checked against certified
    worst cases) evaluates itself by its ``audit(seed)``."""
    prove = integer("prove", prove, low=0, high=max(BUDGETS))
    if not isinstance(claim, Claim):
        if not callable(getattr(claim, "audit", None)):
            raise InputTypeError(f"claim must be a Claim or a claim with an audit(seed) method, got "
                                 f"{validate.show(claim)}")
        report = claim.audit(seed=seed)
        if not report.evidence:     # a user's own kind of claim: what backs it is its own business
            report.evidence = "numeric"
            report.certificate = {"method": f"{type(claim).__name__}.audit(seed): the claim's own "
                                            f"evaluation, not certified by fedbound"}
        return report
    samples = integer("samples", samples, low=1)
    iterations = integer("iterations", iterations, low=0, high=MAX_ITERATIONS)
    dim = claim.sampler.dim
    # the (samples, dim) points and the arrays a check evaluates at them (a few per sample)
    resources.require_memory(f"the audit of {claim.id} with {samples} samples",
                             samples * (dim + ARRAYS_PER_SAMPLE))
    start_time = time.perf_counter()
    rng = np.random.default_rng([validate.seed(seed), zlib.crc32(f"{claim.id}/{claim.variant}".encode())])
    phases = {"random": evaluate_claim(claim, rng.random((samples, dim))),
              "extremes": evaluate_claim(claim, _corners(dim, rng))}
    pooled = np.vstack([phases["random"].z, phases["extremes"].z])
    order = np.argsort(-np.concatenate([phases["random"].score, phases["extremes"].score]), kind="stable")
    population = max(5, min(3 * dim + 10, len(order)))
    start = _distinct(pooled[order], population, rng)
    if iterations > 0:
        phases["search"] = evaluate_claim(claim, _search(claim, start, rng, iterations, polish_evaluations))
    if iterations > 0 and claim.regime is not None:
        inside = np.concatenate([phases["random"].inside, phases["extremes"].inside])[order]
        if inside.any():
            start = _distinct(pooled[order][inside], population, rng)
            phases["regime search"] = evaluate_claim(
                claim, _search(claim, start, rng, iterations, polish_evaluations, inside=True))
    report, candidates = _report(claim, phases, time.perf_counter() - start_time)
    _certify(claim, report, candidates, prove)
    report.seconds = time.perf_counter() - start_time
    return report


def _certify(claim: Claim, report: ClaimReport, candidates: np.ndarray, prove: int) -> None:
    """The evidence for the report's verdict (:func:`fedbound.theory.certify.certifier.certify`);
    where it decides the verdict otherwise than the float audit did (a violation within the 1e-12
    tolerance, or a float excess that exact arithmetic shows is none), the verdict, the failing
    parts and the severity follow it, and the certificate keeps the float verdict."""
    raw = claim.sampler.raw(candidates)
    points = [{k: float(v[i]) for k, v in raw.items()} for i in range(len(candidates))]
    out = certify(claim, report, points, prove)
    report.evidence, report.certificate = out.evidence, out.certificate
    if out.verdict is None or out.verdict == report.verdict:
        return
    report.certificate["float_verdict"] = report.verdict
    report.verdict = out.verdict
    report.failing_parts = out.failing if claim.parts else []
    report.growth = _growth(claim, candidates[0]) if out.verdict == "fails" and claim.tests == "bound" else {}
    report.severity = _severity(claim, out.verdict, report.growth)


def _distinct(points: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """The first ``count`` distinct rows of ``points`` (padded with random points)."""
    _, first = np.unique(points, axis=0, return_index=True)
    rows = points[np.sort(first)][:count]
    if len(rows) < count:
        rows = np.vstack([rows, rng.random((count - len(rows), points.shape[1]))])
    return rows


def _candidates(claim: Claim, z: np.ndarray, ranked: np.ndarray, violated: np.ndarray,
                inside: np.ndarray, random: np.ndarray, worst: int) -> np.ndarray:
    """What the certifier re-checks exactly (at most :data:`MAX_CANDIDATES` distinct points): the
    worst point, then the violations, then by their largest badness; for a "nonvacuous" claim, whose
    verdict "holds" needs one witness, the random points of the regime below the trivial bound
    first (its verdict reads the random points only), the lowest first."""
    score, bad = np.max(ranked, axis=1), violated.any(axis=1)
    if claim.tests == "nonvacuous":          # its verdict reads the random points only
        witness, idx = inside & ~bad, np.flatnonzero(random)
        order = idx[np.lexsort((np.where(witness, score, -score)[idx], ~witness[idx]))]
    else:
        order = np.concatenate([[worst], np.lexsort((-score, ~bad))])
    _, first = np.unique(z[order], axis=0, return_index=True)
    return z[order][np.sort(first)][:MAX_CANDIDATES]


def _report(claim: Claim, phases: dict[str, _Points], seconds: float) -> tuple[ClaimReport, np.ndarray]:
    names = list(claim.parts) or [claim.id]
    labels = np.concatenate([[phase] * len(pts.z) for phase, pts in phases.items()])
    z = np.vstack([p.z for p in phases.values()])
    badness = np.vstack([p.badness for p in phases.values()])
    violated = np.vstack([p.violated for p in phases.values()])
    inside = np.concatenate([p.inside for p in phases.values()])
    admissible = np.concatenate([p.admissible for p in phases.values()])
    ranked = np.where(np.isnan(badness), -np.inf, badness)
    i = int(np.lexsort((np.max(ranked, axis=1), violated.any(axis=1)))[-1])  # a violation ranks first
    best = float(np.max(ranked[i]))
    failing = [nm for nm, v in zip(names, violated.any(axis=0)) if v]
    verdict = "fails" if failing else "holds"
    random = phases["random"]
    if claim.tests == "nonvacuous":     # vacuous only where the bound is above the trivial one throughout
        judged = random.inside
        verdict = "fails" if judged.any() and random.violated.any(axis=1)[judged].all() else "holds"
        failing = names if verdict == "fails" else []
    interior_ratio = interior_worst = None
    if claim.regime is not None and inside.any():
        j = int(np.flatnonzero(inside)[np.argmax(np.max(ranked[inside], axis=1))])
        interior_ratio, interior_worst = _ratio(float(np.max(ranked[j]))), _point(claim, z[j])
    growth = _growth(claim, z[i]) if verdict == "fails" and claim.tests == "bound" else {}
    candidates = _candidates(claim, z, ranked, violated, inside, labels == "random", i)
    return ClaimReport(
        claim=claim.id, result_id=claim.result_id, variant=claim.variant, statement=claim.statement,
        flag=claim.flag, verdict=verdict,
        violation_ratio=_ratio(best), log10_ratio=best / math.log(10), worst=_point(claim, z[i]),
        worst_part=names[int(np.argmax(ranked[i]))] if claim.parts else None,
        part_ratios={nm: _ratio(b) for nm, b in zip(names, np.max(ranked, axis=0))} if claim.parts else {},
        failing_parts=failing if claim.parts else [],
        random_violation_fraction=float(np.mean(random.violated.any(axis=1))),
        n_evaluated=len(z), n_invalid=int(np.sum(np.all(np.isnan(badness), axis=1))),
        found_by=str(labels[i]), seconds=seconds, kind=claim.kind,
        severity=_severity(claim, verdict, growth), conditions=list(claim.conditions),
        tests=claim.tests, regime=claim.regime.description if claim.regime else None,
        interior_ratio=interior_ratio, interior_worst=interior_worst,
        n_inadmissible=int(np.sum(~admissible)),
        inadmissible=sorted({b for p in phases.values() for b in p.broken}), growth=growth,
        worst_unit=[float(x) for x in z[i]]), candidates


def _point(claim: Claim, z: np.ndarray) -> dict[str, float]:
    """The constants at one unit-cube point (scalars; a vector constant by its first entry)."""
    return {k: float(np.asarray(v).reshape(-1)[0])
            for k, v in claim.sampler.constants(z[None, :]).items()}


def _growth(claim: Claim, z: np.ndarray) -> dict[str, float]:
    """The exponent of the violation ratio along each scaling parameter at the point ``z``: the
    least-squares slope of log(lhs/rhs) against log(parameter) over the parameter's whole range
    (:data:`GROWTH_POINTS` points; only parameters sampled log-uniformly over at least two decades,
    and only where at least four points are admissible and finite)."""
    out = {}
    for name in claim.scaling_parameters:
        j = claim.sampler.names().index(name)
        param = claim.sampler.params[j]
        if not param.log or math.log10(param.high / param.low) < 2:
            continue
        grid = np.repeat(z[None, :], GROWTH_POINTS, axis=0)
        grid[:, j] = np.linspace(0.0, 1.0, GROWTH_POINTS)
        score = evaluate_claim(claim, grid).score
        x = np.log(param.from_unit(grid[:, j]))
        keep = np.isfinite(score)
        if keep.sum() >= 4 and np.ptp(x[keep]) >= 2 * math.log(10):
            out[name] = float(np.polyfit(x[keep], score[keep], 1)[0])
    return out


def _severity(claim: Claim, verdict: str, growth: dict[str, float]) -> str:
    """The severity of a verdict (module doc); ``typo`` is set by :func:`run_audit`."""
    if verdict == "holds":
        return "holds"
    if claim.tests == "nonvacuous":
        return "vacuous"
    if claim.tests == "condition":
        return "condition"
    return "rate" if any(g >= RATE_EXPONENT for g in growth.values()) else "constant"


def _ratio(log_ratio: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.exp(log_ratio))


# -- running a paper ---------------------------------------------------------------------------

def claims_of(paper: str) -> list[Claim]:
    """The claims registered for ``paper`` (see :data:`fedbound.papers.PAPERS`)."""
    if not (isinstance(paper, str) and paper in PAPER_AUDITS):
        known = sorted(PAPER_AUDITS.names())
        raise UnknownNameError(f"no audit for paper {paper!r}{suggest(str(paper), known)}; "
                               f"known: {', '.join(known)} (or all)")
    return list(PAPER_AUDITS.get(paper).claims())


def papers(name: str) -> list[str]:
    """``[name]`` for a registered paper, every registered paper (by name) for ``"all"``."""
    if name == "all":
        return sorted(PAPER_AUDITS.names())
    claims_of(name)  # validates the name
    return [name]


def run_audit(paper: str = "sdgt", samples: Count = 20000, seed: Seed = 0, iterations: Iterations = 40,
              only: list[str] | None = None, prove: Level = 1) -> Verdicts:
    """Audit every claim of ``paper`` (or those whose id starts with one of ``only``), each verdict
    with its evidence at the ``prove`` level (:func:`audit_claim`): the reports, a list that a
    notebook shows as one table (:class:`~fedbound.theory.verdicts.Verdicts`)."""
    every = claims_of(paper)
    for prefix in only or ():
        require(isinstance(prefix, str) and prefix.strip() != "",
                f"only: a claim id prefix must be a non-empty string, got {prefix!r}")
    chosen = [c for c in every if not only or any(c.id.startswith(o) for o in only)]
    if only and not chosen:
        raise _no_claim(paper, only, every)
    reports = [audit_claim(c, samples=samples, seed=seed, iterations=iterations, prove=prove)
               for c in chosen]
    by_id = {c.id: r for c, r in zip(chosen, reports)}
    for claim, report in zip(chosen, reports):
        corrected = getattr(claim, "corrected", "")
        if report.verdict != "fails" or not corrected:
            continue
        if corrected not in by_id:
            reading = [c for c in every if c.id == corrected]
            require(reading, f"claim {claim.id}: its corrected reading {corrected!r} is not a claim "
                             f"of {paper}")
            by_id[corrected] = audit_claim(reading[0], samples=samples, seed=seed, iterations=iterations,
                                           prove=prove)
        if by_id[corrected].verdict == "holds":
            report.severity = "typo"
    return Verdicts(reports)


def _no_claim(paper: str, only: list[str], claims) -> UnknownNameError:
    """The error for prefixes ``only`` that match none of ``claims``: the closest of the claims'
    groups (an id's first part, ``thm3`` of ``thm3.rate``) and the groups there are."""
    groups = list(dict.fromkeys(c.id.split(".")[0] for c in claims))
    return UnknownNameError(f"no claim of {paper} matches {', '.join(only)}{suggest(only[0], groups)} "
                            f"(the claims' ids start with {listing(groups)})")


def run_audits(paper: str = "all", samples: Count = 20000, seed: Seed = 0, iterations: Iterations = 40,
               only: list[str] | None = None, prove: Level = 1) -> Audits:
    """{paper: reports} for one paper or ``"all"`` (:class:`~fedbound.theory.verdicts.Audits`);
    with ``only``, papers without a matching claim are skipped (an error if no paper has one)."""
    out = {}
    for name in papers(paper):
        if only and not any(c.id.startswith(o) for c in claims_of(name) for o in only):
            continue
        out[name] = run_audit(name, samples=samples, seed=seed, iterations=iterations, only=only,
                              prove=prove)
    if not out:
        raise _no_claim(paper, only or [""], [c for name in papers(paper) for c in claims_of(name)])
    return Audits(out)


#: the old dict of papers (name -> audit module), now the registry :data:`fedbound.papers.PAPERS`
__getattr__ = renamed_attributes(__name__, {"PAPERS": "fedbound.papers:PAPERS"})
