r"""The FedOpt family on the federated round template (:mod:`fedbound.algorithms.federated.round`):
FedAvg, FedProx, FedAvgM, FedAdagrad, FedAdam and FedYogi, the strategies Flower users know
(SCAFFOLD, on the same round: :mod:`fedbound.algorithms.federated.scaffold`).

Common setting (FedNova sec. 2.0 [001 L46-L54]; Reddi et al., "Adaptive Federated Optimization",
ICLR 2021, Alg. 2): minimise f(x) = sum_i p_i f_i(x) (p from the task: uniform or by example
counts). Round t: the server samples S_t (``clients_per_round`` uniformly without replacement, or
any ``participation`` scheme), each i in S_t runs tau_i (``local_steps``) local steps of a client
optimizer from x^{(t)}, and with Delta = sum_{i in S_t} w_i (x_i^{(t,tau_i)} - x^{(t)}) (w_i = p_i /
sum_{j in S_t} p_j) the server applies its optimizer to the pseudo-gradient g = -Delta:

=============  ===============================  =============================================
algorithm      client step (g = local gradient)  server step
=============  ===============================  =============================================
FedAvg         x <- x - lr g                      x <- x + server_lr Delta
FedProx        x <- x - lr (g + mu (x - x^(t)))   x <- x + server_lr Delta
FedAvgM        x <- x - lr g                      v <- beta v + g;  x <- x - server_lr v
FedAdagrad     x <- x - lr g                      v <- v + g^2;     x <- x - server_lr m / (sqrt(v) + tau)
FedAdam        x <- x - lr g                      Adam moments (b1, b2), no bias correction
FedYogi        x <- x - lr g                      Yogi second moment (b1, b2)
=============  ===============================  =============================================

(adaptive rules: m <- b1 m + (1 - b1) g; see :mod:`fedbound.algorithms.optim.server` for the
exact formulas). The server optimizers' switches are options of the algorithms, under the same
names on the command line (``--nesterov``), in Python and in sweep SPECs:

===================  ==========================  ==============================================
option               algorithms                  meaning (default first)
===================  ==========================  ==============================================
nesterov             fedavgm                     heavy-ball server momentum, or Nesterov's
v0                   fedadagrad, fedadam,        initial second moment v_0 (0)
                     fedyogi
eps_inside_sqrt      fedadagrad, fedadam,        tau outside the root, sqrt(v) + tau, or inside,
                     fedyogi                     sqrt(v + tau)
bias_correction      fedadam, fedyogi            none (Reddi et al.), adam (Kingma-Ba) or flower
                                                 (Flower's FedAdam), see
                                                 :mod:`fedbound.algorithms.optim.server`
===================  ==========================  ==============================================

Flower's strategies (Flower 1.42, flwr.server.strategy and flwr.serverapp.strategy; fedbound's
defaults are those of the latter) give the same numbers on the same clients and hyperparameters,
with two conventions to match: FedAdam needs ``bias_correction="flower"``, and the client weights:
Flower weights each client by the number of examples it reports, fedbound by the task's weights
p_i (uniform by default; the task's ``weights="examples"``, ``--weights examples``, is Flower's).
tests/algorithms/test_flower_equivalence.py holds the equivalence (1e-12 per server update, 1e-10
for ``fedbound run`` on ten rounds of least squares); README.md has the table of conventions. Degenerate cases, each a test: FedProx with mu = 0, FedAvgM with
momentum 0 and FedAvg with server_lr = 1 and full participation of one local step are the same
algorithm; with one local step and full participation FedAvg is gradient descent on f.

Example::

    >>> from fedbound.tasks import LeastSquares
    >>> from fedbound.algorithms import FedAvg, run
    >>> task = LeastSquares.generate(20, 10, 5, seed=0)
    >>> traj = run(FedAvg(task, lr=0.1, local_steps=5, clients_per_round=5, seed=0), 50)
    >>> bool(traj.loss_gap[-1] < traj.loss_gap[0])
    True
"""
from __future__ import annotations

from fedbound.algorithms.base import Decay
from fedbound.algorithms.federated.local_steps import LocalSteps
from fedbound.algorithms.federated.round import Federated
from fedbound.algorithms.optim import client, server
from fedbound.algorithms.optim.registry import BiasCorrection
from fedbound.algorithms.options import (BETA1, BETA2, BIAS_CORRECTION, CLIENTS_PER_ROUND,
                                         EPS_INSIDE_SQRT, LOCAL_STEPS, LR, MU, NESTEROV,
                                         PARTICIPATION, SERVER_LR, SERVER_MOMENTUM, TAU, V0)
from fedbound.algorithms.registry import AlgorithmSpec, register
from fedbound.argtypes import NonNegative, Positive
from fedbound.deprecation import renamed_keywords
from fedbound.errors import require
from fedbound.tasks.base import Task


class FedAvg(Federated):
    """FedAvg (McMahan et al., AISTATS 2017; FedNova eq. (2) [001 L52]): local SGD with step ``lr``
    for ``local_steps`` steps, server model x + server_lr * Delta (server_lr = 1: the weighted
    average of the sampled clients' models)."""

    name = "FedAvg"

    def __init__(self, task: Task, *, lr: Positive, local_steps: LocalSteps = 1, server_lr: Positive = 1.0,
                 **round_options):
        super().__init__(task, client=client.sgd(lr), server=server.sgd(server_lr),
                         local_steps=local_steps, **round_options)


class FedProx(Federated):
    """FedProx (Li et al., MLSys 2020; FedNova (15)/(31) [001 L58]): each client minimises
    f_i(x) + (mu/2)||x - x^{(t)}||^2, mu = ``proximal_mu`` (``mu=`` is its old name), with
    local_steps proximal SGD steps; FedAvg's server."""

    name = "FedProx"

    def __init__(self, task: Task, *, lr: Positive, proximal_mu: NonNegative | None = None,
                 local_steps: LocalSteps = 1, server_lr: Positive = 1.0, mu: NonNegative | None = None,
                 **round_options):
        proximal_mu = renamed_keywords("FedProx", {"mu": "proximal_mu"}, {"mu": mu},
                                       {"proximal_mu": proximal_mu})["proximal_mu"]
        require(proximal_mu is not None, "FedProx needs proximal_mu (the proximal coefficient)")
        super().__init__(task, client=client.prox(lr, proximal_mu), server=server.sgd(server_lr),
                         local_steps=local_steps, **round_options)


class FedAvgM(Federated):
    """FedAvgM (Hsu et al. 2019): FedAvg clients, server momentum v <- beta v + g, x <- x - server_lr v
    on the pseudo-gradient g = -Delta (Flower's defaults server_lr = 1, momentum 0 = FedAvg);
    ``nesterov``: x <- x - server_lr (g + beta v) (Flower has no Nesterov)."""

    name = "FedAvgM"

    def __init__(self, task: Task, *, lr: Positive, local_steps: LocalSteps = 1, server_lr: Positive = 1.0,
                 server_momentum: Decay = 0.0, nesterov: bool = False, **round_options):
        super().__init__(task, client=client.sgd(lr),
                         server=server.momentum(server_lr, server_momentum, nesterov),
                         local_steps=local_steps, **round_options)


class FedAdagrad(Federated):
    """FedAdagrad (Reddi et al. 2021, Alg. 2): FedAvg clients; server v <- v + g^2 from v_0 = ``v0``,
    m <- beta1 m + (1 - beta1) g, x <- x - server_lr m / (sqrt(v) + tau) (``eps_inside_sqrt``:
    / sqrt(v + tau)). Flower's defaults: server_lr 0.1, tau 1e-3, beta1 0, v0 0, tau outside."""

    name = "FedAdagrad"

    def __init__(self, task: Task, *, lr: Positive, local_steps: LocalSteps = 1, server_lr: Positive = 0.1,
                 tau: Positive = 1e-3, beta1: Decay = 0.0, v0: NonNegative = 0.0,
                 eps_inside_sqrt: bool = False, **round_options):
        super().__init__(task, client=client.sgd(lr),
                         server=server.adagrad(server_lr, tau, v0=v0, eps_inside_sqrt=eps_inside_sqrt,
                                               b1=beta1),
                         local_steps=local_steps, **round_options)


class FedAdam(Federated):
    """FedAdam (Reddi et al. 2021, Alg. 2): FedAvg clients; server Adam moments from m_0 = 0,
    v_0 = ``v0``, x <- x - server_lr m / (sqrt(v) + tau) (``eps_inside_sqrt``: / sqrt(v + tau)),
    with the ``bias_correction`` "none" (default, Reddi et al.), "adam" (Kingma-Ba) or "flower"
    (Flower's FedAdam: server_lr times sqrt(1 - beta2^(t+1)) / (1 - beta1^(t+1)) in round t; the
    formulas and sources are in :mod:`fedbound.algorithms.optim.server`). Flower's defaults:
    server_lr 0.1, beta1 0.9, beta2 0.99, tau 1e-3 and v0 0, tau outside; Flower's numbers need
    ``bias_correction="flower"``."""

    name = "FedAdam"

    def __init__(self, task: Task, *, lr: Positive, local_steps: LocalSteps = 1, server_lr: Positive = 0.1,
                 beta1: Decay = 0.9, beta2: Decay = 0.99, tau: Positive = 1e-3,
                 bias_correction: BiasCorrection = "none", eps_inside_sqrt: bool = False,
                 v0: NonNegative = 0.0, **round_options):
        super().__init__(task, client=client.sgd(lr),
                         server=server.adam(server_lr, beta1, beta2, tau, bias_correction=bias_correction,
                                            eps_inside_sqrt=eps_inside_sqrt, v0=v0),
                         local_steps=local_steps, **round_options)


class FedYogi(Federated):
    """FedYogi (Reddi et al. 2021, Alg. 2): FedAvg clients; server v <- v - (1 - beta2) g^2
    sign(v - g^2) from v_0 = ``v0``, x <- x - server_lr m / (sqrt(v) + tau), ``bias_correction``
    and ``eps_inside_sqrt`` as for :class:`FedAdam` (Flower's defaults: server_lr 0.01, beta1 0.9,
    beta2 0.99, tau 1e-3, v0 0, no bias correction)."""

    name = "FedYogi"

    def __init__(self, task: Task, *, lr: Positive, local_steps: LocalSteps = 1, server_lr: Positive = 0.01,
                 beta1: Decay = 0.9, beta2: Decay = 0.99, tau: Positive = 1e-3,
                 bias_correction: BiasCorrection = "none", eps_inside_sqrt: bool = False,
                 v0: NonNegative = 0.0, **round_options):
        super().__init__(task, client=client.sgd(lr),
                         server=server.yogi(server_lr, beta1, beta2, tau, v0=v0,
                                            bias_correction=bias_correction,
                                            eps_inside_sqrt=eps_inside_sqrt),
                         local_steps=local_steps, **round_options)


#: the options of every algorithm on the round with uniform or named participation
ROUND_OPTIONS = (LR, LOCAL_STEPS, CLIENTS_PER_ROUND, PARTICIPATION)

register(AlgorithmSpec("fedavg", FedAvg, "FedAvg: local SGD, server average (McMahan et al. 2017)",
                       "federated", (*ROUND_OPTIONS, SERVER_LR)))
register(AlgorithmSpec("fedprox", FedProx, "FedProx: proximal local SGD (Li et al. 2020)", "federated",
                       (*ROUND_OPTIONS, MU, SERVER_LR)))
register(AlgorithmSpec("fedavgm", FedAvgM, "FedAvgM: FedAvg with server momentum (Hsu et al. 2019)",
                       "federated", (*ROUND_OPTIONS, SERVER_LR, SERVER_MOMENTUM, NESTEROV)))
register(AlgorithmSpec("fedadagrad", FedAdagrad, "FedAdagrad: server AdaGrad (Reddi et al. 2021)",
                       "federated", (*ROUND_OPTIONS, SERVER_LR, TAU, BETA1, V0, EPS_INSIDE_SQRT)))
register(AlgorithmSpec("fedadam", FedAdam, "FedAdam: server Adam (Reddi et al. 2021)", "federated",
                       (*ROUND_OPTIONS, SERVER_LR, BETA1, BETA2, TAU, BIAS_CORRECTION, V0,
                        EPS_INSIDE_SQRT)))
register(AlgorithmSpec("fedyogi", FedYogi, "FedYogi: server Yogi (Reddi et al. 2021)", "federated",
                       (*ROUND_OPTIONS, SERVER_LR, BETA1, BETA2, TAU, BIAS_CORRECTION, V0,
                        EPS_INSIDE_SQRT)))

__all__ = ["FedAvg", "FedProx", "FedAvgM", "FedAdagrad", "FedAdam", "FedYogi", "ROUND_OPTIONS"]
