"""Scaffnew / ProxSkip (Mishchenko, Malinovsky, Stich, Richtarik, ICML 2022) for federated
learning, with deterministic communication every K local steps -- the algorithm SD-GT reduces to
when S = n (one client per subnet; seed 003 Sec. III-C Case 1 [L179-L190], sdgt.md 2.3).

ProxSkip with the consensus prox and communication probability p, here p = 1/K deterministic:
    x^_i = x_i - gamma (g_i(x_i) - h_i)                         every local step
    at the K-th step of a round (communication):
      x_i <- xbar = (1/n) sum_j (x^_j - (gamma/p) h_j)          (prox of the consensus indicator)
      h_i <- h_i + (p/gamma) (xbar - x^_i)
    otherwise x_i <- x^_i.
With y_i = -h_i this is SD-GT's Case 1 recursion
    y_i^{t+1} = y_i^t + (x_i^{t,K+1} - x_g^{t+1}) / (K gamma)    [L186-L188].
Control variates start at h_i = 0 (sum_i h_i = 0 as ProxSkip requires); the state can be replaced
(dataclasses.replace) to start elsewhere.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from fedbound.algorithms.accounting import CommCounts, EnergyModel, RoundTraffic
from fedbound.algorithms.base import Models, State, StateTensor, Steps, check_task, generator_from, new_rng
from fedbound.algorithms.options import LOCAL_STEPS_K, LR_GAMMA
from fedbound.algorithms.registry import AlgorithmSpec, register
from fedbound.algorithms.semidecentralized.base import SemiDecentralized
from fedbound.algorithms.stacked import StackedNetwork
from fedbound.argtypes import NonNegativeArray, Positive, Seed
from fedbound.tasks.base import Task


@dataclass(frozen=True)
class ScaffnewState(State):
    """X (n, d): client models after the last communication (all equal to x_g); H (n, d):
    control variates h_i."""

    X: StateTensor
    H: StateTensor


class Scaffnew(SemiDecentralized):
    """Scaffnew with communication every K local steps; full participation; n singleton groups
    for energy accounting (E_ds[i] per client round trip)."""

    name = "Scaffnew"

    def __init__(self, task: Task, *, lr: Positive | None = None, local_steps: Steps | None = None,
                 seed: Seed = 0, energy: EnergyModel | None = None, **paper_names):
        super().__init__(task, StackedNetwork.singletons(check_task(task).n, task.dtype), lr=lr,
                         local_steps=local_steps, seed=seed, energy=energy, **paper_names)

    def init(self, x0: Models | None = None) -> ScaffnewState:
        x0 = self.initial_models(x0)
        zero = CommCounts()
        X = x0.expand(self.net.n, -1).clone()
        return ScaffnewState(t=0, x_g=x0, rng=new_rng(self.seed), K=0, comm=zero,
                             last_comm=zero, X=X, H=torch.zeros_like(X))

    def round_traffic(self, K: Steps, h: NonNegativeArray) -> RoundTraffic:
        """One communication per round: every client uploads x^_i - (gamma/p) h_i and downloads
        xbar (d floats each)."""
        d = self.task.d
        return RoundTraffic(model_exchanges=0, tracking_exchanges=0, uploaders=h,
                            upload_floats_each=d, receivers=h, download_floats_each=d,
                            gradients=K * self.net.n)

    def step(self, state: ScaffnewState, *, local_steps: Steps | None = None,
             **paper_names) -> ScaffnewState:
        K, h = self.round_settings(local_steps, None, **paper_names)
        gen = generator_from(state.rng)
        X, H, gamma = state.X, state.H, self.gamma
        for _ in range(K):
            X = X - gamma * (self.task.stochastic_grad(X, gen) - H)
        x_bar = (X - (K * gamma) * H).mean(dim=0)
        H_new = H + (x_bar - X) / (K * gamma)
        return self.advance(state, x_g=x_bar, rng=gen.get_state(), K=K,
                            last_comm=self.counts(self.round_traffic(K, h)),
                            X=x_bar.expand_as(X).clone(), H=H_new)


register(AlgorithmSpec("scaffnew", Scaffnew, "Scaffnew / ProxSkip with communication every K steps",
                       "semi-decentralized", (LR_GAMMA, LOCAL_STEPS_K)))
