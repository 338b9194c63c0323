r"""Seeds run together: B runs of one federated algorithm that differ only in their seed, stacked
like clients, so that a Monte-Carlo over seeds costs a few large tensor operations per local step
instead of B small ones. The batch runs the round's own stages
(:class:`~fedbound.algorithms.federated.round.Federated`): each seed's participation from its
generator (uniform sampling without groups drawn for all seeds at once,
:meth:`~fedbound.network.sampling.UniformParticipation.draw_each`: a randperm per seed, then one
sort and one weighting), one local-steps call over the rows of all seeds with a gradient oracle
that adds each seed's noise from its own generator (:meth:`fedbound.tasks.Task.add_noise`), the
aggregation of each seed (the weighted mean as one batched product where a probe shows it gives
each seed's own product bitwise, else seed by seed), one call of the server transform on the
(B, d) stack, the counters once (every seed has the same number of participants).

Which algorithms batch (:func:`batchable`): those on the federated round that replace none of its
stages, without gossip, control variates, per-step compute sets or all-clients computation, with
the same number of local steps for every client (FixedSteps) and a fixed number of participants,
on a task whose gradients are exact up to the added noise (not ``samples_gradients``) and whose
clients fit in one cache block (so that the single run draws its randomness in one block too),
with a server transform that acts row by row. In the registry today: fedavg, fedprox, fedavgm,
fedadagrad, fedadam, fedyogi, and any new round algorithm of the same shape
(tests/sweep/test_batch.py checks every registered algorithm that batches).

Every generator draws exactly the numbers, in the order, of its single run (participation, then
the noise of each local step), and every reduction over clients is the single run's operation on
that seed's rows (the batched gradient is one batched matrix product per client row, as in the
single run; the weights are normalized over the last axis in both; the metrics of the global
models are evaluated for each seed in the single run's chunks,
:func:`fedbound.algorithms.run.global_columns`), so a batched seed reproduces its single run
bitwise: every recorded column of every registered algorithm that batches, on least squares and
quadratics, with and without noise (tests/sweep/test_batch.py asserts it). A non-finite value in
any seed raises :class:`BatchDiverged`.

The cost per seed and round that remains is its generator's: one randperm and one normal draw per
local step (about 1 us each; a small task's single round costs over a hundred times that).
"""
from __future__ import annotations

import numpy as np
import torch

from fedbound.algorithms.accounting import COUNTERS
from fedbound.algorithms.base import Algorithm, generator_from, new_rng
from fedbound.algorithms.federated.aggregation import WeightedMean
from fedbound.algorithms.federated.local_steps import FixedSteps
from fedbound.algorithms.federated.round import Federated
from fedbound.algorithms.run import METRIC_CHUNK, global_columns
from fedbound.algorithms.threads import RoundThreads, round_threads
from fedbound.argtypes import NonNegativeInt
from fedbound.errors import FedboundError, require
from fedbound.network.sampling import FullParticipation, Participation, UniformParticipation
from fedbound.tasks.base import Task

#: the stages a batchable algorithm must not replace
STAGES = ("step", "plan", "client_for_round", "local_work", "local_steps_from", "counts")


class BatchDiverged(FedboundError):
    """A non-finite value in a batch of seeds (run them one by one)."""


def batchable(alg: Algorithm) -> bool:
    """Whether ``alg`` can run in a batch of seeds (module doc); the server transform is probed
    (:func:`_rowwise`)."""
    if not isinstance(alg, Federated):
        return False
    cls, task = type(alg), alg.task
    return (all(getattr(cls, stage) is getattr(Federated, stage) for stage in STAGES)
            and alg.gossip is None and alg.control_variates is None
            and alg.compute_per_step is None and not alg.all_clients_compute
            and isinstance(alg.local_steps, FixedSteps) and alg.local_steps.uniform
            and isinstance(alg.participation, (FullParticipation, UniformParticipation))
            and not task.samples_gradients
            and alg.block_bytes // task.client_bytes >= task.n
            and _rowwise(alg.server, task.d, task.dtype))


def _rowwise(server, d: int, dtype) -> bool:
    """Whether three steps of the server transform on a (2, d) stack equal its steps on each row
    alone (a transform that reduces over the whole model, e.g. a norm clip, does not batch)."""
    gen = torch.Generator(device="cpu").manual_seed(0)

    def draw():
        return torch.randn(2, d, generator=gen, dtype=torch.float64, device="cpu").to(
            dtype=dtype, device=torch.get_default_device())
    x = draw()
    grads = [draw() for _ in range(3)]
    try:
        stacked, rows = server.init(x), [server.init(x[i]) for i in range(2)]
        for g in grads:
            u, stacked = server.update(g, stacked, x)
            for i in range(2):
                v, rows[i] = server.update(g[i], rows[i], x[i])
                if not torch.allclose(u[i], v, rtol=1e-12, atol=0.0):
                    return False
    except (RuntimeError, ValueError, IndexError, FedboundError):
        return False
    return True


#: most seeds in one batch, and the most memory a batch may hold (data of every row, client
#: tensors, recorded metrics): batching pays for small tasks, where per-call overhead dominates
MAX_SEEDS = 128
BATCH_BYTES = 1 << 28


def seeds_per_batch(task: Task, rounds: NonNegativeInt) -> int:
    """How many seeds of ``task`` one batch of ``rounds`` rounds holds: at most MAX_SEEDS and at
    most BATCH_BYTES (the clients' data gathered twice, eight (n, d) tensors, the global model and 16 numbers per
    round), at least 1. Machine-independent, so that a sweep's batches are the same everywhere."""
    per_seed = 2 * task.client_bytes * task.n + 8 * (8 * task.n * task.d + (task.d + 16) * (rounds + 1))
    return int(max(1, min(MAX_SEEDS, BATCH_BYTES // per_seed)))


def run_seeds(algs: list[Federated], rounds: NonNegativeInt) -> list[dict[str, np.ndarray]]:
    """The per-round columns (:func:`fedbound.algorithms.run.columns`) of ``run(alg, rounds)``
    for each of ``algs`` (one algorithm built with B seeds on one task, each batchable) in one
    batched run, under the thread policy of runs (:mod:`fedbound.algorithms.threads`: one thread
    for the first round, then as many as a batched round's work can use, unless chosen)."""
    require(len(algs) >= 1, "run_seeds needs at least one algorithm (one per seed)")
    with round_threads() as policy:
        return _run_seeds(algs, rounds, policy)


def _run_seeds(algs: list[Federated], rounds: int, policy: RoundThreads) -> list[dict[str, np.ndarray]]:
    alg = algs[0]
    task = alg.task
    gens = [generator_from(new_rng(a.seed)) for a in algs]
    x = torch.stack([a.initial_models(None) for a in algs])
    server = alg.server.init(x)
    record = _Record(len(algs), rounds, task)
    record.add(0, x, np.zeros(len(COUNTERS)), 0)
    B = len(algs)
    for t in range(1, rounds + 1):
        clients, weights = _participants(alg, gens)   # (B, k) each, k fixed
        k = int(clients.shape[1])
        row_ids = clients.reshape(-1)
        tau = alg.local_steps.draw(row_ids, gens[0])   # fixed steps: nothing drawn
        steps = int(tau.max())                         # one tau for all rows
        view = task.clients(row_ids)
        X, _ = alg.local_steps_from(torch.repeat_interleave(x, k, dim=0), view, tau, None, None,
                                    lambda X, rows: task.add_noise(view.grad(X, rows), gens, [k] * B),
                                    alg.client)
        D = X.view(B, k, -1) - x.unsqueeze(1)   # each seed's Delta_j = Y_j - x
        if t == 1:
            one_product = _mean_in_one_product(alg, D, weights)
        if one_product:
            delta = torch.bmm(weights.unsqueeze(1), D).squeeze(1)
        else:
            taus = tau.view(B, k)
            delta = torch.stack([alg.aggregation(D[b], weights[b], taus[b], alg.client) for b in range(B)])
        updates, server = alg.server.update(-delta, server, x)
        x = x + updates
        if not bool(torch.isfinite(x.sum())):
            raise BatchDiverged(f"a seed diverged at round {t}")
        # no gossip: one group of n clients, so a round's counters depend on k alone (cached)
        part = Participation(clients[0], weights[0], full=k == task.n)
        record.add(t, x, list(alg.counts(part, k * steps, k, steps).as_dict().values()), steps)
        if t == 1:   # a local step of the batch: every seed's k participants
            policy.measured(B * k * task.gradient_flops)
    return record.columns()


def _mean_in_one_product(alg: Federated, D: torch.Tensor, weights: torch.Tensor) -> bool:
    """Whether the round's aggregation is the weighted mean and one batched product over the seeds
    gives each seed's ``w @ D`` bitwise: probed on random data of the shapes of ``D`` (B, k, d)
    and ``weights`` (B, k), since a BLAS may compute a batch by another kernel than one product."""
    if type(alg.aggregation) is not WeightedMean:
        return False
    gen = torch.Generator(device="cpu").manual_seed(0)
    w = torch.rand(weights.shape, generator=gen, dtype=torch.float64).to(weights)
    E = torch.randn(D.shape, generator=gen, dtype=torch.float64).to(D)
    batched = torch.bmm(w.unsqueeze(1), E).squeeze(1)
    return all(torch.equal(batched[b], alg.aggregation(E[b], w[b], None, alg.client))
               for b in range(D.shape[0]))


def _participants(alg: Federated, gens: list[torch.Generator]) -> tuple[torch.Tensor, torch.Tensor]:
    """(clients (B, k), weights (B, k)): row b the participation the single run of seed b draws
    from ``gens[b]`` (:meth:`Federated.plan`; uniform without groups drawn together by
    :meth:`~fedbound.network.sampling.UniformParticipation.draw_each`)."""
    scheme, p = alg.participation, alg.task.weights
    if isinstance(scheme, UniformParticipation) and scheme.groups is None:
        return scheme.draw_each(p, gens)
    parts = [scheme.draw(p, g) for g in gens]
    return torch.stack([q.clients for q in parts]), torch.stack([q.weights for q in parts])


class _Record:
    """Per-round metrics of B seeds, as :func:`fedbound.algorithms.run.run` records them: the
    global models of every round, evaluated at the end seed by seed in the single run's chunks
    (:func:`fedbound.algorithms.run.global_columns`)."""

    def __init__(self, B: int, rounds: int, task):
        self.B, self.task = B, task
        self.X = torch.empty(rounds + 1, B, task.d, dtype=task.dtype, device=task.device)
        self.K = np.zeros(rounds + 1, dtype=np.int64)
        self.comm = np.zeros((rounds + 1, B, len(COUNTERS)))

    def add(self, t: int, x, per_round, steps: int) -> None:
        self.X[t] = x
        self.K[t] = steps
        self.comm[t] = (self.comm[t - 1] + per_round) if t else per_round

    def columns(self) -> list[dict[str, np.ndarray]]:
        out = []
        for b in range(self.B):
            X = self.X[:, b].contiguous()
            metrics = np.concatenate([global_columns(self.task, X[i:i + METRIC_CHUNK])
                                      for i in range(0, X.shape[0], METRIC_CHUNK)])
            if not np.all(np.isfinite(metrics[:, [0, 3]])):
                raise BatchDiverged(f"seed {b} of the batch diverged (a metric is not finite)")
            cols = {m: metrics[:, i].copy()
                    for i, m in enumerate(("loss", "loss_gap", "dist2", "grad_norm2"))}
            cols["K"] = self.K.copy()
            cols.update({c: self.comm[:, b, j].copy() for j, c in enumerate(COUNTERS)})
            cols["energy"] = cols["energy_ds"] + cols["energy_d2d"]   # as CommCounts.as_dict sums it
            out.append(cols)
        return out


__all__ = ["batchable", "seeds_per_batch", "run_seeds", "BatchDiverged", "MAX_SEEDS", "BATCH_BYTES"]
