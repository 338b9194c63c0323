r"""A fog network: S disjoint subnets, each with its own D2D gossip matrix (SD-GT seed 003, [L87-L99]).

Clients are numbered so that subnet s holds the contiguous block ``offsets[s]:offsets[s+1]``, and
the network's gossip matrix is block diagonal, :math:`W = \mathrm{blkdiag}(W_1, \dots, W_S)` (3)
[L95], because subnets do not talk directly.  Per subnet: SD-GT's mixing rate
:math:`\rho_s = 1 - \|W_s - J_s\|_2^2` and :math:`q = \min_s \rho_s` [L242], plus AFGA's
:math:`\|W_s - J_s\|_2` and the spectral gap (see :mod:`fedbound.network.mixing`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from fedbound import resources, validate
from fedbound.argtypes import Count, Positive, Seed
from fedbound.errors import ValidationError, require
from fedbound.network.mixing import as_square_matrix, mixing_summary, validate_mixing_matrix
from fedbound.network.rgg import DEFAULT_RADIUS_RANGE, REGION_SIDE, sample_geometric_network
from fedbound.network.topology import (check_sizes, metropolis_weights, topology_options,
                                       topology_weights)


#: rho_s at or below this is treated as 0 (round-off of ||W_s - J_s||_2 = 1 is ~1e-16)
RHO_FLOOR = 1e-12


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.array(array, dtype=array.dtype, copy=True)
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class Network:
    """S subnets with doubly stochastic, symmetric, connected gossip matrices W_s (immutable).

    Attributes: ``blocks`` (tuple of read-only (m_s, m_s) float64 arrays), ``S``, ``n``,
    ``m`` (int64 (S,)), ``offsets`` ((S+1,), subnet s = clients offsets[s]:offsets[s+1]),
    ``subnet_of`` ((n,)), ``coordinates`` ((n, 2) or None), and the per-subnet mixing measures
    ``rho`` (SD-GT tight rho_s), ``spectral_norms`` (AFGA rho), ``spectral_gaps``, with q = min rho.

    Every block is validated (:func:`~fedbound.network.mixing.validate_mixing_matrix`), and each
    rho_s must be > 0 (Assumption 2 needs rho_s in (0, 1] [L223-L226]): a connected W_s with an
    eigenvalue -1 (e.g. a ring with self weight 0 and even m) does not mix and is rejected.
    """

    blocks: tuple[np.ndarray, ...]
    coordinates: np.ndarray | None = None
    S: int = field(init=False)
    n: int = field(init=False)
    m: np.ndarray = field(init=False)
    offsets: np.ndarray = field(init=False)
    subnet_of: np.ndarray = field(init=False)
    rho: np.ndarray = field(init=False)
    spectral_norms: np.ndarray = field(init=False)
    spectral_gaps: np.ndarray = field(init=False)

    def __post_init__(self):
        require(isinstance(self.blocks, (list, tuple)) and len(self.blocks) >= 1,
                "blocks must be a list of at least one gossip matrix W_s, got "
                + (f"{len(self.blocks)}" if isinstance(self.blocks, (list, tuple)) else
                   type(self.blocks).__name__))
        blocks = []
        for s, W in enumerate(self.blocks):
            W = as_square_matrix(W, f"W_{s}")
            try:
                validate_mixing_matrix(W)
            except ValidationError as exc:
                raise ValidationError(f"subnet {s}: {exc}") from None
            blocks.append(_frozen(W))
        m = np.array([W.shape[0] for W in blocks], dtype=np.int64)
        measures = [mixing_summary(W) for W in blocks]
        norms = np.array([d["spectral_norm"] for d in measures])
        set_ = object.__setattr__
        set_(self, "blocks", tuple(blocks))
        set_(self, "S", len(blocks))
        set_(self, "m", _frozen(m))
        set_(self, "n", int(m.sum()))
        set_(self, "offsets", _frozen(np.concatenate([[0], np.cumsum(m)])))
        set_(self, "subnet_of", _frozen(np.repeat(np.arange(len(blocks)), m)))
        set_(self, "spectral_norms", _frozen(norms))
        set_(self, "rho", _frozen(np.array([d["rho_tight"] for d in measures])))
        set_(self, "spectral_gaps", _frozen(np.array([d["spectral_gap"] for d in measures])))
        bad = np.flatnonzero(self.rho <= RHO_FLOOR)
        if bad.size:
            s = int(bad[0])
            raise ValidationError(f"subnet {s}: rho_s = 1 - ||W_s - J_s||_2^2 must be in (0, 1] "
                                  f"(> {RHO_FLOOR:g}), got "
                                  f"{self.rho[s]:.3g} (||W_s - J_s||_2 = {norms[s]:.6g}; "
                                  f"W_s does not mix)")
        if self.coordinates is not None:
            coordinates = validate.real_array("coordinates", self.coordinates, shape=(self.n, 2))
            set_(self, "coordinates", _frozen(coordinates))

    def __repr__(self) -> str:
        return f"Network(S={self.S}, n={self.n}, m={self.m.tolist()}, q={self.q:.4g})"

    # ---- structure -------------------------------------------------------------------------
    @property
    def q(self) -> float:
        """SD-GT's q = min_s rho_s [L242]."""
        return float(self.rho.min())

    def members(self, s: int) -> np.ndarray:
        """Client indices of subnet s (the contiguous block offsets[s]:offsets[s+1])."""
        require(0 <= s < self.S, f"subnet index s must be in [0, {self.S - 1}], got {s}")
        return np.arange(self.offsets[s], self.offsets[s + 1])

    @property
    def W(self) -> np.ndarray:
        """Block-diagonal (n, n) float64 gossip matrix blkdiag(W_1, ..., W_S) (3) [L95]; a fresh copy."""
        resources.require_memory(f"the ({self.n}, {self.n}) gossip matrix W", self.n * self.n)
        from scipy.linalg import block_diag  # scipy: 0.3 s of start-up, only when W is built

        return block_diag(*self.blocks)

    # ---- constructors ----------------------------------------------------------------------
    @classmethod
    def from_blocks(cls, blocks: list[np.ndarray], coordinates: np.ndarray | None = None) -> "Network":
        """Network from a list of S gossip matrices W_s (validated)."""
        return cls(tuple(blocks) if isinstance(blocks, (list, tuple)) else blocks, coordinates)

    @classmethod
    def from_topology(cls, name: str, S: int, m: int | list[int],
                      seed: Seed | np.random.Generator | None = None,
                      **options: float | None) -> "Network":
        """S subnets of a named topology (:func:`~fedbound.network.topology.topology_weights`);
        ``m`` an int (equal sizes) or a list of S sizes; random topologies use one generator seeded
        by ``seed`` across subnets, so the subnets are independent draws."""
        rng = validate.rng(seed)
        sizes = check_sizes(S, m)
        return cls(tuple(topology_weights(name, m_s, seed=rng, **options) for m_s in sizes))

    @classmethod
    def random_geometric(cls, S: int = 3, m: int | list[int] = 10,
                         radius_range: tuple[Positive, Positive] = DEFAULT_RADIUS_RANGE,
                         seed: Seed | np.random.Generator | None = 0, *,
                         region_side: Positive = REGION_SIDE, balanced: bool = True,
                         max_tries: Count = 1000) -> "Network":
        """SD-GT's random geometric fog network (seed 003, [L480]) with Metropolis-Hastings W_s.

        Defaults are the paper's: S = 3 subnets of m = 10, radii uniform in [0.5, 3.5].  Choices
        the paper leaves open (region side 4, link iff dist <= min(r_i, r_j), balanced k-means,
        redraw until connected) are documented in :mod:`fedbound.network.rgg`.
        """
        draw = sample_geometric_network(S, m, radius_range, seed, region_side=region_side,
                                        balanced=balanced, max_tries=max_tries)
        return cls(tuple(metropolis_weights(A) for A in draw.adjacency), draw.coordinates)

    @classmethod
    def from_json(cls, spec: dict | str | os.PathLike) -> "Network":
        """Network from a dict or a JSON file path.

        Format: ``{"subnets": [SUBNET, ...], "seed": 0, "coordinates": [[x, y], ...]}`` where SUBNET
        is ``{"m": 10, "topology": "ring", ...options}`` or ``{"W": [[...], ...]}``; ``seed``
        (optional) drives random topologies; ``coordinates`` is optional.  Topology options are the
        keys :func:`~fedbound.network.topology.topology_options` names (``prob``, ``self_weight``,
        ...); other keys (e.g. the controller's ``E``, ``E_d2d``) are ignored.
        """
        if isinstance(spec, (str, os.PathLike)):
            spec = validate.json_file("network spec", spec)
        require(isinstance(spec, dict) and isinstance(spec.get("subnets"), list) and spec["subnets"],
                'network spec must be an object with a non-empty list "subnets"')
        rng = validate.rng(spec.get("seed"), "spec seed")
        for s, sub in enumerate(spec["subnets"]):
            require(isinstance(sub, dict) and (("W" in sub) != ("topology" in sub)),
                    f'subnet {s} must be an object with exactly one of "W" or "topology" (with "m")')
            require("W" in sub or "m" in sub, f'subnet {s} with a "topology" needs "m"')
        sizes = [validate.integer(f"subnet {s} m", sub["m"], low=1) for s, sub in
                 enumerate(spec["subnets"]) if "topology" in sub]
        resources.require_memory(f"a network spec with {len(spec['subnets'])} subnets (gossip "
                                 "matrices)", 4 * sum(k * k for k in sizes))
        blocks = []
        for s, sub in enumerate(spec["subnets"]):
            if "W" in sub:
                W = as_square_matrix(sub["W"], f"W_{s}")
                require("m" not in sub or sub["m"] == W.shape[0],
                        f"subnet {s}: m = {sub.get('m')} but W is {W.shape[0]}x{W.shape[0]}")
                blocks.append(W)
            else:
                options = {k: sub[k] for k in topology_options(sub["topology"]) if k in sub}
                blocks.append(topology_weights(sub["topology"], sub["m"], seed=rng, **options))
        return cls(tuple(blocks), spec.get("coordinates"))

    def to_json(self) -> dict:
        """``{"subnets": [{"m": m_s, "W": [[...]]}, ...]}`` (+ ``coordinates``); inverse of from_json."""
        out = {"subnets": [{"m": int(k), "W": W.tolist()} for k, W in zip(self.m, self.blocks)]}
        if self.coordinates is not None:
            out["coordinates"] = self.coordinates.tolist()
        return out
