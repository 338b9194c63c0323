"""Per-client labelled data padded to a common length, so that all clients are processed in one batch.

Client i holds sizes[i] samples; rows beyond that are padding with mask 0. Losses are masked averages
sum_s mask_is loss_is / sum_s mask_is, so padding never changes a value or a gradient.
Minibatches: every client draws min(B, m_i) of its own samples uniformly without replacement,
independently across clients and calls (seeded torch.Generator), or takes the samples a batch
order gives for its client, round and local step (:mod:`fedbound.tasks.batches`).
:class:`ClientDataTask` is the Task over such data (full gradients over each client's samples, or
minibatch gradients).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from fedbound import validate
from fedbound.argtypes import Count
from fedbound.errors import require
from fedbound.tasks.base import Task, as_float64
from fedbound.tasks.batches import BatchOrder, batch_order


@dataclass(frozen=True)
class ClientData:
    features: torch.Tensor   # (n, m_max, D)
    labels: torch.Tensor     # (n, m_max) int64, 0 on padding
    mask: torch.Tensor       # (n, m_max) of the features' dtype, 1 on samples, 0 on padding
    sizes: torch.Tensor      # (n,) int64

    @classmethod
    def from_lists(cls, features: list[np.ndarray], labels: list[np.ndarray],
                   dtype: torch.dtype = torch.float64) -> "ClientData":
        """From per-client arrays features[i] (m_i, D) and labels[i] (m_i,) of integers, m_i >= 1."""
        return cls._packed(features, labels, dtype, ones=False)[0]

    @classmethod
    def with_ones_from_lists(cls, features: list[np.ndarray], labels: list[np.ndarray],
                             dtype: torch.dtype = torch.float64) -> tuple["ClientData", torch.Tensor]:
        """:meth:`from_lists`, and [features | 1] (n, m_max, D + 1): each sample's features and a
        one (padding rows too), the data's ``features`` a view of its first D columns (the
        samples held once; an MLP's fused local steps take their inputs [A | 1] from it: a
        round of 100 clients spent 45 us of 1.7 ms appending the ones to its minibatches)."""
        return cls._packed(features, labels, dtype, ones=True)

    @classmethod
    def _packed(cls, features: list[np.ndarray], labels: list[np.ndarray], dtype: torch.dtype,
                ones: bool) -> tuple["ClientData", torch.Tensor]:
        """The data and the array its features view: (n, m_max, D), or with a column of ones
        after them (``ones``)."""
        require(len(features) == len(labels) and len(features) >= 1,
                f"features and labels must list the same number >= 1 of clients, got {len(features)} and {len(labels)}")
        shapes = [np.shape(f) for f in features]
        dim = shapes[0][-1] if len(shapes[0]) == 2 else -1
        for i, shape in enumerate(shapes):
            require(len(shape) == 2 and shape[1] == dim and shape[0] >= 1,
                    f"features[{i}] must have shape (m_i >= 1, {dim}), got {shape}")
        sizes = np.array([shape[0] for shape in shapes])
        n, m_max = len(shapes), int(sizes.max())
        # packed straight into the task's dtype, one client at a time (the data set is not held
        # twice more in float64: 10^4 clients of the digits were 0.6 GB on the way)
        np_dtype = np.float32 if dtype == torch.float32 else np.float64
        X = np.zeros((n, m_max, dim + ones), dtype=np_dtype)
        X[:, :, dim:] = 1.0
        Y = np.zeros((n, m_max), dtype=np.int64)
        M = np.zeros((n, m_max), dtype=np_dtype)
        for i, (f, y) in enumerate(zip(features, labels)):   # one-off packing at construction
            f = as_float64(f"features[{i}]", f, 2, copy=False)
            y = np.asarray(y)
            require(y.shape == (f.shape[0],), f"labels[{i}] must have shape ({f.shape[0]},), got {y.shape}")
            require(y.dtype.kind in "iu" and bool(np.all(y >= 0)), f"labels[{i}] must be integers >= 0")
            X[i, : len(y), :dim], Y[i, : len(y)], M[i, : len(y)] = f, y, 1.0
        held = torch.from_numpy(X)
        return cls(held[:, :, :dim], torch.from_numpy(Y), torch.from_numpy(M), torch.as_tensor(sizes)), held

    @property
    def n(self) -> int:
        return self.features.shape[0]

    def valid(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(features (N, D), labels (N,), client index (N,)) of the N = sum_i m_i real samples."""
        keep = self.mask > 0
        owner = torch.arange(self.n)[:, None].expand_as(keep)
        return self.features[keep], self.labels[keep], owner[keep]

    def minibatch(self, batch_size: Count, generator: torch.Generator) -> "ClientData":
        """min(batch_size, m_i) samples of every client, uniformly without replacement."""
        return self.select(*self.minibatch_positions(batch_size, generator))

    def minibatch_positions(self, batch_size: Count,
                            generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """The positions (k, B') and validity (k, B') of :meth:`minibatch`'s samples, B' =
        min(batch_size, max m_i): the first min(batch_size, m_i) of a uniform shuffle of each
        client's samples."""
        B = min(int(batch_size), self.features.shape[1])
        keys = torch.rand(self.mask.shape, generator=generator, dtype=torch.float64,
                          device=generator.device).to(self.mask.device)
        keys = torch.where(self.mask > 0, keys, torch.full_like(keys, 2.0))
        valid = torch.arange(B, device=self.sizes.device)[None, :] < torch.clamp(self.sizes, max=B)[:, None]
        return torch.argsort(keys, dim=1)[:, :B], valid

    def select(self, positions: torch.Tensor, valid: torch.Tensor) -> "ClientData":
        """The samples at ``positions`` (k, B) of every client, those where ``valid`` is False
        weighing 0 (:meth:`fedbound.tasks.batches.BatchOrder.positions`)."""
        feats = torch.gather(self.features, 1,
                             positions[:, :, None].expand(-1, -1, self.features.shape[2]))
        mask = valid.to(self.mask.dtype)
        return ClientData(feats, torch.gather(self.labels, 1, positions), mask,
                          valid.sum(dim=1))


class ClientDataTask(Task):
    """A task over per-client samples ``self.data`` (:class:`ClientData`): ``grad`` uses every
    sample of each client, ``stochastic_grad`` a minibatch of ``batch_size`` samples per client
    (None: full gradients), drawn from the run's generator or, with a batch order ``batches``
    (:mod:`fedbound.tasks.batches`), the samples it gives for the client, round and local step.
    Subclasses set ``data``, ``batch_size`` and ``batches`` (:meth:`set_batches`) and implement
    ``_grad_on(X, data)`` and ``_losses_on(X, data)`` for the clients of ``data`` (all, or a subset
    gathered by :func:`fedbound.tasks.base.gather`), and set ``_sizes_np`` (the m_i) before calling
    ``Task.__init__``."""

    data: ClientData
    batch_size: int | None
    batches: BatchOrder | None = None

    @staticmethod
    def check_batch_size(batch_size: int | None) -> int | None:
        require(batch_size is None or (isinstance(batch_size, (int, np.integer))
                                       and not isinstance(batch_size, bool) and 1 <= batch_size <= 2 ** 31),
                f"batch_size must be None or an integer >= 1 (at most 2**31), got {validate.show(batch_size)}")
        return None if batch_size is None else int(batch_size)

    @property
    def num_examples(self) -> np.ndarray:
        return self._sizes_np

    def client_data(self) -> ClientData:
        return self.data

    def set_batches(self, batches: object) -> None:
        """The batch order (:func:`fedbound.tasks.batches.batch_order`: None, a seed, explicit
        indices or a BatchOrder); an order needs a ``batch_size``."""
        batches = batch_order(batches)
        require(batches is None or self.batch_size is not None,
                "a batch order (batches) needs a batch_size: full gradients use every sample")
        self.batches = batches

    @property
    def keyed_batches(self) -> bool:
        return self.batches is not None and self.batch_size is not None

    def batch(self, data: ClientData, generator: torch.Generator, clients: torch.Tensor | None = None,
              round_index: int | None = None, step: int = 0) -> ClientData:
        """The samples of one stochastic gradient of the clients of ``data``: all of them (no
        ``batch_size``), a minibatch from ``generator``, or those the batch order gives for
        ``clients`` (their ids) at local step ``step`` of round ``round_index``."""
        if self.batch_size is None:
            return data
        return data.select(*self.batch_positions(data, generator, clients, round_index, step))

    def batch_positions(self, data: ClientData, generator: torch.Generator,
                        clients: torch.Tensor | None = None, round_index: int | None = None,
                        step: int = 0, steps: Count = 1) -> tuple[torch.Tensor, torch.Tensor]:
        """The positions and validity of :meth:`batch`'s minibatch (a ``batch_size`` is set); of
        ``steps`` local steps from ``step`` on, side by side ((k, steps B'): what as many calls
        give, in their order; at once where the batch order offers ``steps_positions``)."""
        if self.batches is None:
            drawn = [data.minibatch_positions(self.batch_size, generator) for _ in range(steps)]
            return drawn[0] if steps == 1 else _side_by_side(drawn, None)
        return self.keyed_positions(data.sizes, clients, round_index, step, steps)

    def keyed_positions(self, sizes: torch.Tensor, clients: torch.Tensor | None,
                        round_index: int | None, step: int = 0,
                        steps: Count = 1) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`batch_positions` in the task's batch order, from the clients' ids ``clients`` and
        their sample counts ``sizes`` alone (no sample is read)."""
        require(round_index is not None and clients is not None,
                f"the task's batch order {self.batches!r} picks samples per client, round and "
                "local step: it serves the local steps of a federated round, which give them; "
                "this gradient has no round (use batches=None here)")
        at_once = getattr(self.batches, "steps_positions", None)
        if at_once is not None:
            return at_once(clients, sizes, round_index, step, steps, self.batch_size)
        drawn = [self.batches.positions(clients, sizes, round_index, step + s, self.batch_size)
                 for s in range(steps)]
        return drawn[0] if steps == 1 else _side_by_side(drawn, self.batches)

    def _sampled_grad_on(self, X, data: ClientData, generator):
        return self._grad_on(X, self.batch(data, generator))

    def _keyed_grad_on(self, X, data: ClientData, generator, clients, round_index, step):
        return self.add_noise(self._grad_on(X, self.batch(data, generator, clients, round_index, step)),
                              [generator])


def _side_by_side(drawn: list, order: object) -> tuple[torch.Tensor, torch.Tensor]:
    """The positions and validity of several steps' minibatches side by side (k, steps B'); every
    step's B' the same (else a ValidationError naming the batch ``order``)."""
    widths = {int(p.shape[1]) for p, _ in drawn}
    require(len(widths) == 1, f"the batch order {order!r} gave minibatches of sizes "
                              f"{sorted(widths)} across the local steps of a round; they must have one size")
    return torch.cat([p for p, _ in drawn], 1), torch.cat([v for _, v in drawn], 1)
