r"""Aggregation rules of the federated round: the server's change Delta from the participants'
displacements Delta_j = x_j^{(t, tau_j)} - x^{(t)} (rows of D, (k, d)) and the participation
weights w_j (:mod:`fedbound.network.sampling`).

* :class:`WeightedMean`: :math:`\Delta = \sum_j w_j \Delta_j` (FedAvg, FedNova eq. (2) [001 L52]).
  The w_j come from the task's weights p_i through the participation scheme (full and uniform
  participation: p_j / sum_{i in S_t} p_i): p_i is uniform by default, or the clients' numbers of
  examples n_i / sum_j n_j with the task's ``weights="examples"`` (``--weights examples``), which
  is Flower's weighting (its ``aggregate`` weights each client of the round by the
  ``num_examples`` it reports).
* :class:`Normalized`: FedNova's normalized averaging (eq. (12) [001 L198-L202]; Alg. 1 line 6
  [001 L969]): :math:`\Delta = \tau_{eff} \sum_j w_j \Delta_j / \|a_j\|_1`, with a_j the local
  solver's accumulation vector over tau_j steps (``Transform.accumulation``). tau_eff policies:
  ``"accumulation"`` (default, App. H [001 L961]) :math:`\sum_j w_j \|a_j\|_1 / \sum_j w_j`,
  ``"steps"`` :math:`\sum_j w_j \tau_j / \sum_j w_j` (vanilla SGD "consistent with FedAvg"
  [L200], FedNova-Prox [L202]), a number, or a callable ``(w, tau, norms) -> float`` (numpy arrays
  of the participants). The division by :math:`\sum_j w_j` is Alg. 1's renormalization over the
  sampled set [L969]; L961 prints tau_eff without it (fednova.md 2.6 flag): the two agree whenever
  the weights sum to 1 (full participation, Alg. 1's renormalized subset, sampling with
  replacement); with the unbiased weights p_i n/q the normalized form keeps tau_eff an average
  number of steps. With equal a_j and either policy the rule is the weighted mean, bitwise
  (the per-client factors tau_eff/||a_j||_1 are computed as ratios that are exactly 1 then).

An aggregation rule is any callable ``rule(D, weights, tau, client) -> Delta (d,)``.
"""
from __future__ import annotations

from typing import Callable, Literal

import numpy as np
import torch

from fedbound.algorithms.optim.base import Transform
from fedbound.argtypes import Positive
from fedbound.errors import UnknownNameError, require
from fedbound.validate import number

#: an aggregation rule: rule(D (k, d), weights (k,), tau (k,), client transform) -> Delta (d,)
Aggregation = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, Transform], torch.Tensor]
#: a tau_eff policy: a name, a number > 0 or a callable (w, tau, norms) -> float
TauEff = Positive | Literal["accumulation", "steps"] | Callable[[np.ndarray, np.ndarray, np.ndarray], float]


class WeightedMean:
    """Delta = sum_j w_j Delta_j."""

    name = "mean"

    def __call__(self, D: torch.Tensor, weights: torch.Tensor, tau: torch.Tensor | None,
                 client: Transform | None) -> torch.Tensor:
        return weights @ D


TAU_EFF_POLICIES = ("accumulation", "steps")


def tau_eff_policy(value: TauEff | None, name: str = "tau_eff") -> TauEff:
    """A tau_eff policy: "accumulation", "steps", a number > 0 or a callable (w, tau, norms) -> float
    (None is the default "accumulation"; text from the command line: :func:`tau_eff_text`)."""
    if value is None:
        return "accumulation"
    if callable(value):
        return value
    if isinstance(value, str):
        if value not in TAU_EFF_POLICIES:
            raise UnknownNameError(f"{name} must be one of {', '.join(TAU_EFF_POLICIES)} or a "
                                   f"number > 0, got {value!r:.60}")
        return value
    return number(name, value, low=0.0, low_open=True)


def tau_eff_text(text: str) -> str | float:
    """``--tau-eff`` as typed: a policy name, or a number ("12.5")."""
    try:
        return float(text)
    except ValueError:
        return text


class Normalized:
    """FedNova: Delta = sum_j w_j (tau_eff / ||a_j||_1) Delta_j (module docstring)."""

    name = "normalized"

    def __init__(self, tau_eff: TauEff | None = "accumulation"):
        self.tau_eff = tau_eff_policy(tau_eff)

    def norms(self, tau: torch.Tensor, client: Transform) -> torch.Tensor:
        """||a_j||_1 (k,) float64 of the solver ``client`` after tau_j steps."""
        require(client.accumulation is not None,
                "normalized averaging needs a local solver that is linear in the gradients "
                "(Transform.accumulation); adaptive client optimizers have none")
        values, inverse = torch.unique(tau, return_inverse=True)   # few distinct tau: one a each
        return torch.tensor([float(np.sum(client.accumulation(int(v)))) for v in values],
                            dtype=torch.float64)[inverse]

    def factors(self, weights: torch.Tensor, tau: torch.Tensor, client: Transform) -> torch.Tensor:
        """tau_eff / ||a_j||_1 for every participant (k,) float64. For the two policies, per distinct
        norm v: (sum_k w_k q_k / v) / sum_k w_k with q = norms or tau, so that equal q_k = v give
        exactly 1."""
        norms = self.norms(tau, client)
        w = weights.detach().to(torch.float64).cpu().numpy()
        if w.size == 0:                      # nobody took part (Poisson participation)
            return torch.zeros(0, dtype=torch.float64)
        a = norms.cpu().numpy()
        if callable(self.tau_eff):
            value = number("tau_eff (the policy's value)",
                           self.tau_eff(w.copy(), tau.cpu().numpy().copy(), a.copy()), low=0.0, low_open=True)
            return torch.as_tensor(value / a)
        if not isinstance(self.tau_eff, str):
            return torch.as_tensor(self.tau_eff / a)
        q = a if self.tau_eff == "accumulation" else tau.cpu().numpy().astype(np.float64)
        total = float(np.sum(w))
        require(total > 0, "the participants' weights sum to 0: tau_eff is undefined")
        values, inverse = np.unique(a, return_inverse=True)
        ratio = np.array([float(np.sum(w * (q / v))) / total for v in values])
        return torch.as_tensor(ratio[inverse.reshape(-1)])

    def __call__(self, D: torch.Tensor, weights: torch.Tensor, tau: torch.Tensor,
                 client: Transform) -> torch.Tensor:
        return (weights * self.factors(weights, tau, client).to(D.dtype)) @ D
