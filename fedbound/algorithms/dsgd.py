"""Decentralized SGD, D-PSGD (Lian et al., NeurIPS 2017, Alg. 1): the decentralized baseline of AFGA's
Table 8 (000_bd1b5016b2d2bc05.txt [L968-L974], afga.md sec. 2 "Decentralized baselines"; its
topology and step size are not stated there).

    x_i^{t+1} = sum_j w_ij x_j^t - gamma g_i(x_i^t)

with W the mixing matrix of one connected subnet; no server. One round = one iteration (one
stochastic gradient per client, one model exchange over the links of W). The reported x_g is the
network average, which follows x_bar^{t+1} = x_bar^t - gamma (1/n) sum_i g_i(x_i^t) exactly for a
doubly stochastic W. With W = I every client runs plain SGD on its own f_i.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from fedbound.algorithms.accounting import CommCounts, EnergyModel, RoundTraffic
from fedbound.algorithms.base import State, check_task, generator_from, new_rng
from fedbound.algorithms.semidecentralized import SemiDecentralized
from fedbound.algorithms.stacked import StackedNetwork
from fedbound.errors import require


@dataclass(frozen=True)
class DSGDState(State):
    """X (n, d): the clients' models x^t."""

    X: torch.Tensor


class DSGD(SemiDecentralized):
    """D-PSGD over a one-subnet fedbound.network.Network with step size ``gamma``."""

    name = "DSGD"

    def __init__(self, task, network, *, gamma, seed: int = 0, energy: EnergyModel | None = None):
        net = StackedNetwork.from_network(network, check_task(task).dtype)
        require(net.S == 1, f"{self.name} runs over one connected subnet (S = 1), got S={net.S}")
        super().__init__(task, net, gamma=gamma, K=1, seed=seed, energy=energy)

    def init(self, x0=None) -> DSGDState:
        x0 = self.initial_models(x0)
        zero = CommCounts()
        return DSGDState(t=0, x_g=x0, rng=new_rng(self.seed), K=0, comm=zero, last_comm=zero,
                         X=x0.expand(self.net.n, -1).clone())

    def round_traffic(self, K: int = 1, h: np.ndarray | None = None) -> RoundTraffic:
        """One model exchange over the links of W; no server (K, h unused)."""
        none = np.zeros(self.net.S, dtype=np.int64)
        return RoundTraffic(model_exchanges=1, tracking_exchanges=0, uploaders=none,
                            upload_floats_each=0, receivers=none, download_floats_each=0,
                            gradients=self.net.n)

    def step(self, state: DSGDState) -> DSGDState:
        gen = generator_from(state.rng)
        X = self.net.mix(state.X) - self.gamma * self.task.stochastic_grad(state.X, gen)
        return self.advance(state, x_g=X.mean(dim=0), rng=gen.get_state(), K=1,
                            last_comm=self.counts(self.round_traffic()), X=X)
