r"""AFGA and CAFGA (Wang & Chen, "On the Data Heterogeneity in Adaptive Federated Learning", TMLR
2024; seed 000_bd1b5016b2d2bc05.txt, notes papers/afga.md) and the FedAMSGrad baseline, on the
federated round template (:mod:`fedbound.algorithms.federated.round`).

Problem (1) [000 L97-L109]: min_x f(x) = (1/N) sum_{i=1}^N f_i(x).

**Server, FedAMSGrad** (eq. (2) [L126-L129]; Alg. 1 lines 19-22 [L195-L200]; notes 2.1), on the
aggregated model difference Delta_r, with m_0 = v_0 = vhat_0 = 0 and no bias correction::

    m_r = b1 m_{r-1} + (1 - b1) Delta_r,   v_r = b2 v_{r-1} + (1 - b2) Delta_r^2,
    vhat_r = max(vhat_{r-1}, v_r),         x_{r+1} = x_r + eta m_r / sqrt(vhat_r + eps)

(eps INSIDE the root [002 L262-L264], b2 = 0.99 [L996, misprinted "b1 = 0.99"]).
``server="adam"`` is FedAdam (Reddi et al. 2021): x + eta m_r / (sqrt(v_r) + eps), no max, eps
outside; ``server="sgd"`` is FedAvg's x + eta Delta_r (:func:`server_transform`).

The adaptive servers' switches are options (Python, ``--`` + the name with dashes on the command
line, sweep SPECs) whose defaults are the paper's, so a run that does not give them is unchanged:
``bias_correction`` ("none", "adam" or "flower"; :mod:`fedbound.algorithms.optim.server`; default
none, as eq. (2)), ``eps_inside_sqrt`` (default: the server's own placement, inside the root for
AMSGrad as eq. (2), outside for Adam; ``--no-eps-inside-sqrt`` puts AMSGrad's outside) and, for the
Adam server of AFGA and CAFGA, ``v0`` (default 0; AMSGrad starts from v_0 = 0 and takes none).

**AFGA, Algorithm 1** [L157-L201] (notes 2.2), round r::

    S_r     <- M of the N clients, uniformly without replacement        (they report, line 3)
    x^i_{r,0} = x_r for ALL N clients                                    (broadcast, line 4)
    for t = 0 .. I-1:
        S_{r,t} <- M of the N clients, fresh, independent of S_r        (re-sampling, line 6 [L205-L211])
        x^i_{r,t'} = x^i_{r,t} - eta_l g^i_{r,t}  if i in S_{r,t},  else x^i_{r,t}
        X_{t+1} = W X_{t'}   over all N clients, idle ones included     (gossip, line 14 [L212-L218])
    Delta_r = (1/M) sum_{i in S_r} (x^i_{r,I} - x_r);  server step.

S_{r,t} is uniform without replacement (Lemma F.6's probabilities; L4647's "with replacement"
contradicts them, flag 28). ``resample=False``: S_{r,t} = S_r, every client still gossips (Table 4's
"+Gossip" row); with W = I as well, AFGA is FedAMSGrad [L221-L225] (flag 4).

**CAFGA, Algorithm 2** [L355-L403] (notes 2.3): N = K n clients in K equal clusters V_k (the
subnets of the network: W = blkdiag(W_1..W_K)); S^k_r and S^k_{r,t} are m of the n clients of V_k
(M = K m); gossip stays inside the clusters; Delta_r = (1/K) sum_k (1/m) sum_{i in S^k_r} Delta^i_r
(= (1/M) sum_{i in S_r} Delta^i_r since every |S^k_r| = m).

**Communication-adapted "(a)" variants** [L434-L442, footnote 4 L476-L480, Table 5] (notes 2.4):
only the reporters are online; each round a new ring (self weight 1/3, :func:`ring_weights`) is
formed over S_r in a uniformly random order (over each S^k_r for CAFGA (a)), and only these M
clients run local steps and gossip on it. How S_{r,t} is drawn there is not stated (pitfall 11):
here it is a fresh uniform subset of ``adapted_compute`` clients of S_r (of each S^k_r), default all
of them, which makes re-sampling vacuous (AFGA (a) is then FedAMSGrad + gossip on a ring over S_r).

**Exact reductions** (tests/algorithms/test_afga.py, derived in notes 2.2): W = I with
``resample=False`` is FedAMSGrad under the same random numbers; W = J makes every model equal to the
network average after each gossip, x_{t+1} = x_t - eta_l (1/N) sum_{i in S_{r,t}} g^i, i.e.
centralized local SGD with step eta_l M/N on the M-client mini-batch mean; gossip preserves the
average (1/N) 1^T X; each round evaluates I M gradients (R I M in total, ``comm["gradient_evaluations"]``).

**Per-round metrics** (``Trajectory.algorithm_metrics``, and in ``Trajectory.metrics``; :func:`round_statistics`), at the end of the round
(t = I), over the rows that ran local steps (all N clients, or S_r in the (a) variants and
FedAMSGrad), k(i) the cluster of client i:

* ``consensus_intra`` = (1/rows) sum_i ||x^i - xbar^{k(i)}||^2 (the intra-cluster consensus error,
  Lemma F.3's ||X^{k,perp}||_F^2 / n averaged over clusters);
* ``consensus_inter`` = (1/K) sum_k ||xbar^k - xbar||^2 (spread of the cluster averages);
* ``drift`` = (1/K) sum_k ||xbar^k - x_r||^2 (Lemma F.2's quantity);
* ``delta_norm`` = ||Delta_r||; ``vhat_mean``, ``vhat_max``, ``vhat_min``: the server's second
  moment (vhat for AMSGrad, v for Adam; absent for the SGD server).

Round 0 logs the initial state (all models at x_0, Delta_0 = 0, vhat_0 = 0).

Example::

    >>> from fedbound.tasks import Quadratic
    >>> from fedbound.algorithms import run
    >>> from fedbound.algorithms.federated.afga import AFGA
    >>> task = Quadratic.generate(20, 5, hessian="diagonal", shared=True, seed=0)
    >>> traj = run(AFGA(task, lr=0.05, server_lr=0.05, local_steps=4, clients_per_round=2, tau=1e-2), 20)
    >>> int(traj.comm["gradient_evaluations"][-1]) == 20 * 4 * 2
    True
"""
from __future__ import annotations

import dataclasses
from typing import Literal

import torch

from fedbound.algorithms.base import MAX_LOCAL_STEPS, Decay, Models, Steps, check_task
from fedbound.algorithms.federated.local_steps import LocalSteps
from fedbound.algorithms.federated.round import Federated, FederatedState, participation_scheme
from fedbound.algorithms.optim import client, server
from fedbound.algorithms.optim.base import Transform
from fedbound.algorithms.optim.registry import BiasCorrection, bias_correction_mode
from fedbound.algorithms.options import (BETA1, BETA2, BIAS_CORRECTION, CLIENTS_PER_ROUND,
                                         EPS_INSIDE_SQRT, LR, SERVER_LR, V0, at_least_one, positive)
from fedbound.algorithms.registry import AlgorithmSpec, register
from fedbound.algorithms.stacked import StackedNetwork
from fedbound.argtypes import Count, NonNegative, NonNegativeInt, Positive, Seed
from fedbound.deprecation import renamed_attributes, renamed_keywords
from fedbound.errors import require
from fedbound.registry import choice_option, integer_option
from fedbound.network import Network
from fedbound.network.sampling import UniformParticipation, compute_mask, sample_mask
from fedbound.network.topology import ring_weights
from fedbound.tasks.base import Task
from fedbound.validate import boolean, integer, number, one_of

SERVERS = ("amsgrad", "adam", "sgd")
#: a server optimizer of :data:`SERVERS`
Server = Literal["amsgrad", "adam", "sgd"]
#: AFGA's I: one count of local steps for every client (it gossips after each one)
LOCAL_STEPS_I = integer_option("local_steps", "local steps I per round, one count for all clients "
                               "(default 1)", low=1, high=MAX_LOCAL_STEPS, examples=(1, 3))


def server_transform(kind: Server, lr: Positive, beta1: Decay = 0.9, beta2: Decay = 0.99,
                     eps: Positive = 1e-8, bias_correction: BiasCorrection = "none",
                     eps_inside_sqrt: bool | None = None, v0: NonNegative | None = None) -> Transform:
    """The server transform ``kind``: "amsgrad" (FedAMSGrad, eq. (2): eps inside the root, vhat
    running max, no bias correction), "adam" (FedAdam: eps outside, no max, no bias correction) or
    "sgd" (x + lr Delta). The adaptive servers' switches: ``bias_correction`` ("none", "adam" or
    "flower"), ``eps_inside_sqrt`` (None: the server's own placement) and Adam's ``v0`` (None: 0;
    AMSGrad's v_0 is 0); a switch the server does not have (SGD's, AMSGrad's v0 > 0) is refused."""
    kind = one_of("server", kind, SERVERS)
    mode = bias_correction_mode("bias_correction", bias_correction)
    if eps_inside_sqrt is not None:
        eps_inside_sqrt = boolean("eps_inside_sqrt", eps_inside_sqrt)
    if v0 is not None:
        v0 = number("v0", v0, low=0.0)
    if kind == "sgd":
        require(mode == "none" and not eps_inside_sqrt and not v0,
                "bias_correction, eps_inside_sqrt and v0 apply to the adaptive servers (amsgrad, "
                "adam), not to sgd")
        return server.sgd(lr)
    if kind == "amsgrad":
        require(not v0, "v0 applies to the adam server: AMSGrad starts from v_0 = 0 (eq. (2))")
        return server.amsgrad(lr, beta1, beta2, eps, bias_correction=mode,
                              eps_inside_sqrt=True if eps_inside_sqrt is None else eps_inside_sqrt)
    return server.adam(lr, beta1, beta2, eps, bias_correction=mode,
                       eps_inside_sqrt=bool(eps_inside_sqrt), v0=0.0 if v0 is None else v0)


def round_statistics(x: torch.Tensor, X: torch.Tensor, group: torch.Tensor, delta: torch.Tensor,
                     second_moment: torch.Tensor | None) -> dict:
    """The per-round metrics of the module docstring: local models X (rows, d) of clusters
    ``group`` (rows,), server model x, aggregate ``delta``, the server's second moment (or None)."""
    labels, group = torch.unique(group, return_inverse=True)
    K = int(labels.numel())
    counts = torch.bincount(group, minlength=K).to(X.dtype)
    means = torch.zeros(K, X.shape[1], dtype=X.dtype).index_add_(0, group, X) / counts[:, None]
    out = {"consensus_intra": float(torch.sum((X - means.index_select(0, group)) ** 2)) / X.shape[0],
           "consensus_inter": float(torch.sum((means - X.mean(dim=0)) ** 2)) / K,
           "drift": float(torch.sum((means - x) ** 2)) / K,
           "delta_norm": float(torch.linalg.vector_norm(delta))}
    if second_moment is not None:
        out.update(vhat_mean=float(second_moment.mean()), vhat_max=float(second_moment.max()),
                   vhat_min=float(second_moment.min()))
    return out


def _second_moment(kind: str, state) -> torch.Tensor | None:
    """vhat (AMSGrad's max_second_moment) or v (Adam's second_moment); None for SGD."""
    if kind == "amsgrad":
        return state.max_second_moment
    return state.second_moment if kind == "adam" else None


def _gossip_network(task, network) -> StackedNetwork:
    """The clusters and their mixing: ``network`` (a fedbound Network or a StackedNetwork over the
    N clients; its subnets are the clusters) or, when None, the paper's ring of N clients (self
    weight 1/3, [L598])."""
    if network is None:
        return StackedNetwork([ring_weights(task.n)], task.dtype)
    if not isinstance(network, StackedNetwork):
        network = StackedNetwork.from_network(network, task.dtype)
    require(network.n == task.n, f"the network has {network.n} clients, the task n = {task.n}")
    return network


class _Logged:
    """The per-round metrics of the module docstring (:func:`round_statistics`) for a Federated
    algorithm; round 0 logs the initial state: every model at x_0, Delta_0 = 0, vhat_0 = 0."""

    server_kind = "amsgrad"

    def clusters_of(self, row_ids: torch.Tensor) -> torch.Tensor:
        """The cluster of each client ``row_ids`` (one cluster here)."""
        return torch.zeros(row_ids.numel(), dtype=torch.int64)

    def round_metrics(self, x: torch.Tensor, X: torch.Tensor, row_ids: torch.Tensor,
                      delta: torch.Tensor, server_state: tuple) -> dict[str, float]:
        return round_statistics(x, X, self.clusters_of(row_ids), delta,
                                _second_moment(self.server_kind, server_state))

    def init(self, x0: Models | None = None) -> FederatedState:
        state = super().init(x0)
        x = state.x_g
        return dataclasses.replace(state, metrics=self.round_metrics(
            x, x[None], torch.zeros(1, dtype=torch.int64), torch.zeros_like(x), state.server))


class FedAMSGrad(_Logged, Federated):
    """FedAMSGrad (eq. (2) [L126-L129]; Wang et al. 2022b, Tong et al. 2020): M clients uniformly
    per round, ``local_steps`` SGD steps of size ``lr`` from x_r, server AMSGrad with step
    ``server_lr`` (module docstring; ``bias_correction`` and ``eps_inside_sqrt`` as
    :func:`server_transform`'s, the paper's none and inside by default). Logs ``delta_norm``, the
    vhat statistics and the consensus errors of the reporters' models."""

    name = "FedAMSGrad"

    def __init__(self, task: Task, *, lr: Positive, local_steps: LocalSteps = 1, server_lr: Positive = 0.01,
                 beta1: Decay = 0.9, beta2: Decay = 0.99, tau: Positive | None = None,
                 bias_correction: BiasCorrection = "none", eps_inside_sqrt: bool = True,
                 eps: Positive | None = None, **round_options):
        tau = renamed_keywords("FedAMSGrad", {"eps": "tau"}, {"eps": eps}, {"tau": tau})["tau"]
        super().__init__(task, client=client.sgd(lr),
                         server=server_transform("amsgrad", server_lr, beta1, beta2,
                                                 1e-8 if tau is None else tau,
                                                 bias_correction=bias_correction,
                                                 eps_inside_sqrt=eps_inside_sqrt),
                         local_steps=local_steps, **round_options)


class AFGA(_Logged, Federated):
    """AFGA (Algorithm 1) on ``network`` (default: the paper's ring of N clients; a multi-subnet
    network gives a block-diagonal W with global sampling), or with ``per_cluster`` sampling
    CAFGA (:class:`CAFGA`). Options: ``lr`` = eta_l, ``server_lr`` = eta, ``local_steps`` = I,
    ``clients_per_round`` = M (default N), ``beta1``, ``beta2``, ``tau`` (the server's epsilon,
    inside the root for AMSGrad), ``server_optimizer`` (:data:`SERVERS`; the old names ``eps`` and
    ``server`` still work and warn), the server's ``bias_correction``, ``eps_inside_sqrt`` (None:
    the server's own placement) and ``v0`` (Adam's; None: 0) as :func:`server_transform`'s,
    ``resample`` (S_{r,t} fresh, else S_{r,t} = S_r), ``comm_adapted`` (the "(a)"
    variant) with ``adapted_compute`` (``|S_{r,t}|`` within S_r, per cluster for CAFGA; default all)."""

    name = "AFGA"
    per_cluster = False

    def __init__(self, task: Task, network: Network | StackedNetwork | None = None, *, lr: Positive,
                 local_steps: Steps = 1, clients_per_round: Count | None = None,
                 server_lr: Positive = 0.01, beta1: Decay = 0.9, beta2: Decay = 0.99,
                 tau: Positive | None = None, server_optimizer: Server | None = None,
                 bias_correction: BiasCorrection = "none", eps_inside_sqrt: bool | None = None,
                 v0: NonNegative | None = None,
                 resample: bool = True, comm_adapted: bool = False,
                 adapted_compute: Count | None = None, seed: Seed = 0, eps: Positive | None = None,
                 server: Server | None = None):
        given = renamed_keywords(type(self).__name__, {"eps": "tau", "server": "server_optimizer"},
                                 {"eps": eps, "server": server},
                                 {"tau": tau, "server_optimizer": server_optimizer})
        eps = 1e-8 if given["tau"] is None else given["tau"]
        server = "amsgrad" if given["server_optimizer"] is None else given["server_optimizer"]
        task = check_task(task)
        clusters = _gossip_network(task, network)
        # Alg. 1 [000 L157-L201]: every client runs the same I steps (it gossips after each one)
        local_steps = integer("local_steps (AFGA's I, one count for all clients)", local_steps,
                              low=1, high=MAX_LOCAL_STEPS)
        self.resample = boolean("resample", resample)
        self.comm_adapted = boolean("comm_adapted", comm_adapted)
        self.server_kind = one_of("server", server, SERVERS)
        M = task.n if clients_per_round is None else integer("clients_per_round", clients_per_round,
                                                                 low=1, high=task.n)
        if self.per_cluster:
            require(clusters.equal_sizes, f"CAFGA needs equal clusters (N = K n), got cluster sizes "
                                          f"{clusters.m.tolist()}")
            require(M % clusters.S == 0, f"clients_per_round M = {M} must be a multiple of the "
                                         f"K = {clusters.S} clusters (m per cluster)")
            self.m = M // clusters.S
            participation = UniformParticipation(task.n, self.m, sizes=clusters.m)
        else:
            self.m = M
            participation = participation_scheme(task, M)
        self.M = M
        self.clusters = clusters
        links = None
        if self.comm_adapted:   # the (a) variant: S_r gossips on a fresh ring (one per cluster)
            self.ring = StackedNetwork([ring_weights(self.m)] * (clusters.S if self.per_cluster else 1),
                                       task.dtype)
            self.adapted_compute = (self.m if adapted_compute is None else
                                    integer("adapted_compute", adapted_compute, low=1, high=self.m))
            links = [int(self.ring.directed_links.sum())]
            self.name = f"{self.name}(a)"
        else:
            require(adapted_compute is None, "adapted_compute applies to the comm_adapted variant only")
        super().__init__(task, client=client.sgd(lr),
                         server=server_transform(self.server_kind, server_lr, beta1, beta2, eps,
                                                 bias_correction, eps_inside_sqrt, v0),
                         local_steps=local_steps, participation=participation,
                         gossip=None if self.comm_adapted else clusters, d2d_links=links, seed=seed)

    # ---- S_{r,t} ---------------------------------------------------------------------------------
    def compute_masks(self, k: NonNegativeInt, steps: NonNegativeInt, gen: torch.Generator,
                      reporters: torch.Tensor | None = None) -> torch.Tensor | None:
        """(steps, k) compute sets: S_{r,t} fresh (M of N, or m of each cluster), or S_r itself
        (``resample=False``); in the (a) variant ``adapted_compute`` of each ring's clients."""
        if not steps:
            return torch.zeros(0, k, dtype=torch.bool)
        if self.comm_adapted:
            if self.adapted_compute == self.m:
                return None
            return torch.stack([sample_mask(self.ring, self.adapted_compute, gen) for _ in range(steps)])
        if not self.resample:
            mask = torch.zeros(k, dtype=torch.bool)
            mask[reporters] = True
            return mask.expand(steps, k)
        if self.per_cluster:
            return torch.stack([sample_mask(self.clusters, self.m, gen) for _ in range(steps)])
        return torch.stack([compute_mask(k, self.M, gen) for _ in range(steps)])

    # ---- the (a) variant: only S_r runs, on a fresh ring ------------------------------------------
    def local_work(self, x: torch.Tensor, rows: torch.Tensor | None, tau: torch.Tensor,
                   correction: torch.Tensor | None, gen: torch.Generator,
                   reporters: torch.Tensor | None = None,
                   client: Transform | None = None,
                   round_index: int | None = None) -> tuple[torch.Tensor, int]:
        """The template's local work, or in the (a) variant: the reporters only, in a uniformly
        random ring order (within their cluster for CAFGA (a)), mixing on :attr:`ring`."""
        if not self.comm_adapted:
            return super().local_work(x, rows, tau, correction, gen, reporters, client, round_index)
        ids = torch.arange(self.task.n) if rows is None else rows
        group = (self.clusters.subnet_of.index_select(0, ids) if self.per_cluster
                 else torch.zeros(ids.numel(), dtype=torch.int64))
        order = torch.argsort(torch.rand(ids.numel(), generator=gen, dtype=torch.float64,
                                         device=gen.device).to(group.device) + group)
        masks = self.compute_masks(ids.numel(), int(tau.max()), gen)
        view = self.task.clients(ids.index_select(0, order))
        X, gradients = self.local_steps_from(x.expand(ids.numel(), x.shape[0]), view,
                                             tau.index_select(0, order), None, masks,
                                             view.oracle(gen, round_index),
                                             self.client if client is None else client,
                                             gossip=self.ring)
        return torch.empty_like(X).index_copy_(0, order, X), gradients

    def clusters_of(self, row_ids: torch.Tensor) -> torch.Tensor:
        return self.clusters.subnet_of.index_select(0, row_ids)


class CAFGA(AFGA):
    """CAFGA (Algorithm 2): AFGA over K equal clusters (the subnets of ``network``; default
    ``clusters`` rings of N/K clients, self weight 1/3 [L474-L475, L999]) with m = M/K clients
    sampled per cluster for S^k_r and every S^k_{r,t}; Delta_r averaged over the clusters."""

    name = "CAFGA"
    per_cluster = True

    def __init__(self, task: Task, network: Network | StackedNetwork | None = None, *,
                 clusters: Count | None = None, **options):
        task = check_task(task)
        if network is None:
            K = 5 if clusters is None else integer("clusters", clusters, low=1, high=task.n)
            require(task.n % K == 0, f"N = {task.n} clients cannot form K = {K} equal clusters")
            network = StackedNetwork([ring_weights(task.n // K)] * K, task.dtype)
        else:
            require(clusters is None, "give the clusters through network or clusters, not both")
        super().__init__(task, network, **options)


def _adapted(cls):
    """The "(a)" variant of ``cls`` as a registry constructor."""
    def build(task, network=None, **options):
        return cls(task, network, comm_adapted=True, **options)
    build.__doc__ = f"{cls.__name__} (a): gossip only among S_r on a fresh ring (module docstring)."
    return build


_TAU = positive("tau", "server adaptivity epsilon tau > 0, inside the square root for AMSGrad "
                "(default 1e-8)", aliases=("eps",), alias_flags=("--amsgrad-eps",),
                examples=(1e-8, 1e-3))
_SERVER = choice_option("server_optimizer", f"server optimizer: {', '.join(SERVERS)} (default amsgrad)",
                        SERVERS, aliases=("server",), examples=SERVERS)
_CLUSTERS = at_least_one("clusters", "equal clusters K when no network is given (default 5)",
                         examples=(2, 3))
_ADAPTED = at_least_one("adapted_compute", "clients of S_r (per cluster) computing at each step in "
                        "the (a) variant (default all)", examples=(1, 2))
#: the adaptive servers' switches (declared once, fedbound.algorithms.optim.registry)
_COMMON = (LR, LOCAL_STEPS_I, CLIENTS_PER_ROUND, SERVER_LR, BETA1, BETA2, _TAU, BIAS_CORRECTION,
           EPS_INSIDE_SQRT)
#: with a choice of server: and the Adam server's v0
_CHOSEN = (*_COMMON, _SERVER, V0)

register(AlgorithmSpec("fedamsgrad", FedAMSGrad, "FedAMSGrad: local SGD, server AMSGrad, eps inside "
                       "the root (AFGA eq. (2))", "federated", _COMMON))
register(AlgorithmSpec("afga", AFGA, "AFGA: re-sampled compute sets and gossip every local step, "
                       "server AMSGrad (seed 000, Alg. 1)", "federated", _CHOSEN,
                       network="optional"))
register(AlgorithmSpec("cafga", CAFGA, "CAFGA: AFGA over equal clusters, per-cluster sampling "
                       "(seed 000, Alg. 2)", "federated", (*_CHOSEN, _CLUSTERS),
                       network="optional"))
register(AlgorithmSpec("afga-a", _adapted(AFGA), "AFGA (a): gossip only among S_r on a fresh ring "
                       "(seed 000, Table 5)", "federated", (*_CHOSEN, _ADAPTED),
                       network="optional"))
register(AlgorithmSpec("cafga-a", _adapted(CAFGA), "CAFGA (a): gossip only among each cluster's "
                       "S^k_r on a fresh ring (seed 000, Table 5)", "federated",
                       (*_CHOSEN, _CLUSTERS, _ADAPTED), network="optional"))


__getattr__ = renamed_attributes(__name__, {
    "server_optimizer": "fedbound.algorithms.federated.afga:server_transform"})

__all__ = ["FedAMSGrad", "AFGA", "CAFGA", "SERVERS", "server_transform", "round_statistics"]
