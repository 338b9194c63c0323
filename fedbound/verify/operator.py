r"""The exact linear iteration operator of SD-GT on quadratic tasks with full participation.

With exact gradients :math:`\nabla f_i(x) = A_i x - b_i` and every client sampled, one SD-GT round
(seed 003, (4)-(11) [L140-L172]) is an affine map of the state
:math:`s = (X, Y, Z, x_g, \psi)` (flattened, size 3nd + d + Sd):

.. math:: s^{t+1} = M s^t + c .

:func:`sdgt_operator` builds M exactly with ``torch.func.jacrev`` of SD-GT's pure round function
(:func:`fedbound.algorithms.semidecentralized.sdgt.sdgt_round`, the map behind ``SDGT.step`` and ``SDGT.round_fn``),
c as the image of the zero state, and checks that the map is affine. The gradient noise of the K
inner steps enters as an extra input, :math:`s^{t+1} = M s^t + c + B\xi^t`, which gives the
stationary error of :mod:`fedbound.verify.stationary`.

Which eigenvalues matter. The within-subnet tracking update (7) conserves the subnet sums
:math:`\sum_{i\in C_s} z_i` (columns of :math:`W_s` sum to 1), so M has the eigenvalue 1 with
multiplicity at least S d: perturbing the sum of z in one subnet is never undone. SD-GT's
initialisation puts the state on the M-invariant subspace

.. math:: V = \{ s : \textstyle\sum_{i \in C_s} z_i = 0 \ \forall s \}   \qquad (39)\ [L680],

and the fixed point :math:`s^\star` (x = x*, :math:`z_i = \bar g_s(x^\star) - \nabla f_i(x^\star)`,
:math:`y_i = \psi_s = -\bar g_s(x^\star)`, papers/sdgt.md 2.1) lies on it. The error
:math:`e^t = s^t - s^\star \in V` follows :math:`e^{t+1} = M e^t`, so the asymptotic rate is the
spectral radius of the restriction :math:`M|_V = Q^\top M Q` (Q an orthonormal basis of V; exact
because :math:`MQ = Q(Q^\top M Q)`). The conserved directions (eigenvalue 1) lie outside V and do
not enter. Directions such as :math:`X \ne \mathbf 1 x_g^\top` are mapped to the reachable set in
one round (full participation resets X and Y), so they only add eigenvalues 0.

Comparisons (papers/sdgt.md 4.6, numerical check 3): the measured per-round contraction of
:math:`\|x_g^t - x^\star\|` tends to :math:`\rho(M|_V)` when the dominant eigenvalue is real and
simple; Theorem 3 bounds the squared distance by :math:`(1 - \mu K \gamma/4)^T`, so
:math:`\rho(M|_V)^2 \le 1 - \mu K\gamma/4` is what the theorem predicts for :math:`\gamma\le\bar\gamma`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch.func import jacrev

from fedbound import validate
from fedbound.algorithms.semidecentralized.sdgt import SDGT, sdgt_round
from fedbound.algorithms.threads import round_threads
from fedbound.argtypes import NonNegativeInt, Positive
from fedbound.errors import require

FIELDS = ("X", "Y", "Z", "x_g", "psi")


@dataclass
class LinearOperator:
    """s^{t+1} = M s^t + c + B xi^t on the flattened SD-GT state (order X, Y, Z, x_g, psi), where
    xi^t (K n d,) stacks the gradient noise of the K inner steps; the models after the K D2D
    rounds, X^{t,K+1} (flattened, n d), are E s^t + e + F xi^t.

    basis (N, dim V): orthonormal basis Q of V; M_V = Q^T M Q; eigenvalues: of M_V, by decreasing
    modulus; fixed_point: s* in V; slices / shapes: where each field lives in the flat state.
    """

    M: np.ndarray
    c: np.ndarray
    B: np.ndarray
    E: np.ndarray
    e: np.ndarray
    F: np.ndarray
    basis: np.ndarray
    M_V: np.ndarray
    eigenvalues: np.ndarray
    fixed_point: np.ndarray
    slices: dict[str, slice]
    shapes: dict[str, tuple[int, ...]]

    @property
    def spectral_radius(self) -> float:
        """rho(M|_V): the asymptotic per-round contraction of the error."""
        return float(np.abs(self.eigenvalues[0]))

    @property
    def full_spectral_radius(self) -> float:
        """rho(M) on the whole state, including the conserved directions (>= 1)."""
        return float(np.max(np.abs(np.linalg.eigvals(self.M))))

    def _state(self, state) -> np.ndarray:
        state = np.asarray(state, dtype=float)
        require(state.shape == self.c.shape, f"state must be a flat SD-GT state of shape {self.c.shape}, "
                                             f"got {state.shape}")
        return state

    def field(self, state: np.ndarray, name: str) -> np.ndarray:
        """The field ``name`` of a flat state, reshaped."""
        name = validate.one_of("name", name, FIELDS)
        return self._state(state)[self.slices[name]].reshape(self.shapes[name])

    def iterate(self, state: np.ndarray, rounds: NonNegativeInt) -> np.ndarray:
        """States s^0..s^rounds of the noise-free recursion (rows)."""
        out = [self._state(state)]
        for _ in range(rounds):
            out.append(self.M @ out[-1] + self.c)
        return np.stack(out)


def _flatten(tensors) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for t in tensors])


def sdgt_operator(algorithm: SDGT, affine_tol: Positive = 1e-9) -> LinearOperator:
    """The exact affine round map of an SD-GT instance with full participation (module doc).

    ``algorithm`` is a :class:`fedbound.algorithms.semidecentralized.sdgt.SDGT` on a quadratic task; its pure round
    function :func:`fedbound.algorithms.semidecentralized.sdgt.sdgt_round` is differentiated with
    ``torch.func.jacrev``, the noise entering as an additive input to each of the K gradient calls.
    Raises ValidationError if the map is not affine (non-quadratic task) within ``affine_tol``
    times the roundoff amplification max(1, 1/(K gamma L)) of the map: (7) and (11) divide O(gamma)
    differences by K gamma, so at gamma near gamma_bar (1e-10 and below) an exactly affine map
    evaluates with a relative defect far above 1e-9, while a non-quadratic task's defect at a unit
    probe is O(1).
    """
    task, net, K = algorithm.task, algorithm.net, algorithm.K
    n, d, S = task.n, task.d, net.S
    shapes = {"X": (n, d), "Y": (n, d), "Z": (n, d), "x_g": (d,), "psi": (S, d)}
    # the thread policy of runs (fedbound.algorithms.threads): the Jacobian weighs a local step
    # (n gradients) per entry of the state
    with round_threads((3 * n + S + 1) * d * n * task.gradient_flops):
        return _operator(algorithm, affine_tol, shapes)


def _operator(algorithm: SDGT, affine_tol: float, shapes: dict) -> LinearOperator:
    task, net, K = algorithm.task, algorithm.net, algorithm.K
    n, d = task.n, task.d
    sizes = [int(np.prod(shapes[f])) for f in FIELDS]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    slices = {f: slice(int(offsets[i]), int(offsets[i + 1])) for i, f in enumerate(FIELDS)}

    def flat_map(s: torch.Tensor, xi: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        noise = iter(xi.reshape(K, n, d))
        out = sdgt_round(*(s[slices[f]].reshape(shapes[f]) for f in FIELDS),
                         grad_fn=lambda X: task.grad(X) + next(noise), net=net, K=K,
                         gamma=algorithm.gamma, omega=algorithm.omega, sampled=None)
        return _flatten((out.X, out.Y, out.Z, out.x_g, out.psi)), out.X_end.reshape(-1)

    dim = int(offsets[-1])
    zero, no_noise = torch.zeros(dim, dtype=torch.float64), torch.zeros(K * n * d, dtype=torch.float64)
    (M, B), (E, F) = jacrev(flat_map, argnums=(0, 1))(zero, no_noise)
    M, B, E, F = (a.detach().numpy() for a in (M, B, E, F))
    c, e = (a.detach().numpy() for a in flat_map(zero, no_noise))
    rng = np.random.default_rng(0)
    probe = torch.as_tensor(rng.normal(size=dim), dtype=torch.float64)
    image = flat_map(probe, no_noise)[0].detach().numpy()
    err = np.max(np.abs(image - (M @ probe.numpy() + c))) / max(1.0, np.max(np.abs(image)))
    tol = affine_tol * max(1.0, 1.0 / (K * algorithm.gamma * task.L))
    require(err <= tol,
            f"the SD-GT round map is not affine (relative error {err:.2e} > {tol:.2g}); "
            "the exact operator needs a quadratic task")
    basis = _sum_zero_basis(slices["Z"], net.offsets, d, dim)
    M_V = basis.T @ M @ basis
    eig = np.linalg.eigvals(M_V)
    eig = eig[np.argsort(-np.abs(eig), kind="stable")]
    w = np.linalg.solve(np.eye(M_V.shape[0]) - M_V, basis.T @ c)
    return LinearOperator(M, c, B, E, e, F, basis, M_V, eig, basis @ w, slices, shapes)


def _sum_zero_basis(z_slice: slice, offsets: np.ndarray, d: int, dim: int) -> np.ndarray:
    """Orthonormal basis of V = {s : sum_{i in C_s} z_i = 0 for every subnet s}."""
    S = len(offsets) - 1
    constraints = np.zeros((S * d, dim))
    z0 = z_slice.start
    for s in range(S):  # one row per (subnet, coordinate); loop over S only
        rows = np.arange(offsets[s], offsets[s + 1])
        for j in range(d):
            constraints[s * d + j, z0 + rows * d + j] = 1.0
    # null space of the constraint matrix via SVD (complement of its row space)
    _, sing, vt = np.linalg.svd(constraints, full_matrices=True)
    rank = int(np.sum(sing > 1e-12))
    return vt[rank:].T


def analytic_fixed_point(algorithm: SDGT) -> dict[str, np.ndarray]:
    """SD-GT's fixed point at x* (papers/sdgt.md 2.1 [DERIVED]): x_i = x_g = x*,
    z_i = gbar_s(x*) - grad f_i(x*), y_i = psi_s = -gbar_s(x*)."""
    task, net = algorithm.task, algorithm.net
    x_star = torch.as_tensor(task.x_star, dtype=torch.float64)
    X = x_star.expand(task.n, -1).clone()
    G = task.grad(X)
    g_sub = net.subnet_mean(G)
    return {"X": X.numpy(), "Y": (-net.expand(g_sub)).numpy(), "Z": (net.expand(g_sub) - G).numpy(),
            "x_g": x_star.numpy(), "psi": (-g_sub).numpy()}


__all__ = ["LinearOperator", "sdgt_operator", "analytic_fixed_point"]
