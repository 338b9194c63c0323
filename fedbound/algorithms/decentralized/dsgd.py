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

from fedbound.algorithms.base import generator_from
from fedbound.algorithms.decentralized.base import Decentralized, DecentralizedState
from fedbound.algorithms.options import LR_GAMMA
from fedbound.algorithms.registry import AlgorithmSpec, register


class DSGD(Decentralized):
    """D-PSGD over a one-subnet fedbound.network.Network with step size ``gamma``."""

    name = "DSGD"

    def step(self, state: DecentralizedState) -> DecentralizedState:
        gen = generator_from(state.rng)
        X = self.net.mix(state.X) - self.gamma * self.task.stochastic_grad(state.X, gen)
        return self.advance(state, x_g=X.mean(dim=0), rng=gen.get_state(), K=1,
                            last_comm=self.counts(self.traffic()), X=X)


register(AlgorithmSpec("dsgd", DSGD, "D-PSGD: decentralized SGD over one connected subnet "
                       "(Lian et al. 2017; AFGA's decentralized baseline)", "decentralized",
                       (LR_GAMMA,), network="required", default_subnets=1))

__all__ = ["DSGD"]
