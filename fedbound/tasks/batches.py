r"""The order of each client's minibatches (issue 35): which of its samples each local step uses, so
that a run can be replayed sample for sample against another framework.

By default (a task's ``batches=None``) the minibatches are drawn from the run's generator: at every
local step every client takes min(B, m_i) of its m_i samples uniformly without replacement
(:meth:`fedbound.tasks.clientdata.ClientData.minibatch`), in an order that depends on the other
participants' draws. An order given per client and round instead:

* :class:`SeededBatches` (``seed``): client i in round t (t = 0, 1, ...: the rounds completed
  before it) shuffles its samples once by the permutation pi_{i,t} that sorts the keys
  h(i, t, r), r = 0..m_i - 1 (a stable sort: ties keep r's order), and its local step s takes the
  samples at the positions (s B_i + j) mod m_i of pi_{i,t}, j < B_i = min(B, m_i): epochs over one
  shuffle per client and round, whoever else participates. The keys are SplitMix64's mixer
  (Steele, Lea and Flood, OOPSLA 2014) on unsigned 64-bit integers, wrapping:

      mix(z) = z3 ^ (z3 >> 31),  z1 = z + 0x9E3779B97F4A7C15,
               z2 = (z1 ^ (z1 >> 30)) * 0xBF58476D1CE4E5B9,  z3 = (z2 ^ (z2 >> 27)) * 0x94D049BB133111EB
      h(i, t, r) = mix(mix(mix(mix(seed) + i) + t) + r)

  (numpy's uint64 arithmetic wraps the same way: :meth:`SeededBatches.positions` is the reference
  any framework can run).
* :class:`GivenBatches` (``indices``): explicit positions, an integer array (R, n, K, B) --
  ``indices[t, i, s]`` the B sample positions of client i's local step s in round t -- or a
  function ``indices(t, clients, s) -> (k, B)`` for the clients (k,) of a round.

Positions index a client's own samples in the order the task holds them (0..m_i - 1). Both orders
give the positions of the clients of a local step (:meth:`BatchOrder.positions`): (k, B) positions
and (k, B) validity (False for the slots j >= B_i of a client with fewer than B samples, which
weigh 0). An order may also offer those of several consecutive steps side by side
(``steps_positions``, as both orders here do: one vectorized draw, or one slice of the array, for
a round's local steps); the tasks use it where it is offered and call ``positions`` step by step
otherwise (every step of a round with the same minibatch size).
"""
from __future__ import annotations

from typing import Callable, Protocol

import numpy as np
import torch

from fedbound import validate
from fedbound.argtypes import Count, NonNegativeInt, Seed
from fedbound.errors import InputTypeError, ValidationError, require

try:   # the compiled shuffles (fedbound/tasks/_kernels.c), built at install where a C compiler is
    import fedbound.tasks._kernels as _kernels
except ImportError:   # pragma: no cover - a machine without a C compiler: numpy's below
    _kernels = None

_GOLDEN, _M1, _M2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S27, _S30, _S31 = np.uint64(27), np.uint64(30), np.uint64(31)
_HELD_IDS = 1 << 20   # client ids whose first key SeededBatches holds


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's mixer of uint64 values, element-wise (module doc), wrapping modulo 2^64; a new
    array, mixed in place (a round's few keys cost numpy's calls, not their arithmetic)."""
    z = np.asarray(z, dtype=np.uint64) + _GOLDEN
    z ^= z >> _S30
    z *= _M1
    z ^= z >> _S27
    z *= _M2
    z ^= z >> _S31
    return z


class BatchOrder(Protocol):
    """Which samples each local step of each client uses (module doc)."""

    def positions(self, clients: torch.Tensor, sizes: torch.Tensor, round_index: NonNegativeInt,
                  step: NonNegativeInt, batch_size: Count) -> tuple[torch.Tensor, torch.Tensor]:
        """((k, B') int64 positions, (k, B') bool valid) for the clients (k,) with m_i = sizes (k,)
        at local step ``step`` of round ``round_index``."""
        ...


class SeededBatches:
    """A shuffle per client and round from ``seed`` (module doc)."""

    def __init__(self, seed: Seed):
        self.seed = validate.seed(seed, "batch_seed")
        self._key = _mix(np.array([self.seed], dtype=np.uint64))[0]
        self._cache: tuple | None = None   # (round, clients, sizes) -> permutations, for a round's steps
        self._id_keys = np.empty(0, dtype=np.uint64)   # mix(mix(seed) + i) of i = 0, 1, ...

    def permutations(self, clients: np.ndarray, sizes: np.ndarray, round_index: int) -> np.ndarray:
        """(k, max m_i) int64: row j the permutation pi_{i_j, t} of client i_j's samples (then the
        padding positions, in order)."""
        width = int(sizes.max()) if sizes.size else 0
        base = _mix(self._client_keys(clients) + np.uint64(round_index))
        keys = _mix(base[:, None] + np.arange(width, dtype=np.uint64)[None, :])
        if sizes.size and int(sizes.min()) < width:
            keys[np.arange(width)[None, :] >= sizes[:, None]] = np.iinfo(np.uint64).max
        return np.argsort(keys, axis=1, kind="stable")

    def _client_keys(self, clients: np.ndarray) -> np.ndarray:
        """mix(mix(seed) + i) of the clients i (k,): held for the ids up to the largest asked
        (doubling, up to 2^20 ids), since a round's first mix of its k clients cost a sixth of its
        shuffles (measured at k = 10)."""
        need = int(clients.max()) + 1 if clients.size else 0
        if need > _HELD_IDS:
            return _mix(self._key + clients.astype(np.uint64))
        if need > self._id_keys.size:
            ids = np.arange(min(max(need, 2 * self._id_keys.size), _HELD_IDS), dtype=np.uint64)
            self._id_keys = _mix(self._key + ids)
        return self._id_keys[clients]

    def positions(self, clients: torch.Tensor, sizes: torch.Tensor, round_index: NonNegativeInt,
                  step: NonNegativeInt, batch_size: Count) -> tuple[torch.Tensor, torch.Tensor]:
        return self.steps_positions(clients, sizes, round_index, step, 1, batch_size)

    def steps_positions(self, clients: torch.Tensor, sizes: torch.Tensor, round_index: NonNegativeInt,
                        step: NonNegativeInt, steps: Count,
                        batch_size: Count) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`positions` of the local steps step, ..., step + steps - 1 side by side:
        (k, steps B') each; compiled where built (:func:`compiled_positions`: the same integers;
        5 us against numpy's 33 for 10 clients of 15 samples and 5 steps, 23 against 66 for 100,
        measured alone), else :meth:`numpy_positions`."""
        ids, m = clients.cpu().numpy(), sizes.cpu().numpy()
        args = (ids, m, int(round_index), int(step), int(steps), int(batch_size))
        pos, valid = self.numpy_positions(*args) if _kernels is None else compiled_positions(self, *args)
        return torch.from_numpy(pos).to(clients.device), torch.from_numpy(valid).to(clients.device)

    def numpy_positions(self, ids: np.ndarray, m: np.ndarray, round_index: int, step: int, steps: int,
                        batch_size: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`steps_positions` in numpy (the reference the compiled kernel equals) of the
        clients ``ids`` with ``m`` samples: positions (k, steps B') int64, validity bool."""
        key = (round_index, batch_size, ids.tobytes(), m.tobytes())
        if self._cache is None or self._cache[0] != key:   # the steps of a round share the shuffle
            self._cache = (key, self._round(ids, m, round_index, batch_size))
        flat, B, slots, wrap, rows, valid, all_valid = self._cache[1]
        s = np.arange(step, step + steps)[None, :, None]
        at = (s * B[:, :, None] + slots[:, None, :]) % wrap[:, :, None]   # (s B_i + j) mod m_i
        at += rows[:, :, None]                              # in row i of the flat permutations
        pos = flat[at].reshape(len(ids), steps * slots.shape[1])   # (no -1: no client, no slot)
        valid = np.tile(valid, (1, steps))
        if not all_valid:
            pos[~valid] = 0
        return pos, valid

    def _round(self, ids: np.ndarray, m: np.ndarray, round_index: int, batch_size: int) -> tuple:
        """What the steps of a round share: the flat permutations, B_i (k, 1), the slots j (1, B'),
        max(m_i, 1) (k, 1), each row's offset in the flat permutations (k, 1), the validity
        (k, B') and whether all are valid."""
        perm = self.permutations(ids, m, round_index)
        B = np.minimum(batch_size, m)[:, None]
        slots = np.arange(min(batch_size, perm.shape[1]))[None, :]
        valid = slots < B
        rows = (np.arange(perm.shape[0]) * perm.shape[1])[:, None]
        return perm.reshape(-1), B, slots, np.maximum(m, 1)[:, None], rows, valid, bool(valid.all())

    def __repr__(self) -> str:
        return f"SeededBatches(seed={self.seed})"


def compiled_positions(order: SeededBatches, ids: np.ndarray, m: np.ndarray, round_index: int, step: int,
                       steps: int, batch_size: int) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`SeededBatches.steps_positions` (positions (k, steps B') int64, validity bool) of the
    clients ``ids`` with ``m`` samples, by the compiled kernel (``fedbound/tasks/_kernels.c``,
    seeded_positions: the module doc's formula per client, its keys sorted; the same integers as
    the numpy code, ``tests/tasks/test_batches.py``)."""
    slots = min(batch_size, int(m.max()) if m.size else 0)
    pos = np.empty((ids.size, steps * slots), dtype=np.int64)
    valid = np.empty(pos.shape, dtype=np.bool_)
    _kernels.seeded_positions(int(order._key), np.ascontiguousarray(ids, dtype=np.int64),
                              np.ascontiguousarray(m, dtype=np.int64), round_index, step, steps,
                              batch_size, pos, valid)
    return pos, valid


class GivenBatches:
    """Explicit positions (module doc): an integer array (R, n, K, B) or a function
    ``indices(round, clients, step) -> (k, B)``."""

    def __init__(self, indices: np.ndarray | Callable):
        if callable(indices):
            self.array, self.function = None, indices
            return
        try:
            arr = np.asarray(indices)
        except (TypeError, ValueError):   # ragged nested lists: numpy refuses to build the array
            arr = np.empty(0)
        require(arr.ndim == 4 and arr.size > 0 and arr.dtype.kind in "iu",
                f"batch indices must be an integer array (rounds, n, steps, B) or a function, got "
                f"{validate.show(indices)}")
        require(int(arr.min()) >= 0, f"batch indices must be >= 0, got {int(arr.min())}")
        self.array, self.function = arr.astype(np.int64), None

    def positions(self, clients: torch.Tensor, sizes: torch.Tensor, round_index: NonNegativeInt,
                  step: NonNegativeInt, batch_size: Count) -> tuple[torch.Tensor, torch.Tensor]:
        return self.steps_positions(clients, sizes, round_index, step, 1, batch_size)

    def steps_positions(self, clients: torch.Tensor, sizes: torch.Tensor, round_index: NonNegativeInt,
                        step: NonNegativeInt, steps: Count,
                        batch_size: Count) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`positions` of the local steps step, ..., step + steps - 1 side by side (k,
        steps B): one slice of the array, or the function called step by step (the same B at
        every step)."""
        ids = clients.cpu().numpy()
        step, steps = int(step), int(steps)
        if self.array is not None:
            R, n, K, B = self.array.shape
            require(round_index < R, f"the given batches cover {R} rounds; round {round_index} has none")
            require(step + steps <= K, f"the given batches cover {K} local steps; step {step + steps - 1} has none")
            require(ids.size == 0 or int(ids.max()) < n,
                    f"the given batches cover {n} clients; client {int(ids.max()) if ids.size else 0} has none")
            pos = self.array[round_index, ids, step:step + steps].reshape(ids.size, steps * B)
        else:
            called = [self._called(round_index, ids, s) for s in range(step, step + steps)]
            B = called[0].shape[1]
            for s, got in enumerate(called):
                require(got.shape[1] == B, f"the batch function must return the same B at every step: "
                                           f"{B} at step {step}, {got.shape[1]} at step {step + s}")
            pos = np.concatenate(called, axis=1)
        m = sizes.cpu().numpy()
        bad = (pos < 0) | (pos >= m[:, None])
        if bad.any():
            j, col = (int(v) for v in np.argwhere(bad)[0])
            at = slice(col - col % B, col - col % B + B)
            raise ValidationError(f"batch positions of client {int(ids[j])} must be in [0, {int(m[j]) - 1}] "
                                  f"(its samples), got {pos[j, at].tolist()[:8]} at round {round_index}, "
                                  f"step {step + col // B}")
        pos = torch.from_numpy(pos.astype(np.int64)).to(clients.device)
        return pos, torch.ones(pos.shape, dtype=torch.bool, device=clients.device)

    def _called(self, round_index, ids: np.ndarray, step: int) -> np.ndarray:
        """The function's positions (k, B) of the clients ``ids`` at ``step``, checked for shape."""
        try:
            pos = np.asarray(self.function(int(round_index), ids.copy(), step))
        except (TypeError, ValueError) as err:
            raise ValidationError(f"the batch function failed at round {round_index}, step {step}: "
                                  f"{' '.join(str(err).split())[:120]}") from None
        if pos.dtype.kind not in "iu" or pos.ndim != 2 or pos.shape[0] != ids.size:
            raise InputTypeError(f"the batch function must return ({ids.size}, B) integers at round "
                                 f"{round_index}, step {step}, got {validate.show(pos)}")
        return pos

    def __repr__(self) -> str:
        shape = "function" if self.array is None else f"array {self.array.shape}"
        return f"GivenBatches({shape})"


def batch_order(value: object) -> BatchOrder | None:
    """A task's ``batches``: None (drawn from the run's generator), a :class:`BatchOrder`, an
    integer (:class:`SeededBatches` of that seed), or explicit indices (:class:`GivenBatches`)."""
    if value is None or callable(getattr(value, "positions", None)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return SeededBatches(int(value))
    if callable(value) or isinstance(value, (np.ndarray, list, tuple)):
        return GivenBatches(value)
    raise InputTypeError(f"batches must be None, a seed, an index array (rounds, n, steps, B), a "
                         f"function or a BatchOrder, got {validate.show(value)}")


__all__ = ["BatchOrder", "SeededBatches", "GivenBatches", "batch_order"]
