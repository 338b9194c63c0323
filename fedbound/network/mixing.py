r"""Mixing matrices: validation and the three mixing measures used by the papers.

The papers measure how well a doubly stochastic gossip matrix :math:`W \in \mathbb{R}^{m\times m}`
mixes with three different numbers; each has its own function here so a user never confuses them.
With :math:`J = \mathbf{1}\mathbf{1}^\top/m`:

=====================  ===============================  ===================================  ============
function               formula                          paper                                complete, W=J
=====================  ===============================  ===================================  ============
:func:`spectral_norm`  :math:`\|W - J\|_2`              AFGA's :math:`\rho` (seed 000,       0
                                                        L271-L290; notes afga.md §1)
:func:`rho_tight`      :math:`1 - \|W - J\|_2^2`        SD-GT's :math:`\rho_s` (seed 003,    1
                                                        Assumption 2, L223-L226), tightest
                                                        value for which Assumption 2 holds
:func:`spectral_gap`   :math:`1 - |\lambda_2(W)|`       the usual "spectral gap"             1
=====================  ===============================  ===================================  ============

``spectral_norm`` is a contraction factor (small is good); ``rho_tight`` and ``spectral_gap`` are
rates (large is good).  SD-GT never gives a formula for :math:`\rho_s` (notes sdgt.md §1.2, flag);
``rho_tight`` is the largest :math:`\rho_s` with
:math:`\|X(W_s - J_s)\|_F^2 \le (1-\rho_s)\|X(I - J_s)\|_F^2` for all X, because
:math:`X(W_s - J_s) = X(I - J_s)(W_s - J_s)` for doubly stochastic :math:`W_s`.
For symmetric W, :math:`\|W - J\|_2 = \max(|\lambda_2|, |\lambda_{\min}|)`.

All three lie in [0, 1] for doubly stochastic W, since :math:`\|W - J\|_2 = \|W(I - J)\|_2 \le 1`.
They are measured only for W whose graph is (strongly) connected, as every paper assumes: a
disconnected W (e.g. the identity, a graph without edges) never mixes, and its measures (a rate of
0) would only hide the mistake, so it is refused.
"""
from __future__ import annotations

import numpy as np

from fedbound import resources, validate
from fedbound.argtypes import Count, NonNegative
from fedbound.errors import ValidationError, require

#: tolerance on row/column sums and symmetry when validating a mixing matrix
ATOL = 1e-10


def as_square_matrix(W: np.ndarray, name: str = "W") -> np.ndarray:
    """``W`` as a real, finite, square float64 array (validate.real_array; a bool pattern is 0/1),
    or a FedboundError."""
    A = validate.real_array(name, W, ndim=2, allow_bool=True)
    require(A.shape[0] == A.shape[1] and A.shape[0] >= 1,
            f"{name} must be a square matrix with at least one row, got shape {A.shape}")
    return A


def averaging_matrix(m: Count) -> np.ndarray:
    r""":math:`J = \mathbf{1}\mathbf{1}^\top / m`."""
    resources.require_memory(f"the ({m}, {m}) averaging matrix J", m * m)
    return np.full((m, m), 1.0 / m)


def component_labels(adjacency: np.ndarray) -> tuple[int, np.ndarray]:
    """Number of (strongly) connected components of the graph of the nonzero off-diagonal entries,
    and the component label of each node."""
    A = as_square_matrix(adjacency, "adjacency")
    pattern = A != 0
    np.fill_diagonal(pattern, False)
    from scipy.sparse.csgraph import connected_components  # scipy.sparse: 0.2 s, only when used

    return connected_components(pattern, directed=True, connection="strong")


def is_connected(adjacency: np.ndarray) -> bool:
    """Whether the graph whose edges are the nonzero off-diagonal entries is (strongly) connected.

    Accepts a 0/1 adjacency matrix or a mixing matrix W alike (only the pattern matters).
    """
    return component_labels(adjacency)[0] == 1


def is_doubly_stochastic(W: np.ndarray, atol: NonNegative = ATOL) -> bool:
    """Nonnegative, rows and columns summing to 1 within ``atol``."""
    A = as_square_matrix(W)
    return bool(np.all(A >= 0) and np.allclose(A.sum(axis=1), 1.0, rtol=0, atol=atol)
                and np.allclose(A.sum(axis=0), 1.0, rtol=0, atol=atol))


def is_symmetric(W: np.ndarray, atol: NonNegative = ATOL) -> bool:
    A = as_square_matrix(W)
    return bool(np.allclose(A, A.T, rtol=0, atol=atol))


def validate_mixing_matrix(W: np.ndarray, *, symmetric: bool = True, connected: bool = True,
                           atol: NonNegative = ATOL) -> None:
    """Raise :class:`ValidationError` unless W is a valid gossip matrix.

    Checks, in order: square and finite; nonnegative; rows and columns sum to 1 (doubly stochastic,
    SD-GT [L91], Assumption 2 [L223]); symmetric (if ``symmetric``); the graph of the nonzero
    off-diagonal entries is (strongly) connected (if ``connected``).  Each failure names the
    offending entry, row or client in a one-line message.
    """
    A = as_square_matrix(W)
    if np.any(A < 0):
        i, j = np.argwhere(A < 0)[0]
        raise ValidationError(f"W entries must be >= 0; W[{i}, {j}] = {A[i, j]:.6g}")
    for axis, what in ((1, "row"), (0, "column")):
        sums = A.sum(axis=axis)
        bad = np.flatnonzero(np.abs(sums - 1.0) > atol)
        if bad.size:
            raise ValidationError(f"W {what} sums must be 1 (doubly stochastic); "
                                  f"{what} {bad[0]} sums to {sums[bad[0]]:.6g}")
    if symmetric:
        diff = np.abs(A - A.T)
        if np.any(diff > atol):
            i, j = np.unravel_index(np.argmax(diff), A.shape)
            raise ValidationError(f"W must be symmetric; W[{i}, {j}] = {A[i, j]:.6g} "
                                  f"but W[{j}, {i}] = {A[j, i]:.6g}")
    if connected:
        count, labels = component_labels(A)
        if count > 1:
            other = int(np.flatnonzero(labels != labels[0])[0])
            raise ValidationError(f"W's graph must be connected; it has {count} components "
                                  f"(client {other} is not reachable from client 0)")


def _norm_and_gap(A: np.ndarray) -> tuple[float, float]:
    """(||W - J||_2, 1 - |lambda_2(W)|) from one eigendecomposition when W is symmetric.

    For symmetric W with W 1 = 1, W - J has the eigenvalues of W with one eigenvalue 1 (eigenvector
    1) replaced by 0, so ||W - J||_2 is the largest |lambda| after removing that 1.
    """
    m = A.shape[0]
    if m == 1:
        return abs(float(A[0, 0]) - 1.0), 1.0
    if np.array_equal(A, A.T):
        eig = np.linalg.eigvalsh(A)  # ascending
        gap = 1.0 - abs(eig[-2])
        if np.allclose(A.sum(axis=1), 1.0, rtol=0, atol=1e-13):
            rest = np.delete(eig, np.argmin(np.abs(eig - 1.0)))
            return float(np.max(np.abs(rest))), float(gap)
        return float(np.max(np.abs(np.linalg.eigvalsh(A - averaging_matrix(m))))), float(gap)
    eig = np.linalg.eigvals(A)
    eig = eig[np.argsort(-eig.real, kind="stable")]
    return float(np.linalg.norm(A - averaging_matrix(m), ord=2)), float(1.0 - np.abs(eig[1]))


def _mixing(W) -> np.ndarray:
    """W checked for the measures: square, finite, nonnegative, doubly stochastic (all three are
    defined for, and lie in [0, 1] only for, such W) and with a (strongly) connected graph (a
    disconnected W does not mix: module doc); symmetry is not needed."""
    A = as_square_matrix(W)
    validate_mixing_matrix(A, symmetric=False, connected=True)
    return A


def spectral_norm(W: np.ndarray) -> float:
    r"""AFGA's :math:`\rho = \|W - J\|_2` (seed 000, L271-L290); 0 for W = J, < 1 iff W mixes.

    Uses ``eigvalsh`` for symmetric W (then :math:`\|W-J\|_2 = \max(|\lambda_2|, |\lambda_{\min}|)`)
    and ``norm(ord=2)`` otherwise.  Regression: ring(50) with self weight 1/3 gives 0.9947,
    ring(10) gives 0.8727, ring(3) gives 0 (AFGA L598, L601; notes afga.md §8).
    """
    return _norm_and_gap(_mixing(W))[0]


def rho_tight(W: np.ndarray) -> float:
    r"""SD-GT's mixing rate :math:`\rho_s = 1 - \|W_s - J_s\|_2^2` (seed 003, Assumption 2, L223-L226).

    The largest :math:`\rho` with :math:`\|X(W - J)\|_F^2 \le (1-\rho)\|X(I - J)\|_F^2` for every X;
    equality holds for X whose rows lie in the top right-singular direction of W - J.
    The paper gives no formula (notes sdgt.md §1.2, flag); this is the tight computable choice.
    """
    return 1.0 - spectral_norm(W) ** 2


def spectral_gap(W: np.ndarray) -> float:
    r"""Spectral gap :math:`1 - |\lambda_2(W)|`, with :math:`1 = \lambda_1 \ge \lambda_2 \ge \dots`
    the eigenvalues ordered by real part (algebraic order for symmetric W); 1 for m = 1.

    Unlike :func:`spectral_norm` it ignores :math:`\lambda_{\min}`, so a W with an eigenvalue near -1
    can have a large gap and still mix slowly.  Some works use it as SD-GT's :math:`\rho_s`
    (notes sdgt.md §1.2).
    """
    return _norm_and_gap(_mixing(W))[1]


def mixing_summary(W: np.ndarray) -> dict:
    """The three mixing measures and the validity predicates of W, as JSON-ready values (W must be
    nonnegative, doubly stochastic and connected, as for the measures)."""
    A = _mixing(W)
    norm, gap = _norm_and_gap(A)
    return {"m": A.shape[0], "spectral_norm": norm, "rho_tight": 1.0 - norm ** 2,
            "spectral_gap": gap, "doubly_stochastic": is_doubly_stochastic(A),
            "symmetric": is_symmetric(A), "connected": is_connected(A)}
