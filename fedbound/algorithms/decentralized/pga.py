"""Gossip SGD with periodic global averaging (PGA), one of AFGA's decentralized baselines of
Table 8 (000_bd1b5016b2d2bc05.txt [L968-L978], afga.md sec. 2 "Decentralized baselines"; beside
DSGD and DAdam). AFGA cites it only; its topology, period and step size are not stated there, so
every default below is fedbound's choice. One round = one iteration (one stochastic gradient per
client); the reported x_g is the network average.

Chen, Yuan, Zhang, Pan, Xu, Yin, "Accelerating Gossip SGD with Periodic Global Averaging",
ICML 2021, Alg. 1 (Gossip-PGA), adapt-then-combine: at iteration k = 0, 1, ...

    x_i^{k+1/2} = x_i^k - gamma g_i(x_i^k)                               (local SGD step)
    x_i^{k+1}   = (1/n) sum_j x_j^{k+1/2}     if (k + 1) mod H = 0     (global average, all-reduce)
                  sum_j w_ij x_j^{k+1/2}      otherwise                 (one gossip round)

H = 1 is parallel mini-batch SGD (every model equals the average after each step); H larger than
the run is ATC gossip SGD, x^{k+1} = W (x^k - gamma g(x^k)). Note that fedbound's DSGD is Lian et
al.'s form W x^k - gamma g(x^k) (combine, then the gradient at the pre-mixing model), so PGA without
averaging is not DSGD row by row; their averages follow the same recursion
x_bar^{k+1} = x_bar^k - gamma (1/n) sum_i g_i(x_i^k) for a doubly stochastic W. Traffic: a gossip
iteration is one model exchange over the links of W; an averaging iteration is counted as a server
round trip of the whole subnet (every client uploads d floats and downloads the d-float average;
energy E_s for it, no D2D energy), whatever all-reduce implements it. The default period H = 10
is fedbound's choice. On heterogeneous quadratics with a constant step the consensus bias of gossip
SGD shrinks monotonically as H decreases and vanishes at H = 1 (tests/algorithms/test_pga.py).
"""
from __future__ import annotations

import dataclasses

from fedbound.algorithms.accounting import EnergyModel, RoundTraffic
from fedbound.algorithms.base import generator_from
from fedbound.algorithms.decentralized.base import Decentralized, DecentralizedState
from fedbound.algorithms.options import LR_GAMMA, at_least_one
from fedbound.algorithms.registry import AlgorithmSpec, register
from fedbound.argtypes import Count, NonNegativeInt, Positive, Seed
from fedbound.network import Network
from fedbound.tasks.base import Task
from fedbound.validate import integer


class PGA(Decentralized):
    """Gossip SGD with a global average every ``period`` iterations (Chen et al. 2021, Alg. 1)."""

    name = "PGA"

    def __init__(self, task: Task, network: Network, *, lr: Positive | None = None, period: Count = 10,
                 seed: Seed = 0, energy: EnergyModel | None = None, gamma: Positive | None = None):
        super().__init__(task, network, lr=lr, seed=seed, energy=energy, gamma=gamma)
        self.period = integer("period", period, low=1)

    def averages(self, t: NonNegativeInt) -> bool:
        """Whether iteration t (0-based) ends with the global average: (t + 1) mod H = 0."""
        return (t + 1) % self.period == 0

    def averaging_traffic(self) -> RoundTraffic:
        """An averaging iteration: every client uploads and downloads d floats, no D2D exchange."""
        return dataclasses.replace(self.traffic(model_exchanges=0), uploaders=self.net.m,
                                   upload_floats_each=self.task.d, receivers=self.net.m,
                                   download_floats_each=self.task.d)

    def step(self, state: DecentralizedState) -> DecentralizedState:
        gen = generator_from(state.rng)
        Y = state.X - self.gamma * self.task.stochastic_grad(state.X, gen)
        average = self.averages(state.t)
        if average:
            x_g = Y.mean(dim=0)
            X = x_g.expand_as(Y).clone()
        else:
            X = self.net.mix(Y)
            x_g = X.mean(dim=0)
        traffic = self.averaging_traffic() if average else self.traffic()
        return self.advance(state, x_g=x_g, rng=gen.get_state(), K=1,
                            last_comm=self.counts(traffic), X=X)


register(AlgorithmSpec("pga", PGA, "Gossip-PGA: gossip SGD with a global average every H iterations "
                       "(Chen et al. 2021; AFGA's decentralized baseline)", "decentralized",
                       (LR_GAMMA, at_least_one("period", "iterations between global averages H >= 1 "
                                                         "(default 10)", examples=(1, 3))),
                       network="required", default_subnets=1))

__all__ = ["PGA"]
