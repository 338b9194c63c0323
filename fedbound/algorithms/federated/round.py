r"""The federated round template (issue 9): one vectorized round for FedAvg, FedProx, FedAvgM, the
FedOpt family (FedAdagrad, FedAdam, FedYogi; Reddi et al., ICLR 2021, Alg. 2), SCAFFOLD-style control
variates, FedNova's normalized averaging and AFGA's gossip, composed from small objects.

One round t from the server model x (FedNova sec. 2.0 [001 L46-L54]; AFGA Alg. 1 [000 L157-L201];
FedAda2 Alg. 1 [004 L108-L120]):

    1. participation: clients S_t (k,) and weights w (k,)          (network.sampling scheme)
    2. local work, all rows at once: X^{(0)} = x for every row, client optimizer state
       re-initialized (stateless clients, FedNova [001 L130], FedAda2 "local_statistics <- 0");
       for s = 0 .. max_j tau_j - 1 (tau from the local-steps scheme):
           active_j = s < tau_j   (and j in the step's compute set, AFGA's S_{r,t})
           G_j = g_{i_j}(X_j^{(s)}) (+ c - c_{i_j} with control variates)   for active rows only
           X^{(s+1)} = X^{(s)} + client.update(G)   (masked: inactive rows keep X and state)
           X^{(s+1)} = W X^{(s+1)}                  (optional in-round gossip, block-diagonal W)
    3. Delta_j = X_j^{(tau)} - x, aggregated: Delta = rule(Delta, w, tau)   (mean, or normalized)
    4. server: g = -Delta (the pseudo-gradient x - aggregate), x <- x + server.update(g)
       (with a control-variates strategy: (C, c) updated from the participants' models, then
       x <- strategy.server_model(x, c): unchanged for SCAFFOLD, FedDyn's x - h / alpha; the
       per-client C is a :class:`~fedbound.algorithms.client_rows.ClientRows`, rows held only for
       the clients that have participated, read and rewritten for the k participants in
       O(k d + n), not O(n d))

Rows are the participants only (a round costs in proportion to k: the task's data of S_t is gathered
once per round), except when every client computes (``all_clients_compute``): with gossip, where
every one of the n clients runs the local steps and mixes (AFGA: all N clients gossip, S_t only
reports), and in the SD-GT paper's convention for its SCAFFOLD baseline (every device computes,
the server takes the sampled ones' results). Otherwise the rows run in cache-sized blocks of
clients (``Federated.block_bytes``). Randomness, in order per round: participation,
local-step counts, the compute sets of all steps, then block by block and step by step the
stochastic gradients of the active rows (a client past its tau_j steps draws none). All of it comes
from the generator whose state travels in the state, so ``step`` is pure.

Accounting per round (CommCounts): each participant downloads x and uploads Delta_j (d floats each;
``vectors`` d with control variates: 2d for SCAFFOLD, d for FedDyn); gossip: one D2D exchange per
local step over the directed links of W; gradient evaluations as computed; client optimizer state
floats = Transform.state_floats(d) per client that runs local steps; energy: the sampled fraction of
each group (the subnets of ``groups``, by default the gossip network's, else one group of n
clients) times its round-trip cost plus the D2D cost per exchange (accounting.py).

The stages of a round are methods, so that a variant replaces one stage and the batched-seeds path
(:mod:`fedbound.algorithms.federated.seeds`) runs the same stages for many seeds at once:
:meth:`Federated.plan` (participation and tau), :meth:`Federated.client_for_round`,
:meth:`Federated.local_work` / :meth:`Federated.local_steps_from` (the local steps, given a
gradient oracle), the aggregation rule, the server transform, :meth:`Federated.counts`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple, Protocol

import numpy as np
import torch

from fedbound.algorithms.accounting import CommCounts, EnergyModel, RoundTraffic, count_round
from fedbound.algorithms.base import (Algorithm, Models, State, StateTensor,
                                      generator_from, new_rng)
from fedbound.algorithms.client_rows import ClientRows
from fedbound.algorithms.federated.aggregation import Aggregation, WeightedMean
from fedbound.algorithms.federated.control_variates import VariatesStrategy
from fedbound.algorithms.federated.local_steps import LocalSteps
from fedbound.algorithms.federated.local_steps import local_steps as steps_scheme
from fedbound.algorithms.optim.base import Transform, masked
from fedbound.algorithms.stacked import StackedNetwork
from fedbound.argtypes import Count, NonNegativeArray, NonNegativeInt, Seed
from fedbound.errors import InputTypeError, require
from fedbound.network import Network
from fedbound.network.sampling import (PARTICIPATION_SCHEMES, FullParticipation, Participation,
                                       UniformParticipation, compute_mask, named_participation)
from fedbound.tasks.base import ClientView, Task
from fedbound.validate import boolean, integer


@dataclass(frozen=True)
class FederatedState(State):
    """server: the server transform's state; C (the n clients' rows (d,), a
    :class:`~fedbound.algorithms.client_rows.ClientRows`), c (d,): control variates (None without;
    FedDyn: the clients' lagged gradients g_i and the server's h);
    clients (k,), weights (k,), tau (k,): participants, their weights and local steps in the last
    round (None before the first). K (in State) is the last round's max_j tau_j. metrics: the last
    round's extra metrics (``Federated.round_metrics``; None without), recorded by ``run``."""

    server: tuple
    C: ClientRows | None = None
    c: StateTensor | None = None
    clients: torch.Tensor | None = None
    weights: torch.Tensor | None = None
    tau: torch.Tensor | None = None
    metrics: dict[str, float] | None = None


class ParticipationScheme(Protocol):
    """A participation scheme: a scheme of :mod:`fedbound.network.sampling` (or FedAda2's
    strategy-weighted wrapper), drawing the round's participants and weights from the task's
    weights ``p`` and ``generator``."""

    def draw(self, p: torch.Tensor, generator: torch.Generator) -> Participation: ...


class RoundPlan(NamedTuple):
    """What a round's randomness decides before any local step: the participation ``part``, the
    ``rows`` that compute (None: all n clients), their client ids ``row_ids`` and local steps
    ``tau`` (one per row)."""

    part: Participation
    rows: torch.Tensor | None
    row_ids: torch.Tensor
    tau: torch.Tensor


#: a gradient oracle of the local steps: oracle(X, rows) -> stochastic gradients of the view's rows
#: ``rows`` (None: all rows) at X, drawing whatever randomness it needs
Oracle = Callable[[torch.Tensor, "torch.Tensor | None"], torch.Tensor]


def participation_scheme(task: Task, clients_per_round: Count | None = None,
                         participation: str | ParticipationScheme | None = None) -> ParticipationScheme:
    """``participation`` if given (a scheme, or its name for
    :func:`~fedbound.network.sampling.named_participation` with ``clients_per_round``), else
    uniform without replacement of ``clients_per_round`` (None or n: full participation) with
    weights p_i normalized over the sampled clients."""
    if isinstance(participation, str):
        return named_participation(participation, task.n, clients_per_round)
    if participation is not None and not callable(getattr(participation, "draw", None)):
        raise InputTypeError(f"participation must be a scheme name {PARTICIPATION_SCHEMES.names()} or a scheme "
                             f"with a draw method, got {participation!r:.80}")
    if participation is not None:
        require(clients_per_round is None, "give clients_per_round or participation, not both")
        return participation
    if clients_per_round is None:
        return FullParticipation()
    q = integer("clients_per_round", clients_per_round, low=1, high=task.n)
    return FullParticipation() if q == task.n else UniformParticipation(task.n, q)


def _stacked(network, task, name: str) -> StackedNetwork | None:
    """``network`` (a Network or StackedNetwork over the task's n clients) as a StackedNetwork."""
    if network is None:
        return None
    if not isinstance(network, StackedNetwork):
        network = StackedNetwork.from_network(network, task.dtype)
    require(network.n == task.n, f"the {name} network has {network.n} clients, the task n={task.n}")
    return network


class Federated(Algorithm):
    """The federated round template over a task (see the module docstring).

    Parameters: ``client`` (a client Transform on (rows, d), re-initialized every round; a
    heterogeneous one, with ``for_clients`` set, is bound to each block's client ids: FedAda2's
    blended optimization),
    ``server`` (a server Transform on (d,) receiving the pseudo-gradient), ``local_steps`` (int,
    (n,) ints, or a scheme of :mod:`fedbound.algorithms.federated.local_steps`),
    ``clients_per_round`` or ``participation`` (a scheme of :mod:`fedbound.network.sampling`;
    default full), ``aggregation`` (default
    :class:`~fedbound.algorithms.federated.aggregation.WeightedMean`), ``control_variates``
    (:class:`~fedbound.algorithms.federated.control_variates.ControlVariates` or None),
    ``gossip`` (a :class:`~fedbound.network.Network` or StackedNetwork over the n clients: one
    mixing X <- W X after every local step), ``groups`` (a network whose subnets group the clients
    for the accounting; default the gossip network, else one group), ``d2d_links`` (directed links
    used per local step, per group, when the mixing is not ``gossip``'s: AFGA's (a) rings),
    ``all_clients_compute`` (every client runs the local steps; default: with gossip),
    ``compute_per_step`` (M: only M uniformly drawn rows compute a gradient at each local step,
    AFGA's S_{r,t}), ``seed``, ``energy`` (EnergyModel over the groups).
    """

    name = "federated"
    #: cache budget of one block of clients' data (see ``local_work``): 4 MiB, the fastest of
    #: 256 KiB .. 256 MiB measured for the n = 1000, d = 1000 least-squares round on a 1 MiB-L2,
    #: 32 MiB-L3 core (66 ms per round at 4 MiB, 90 ms at 1 MiB, 190 ms unblocked; fewer, larger
    #: blocks also pay less Python overhead per local step)
    block_bytes = 1 << 22

    def __init__(self, task: Task, *, client: Transform, server: Transform, local_steps: LocalSteps = 1,
                 clients_per_round: Count | None = None,
                 participation: str | ParticipationScheme | None = None,
                 aggregation: Aggregation | None = None,
                 control_variates: VariatesStrategy | None = None,
                 gossip: Network | StackedNetwork | None = None,
                 groups: Network | StackedNetwork | None = None,
                 d2d_links: NonNegativeArray | None = None, all_clients_compute: bool | None = None,
                 compute_per_step: Count | None = None, seed: Seed = 0,
                 energy: EnergyModel | None = None):
        super().__init__(task, seed=seed)
        self.client, self.server = client, server
        self.local_steps = steps_scheme(local_steps, task.n)
        self.participation = participation_scheme(task, clients_per_round, participation)
        self.aggregation = WeightedMean() if aggregation is None else aggregation
        self.control_variates = control_variates
        self.gossip = _stacked(gossip, task, "gossip")
        groups = _stacked(groups, task, "groups") or self.gossip
        self.all_clients_compute = (self.gossip is not None if all_clients_compute is None
                                    else boolean("all_clients_compute", all_clients_compute))
        require(self.all_clients_compute or self.gossip is None,
                "gossip mixes every client's model: every client computes (all_clients_compute)")
        self.compute_per_step = (None if compute_per_step is None
                                 else integer("compute_per_step", compute_per_step, low=1, high=task.n))
        if groups is not None:
            self.group_sizes, self.group_of = groups.m, groups.subnet_of
        else:
            self.group_sizes, self.group_of = np.array([task.n]), torch.zeros(task.n, dtype=torch.int64)
        if d2d_links is not None:
            self.d2d_links = np.asarray(d2d_links, dtype=np.int64)
        elif self.gossip is not None:
            self.d2d_links = self.gossip.directed_links
        else:
            self.d2d_links = np.zeros(self.group_sizes.size, dtype=np.int64)
        self.mixes = self.gossip is not None or d2d_links is not None   # a D2D exchange per step
        self.energy = EnergyModel.unit(self.group_sizes.size) if energy is None else energy
        require(self.energy.E_ds.size == self.group_sizes.size,
                f"energy model has {self.energy.E_ds.size} groups, the round has {self.group_sizes.size}")

    # ---- state ---------------------------------------------------------------------------------
    def init(self, x0: Models | None = None) -> FederatedState:
        x0 = self.initial_models(x0)
        zero = CommCounts()
        C = c = None
        if self.control_variates is not None:
            C, c = self.control_variates.init(self.task.n, x0)
        return FederatedState(t=0, x_g=x0, rng=new_rng(self.seed), K=0, comm=zero, last_comm=zero,
                              server=self.server.init(x0), C=C, c=c)

    # ---- the stages of a round -----------------------------------------------------------------
    def plan(self, gen: torch.Generator) -> RoundPlan:
        """Stage 1: the participation, the rows that compute and their local steps (drawn in
        this order from ``gen``)."""
        part = self.participation.draw(self.task.weights, gen)
        rows = None if (self.all_clients_compute or part.full) else part.clients
        row_ids = torch.arange(self.task.n) if rows is None else rows
        return RoundPlan(part, rows, row_ids, self.local_steps.draw(row_ids, gen))

    def client_for_round(self, state: FederatedState) -> Transform:
        """The client transform of this round (the same every round here; DJA initializes it
        from the server's state)."""
        return self.client

    def compute_masks(self, k: NonNegativeInt, steps: NonNegativeInt, gen: torch.Generator,
                      reporters: torch.Tensor | None = None) -> torch.Tensor | None:
        """(steps, k) bool: the rows that compute a gradient at each local step (AFGA's S_{r,t}:
        ``compute_per_step`` rows uniformly, fresh per step), or None: every row. ``reporters``:
        the round's participants S_r (subclasses may tie the compute sets to them)."""
        if self.compute_per_step is None:
            return None
        if not steps:
            return torch.zeros(0, k, dtype=torch.bool)
        return torch.stack([compute_mask(k, self.compute_per_step, gen) for _ in range(steps)])

    def round_metrics(self, x: torch.Tensor, X: torch.Tensor, row_ids: torch.Tensor,
                      delta: torch.Tensor, server_state: tuple) -> dict[str, float] | None:
        """Extra per-round metrics (name -> float) from the round's end: server model x, local
        models X of the clients ``row_ids``, aggregate ``delta`` and the new server state. None
        here; subclasses (AFGA) log consensus errors and the like."""
        return None

    def local_work(self, x: torch.Tensor, rows: torch.Tensor | None, tau: torch.Tensor,
                   correction: torch.Tensor | None, gen: torch.Generator,
                   reporters: torch.Tensor | None = None,
                   client: Transform | None = None,
                   round_index: NonNegativeInt | None = None) -> tuple[torch.Tensor, int]:
        """Stage 2 for the rows ``rows`` (None: all n clients): (X after the local steps, number of
        gradients computed), with the round's ``client`` (default ``self.client``), in round
        ``round_index`` (the rounds completed before: what a task's batch order per client and
        round reads, :mod:`fedbound.tasks.batches`).

        Unless every client computes, the clients are independent, so the rows run in blocks of
        ``block_bytes`` of data, all local steps of one block before the next: a block's data
        stays in cache for its tau steps instead of streaming every client's data from memory at
        every step (benchmarks/bench_fedavg_round.py). Randomness is then drawn block by block
        (the compute sets first, for all rows and steps)."""
        client = self.client if client is None else client
        k = self.task.n if rows is None else int(rows.shape[0])
        steps = int(tau.max()) if k else 0
        masks = self.compute_masks(k, steps, gen, reporters)
        block = k if self.all_clients_compute else max(1, self.block_bytes // self.task.client_bytes)
        if block >= k:
            view = self.task.clients(rows)
            return self.local_steps_from(x.expand(k, x.shape[0]), view, tau, correction, masks,
                                         view.oracle(gen, round_index), client)
        parts, gradients = [], 0
        for start in range(0, k, block):
            part = slice(start, min(start + block, k))
            view = self.task.clients(part if rows is None else rows[part])
            n_rows = part.stop - part.start
            X, g = self.local_steps_from(x.expand(n_rows, x.shape[0]), view, tau[part],
                                         None if correction is None else correction[part],
                                         None if masks is None else masks[:, part],
                                         view.oracle(gen, round_index), client)
            parts.append(X)
            gradients += g
        return torch.cat(parts), gradients

    def local_steps_from(self, X: torch.Tensor, view: ClientView, tau: torch.Tensor,
                         correction: torch.Tensor | None, masks: torch.Tensor | None,
                         oracle: Oracle, client: Transform,
                         gossip: StackedNetwork | None = None) -> tuple[torch.Tensor, int]:
        """The local steps of the clients of ``view`` from their models X (see the module
        docstring), gradients from ``oracle``, mixing with ``gossip`` (a StackedNetwork over the
        rows of ``view``; default ``self.gossip``). Plain SGD clients (``client.sgd_lr``) with
        the same steps for every row, no correction, compute sets or gossip hand their steps to
        the task when the oracle offers to run them fused (``oracle.descend``: the MLP's layers
        stay apart between steps; the same numbers up to float rounding)."""
        gossip = self.gossip if gossip is None else gossip
        k = view.n
        if client.for_clients is not None:   # heterogeneous clients: bind to these rows' ids
            ids = torch.arange(self.task.n)
            client = client.for_clients(ids if view.idx is None else ids[view.idx]
                                        if isinstance(view.idx, slice) else view.idx)
        state = client.init(X)
        steps = uneven = 0
        if k:
            low, high = torch.aminmax(tau)
            steps = int(high)
            uneven = int(low) != steps
        if (client.sgd_lr is not None and correction is None and masks is None and gossip is None
                and steps and not uneven and (descend := getattr(oracle, "descend", None))):
            return descend(X, client.sgd_lr, steps), k * steps   # plain SGD, fused by the task
        gradients = 0
        for s in range(steps):
            active = (tau > s) if uneven else None
            if masks is not None:
                active = masks[s] if active is None else active & masks[s]
            if active is None:
                G = oracle(X, None)
                gradients += k
                transform = client
            else:
                act = torch.nonzero(active).squeeze(1)
                G = torch.zeros_like(X).index_copy_(0, act, oracle(X.index_select(0, act), act))
                gradients += int(act.numel())
                transform = masked(client, active)
            if correction is not None:
                G = G + correction
            U, state = transform.update(G, state, X)
            X = X + U
            if gossip is not None:
                X = gossip.mix(X)
        return X, gradients

    def step(self, state: FederatedState) -> FederatedState:
        gen = generator_from(state.rng)
        x = state.x_g
        part, rows, row_ids, tau_rows = self.plan(gen)
        client = self.client_for_round(state)
        cv = self.control_variates
        correction = None if cv is None else cv.correction(state.C, state.c, row_ids)
        X, gradients = self.local_work(x, rows, tau_rows, correction, gen, reporters=part.clients,
                                       client=client, round_index=state.t)
        if rows is None and not part.full:
            Y, tau = X.index_select(0, part.clients), tau_rows.index_select(0, part.clients)
        else:
            Y, tau = X, tau_rows
        delta = self.aggregation(Y - x, part.weights, tau, client)
        updates, server = self.server.update(-delta, state.server, x)
        C, c = state.C, state.c
        x_new = x + updates
        if cv is not None:
            C, c = cv.update(C, c, part.clients, x, Y, tau)
            x_new = cv.server_model(x_new, c)
        steps = int(tau_rows.max()) if tau_rows.numel() else 0
        return self.advance(state, x_g=x_new, rng=gen.get_state(), K=steps,
                            last_comm=self.counts(part, gradients, len(row_ids), steps),
                            server=server, C=C, c=c, clients=part.clients, weights=part.weights,
                            tau=tau, metrics=self.round_metrics(x, X, row_ids, delta, server))

    def counts(self, part: Participation, gradients: NonNegativeInt, workers: NonNegativeInt,
               steps: NonNegativeInt) -> CommCounts:
        """Each participant downloads x and uploads Delta_j (d floats each; ``vectors`` d with
        control variates); with mixing, one model exchange per local step; optimizer state held
        by every client that runs local steps."""
        if self.group_sizes.size == 1:
            per_group = (int(part.clients.shape[0]),)
        else:
            per_group = tuple(np.bincount(self.group_of.index_select(0, part.clients).cpu().numpy(),
                                          minlength=self.group_sizes.size).tolist())
        key = (per_group, int(gradients), int(workers), int(steps))
        known = self.__dict__.setdefault("_counts_of", {})
        if key not in known:   # a round's counters depend on these alone: computed once each
            known[key] = self._count(np.array(per_group), *key[1:])
        return known[key]

    def _count(self, per_group: np.ndarray, gradients: int, workers: int, steps: int) -> CommCounts:
        d = self.task.d
        floats = d if self.control_variates is None else self.control_variates.vectors * d
        exchanges = steps if self.mixes else 0
        state_floats = 0 if self.client.state_floats is None else self.client.state_floats(d) * workers
        traffic = RoundTraffic(model_exchanges=exchanges, tracking_exchanges=0, uploaders=per_group,
                               upload_floats_each=floats, receivers=per_group,
                               download_floats_each=floats, gradients=gradients,
                               client_state_floats=state_floats)
        return count_round(traffic, self.d2d_links, self.group_sizes, d, self.energy)


__all__ = ["Federated", "FederatedState", "RoundPlan", "ParticipationScheme", "participation_scheme"]
