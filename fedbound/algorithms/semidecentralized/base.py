"""The semi-decentralized family: SD-GT (seed 003) and its baselines SD-FedAvg and Scaffnew, over a
subnet structure with a step size gamma, K D2D rounds (local steps) per global round and h_s
clients sampled per subnet (SD-GT Sec. III [L105-L172]). (SD-GT's other baselines: SCAFFOLD on the
federated round, :mod:`fedbound.algorithms.federated.scaffold`; gradient tracking in the
decentralized family.)

Each of them keeps its own round function; this base holds what they share (the torch view of the
network, gamma, K, h, the energy model, per-subnet sampling and the counters of a round).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from fedbound.algorithms.accounting import CommCounts, EnergyModel, RoundTraffic, count_round
from fedbound.algorithms.base import MAX_LOCAL_STEPS, Algorithm, Steps
from fedbound.algorithms.stacked import StackedNetwork
from fedbound.argtypes import Count, Positive, Seed
from fedbound.deprecation import renamed_keywords
from fedbound.errors import require
from fedbound.network.sampling import sample_mask
from fedbound.tasks.base import Task
from fedbound.validate import integer, number

#: clients sampled per subnet and round: one count for every subnet, or one per subnet
PerSubnet = Count | Sequence[Count]


#: the paper's names of the options, taken before issue 20 (still taken, with a warning)
PAPER_NAMES = {"gamma": "lr", "K": "local_steps", "h": "clients_per_subnet"}


def paper_names(where: str, old: dict, new: dict) -> dict:
    """``new`` completed by the paper's old names in ``old`` (gamma, K, h; others: TypeError)."""
    unknown = set(old) - set(PAPER_NAMES)
    if unknown:
        raise TypeError(f"{where} got an unexpected keyword argument {sorted(unknown)[0]!r}")
    return renamed_keywords(where, PAPER_NAMES, old, new)


def validate_step_size(lr: Positive) -> float:
    return number("lr", lr, low=0.0, low_open=True)


def validate_K(local_steps: Steps) -> int:
    return integer("local_steps", local_steps, low=1, high=MAX_LOCAL_STEPS)


class SemiDecentralized(Algorithm):
    """Base of SD-GT and its baselines: task, stacked network, step size ``lr`` (the paper's
    gamma), ``local_steps`` (K), ``clients_per_subnet`` (h_s), seed. The paper's symbols name the
    attributes: ``gamma``, ``K``, ``h``.

    ``round_traffic`` describes what a round transmits (accounting.py turns it into counters).
    ``net`` is the torch view of the clients' network (subnets, mixing, sampling).
    """

    def __init__(self, task: Task, net: StackedNetwork, *, lr: Positive | None = None,
                 local_steps: Steps | None = None, clients_per_subnet: PerSubnet | None = None,
                 seed: Seed = 0, energy: EnergyModel | None = None, **old):
        given = paper_names(type(self).__name__, old, {"lr": lr, "local_steps": local_steps,
                                                       "clients_per_subnet": clients_per_subnet})
        require(net.n == task.n, f"the network has n={net.n} clients but the task has n={task.n}")
        require(given["lr"] is not None, f"{self.name} needs lr")
        require(given["local_steps"] is not None, f"{self.name} needs local_steps")
        super().__init__(task, seed=seed)
        self.net = net
        self.gamma = validate_step_size(given["lr"])
        self.K = validate_K(given["local_steps"])
        h = given["clients_per_subnet"]
        self.h = net.full_sampling() if h is None else net.validate_h(h)
        self.energy = EnergyModel.unit(net.S) if energy is None else energy
        require(self.energy.E_ds.size == net.S,
                f"energy model has {self.energy.E_ds.size} subnets, the network has S={net.S}")

    def round_settings(self, local_steps: Steps | None = None, clients_per_subnet: PerSubnet | None = None,
                       **old) -> tuple[int, np.ndarray]:
        """This round's K and h: the overrides if given (``step(state, local_steps=...,
        clients_per_subnet=...)``, the controller's hook), else the algorithm's own."""
        given = paper_names(f"{type(self).__name__}.step", old, {
            "local_steps": local_steps, "clients_per_subnet": clients_per_subnet})
        K = self.K if given["local_steps"] is None else validate_K(given["local_steps"])
        h = given["clients_per_subnet"]
        return K, self.h if h is None else self.net.validate_h(h)

    def sample(self, h: np.ndarray, gen: torch.Generator) -> torch.Tensor | None:
        """Sampled-client mask (n,) (uniform without replacement, h_s per subnet), or None under
        full participation (no randomness consumed)."""
        if np.array_equal(h, self.net.m):
            return None
        return sample_mask(self.net, h, gen)

    def counts(self, traffic: RoundTraffic) -> CommCounts:
        return count_round(traffic, self.net.directed_links, self.net.m, self.task.d, self.energy)
