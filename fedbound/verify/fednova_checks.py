r"""FedNova's checks of ``fedbound verify fednova`` (seed 001_530825e753327090.txt; papers/fednova.md
4.3, 4.9, 4.12): Theorem 1 (97) [L612-L616] and Theorem 3 (147) [L817] against Monte-Carlo runs.

Each check runs on its own task (the task in its name; the CLI's ``--task`` options, --n, --d,
--seed, are used when ``--task`` names that task, else the check's defaults):

* ``thm1-quadratic``: heterogeneous quadratics f_i = 1/2 (x - b_i)^T H_i (x - b_i) (L, f*, beta^2,
  kappa^2 exact);
* ``thm1-lsq``: least squares (L, f*, beta^2, kappa^2 exact);
* ``thm1-mlp``: an MLP classifier on a Gaussian mixture (``mlp-gmm``), where fedbound knows neither
  L (Assumption 1 [L139]) nor kappa^2 (Assumption 3 [L149]): the checks are "not applicable" with
  that reason, and the measured average ||grad F||^2 of the runs is given in the details.

In each, four comparisons (seeds batched, Student-t intervals, :func:`fedbound.verify.theorem.theorem_checks`):
fednova.thm1 and fednova.thm3 for ``fednova`` with ``local_steps`` (default heterogeneous, tau_i =
1, 2, 3, 4, 1, ...); fednova.thm1 for ``fedavg`` with every client at the rounded mean of those
steps; fednova.thm2 (explicit: (10) with eps_opt = (97) [L169-L175]) for ``fedavg`` with
``local_steps``. What Theorem 1 bounds is (1/T) sum_{t<T} E||grad F~(x^(t,0))||^2 with F~ = sum_i
w_i F_i, Theorem 3 the same for F, Theorem 2 min_t E||grad F(x^(t,0))||^2; a run measures
||grad F||^2, so Theorem 1 is compared only where w = p (FedNova (12), or FedAvg with equal
||a_i||_1, (6) [L115-L116]) and is "not applicable" otherwise, while Theorem 2 is FedAvg's bound on
the true F with unequal steps (the chi^2 floor). Theorem 2's Delta = F~(x0) - F~_inf is bounded by
F~(x0) where every client loss is >= 0 (quadratic, lsq), which keeps the bound valid (it increases
with Delta; the check's details say so).

The constants come from the FedNova adapter (:mod:`fedbound.theory.fednova.adapter`), with
Assumption 3's pair chosen as beta^2 = ``beta2_scale`` x beta2_min and kappa^2 = kappa^2(beta^2)
(:meth:`fedbound.tasks.base.Task.kappa2`): on heterogeneous Hessians kappa^2 is infinite at beta2_min
itself (notes 4.12), so ``beta2_scale = 1`` makes the theorem not applicable, while any scale > 1
gives a finite pair for which Assumption 3 holds. Delta = F(x0) - f* (F~ = F where the theorem is
compared). The step ``lr`` defaults to the largest the theorem admits at those constants; a given
``lr`` outside (98)-(99) (or (152)) makes the check "not applicable", never "holds".
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Annotated

import numpy as np

from fedbound.algorithms import registry as algorithms
from fedbound.algorithms.options import LOCAL_STEPS, LR
from fedbound.argtypes import Count, NonNegative, Positive, Range
from fedbound.errors import require
from fedbound.registry import number_option
from fedbound.tasks import Task
from fedbound.theory import adapters, get
from fedbound.theory.fednova.adapter import assumption3
from fedbound.verify.check import Check, not_applicable
from fedbound.verify.registry import ROUNDS, SEEDS, SIGMA, VerifyCheck, on_task, register
from fedbound.verify.theorem import horizons_up_to, measured, theorem_checks

#: check name -> (task preset, default clients, default rounds, default seeds)
TASKS = {"thm1-quadratic": ("quadratic", 8, 100, 20), "thm1-lsq": ("lsq", 8, 100, 20),
         "thm1-mlp": ("mlp-gmm", 8, 20, 4)}
#: the comparisons of every check: (result, algorithm)
COMPARISONS = (("fednova.thm1", "fednova"), ("fednova.thm3", "fednova"), ("fednova.thm1", "fedavg"),
               ("fednova.thm2", "fedavg"))
#: the variants compared (default: every one); Theorem 2's printed form takes eps_opt as a constant
VARIANTS = {"fednova.thm2": ["explicit"]}
#: the results whose left side is the surrogate's gradient ||grad F~||^2 (a run measures ||grad F||^2)
SURROGATE = ("fednova.thm1",)
#: the task presets whose client losses are >= 0 by construction (1/2 (x-b_i)^T H_i (x-b_i),
#: ||A_i x - y_i||^2/(2m)), so that F~_inf >= 0 and Delta <= F~(x0)
NONNEGATIVE_LOSSES = ("quadratic", "lsq")
#: the default local steps tau_i = 1, 2, 3, 4, 1, ... (heterogeneous, FedNova's setting)
PATTERN = (1, 2, 3, 4)
#: the step of the runs where the theorem does not apply and no lr is given (no largest step to take)
FALLBACK_LR = 0.05
#: relative tolerance for w = p (the surrogate F~ is F)
WEIGHTS_RTOL = 1e-9

BETA2_SCALE = number_option("beta2_scale", "FedNova checks: beta^2 of Assumption 3 as this multiple of "
                            "the smallest admissible beta^2 (kappa^2 is infinite at 1 on heterogeneous "
                            "Hessians)", low=1.0, high=1e6, examples=(2.0, 10.0))


def _steps(local_steps, n: int) -> list[int]:
    """tau_i: the given local steps (one count or one per client) or the default pattern."""
    if local_steps is None:
        return [PATTERN[i % len(PATTERN)] for i in range(n)]
    values = np.atleast_1d(np.asarray(local_steps, dtype=np.int64)).ravel()
    require(values.size in (1, n), f"local_steps needs one count or one per client (n = {n}), got {values.size}")
    return np.broadcast_to(values, (n,)).tolist()


def _reasons(task, preset: str, result_id: str, algorithm: str, options: dict,
             beta2_scale: float) -> tuple[list[str], dict, dict]:
    """Why ``result_id`` does not apply to the runs (empty when it does), the constants a run does
    not fix (Delta, beta^2, kappa^2; module doc) and notes on how they were chosen."""
    reasons = []
    if task.L is None:
        reasons.append("Assumption 1 [L139] with a known L (this task has no global smoothness constant)")
    a3 = assumption3(task, algorithm, options)
    p = np.asarray(task.weights.detach().double().numpy())
    p = p / p.sum()
    surrogate_is_F = bool(np.allclose(a3["w"], p, rtol=WEIGHTS_RTOL, atol=0.0))
    if result_id in SURROGATE and not surrogate_is_F:
        reasons.append("w = p, so that the measured ||grad F||^2 is the bounded ||grad F~||^2 (F~ = sum_i "
                       "w_i F_i with w of (6) [L115-L116])")
    constants, notes = {}, {}
    if a3["beta2"] is None:
        reasons.append("Assumption 3 [L149] with known beta^2, kappa^2 (this task cannot compute them)")
    else:
        beta2 = float(beta2_scale * a3["beta2"])
        kappa2 = task.kappa2(a3["w"], beta2)
        if kappa2 is None or not math.isfinite(kappa2):
            reasons.append(f"Assumption 3 [L149] with a finite kappa^2 (inf at beta^2 = {beta2:.6g}: "
                           f"heterogeneous Hessians need beta^2 > beta2_min = {a3['beta2']:.6g})")
        else:
            constants.update(beta2=beta2, kappa2=float(kappa2))
            notes["assumption 3"] = (f"beta^2 = {beta2_scale:g} x beta2_min = {beta2:.6g}, kappa^2 = "
                                     f"kappa^2(beta^2) at the run's w (exact for this task)")
    if surrogate_is_F and task.f_star is not None:
        if not reasons:
            constants["Delta"] = adapters.initial_gap("FedNova", task)
    elif not surrogate_is_F and preset in NONNEGATIVE_LOSSES:
        # Theorem 2's Delta = F~(x0) - F~_inf <= F~(x0) = sum_i w_i f_i(x0) (every f_i >= 0): a valid,
        # looser Delta, as (97) increases with Delta
        losses = task.local_losses(task.points(task.x0)).detach().double().numpy()
        constants["Delta"] = float(np.dot(a3["w"], losses))
        notes["Delta"] = "F~(x0) = sum_i w_i f_i(x0) >= F~(x0) - F~_inf (every f_i >= 0): an upper bound"
    else:
        reasons.append("a known Delta = F~(x0) - F~_inf (the minimum of this task's F~ is unknown)")
    return reasons, constants, notes


def _not_applicable(result_id: str, algorithm: str, task, options: dict, reasons: list[str], *,
                    sigma: float, rounds: int, seeds: int, variants=None) -> list[Check]:
    """One "not applicable" Check per variant of ``result_id``, with the runs' measured average
    ||grad F||^2 at each horizon in the details (what the theorem would have been compared with)."""
    from fedbound.sweep import runs

    result = get(result_id)
    spec = algorithms.get(algorithm)
    checked = spec.check(options)
    noisy = task.with_noise(sigma) if sigma > 0 else task
    horizons = horizons_up_to(rounds)
    columns = runs(lambda seed: algorithms.build(algorithm, noisy, None, seed=seed, **checked),
                   max(result.measure.rounds(t) for t in horizons), seeds=seeds).stack()
    estimate = measured(result.measure, np.asarray(columns["grad_norm2"], dtype=float), horizons)
    details = {"result": result_id, "algorithm": algorithm, "seeds": seeds, "sigma": sigma,
               "options": checked, "measure": result.measure.describe(), "horizons": horizons,
               "measured_mean": np.asarray(estimate.mean).tolist(),
               "measured_interval": [np.asarray(estimate.low).tolist(), np.asarray(estimate.high).tolist()]}
    return [not_applicable(result_id, reasons, variant=v, **details) for v in variants or result.variants]


def compare(task: Task, preset: str, result_id: str, algorithm: str, local_steps: list[Count], *,
            lr: Positive | None = None, sigma: NonNegative, rounds: Count, seeds: Count,
            beta2_scale: Annotated[float, Range(1.0)]) -> list[Check]:
    """``result_id`` (the variants of :data:`VARIANTS`, default every one) against ``seeds`` runs of
    ``algorithm`` on ``task`` (of the task preset ``preset``; module doc)."""
    options = {"local_steps": local_steps, **({"lr": lr} if lr is not None else {})}
    noisy = task.with_noise(sigma) if sigma > 0 else task
    reasons, constants, notes = _reasons(noisy, preset, result_id, algorithm, {**options, "lr": lr or 1.0}, beta2_scale)
    if reasons:
        checks = _not_applicable(result_id, algorithm, task, {**options, "lr": lr or FALLBACK_LR}, reasons,
                                 sigma=sigma, rounds=rounds, seeds=seeds, variants=VARIANTS.get(result_id))
    else:       # without lr: the largest the compared variants admit
        checks = theorem_checks(result_id, algorithm, task, None, options, sigma=sigma, rounds=rounds,
                                seeds=seeds, variants=VARIANTS.get(result_id, "all"), constants=constants,
                                step_option="lr")
    for c in checks:         # the algorithm in the check's name: one result is compared with two
        c.name = f"{result_id} ({algorithm})"
        c.details.update(notes)
    return checks


def _run(problem, *, sigma, rounds, seeds, beta2_scale, lr=None, local_steps=None):
    """Every comparison of :data:`COMPARISONS` on the problem's task (module doc)."""
    task, preset = problem.task, problem.task_name
    steps = _steps(local_steps, task.n)
    equal = [max(1, round(float(np.mean(steps))))] * task.n
    checks = []
    for result_id, algorithm in COMPARISONS:
        tau = equal if (algorithm, result_id) == ("fedavg", "fednova.thm1") else steps
        checks += compare(task, preset, result_id, algorithm, tau, lr=lr, sigma=sigma, rounds=rounds,
                          seeds=seeds, beta2_scale=beta2_scale)
    setting = {"task": preset, "n": task.n, "d": task.d, "local_steps": steps,
               "local_steps (fedavg, Theorem 1)": equal,
               "lr": f"the largest admitted (or {FALLBACK_LR} where none)" if lr is None else lr,
               "sigma": sigma, "rounds": rounds, "seeds": seeds, "beta2_scale": beta2_scale}
    return setting, checks


def _options(name: str) -> tuple:
    _, _, rounds, seeds = TASKS[name]
    lr = replace(LR, required=False, help="FedNova checks: the client learning rate eta (default: the "
                 "largest the theorem admits at the run's constants)")
    steps = replace(LOCAL_STEPS, help="FedNova checks: tau_i for fednova (one count or one per client; "
                    "default 1, 2, 3, 4, 1, ...); fedavg takes their rounded mean")
    return (lr, steps, replace(SIGMA, default=0.3), replace(ROUNDS, default=rounds),
            replace(SEEDS, default=seeds), replace(BETA2_SCALE, default=2.0))


_SUMMARIES = {
    "thm1-quadratic": "Theorems 1 and 3 (97), (147) vs Monte-Carlo runs of fednova and fedavg on heterogeneous "
                      "quadratics (average ||grad F||^2)",
    "thm1-lsq": "Theorems 1 and 3 vs Monte-Carlo runs of fednova and fedavg on least squares",
    "thm1-mlp": "Theorems 1 and 3 on an MLP (mlp-gmm): not applicable (L and kappa^2 unknown), measured "
                "average ||grad F||^2 in the details",
}
_BASE = VerifyCheck("fednova.thm1", "", _run, tasks=("quadratic", "lsq", "mlp-gmm"))
for _name, _summary in _SUMMARIES.items():
    _preset, _n, _, _ = TASKS[_name]
    register(replace(on_task(_BASE, _preset, _name.partition("-")[2], task_options={"n": _n}),
                     summary=_summary, options=_options(_name)))
