r"""SD-GT's random geometric fog network (seed 003, Sec. V-B "System Setup" [L480]; notes sdgt.md §6.1).

The paper: "we generate a realization of n device coordinates sampled over a uniform grid. The
clients are then grouped into subnets based on their distance using K-means clustering. Then, a
sensing radius is generated for each client, and when two clients are within each other's range, a
D2D link is established" with radii uniform in [0.5, 3.5] by default; W_s are Metropolis-Hastings.

What the paper leaves open, and what this module chooses:

* Region. Coordinates are uniform over the square [0, ``REGION_SIDE``]^2 with ``REGION_SIDE = 4``.
  The paper gives no size.  Measured over 30 seeds (S = 3, m = 10): the default radii [0.5, 3.5]
  give median q = 0.22 (10-90 % range 0.12-0.37), inside the 0.1-0.9 range the notes ask for;
  radii [0.5, 1.5] give median q = 0.10, matching Fig. 4's sparse end (q = 0.11 [L510]).  Fig. 4's
  dense end ([6.5, 7.5] -> q = 0.87) is not reproduced: here those radii make every subnet
  complete (q = 1); even side 8 gives q >= 0.96 for 90 % of seeds, and on sides 6 and 8 radii
  [0.5, 1.5] never gave connected subnets (30 seeds x 2000 draws).  The official INFOCOM code
  (``get_geo_graph``) draws Gaussian N(0, 2^2) positions and one radius for all devices instead.
* Link rule: "within each other's range" is read as dist(i, j) <= min(r_i, r_j), and only inside a
  subnet (subnets do not talk directly, SD-GT [L95]).
* Grouping: k-means on the coordinates (Lloyd iterations, k-means++ seeding, best of 4 runs, all
  driven by the seed).  With ``balanced=True`` (default) the grouping is then made
  size-constrained, exactly m_s devices per subnet, by Lloyd iterations whose assignment step is an
  optimal assignment of devices to centre slots (``scipy.optimize.linear_sum_assignment``): the
  paper's experiments have m_s = 10 each [L480].  ``balanced=False`` keeps plain k-means labels, so
  subnet sizes are unequal (only n = sum(m) is used).
* Connectivity: Assumption 2 needs each subnet connected, the paper does not say how
  (notes sdgt.md §6.1 flag).  The whole realization (coordinates, grouping, radii) is redrawn until
  every subnet graph is connected; redrawing only the radii cannot fix an isolated device.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from fedbound import resources, validate
from fedbound.argtypes import Count, Positive, Seed
from fedbound.errors import ValidationError, require
from fedbound.network.mixing import is_connected
from fedbound.network.topology import check_sizes


def cdist(a: np.ndarray, b: np.ndarray, metric: Literal["euclidean", "sqeuclidean"] = "euclidean"):
    """scipy.spatial.distance.cdist of the rows of ``a`` (k, D) and ``b`` (l, D), imported on first
    use (scipy.spatial costs 0.1 s at start-up)."""
    from scipy.spatial.distance import cdist as scipy_cdist

    a, b = np.asarray(a), np.asarray(b)
    require(a.ndim == 2, f"a must be a 2-D array of points (k, D), got shape {a.shape}")
    require(b.ndim == 2 and b.shape[1] == a.shape[1],
            f"b must be a 2-D array of points (l, {a.shape[1]}) like a, got shape {b.shape}")
    return scipy_cdist(a, b, metric)

#: side of the square region over which device coordinates are drawn uniformly
REGION_SIDE = 4.0
#: SD-GT's default radius range [L480]
DEFAULT_RADIUS_RANGE = (0.5, 3.5)


@dataclass(frozen=True)
class GeometricRealization:
    """One connected draw: devices ordered by subnet (subnet s = ``sizes`` block s)."""

    coordinates: np.ndarray           # (n, 2)
    radii: np.ndarray                 # (n,)
    sizes: np.ndarray                 # (S,) m_s
    adjacency: tuple[np.ndarray, ...]  # S boolean (m_s, m_s) arrays


def _nearest(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    return np.argmin(cdist(points, centres, "sqeuclidean"), axis=1)


def _centres(points: np.ndarray, labels: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """Mean of each group (an empty group keeps its previous centre)."""
    return np.stack([points[labels == s].mean(axis=0) if np.any(labels == s) else previous[s]
                     for s in range(previous.shape[0])])


def kmeans(points: np.ndarray, S: Count, rng: np.random.Generator, n_init: Count = 4,
           max_iter: Count = 100) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's k-means with k-means++ seeding, best of ``n_init`` runs: (labels, centres)."""
    points = np.asarray(points)
    require(points.ndim == 2 and points.shape[0] >= 1,
            f"points must be a 2-D array (k >= 1, D), got shape {points.shape}")
    best = None
    for _ in range(n_init):
        centres = points[[rng.integers(len(points))]]
        while len(centres) < S:  # k-means++: next centre with probability ~ squared distance
            d2 = cdist(points, centres, "sqeuclidean").min(axis=1)
            total = d2.sum()
            pick = rng.choice(len(points), p=d2 / total) if total > 0 else rng.integers(len(points))
            centres = np.vstack([centres, points[pick]])
        for _ in range(max_iter):
            labels = _nearest(points, centres)
            new = _centres(points, labels, centres)
            if np.array_equal(new, centres):
                break
            centres = new
        inertia = cdist(points, centres, "sqeuclidean")[np.arange(len(points)), labels].sum()
        if best is None or inertia < best[0]:
            best = (inertia, labels, centres)
    return best[1], best[2]


def group_devices(points: np.ndarray, S: Count, rng: np.random.Generator,
                  sizes: np.ndarray | None = None, max_iter: Count = 100) -> np.ndarray:
    """Subnet label of each point: k-means, then size-constrained Lloyd iterations when ``sizes``.

    The balanced assignment step minimises the total squared distance to the centres subject to
    subnet s getting exactly ``sizes[s]`` points (slots: centre s repeated sizes[s] times,
    ``linear_sum_assignment``); the update step moves each centre to its group's mean.
    """
    if sizes is not None:
        sizes = np.asarray(sizes)
        require(sizes.shape == (S,) and sizes.dtype.kind in "iu" and bool(np.all(sizes >= 1))
                and int(sizes.sum()) == len(points),
                f"sizes must be S = {S} integers >= 1 adding up to the {len(points)} points, got "
                f"{sizes.tolist()}")
    labels, centres = kmeans(points, S, rng)
    if sizes is None:
        return labels
    slot_owner = np.repeat(np.arange(S), sizes)
    for _ in range(max_iter):
        from scipy.optimize import linear_sum_assignment  # scipy.optimize: imported when drawn

        _, slot = linear_sum_assignment(cdist(points, centres[slot_owner], "sqeuclidean"))
        new_labels = slot_owner[slot]
        if np.array_equal(new_labels, labels):
            break
        labels = new_labels
        centres = _centres(points, labels, centres)
    return labels


def subnet_adjacency(coordinates: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Link iff dist(i, j) <= min(r_i, r_j); no self loops."""
    coordinates, radii = np.asarray(coordinates), np.asarray(radii)
    require(coordinates.ndim == 2, f"coordinates must be a 2-D array (k, D), got shape {coordinates.shape}")
    require(radii.shape == coordinates.shape[:1],
            f"radii must have one entry per point, shape ({coordinates.shape[0]},), got {radii.shape}")
    A = cdist(coordinates, coordinates) <= np.minimum.outer(radii, radii)
    np.fill_diagonal(A, False)
    return A


def sample_geometric_network(S: int, m: int | list[int],
                             radius_range: tuple[Positive, Positive] = DEFAULT_RADIUS_RANGE,
                             seed: Seed | np.random.Generator | None = 0, *,
                             region_side: Positive = REGION_SIDE, balanced: bool = True,
                             max_tries: Count = 1000) -> GeometricRealization:
    """Draw SD-GT's random geometric fog network until every subnet is connected.

    ``m``: int (m devices per subnet, n = S m) or a list of S sizes.  With ``balanced=False`` only
    n = sum(m) is used and k-means decides the sizes.  Raises :class:`ValidationError` on bad
    arguments or when ``max_tries`` draws all leave some subnet disconnected.
    """
    sizes = check_sizes(S, m)
    S = len(sizes)
    r_min, r_max = validate.real_array("radius_range", radius_range, shape=(2,), low=0.0, high=1e100)
    require(0.0 < r_min <= r_max,
            f"radius_range must satisfy 0 < r_min <= r_max, got [{r_min}, {r_max}]")
    region_side = validate.number("region_side", region_side, low=0.0, high=1e100, low_open=True)
    balanced = validate.boolean("balanced", balanced)
    max_tries = validate.integer("max_tries", max_tries, low=1, high=10 ** 6)
    n = int(sizes.sum())
    resources.require_memory(f"a random geometric network of n = {n} devices (distance and "
                             "assignment matrices)", 3 * n * n)
    rng = validate.rng(seed)
    for _ in range(max_tries):
        points = rng.uniform(0.0, region_side, size=(n, 2))
        labels = group_devices(points, S, rng, sizes if balanced else None)
        order = np.argsort(labels, kind="stable")
        coordinates, labels = points[order], labels[order]
        radii = rng.uniform(r_min, r_max, size=n)
        blocks = tuple(subnet_adjacency(coordinates[labels == s], radii[labels == s])
                       for s in range(S))
        if all(block.shape[0] >= 1 and is_connected(block) for block in blocks):
            return GeometricRealization(coordinates, radii, np.bincount(labels, minlength=S), blocks)
    raise ValidationError(f"random geometric network with radii [{r_min}, {r_max}] on a "
                          f"{region_side}x{region_side} region had a disconnected subnet in all "
                          f"{max_tries} draws; use larger radii or fewer devices per subnet")
