r"""A theorem's bound against measured runs, for any registered theorem and algorithm: the check
behind ``fedbound verify PAPER THEOREM``, :func:`fedbound.testing.assert_matches_theory` and the
plugins' verification.

Given a result that declares what it bounds (its :class:`~fedbound.theory.statement.Measure`, e.g.
``min_{0 <= t <= T-1} E||grad f(x_t)||^2``), an algorithm its paper's adapter covers, a task and
the algorithm's options:

1. the theorem's constants come from the run, through the paper's adapter
   (:func:`fedbound.theory.adapters.constants`: L, mu, sigma^2, heterogeneity, n, the step size,
   K, ...), plus the ``constants`` a run does not fix (the paper's absolute constants);
2. the algorithm runs for ``seeds`` seeds (batched where the round allows it,
   :func:`fedbound.sweep.runs`), and the expectation of the measure at each horizon T is a
   Monte-Carlo mean with a Student-t interval within [0, inf) (:func:`fedbound.stats.mean_ci`: every
   measure is non-negative): for ``last`` and ``average`` the per-seed measure's mean, for ``min``
   (``min_t E[...]``) the minimum over the window of the per-round means and of their interval ends;
3. per variant, the bound at every horizon is compared (:func:`fedbound.verify.check.bound_check`),
   and read against the result's reference and the measurement (``details["reading"]``, a
   :class:`~fedbound.theory.reading.Reading`: vacuous, tight):
   ``holds`` when the whole interval lies below the bound at every horizon, ``violated`` when at
   some horizon the whole interval lies above it, ``inconclusive`` otherwise; ``not applicable``,
   naming the conditions, when the run is outside the theorem's step conditions or predicates, so
   that a run the theorem says nothing about never reads as a confirmation.

A claim about an expectation is never decided by one realization: with one seed the interval has
zero width, which is right only for deterministic runs (full participation, no noise); the checks
refuse ``seeds=1`` for a stochastic run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Sequence

import numpy as np

from fedbound import validate
from fedbound.algorithms import registry as algorithms
from fedbound.algorithms.base import Algorithm
from fedbound.argtypes import Count, NonNegative
from fedbound.display import box, brief, details, fields, plot, sample_rows, table
from fedbound.errors import require
from fedbound.network import Network
from fedbound.stats import Estimate, mean_ci
from fedbound.tasks import Task
from fedbound.theory import adapters, get
from fedbound.theory.result import Result
from fedbound.theory.statement import Measure
from fedbound.verify.check import Check, bound_check, not_applicable


def horizons_up_to(rounds: int, count: Count = 8) -> list[int]:
    """About ``count`` horizons from 1 to ``rounds``, spaced geometrically (distinct integers)."""
    rounds = validate.integer("rounds", rounds, low=1)
    return sorted({int(round(t)) for t in np.geomspace(1, rounds, count)} | {rounds})


def _deterministic(task, sigma: float, options: dict) -> bool:
    """A run whose every seed gives the same numbers: no noise and full participation."""
    sampled = any(options.get(name) is not None for name in
                  ("clients_per_round", "clients_per_subnet", "participation"))
    return sigma == 0 and not getattr(task, "samples_gradients", False) and not sampled


def measured(measure: Measure, per_round: np.ndarray, horizons: Sequence[int],
             confidence: float = 0.95) -> Estimate:
    """``measure`` at each horizon from the per-round values of each seed (``per_round``: shape
    (seeds, rounds + 1)), as an Estimate over the horizons (module doc, step 2)."""
    if measure.over == "min":
        per = mean_ci(per_round, confidence, nonnegative=True)
        pick = lambda a: np.array([measure.of(a, T) for T in horizons])   # noqa: E731
        return Estimate(pick(per.mean), pick(per.stderr), pick(per.low), pick(per.high),
                        per.samples, confidence, per.method)
    values = np.stack([measure.of(per_round.T, T) for T in horizons], axis=-1)   # (seeds, H)
    return mean_ci(values, confidence, nonnegative=True)


@dataclass(frozen=True)
class Comparison:
    """A theorem's bound next to measured runs: the ``result``, the ``measure`` compared, the
    ``horizons`` T, the ``constants`` of the run, the ``measured`` Estimate per horizon and each
    variant's :class:`~fedbound.theory.evaluation.Evaluation` at those horizons."""

    result: Result
    measure: Measure
    horizons: np.ndarray
    constants: dict
    measured: Estimate
    evaluations: dict

    def __repr__(self) -> str:
        return brief("Comparison", self.result.id, measure=self.measure.name, horizons=self.horizons,
                     seeds=self.measured.samples, variants=list(self.evaluations))

    def _repr_html_(self) -> str:
        """The measured mean with its interval and each variant's bound against the horizons T,
        and the conditions of each variant that fail at the run's constants."""
        series = {"measured": np.asarray(self.measured.mean, dtype=float)}
        series.update({f"bound [{v}]": self.bound(v) for v in self.evaluations})
        rows = [[int(t), *(series[k][i] for k in series)] for i, t in enumerate(self.horizons)]
        failing = [(f"fails in [{v}]", ", ".join(self.failing(v))) for v in self.evaluations if self.failing(v)]
        parts = [plot(self.horizons, series, bands={"measured": (self.measured.low, self.measured.high)},
                      xlabel="T", ylabel=self.measure.describe()),
                 table(["T", *series], [rows[i] for i in sample_rows(len(rows))], caption=self.measured.describe())]
        parts += [fields(failing)] if failing else []
        parts.append(details(f"{len(self.constants)} constants of the run",
                             [table(["constant", "value"], [[k, v] for k, v in self.constants.items()])]))
        return box(f"{self.result.id} against runs", parts, subtitle=self.measure.describe()).text

    def failing(self, variant: str) -> list[str]:
        """The step conditions and predicates of ``variant`` that fail at the run's constants."""
        ev = self.evaluations[self._compared(variant)]
        return [name for name, ok in {**ev.conditions_hold, **ev.predicates}.items()
                if not np.all(ok)]

    def _compared(self, variant: str) -> str:
        return validate.one_of("variant", variant, tuple(self.evaluations))

    def bound(self, variant: str) -> np.ndarray:
        """The bound of ``variant`` at every horizon."""
        return np.broadcast_to(np.asarray(self.evaluations[self._compared(variant)].bound, dtype=float),
                               self.horizons.shape)

    def check(self, variant: str, rtol: NonNegative = 1e-10, **details) -> Check:
        """The verdict for ``variant``: ``not applicable`` (naming the failing conditions) or the
        bound check at every horizon (:func:`fedbound.verify.check.bound_check`)."""
        failing = self.failing(variant)
        details = {"measure": self.measure.describe(), "horizons": self.horizons.tolist(),
                   "constants": self.constants, **details}
        if failing:
            return not_applicable(self.result.id, failing, variant=variant, **details)
        reading = self.evaluations[self._compared(variant)].reading(self.measured.mean)
        return bound_check(self.result.id, self.measured, self.bound(variant), variant=variant,
                           rtol=rtol, theorem_applies=True, reading=reading, **details)


def compare(result: Result, make: Callable[[int], Algorithm], constants: dict, horizons: Sequence[int],
            seeds: int | Sequence[int], *,
            variants: Sequence[str] | None = None, measure: Measure | None = None,
            confidence: float = 0.95, progress: bool = False) -> Comparison:
    """Run ``make(seed)`` for every seed (batched where the round allows,
    :func:`fedbound.sweep.runs`) as long as the horizons need, read ``measure`` (default: the
    result's own) and evaluate the bound of each of ``variants`` (default: the result's default
    one) at ``constants`` and every horizon."""
    measure = result.measure if measure is None else measure
    require(measure is not None,
            f"{result.id} does not say what it bounds in terms of a run; declare its measure "
            f"(fedbound.theory.statement.Measure) to check it against runs")
    T = np.asarray(sorted({validate.integer("horizon", t, low=1, high=1_000_000) for t in horizons}))
    require(T.size >= 1, "give at least one horizon")
    names = list(variants or [result.default_variant])
    evaluations = {v: result.evaluate(v, **{**constants, result.rounds: T.astype(float)}) for v in names}
    for v, ev in evaluations.items():
        require(ev.bound is not None, f"{result.id} ({v}) states no bound to compare with")

    from fedbound.sweep import runs   # the Monte-Carlo engine (batched seeds, Ray inside `using`)

    columns = runs(make, max(measure.rounds(int(t)) for t in T), seeds=seeds,
                   progress=progress).stack()
    per_round = np.asarray(columns[measure.quantity], dtype=float)
    require(np.all(np.isfinite(per_round)),
            f"{measure.describe()} is not known for these runs (x* or f* of the task unknown, or a "
            f"run diverged); use a task with exact constants")
    return Comparison(result, measure, T, dict(constants), measured(measure, per_round, T, confidence),
                      evaluations)


def largest_step(result: Result, algorithm: str, task: Task, network: Network | None, options: dict,
                 step_option: str = "lr",
                 constants: dict | None = None, variants: Sequence[str] | None = None) -> float:
    """The largest value of ``step_option`` (an option of ``algorithm`` that the paper's adapter
    maps to the result's step variable) that every variant of ``result`` (of ``variants``, when
    given: those compared) admits at the other constants of the run: the step where the theorem is
    at its strongest."""
    trial = {**options, step_option: 1.0}
    known = {**adapters.constants(task, network, algorithm, trial), **(constants or {})}
    caps = []
    for variant in (result.variant(v) for v in (variants or result.variants)):
        variables = {c.variable_name for c in variant.conditions}
        require(len(variables) == 1, f"{result.id} ({variant.name}): the largest step needs one step "
                                     f"variable, its conditions constrain {sorted(variables) or 'none'}")
        (variable,) = variables
        require(known.get(variable) == 1.0, f"{result.id}: the option {step_option} of {algorithm} "
                                            f"is not its step variable {variable}")
        cap, _ = result.max_step(variant.name, variable,
                                 **{k: v for k, v in known.items() if k != variable})
        caps.append(float(np.min(cap)))
    step = min(caps)
    require(np.isfinite(step) and step > 0, f"{result.id} admits no positive {step_option} at this "
                                            f"run's constants (largest: {step})")
    return step


def theorem_checks(result_id: str, algorithm: str, task: Task, network: Network | None = None,
                   options: dict | None = None, *, sigma: float = 0.0, rounds: Count = 100, seeds: int = 20,
                   horizons: Sequence[int] | None = None, variants: Sequence[str] | Literal["all"] | None = None,
                   constants: dict | None = None, confidence: float = 0.95,
                   step_option: str | None = None) -> list[Check]:
    """``result_id``'s bound against ``algorithm`` run on ``task`` (over ``network`` where it
    takes one) with ``options`` (registry names) and gradient noise ``sigma``: one
    :class:`~fedbound.verify.check.Check` per variant (default: the result's default variant;
    ``"all"``: every variant), over ``horizons`` (default: :func:`horizons_up_to` ``rounds``),
    Monte-Carlo over ``seeds`` (module doc). ``constants`` adds the theorem's constants a run does
    not fix. ``step_option``: an option left out (or None) takes :func:`largest_step` of the compared
    variants."""
    result = get(result_id)
    spec = algorithms.get(algorithm)
    options = {k: v for k, v in dict(options or {}).items() if v is not None}
    sigma = validate.number("sigma", sigma, low=0.0, high=1e100)
    seeds = validate.integer("seeds", seeds, low=1, high=100_000)
    confidence = validate.number("confidence", confidence, low=0.0, high=1.0, low_open=True,
                                 high_open=True)
    noisy = task.with_noise(sigma) if sigma > 0 else task
    names = list(result.variants) if variants == "all" else list(variants or [result.default_variant])
    if step_option is not None and step_option not in options:
        partial = spec.check({**options, step_option: 1.0})
        options[step_option] = largest_step(result, algorithm, noisy, network, partial,
                                            step_option, constants, names)
    checked = spec.check(options)
    require(seeds >= 2 or _deterministic(task, sigma, checked),
            f"{result_id} bounds an expectation and this run is random (noise or sampling): give "
            f"seeds >= 2 for a Monte-Carlo interval, never one realization")
    run_constants = {**adapters.constants(noisy, network, algorithm, checked), **(constants or {})}
    comparison = compare(
        result, lambda seed: algorithms.build(algorithm, noisy, network, seed=seed, **checked),
        run_constants, horizons_up_to(rounds) if horizons is None else horizons, seeds,
        variants=names, confidence=confidence)
    details = {"result": result_id, "algorithm": algorithm, "seeds": seeds, "sigma": sigma,
               "options": checked}
    return [comparison.check(v, **details) for v in names]


__all__ = ["theorem_checks", "compare", "Comparison", "largest_step", "horizons_up_to", "measured"]
