r"""Per-client state stored only for the clients that have one (issue 24, "memory per client").

Stateful federated methods keep a d-vector per client: SCAFFOLD's control variates c_i, FedDyn's
lagged gradients g_i, FedNova's cross-client VR stored d_j. Held as a dense (n, d) tensor, the state
costs n d floats even for clients that never participated, and a round that rewrites its k
participants' rows out of place copies all n d of them. The issue asks for state "stored compactly
and only for clients that have one" and a round whose cost is linear in k, not in n.
:class:`ClientRows` is that store: the rows of the clients that have one, every other client
reading as zeros (the strategies' initial state), immutable as the rest of an algorithm's state
(``step`` stays a pure function of the state; the old store is unchanged by an update).

Layout: one row buffer (capacity, d) whose row 0 is zeros, and a map ``slot`` (n,) int64 from a
client to its row (0: no row). An update appends its k rows after the rows the store uses and
points the participants' slots at them; the rows they had before are left in place (dead). Rows
below a store's end are never written again, so older stores sharing the buffer read what they
read before. Only one store may append at a given end (the first that claims it: stepping one state
twice makes the second child copy); when the buffer is full the live rows are copied into a new
buffer with room for a quarter more rows (when that holds a round's k rows), so the dead rows are
dropped. A dict of per-client row tensors would be the plainer store, but each torch tensor costs
about 560 bytes besides its data (measured: 1376 bytes per 800-byte row at d = 100 in float64) and
the dict itself would be copied, O(held), on every update.

Costs (k: clients of the call, h: clients holding a row):

* memory: capacity d numbers, capacity <= 1 + 1.25 h rows (the rows held, the dead ones and the
  spare), and 8 bytes of ``slot`` per client;
* :meth:`gather`: O(k d), one index_select of the rows;
* :meth:`with_rows`: O(k d + n): k rows written and the (n,) int64 map copied; when the buffer is
  full (or another store appended at this one's end), O(h d) for the copy, which a chain of updates
  of k rows pays once every about max(1, h / (4 k)) updates (amortized O(k d));
* :meth:`dense`: O(n d), for tests and inspection; :attr:`last`: a view, O(1).

Example::

    >>> import torch
    >>> rows = ClientRows.zeros(1000, 3, torch.float64)
    >>> rows = rows.with_rows(torch.tensor([7, 2]), torch.ones(2, 3, dtype=torch.float64))
    >>> rows.held, rows.gather(torch.tensor([2, 5])).tolist()
    (2, [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
"""
from __future__ import annotations

from typing import Annotated

import torch

from fedbound.argtypes import NonFinite, NonNegativeInt
from fedbound.errors import require

#: rows of per-client state: NaN and infinities are let through (a diverged run's state holds them
#: and :func:`fedbound.algorithms.base.check_finite` reports them, naming the round)
Rows = Annotated[torch.Tensor, NonFinite()]

_INTEGER = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


class _Buffer:
    """Row storage shared by the stores built from one another: ``data`` (capacity, d), row 0
    zeros; ``claims``: end row -> the token of the store that appended there (one per end, taken
    by dict.setdefault, atomic also across threads)."""

    __slots__ = ("data", "claims")

    def __init__(self, data: torch.Tensor):
        self.data = data
        self.claims: dict[int, object] = {}


class ClientRows:
    """Per-client d-vectors, held only for the clients that have one, every other client reading
    as zeros (module docstring: layout and costs). Immutable: :meth:`with_rows` returns a new store.
    Built by :meth:`zeros`; ``n``, ``d``, ``held`` (clients with a row), ``last`` (the rows written
    by the update that built this store), ``nbytes``."""

    def __init__(self, buffer: _Buffer, used: NonNegativeInt, slot: torch.Tensor, held: NonNegativeInt,
                 fresh: NonNegativeInt):
        """The store of ``slot`` (n,) over the rows [0, ``used``) of ``buffer``, ``held`` of them
        referenced, the last ``fresh`` written by the update that built it (use :meth:`zeros` and
        :meth:`with_rows`)."""
        self._buffer, self._used, self._slot, self._fresh = buffer, used, slot, fresh
        self.n, self.d = int(slot.shape[0]), int(buffer.data.shape[1])
        self.held = held

    @classmethod
    def zeros(cls, n: NonNegativeInt, d: NonNegativeInt, dtype: torch.dtype = torch.float64,
              device: torch.device | str | None = None) -> ClientRows:
        """The store of n clients without rows (every client reads as zeros (d,))."""
        data = torch.zeros(1, d, dtype=dtype, device=device)
        return cls(_Buffer(data), 1, torch.zeros(n, dtype=torch.int64, device=data.device), 0, 0)

    @property
    def dtype(self) -> torch.dtype:
        return self._buffer.data.dtype

    @property
    def device(self) -> torch.device:
        return self._buffer.data.device

    @property
    def last(self) -> torch.Tensor:
        """(k, d): the rows written by the update that built this store (none for :meth:`zeros`):
        what :func:`fedbound.algorithms.base.check_finite` checks, in O(k d)."""
        return self._buffer.data[self._used - self._fresh:self._used]

    @property
    def nbytes(self) -> int:
        """Bytes of the row buffer (shared with the stores built from or into this one) and of the
        client map."""
        data = self._buffer.data
        return data.numel() * data.element_size() + self._slot.numel() * self._slot.element_size()

    def _ids(self, clients: torch.Tensor) -> torch.Tensor:
        require(clients.dtype in _INTEGER and clients.dim() == 1,
                f"clients must be a 1-D integer tensor, got {clients.dtype} of shape {tuple(clients.shape)}")
        low, high = torch.aminmax(clients) if clients.numel() else (0, -1)
        require(int(low) >= 0 and int(high) < self.n, f"clients must be in [0, {self.n})")
        return clients.to(device=self._slot.device, dtype=torch.int64)

    def gather(self, clients: torch.Tensor) -> torch.Tensor:
        """(k, d): the rows of ``clients`` (k,), zeros for those without one; a new tensor."""
        return self._buffer.data.index_select(0, self._slot.index_select(0, self._ids(clients)))

    def dense(self) -> torch.Tensor:
        """(n, d): every client's row (zeros for those without one), O(n d)."""
        return self._buffer.data.index_select(0, self._slot)

    def with_rows(self, clients: torch.Tensor, rows: Rows) -> ClientRows:
        """A new store in which the distinct ``clients`` (k,) have the rows ``rows`` (k, d) and the
        other clients keep theirs; this store is unchanged."""
        clients = self._ids(clients)
        k = int(clients.shape[0])
        require(tuple(rows.shape) == (k, self.d),
                f"rows must have shape ({k}, {self.d}), got {tuple(rows.shape)}")
        require(rows.dtype == self.dtype, f"rows must be {self.dtype}, got {rows.dtype}")
        require(torch.unique(clients).numel() == k, "clients must be distinct")
        if not k:
            return ClientRows(self._buffer, self._used, self._slot, self.held, 0)
        buffer, end = self._buffer, self._used + k
        claim = object()
        if end <= buffer.data.shape[0] and buffer.claims.setdefault(self._used, claim) is claim:
            buffer.data[self._used:end] = rows    # after every row this store reads
            had = int(torch.count_nonzero(self._slot.index_select(0, clients)))
            new = torch.arange(self._used, end, device=clients.device)
            return ClientRows(buffer, end, self._slot.index_copy(0, clients, new), self.held - had + k, k)
        # a new buffer: the rows kept, the new rows, and room for a quarter more when that holds k
        keep = self._slot.index_fill(0, clients, 0)
        kept = torch.nonzero(keep).squeeze(1)
        live = int(kept.shape[0])
        spare = (live + k) // 4
        data = buffer.data.new_empty(1 + live + k + (spare if spare >= k else 0), self.d)
        data[0] = 0
        data[1:1 + live] = buffer.data.index_select(0, keep.index_select(0, kept))
        data[1 + live:1 + live + k] = rows
        slot = torch.zeros_like(self._slot).index_copy(0, kept, torch.arange(1, 1 + live, device=kept.device))
        slot = slot.index_copy(0, clients, torch.arange(1 + live, 1 + live + k, device=clients.device))
        return ClientRows(_Buffer(data), 1 + live + k, slot, live + k, k)

    def __repr__(self) -> str:
        return f"ClientRows(n={self.n}, d={self.d}, held={self.held}, dtype={self.dtype})"


__all__ = ["ClientRows"]
