"""Decentralized AMSGrad (DAdam), one of AFGA's decentralized baselines of Table 8
(000_bd1b5016b2d2bc05.txt [L968-L978], afga.md sec. 2 "Decentralized baselines"; beside DSGD and
PGA). AFGA cites it only; its topology, step size and decays are not stated there, so every default
below is fedbound's choice. One round = one iteration (one stochastic gradient per client); the
reported x_g is the network average.

Nazari, Tarzanagh, Michailidis, "DADAM: A Consensus-based Distributed Adaptive Gradient
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

The AMSGrad transform's switches are options (Python, ``--`` + the name with dashes on the command
line, sweep SPECs) whose defaults are the form above, so a run that does not give them is unchanged:
``bias_correction`` ("none", as Alg. 1; "adam": Kingma-Ba's m/(1 - beta1^t), vhat/(1 - beta2^t)
after the max, torch.optim.Adam(amsgrad=True); "flower"; :mod:`fedbound.algorithms.optim.server`)
and ``eps_inside_sqrt`` (tau outside the root, or inside: sqrt(vhat + tau), as AFGA's server).
AMSGrad takes no v_0 (it starts from 0).
"""
from __future__ import annotations

from dataclasses import dataclass

from fedbound.algorithms.accounting import EnergyModel
from fedbound.algorithms.base import Decay, Models, generator_from
from fedbound.algorithms.decentralized.base import Decentralized, DecentralizedState
from fedbound.algorithms.optim import server
from fedbound.algorithms.optim.registry import BiasCorrection
from fedbound.algorithms.options import BETA1, BETA2, BIAS_CORRECTION, EPS_INSIDE_SQRT, LR_GAMMA, TAU
from fedbound.algorithms.registry import AlgorithmSpec, register
from fedbound.argtypes import Positive, Seed
from fedbound.network import Network
from fedbound.tasks.base import Task
from fedbound.validate import number


@dataclass(frozen=True)
class DAdamState(DecentralizedState):
    """X (n, d): the clients' models; moments: every client's AMSGrad state (count t, first_moment
    m, second_moment v, max_second_moment vhat), each (n, d) but the 0-d iteration counter t."""

    moments: server.AMSGradState


class DAdam(Decentralized):
    """Decentralized AMSGrad, DADAM with beta3 = 0 (Nazari et al. 2019, Alg. 1): the module
    docstring states the exact form; ``bias_correction`` (default "none") and ``eps_inside_sqrt``
    (default False: tau outside the root) are the AMSGrad transform's switches."""

    name = "DAdam"

    def __init__(self, task: Task, network: Network, *, lr: Positive | None = None, beta1: Decay = 0.9,
                 beta2: Decay = 0.999, tau: Positive = 1e-8, bias_correction: BiasCorrection = "none",
                 eps_inside_sqrt: bool = False, seed: Seed = 0,
                 energy: EnergyModel | None = None, gamma: Positive | None = None):
        super().__init__(task, network, lr=lr, seed=seed, energy=energy, gamma=gamma)
        self.beta1 = number("beta1", beta1, low=0.0, high=1.0, high_open=True)
        self.beta2 = number("beta2", beta2, low=0.0, high=1.0, high_open=True)
        self.tau = number("tau", tau, low=0.0, low_open=True)
        self.local = server.amsgrad(self.gamma, self.beta1, self.beta2, self.tau,
                                    eps_inside_sqrt=eps_inside_sqrt, bias_correction=bias_correction)

    def init(self, x0: Models | None = None) -> DAdamState:
        base = super().init(x0)
        return self.extend(base, DAdamState, moments=self.local.init(base.X))

    def step(self, state: DAdamState) -> DAdamState:
        gen = generator_from(state.rng)
        updates, moments = self.local.update(self.task.stochastic_grad(state.X, gen),
                                             state.moments, state.X)
        X = self.net.mix(state.X) + updates
        traffic = self.traffic(client_state_floats=3 * self.task.d * self.net.n)
        return self.advance(state, x_g=X.mean(dim=0), rng=gen.get_state(), K=1,
                            last_comm=self.counts(traffic), X=X, moments=moments)


register(AlgorithmSpec("dadam", DAdam, "DAdam: decentralized AMSGrad over one connected subnet "
                       "(Nazari et al. 2019; AFGA's decentralized baseline)", "decentralized",
                       (LR_GAMMA, BETA1, BETA2, TAU, BIAS_CORRECTION, EPS_INSIDE_SQRT),
                       network="required", default_subnets=1))

__all__ = ["DAdam", "DAdamState"]
