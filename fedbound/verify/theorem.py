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
   Monte-Carlo mean with a Student-t interval (:func:`fedbound.stats.mean_ci`): for ``last`` and
   ``average`` the per-seed measure's mean, for ``min`` (``min_t E[...]``) the minimum over the
   window of the per-round means and of their interval ends;
3. per variant, the bound at every horizon is compared (:func:`fedbound.verify.check.bound_check`):
   ``holds`` when the whole interval lies below the bound at every horizon, ``violated`` when at
   some horizon the whole interval lies above it, ``inconclusive`` otherwise; ``not applicable``,
   naming the conditions, when the run is outside the theorem's step conditions or predicates, so
   that a run the theorem says nothing about never reads as a confirmation.

A claim about an expectation is never decided by one realization: with one seed the interval has
zero width, which is right only for deterministic runs (full participation, no noise); the checks
refuse ``seeds=1`` for a stochastic run.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from fedbound import validate
from fedbound.algorithms import registry as algorithms
from fedbound.errors import require
from fedbound.stats import Estimate, mean_ci
from fedbound.theory import adapters, get
from fedbound.verify.check import Check, bound_check, not_applicable


def horizons_up_to(rounds: int, count: int = 8) -> list[int]:
    """About ``count`` horizons from 1 to ``rounds``, spaced geometrically (distinct integers)."""
    rounds = validate.integer("rounds", rounds, low=1)
    return sorted({int(round(t)) for t in np.geomspace(1, rounds, count)} | {rounds})


def _deterministic(task, sigma: float, spec, options: dict) -> bool:
    """A run whose every seed gives the same numbers: no noise and full participation."""
    sampled = any(options.get(name) is not None for name in
                  ("clients_per_round", "clients_per_subnet", "participation"))
    return sigma == 0 and not getattr(task, "samples_gradients", False) and not sampled


def measured(result, per_round: np.ndarray, horizons: Sequence[int],
             confidence: float = 0.95) -> Estimate:
    """The result's measure at each horizon from per-round values of each seed (``per_round``:
    shape (seeds, rounds + 1)), as an Estimate over the horizons (module doc, step 2)."""
    measure = result.measure
    if measure.over == "min":
        per = mean_ci(per_round, confidence)
        pick = lambda a: np.array([measure.of(a, T) for T in horizons])   # noqa: E731
        return Estimate(pick(per.mean), pick(per.stderr), pick(per.low), pick(per.high),
                        per.samples, confidence)
    values = np.stack([measure.of(per_round.T, T) for T in horizons], axis=-1)   # (seeds, H)
    return mean_ci(values, confidence)


def largest_step(result, algorithm: str, task, network, options: dict, step_option: str = "lr",
                 constants: dict | None = None) -> float:
    """The largest value of ``step_option`` (an option of ``algorithm`` that the paper's adapter
    maps to the result's step variable) that every variant of ``result`` admits at the other
    constants of the run: the step where the theorem is at its strongest."""
    trial = {**options, step_option: 1.0}
    known = {**adapters.constants(task, network, algorithm, trial), **(constants or {})}
    caps = []
    for variant in result.variants.values():
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


def theorem_checks(result_id: str, algorithm: str, task, network=None, options: dict | None = None,
                   *, sigma: float = 0.0, rounds: int = 100, seeds: int = 20,
                   horizons: Sequence[int] | None = None, variants: Sequence[str] | None = None,
                   constants: dict | None = None, confidence: float = 0.95,
                   step_option: str | None = None) -> list[Check]:
    """``result_id``'s bound against ``algorithm`` run on ``task`` (over ``network`` where it
    takes one) with ``options`` (registry names) and gradient noise ``sigma``: one
    :class:`~fedbound.verify.check.Check` per variant (default: the result's default variant;
    ``"all"``: every variant), over ``horizons`` (default: :func:`horizons_up_to` ``rounds``),
    Monte-Carlo over ``seeds`` (module doc). ``constants`` adds the theorem's constants a run does
    not fix. ``step_option``: an option left out (or None) takes :func:`largest_step`."""
    result = get(result_id)
    require(result.measure is not None,
            f"{result_id} does not say what it bounds in terms of a run; declare its measure "
            f"(fedbound.theory.statement.Measure) to check it against runs")
    spec = algorithms.get(algorithm)
    options = {k: v for k, v in dict(options or {}).items() if v is not None}
    if step_option is not None and step_option not in options:
        sigma_task = task.with_noise(sigma) if sigma > 0 else task
        partial = {k: v for k, v in spec.check({**options, step_option: 1.0}).items()}
        options[step_option] = largest_step(result, algorithm, sigma_task, network, partial,
                                            step_option, constants)
    checked = spec.check(options)
    sigma = validate.number("sigma", sigma, low=0.0, high=1e100)
    seeds = validate.integer("seeds", seeds, low=1, high=100_000)
    confidence = validate.number("confidence", confidence, low=0.0, high=1.0, low_open=True,
                                 high_open=True)
    horizons = horizons_up_to(rounds) if horizons is None else sorted(
        {validate.integer("horizon", T, low=1, high=1_000_000) for T in horizons})
    require(len(horizons) >= 1, "give at least one horizon")
    require(seeds >= 2 or _deterministic(task, sigma, spec, checked),
            f"{result_id} bounds an expectation and this run is random (noise or sampling): give "
            f"seeds >= 2 for a Monte-Carlo interval, never one realization")
    noisy = task.with_noise(sigma) if sigma > 0 else task
    run_constants = {**adapters.constants(noisy, network, algorithm, checked), **(constants or {})}
    names = list(result.variants) if variants == "all" else list(variants or [result.default_variant])
    T = np.asarray(horizons, dtype=float)
    measure = result.measure
    length = max(measure.rounds(h) for h in horizons)

    from fedbound.sweep import runs   # the Monte-Carlo engine (batched seeds, Ray inside `using`)

    outputs = runs(lambda seed: algorithms.build(algorithm, noisy, network, seed=seed, **checked),
                   length, seeds=seeds).stack()
    per_round = np.asarray(outputs[measure.quantity], dtype=float)
    require(np.all(np.isfinite(per_round)),
            f"{measure.describe()} is not known for this task ({type(task).__name__}: "
            f"{'x*' if measure.quantity == 'dist2' else 'f*'} unknown); use a task with exact constants")
    estimate = measured(result, per_round, horizons, confidence)
    details = {"result": result_id, "algorithm": algorithm, "measure": measure.describe(),
               "horizons": horizons, "seeds": seeds, "sigma": sigma, "options": checked,
               "constants": run_constants}
    checks = []
    for variant in names:
        evaluation = result.evaluate(variant, **{**run_constants, result.rounds: T})
        failing = [name for name, ok in {**evaluation.conditions_hold, **evaluation.predicates}.items()
                   if not np.all(ok)]
        if failing:
            checks.append(not_applicable(result_id, failing, variant=variant, **details))
            continue
        checks.append(bound_check(result_id, estimate, evaluation.bound, variant=variant,
                                  theorem_applies=True, **details))
    return checks


__all__ = ["theorem_checks", "largest_step", "horizons_up_to", "measured"]
