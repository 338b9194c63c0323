"""SD-GT: semi-decentralized gradient tracking (Chen, Wang, Brinton; seed 003, Alg. 1
[L105-L136], eqs. (4)-(11) [L140-L172]; engineering notes sdgt.md 2.1).

Per global round t (rows of the (n, d) tensors are clients, W = blkdiag(W_s) symmetric):

    for k = 1..K:   g^{t,k} = grad f_i(x_i^{t,k}, xi)                        (stochastic gradient)
                    x^{t,k+1/2} = x^{t,k} - gamma (g^{t,k} + y^t + z^t)      (4)
                    x^{t,k+1}   = W x^{t,k+1/2}                              (5) ATC mixing
    z~^{t,k} = x^{t,k+1/2} - x^{t,k} + gamma y^t = -gamma (g^{t,k} + z^t)    (6)
    z^{t+1} = z^t + (1/(K gamma)) (S - W S),   S = sum_k z~^{t,k}            (7) one D2D exchange
    server samples C'_s (h_s clients of subnet s); each sampled j uploads
    x~_j = x_j^{t,K+1} - x_j^{t,1} + K gamma y_j^t                           (8)
    x~_g = sum_s omega_s (1/h_s) sum_{j in C'_s} x~_j                        (9) see aggregator
    x_g^{t+1} = x_g^t + x~_g                                                 (10)
    psi_s^{t+1} = (1/(K gamma)) ((1/h_s) sum_{j in C'_s} x~_j - x~_g)         (11)
    sampled i:   x_i^{t+1,1} = x_g^{t+1},  y_i^{t+1} = psi_{s(i)}^{t+1}       [L172]
    unsampled i: x_i^{t+1,1} = x_i^{t,K+1}, y_i^{t+1} = y_i^t                 [L130-L134]
    (z is updated for every client, sampled or not.)

Choices where the paper is ambiguous (sdgt.md section 8):
* Initialisation (F1, [L111-L112]): the printed sums use grad f_i; we use grad f_j:
  y_i^1 = gbar - gbar_s, z_i^1 = gbar_s - g_i at x^0 (init="corrected", default).
  init="printed" reproduces the listing literally (then y^1 = z^1 = 0).
* Aggregator (F2, [L163]): default omega_s = m_s/n ("subnet_weighted"), which makes x* a fixed
  point for unequal subnet sizes; "paper" uses 1/(S h_s) as printed (omega_s = 1/S).
* Time-varying K_t: the current round's K is used in (7), (8) and (11).
* (6) is used in its closed form -gamma (g^{t,k} + z^t): the round accumulates sum_k g^{t,k}.
* gbar is computed as sum_s (m_s/n) gbar_s so that y^1 = 0 exactly when S = 1.
* The sampling mask is drawn at the start of the round; it is independent of the gradients, so
  this has the law of drawing it at Step 3.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, NamedTuple

import numpy as np
import torch

from fedbound.algorithms.accounting import CommCounts, EnergyModel, RoundTraffic
from fedbound.algorithms.base import (Models, State, StateTensor, Steps, check_task,
                                      generator_from, new_rng)
from fedbound.algorithms.options import CLIENTS_PER_SUBNET, LOCAL_STEPS_K, LR_GAMMA
from fedbound.algorithms.registry import AlgorithmSpec, register
from fedbound.algorithms.semidecentralized.base import PerSubnet, SemiDecentralized
from fedbound.algorithms.stacked import StackedNetwork
from fedbound.argtypes import NonNegativeArray, Positive, Seed
from fedbound.errors import UnknownNameError
from fedbound.network import Network
from fedbound.tasks.base import Task

INITS = ("corrected", "printed")


class SDGTRound(NamedTuple):
    """Result of one SD-GT round. X_end = X^{t,K+1} before the reset of sampled clients;
    inner_X[k-1] = X^{t,k} and inner_G[k-1] = the gradients used at D2D round k (k = 1..K),
    present only with record_inner=True."""

    X: StateTensor
    Y: StateTensor
    Z: StateTensor
    x_g: StateTensor
    psi: StateTensor
    X_end: StateTensor
    inner_X: StateTensor | None
    inner_G: StateTensor | None


def sdgt_round(X: torch.Tensor, Y: torch.Tensor, Z: torch.Tensor, x_g: torch.Tensor,
               psi: torch.Tensor, *, grad_fn: Callable[[torch.Tensor], torch.Tensor],
               net: StackedNetwork, K: Steps, gamma: Positive, omega: torch.Tensor,
               sampled: torch.Tensor | None = None, global_aggregation: bool = True,
               record_inner: bool = False) -> SDGTRound:
    """One SD-GT global round (4)-(11) as a pure function of the state tensors.

    X, Y, Z: (n, d) models x^{t,1}, trackers y^t, z^t; x_g: (d,); psi: (S, d).
    grad_fn(X) -> (n, d) local (stochastic) gradients, called K times in order.
    sampled: bool mask (n,) of C' (at least one client per subnet); None = full participation.
    This is where the sampled-client rule enters: only the ``sampled`` rows enter (9), (11) and
    are reset. With exact gradients and sampled fixed, the map is affine in (X, Y, Z, x_g, psi)
    on quadratics, so torch.func.jacrev gives the exact iteration operator.
    """
    Kgamma = K * gamma
    gamma_yz = gamma * (Y + Z)
    Xk = X
    G_sum = torch.zeros_like(X)
    inner_X, inner_G = [], []
    for _ in range(K):
        G = grad_fn(Xk)
        if record_inner:
            inner_X.append(Xk)
            inner_G.append(G)
        G_sum.add_(G)
        Xk = net.mix(torch.add(Xk, G, alpha=-gamma).sub_(gamma_yz))   # (4), (5)
    S_sum = torch.add(G_sum, Z, alpha=K).mul_(-gamma)                 # sum_k z~^{t,k}, (6)
    Z_new = torch.add(Z, S_sum - net.mix(S_sum), alpha=1.0 / Kgamma)  # (7)
    stacked_X = torch.stack(inner_X) if record_inner else None
    stacked_G = torch.stack(inner_G) if record_inner else None
    if not global_aggregation:
        return SDGTRound(Xk, Y, Z_new, x_g, psi, Xk, stacked_X, stacked_G)
    X_tilde = torch.sub(Xk, X).add_(Y, alpha=Kgamma)                  # (8)
    subnet_means = net.sampled_mean(X_tilde, sampled)                 # (1/h_s) sum_{C'_s} x~_j
    x_tilde_g = omega @ subnet_means                                  # (9)
    x_g_new = x_g + x_tilde_g                                         # (10)
    psi_new = (subnet_means - x_tilde_g) / Kgamma                     # (11)
    psi_rows = net.expand(psi_new)
    if sampled is None:
        X_new = x_g_new.expand_as(X).clone()
        Y_new = psi_rows
    else:
        rows = sampled[:, None]
        X_new = torch.where(rows, x_g_new, Xk)
        Y_new = torch.where(rows, psi_rows, Y)
    return SDGTRound(X_new, Y_new, Z_new, x_g_new, psi_new, Xk, stacked_X, stacked_G)


@dataclass(frozen=True)
class SDGTState(State):
    """X (n, d): client models x^{t,1} at the start of the next round; Y, Z (n, d): trackers;
    psi (S, d): server trackers; h (S,): sample sizes of the last round (0 without global
    aggregation); mask (n,) bool: clients sampled in the last round (None before the first);
    X_end (n, d): X^{t,K+1} of the last round before the reset (the controller's
    pre-aggregation models); inner_X, inner_G (K, n, d): inner iterates X^{t,k} and the
    gradients used, k = 1..K, of the last round when record_inner=True."""

    X: StateTensor
    Y: StateTensor
    Z: StateTensor
    psi: StateTensor
    h: NonNegativeArray
    mask: torch.Tensor | None = None
    X_end: StateTensor | None = None
    inner_X: StateTensor | None = None
    inner_G: StateTensor | None = None


class SDGT(SemiDecentralized):
    """SD-GT (Alg. 1 of seed 003) over a fedbound.network.Network.

    Parameters: task (fedbound.tasks Task), network, lr (the step size gamma), local_steps (K, D2D
    rounds per global round), clients_per_subnet (h, per-subnet sample sizes, int or (S,), default
    m_s = full participation; the old names gamma, K, h still work and warn),
    aggregator ("subnet_weighted" | "paper"), init ("corrected" | "printed"),
    global_aggregation (False: skip Step 3, for the S = 1, K = 1 equivalence with ATC-GT),
    record_inner (keep X^{t,k} and gradients in the state), seed, energy (EnergyModel).
    """

    name = "SD-GT"

    def __init__(self, task: Task, network: Network, *, lr: Positive | None = None,
                 local_steps: Steps | None = None, clients_per_subnet: PerSubnet | None = None,
                 aggregator: Literal["subnet_weighted", "paper"] = "subnet_weighted",
                 init: Literal["corrected", "printed"] = "corrected", global_aggregation: bool = True,
                 record_inner: bool = False, seed: Seed = 0, energy: EnergyModel | None = None,
                 **paper_names):
        net = StackedNetwork.from_network(network, check_task(task).dtype)
        super().__init__(task, net, lr=lr, local_steps=local_steps,
                         clients_per_subnet=clients_per_subnet, seed=seed, energy=energy,
                         **paper_names)
        if init not in INITS:
            raise UnknownNameError(f"init must be one of {INITS}, got {init!r}")
        self.aggregator = aggregator
        self.omega = net.aggregation_weights(aggregator)
        self.init_mode = init
        self.global_aggregation = bool(global_aggregation)
        self.record_inner = bool(record_inner)

    def init(self, x0: Models | None = None) -> SDGTState:
        """Alg. 1 lines 1-7 [L109-L116] with the corrected trackers (F1)."""
        x0 = self.initial_models(x0)
        net = self.net
        X = x0.expand(net.n, -1).clone()
        gen = generator_from(new_rng(self.seed))
        if self.init_mode == "corrected":
            G0 = self.task.stochastic_grad(X, gen)
            g_sub = net.subnet_mean(G0)                        # gbar_s, (S, d)
            g_bar = (net.m_t / net.n) @ g_sub                   # gbar = sum_s (m_s/n) gbar_s
            Y = net.expand(g_bar - g_sub)
            Z = net.expand(g_sub) - G0
        else:
            Y = torch.zeros_like(X)
            Z = torch.zeros_like(X)
        zero = CommCounts()
        return SDGTState(t=0, x_g=x0, rng=gen.get_state(), K=0, comm=zero, last_comm=zero,
                         X=X, Y=Y, Z=Z, psi=torch.zeros(net.S, self.task.d, dtype=X.dtype),
                         h=np.zeros(net.S, dtype=np.int64))

    def round_traffic(self, K: Steps, h: NonNegativeArray) -> RoundTraffic:
        """K model exchanges + 1 tracking exchange; each sampled client uploads x~_j (d floats)
        and downloads x_g and psi_s (2d floats)."""
        d = self.task.d
        return RoundTraffic(model_exchanges=K, tracking_exchanges=1, uploaders=h,
                            upload_floats_each=d, receivers=h, download_floats_each=2 * d,
                            gradients=K * self.net.n)

    def round_fn(self, sampled: torch.Tensor | None = None, K: Steps | None = None) -> Callable:
        """The deterministic round map (X, Y, Z, x_g, psi) -> (X, Y, Z, x_g, psi) with exact
        gradients task.grad and a fixed sampled mask (None: full participation); for building
        the exact linear iteration operator with torch.func.jacrev on quadratics."""
        K = self.K if K is None else K

        def round_map(X, Y, Z, x_g, psi):
            out = sdgt_round(X, Y, Z, x_g, psi, grad_fn=self.task.grad, net=self.net, K=K,
                             gamma=self.gamma, omega=self.omega, sampled=sampled,
                             global_aggregation=self.global_aggregation)
            return out.X, out.Y, out.Z, out.x_g, out.psi

        return round_map

    def step(self, state: SDGTState, *, local_steps: Steps | None = None,
             clients_per_subnet: PerSubnet | None = None, **paper_names) -> SDGTState:
        """One global round; ``local_steps`` (K) and ``clients_per_subnet`` (h) override this
        round's D2D rounds and sample sizes."""
        K, h = self.round_settings(local_steps, clients_per_subnet, **paper_names)
        gen = generator_from(state.rng)
        if self.global_aggregation:
            sampled = self.sample(h, gen)
        else:
            h, sampled = np.zeros_like(h), None
        out = sdgt_round(state.X, state.Y, state.Z, state.x_g, state.psi,
                         grad_fn=lambda X: self.task.stochastic_grad(X, gen), net=self.net, K=K,
                         gamma=self.gamma, omega=self.omega, sampled=sampled,
                         global_aggregation=self.global_aggregation,
                         record_inner=self.record_inner)
        return self.advance(state, x_g=out.x_g, rng=gen.get_state(), K=K,
                            last_comm=self.counts(self.round_traffic(K, h)), X=out.X, Y=out.Y,
                            Z=out.Z, psi=out.psi, h=h, mask=self.net.mask_of(sampled, h),
                            X_end=out.X_end, inner_X=out.inner_X, inner_G=out.inner_G)


register(AlgorithmSpec("sdgt", SDGT, "SD-GT: semi-decentralized gradient tracking (seed 003, Alg. 1)",
                       "semi-decentralized", (LR_GAMMA, LOCAL_STEPS_K, CLIENTS_PER_SUBNET),
                       network="required", default_subnets=3))
