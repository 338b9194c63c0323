"""SCAFFOLD (Karimireddy et al., ICML 2020), the SD-GT paper's centralized baseline
(seed 003 [L491], sdgt.md 2.4): star topology, no D2D, global step size 1, option-II control
variates.

Per round t, the server samples S_t; every sampled client i runs, from y_i = x,
    y_i <- y_i - gamma (g_i(y_i) - c_i + c)         K times
    c_i^+ = c_i - c + (x - y_i) / (K gamma)           (option II)
and the server updates
    x <- x + sum_s omega_s (1/h_s) sum_{i in S_t, s} (y_i - x)     (= (1/|S_t|) sum (y_i - x) when
                                                                    h_s/m_s is the same for all s)
    c <- c + (1/n) sum_{i in S_t} (c_i^+ - c_i),     c_i <- c_i^+ for i in S_t.
Sampling: per-subnet (h_s of subnet s, as SD-GT; the paper does not state SCAFFOLD's
participation, sdgt.md 2.4 flag) when a network is given, else h clients uniformly out of n.
Control variates start at zero, so c = (1/n) sum_i c_i at every round.
Vectorization: local steps run on all n rows and the unsampled rows are discarded (the Task API
evaluates all clients at once).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from fedbound.algorithms.accounting import CommCounts, EnergyModel, RoundTraffic
from fedbound.algorithms.base import State, generator_from, new_rng
from fedbound.algorithms.semidecentralized import SemiDecentralized
from fedbound.algorithms.stacked import StackedNetwork


@dataclass(frozen=True)
class SCAFFOLDState(State):
    """c (d,): server control variate; C (n, d): client control variates c_i; h (S,), mask (n,):
    sampling of the last round."""

    c: torch.Tensor
    C: torch.Tensor
    h: np.ndarray
    mask: torch.Tensor | None = None


class SCAFFOLD(SemiDecentralized):
    """SCAFFOLD with per-subnet sampling (network given) or uniform sampling of h of n clients."""

    name = "SCAFFOLD"

    def __init__(self, task, *, gamma, K, network=None, h=None, seed: int = 0,
                 energy: EnergyModel | None = None):
        net = (StackedNetwork.from_network(network, task.dtype) if network is not None
               else StackedNetwork.one_group(task.n, task.dtype))
        super().__init__(task, net, gamma=gamma, K=K, h=h, seed=seed, energy=energy)
        self.omega = net.aggregation_weights("subnet_weighted")

    def init(self, x0=None) -> SCAFFOLDState:
        x0 = self.initial_models(x0)
        zero = CommCounts()
        return SCAFFOLDState(t=0, x_g=x0, rng=new_rng(self.seed), K=0, comm=zero,
                             last_comm=zero, c=torch.zeros_like(x0),
                             C=torch.zeros(self.net.n, self.task.d, dtype=x0.dtype),
                             h=np.zeros(self.net.S, dtype=np.int64))

    def round_traffic(self, K: int, h: np.ndarray) -> RoundTraffic:
        """No D2D; each sampled client downloads (x, c) and uploads (y_i - x, c_i^+ - c_i):
        2d floats each way."""
        d = self.task.d
        return RoundTraffic(model_exchanges=0, tracking_exchanges=0, uploaders=h,
                            upload_floats_each=2 * d, receivers=h, download_floats_each=2 * d,
                            gradients=K * self.net.n)

    def step(self, state: SCAFFOLDState, *, K: int | None = None, h=None) -> SCAFFOLDState:
        K, h = self.round_settings(K, h)
        gen = generator_from(state.rng)
        sampled = self.sample(h, gen)
        x, c, C = state.x_g, state.c, state.C
        correction = c - C                                   # -c_i + c, (n, d)
        Yk = x.expand_as(C)
        for _ in range(K):
            Yk = Yk - self.gamma * (self.task.stochastic_grad(Yk, gen) + correction)
        C_plus = C - c + (x - Yk) / (K * self.gamma)
        x_new = x + self.omega @ self.net.sampled_mean(Yk - x, sampled)
        if sampled is None:
            c_new = c + (C_plus - C).mean(dim=0)
            C_new = C_plus
        else:
            rows = sampled[:, None]
            c_new = c + torch.where(rows, C_plus - C, 0.0).sum(dim=0) / self.net.n
            C_new = torch.where(rows, C_plus, C)
        return self.advance(state, x_g=x_new, rng=gen.get_state(), K=K,
                            last_comm=self.counts(self.round_traffic(K, h)), c=c_new, C=C_new,
                            h=h, mask=self.net.mask_of(sampled, h))
