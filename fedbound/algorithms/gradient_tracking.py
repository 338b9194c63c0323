"""Decentralized gradient tracking, adapt-then-combine form (NEXT / DIGing family; seed 003
Sec. III-C Case 2 [L192-L206], sdgt.md 2.3): SD-GT with S = 1, K = 1 and no global aggregation.

    x_i^{t+1} = sum_j w_ij (x_j^t - gamma zhat_j^t)                    (the paper prints zhat_i: F4)
    zhat_i^{t+1} = sum_j w_ij zhat_j^t + g_i(x_i^{t+1}) - g_i(x_i^t)
with zhat_i^0 = g_i(x^0) (standard tracker initialisation). SD-GT's corrected initialisation
corresponds to zhat_i^0 = (1/n) sum_j g_j(x^0) instead; replace ``state.T`` to start there.
One round = one iteration (one gradient per client, one model and one tracker exchange).
The network must be a single connected subnet (S = 1); the reported x_g is the network average.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from fedbound.algorithms.accounting import CommCounts, EnergyModel, RoundTraffic
from fedbound.algorithms.base import State, generator_from, new_rng
from fedbound.algorithms.semidecentralized import SemiDecentralized
from fedbound.algorithms.stacked import StackedNetwork
from fedbound.errors import require


@dataclass(frozen=True)
class GradientTrackingState(State):
    """X (n, d): models x^t; T (n, d): trackers zhat^t; G (n, d): gradients g(x^t) used by T."""

    X: torch.Tensor
    T: torch.Tensor
    G: torch.Tensor


class GradientTracking(SemiDecentralized):
    """ATC gradient tracking over a one-subnet fedbound.network.Network."""

    name = "ATC-GT"

    def __init__(self, task, network, *, gamma, seed: int = 0, energy: EnergyModel | None = None):
        net = StackedNetwork.from_network(network, task.dtype)
        require(net.S == 1, f"gradient tracking needs one connected subnet (S = 1), got S={net.S}")
        super().__init__(task, net, gamma=gamma, K=1, seed=seed, energy=energy)

    def init(self, x0=None) -> GradientTrackingState:
        x0 = self.initial_models(x0)
        X = x0.expand(self.net.n, -1).clone()
        gen = generator_from(new_rng(self.seed))
        G = self.task.stochastic_grad(X, gen)
        zero = CommCounts()
        return GradientTrackingState(t=0, x_g=x0, rng=gen.get_state(), K=0, comm=zero,
                                     last_comm=zero, X=X, T=G, G=G)

    def round_traffic(self, K: int = 1, h: np.ndarray | None = None) -> RoundTraffic:
        """One model exchange and one tracker exchange; no server (K, h unused)."""
        none = np.zeros(self.net.S, dtype=np.int64)
        return RoundTraffic(model_exchanges=1, tracking_exchanges=1, uploaders=none,
                            upload_floats_each=0, receivers=none, download_floats_each=0,
                            gradients=self.net.n)

    def step(self, state: GradientTrackingState) -> GradientTrackingState:
        gen = generator_from(state.rng)
        X = self.net.mix(state.X - self.gamma * state.T)
        G = self.task.stochastic_grad(X, gen)
        T = self.net.mix(state.T) + G - state.G
        return self.advance(state, x_g=X.mean(dim=0), rng=gen.get_state(), K=1,
                            last_comm=self.counts(self.round_traffic(1, None)), X=X, T=T, G=G)
