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
       x <- strategy.server_model(x, c): unchanged for SCAFFOLD, FedDyn's x - h / alpha)

Rows are the participants only (a round costs in proportion to k: the task's data of S_t is gathered
once per round), except with gossip, where every one of the n clients runs the local steps and
mixes (AFGA: all N clients gossip, S_t only reports). Without gossip the rows run in cache-sized
blocks of clients (``Federated.block_bytes``). Randomness, in order per round: participation,
local-step counts, the compute sets of all steps, then block by block and step by step the
stochastic gradients of the active rows (a client past its tau_j steps draws none). All of it comes
from the generator whose state travels in the state, so ``step`` is pure.

Accounting per round (CommCounts): each participant downloads x and uploads Delta_j (d floats each;
``vectors`` d with control variates: 2d for SCAFFOLD, d for FedDyn); gossip: one D2D exchange per
local step over the directed links of W; gradient evaluations as computed; client optimizer state
floats = Transform.state_floats(d) per client that runs local steps; energy: the sampled fraction of
each group times its round-trip cost (one group of n clients without gossip) plus the D2D cost per
exchange (accounting.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from fedbound.algorithms.accounting import CommCounts, EnergyModel, RoundTraffic, count_round
from fedbound.algorithms.aggregation import WeightedMean
from fedbound.algorithms.base import Algorithm, State, generator_from, new_rng
from fedbound.algorithms.local_steps import local_steps as steps_scheme
from fedbound.algorithms.optim.base import Transform, masked
from fedbound.algorithms.stacked import StackedNetwork
from fedbound.errors import InputTypeError, require
from fedbound.network.sampling import (PARTICIPATIONS, FullParticipation, UniformParticipation,
                                       compute_mask, named_participation)
from fedbound.validate import integer


@dataclass(frozen=True)
class FederatedState(State):
    """server: the server transform's state; C (n, d), c (d,): control variates (None without;
    FedDyn: the clients' lagged gradients g_i and the server's h);
    clients (k,), weights (k,), tau (k,): participants, their weights and local steps in the last
    round (None before the first). K (in State) is the last round's max_j tau_j. metrics: the last
    round's extra metrics (``Federated.round_metrics``; None without), recorded by ``run``."""

    server: object
    C: torch.Tensor | None = None
    c: torch.Tensor | None = None
    clients: torch.Tensor | None = None
    weights: torch.Tensor | None = None
    tau: torch.Tensor | None = None
    metrics: dict | None = None


def participation_scheme(task, clients_per_round=None, participation=None):
    """``participation`` if given (a scheme, or its name for
    :func:`~fedbound.network.sampling.named_participation` with ``clients_per_round``), else
    uniform without replacement of ``clients_per_round`` (None or n: full participation) with
    weights p_i normalized over the sampled clients."""
    if isinstance(participation, str):
        return named_participation(participation, task.n, clients_per_round)
    if participation is not None and not callable(getattr(participation, "draw", None)):
        raise InputTypeError(f"participation must be a scheme name {PARTICIPATIONS} or a scheme "
                             f"with a draw method, got {participation!r:.80}")
    if participation is not None:
        require(clients_per_round is None, "give clients_per_round or participation, not both")
        return participation
    if clients_per_round is None:
        return FullParticipation()
    q = integer("clients_per_round", clients_per_round, low=1, high=task.n)
    return FullParticipation() if q == task.n else UniformParticipation(task.n, q)


class Federated(Algorithm):
    """The federated round template over a task (see the module docstring).

    Parameters: ``client`` (a client Transform on (rows, d), re-initialized every round; a
    heterogeneous one, with ``for_clients`` set, is bound to each block's client ids: FedAda2's
    blended optimization),
    ``server`` (a server Transform on (d,) receiving the pseudo-gradient), ``local_steps`` (int,
    (n,) ints, or a scheme of :mod:`fedbound.algorithms.local_steps`), ``clients_per_round`` or
    ``participation`` (a scheme of :mod:`fedbound.network.sampling`; default full), ``aggregation``
    (default :class:`~fedbound.algorithms.aggregation.WeightedMean`), ``control_variates``
    (:class:`~fedbound.algorithms.control_variates.ControlVariates` or None), ``gossip`` (a
    :class:`~fedbound.network.Network` or StackedNetwork over the n clients: one mixing X <- W X
    after every local step), ``compute_per_step`` (M: only M uniformly drawn rows compute a gradient
    at each local step, AFGA's S_{r,t}), ``seed``, ``energy`` (EnergyModel over the gossip subnets,
    or over one group of n clients).
    """

    name = "federated"
    #: cache budget of one block of clients' data (see ``local_work``): 4 MiB, the fastest of
    #: 256 KiB .. 256 MiB measured for the n = 1000, d = 1000 least-squares round on a 1 MiB-L2,
    #: 32 MiB-L3 core (66 ms per round at 4 MiB, 90 ms at 1 MiB, 190 ms unblocked; fewer, larger
    #: blocks also pay less Python overhead per local step)
    block_bytes = 1 << 22

    def __init__(self, task, *, client: Transform, server: Transform, local_steps=1,
                 clients_per_round=None, participation=None, aggregation=None,
                 control_variates=None, gossip=None, compute_per_step=None, seed: int = 0,
                 energy: EnergyModel | None = None):
        super().__init__(task, seed=seed)
        self.client, self.server = client, server
        self.local_steps = steps_scheme(local_steps, task.n)
        self.participation = participation_scheme(task, clients_per_round, participation)
        self.aggregation = WeightedMean() if aggregation is None else aggregation
        self.control_variates = control_variates
        if gossip is not None and not isinstance(gossip, StackedNetwork):
            gossip = StackedNetwork.from_network(gossip, task.dtype)
        require(gossip is None or gossip.n == task.n,
                f"the gossip network has {gossip.n if gossip is not None else 0} clients, the task n={task.n}")
        self.gossip = gossip
        self._mixes = gossip is not None    # one D2D exchange per local step (counts)
        rows = task.n
        self.compute_per_step = (None if compute_per_step is None
                                 else integer("compute_per_step", compute_per_step, low=1, high=rows))
        if gossip is not None:
            self._groups, self._links = gossip.m, gossip.directed_links
            self._subnet_of = gossip.subnet_of
        else:
            self._groups, self._links = np.array([task.n]), np.zeros(1, dtype=np.int64)
            self._subnet_of = torch.zeros(task.n, dtype=torch.int64)
        self.energy = EnergyModel.unit(self._groups.size) if energy is None else energy
        require(self.energy.E_ds.size == self._groups.size,
                f"energy model has {self.energy.E_ds.size} groups, the round has {self._groups.size}")

    # ---- state ---------------------------------------------------------------------------------
    def init(self, x0=None) -> FederatedState:
        x0 = self.initial_models(x0)
        zero = CommCounts()
        C = c = None
        if self.control_variates is not None:
            C, c = self.control_variates.init(self.task.n, x0)
        return FederatedState(t=0, x_g=x0, rng=new_rng(self.seed), K=0, comm=zero, last_comm=zero,
                              server=self.server.init(x0), C=C, c=c)

    # ---- one round -----------------------------------------------------------------------------
    def compute_masks(self, k: int, steps: int, gen: torch.Generator,
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
                      delta: torch.Tensor, server_state) -> dict | None:
        """Extra per-round metrics (name -> float) from the round's end: server model x, local
        models X of the clients ``row_ids``, aggregate ``delta`` and the new server state. None
        here; subclasses (AFGA) log consensus errors and the like."""
        return None

    def local_work(self, x: torch.Tensor, rows: torch.Tensor | None, tau: torch.Tensor,
                   correction: torch.Tensor | None, gen: torch.Generator,
                   reporters: torch.Tensor | None = None) -> tuple[torch.Tensor, int]:
        """Step 2 for the rows ``rows`` (None: all n clients): (X after the local steps, number of
        gradients computed).

        Without gossip the clients are independent, so the rows run in blocks of
        ``block_rows`` clients, all local steps of one block before the next: a block's data stays
        in cache for its tau steps instead of streaming every client's data from memory at every
        step (benchmarks/bench_fedavg_round.py). Randomness is then drawn block by block (the
        compute sets first, for all rows and steps)."""
        k = self.task.n if rows is None else int(rows.shape[0])
        steps = int(tau.max()) if k else 0
        masks = self.compute_masks(k, steps, gen, reporters)
        block = k if self.gossip is not None else max(1, self.block_bytes // self.task.client_bytes)
        if block >= k:
            return self._steps(x, self.task.clients(rows), tau, correction, masks, gen)
        parts, gradients = [], 0
        for start in range(0, k, block):
            part = slice(start, min(start + block, k))
            view = self.task.clients(part if rows is None else rows[part])
            X, g = self._steps(x, view, tau[part], None if correction is None else correction[part],
                               None if masks is None else masks[:, part], gen)
            parts.append(X)
            gradients += g
        return torch.cat(parts), gradients

    def _steps(self, x, view, tau, correction, masks, gen, gossip=None) -> tuple[torch.Tensor, int]:
        """The local steps of the clients of ``view`` (see the module docstring), mixing with
        ``gossip`` (a StackedNetwork over the rows of ``view``; default ``self.gossip``)."""
        gossip = self.gossip if gossip is None else gossip
        k = view.n
        X = x.expand(k, x.shape[0])
        client = self.client
        if client.for_clients is not None:   # heterogeneous clients: bind to these rows' ids
            ids = torch.arange(self.task.n)
            client = client.for_clients(ids if view.idx is None else ids[view.idx]
                                        if isinstance(view.idx, slice) else view.idx)
        state = client.init(X)
        steps = int(tau.max()) if k else 0
        uneven = bool(torch.any(tau != steps))
        gradients = 0
        for s in range(steps):
            active = (tau > s) if uneven else None
            if masks is not None:
                active = masks[s] if active is None else active & masks[s]
            if active is None:
                G = view.stochastic_grad(X, gen)
                gradients += k
                transform = client
            else:
                act = torch.nonzero(active).squeeze(1)
                G = torch.zeros_like(X).index_copy_(
                    0, act, view.stochastic_grad(X.index_select(0, act), gen, rows=act))
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
        task, x = self.task, state.x_g
        part = self.participation.draw(task.weights, gen)
        everyone = self.gossip is not None
        rows = None if (everyone or part.full) else part.clients
        row_ids = torch.arange(task.n) if rows is None else rows
        tau_rows = self.local_steps.draw(row_ids, gen)
        cv = self.control_variates
        correction = None if cv is None else cv.correction(state.C, state.c, row_ids)
        X, gradients = self.local_work(x, rows, tau_rows, correction, gen, reporters=part.clients)
        if everyone and not part.full:
            Y, tau = X.index_select(0, part.clients), tau_rows.index_select(0, part.clients)
        else:
            Y, tau = X, tau_rows
        delta = self.aggregation(Y - x, part.weights, tau, self.client)
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

    def counts(self, part, gradients: int, workers: int, steps: int) -> CommCounts:
        """Each participant downloads x and uploads Delta_j (d floats each; ``vectors`` d with
        control variates); gossip: one model exchange per local step; optimizer state held by
        every client that runs local steps."""
        d = self.task.d
        floats = d if self.control_variates is None else self.control_variates.vectors * d
        per_group = np.bincount(self._subnet_of.index_select(0, part.clients).numpy(),
                                minlength=self._groups.size)
        exchanges = steps if self._mixes else 0
        state_floats = 0 if self.client.state_floats is None else self.client.state_floats(d) * workers
        traffic = RoundTraffic(model_exchanges=exchanges, tracking_exchanges=0, uploaders=per_group,
                               upload_floats_each=floats, receivers=per_group,
                               download_floats_each=floats, gradients=gradients,
                               client_state_floats=state_floats)
        return count_round(traffic, self._links, self._groups, d, self.energy)
