r"""SCAFFOLD (Karimireddy et al., ICML 2020, Alg. 1 with option II) on the federated round template
(:mod:`fedbound.algorithms.federated.round`): one implementation, two registry entries.

Per round t, the server samples S_t; every participant i corrects its local gradients by c - c_i,
runs its tau_i local steps of size lr from y_i = x,

    y_i <- y_i - lr (g_i(y_i) - c_i + c),
    c_i^+ = c_i - c + (x - y_i) / (tau_i lr)                               (option II)

and the server applies x <- x + server_lr Delta (Delta the participation-weighted mean of y_i - x)
and c <- c + (1/n) sum_{i in S_t} (c_i^+ - c_i), c_i <- c_i^+ for i in S_t
(:class:`~fedbound.algorithms.federated.control_variates.ControlVariates`). Control variates start
at zero, so c = (1/n) sum_i c_i at every round. Each participant downloads (x, c) and uploads
(Delta y_i, Delta c_i): 2d floats each way. Any participation scheme without repeats and any
per-client local-step scheme apply.

* ``scaffold-fl``: the FedOpt-style entry (``--clients-per-round`` uniformly or ``--participation``;
  only the participants compute).
* ``scaffold``: the SD-GT paper's centralized baseline (seed 003 [L491], sdgt.md 2.4): star topology,
  no D2D, step ``lr`` (SD-GT's gamma), K local steps, and per-subnet sampling of h_s clients of
  subnet s as SD-GT samples (the paper does not state SCAFFOLD's participation, sdgt.md 2.4 flag)
  when a network is given, else h of the n clients, weights m_s/(n h_s) for uniform p (the
  subnet-weighted mean). In the SD-GT simulations every device computes its local steps and the
  server takes the sampled ones' results (``all_clients_compute``; K n gradients per round), which
  is what this entry does, so that its random draws are those of the paper's setting.
"""
from __future__ import annotations

import numpy as np

from typing import Sequence

from fedbound.algorithms.base import Steps, check_task
from fedbound.algorithms.federated.control_variates import ControlVariates
from fedbound.algorithms.federated.fedopt import ROUND_OPTIONS
from fedbound.algorithms.federated.local_steps import LocalSteps
from fedbound.algorithms.federated.round import Federated
from fedbound.algorithms.optim import client, server
from fedbound.algorithms.options import CLIENTS_PER_SUBNET, LOCAL_STEPS_K, LR_GAMMA, SERVER_LR
from fedbound.algorithms.registry import AlgorithmSpec, register
from fedbound.algorithms.stacked import StackedNetwork
from fedbound.argtypes import Count, Positive
from fedbound.deprecation import renamed_keywords
from fedbound.errors import require
from fedbound.network import Network
from fedbound.network.sampling import FullParticipation, UniformParticipation, check_h
from fedbound.tasks.base import Task


class SCAFFOLD(Federated):
    """SCAFFOLD (module docstring): ``lr``, ``local_steps`` (int, one per client, or a scheme),
    ``server_lr`` and the round's participation and other options
    (:class:`~fedbound.algorithms.federated.round.Federated`). With a ``network`` (or
    ``clients_per_subnet`` alone: one group of all n clients), SD-GT's baseline: h_s clients of each
    subnet per round (default all), every client computing its local steps. SD-GT's names
    ``gamma``, ``K``, ``h`` still work and warn."""

    name = "SCAFFOLD"

    def __init__(self, task: Task, *, lr: Positive | None = None, local_steps: LocalSteps = 1,
                 server_lr: Positive = 1.0, network: Network | None = None,
                 clients_per_subnet: Count | Sequence[Count] | None = None,
                 gamma: Positive | None = None, K: Steps | None = None,
                 h: Count | Sequence[Count] | None = None, **round_options):
        task = check_task(task)
        given = renamed_keywords("SCAFFOLD", {"gamma": "lr", "K": "local_steps", "h": "clients_per_subnet"},
                                 {"gamma": gamma, "K": K, "h": h},
                                 {"lr": lr, "clients_per_subnet": clients_per_subnet,
                                  "local_steps": None if K is not None and local_steps == 1 else local_steps})
        lr, clients_per_subnet = given["lr"], given["clients_per_subnet"]
        require(lr is not None, "SCAFFOLD needs lr")
        if network is not None or clients_per_subnet is not None:
            round_options.update(_per_subnet(task, network, clients_per_subnet))
        super().__init__(task, client=client.sgd(lr), server=server.sgd(server_lr),
                         local_steps=given["local_steps"], control_variates=ControlVariates(lr),
                         **round_options)


def _per_subnet(task, network, h) -> dict:
    """The round options of SD-GT's baseline (module docstring): per-subnet participation of h_s
    clients of each subnet of ``network`` (default: one group of all n), every client computing."""
    groups = (StackedNetwork.one_group(task.n, task.dtype) if network is None
              else StackedNetwork.from_network(network, task.dtype))
    h = groups.m if h is None else check_h(h, groups.m)
    participation = (FullParticipation() if np.array_equal(h, groups.m)
                     else UniformParticipation(task.n, h, sizes=groups.m))
    return {"participation": participation, "groups": groups, "all_clients_compute": True}


register(AlgorithmSpec("scaffold", SCAFFOLD, "SCAFFOLD with option-II control variates "
                       "(Karimireddy et al. 2020), per-subnet or uniform sampling: SD-GT's baseline",
                       "federated", (LR_GAMMA, LOCAL_STEPS_K, CLIENTS_PER_SUBNET),
                       network="optional"))
register(AlgorithmSpec("scaffold-fl", SCAFFOLD, "SCAFFOLD on the federated round: option-II control "
                       "variates, any participation, per-client local steps (Karimireddy et al. 2020)",
                       "federated", (*ROUND_OPTIONS, SERVER_LR)))

__all__ = ["SCAFFOLD"]
