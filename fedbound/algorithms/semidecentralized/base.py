"""The semi-decentralized family: SD-GT (seed 003) and its baselines SD-FedAvg and Scaffnew, over a
subnet structure with a step size gamma, K D2D rounds (local steps) per global round and h_s
clients sampled per subnet (SD-GT Sec. III [L105-L172]). (SD-GT's other baselines: SCAFFOLD on the
federated round, :mod:`fedbound.algorithms.federated.scaffold`; gradient tracking in the
decentralized family.)

Each of them keeps its own round function; this base holds what they share (the torch view of the
network, gamma, K, h, the energy model, per-subnet sampling and the counters of a round).
"""
from __future__ import annotations

import numpy as np
import torch

from fedbound.algorithms.accounting import CommCounts, EnergyModel, RoundTraffic, count_round
from fedbound.algorithms.base import MAX_LOCAL_STEPS, Algorithm
from fedbound.algorithms.stacked import StackedNetwork
from fedbound.errors import require
from fedbound.validate import integer, number
from fedbound.network.sampling import sample_mask


def validate_step_size(gamma) -> float:
    return number("gamma", gamma, low=0.0, low_open=True)


def validate_K(K) -> int:
    return integer("K", K, low=1, high=MAX_LOCAL_STEPS)


class SemiDecentralized(Algorithm):
    """Base of SD-GT and its baselines: task, stacked network, step size gamma, K, sampling h, seed.

    ``round_traffic`` describes what a round transmits (accounting.py turns it into counters).
    ``net`` is the torch view of the clients' network (subnets, mixing, sampling).
    """

    def __init__(self, task, net: StackedNetwork, *, gamma, K, h=None, seed: int = 0,
                 energy: EnergyModel | None = None):
        require(net.n == task.n, f"the network has n={net.n} clients but the task has n={task.n}")
        super().__init__(task, seed=seed)
        self.net = net
        self.gamma = validate_step_size(gamma)
        self.K = validate_K(K)
        self.h = net.full_sampling() if h is None else net.validate_h(h)
        self.energy = EnergyModel.unit(net.S) if energy is None else energy
        require(self.energy.E_ds.size == net.S,
                f"energy model has {self.energy.E_ds.size} subnets, the network has S={net.S}")

    def round_settings(self, K, h) -> tuple[int, np.ndarray]:
        """This round's K and h: the overrides if given, else the algorithm's defaults."""
        K = self.K if K is None else validate_K(K)
        h = self.h if h is None else self.net.validate_h(h)
        return K, h

    def sample(self, h: np.ndarray, gen: torch.Generator) -> torch.Tensor | None:
        """Sampled-client mask (n,) (uniform without replacement, h_s per subnet), or None under
        full participation (no randomness consumed)."""
        if np.array_equal(h, self.net.m):
            return None
        return sample_mask(self.net, h, gen)

    def counts(self, traffic: RoundTraffic) -> CommCounts:
        return count_round(traffic, self.net.directed_links, self.net.m, self.task.d, self.energy)
