r"""Graph topologies and their doubly stochastic gossip matrices.

* :func:`metropolis_weights`: the Metropolis-Hastings rule SD-GT uses for every subnet (seed 003,
  [L91], [L480], ref. [43]): :math:`w_{ij} = 1/(1 + \max(d_i, d_j))` on edges,
  :math:`w_{ii} = 1 - \sum_{j \ne i} w_{ij}`.  It is symmetric and doubly stochastic for any
  undirected graph, and its diagonal is positive, so a connected graph always mixes
  (:math:`\|W - J\|_2 < 1`).
* :func:`ring_weights`: AFGA's ring, self weight 1/3 and (1 - 1/3)/2 = 1/3 on each neighbour
  (seed 000, experiments L598, L601; notes afga.md §6, needed to reproduce rho = 0.995 and 0.873).
* :func:`topology_weights`: one entry point by name for ``ring``, ``complete``, ``chain``,
  ``star``, ``grid`` and ``erdos_renyi`` (all but ``ring`` use Metropolis-Hastings weights).
"""
from __future__ import annotations

import inspect
import math

import numpy as np

from fedbound import resources, validate
from fedbound.argtypes import Count, Fraction, Probability, Seed
from fedbound.errors import UnknownNameError, ValidationError, require
from fedbound.network.mixing import as_square_matrix, is_connected


def check_size(m: int) -> int:
    """``m`` as an int >= 1 whose (m, m) gossip matrix fits the memory budget, or a FedboundError."""
    m = validate.integer("number of clients m", m, low=1)
    resources.require_memory(f"a gossip matrix of m = {m} clients", 4 * m * m)
    return m


def check_sizes(S: int, m: int | list[int]) -> np.ndarray:
    """Subnet sizes as an int64 (S,) array from an int (equal sizes) or a list of S ints >= 1,
    refused up front when the S gossip matrices would not fit the memory budget."""
    S = validate.integer("number of subnets S", S, low=1)
    if not isinstance(m, (list, tuple, np.ndarray)) or (isinstance(m, np.ndarray) and m.ndim == 0):
        m = validate.integer("subnet size m", m, low=1)
        resources.require_memory(f"{S} subnets of {m} clients (gossip matrices)", 4 * S * m * m)
        return np.full(S, m, dtype=np.int64)
    sizes = validate.real_array("subnet sizes m", m, ndim=1, low=1)
    require(sizes.size == S, f"m must be an int or a list of S = {S} sizes, got {sizes.size} sizes")
    sizes = [validate.integer(f"subnet size m[{s}]", k, low=1) for s, k in enumerate(sizes)]
    resources.require_memory(f"{S} subnets of up to {max(sizes)} clients (gossip matrices)",
                             4 * sum(k * k for k in sizes))
    return np.array(sizes, dtype=np.int64)


def metropolis_weights(adjacency: np.ndarray) -> np.ndarray:
    r"""Metropolis-Hastings weights of an undirected graph (SD-GT seed 003, [L480], ref. [43]).

    :math:`w_{ij} = 1/(1 + \max(d_i, d_j))` for each edge (i, j), :math:`w_{ii} = 1 - \sum_{j\ne i}
    w_{ij}`, where :math:`d_i` counts the neighbours of i.  Edges are the nonzero off-diagonal entries
    of ``adjacency`` (the diagonal is ignored); the pattern must be symmetric, with at least one edge
    when there are two or more nodes.  Connectivity is not checked here (see
    :func:`~fedbound.network.mixing.validate_mixing_matrix`).
    """
    raw = as_square_matrix(adjacency, "adjacency")
    if np.any(raw < 0):
        i, j = np.argwhere(raw < 0)[0]
        raise ValidationError(f"adjacency entries must be >= 0 (nonzero = edge); "
                              f"adjacency[{i}, {j}] = {raw[i, j]:g}")
    A = raw != 0
    np.fill_diagonal(A, False)
    if not np.array_equal(A, A.T):
        i, j = np.argwhere(A != A.T)[0]
        raise ValidationError(f"adjacency must be symmetric (undirected graph); "
                              f"edge ({i}, {j}) has no reverse edge ({j}, {i})")
    if len(A) > 1 and not A.any():
        raise ValidationError(f"adjacency has no edges between its {len(A)} nodes: Metropolis weights "
                              f"would be the identity (no mixing); give a graph with edges")
    degree = A.sum(axis=1)
    W = np.where(A, 1.0 / (1.0 + np.maximum.outer(degree, degree)), 0.0)
    np.fill_diagonal(W, 1.0 - W.sum(axis=1))
    return W


def ring_weights(m: int, self_weight: Probability = 1 / 3) -> np.ndarray:
    """AFGA's ring gossip matrix: ``self_weight`` on the diagonal, ``(1 - self_weight)/2`` on each
    of the two ring neighbours (seed 000; notes afga.md §6 and §8 item 6).

    m = 1 gives [[1]]; m = 2 gives the other client weight ``1 - self_weight`` (its two ring
    neighbours coincide).  Eigenvalues: self_weight + (1 - self_weight) cos(2 pi k / m), so
    ``spectral_norm(ring_weights(m))`` is 0 for m = 3, 0.8727 for m = 10 and 0.9947 for m = 50.
    """
    m = check_size(m)
    self_weight = validate.number("ring self_weight", self_weight, low=0.0,
                                  high=1.0, high_open=m > 1)
    index = np.arange(m)
    W = np.zeros((m, m))
    W[index, index] = self_weight
    neighbour = (1.0 - self_weight) / 2.0
    W[index, (index + 1) % m] += neighbour
    W[index, (index - 1) % m] += neighbour
    return W


def ring_adjacency(m: Count) -> np.ndarray:
    """Cycle 0-1-...-(m-1)-0 (a single edge for m = 2, no edge for m = 1)."""
    m = check_size(m)
    index = np.arange(m)
    A = np.zeros((m, m), dtype=bool)
    A[index, (index + 1) % m] = A[(index + 1) % m, index] = True
    np.fill_diagonal(A, False)
    return A


def complete_adjacency(m: Count) -> np.ndarray:
    """Every pair linked; its Metropolis weights are exactly J = 11^T/m."""
    m = check_size(m)
    return ~np.eye(m, dtype=bool)


def chain_adjacency(m: Count) -> np.ndarray:
    """Path 0-1-...-(m-1)."""
    m = check_size(m)
    A = np.zeros((m, m), dtype=bool)
    index = np.arange(m - 1)
    A[index, index + 1] = A[index + 1, index] = True
    return A


def star_adjacency(m: Count) -> np.ndarray:
    """Client 0 is the hub, linked to every other client."""
    m = check_size(m)
    A = np.zeros((m, m), dtype=bool)
    A[0, 1:] = A[1:, 0] = True
    return A


def grid_adjacency(m: Count, cols: Count | None = None) -> np.ndarray:
    """2-D grid: client i sits at (i // cols, i % cols), linked to its right and lower neighbours.

    ``cols`` defaults to ceil(sqrt(m)) (as the SD-GT official code, ``get_grid_graph``); when m is
    not a multiple of ``cols`` the last row is partial, which keeps the grid connected.
    """
    m = check_size(m)
    cols = math.ceil(math.sqrt(m)) if cols is None else validate.integer("grid cols", cols, low=1, high=m)
    index = np.arange(m)
    A = np.zeros((m, m), dtype=bool)
    right = index[(index % cols != cols - 1) & (index + 1 < m)]
    A[right, right + 1] = A[right + 1, right] = True
    down = index[index + cols < m]
    A[down, down + cols] = A[down + cols, down] = True
    return A


def erdos_renyi_adjacency(m: Count, prob: Fraction | None, rng: np.random.Generator,
                          max_tries: Count = 100) -> np.ndarray:
    """G(m, prob): each pair linked independently with probability ``prob``, redrawn until connected.

    Raises :class:`ValidationError` if ``max_tries`` draws are all disconnected.
    """
    require(prob is not None, "erdos_renyi prob must be in (0, 1], got None (give prob=...)")
    prob = validate.number("erdos_renyi prob", prob, low=0.0, high=1.0, low_open=True)
    max_tries = validate.integer("erdos_renyi max_tries", max_tries, low=1, high=10 ** 6)
    m = check_size(m)
    upper = np.triu(np.ones((m, m), dtype=bool), k=1)
    for _ in range(max_tries):
        A = (rng.random((m, m)) < prob) & upper
        A = A | A.T
        if is_connected(A):
            return A
    raise ValidationError(f"erdos_renyi(m={m}, prob={prob}) was disconnected in all {max_tries} "
                          f"draws; use prob above about ln(m)/m = {math.log(max(m, 2)) / m:.3g}")


def _ring(m, rng, self_weight=1 / 3):
    return ring_weights(m, self_weight)


def _complete(m, rng):
    return metropolis_weights(complete_adjacency(m))


def _chain(m, rng):
    return metropolis_weights(chain_adjacency(m))


def _star(m, rng):
    return metropolis_weights(star_adjacency(m))


def _grid(m, rng, cols=None):
    return metropolis_weights(grid_adjacency(m, cols))


def _erdos_renyi(m, rng, prob=None, max_tries=100):
    return metropolis_weights(erdos_renyi_adjacency(m, prob, rng, max_tries))


_BUILDERS = {"ring": _ring, "complete": _complete, "chain": _chain, "star": _star,
             "grid": _grid, "erdos_renyi": _erdos_renyi}

#: names accepted by :func:`topology_weights`
TOPOLOGIES = tuple(_BUILDERS)


def _builder(name: str):
    if not isinstance(name, str) or name not in _BUILDERS:
        raise UnknownNameError(f"unknown topology {name!r}; valid names: {', '.join(TOPOLOGIES)}")
    return _BUILDERS[name]


def topology_options(name: str) -> tuple[str, ...]:
    """Keyword options of a topology, e.g. ``("self_weight",)`` for ``"ring"``."""
    return tuple(inspect.signature(_builder(name)).parameters)[2:]


def topology_weights(name: str, m: int, *, seed: Seed | np.random.Generator | None = None,
                     **options: float | None) -> np.ndarray:
    """Doubly stochastic symmetric (m, m) gossip matrix of a named topology.

    ``name`` is one of :data:`TOPOLOGIES`; ``options`` are the topology's own keywords
    (:func:`topology_options`): ``self_weight`` (ring, default 1/3), ``cols`` (grid),
    ``prob`` (erdos_renyi, required, in (0, 1]) and ``max_tries`` (erdos_renyi).  ``seed`` (int,
    ``numpy.random.Generator`` or None) drives the random topologies only.
    """
    build = _builder(name)
    m = check_size(m)
    unknown = sorted(set(options) - set(topology_options(name)))
    if unknown:
        raise ValidationError(f"topology {name!r} has no option {unknown[0]!r}; "
                              f"valid options: {', '.join(topology_options(name)) or 'none'}")
    return build(m, validate.rng(seed), **options)
