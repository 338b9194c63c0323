"""What each golden number is, and so how closely another run must give it back (issue 31).

A golden number is compared with the tolerance of its *class*, never with one blanket tolerance:
the golden results exist to catch a change of behaviour, and must not catch a change of CPU (other
SIMD widths, BLAS kernels, libm implementations and summation orders change the last bits of every
float64 operation and the last ~7 digits of float32 ones).

Every number of golden.json.gz belongs to exactly one class through the first rule of
:data:`RULES` whose pattern matches its path ("section/case/field/..." with list indices dropped;
``*`` matches any text, everything else literally). A number that no rule classifies is refused by
tests/golden/test_golden.py (``test_every_golden_number_has_a_class``), so a new golden field
cannot be added without saying what it is.

Two numbers a, b of a class agree when

    |a - b| <= rtol * max(|a|, |b|) + floor + scaled * s

where ``s`` is the magnitude the value is measured against: the largest magnitude of the list the
value belongs to (``scale="list"``: rounding noise around 0 in a column of O(1) values, such as
f - f* at the optimum), or the largest magnitude of named sibling fields of the same object
(``scale=("mean", ...)``: a standard error is accurate relative to the mean it is the error of).
Strings, booleans and None compare exactly; so does every number of class ``exact`` (integers that
the code computes as integers: counts, decisions). Non-finite values compare exactly (nan with nan).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

#: float64 unit roundoff
EPS64 = 2.0 ** -52
#: float32 unit roundoff
EPS32 = 2.0 ** -23


@dataclass(frozen=True)
class Tolerance:
    """One class of golden numbers: its comparison and the reason for it (module doc)."""

    name: str
    reason: str
    rtol: float = 0.0
    floor: float = 0.0
    scaled: float = 0.0
    scale: str | tuple[str, ...] = "list"
    exact: bool = False
    #: compared by a validation of the new output instead of its digits (test_golden.py)
    validated: bool = False

    def agree(self, new: float, old: float, s: float) -> bool:
        if self.exact:
            return new == old
        return abs(new - old) <= self.rtol * max(abs(new), abs(old)) + self.floor + self.scaled * s

    def allowed(self, new: float, old: float, s: float) -> float:
        """The largest |new - old| the class accepts for these values."""
        return self.rtol * max(abs(new), abs(old)) + self.floor + self.scaled * s


CLASSES = {t.name: t for t in [
    Tolerance(
        "exact", exact=True,
        reason="an integer the code computes as an integer (a count, a round, an integer decision "
               "certified by enumeration): the same on every machine"),
    Tolerance(
        "closed_form", rtol=1e3 * EPS64, scaled=1e3 * EPS64,
        reason="a closed form or an exact analysis evaluated once in float64 (lambdified sympy, a "
               "linear solve, an eigenvalue of a small matrix): a few ulp per operation, a few "
               "hundred operations; measured across kernels: <= 2e-16 relative (theory), <= 7e-15 "
               "(fixed points). Relative 2.2e-13 plus the same times the list's magnitude for "
               "entries that cancel to ~0"),
    Tolerance(
        "eigenvalue", rtol=1e3 * EPS64, floor=1e-13,
        reason="a spectral measure of a fixed doubly stochastic W (entries <= 1, n <= 100) from a "
               "backward-stable eigensolver: absolute error ~ n eps ||W|| <= 1e-13, so the 0 of a "
               "complete graph comes out as 1e-16 +- 1e-16 (measured: 4e-16 vs 8e-16 across "
               "kernels); closed_form's relative 2.2e-13 plus an absolute floor of 1e-13"),
    Tolerance(
        "stationary_solve", rtol=1e-8,
        reason="the exact stationary second moments of a linear recursion whose spectral radius is "
               "1 - 5e-5 (SD-GT's noise floor at gamma_bar): a linear solve of condition "
               "~1/(1 - rho) = 2e4..1e5 turns float64 rounding into ~1e-11 relative (measured: "
               "1.2e-9 across kernels); relative 1e-8, and the ratio to the prediction the same"),
    Tolerance(
        "float64_run", rtol=1e-10, scaled=1e-12,
        reason="an iterate or metric of a float64 run of <= 20 rounds x <= 8 local steps on problems "
               "of condition <= 1e2 (adaptive methods divide by sqrt(v) + tau with tau >= 1e-3): "
               "rounding of 1e-16 per operation, reordered by other SIMD widths and BLAS kernels, "
               "grows to <= 1e-12 relative (measured: 8e-13 for the MLP runs, 4e-14 otherwise); "
               "relative 1e-10, and 1e-12 of the list's magnitude for values that cancel "
               "(f - f* near the optimum)"),
    Tolerance(
        "float64_zero", rtol=1e-10, floor=1e-20,
        reason="a squared distance between clients that exact averaging makes 0 (AFGA/CAFGA "
               "consensus after a full average, the closed loop's Gamma estimate in its first "
               "round): rounding leaves (1e-16 |x|)^2 ~ 1e-32 with iterates of size O(1), which any "
               "CPU may change by 100 %; a real disagreement after one local step of size "
               ">= 1e-6 is >= 1e-12. Equal when both are below 1e-20, else float64_run's 1e-10"),
    Tolerance(
        "float64_difference", scaled=1e-9, scale=("spectral_radius",),
        reason="a difference of two float64 quantities that agree to 11 digits (a measured "
               "contraction factor fitted over 200 rounds minus the exact operator's spectral "
               "radius, and its measurement error): accurate to ~1e-12 absolute, i.e. 0.5 of "
               "itself; compared absolutely, to 1e-9 of the factors it is the difference of"),
    Tolerance(
        "float64_near_fixed_point", rtol=1e-5,
        reason="a distance of float64 iterates of size O(1) to the exact fixed point after 200 "
               "rounds (5.6e-8), and its ratio to the predicted distance: the iterates' rounding, "
               "1e-15 to 1e-13 absolute after 200 rounds, is up to 2e-6 of the distance (measured "
               "across kernels: 2.4e-8); relative 1e-5"),
    Tolerance(
        "statistic", rtol=1e-10, scaled=1e-9, scale=("mean", "predicted"),
        reason="a Monte-Carlo statistic of float64 runs whose spread is ~1e-6 of its mean (a "
               "standard error, an interval end): the cancellation in a variance multiplies float64 "
               "rounding by mean/spread (up to 1e6 here, measured 2.2e-10 relative); compared to "
               "1e-9 of the mean (or the predicted value) it is about, plus 1e-10 relative"),
    Tolerance(
        "decay_fit", rtol=1e-6, scaled=1e-6, scale=("slope",),
        reason="a least-squares fit of log distances that decay over 200 rounds to 1e-8 of their "
               "start (slope, intercept, their errors and intervals): the last points carry float64 "
               "rounding of ~1e-15 absolute, i.e. ~1e-7 in their logarithm (measured across "
               "kernels: intercept 3.2e-8, stderr 1.6e-7 relative); relative 1e-6, and 1e-6 of the "
               "slope for an interval end"),
    Tolerance(
        "float32_run", rtol=1e-5, scaled=1e-6,
        reason="a float32 run (the CLI's default) of <= 8 rounds: float32 rounding 6e-8 per "
               "operation, changed by other SIMD widths and kernels, grows to ~1e-6 relative "
               "(measured: 1.2e-6 with AVX disabled); relative 1e-5 plus 1e-6 of the list's "
               "magnitude"),
    Tolerance(
        "float32_zero", rtol=1e-5, floor=1e-10,
        reason="a squared distance between clients that a complete gossip step makes 0, in float32: "
               "rounding leaves (6e-8 |x|)^2 ~ 1e-15 and more after a few rounds; equal when both "
               "are below 1e-10, else float32_run's 1e-5"),
    Tolerance(
        "solver", rtol=1e-5, scaled=1e-5,
        reason="the output of an interior-point solver (Clarabel's SDP for PEP, its geometric program "
               "for the controller): accurate to the solver's tolerance, not to the last digit "
               "(measured: 1.1e-7 relative across kernels for PEP worst cases); relative 1e-5, the "
               "comparison slack fedbound.pep.certificate.RTOL already uses; the certificate "
               "(status, duality gap, replay) is checked instead of the digits"),
    Tolerance(
        "solver_difference", scaled=1e-5, scale=("objective",),
        reason="a difference of a solver's output and a closed form (the integer plan's objective "
               "minus the relaxation's optimal value): accurate to the solver's tolerance of the "
               "objective, compared to 1e-5 of the objective"),
    Tolerance(
        "solver_zero", floor=1e-6,
        reason="a quantity an interior-point solver makes 0 up to its feasibility tolerance "
               "(a constraint's largest violation at the solver's point): equal when both are "
               "below 1e-6"),
    Tolerance(
        "search_maximum", rtol=1e-9, scaled=1e-12,
        reason="the largest ratio lhs/rhs a seeded search found (random points, corners, "
               "differential evolution, Powell): a closed form at the best point; where the claim "
               "is at equality over a region the point may move with rounding (see location) but "
               "the value does not (measured: <= 1e-12 relative across kernels)"),
    Tolerance(
        "location", rtol=1e-6, scaled=1e-9,
        reason="a coordinate of the point where a search found its largest ratio. Where the ratio is "
               "flat (a claim at equality over a region, a ridge, or a smooth maximum that Powell "
               "locates only to the square root of its ftol) rounding decides where the search "
               "stops, so the point is not a property of the code: for a sampled claim the new "
               "point is validated instead (re-evaluated from its unit-cube coordinates, it must "
               "give the recorded largest ratio: test_golden.validate_audits); a point of a claim "
               "that evaluates itself is compared at the search's resolution, 1e-6 relative",
        validated=True),
    Tolerance(
        "sample_fraction", floor=1.0 / 400 + 1e-12,
        reason="the fraction of the audit's 400 seeded random samples that violate a claim: the "
               "draws are the same on every CPU; a sample on the claim's boundary may fall either "
               "side by rounding, so the fraction may move by one sample (1/400)"),
    Tolerance(
        "lower_bound_search", validated=True,
        reason="a PEP lower bound: the value of an explicit quadratic instance found by a random "
               "start + polish search, which another CPU may end in another local optimum (2-6 % "
               "apart); compared by validating the instance instead of its digits: every condition "
               "of the function class holds at it, its metric equals the reported value (1e-9), it "
               "does not exceed the certified worst case (solver tolerance), and it has not "
               "collapsed (>= 0.9 x the recorded value: a local optimum, not a regression)"),
]}

#: (pattern, class) in order; the first pattern matching a number's path classifies it
RULES: list[tuple[str, str]] = [
    # ---- the audits (cases.audits) -------------------------------------------------------------
    ("audits/*/verdict", "exact"),
    ("audits/pep/*/violation_ratio", "solver"),
    ("audits/*/violation_ratio", "search_maximum"),
    ("audits/*/random_violation_fraction", "sample_fraction"),
    ("audits/*/worst/rho[*", "eigenvalue"),
    ("audits/*/worst/*", "location"),
    # ---- PEP certificates -------------------------------------------------------------------------
    ("pep/*/worst_case", "solver"),
    ("pep/*/lower_bound", "lower_bound_search"),
    ("pep/*/theory", "closed_form"),
    ("pep/*/verdict", "exact"),
    # ---- the controller's plan and closed loop ----------------------------------------------------------
    ("control/plan/continuous/max_violation", "solver_zero"),
    ("control/plan/continuous/*", "solver"),
    ("control/plan/lower_bound", "solver"),
    ("control/plan/gap", "solver_difference"),
    ("control/plan/certificate/*", "exact"),
    ("control/plan/*", "closed_form"),
    ("control/closed_loop/rounds/Gamma_hat", "float64_zero"),
    ("control/closed_loop/rounds/K_continuous", "solver"),
    ("control/closed_loop/rounds/p_continuous", "solver"),
    ("control/closed_loop/rounds/lower_bound", "solver"),
    ("control/closed_loop/config/*", "closed_form"),
    ("control/closed_loop/settings/*", "closed_form"),
    ("control/closed_loop/*", "float64_run"),
    # ---- the SD-GT verify checks ------------------------------------------------------------------------
    ("verify/*/setting/*", "closed_form"),
    ("verify/linear-rate*/details/abs_difference", "float64_difference"),
    ("verify/linear-rate*/details/measurement_error", "float64_difference"),
    ("verify/fixed-point*/measured", "float64_near_fixed_point"),
    ("verify/fixed-point*/ratio", "float64_near_fixed_point"),
    ("verify/fixed-point*/global_distance", "float64_near_fixed_point"),
    ("verify/fixed-point*/max_client_distance", "float64_near_fixed_point"),
    ("verify/*/slope/*", "decay_fit"),
    ("verify/noise-floor*/results/measured", "stationary_solve"),
    ("verify/noise-floor*/results/ratio", "stationary_solve"),
    ("verify/noise-floor*/details/measured", "stationary_solve"),
    ("verify/noise-floor*/details/stationary/*", "stationary_solve"),
    ("verify/*/rhs_halfwidth", "statistic"),
    ("verify/*/stderr", "statistic"),
    ("verify/*/low", "statistic"),
    ("verify/*/high", "statistic"),
    ("verify/*", "float64_run"),
    # ---- fixed points (exact linear algebra of the round map) ----------------------------------------------
    ("fixed_points/*", "closed_form"),
    # ---- runs --------------------------------------------------------------------------------------------------
    ("runs/*/metrics/consensus_inter", "float64_zero"),
    ("runs/*/metrics/consensus_intra", "float64_zero"),
    ("runs/*/comm/energy*", "float64_run"),
    ("runs/*/comm/*", "exact"),
    ("runs/*/K", "exact"),
    ("runs/*", "float64_run"),
    ("python_runs/*/comm/energy*", "float64_run"),
    ("python_runs/*/comm/*", "exact"),
    ("python_runs/*/K", "exact"),
    ("python_runs/*", "float64_run"),
    ("batched/spec/cell", "exact"),
    ("batched/*", "float64_run"),
    ("cli_runs/*--float64*", "float64_run"),
    ("cli_runs/*/consensus_inter", "float32_zero"),
    ("cli_runs/*/consensus_intra", "float32_zero"),
    ("cli_runs/*", "float32_run"),
    # ---- theory at stored constants -------------------------------------------------------------------------------
    ("theory/*", "closed_form"),
]


def _compile(pattern: str) -> re.Pattern:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")) + r"\Z", re.S)


_COMPILED = [(_compile(p), CLASSES[c]) for p, c in RULES]


def normalize(path: str) -> str:
    """A number's path with list indices dropped ("runs/x/loss[3]" -> "runs/x/loss")."""
    return re.sub(r"\[\d+\]", "", path)


def classify(path: str) -> Tolerance | None:
    """The class of the number at ``path`` (first matching rule), or None when no rule matches."""
    key = normalize(path)
    for pattern, tolerance in _COMPILED:
        if pattern.match(key):
            return tolerance
    return None
