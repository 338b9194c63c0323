r"""Seeds run together: B runs of one federated algorithm that differ only in their seed, stacked
like clients, so that a Monte-Carlo over seeds costs a few large tensor operations per local step
instead of B small ones.

Which algorithms batch (:func:`batchable`): those on the federated round template
(:class:`fedbound.algorithms.federated.Federated`, not overriding its round) without gossip, control
variates or per-step compute sets, with the same number of local steps for every client
(FixedSteps), on a task whose gradients are deterministic up to added Gaussian noise
(:meth:`Task.with_noise`, at most one) and whose clients fit in one cache block (so that the single run draws its randomness in one block too). In the registry
today: fedavg, fedprox, fedavgm, fedadagrad, fedadam, fedyogi, and any new template algorithm with
the same shape (tests/sweep/test_batch.py checks every registered algorithm that batches). SD-GT
and its semi-decentralized baselines keep their own round function and run one seed at a time.

Round t of seed b, as in :meth:`Federated.step` (see that module's docstring), with the rows of all
seeds stacked, (sum_b k_b, d):

    participation S_t^b, weights w^b and tau from seed b's generator   (a loop over seeds: RNG only)
    X = [x^b repeated k_b times]_b;  client state = client.init(X)
    for s < tau:  G = grad f_{i}(X) (one call for all rows) + [noise from generator b]_b
                  X = X + client.update(G, state, X)
    Delta^b = aggregation(X^b - x^b, w^b, tau, client)                  (per seed, the same rule)
    x^b <- x^b + server.update(-Delta^b)   (one call on (B, d): the server transforms are elementwise)

Every generator draws exactly the numbers, in the order, of its single run (participation, then
the noise of each local step), and every reduction over clients is the single run's operation on
that seed's rows (the batched gradient is one batched matrix product per client row, as in the
single run; the loss is a per-seed dot product, since a matrix-vector product sums in another
order), so a batched seed reproduces its single run bitwise: every recorded column of every
registered algorithm that batches, on least squares and quadratics, with and without noise
(tests/sweep/test_batch.py asserts it). A non-finite value in any seed raises
:class:`BatchDiverged`, and :func:`run_cells` runs the seeds one by one to find which diverged and
when.
"""
from __future__ import annotations

import math
import time

import numpy as np
import torch

from fedbound.algorithms.federated import Federated
from fedbound.algorithms.local_steps import FixedSteps
from fedbound.errors import DivergenceError, FedboundError
from fedbound.network.sampling import FullParticipation, UniformParticipation
from fedbound.sweep.store import COMM
from fedbound.tasks.base import Task


class BatchDiverged(FedboundError):
    """A non-finite value in a batch of seeds (run them one by one)."""


def batchable(alg) -> bool:
    """Whether ``alg`` can run in a batch of seeds (module doc): the template's own round, no
    gossip, control variates or compute sets, the same tau for every client, a fixed number of
    participants, deterministic task gradients in one cache block, and a server transform that
    acts row by row on a (B, d) stack (probed: :func:`_rowwise`)."""
    if not isinstance(alg, Federated):
        return False
    cls = type(alg)
    task = alg.task
    one_block = alg.block_bytes // task.client_bytes >= task.n
    return (cls.step is Federated.step and cls.local_work is Federated.local_work
            and cls._steps is Federated._steps and alg.gossip is None
            and alg.control_variates is None and alg.compute_per_step is None
            and isinstance(alg.local_steps, FixedSteps) and alg.local_steps.uniform
            and isinstance(alg.participation, (FullParticipation, UniformParticipation))
            and type(task)._sampled_grad_on is Task._sampled_grad_on and one_block
            and _gaussian_sigma(task) is not None
            and _rowwise(alg.server, task.d, task.dtype))


def _gaussian_sigma(task: Task) -> float | None:
    """The std of the task's added Gaussian gradient noise (0 without noise); None for other noise
    (sphere noise, or several added noises), which :func:`run_seeds` does not draw."""
    if not task._noises:
        return 0.0
    (sigma, kind), *more = task._noises
    return sigma if kind == "gaussian" and not more else None


def _rowwise(server, d: int, dtype) -> bool:
    """Whether three steps of the server transform on a (2, d) stack equal its steps on each row
    alone (a transform that reduces over the whole model, e.g. a norm clip, does not batch)."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, d, generator=gen, dtype=torch.float64).to(dtype)
    grads = [torch.randn(2, d, generator=gen, dtype=torch.float64).to(dtype) for _ in range(3)]
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


def seeds_per_batch(task: Task, rounds: int) -> int:
    """How many seeds of ``task`` one batch of ``rounds`` rounds holds: at most MAX_SEEDS and at
    most BATCH_BYTES (the clients' data gathered twice, eight (n, d) tensors, 16 numbers per
    round), at least 1. Machine-independent, so that a sweep's batches are the same everywhere."""
    per_seed = 2 * task.client_bytes * task.n + 8 * (8 * task.n * task.d + 16 * (rounds + 1))
    return int(max(1, min(MAX_SEEDS, BATCH_BYTES // per_seed)))


def columns(traj) -> dict[str, np.ndarray]:
    """The per-round columns of a Trajectory (metrics and cumulative CommCounts fields)."""
    out = {m: np.asarray(getattr(traj, m), dtype=float)
           for m in ("loss", "loss_gap", "dist2", "grad_norm2")}
    out["K"] = np.asarray(traj.K)
    out.update({c: np.asarray(traj.comm[c], dtype=float) for c in COMM})
    return out


def run_seeds(algs: list, rounds: int) -> list[dict[str, np.ndarray]]:
    """The per-round columns (:func:`columns`) of ``run(alg, rounds)`` for each of ``algs`` (one
    algorithm built with B seeds on one task, each batchable) in one batched run."""
    alg = algs[0]
    task = alg.task
    sigma = _gaussian_sigma(task)
    B, d, dtype = len(algs), task.d, task.dtype
    gens = []
    for a in algs:
        gen = torch.Generator()
        gen.manual_seed(a.seed)
        gens.append(gen)
    x = torch.stack([a.initial_models(None) for a in algs])
    server = alg.server.init(x)
    everyone = torch.arange(task.n).repeat(B)
    view_all = task.clients(everyone)
    f_star = None if task.f_star is None else float(task.f_star)
    record = _Record(B, rounds, d)
    record.add(0, x, view_all, task, f_star, np.zeros(len(COMM)), 0)
    counts: dict = {}
    for t in range(1, rounds + 1):
        parts = [alg.participation.draw(task.weights, g) for g in gens]
        row_ids = [torch.arange(task.n) if p.full else p.clients for p in parts]
        taus = [alg.local_steps.draw(r, g) for r, g in zip(row_ids, gens)]
        k = [int(r.shape[0]) for r in row_ids]
        steps = int(taus[0].max())   # fixed participants (k >= 1) and one tau for all
        view = task.clients(torch.cat(row_ids))
        X = torch.repeat_interleave(x, torch.tensor(k), dim=0)
        state = alg.client.init(X)
        z = torch.empty(sum(k), d, dtype=torch.float64)
        for _ in range(steps):
            G = view.grad(X)
            if sigma > 0:   # gradient_noise's Gaussian rows, each seed's from its own generator
                for part, g in zip(z.split(k), gens):
                    torch.randn(part.shape, generator=g, dtype=torch.float64, out=part)
                G = G + (z * (sigma / math.sqrt(d))).to(dtype)
            U, state = alg.client.update(G, state, X)
            X = X + U
        delta = torch.stack([alg.aggregation(Y - x[b], p.weights, tau, alg.client)
                             for b, (Y, p, tau) in enumerate(zip(X.split(k), parts, taus))])
        updates, server = alg.server.update(-delta, server, x)
        x = x + updates
        if not bool(torch.isfinite(x.sum())):
            raise BatchDiverged(f"a seed diverged at round {t}")
        per_round = np.empty((B, len(COMM)))
        for b, p in enumerate(parts):
            # no gossip: one group of n clients, so a round's counters depend on k alone
            key = (p.k, k[b] * steps, k[b], steps)
            if key not in counts:
                counts[key] = list(alg.counts(p, *key[1:]).as_dict().values())
            per_round[b] = counts[key]
        record.add(t, x, view_all, task, f_star, per_round, steps)
    return record.columns()


def run_cells(algs: list, rounds: int) -> list[tuple]:
    """``(status, columns, error, wall_s)`` of ``run(alg, rounds)`` for each of ``algs``: in one
    batch (:func:`run_seeds`) when there are several and their configuration batches (the caller
    groups only seeds of one configuration, so the first one is probed), else, or when the batch
    diverges, one by one; status "done" with the
    per-round :func:`columns`, or "diverged" with the message (no columns). ``wall_s`` is each
    run's share of the batch's wall time."""
    from fedbound.algorithms import run

    if len(algs) > 1 and batchable(algs[0]):
        start = time.perf_counter()
        try:
            cols = run_seeds(algs, rounds)
            wall = (time.perf_counter() - start) / len(algs)
            return [("done", c, None, wall) for c in cols]
        except BatchDiverged:
            pass   # run the seeds one by one: which diverged, and at which round
    out = []
    for alg in algs:
        start = time.perf_counter()
        try:
            out.append(("done", columns(run(alg, rounds)), None, time.perf_counter() - start))
        except DivergenceError as exc:
            out.append(("diverged", None, str(exc), time.perf_counter() - start))
    return out


class _Record:
    """Per-round metrics of B seeds, as :class:`fedbound.algorithms.base.run` records them."""

    def __init__(self, B: int, rounds: int, d: int):
        self.B = B
        self.metrics = np.empty((rounds + 1, 4, B))
        self.K = np.zeros(rounds + 1, dtype=np.int64)
        self.comm = np.zeros((rounds + 1, B, len(COMM)))

    def add(self, t: int, x, view_all, task, f_star, per_round, steps: int) -> None:
        B, n = self.B, task.n
        X = torch.repeat_interleave(x, n, dim=0)
        # f = p . f_i(x) per seed as the single run computes it (a dot product: a matrix-vector
        # product sums in another order and would differ in the last bits)
        losses = torch.stack([task.weights @ row for row in view_all.local_losses(X).reshape(B, n)])
        grads = torch.matmul(task.weights, view_all.grad(X).reshape(B, n, task.d))
        gap = losses - f_star if f_star is not None else torch.full((B,), float("nan"))
        dist2 = (torch.sum((x - task.x_star) ** 2, dim=1) if task.x_star is not None
                 else torch.full((B,), float("nan")))
        grad2 = torch.sum(grads ** 2, dim=1)
        self.metrics[t] = torch.stack([losses, gap.to(losses.dtype), dist2.to(losses.dtype),
                                       grad2]).numpy()
        if not np.all(np.isfinite(self.metrics[t, [0, 3]])):
            raise BatchDiverged(f"a seed diverged at round {t}")
        self.K[t] = steps
        self.comm[t] = (self.comm[t - 1] + per_round) if t else per_round

    def columns(self) -> list[dict[str, np.ndarray]]:
        out = []
        for b in range(self.B):
            cols = {m: self.metrics[:, i, b].copy()
                    for i, m in enumerate(("loss", "loss_gap", "dist2", "grad_norm2"))}
            cols["K"] = self.K.copy()
            cols.update({c: self.comm[:, b, j].copy() for j, c in enumerate(COMM)})
            cols["energy"] = cols["energy_ds"] + cols["energy_d2d"]   # as CommCounts.as_dict sums it
            out.append(cols)
        return out


__all__ = ["batchable", "seeds_per_batch", "run_seeds", "run_cells", "columns", "BatchDiverged"]
