"""The decentralized family: n clients on one connected subnet with a mixing matrix W, a step size
gamma and no server (AFGA's decentralized baselines, Table 8 [000 L968-L978]; SD-GT's gradient
tracking, Sec. III-C Case 2 [003 L192-L206]).

Every member keeps its clients' models X (n, d) in its state, runs one iteration per round (one
stochastic gradient per client), exchanges over the links of W and reports the network average as
x_g. :class:`Decentralized` holds what they share: the torch view of the subnet, gamma, the
energy model and the traffic of a round without a server.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from fedbound.algorithms.accounting import CommCounts, EnergyModel, RoundTraffic, count_round
from fedbound.algorithms.base import Algorithm, Models, State, StateTensor, check_task, new_rng
from fedbound.algorithms.stacked import StackedNetwork
from fedbound.argtypes import NonNegativeInt, Positive, Seed
from fedbound.deprecation import renamed_keywords
from fedbound.errors import require
from fedbound.network import Network
from fedbound.tasks.base import Task
from fedbound.validate import number


@dataclass(frozen=True)
class DecentralizedState(State):
    """X (n, d): the clients' models x^t."""

    X: StateTensor


class Decentralized(Algorithm):
    """Base of the decentralized family over a one-subnet fedbound.network.Network with step size
    ``lr`` (gamma in the papers; the old keyword ``gamma`` still works and warns): ``net`` (the torch
    view of W), ``gamma``, ``energy``; :meth:`traffic` describes a round without a server."""

    def __init__(self, task: Task, network: Network, *, lr: Positive | None = None, seed: Seed = 0,
                 energy: EnergyModel | None = None, gamma: Positive | None = None):
        lr = renamed_keywords(type(self).__name__, {"gamma": "lr"}, {"gamma": gamma}, {"lr": lr})["lr"]
        net = StackedNetwork.from_network(network, check_task(task).dtype)
        require(net.S == 1, f"{self.name} runs over one connected subnet (S = 1), got S={net.S}")
        require(net.n == task.n, f"the network has n={net.n} clients but the task has n={task.n}")
        require(lr is not None, f"{self.name} needs lr")
        super().__init__(task, seed=seed)
        self.net = net
        self.gamma = number("lr", lr, low=0.0, low_open=True)
        self.energy = EnergyModel.unit(1) if energy is None else energy
        require(self.energy.E_ds.size == 1,
                f"energy model has {self.energy.E_ds.size} subnets, the network has S=1")

    def init(self, x0: Models | None = None) -> DecentralizedState:
        x0 = self.initial_models(x0)
        zero = CommCounts()
        return DecentralizedState(t=0, x_g=x0, rng=new_rng(self.seed), K=0, comm=zero,
                                  last_comm=zero, X=x0.expand(self.net.n, -1).clone())

    def traffic(self, model_exchanges: NonNegativeInt = 1, tracking_exchanges: NonNegativeInt = 0,
                client_state_floats: NonNegativeInt = 0) -> RoundTraffic:
        """An iteration without a server: exchanges over the links of W, n gradients."""
        none = np.zeros(1, dtype=np.int64)
        return RoundTraffic(model_exchanges=model_exchanges, tracking_exchanges=tracking_exchanges,
                            uploaders=none, upload_floats_each=0, receivers=none,
                            download_floats_each=0, gradients=self.net.n,
                            client_state_floats=client_state_floats)

    def counts(self, traffic: RoundTraffic) -> CommCounts:
        return count_round(traffic, self.net.directed_links, self.net.m, self.task.d, self.energy)

    def extend(self, state: DecentralizedState, cls: type, **fields) -> DecentralizedState:
        """``state`` as the subclass state ``cls`` with the extra ``fields``."""
        return cls(**{f.name: getattr(state, f.name) for f in dataclasses.fields(state)}, **fields)
