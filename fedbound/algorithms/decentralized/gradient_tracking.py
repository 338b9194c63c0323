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

import dataclasses
from dataclasses import dataclass

from fedbound.algorithms.base import Models, StateTensor, generator_from
from fedbound.algorithms.decentralized.base import Decentralized, DecentralizedState
from fedbound.algorithms.options import LR_GAMMA
from fedbound.algorithms.registry import AlgorithmSpec, register


@dataclass(frozen=True)
class GradientTrackingState(DecentralizedState):
    """X (n, d): models x^t; T (n, d): trackers zhat^t; G (n, d): gradients g(x^t) used by T."""

    T: StateTensor
    G: StateTensor


class GradientTracking(Decentralized):
    """ATC gradient tracking over a one-subnet fedbound.network.Network."""

    name = "ATC-GT"

    def init(self, x0: Models | None = None) -> GradientTrackingState:
        base = super().init(x0)
        gen = generator_from(base.rng)
        G = self.task.stochastic_grad(base.X, gen)
        return self.extend(dataclasses.replace(base, rng=gen.get_state()), GradientTrackingState,
                           T=G, G=G)

    def step(self, state: GradientTrackingState) -> GradientTrackingState:
        gen = generator_from(state.rng)
        X = self.net.mix(state.X - self.gamma * state.T)
        G = self.task.stochastic_grad(X, gen)
        T = self.net.mix(state.T) + G - state.G
        return self.advance(state, x_g=X.mean(dim=0), rng=gen.get_state(), K=1,
                            last_comm=self.counts(self.traffic(tracking_exchanges=1)), X=X, T=T, G=G)


register(AlgorithmSpec("gt", GradientTracking, "ATC gradient tracking over one connected subnet",
                       "decentralized", (LR_GAMMA,), network="required", default_subnets=1))

__all__ = ["GradientTracking", "GradientTrackingState"]
