"""Torch view of a subnet structure acting on stacked clients (rows of an (n, d) tensor).

Clients are rows, so one D2D mixing round (5) [seed 003 L140-L145] is ``X <- W X`` with the
block-diagonal W = blkdiag(W_1, ..., W_S) (3) [L95]; rows of W_s are the weights w_ij client i puts
on client j (symmetric for Metropolis weights). Three ways to apply W, chosen once per network
(``mixing`` attribute), none of them loops over clients:

* "gather" (sparse graphs: at most max(m_s)/8 non-zeros per row, e.g. rings, geometric graphs of
  large subnets): X_new = sum_slot w[:, slot] * X[nbr[:, slot]] over a padded neighbour table,
  a few memory passes instead of 2 m_s d flops per row (measured 6x faster than the dense bmm for
  rings of 100 clients, d = 1000; slower for dense graphs, hence the threshold);
* "bmm" (equal subnet sizes, denser graphs): one torch.bmm over (S, m, m) x (S, m, d);
* "blocks" (unequal sizes, denser graphs): one matmul per subnet (a loop over S).
Subnet reductions are a batched weighted sum (equal sizes) or a membership matmul.
"""
from __future__ import annotations

from typing import Literal, Sequence

import numpy as np
import torch

from fedbound.argtypes import Count, Matrix
from fedbound.errors import UnknownNameError, require
from fedbound.network import Network
from fedbound.validate import instance, integer, real_array

AGGREGATORS = ("subnet_weighted", "paper")


class StackedNetwork:
    """Subnets C_1..C_S of sizes m_s (contiguous blocks of rows) with D2D matrices W_s."""

    def __init__(self, blocks: Sequence[Matrix], dtype: torch.dtype = torch.float64):
        arrays = [np.atleast_2d(np.asarray(b, dtype=np.float64)) for b in blocks]
        require(len(arrays) >= 1, "a network needs at least one subnet, got 0")
        for s, b in enumerate(arrays):
            require(b.ndim == 2 and b.shape[0] == b.shape[1],
                    f"block {s} must be a square matrix, got shape {b.shape}")
        self.dtype = dtype
        self.S = len(arrays)
        self.m = np.array([b.shape[0] for b in arrays], dtype=np.int64)
        self.n = int(self.m.sum())
        self.offsets = np.concatenate([[0], np.cumsum(self.m)])
        self.equal_sizes = bool(np.all(self.m == self.m[0]))
        self.directed_links = np.array(
            [int(np.count_nonzero(b - np.diag(np.diag(b)))) for b in arrays], dtype=np.int64)
        self.subnet_of = torch.repeat_interleave(torch.arange(self.S), torch.as_tensor(self.m))
        self.m_t = torch.as_tensor(self.m, dtype=dtype)
        self.membership = torch.zeros(self.S, self.n, dtype=dtype)
        self.membership[self.subnet_of, torch.arange(self.n)] = 1.0
        tensors = [torch.tensor(b, dtype=dtype) for b in arrays]
        self.blocks = torch.stack(tensors) if self.equal_sizes else tensors
        self.neighbours, self.neighbour_weights = self._neighbour_table(arrays)
        if self.neighbours.shape[1] <= int(self.m.max()) // 8:
            self.mixing = "gather"
        else:
            self.mixing = "bmm" if self.equal_sizes else "blocks"

    def _neighbour_table(self, arrays) -> tuple[torch.Tensor, torch.Tensor]:
        """(n, k) global indices j and weights w_ij of the non-zeros of each row of W (self
        included), padded with (i, 0.0); k = the largest row support."""
        k = max(int(np.max(np.count_nonzero(b, axis=1))) for b in arrays)
        index = np.repeat(np.arange(self.n)[:, None], k, axis=1)
        weight = np.zeros((self.n, k))
        for s, b in enumerate(arrays):  # loop over subnets
            rows, cols = np.nonzero(b)
            slot = np.arange(rows.size) - np.searchsorted(rows, rows)  # position within the row
            index[self.offsets[s] + rows, slot] = self.offsets[s] + cols
            weight[self.offsets[s] + rows, slot] = b[rows, cols]
        return torch.as_tensor(index), torch.as_tensor(weight, dtype=self.dtype)

    @classmethod
    def from_network(cls, network: Network, dtype: torch.dtype = torch.float64) -> "StackedNetwork":
        """From a :class:`fedbound.network.Network` (uses its ``blocks``)."""
        return cls(list(instance("network", network, Network, "a fedbound Network (fedbound.network)").blocks),
                   dtype)

    @classmethod
    def singletons(cls, n: Count, dtype: torch.dtype = torch.float64) -> "StackedNetwork":
        """n one-client subnets (W_s = [1]): the star topology of conventional FL (S = n)."""
        return cls([np.ones((1, 1))] * n, dtype)

    @classmethod
    def one_group(cls, n: Count, dtype: torch.dtype = torch.float64) -> "StackedNetwork":
        """One group of n clients without D2D links (W = I): a star with uniform sampling."""
        return cls([np.eye(n)], dtype)

    @property
    def W(self) -> torch.Tensor:
        """Dense block-diagonal (n, n) mixing matrix."""
        blocks = list(self.blocks) if self.equal_sizes else self.blocks
        return torch.block_diag(*blocks)

    def mix(self, X: torch.Tensor) -> torch.Tensor:
        """One D2D round: W X (row i becomes sum_j w_ij X_j within i's subnet)."""
        if self.mixing == "gather":
            index, weight = self.neighbours, self.neighbour_weights
            out = X.index_select(0, index[:, 0]).mul_(weight[:, :1])
            for slot in range(1, index.shape[1]):
                out.addcmul_(X.index_select(0, index[:, slot]), weight[:, slot:slot + 1])
            return out
        if self.mixing == "bmm":
            S, m = self.S, int(self.m[0])
            return torch.bmm(self.blocks, X.reshape(S, m, -1)).reshape(X.shape)
        parts = [W_s @ X[self.offsets[s]:self.offsets[s + 1]] for s, W_s in enumerate(self.blocks)]
        return torch.cat(parts, dim=0)

    def subnet_sum(self, X: torch.Tensor) -> torch.Tensor:
        """(S, d): sum_{i in C_s} X_i."""
        if self.equal_sizes:
            return X.reshape(self.S, int(self.m[0]), -1).sum(dim=1)
        return self.membership @ X

    def subnet_mean(self, X: torch.Tensor) -> torch.Tensor:
        """(S, d): (1/m_s) sum_{i in C_s} X_i."""
        return self.subnet_sum(X) / self.m_t[:, None]

    def expand(self, V: torch.Tensor) -> torch.Tensor:
        """(n, d): row i is V[s(i)]."""
        return V.index_select(0, self.subnet_of)

    def sampled_mean(self, X: torch.Tensor, sampled: torch.Tensor | None) -> torch.Tensor:
        """(S, d): (1/h_s) sum_{j in C'_s} X_j over the sampled clients (all when ``sampled`` is
        None), as one weighted reduction. Every subnet must have a sampled client."""
        if sampled is None:
            weights = 1.0 / self.m_t[self.subnet_of]
        else:
            mask = sampled.to(X.dtype)
            weights = mask / self.subnet_sum(mask[:, None]).squeeze(1)[self.subnet_of]
        if self.equal_sizes:
            m = int(self.m[0])
            return torch.bmm(weights.reshape(self.S, 1, m), X.reshape(self.S, m, -1)).squeeze(1)
        return (self.membership * weights) @ X

    def aggregation_weights(self, aggregator: Literal["subnet_weighted", "paper"]) -> torch.Tensor:
        """omega (S,) of the server aggregate sum_s omega_s (1/h_s) sum_{j in C'_s} x_j.

        "subnet_weighted": omega_s = m_s / n, unbiased for (1/n) sum_i x_i (fix of flag F2);
        "paper": omega_s = 1/S, eq. (9) as printed (x~_g = 1/(S h_s) sum_s sum_j) [L163], biased
        when the m_s differ.
        """
        if aggregator == "subnet_weighted":
            return self.m_t / self.n
        if aggregator == "paper":
            return torch.full((self.S,), 1.0 / self.S, dtype=self.dtype)
        raise UnknownNameError(f"aggregator must be one of {AGGREGATORS}, got {aggregator!r}")

    def mask_of(self, sampled: torch.Tensor | None, h: np.ndarray) -> torch.Tensor:
        """The sampled mask as a bool tensor (n,): ``sampled`` itself, or all True when h = m
        (full participation), or all False when nobody is sampled (h = 0)."""
        if sampled is not None:
            return sampled
        return torch.full((self.n,), bool(np.array_equal(h, self.m)), dtype=torch.bool)

    def full_sampling(self) -> np.ndarray:
        """h_s = m_s for every subnet."""
        return self.m.copy()

    def validate_h(self, h: Count | Sequence[Count]) -> np.ndarray:
        """Per-subnet sample sizes as an int array (S,): an int applies to every subnet."""
        arr = real_array("h", h, ndim=(0, 1))
        arr = np.broadcast_to(arr, (self.S,)) if arr.ndim == 0 else arr
        require(arr.shape == (self.S,), f"h must have S={self.S} entries, got {arr.size}")
        arr = np.array([integer("h_s", v, low=1, high=int(self.m.max())) for v in arr], dtype=np.int64)
        require(bool(np.all((arr >= 1) & (arr <= self.m))),
                f"h_s must be in [1, m_s] with m = {self.m.tolist()}, got {arr.tolist()}")
        return arr
