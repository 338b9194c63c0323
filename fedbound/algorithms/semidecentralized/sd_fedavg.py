"""SD-FedAvg: semi-decentralized FedAvg (Lin et al., JSAC 2021; the SD-GT paper's baseline,
seed 003 [L488-L490], sdgt.md 2.4), i.e. SD-GT without the trackers y and z:

    for k = 1..K:  x^{t,k+1} = W (x^{t,k} - gamma grad f_i(x_i^{t,k}, xi))      (ATC, no tracking)
    server samples C'_s (h_s per subnet) and aggregates, with omega as in SD-GT:
      "displacement": x_g^{t+1} = x_g^t + sum_s omega_s (1/h_s) sum_{C'_s} (x_j^{t,K+1} - x_j^{t,1})
      "absolute":     x_g^{t+1} =         sum_s omega_s (1/h_s) sum_{C'_s} x_j^{t,K+1}
    reset="sampled": sampled clients restart from x_g^{t+1}, the others keep x^{t,K+1}
    (SD-GT's rule); reset="all": every client restarts from x_g^{t+1} (Lin et al.'s convention).

The paper gives prose only ("each client updates using only its local gradient ... D2D after every
gradient computation ... global aggregation after every K rounds"); the defaults (displacement,
sampled-only reset, m_s/n weights) match SD-GT minus the trackers. Under heterogeneous f_i and a
constant step the fixed point is biased (sdgt.md 6, Fig. 8).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

from fedbound.algorithms.accounting import CommCounts, EnergyModel, RoundTraffic
from fedbound.algorithms.base import Models, State, StateTensor, Steps, check_task, generator_from, new_rng
from fedbound.algorithms.options import CLIENTS_PER_SUBNET, LOCAL_STEPS_K, LR_GAMMA
from fedbound.algorithms.registry import AlgorithmSpec, register
from fedbound.algorithms.semidecentralized.base import PerSubnet, SemiDecentralized
from fedbound.algorithms.stacked import StackedNetwork
from fedbound.argtypes import NonNegativeArray, Positive, Seed
from fedbound.errors import UnknownNameError
from fedbound.network import Network
from fedbound.tasks.base import Task

AGGREGATIONS = ("displacement", "absolute")
RESETS = ("sampled", "all")


@dataclass(frozen=True)
class SDFedAvgState(State):
    """X (n, d): client models at the start of the next round; h (S,), mask (n,): sampling of the
    last round; X_end (n, d): models after the K D2D rounds of the last round."""

    X: StateTensor
    h: NonNegativeArray
    mask: torch.Tensor | None = None
    X_end: StateTensor | None = None


class SDFedAvg(SemiDecentralized):
    """SD-FedAvg over a fedbound.network.Network; options aggregation, reset, aggregator."""

    name = "SD-FedAvg"

    def __init__(self, task: Task, network: Network, *, lr: Positive | None = None,
                 local_steps: Steps | None = None, clients_per_subnet: PerSubnet | None = None,
                 aggregation: Literal["displacement", "absolute"] = "displacement",
                 reset: Literal["sampled", "all"] = "sampled",
                 aggregator: Literal["subnet_weighted", "paper"] = "subnet_weighted", seed: Seed = 0,
                 energy: EnergyModel | None = None, **paper_names):
        net = StackedNetwork.from_network(network, check_task(task).dtype)
        super().__init__(task, net, lr=lr, local_steps=local_steps,
                         clients_per_subnet=clients_per_subnet, seed=seed, energy=energy,
                         **paper_names)
        if aggregation not in AGGREGATIONS:
            raise UnknownNameError(
                f"aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")
        if reset not in RESETS:
            raise UnknownNameError(f"reset must be one of {RESETS}, got {reset!r}")
        self.aggregation = aggregation
        self.reset = reset
        self.omega = net.aggregation_weights(aggregator)

    def init(self, x0: Models | None = None) -> SDFedAvgState:
        x0 = self.initial_models(x0)
        zero = CommCounts()
        return SDFedAvgState(t=0, x_g=x0, rng=new_rng(self.seed), K=0, comm=zero,
                             last_comm=zero, X=x0.expand(self.net.n, -1).clone(),
                             h=np.zeros(self.net.S, dtype=np.int64))

    def round_traffic(self, K: Steps, h: NonNegativeArray) -> RoundTraffic:
        """K model exchanges; sampled clients upload d floats; x_g (d floats) goes to the sampled
        clients (reset="sampled") or to every client (reset="all")."""
        receivers = h if self.reset == "sampled" else self.net.m
        return RoundTraffic(model_exchanges=K, tracking_exchanges=0, uploaders=h,
                            upload_floats_each=self.task.d, receivers=receivers,
                            download_floats_each=self.task.d, gradients=K * self.net.n)

    def step(self, state: SDFedAvgState, *, local_steps: Steps | None = None,
             clients_per_subnet: PerSubnet | None = None, **paper_names) -> SDFedAvgState:
        K, h = self.round_settings(local_steps, clients_per_subnet, **paper_names)
        gen = generator_from(state.rng)
        sampled = self.sample(h, gen)
        net, gamma = self.net, self.gamma
        Xk = state.X
        for _ in range(K):
            Xk = net.mix(Xk - gamma * self.task.stochastic_grad(Xk, gen))
        if self.aggregation == "displacement":
            x_g = state.x_g + self.omega @ net.sampled_mean(Xk - state.X, sampled)
        else:
            x_g = self.omega @ net.sampled_mean(Xk, sampled)
        if self.reset == "all" or sampled is None:
            X = x_g.expand_as(Xk).clone()
        else:
            X = torch.where(sampled[:, None], x_g, Xk)
        return self.advance(state, x_g=x_g, rng=gen.get_state(), K=K,
                            last_comm=self.counts(self.round_traffic(K, h)), X=X, h=h,
                            mask=net.mask_of(sampled, h), X_end=Xk)


register(AlgorithmSpec("sd-fedavg", SDFedAvg, "SD-FedAvg: SD-GT without trackers (Lin et al. 2021)",
                       "semi-decentralized", (LR_GAMMA, LOCAL_STEPS_K, CLIENTS_PER_SUBNET),
                       network="required", default_subnets=3))
