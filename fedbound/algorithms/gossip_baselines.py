"""The two other decentralized baselines of AFGA's Table 8 (000_bd1b5016b2d2bc05.txt [L968-L978],
afga.md sec. 2 "Decentralized baselines"), beside DSGD (dsgd.py): gossip SGD with periodic global
averaging (PGA) and decentralized AMSGrad (DAdam). AFGA cites them only; their topology, period,
step sizes and decays are not stated there, so every default below is fedbound's choice.

Both run over one connected subnet with mixing matrix W, share DSGD's constructor and its state
(the clients' models X), count one round = one iteration (one stochastic gradient per client) and
report the network average as x_g.

PGA: Chen, Yuan, Zhang, Pan, Xu, Yin, "Accelerating Gossip SGD with Periodic Global Averaging",
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

DAdam: Nazari, Tarzanagh, Michailidis, "DADAM: A Consensus-based Distributed Adaptive Gradient
Method for Online Optimization" (arXiv 1901.09109, 2019; IEEE TSP 2022), Alg. 1, unconstrained
(the projection onto X is the identity) with a constant step alpha = gamma:

    m_i^t    = beta1 m_i^{t-1} + (1 - beta1) g_i(x_i^t)
    v_i^t    = beta2 v_i^{t-1} + (1 - beta2) g_i(x_i^t)^2
    vhat_i^t = max(vhat_i^{t-1}, v_i^t)
    x_i^{t+1} = sum_j w_ij x_j^t - gamma m_i^t / (sqrt(vhat_i^t) + tau)

with m_i^0 = v_i^0 = vhat_i^0 = 0 and NO bias correction (none in Alg. 1, as in Reddi et al.'s
AMSGrad). Choices: the paper's Alg. 1 also has a third decay beta3,
vhat^t = beta3 vhat^{t-1} + (1 - beta3) max(vhat^{t-1}, v^t) (from memory of the paper, which is
not in the seeds); this is beta3 = 0, the AMSGrad max. The paper divides by sqrt(vhat) without an
epsilon; ``tau`` > 0 is added OUTSIDE the root, as torch.optim.Adam(amsgrad=True) and FedAdam's tau
do (fedbound's AFGA/FedAMSGrad server puts its eps inside). The per-client step is fedbound's
AMSGrad transform (optim.server.amsgrad with eps_inside_sqrt=False, no bias correction) applied to
the stacked rows. Only the models travel (one model exchange per iteration); m, v, vhat stay local
(3d floats per client, counted as client state). Defaults beta1 = 0.9, beta2 = 0.999, tau = 1e-8
are torch.optim.Adam's. Identical clients make it AMSGrad on f whatever W; W = J leaves only the
last steps' spread as disagreement; W = I is independent AMSGrad per client. With heterogeneous f_i
and a constant step it stalls where sum_i grad f_i(x_i) / (sqrt(vhat_i) + tau) = 0 (each client's own
preconditioner), not at a stationary point of f, with a gap that does not shrink with gamma (the
non-convergence Chen et al. 2021a point out; measured in tests/algorithms/test_dadam.py).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from fedbound.algorithms.accounting import RoundTraffic
from fedbound.algorithms.base import generator_from
from fedbound.algorithms.dsgd import DSGD, DSGDState
from fedbound.algorithms.optim import server
from fedbound.validate import integer, number


class PGA(DSGD):
    """Gossip SGD with a global average every ``period`` iterations (Chen et al. 2021, Alg. 1)."""

    name = "PGA"

    def __init__(self, task, network, *, gamma, period: int = 10, seed: int = 0, energy=None):
        super().__init__(task, network, gamma=gamma, seed=seed, energy=energy)
        self.period = integer("period", period, low=1)

    def averages(self, t: int) -> bool:
        """Whether iteration t (0-based) ends with the global average: (t + 1) mod H = 0."""
        return (t + 1) % self.period == 0

    def round_traffic(self, K: int = 1, h: np.ndarray | None = None, *,
                      average: bool = False) -> RoundTraffic:
        """A gossip iteration: one model exchange; an averaging one: every client uploads and
        downloads d floats, no D2D exchange (K, h unused)."""
        everyone = self.net.m if average else np.zeros(self.net.S, dtype=np.int64)
        d = self.task.d if average else 0
        return RoundTraffic(model_exchanges=0 if average else 1, tracking_exchanges=0,
                            uploaders=everyone, upload_floats_each=d, receivers=everyone,
                            download_floats_each=d, gradients=self.net.n)

    def step(self, state: DSGDState) -> DSGDState:
        gen = generator_from(state.rng)
        Y = state.X - self.gamma * self.task.stochastic_grad(state.X, gen)
        average = self.averages(state.t)
        if average:
            x_g = Y.mean(dim=0)
            X = x_g.expand_as(Y).clone()
        else:
            X = self.net.mix(Y)
            x_g = X.mean(dim=0)
        return self.advance(state, x_g=x_g, rng=gen.get_state(), K=1,
                            last_comm=self.counts(self.round_traffic(average=average)), X=X)


@dataclass(frozen=True)
class DAdamState(DSGDState):
    """X (n, d): the clients' models; moments: the AMSGrad state (count t, first_moment m,
    second_moment v, max_second_moment vhat), each (n, d) but the 0-d iteration counter t."""

    moments: server.AMSGradState


class DAdam(DSGD):
    """Decentralized AMSGrad, DADAM with beta3 = 0 (Nazari et al. 2019, Alg. 1): the module
    docstring states the exact form."""

    name = "DAdam"

    def __init__(self, task, network, *, gamma, beta1: float = 0.9, beta2: float = 0.999,
                 tau: float = 1e-8, seed: int = 0, energy=None):
        super().__init__(task, network, gamma=gamma, seed=seed, energy=energy)
        self.beta1 = number("beta1", beta1, low=0.0, high=1.0, high_open=True)
        self.beta2 = number("beta2", beta2, low=0.0, high=1.0, high_open=True)
        self.tau = number("tau", tau, low=0.0, low_open=True)
        self.local = server.amsgrad(self.gamma, self.beta1, self.beta2, self.tau,
                                    eps_inside_sqrt=False)

    def init(self, x0=None) -> DAdamState:
        base = super().init(x0)
        return DAdamState(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)},
                          moments=self.local.init(base.X))

    def round_traffic(self, K: int = 1, h: np.ndarray | None = None) -> RoundTraffic:
        """DSGD's (one model exchange, n gradients) plus the n clients' moment state."""
        return dataclasses.replace(super().round_traffic(),
                                   client_state_floats=3 * self.task.d * self.net.n)

    def step(self, state: DAdamState) -> DAdamState:
        gen = generator_from(state.rng)
        updates, moments = self.local.update(self.task.stochastic_grad(state.X, gen),
                                             state.moments, state.X)
        X = self.net.mix(state.X) + updates
        return self.advance(state, x_g=X.mean(dim=0), rng=gen.get_state(), K=1,
                            last_comm=self.counts(self.round_traffic()), X=X, moments=moments)
