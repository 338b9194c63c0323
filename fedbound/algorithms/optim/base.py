"""Optimizer transforms in the optax style, over stacked torch tensors.

A :class:`Transform` is a pair of pure functions

    state = t.init(params)                          # params: (rows, d) clients, or (d,) the server
    updates, state = t.update(grads, state, params) # new params = params + updates

``updates`` is the additive change (SGD: ``-lr * grads``), never an in-place edit: inputs are not
modified, so stepping the same state twice gives the same result. A state is a NamedTuple with named
fields, defined next to its transform (optax's states; ``()`` for a stateless transform), whose
leaves are tensors (nested tuples and None fields allowed); for client transforms every tensor has
the clients as its leading axis, so that :func:`masked` can freeze the rows of clients that are
done with their local steps.

``chain(a, b, ...)`` feeds each transform's updates to the next as its "gradients" (optax.chain).
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np
import torch

from fedbound.errors import ValidationError

State = Any  # a NamedTuple (or tuple) of tensors, nested tuples and None


class Transform(NamedTuple):
    """init(params) -> state; update(grads, state, params) -> (updates, state).

    Optional metadata, None where it does not apply:
    ``state_floats(d)``: floats of optimizer state held per client (or by the server) for d
    parameters (accounting, FedAda2's memory comparison);
    ``accumulation(tau)``: FedNova's accumulation vector a (numpy, shape (tau,)) of a local solver
    that is linear in the gradients: the round's change is -lr * sum_k a_k g_k (eq. (4) of
    001_530825e753327090.txt), None for adaptive (non-linear) solvers;
    ``for_clients(ids)``: heterogeneous clients (FedAda2's blended optimization): the transform for
    rows that are the clients ``ids`` (int64, (rows,)); the federated round binds it to each block
    of participants. None: every row runs this transform.
    ``sgd_lr``: the step size of plain SGD (updates = -sgd_lr * grads, no state), which the
    federated round may hand to the task to run fused (:class:`fedbound.tasks.base.Oracle`);
    None for every other transform.
    """

    init: Callable[[torch.Tensor], State]
    update: Callable[[torch.Tensor, State, torch.Tensor], tuple[torch.Tensor, State]]
    state_floats: Callable[[int], int] | None = None
    accumulation: Callable[[int], np.ndarray] | None = None
    for_clients: Callable[[torch.Tensor], "Transform"] | None = None
    sgd_lr: float | None = None


def tree_map(fn: Callable, *trees: State) -> State:
    """``fn`` applied leaf-wise to tensors of (nested) tuples of the same structure (NamedTuples
    rebuilt as their own type, None leaves kept)."""
    first = trees[0]
    if isinstance(first, tuple):
        mapped = [tree_map(fn, *parts) for parts in zip(*trees)]
        return type(first)(*mapped) if hasattr(first, "_fields") else tuple(mapped)
    if first is None:
        return None
    return fn(*trees)


def chain(*transforms: Transform) -> Transform:
    """Apply ``transforms`` in sequence; the state is the tuple of their states. A heterogeneous
    transform (``for_clients`` set) cannot be chained (its binding would be lost): chain inside each
    client's own transform instead."""
    if any(t.for_clients is not None for t in transforms):
        raise ValidationError("a per-client (heterogeneous) transform cannot be chained; chain the "
                              "transforms of each client instead")

    def init(params):
        return tuple(t.init(params) for t in transforms)

    def update(grads, state, params):
        new_states = []
        for t, s in zip(transforms, state):
            grads, s = t.update(grads, s, params)
            new_states.append(s)
        return grads, tuple(new_states)

    floats = [t.state_floats for t in transforms]
    state_floats = (None if any(f is None for f in floats)
                    else (lambda d: sum(f(d) for f in floats)))
    return Transform(init, update, state_floats, None)


def masked(transform: Transform, active: torch.Tensor) -> Transform:
    """``transform`` applied only to the rows where ``active`` (bool, (rows,)) is True: the other rows
    get zero updates and keep their state unchanged (clients done with their tau_i local steps)."""

    def update(grads, state, params):
        updates, new_state = transform.update(grads, state, params)
        rows = active.reshape(-1, *([1] * (updates.dim() - 1)))
        updates = torch.where(rows, updates, torch.zeros((), dtype=updates.dtype))

        def keep(new, old):
            a = active.reshape(-1, *([1] * (new.dim() - 1))) if new.dim() else active.any()
            return torch.where(a, new, old)

        return updates, tree_map(keep, new_state, state)

    return transform._replace(update=update, sgd_lr=None)


__all__ = ["State", "Transform", "tree_map", "chain", "masked"]
