r"""Per-subnet client sampling (SD-GT seed 003, Sec. III [L158-L160], Theorem 1 [L242]).

The server samples h_s of the m_s clients of subnet s each global round.  The analysis ([L722],
[L745]) needs each client sampled with probability h_s/m_s; the paper never names the
distribution (notes sdgt.md §1.3 flag).  :func:`sample_mask` draws uniformly without replacement,
independently across subnets and calls.

* :math:`\beta_s = (m_s - h_s)/m_s`, the fraction NOT sampled [L242].
* :math:`p = \min_s (1 - \beta_s^2) \in (0, 1]` [L242]; full participation is beta = 0, p = 1.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fedbound.errors import ValidationError, require

if TYPE_CHECKING:
    import torch


def check_h(h, m) -> np.ndarray:
    """``h`` (int or (S,) ints) broadcast against the subnet sizes ``m``; each 1 <= h_s <= m_s."""
    m = np.atleast_1d(np.asarray(m))
    require(m.ndim == 1 and np.issubdtype(m.dtype, np.integer) and bool(np.all(m >= 1)),
            f"subnet sizes m must be integers >= 1, got {m.tolist()}")
    h_arr = np.asarray(h)
    require(np.issubdtype(h_arr.dtype, np.integer) and h_arr.ndim <= 1,
            f"h must be an integer or a list of integers, got {h!r}")
    require(h_arr.ndim == 0 or h_arr.shape == m.shape,
            f"h must be an int or have one entry per subnet (S = {m.size}), got {h_arr.size} entries")
    h_arr = np.broadcast_to(h_arr, m.shape).astype(np.int64)
    bad = np.flatnonzero((h_arr < 1) | (h_arr > m))
    if bad.size:
        s = int(bad[0])
        raise ValidationError(f"h[{s}] = {h_arr[s]} must be in [1, m_{s} = {m[s]}]")
    return h_arr


def beta_from_h(h, m) -> np.ndarray:
    r""":math:`\beta_s = (m_s - h_s)/m_s` [L242], float64 (S,)."""
    h = check_h(h, m)
    m = np.atleast_1d(np.asarray(m, dtype=np.float64))
    return (m - h) / m


def participation(h, m) -> np.ndarray:
    r""":math:`p = \min_s (1 - \beta_s^2) = \min_s h_s (2 m_s - h_s)/m_s^2` [L242] for integer h of
    shape (..., S) and sizes m (S,), unvalidated (the controller's integer search calls it on many h
    at once). Computed from the exact integer ratio, so that every caller gets the same float."""
    h = np.asarray(h, dtype=np.int64)
    m = np.asarray(m, dtype=np.int64)
    return np.min((h * (2 * m - h)) / (m * m), axis=-1)


def p_from_h(h, m) -> float:
    r""":math:`p = \min_s (1 - \beta_s^2)` [L242] for valid sample counts (1 <= h_s <= m_s)."""
    return float(participation(check_h(h, m), m))


def sample_mask(network, h, generator: torch.Generator) -> torch.Tensor:
    """Bool (n,) mask with exactly h_s sampled clients in subnet s, uniform without replacement.

    ``network`` is a :class:`~fedbound.network.Network` or anything with its ``n``, ``m``,
    ``offsets`` and ``subnet_of`` (e.g. the algorithms' StackedNetwork).

    Vectorized: one uniform key per client, offset by its subnet index, is sorted once; the h_s
    smallest keys of each subnet's contiguous block are kept.  Each call draws fresh keys from
    ``generator``, so calls are independent and the same generator state gives the same mask.
    """
    import torch  # here, not at module level: the network CLI must not pay for importing torch
    h = torch.as_tensor(check_h(h, network.m))
    # copies (the Network's array is read-only); a torch view of the network works as well
    subnet_of = torch.from_numpy(np.asarray(network.subnet_of).astype(np.int64))
    offsets = torch.from_numpy(network.offsets.astype(np.int64))
    keys = torch.rand(network.n, generator=generator, dtype=torch.float64) + subnet_of
    order = torch.argsort(keys)  # subnets stay contiguous: subnet s occupies offsets[s]:offsets[s+1]
    rank_in_subnet = torch.arange(network.n) - offsets[subnet_of]
    mask = torch.empty(network.n, dtype=torch.bool)
    mask[order] = rank_in_subnet < h[subnet_of]
    return mask
