r"""FedNova (Wang, Liu, Liang, Joshi, Poor, NeurIPS 2020; seed 001_530825e753327090.txt) on the
federated round template (:mod:`fedbound.algorithms.federated`), and the FedAvg + cross-client VR
baseline.

Setting [001 L42-L54]: minimise F(x) = sum_i p_i F_i(x). In round t every participant i runs tau_i
local steps of a solver that is linear in its stochastic gradients, Delta_i = -eta G_i a_i (eq. (4)
[L93], App. B [L389-L439]), a_i the solver's accumulation vector. FedNova averages the normalized
updates d_i = G_i a_i / ||a_i||_1 = -Delta_i / (eta ||a_i||_1) with the true weights p_i and
rescales by a server-chosen tau_eff (eq. (12) [L198-L202]; Alg. 1 [L963-L971]):

    x^{(t+1,0)} = x^{(t,0)} - tau_eff eta sum_i w_i d_i = x^{(t,0)} + sum_i w_i (tau_eff/||a_i||_1) Delta_i,

w_i the participation weights (p_i under full participation; Alg. 1's renormalized p_i/sum_S p_j,
p_i n/q, or 1/q per draw with replacement: :func:`~fedbound.network.sampling.named_participation`).
Local solvers (one per run, reset every round [L130]):

==================  =============================================  ===================================
solver              local step (g the stochastic gradient)          a_i
==================  =============================================  ===================================
SGD                 x <- x - eta g                                  [1, ..., 1]                 [L120]
decayed lr          x <- x - eta gamma^k g                          [1, gamma, ..., gamma^(tau-1)] [L128]
proximal (FedProx)  x <- x - eta (g + mu (x - x^{(t,0)}))           [(1-eta mu)^(tau-1), ..., 1]  (31)
momentum            u <- rho u + g, x <- x - eta u, u_0 = 0         (1-rho^(tau-k))/(1-rho)    (43)
==================  =============================================  ===================================

tau_eff (:class:`~fedbound.algorithms.aggregation.Normalized`): "accumulation" = sum_i w_i ||a_i||_1
(default, App. H [L961]), "steps" = sum_i w_i tau_i (FedNova-Prox [L202]), a number, or a callable.
Options: cross-client variance reduction (Alg. 2 [L972-L989],
:class:`~fedbound.algorithms.variance_reduction.CrossClientVR`), server momentum (the aggregated
-tau_eff eta sum_i p_i d_i feeds a heavy-ball buffer v <- beta v + g, x <- x - server_lr v; the
paper gives no form [L204, L244], fednova.md 2.9 flag) and hybrid momentum (client and server).

Degenerate cases (tests): equal tau_i and one solver make FedNova FedAvg, bitwise [L83]; VR with a
single client is plain local GD; FedNova converges to the exact finite-eta fixed point of
:mod:`fedbound.verify.quadratic_rounds` on quadratics, which tends to x* only as eta -> 0
(fednova.md 7.4).

Example::

    >>> import numpy as np
    >>> from fedbound.tasks import Quadratic
    >>> from fedbound.algorithms import FedAvg, FedNova, run
    >>> task = Quadratic(np.stack([np.eye(2)] * 3), np.array([[1.0, 0], [0, 1], [-1, -1]]))
    >>> nova = run(FedNova(task, lr=0.05, local_steps=[1, 4, 9]), 400).dist2[-1]
    >>> avg = run(FedAvg(task, lr=0.05, local_steps=[1, 4, 9]), 400).dist2[-1]
    >>> bool(nova < avg / 50)      # FedAvg's fixed point is biased toward the 9-step client
    True
"""
from __future__ import annotations

import numpy as np
import torch

from fedbound.algorithms.aggregation import Normalized, WeightedMean, tau_eff_policy
from fedbound.algorithms.base import check_task
from fedbound.algorithms.federated import Federated
from fedbound.algorithms.local_steps import FixedSteps
from fedbound.algorithms.optim import client as client_opt
from fedbound.algorithms.optim import server as server_opt
from fedbound.algorithms.variance_reduction import VR_MODES, CrossClientVR
from fedbound.errors import ValidationError, require
from fedbound.validate import number, one_of


def local_solver(lr, mu=None, momentum=None, lr_decay=None):
    """FedNova's local solver with learning rate ``lr``: SGD, or one of proximal (``mu`` > 0),
    momentum (``momentum`` = rho > 0, buffer reset every round) and decayed learning rate
    (``lr_decay`` = gamma < 1). Combinations are outside the paper's table and refused."""
    chosen = {name: value for name, value in (("mu", mu), ("momentum", momentum), ("lr_decay", lr_decay))
              if value is not None}
    if len(chosen) > 1:
        raise ValidationError(f"give at most one of mu, momentum and lr_decay (FedNova's solvers "
                              f"are SGD, proximal, momentum or decayed SGD), got {sorted(chosen)}")
    if mu is not None:
        return client_opt.prox(lr, mu)
    if momentum is not None:
        return client_opt.momentum(lr, momentum)
    return client_opt.sgd(lr, lr_decay)


def _server(server_lr: float, server_momentum):
    if server_momentum is None:
        return server_opt.sgd(server_lr)
    return server_opt.momentum(server_lr, number("server_momentum", server_momentum, low=0.0,
                                                 high=1.0, high_open=True))


def _vr(mode):
    return None if mode is None or one_of("vr", mode, ("none",) + VR_MODES) == "none" else mode


class FedNova(Federated):
    """FedNova (module docstring): ``lr`` eta, ``local_steps`` (int, one per client, or a scheme),
    local solver ``mu`` / ``momentum`` / ``lr_decay`` (at most one), ``tau_eff`` policy, ``vr``
    (None/"none", "corrected", "literal"), ``server_lr`` and ``server_momentum`` (hybrid momentum
    with ``momentum``); participation and the other round options as in
    :class:`~fedbound.algorithms.federated.Federated`."""

    name = "FedNova"

    def __init__(self, task, *, lr, local_steps=1, mu=None, momentum=None, lr_decay=None,
                 tau_eff="accumulation", vr=None, server_lr: float = 1.0, server_momentum=None,
                 **round_options):
        check_task(task)
        solver = local_solver(lr, mu, momentum, lr_decay)
        vr = _vr(vr)
        super().__init__(task, client=solver, server=_server(server_lr, server_momentum),
                         local_steps=local_steps, aggregation=Normalized(tau_eff),
                         control_variates=None if vr is None else CrossClientVR(solver, lr, task.weights, vr),
                         **round_options)


class FedAvgVR(Federated):
    """FedAvg with cross-client variance reduction: the correction of Alg. 2 with FedAvg's averaging
    sum_i w_i Delta_i (Table 1's "VR [20]" row [L225]; the heterogeneous-tau VRL-SGD of Fig. 2
    [L78], fednova.md 2.10). With SGD clients and uniform p this is SCAFFOLD (option II)."""

    name = "FedAvg-VR"

    def __init__(self, task, *, lr, local_steps=1, vr="corrected", server_lr: float = 1.0,
                 **round_options):
        check_task(task)
        solver = client_opt.sgd(lr)
        mode = _vr(vr)
        require(mode is not None, "FedAvg-VR needs vr 'corrected' or 'literal'")
        super().__init__(task, client=solver, server=server_opt.sgd(server_lr),
                         local_steps=local_steps, control_variates=CrossClientVR(solver, lr, task.weights, mode),
                         **round_options)


# ---- the surrogate objective of an algorithm (Theorem 1/2's weights) --------------------------------
def surrogate_weights(algorithm: Federated) -> tuple[float, np.ndarray]:
    """(tau_eff, w) of the objective F~ = sum_i w_i F_i that a full-participation, fixed-steps
    ``algorithm`` optimizes: for weighted-mean averaging the implicit ones of (6) [L115-L116]
    (tau_eff = sum_i p_i ||a_i||_1, w_i = p_i ||a_i||_1 / tau_eff), for FedNova w = p and its
    tau_eff policy's value."""
    from fedbound.theory.fednova.accumulation import implicit_weights

    require(isinstance(algorithm.local_steps, FixedSteps),
            "the surrogate weights need fixed local steps (tau_i the same every round)")
    task = algorithm.task
    p = task.weights.detach().to(torch.float64).numpy()
    tau = algorithm.local_steps.tau
    rule = algorithm.aggregation
    if isinstance(rule, Normalized):
        factors = rule.factors(task.weights.to(torch.float64), tau, algorithm.client).numpy()
        norms = rule.norms(tau, algorithm.client).numpy()
        return float(factors[0] * norms[0]), p
    require(isinstance(rule, WeightedMean), f"unknown aggregation {type(rule).__name__}")
    require(algorithm.client.accumulation is not None,
            "the implicit weights (6) need a local solver that is linear in the gradients")
    norms = Normalized().norms(tau, algorithm.client).numpy()
    tau_eff, w = implicit_weights(p, norms)
    return float(tau_eff), np.asarray(w)


def assumption3(algorithm: Federated, beta2: float | None = None) -> dict:
    """beta^2 and kappa^2 of Assumption 3 [L149] at the weights w of ``algorithm``'s surrogate
    objective (:func:`surrogate_weights`; the proofs use Assumption 3 only there, fednova.md 3 (d)),
    computed by the task (exact for quadratic tasks; None where the task cannot). ``beta2``
    defaults to the smallest admissible value. Also returns w, tau_eff and chi^2_{p||w} (L175)."""
    tau_eff, w = surrogate_weights(algorithm)
    task = algorithm.task
    if beta2 is None:
        beta2 = task.beta2_min(w)
    else:
        beta2 = number("beta2", beta2, low=1.0)
    kappa2 = None if beta2 is None else task.kappa2(w, beta2)
    p = task.weights.detach().to(torch.float64).numpy()
    chi2 = float(np.sum((p - w) ** 2 / w)) if np.all(w > 0) else float("inf")
    return {"beta2": beta2, "kappa2": kappa2, "w": w, "tau_eff": tau_eff, "chi2": chi2}


def specs():
    """FedNova's registry entries (:mod:`fedbound.algorithms.registry`)."""
    from fedbound.algorithms.registry import (CLIENTS_PER_ROUND, LOCAL_STEPS, LR, PARTICIPATION,
                                              SERVER_LR, SERVER_MOMENTUM, AlgorithmSpec, Option, _beta,
                                              _nonnegative)

    base = (LR, LOCAL_STEPS, CLIENTS_PER_ROUND, PARTICIPATION)
    mu = Option("mu", "--mu", float, "proximal coefficient mu >= 0", _nonnegative)
    momentum = Option("momentum", "--momentum", float, "client momentum factor rho in [0, 1) "
                      "(buffer reset every round)", _beta)
    decay = Option("lr_decay", "--lr-decay", float, "per-step local learning-rate decay gamma in (0, 1]",
                   lambda n, v: number(n, v, low=0.0, high=1.0, low_open=True))
    tau_eff = Option("tau_eff", "--tau-eff", str, "FedNova's tau_eff: accumulation (sum_i p_i ||a_i||_1, "
                     "default), steps (sum_i p_i tau_i) or a number", lambda n, v: tau_eff_policy(v, n))
    vr = Option("vr", "--vr", str, "cross-client variance reduction: none, corrected (default of "
                "FedAvg-VR) or literal (Alg. 2 as printed)", lambda n, v: one_of(n, v, ("none",) + VR_MODES))
    return (
        AlgorithmSpec("fednova", FedNova, "FedNova: normalized averaging (Wang et al. 2020)",
                      "federated", (*base, mu, momentum, decay, tau_eff, vr, SERVER_LR, SERVER_MOMENTUM)),
        AlgorithmSpec("fedavg-vr", FedAvgVR, "FedAvg with cross-client variance reduction "
                      "(SCAFFOLD-like, FedNova Table 1)", "federated", (*base, vr, SERVER_LR)),
    )


__all__ = ["FedNova", "FedAvgVR", "local_solver", "surrogate_weights", "assumption3"]
