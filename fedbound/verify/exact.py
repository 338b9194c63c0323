r"""Exact analysis of any algorithm on a quadratic task, from the round itself.

With exact gradients :math:`\nabla f_i(x) = H_i x - e_i`, a deterministic round (full or fixed
participation, fixed local steps) and SGD-type client and server optimizers (plain, decayed,
proximal, heavy-ball or Nesterov momentum, control variates, gossip), one call of the algorithm's
``step`` is an affine map of its state. Let z be the *augmented state*: every floating tensor of
the state that the next round reads (models, trackers, server optimizer moments, control variates),
flattened in the order of the state's fields (:class:`StateLayout`). Then

.. math:: z^{t+1} = M z^t + v ,

and :func:`exact_round` obtains M by automatic differentiation of one ``step`` (reverse mode,
``torch.autograd.functional.jacobian``, vectorized; the round's own code, no hand derivation) and v
as :math:`z^{t+1} - M z^t`. Counters, the generator state and the communication counts are not
floating tensors and are left out by construction; floating tensors the round writes but does not
read (the last participants' weights, pre-aggregation models) have zero columns in the Jacobian of
the round: they are left out of z and their values follow from z, :math:`w^{t+1} = M_w z^t + v_w`.

The fixed point and the contraction factor. A run converges to the fixed point
:math:`z^\star = M z^\star + v` iff the spectral radius of M is < 1, the per-round contraction of
:math:`\|z^t - z^\star\|` tending to it (Gelfand's formula). Some rounds conserve linear functionals
of the state, :math:`\ell^\top M = \ell^\top`: SD-GT's subnet sums of the trackers z_i (seed 003,
(39) [L680], :mod:`fedbound.verify.operator`), SCAFFOLD's :math:`c - \sum_i p_i c_i` under full
participation (and FedNova's cross-client VR's, its c updated by the participants' changes). They give M the eigenvalue 1 and make :math:`I - M` singular, while the run never
leaves the affine set :math:`\{z : L^\top z = L^\top z^1\}` fixed by its first state :math:`z^1`
(L an orthonormal basis of the conserved functionals: the left singular vectors of :math:`I - M`
with singular value 0 up to roundoff). The analysis is then that of M restricted to the invariant
subspace :math:`V = L^\perp` (orthonormal basis Q):

.. math:: M_V = Q^\top M Q, \qquad \rho = \max |\lambda(M_V)|, \qquad
          z^\star = z^1 + Q (I - M_V)^{-1} Q^\top \big(v - (I - M) z^1\big),

exact because :math:`MQ = Q M_V`; the fixed point is the one the run from ``init(x0)`` reaches (it
depends on the start only through the conserved values). Without conserved functionals V is the
whole space and :math:`z^\star = (I - M)^{-1} v`.

What is refused, with the reason (:class:`~fedbound.errors.ValidationError`): a task that is not
quadratic or not float64; gradient noise or sampled gradients; a round whose result depends on its
random draws (random participation, random local steps or compute sets: the result of ``step`` is
compared for three generator states); a round that is not affine in its state (Adam-type
optimizers: an affine map has one Jacobian, compared at the run's state after two rounds and at a
perturbation of it); a round that changes from round to round (a periodic averaging: the Jacobians
of rounds 2 and 3 differ); and a conserved quantity that drifts (no fixed point). The Jacobian is checked to reproduce the next round of the run (an algorithm that
detached part of its state from the autograd graph would otherwise give a wrong M silently).

Reference for the hand-derived maps these agree with: FedNova App. A (13)-(28) [001 L316-L385]
(:mod:`fedbound.verify.quadratic_rounds`); for SD-GT: :mod:`fedbound.verify.operator`.

>>> from fedbound.algorithms import registry
>>> from fedbound.tasks import Quadratic
>>> task = Quadratic.generate(4, 2, seed=0)
>>> exact = exact_round(registry.build("fedavgm", task, lr=0.05, local_steps=3,
...                                    server_momentum=0.6, participation="full"))
>>> exact.fields
('x_g', 'server.velocity')
>>> round(exact.spectral_radius, 6) == round(0.6 ** 0.5, 6)   # complex pair: |lambda| = sqrt(beta)
True
"""
from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass

import numpy as np
import torch

from fedbound.algorithms.base import Algorithm, State, check_finite, new_rng
from fedbound.algorithms.client_rows import ClientRows
from fedbound.algorithms.threads import round_threads, step_flops
from fedbound.errors import ValidationError, require
from fedbound.tasks.quadratic import QuadraticTask

#: a conserved functional: a singular value of I - M at most this times N max(1, ||M||_2)
CONSERVED_TOL = 1e-12
#: the Jacobian of an affine round is the same at every state (exactly, as computed by autograd:
#: the backward pass of a linear operation does not read its input); relative tolerance
AFFINE_TOL = 1e-9
#: the round's result for other generator states: equal to this relative tolerance
DETERMINISTIC_TOL = 1e-12
#: M z + v reproduces the next round of the run to this relative tolerance (roundoff of rounds that
#: divide by small step sizes, e.g. SD-GT's (11), included)
REPRODUCE_TOL = 1e-6
#: generator seeds of the determinism check
OTHER_SEEDS = (1, 2)


@dataclass(frozen=True)
class Field:
    """A floating tensor of the state: its ``name`` (the state's field, then NamedTuple fields or
    tuple positions, dotted: ``x_g``, ``server.velocity``, ``C``), ``shape`` and ``span`` in the
    flat vector."""

    name: str
    shape: tuple[int, ...]
    span: slice


def _leaves(value, name: str):
    """(name, tensor) of every floating tensor in ``value`` (tensors, NamedTuples, tuples; per-client
    rows as their (n, d) tensor)."""
    if isinstance(value, ClientRows):
        value = value.dense()
    if isinstance(value, torch.Tensor):
        if value.is_floating_point():
            yield name, value
    elif isinstance(value, tuple):
        for key, item in zip(getattr(value, "_fields", None) or range(len(value)), value):
            yield from _leaves(item, f"{name}.{key}")


def _replaced(value, pieces):
    """``value`` with its floating tensors replaced, in order, by the next of ``pieces`` (per-client
    rows by rows for all n clients)."""
    if isinstance(value, ClientRows):
        every = torch.arange(value.n, device=value.device)
        return ClientRows.zeros(value.n, value.d, value.dtype, value.device).with_rows(every, next(pieces))
    if isinstance(value, torch.Tensor):
        return next(pieces) if value.is_floating_point() else value
    if isinstance(value, tuple):
        items = [_replaced(item, pieces) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


class StateLayout:
    """Every floating tensor of an algorithm's state (dataclass fields, through NamedTuples and
    tuples, None skipped; per-client rows as an (n, d) tensor), flattened in field order:
    :meth:`flatten` and its inverse :meth:`rebuild`, for states of the same structure."""

    def __init__(self, state: State):
        self.field_names = tuple(f.name for f in dataclasses.fields(state))
        leaves = [leaf for name in self.field_names for leaf in _leaves(getattr(state, name), name)]
        offsets = np.cumsum([0] + [t.numel() for _, t in leaves])
        self.fields = tuple(Field(name, tuple(t.shape), slice(int(a), int(b)))
                            for (name, t), a, b in zip(leaves, offsets[:-1], offsets[1:]))
        self.size = int(offsets[-1])

    def flatten(self, state: State) -> torch.Tensor:
        """The floating tensors of ``state`` as one vector (size,)."""
        leaves = [t.reshape(-1) for name in self.field_names for _, t in _leaves(getattr(state, name), name)]
        require(len(leaves) == len(self.fields), "the state's structure changed between rounds")
        return torch.cat(leaves)

    def rebuild(self, state: State, z: torch.Tensor) -> State:
        """``state`` with its floating tensors taken from the vector ``z`` (size,)."""
        require(tuple(z.shape) == (self.size,), f"z must be a vector of the layout's size ({self.size},), "
                                                f"got shape {tuple(z.shape)}")
        pieces = iter(z[f.span].reshape(f.shape) for f in self.fields)
        return dataclasses.replace(state, **{name: _replaced(getattr(state, name), pieces)
                                             for name in self.field_names})

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise ValidationError(f"the state has no floating field {name!r}; it has "
                              f"{', '.join(f.name for f in self.fields)}")


@dataclass(frozen=True)
class ExactRound:
    """The exact affine round z+ = M z + v of an algorithm on a quadratic task (module docstring).

    ``layout``: every floating tensor of the state; ``read`` (layout.size,) bool: the coordinates
    of the augmented state z (the fields the round reads); ``M`` (N, N), ``v`` (N,): the map on z;
    ``start``: z after the run's first round; ``conserved`` (N, c): orthonormal basis L of the
    conserved functionals; ``basis`` (N, N - c): Q, of V = L^perp; ``eigenvalues``: of M_V = Q^T M Q
    by decreasing modulus; ``state`` (layout.size,): the fixed point of every floating field (the
    fields not read included); ``x_star``: the task's minimizer.
    """

    algorithm: str
    layout: StateLayout
    read: np.ndarray
    M: np.ndarray
    v: np.ndarray
    start: np.ndarray
    conserved: np.ndarray
    basis: np.ndarray
    eigenvalues: np.ndarray
    state: np.ndarray
    x_star: np.ndarray

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields of the augmented state z, in order."""
        return tuple(f.name for f in self.layout.fields if self.read[f.span].all())

    @property
    def spectral_radius(self) -> float:
        """rho(M_V): the exact per-round contraction factor of the run towards the fixed point."""
        return float(np.abs(self.eigenvalues[0])) if self.eigenvalues.size else 0.0

    @property
    def converges(self) -> bool:
        return self.spectral_radius < 1.0

    def value(self, name: str, z: np.ndarray | None = None) -> np.ndarray:
        """The field ``name`` of a flat state of the layout (default: the fixed point), reshaped."""
        f = self.layout.field(name)
        if z is not None:
            z = np.asarray(z, dtype=float)
            require(z.shape == (self.layout.size,), f"z must be a flat state of shape ({self.layout.size},), "
                                                    f"got {z.shape}")
        return (self.state if z is None else z)[f.span].reshape(f.shape)

    @property
    def fixed_point(self) -> np.ndarray:
        """The global model x_g at the fixed point."""
        return self.value("x_g")

    @property
    def distance_to_x_star(self) -> float:
        return float(np.linalg.norm(self.fixed_point - self.x_star))

    def summary(self) -> dict:
        """The fields of ``fedbound fixed-point --json``: fixed_point, x_star, distance_to_x_star,
        spectral_radius, converges, state_fields (z's fields), conserved (how many conserved
        functionals were factored out)."""
        return {"fixed_point": self.fixed_point, "x_star": self.x_star,
                "distance_to_x_star": self.distance_to_x_star,
                "spectral_radius": self.spectral_radius, "converges": self.converges,
                "state_fields": list(self.fields), "conserved": int(self.conserved.shape[1])}


def exact_round(algorithm: Algorithm, x0: torch.Tensor | np.ndarray | None = None) -> ExactRound:
    """The exact affine round map of ``algorithm`` (any algorithm object with ``init`` / ``step``
    on a float64 quadratic task), its fixed point and contraction factor (module docstring); the
    run starts at ``init(x0)``. ValidationError with the reason when the round is random or not
    affine, or has no fixed point. Under the thread policy of runs
    (:mod:`fedbound.algorithms.threads`): the Jacobian weighs a local step per entry of the state."""
    task = algorithm.task
    _check_task(task)
    with round_threads() as policy:
        first = algorithm.step(algorithm.init(x0))
        layout = StateLayout(first)
        require(layout.size > 0, f"{algorithm.name}'s state has no floating tensor")
        policy.measured(layout.size * step_flops(first.last_comm.gradient_evaluations, first.K,
                                                 task.gradient_flops))
        return _analysis(algorithm, first, layout)


def _analysis(algorithm: Algorithm, first: State, layout: StateLayout) -> ExactRound:
    """exact_round from the state after one round, ``first``."""
    task = algorithm.task
    _check_deterministic(algorithm, first, layout)

    def round_map(z: torch.Tensor) -> torch.Tensor:
        return layout.flatten(algorithm.step(layout.rebuild(first, z)))

    second = algorithm.step(first)
    third = algorithm.step(second)
    for state in (first, second, third):
        check_finite(state, algorithm.name)
    z1, z2, z3 = (layout.flatten(state) for state in (first, second, third))
    J = _jacobian(round_map, z1)
    _check_affine(algorithm, layout, second, J)
    z1, z2, z3 = (z.detach().numpy() for z in (z1, z2, z3))
    v_all = z2 - J @ z1
    scale = max(1.0, float(np.max(np.abs(z3))), float(np.max(np.abs(J))) * float(np.max(np.abs(z2))))
    err = float(np.max(np.abs(J @ z2 + v_all - z3))) / scale
    require(err <= REPRODUCE_TOL,
            f"the Jacobian of {algorithm.name}'s round does not reproduce its next round (relative "
            f"error {err:.2e}): part of the state is detached from autograd")
    read = np.zeros(layout.size, dtype=bool)
    for f in layout.fields:   # a field is read iff some output depends on it
        read[f.span] = bool(np.any(J[:, f.span] != 0))
    require(read.any(), f"{algorithm.name}'s round does not read its state: nothing to iterate")
    M, v, start = J[np.ix_(read, read)], v_all[read], z1[read]
    conserved, basis, eigenvalues, fixed = _restricted_fixed_point(algorithm.name, M, v, start)
    state = J[:, read] @ fixed + v_all          # the fields not read follow from z*
    state[read] = fixed
    return ExactRound(algorithm.name, layout, read, M, v, start, conserved, basis, eigenvalues,
                      state, task.x_star.detach().to(torch.float64).numpy())


def _check_task(task) -> None:
    require(isinstance(task, QuadraticTask),
            f"the exact analysis needs a quadratic task (affine gradients), got {type(task).__name__}")
    require(task.dtype == torch.float64,
            f"the exact analysis needs a float64 task (--float64), got {task.dtype}")
    require(not task.noises, "the task adds gradient noise (sigma = "
            f"{', '.join(f'{s:g}' for s, _ in task.noises)}): the exact round map needs exact "
            "gradients (sigma = 0)")
    require(not task.samples_gradients,
            f"{type(task).__name__} samples its stochastic gradients (minibatches): the exact "
            "round map needs exact gradients")


def _check_deterministic(algorithm, state: State, layout: StateLayout) -> None:
    """The round's floating outputs are the same for other generator states (no random draw
    changes them: random participation, local steps or compute sets would)."""
    outputs = [layout.flatten(algorithm.step(dataclasses.replace(state, rng=rng)))
               for rng in (state.rng, *(new_rng(s) for s in OTHER_SEEDS))]
    scale = max(1.0, float(outputs[0].abs().max()))
    spread = max(float((o - outputs[0]).abs().max()) for o in outputs[1:]) / scale
    require(spread <= DETERMINISTIC_TOL,
            f"{algorithm.name}'s round depends on its random draws (random participation, local "
            f"steps or compute sets; relative change {spread:.2g} for another generator state): the "
            "exact round map needs a deterministic round, e.g. full participation "
            "(--participation full) or fixed participants")


def _jacobian(round_map, z: torch.Tensor) -> np.ndarray:
    with warnings.catch_warnings():   # rounds that log metrics with float(...) of their tensors
        warnings.filterwarnings("ignore", message="Converting a tensor with requires_grad=True")
        J = torch.autograd.functional.jacobian(round_map, z, vectorize=True)
    return J.detach().numpy()


def _check_affine(algorithm, layout: StateLayout, state: State, J: np.ndarray) -> None:
    """The Jacobian of the next round, from ``state`` (the run's after two rounds) and from a
    perturbation of it, equals ``J`` (that of the round before); else ValidationError naming the
    fields that enter non-linearly, or saying that the map changes from round to round. The
    perturbation multiplies the floating tensors by exp(N(0, 1/4)) entry-wise and adds |N(0, 1)|
    times their size, which keeps signs (of second moments, for instance)."""
    def round_map(w: torch.Tensor) -> torch.Tensor:
        return layout.flatten(algorithm.step(layout.rebuild(state, w)))

    z = layout.flatten(state)
    gen = torch.Generator(device="cpu").manual_seed(0)
    noise = torch.randn((2, z.numel()), generator=gen, dtype=z.dtype)
    J_next = _jacobian(round_map, z)
    J_probe = _jacobian(round_map, z * torch.exp(noise[0] / 2)
                        + noise[1].abs() * max(1.0, float(z.abs().max())))
    scale = max(1.0, float(np.max(np.abs(J))))
    diff = np.abs(J_probe - J_next) / scale
    diff[~np.isfinite(diff)] = np.inf
    change = float(np.max(diff))
    if change > AFFINE_TOL:
        outputs = [f.name for f in layout.fields if np.max(diff[f.span]) > AFFINE_TOL]
        inputs = [f.name for f in layout.fields if np.max(diff[:, f.span]) > AFFINE_TOL]
        raise ValidationError(
            f"{algorithm.name}'s round map is not affine in its state: the next {', '.join(outputs)} "
            f"{'is' if len(outputs) == 1 else 'are'} not affine in {', '.join(inputs)} (the Jacobian "
            f"of one round changes by {change:.2g} relative between two states). An adaptive "
            "(Adam-type) step divides by the square root of a second moment of the gradients, "
            "which is quadratic in them; the exact analysis covers SGD-type client and server "
            "optimizers (momentum, Nesterov, proximal steps, control variates)")
    change = float(np.max(np.abs(J_next - J))) / scale
    require(change <= AFFINE_TOL,
            f"{algorithm.name}'s round map changes from round to round (the Jacobian of round 3 "
            f"differs from that of round 2 by {change:.2g} relative: a periodic step or a schedule): "
            "the exact analysis is that of one affine round repeated")


def _restricted_fixed_point(name: str, M: np.ndarray, v: np.ndarray, start: np.ndarray):
    """(L, Q, eigenvalues of M_V, z*) of the module docstring."""
    N = M.shape[0]
    eye = np.eye(N)
    U, sing, _ = np.linalg.svd(eye - M)
    small = sing <= CONSERVED_TOL * N * max(1.0, float(np.linalg.norm(M, 2)))
    L, Q = U[:, small], U[:, ~small]
    drift = float(np.max(np.abs(L.T @ v), initial=0.0))
    if drift > CONSERVED_TOL * N * max(1.0, float(np.max(np.abs(v)))):
        raise ValidationError(f"{name}'s round has no fixed point: a linear function of the state "
                              f"that its homogeneous part conserves (l^T M = l^T) changes by "
                              f"{drift:.3g} every round")
    M_V = Q.T @ M @ Q
    eigenvalues = np.linalg.eigvals(M_V)
    eigenvalues = eigenvalues[np.argsort(-np.abs(eigenvalues), kind="stable")]
    try:
        if L.shape[1]:
            fixed = start + Q @ np.linalg.solve(np.eye(Q.shape[1]) - M_V, Q.T @ (v - (eye - M) @ start))
        else:
            fixed = np.linalg.solve(eye - M, v)
    except np.linalg.LinAlgError:
        raise ValidationError(f"{name}'s round map has no unique fixed point (I - M singular on "
                              "the invariant subspace)") from None
    return L, Q, eigenvalues, fixed


__all__ = ["Field", "StateLayout", "ExactRound", "exact_round", "CONSERVED_TOL", "AFFINE_TOL"]
