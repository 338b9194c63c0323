r"""Aggregation rules of the federated round: the server's change Delta from the participants'
displacements Delta_j = x_j^{(t, tau_j)} - x^{(t)} (rows of D, (k, d)) and the participation
weights w_j (:mod:`fedbound.network.sampling`).

* :class:`WeightedMean`: :math:`\Delta = \sum_j w_j \Delta_j` (FedAvg, FedNova eq. (2) [001 L52]).
* :class:`Normalized`: FedNova's normalized averaging (eq. (12) [001 L198-L202]):
  :math:`\Delta = \tau_{eff} \sum_j w_j \Delta_j / \|a_j\|_1`, with a_j the local solver's
  accumulation vector over tau_j steps (``Transform.accumulation``) and by default
  :math:`\tau_{eff} = \sum_j w_j \|a_j\|_1` ("same as FedAvg", App. H [001 L961]); a number fixes
  tau_eff instead. With equal a_j it equals the weighted mean.

An aggregation rule is any callable ``rule(D, weights, tau, client) -> Delta (d,)``.
"""
from __future__ import annotations

import numpy as np
import torch

from fedbound.errors import require
from fedbound.validate import number


class WeightedMean:
    """Delta = sum_j w_j Delta_j."""

    name = "mean"

    def __call__(self, D: torch.Tensor, weights: torch.Tensor, tau: torch.Tensor, client) -> torch.Tensor:
        return weights @ D


class Normalized:
    """FedNova: Delta = tau_eff sum_j w_j Delta_j / ||a_j||_1 (tau_eff None: sum_j w_j ||a_j||_1)."""

    name = "normalized"

    def __init__(self, tau_eff: float | None = None):
        self.tau_eff = None if tau_eff is None else number("tau_eff", tau_eff, low=0.0, low_open=True)

    def __call__(self, D: torch.Tensor, weights: torch.Tensor, tau: torch.Tensor, client) -> torch.Tensor:
        require(client.accumulation is not None,
                "normalized averaging needs a local solver that is linear in the gradients "
                "(Transform.accumulation); adaptive client optimizers have none")
        values, inverse = torch.unique(tau, return_inverse=True)   # few distinct tau: one a each
        norms = torch.tensor([float(np.sum(client.accumulation(int(v)))) for v in values],
                             dtype=D.dtype)[inverse]
        tau_eff = float(weights @ norms) if self.tau_eff is None else self.tau_eff
        return tau_eff * ((weights / norms) @ D)
