r"""``fedbound verify fedada2``: FedAda2's Theorem 20 against Monte-Carlo runs of ``fedada2``
(Algorithm 2: server AdaGrad SU + SM3-II clients; seed 004_a1d7c636af01c22e.txt [L842-L1052],
papers/fedada2.md 4.9), through :func:`fedbound.verify.registry.theorem_check` and FedAda2's adapter
(:mod:`fedbound.theory.fedada2.adapter`).

The check ``fedada2.thm20`` runs on ``--task`` (quadratic by default; lsq, robust and the MLP
classifiers mlp-gmm, mlp-digits) and compares min_{0 <= t <= T-1} ||grad f(x_t)||^2 with every
variant of the bound (16 switch variants, printed and rederived among them). Defaults follow the
notes' numerical set-up (4.9): K = 3 local steps, client eps = 0.1, eps_s = 1e-3, tau = 1e-2, server
eta = 1, 25 rounds, client eta_l = 0.1 <= T^-1/2 at every horizon (the rederived variant's step
condition, Corollary 23 case A [L1075-L1118]), full participation and no noise (the theorem assumes
full-batch local gradients [L128, L913]: the runs are deterministic, and the seeds agree).

Constants the task does not know exactly:

* quadratic and lsq: A2 (|grad_j F_i| <= G) fails on the whole space (affine gradients), but the
  proof evaluates gradients only at the points the run visits [L886-L1052]. With z = 1 every SM3-II
  step moves each coordinate by at most eta_l (v_k(j) >= g_k(j)^2), and Lemma 16's Cauchy-Schwarz
  bounds every server step by eta sqrt((1 - b~1)/(1 + b~1)) per coordinate whatever the Delta's
  [L778-L794]; so up to horizon T every visited point lies in the l_inf box of radius R = T eta
  sqrt((1 - b~1)/(1 + b~1)) + K eta_l around x_0, and G := max_{i,j} (|grad_j F_i(x_0)| + R
  sum_k |H_i[j, k]|) bounds the gradients there (:func:`box_gradient_bound`, at the largest horizon:
  conservative at the smaller ones). The check is conditional on this reading of A2 (stated in its
  details). With a delay z > 1 the steps are not bounded by eta_l [L1510]: not applicable.
* robust: G_inf = 1 and L = 2 exactly (the task's own constants).
* mlp-gmm, mlp-digits: neither G (A2) nor L (A1) is known for the MLP, and the cross-entropy's
  gradients are not affine, so no box bound follows: "not applicable" with that reason.
* a task with gradient noise or per-client weights (the adapter's refusals): "not applicable" with
  the adapter's reason.
* partial participation (``clients_per_round`` < n): Theorem 20 holds for every sampling sequence
  [L110], i.e. it bounds min_t ||grad f(x_{t-1})||^2 on every realization, so E[min_t ...] <= bound;
  what a run measures is min_t E||grad f(x_t)||^2 (the result's Measure), which is >= E[min_t ...]
  and may exceed the bound without refuting it: "not applicable" rather than a verdict that could
  be wrong in either direction.
"""
from __future__ import annotations

import math
from dataclasses import replace

import torch

from fedbound.errors import ValidationError
from fedbound.tasks.quadratic import QuadraticTask
from fedbound.theory import adapters
from fedbound.verify.check import not_applicable
from fedbound.verify.registry import on_task, register, theorem_check

RESULT = "fedada2.thm20"
#: the run's defaults (module doc): the notes' numerical set-up (4.9), eta_l inside T eta_l^2 <= 1
DEFAULTS = {"lr": 0.1, "local_steps": 3, "server_lr": 1.0, "tau": 1e-2, "client_eps": 0.1,
            "eps_s": 1e-3, "delay": 1}
ROUNDS, SEEDS = 25, 2
TASKS = ("quadratic", "lsq", "robust", "mlp-gmm", "mlp-digits")


def box_gradient_bound(task: QuadraticTask, radius: float) -> float:
    """max_{i,j} sup over the l_inf box of ``radius`` around x_0 of |grad_j F_i| for affine gradients
    grad F_i(x) = H_i x - e_i: |[grad F_i(x_0)]_j| + radius sum_k |H_i[j, k]| (module doc)."""
    H = task.hessians.to(torch.float64)
    x0 = task.x0.to(torch.float64)
    at_x0 = torch.einsum("njk,k->nj", H, x0) - task.linear_terms.to(torch.float64)
    return float(torch.max(at_x0.abs() + radius * H.abs().sum(dim=2)))


def _applicability(task, options: dict, rounds: int) -> tuple[list[str], dict, str]:
    """(the reasons Theorem 20 does not apply, the constants to put in place of the task's, a note
    on how they were obtained) for a run of ``fedada2`` with ``options`` on ``task``."""
    try:
        known = adapters.constants(task, None, "fedada2", options)
    except ValidationError as error:
        return [str(error)], {}, ""
    cohort = options.get("clients_per_round")
    if cohort is not None and cohort < task.n:
        return [f"full participation (partial participation here, {cohort} of {task.n} clients): Theorem 20 bounds "
                f"min_t per realization, a run measures min_t of the mean (module doc)"], {}, ""
    if math.isfinite(known["G"]):
        return [], {}, "G and L: the task's exact constants"
    if not isinstance(task, QuadraticTask):
        return [f"A2 (bounded gradients): the {type(task).__name__} task knows no coordinate-wise bound G "
                f"and has no affine gradients for a box bound"], {}, ""
    if known["z"] != 1:
        return ["the box bound on the visited points needs z = 1 (with delay the SM3 steps are not "
                "bounded by eta_l [L1510])"], {}, ""
    b = known["beta1_tilde"]
    radius = rounds * known["eta"] * math.sqrt((1 - b) / (1 + b)) + known["K"] * known["eta_l"]
    G = box_gradient_bound(task, radius)
    return [], {"G": G}, (f"G = {G:.6g}: A2 on the l_inf box of radius {radius:.6g} around x0 that holds "
                          f"every point of the run up to T = {rounds} (module doc)")


def _thm20_check():
    base = theorem_check(RESULT, "fedada2", check="thm20", defaults=DEFAULTS, sigma=0.0, rounds=ROUNDS,
                         seeds=SEEDS, tasks=TASKS,
                         summary="Theorem 20 (every variant) against runs of fedada2: min_t ||grad f(x_t)||^2 "
                                 "vs the bound; not applicable where A1/A2 are unknown (MLP) or the run "
                                 "is outside the theorem (noise, delay without a box bound)")
    from fedbound.algorithms import registry as algorithms

    def run(problem, *, sigma, rounds, seeds, **options):
        from fedbound.verify.theorem import theorem_checks

        task = problem.task.with_noise(sigma) if sigma > 0 else problem.task
        checked = algorithms.get("fedada2").check({k: v for k, v in options.items() if v is not None})
        reasons, constants, note = _applicability(task, checked, rounds)
        setting = {"algorithm": "fedada2", "task": problem.task_name, "n": task.n, "d": task.d, **checked,
                   "sigma": sigma, "rounds": rounds, "seeds": seeds}
        if reasons:
            return setting, [not_applicable(RESULT, reasons, result=RESULT, algorithm="fedada2")]
        checks = theorem_checks(RESULT, "fedada2", problem.task, None, checked, sigma=sigma, rounds=rounds,
                                seeds=seeds, variants="all", constants=constants)
        for c in checks:
            c.details["constants_note"] = note
        return {**setting, "constants": note}, checks

    return replace(base, run=run)


#: Theorem 20 on the --task (default quadratic), on least squares and on the MLP classifier
_THM20 = register(_thm20_check())
register(on_task(_THM20, "lsq"))
register(on_task(_THM20, "mlp-gmm", "mlp"))

__all__ = ["box_gradient_bound", "RESULT", "DEFAULTS", "TASKS"]
