r"""FedNova (Wang, Liu, Liang, Joshi, Poor, NeurIPS 2020; seed 001_530825e753327090.txt) on the
federated round template (:mod:`fedbound.algorithms.federated.round`), and the FedAvg + cross-client VR
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

tau_eff (:class:`~fedbound.algorithms.federated.aggregation.Normalized`): "accumulation" = sum_i w_i ||a_i||_1
(default, App. H [L961]), "steps" = sum_i w_i tau_i (FedNova-Prox [L202]), a number, or a callable.
Options: cross-client variance reduction (Alg. 2 [L972-L989],
:class:`~fedbound.algorithms.federated.variance_reduction.CrossClientVR`), server momentum (the aggregated
-tau_eff eta sum_i p_i d_i feeds a heavy-ball buffer v <- beta v + g, x <- x - server_lr v; the
paper gives no form [L204, L244], fednova.md 2.9 flag) and hybrid momentum (client and server).
``nesterov`` (off by default, the paper's heavy ball) makes every momentum of the run Nesterov's, the
client's (u <- rho u + g, x <- x - eta (g + rho u), whose a_i, 1 + rho times the heavy-ball one, is
client.momentum's) and the server's (x <- x - server_lr (g + beta v)).

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

from typing import Literal

from fedbound.algorithms.base import Decay, check_task
from fedbound.algorithms.federated.aggregation import Normalized, TauEff, tau_eff_policy, tau_eff_text
from fedbound.algorithms.federated.fedopt import ROUND_OPTIONS
from fedbound.algorithms.federated.local_steps import LocalSteps
from fedbound.algorithms.federated.round import Federated
from fedbound.algorithms.federated.variance_reduction import VR_MODES, CrossClientVR
from fedbound.algorithms.optim import client as client_opt
from fedbound.algorithms.optim import server as server_opt
from fedbound.algorithms.optim.base import Transform
from fedbound.algorithms.options import NESTEROV, SERVER_LR, SERVER_MOMENTUM, unit_interval
from fedbound.algorithms.registry import AlgorithmSpec, register
from fedbound.argtypes import Fraction, NonNegative, Positive
from fedbound.deprecation import renamed_keywords
from fedbound.errors import ValidationError, require
from fedbound.registry import Option, choice_option, number_option
from fedbound.tasks.base import Task
from fedbound.validate import boolean, number, one_of

#: FedNova's cross-client variance reduction: off ("none" or None), "corrected" or "literal"
VR = Literal["none", "corrected", "literal"]


def local_solver(lr: Positive, mu: NonNegative | None = None, momentum: Decay | None = None,
                 lr_decay: Fraction | None = None, nesterov: bool = False) -> Transform:
    """FedNova's local solver with learning rate ``lr``: SGD, or one of proximal (``mu`` > 0: the
    option ``proximal_mu``),
    momentum (``momentum`` = rho > 0, buffer reset every round; ``nesterov``: Nesterov's) and
    decayed learning rate (``lr_decay`` = gamma < 1). Combinations are outside the paper's table and
    refused."""
    chosen = {name: value for name, value in (("mu", mu), ("momentum", momentum), ("lr_decay", lr_decay))
              if value is not None}
    if len(chosen) > 1:
        raise ValidationError(f"give at most one of mu, momentum and lr_decay (FedNova's solvers "
                              f"are SGD, proximal, momentum or decayed SGD), got {sorted(chosen)}")
    require(not boolean("nesterov", nesterov) or momentum is not None,
            "nesterov applies to the momentum solver: give momentum")
    if mu is not None:
        return client_opt.prox(lr, mu)
    if momentum is not None:
        return client_opt.momentum(lr, momentum, nesterov)
    return client_opt.sgd(lr, lr_decay)


def _server(server_lr: float, server_momentum, nesterov: bool = False):
    if server_momentum is None:
        return server_opt.sgd(server_lr)
    return server_opt.momentum(server_lr, number("server_momentum", server_momentum, low=0.0,
                                                 high=1.0, high_open=True), nesterov)


def _vr(mode):
    return None if mode is None or one_of("vr", mode, ("none",) + VR_MODES) == "none" else mode


class FedNova(Federated):
    """FedNova (module docstring): ``lr`` eta, ``local_steps`` (int, one per client, or a scheme),
    local solver ``proximal_mu`` (``mu=`` its old name) / ``momentum`` / ``lr_decay`` (at most one), ``tau_eff`` policy, ``vr``
    (None/"none", "corrected", "literal"), ``server_lr`` and ``server_momentum`` (hybrid momentum
    with ``momentum``), ``nesterov`` (Nesterov's form of both momenta, which it needs one of);
    participation and the other round options as in
    :class:`~fedbound.algorithms.federated.round.Federated`."""

    name = "FedNova"

    def __init__(self, task: Task, *, lr: Positive, local_steps: LocalSteps = 1,
                 proximal_mu: NonNegative | None = None, momentum: Decay | None = None,
                 lr_decay: Fraction | None = None, tau_eff: TauEff | None = "accumulation",
                 vr: VR | None = None, server_lr: Positive = 1.0, server_momentum: Decay | None = None,
                 nesterov: bool = False, mu: NonNegative | None = None, **round_options):
        check_task(task)
        mu = renamed_keywords("FedNova", {"mu": "proximal_mu"}, {"mu": mu},
                              {"proximal_mu": proximal_mu})["proximal_mu"]
        nesterov = boolean("nesterov", nesterov)
        require(not nesterov or momentum is not None or server_momentum is not None,
                "nesterov needs a momentum: give momentum (the clients') or server_momentum")
        solver = local_solver(lr, mu, momentum, lr_decay, nesterov and momentum is not None)
        vr = _vr(vr)
        super().__init__(task, client=solver, server=_server(server_lr, server_momentum, nesterov),
                         local_steps=local_steps, aggregation=Normalized(tau_eff),
                         control_variates=None if vr is None else CrossClientVR(solver, lr, task.weights, vr),
                         **round_options)


class FedAvgVR(Federated):
    """FedAvg with cross-client variance reduction: the correction of Alg. 2 with FedAvg's averaging
    sum_i w_i Delta_i (Table 1's "VR [20]" row [L225]; the heterogeneous-tau VRL-SGD of Fig. 2
    [L78], fednova.md 2.10). With SGD clients and uniform p this is SCAFFOLD (option II)."""

    name = "FedAvg-VR"

    def __init__(self, task: Task, *, lr: Positive, local_steps: LocalSteps = 1,
                 vr: Literal["corrected", "literal"] = "corrected", server_lr: Positive = 1.0,
                 **round_options):
        check_task(task)
        solver = client_opt.sgd(lr)
        mode = _vr(vr)
        require(mode is not None, "FedAvg-VR needs vr 'corrected' or 'literal'")
        super().__init__(task, client=solver, server=server_opt.sgd(server_lr),
                         local_steps=local_steps, control_variates=CrossClientVR(solver, lr, task.weights, mode),
                         **round_options)


_VR = choice_option("vr", "cross-client variance reduction: none, corrected (default of FedAvg-VR) "
                    "or literal (Alg. 2 as printed)", ("none",) + VR_MODES,
                    examples=("corrected", "literal"))
register(AlgorithmSpec("fednova", FedNova, "FedNova: normalized averaging (Wang et al. 2020)",
                       "federated", (
    *ROUND_OPTIONS,
    number_option("proximal_mu", "proximal coefficient >= 0 (the paper's mu)", low=0.0, aliases=("mu",),
                  examples=(0.0, 0.3)),
    unit_interval("momentum", "client momentum factor rho in [0, 1) (buffer reset every round)",
                  examples=(0.5,)),
    number_option("lr_decay", "per-step local learning-rate decay gamma in (0, 1]", low=0.0,
                  high=1.0, low_open=True, examples=(0.8,)),
    Option("tau_eff", "FedNova's tau_eff: accumulation (sum_i p_i ||a_i||_1, default), steps "
           "(sum_i p_i tau_i) or a number", lambda n, v: tau_eff_policy(v, n), tau_eff_text,
           examples=("accumulation", "steps", 2.5)),
    _VR, SERVER_LR, SERVER_MOMENTUM, NESTEROV)))
register(AlgorithmSpec("fedavg-vr", FedAvgVR, "FedAvg with cross-client variance reduction "
                       "(SCAFFOLD-like, FedNova Table 1)", "federated", (*ROUND_OPTIONS, _VR, SERVER_LR)))

__all__ = ["FedNova", "FedAvgVR", "local_solver"]
