r"""FedDyn (Acar, Zhao, Matas Navarro, Mattina, Whatmough, Saligrama, "Federated Learning Based on
Dynamic Regularization", ICLR 2021, Algorithm 1), one of AFGA's federated baselines (Table 4;
afga.md 2.5, its alpha not stated), on the federated round template
(:mod:`fedbound.algorithms.federated.round`).

Round t, server model theta^{t-1}, m clients with lagged gradients g_i (start 0) and server state h
(start 0); every client i in P_t:

    theta_i^t ~ argmin_theta L_i(theta) - <g_i, theta> + alpha/2 ||theta - theta^{t-1}||^2
            (tau_i local SGD steps of size lr on this objective from theta^{t-1}, as the paper's
             experiments solve it: theta <- theta - lr (grad L_i(theta) - g_i
             + alpha (theta - theta^{t-1})))
    g_i <- g_i - alpha (theta_i^t - theta^{t-1})

and the server

    h       <- h - alpha sum_{i in P_t} p_i (theta_i^t - theta^{t-1})     (p_i = 1/m: Alg. 1)
    theta^t  = theta^{t-1} + sum_{i in P_t} w_i (theta_i^t - theta^{t-1}) - h / alpha
             (w_i = 1/|P_t|: Alg. 1's (1/|P_t|) sum_{i in P_t} theta_i^t - h / alpha).

On the template: the client is proximal SGD (:func:`fedbound.algorithms.optim.client.prox` with
mu = alpha, anchored at theta^{t-1}) whose gradients are corrected by -g_i, constant within the
round, and :class:`DynamicRegularization` is the control-variates strategy that keeps C = (g_i)
(a :class:`~fedbound.algorithms.client_rows.ClientRows`: g_i held only for the clients that have
participated, zero for the others, rewritten for the k participants in O(k d + n)) and c = h (d,)
and shifts the server model by -h/alpha. Non-participants keep their g_i.
Since h starts at 0, h = sum_i p_i g_i over all m clients at every round.

Choices where the paper leaves room:

* weights: the paper's clients are equally weighted; with the task's weights p (example counts)
  h uses p_i in place of 1/m and the average the participation scheme's weights w_i (uniform
  participation: p_i / sum_{j in P_t} p_j), so that the fixed point is the minimizer of
  sum_i p_i L_i (uniform p: exactly Alg. 1);
* the local problem is solved inexactly by ``local_steps`` SGD steps (the paper's experiments; its
  analysis assumes the exact argmin). Under full participation the fixed point is still x*: at a
  fixed point every theta_i^t = theta^{t-1} (g_i stops moving); with lr < 2/(L + alpha) each local
  step strictly decreases the local objective unless it stands at its minimizer, so
  grad L_i(theta) = g_i, h = sum_i p_i grad L_i(theta) = grad f(theta), and theta^t = theta^{t-1}
  forces h = 0 (tests/algorithms/test_feddyn.py measures it, and FedAvg's bias);
* the server step is Alg. 1's average (no server learning rate; AFGA's Table 9 lists eta = 1.0).

Communication: each participant downloads theta^{t-1} and uploads theta_i^t, d floats each way,
as FedAvg (g_i stays on the client, h on the server). Requires participants without repeats.

Example::

    >>> from fedbound.tasks import Quadratic
    >>> from fedbound.algorithms import FedDyn, run
    >>> task = Quadratic.generate(10, 5, kappa=4.0, mu=0.5, seed=0)
    >>> traj = run(FedDyn(task, lr=0.05, alpha=0.5, local_steps=10), 300)
    >>> bool(traj.dist2[-1] < 1e-20)
    True
"""
from __future__ import annotations

import torch

from fedbound.algorithms.base import check_task
from fedbound.algorithms.client_rows import ClientRows
from fedbound.algorithms.federated.control_variates import ControlVariates
from fedbound.algorithms.federated.fedopt import ROUND_OPTIONS
from fedbound.algorithms.federated.local_steps import LocalSteps
from fedbound.algorithms.federated.round import Federated
from fedbound.algorithms.optim import client, server
from fedbound.algorithms.options import ALPHA
from fedbound.algorithms.registry import AlgorithmSpec, register
from fedbound.argtypes import Count, Positive
from fedbound.tasks.base import Task
from fedbound.validate import number


class DynamicRegularization:
    """FedDyn's per-client and server state as a control-variates strategy of the round (the
    interface of :class:`~fedbound.algorithms.federated.control_variates.ControlVariates`): C the
    lagged gradients g_i (a :class:`~fedbound.algorithms.client_rows.ClientRows` of n rows (d,)),
    c (d,) the server's h, for ``alpha`` > 0 and the task's weights ``p``."""

    #: d-vectors each participant downloads and uploads per round: theta^{t-1} and theta_i^t
    vectors = 1

    def __init__(self, alpha: Positive, p: torch.Tensor):
        self.alpha = number("alpha", alpha, low=0.0, low_open=True)
        self.p = p

    def init(self, n: Count, x0: torch.Tensor) -> tuple[ClientRows, torch.Tensor]:
        """(g: the g_i of n clients, h (d,)), all zero."""
        return ClientRows.zeros(n, x0.shape[0], x0.dtype, x0.device), torch.zeros_like(x0)

    def correction(self, C: ClientRows, c: torch.Tensor, clients: torch.Tensor) -> torch.Tensor:
        """-g_i for the rows ``clients`` (k, d): the linear term of the local objective."""
        return -C.gather(clients)

    def update(self, C: ClientRows, c: torch.Tensor, clients: torch.Tensor, x: torch.Tensor,
               Y: torch.Tensor, tau: torch.Tensor) -> tuple[ClientRows, torch.Tensor]:
        """g_i <- g_i - alpha (theta_i - x) for the participants ``clients`` (models Y (k, d)) and
        h <- h - alpha sum_i p_i (theta_i - x)."""
        ControlVariates.require_distinct(clients)
        D = Y - x
        g = C.gather(clients) - self.alpha * D
        h = c - self.alpha * (self.p.to(D.dtype).index_select(0, clients) @ D)
        return C.with_rows(clients, g), h

    def server_model(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """theta^t = (average of the participants' models) - h / alpha."""
        return x - c / self.alpha


class FedDyn(Federated):
    """FedDyn (Acar et al., ICLR 2021, Alg. 1; module docstring): ``local_steps`` SGD steps of size
    ``lr`` on L_i(theta) - <g_i, theta> + alpha/2 ||theta - theta^{t-1}||^2, then the lagged
    gradients g_i and the server state h; theta^t = average of the participants - h / alpha.
    Any participation scheme without repeats and any per-client local-step scheme apply."""

    name = "FedDyn"

    def __init__(self, task: Task, *, lr: Positive, alpha: Positive, local_steps: LocalSteps = 1,
                 **round_options):
        task = check_task(task)
        strategy = DynamicRegularization(alpha, task.weights)
        super().__init__(task, client=client.prox(lr, strategy.alpha), server=server.sgd(1.0),
                         local_steps=local_steps, control_variates=strategy, **round_options)


register(AlgorithmSpec("feddyn", FedDyn, "FedDyn: dynamic regularization, lagged client gradients and "
                       "a server correction h (Acar et al. 2021)", "federated", (*ROUND_OPTIONS, ALPHA)))

__all__ = ["FedDyn", "DynamicRegularization"]
