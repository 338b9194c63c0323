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

import functools
import inspect
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
    ``label``: the factory call that built it (:func:`labelled`): how it prints,
    ``adam(lr=0.1, b1=0.9, ...)``.
    """

    init: Callable[[torch.Tensor], State]
    update: Callable[[torch.Tensor, State, torch.Tensor], tuple[torch.Tensor, State]]
    state_floats: Callable[[int], int] | None = None
    accumulation: Callable[[int], np.ndarray] | None = None
    for_clients: Callable[[torch.Tensor], "Transform"] | None = None
    sgd_lr: float | None = None
    label: "_FactoryCall | None" = None

    def __repr__(self) -> str:
        """The factory call that built it with every argument, defaults included
        (``adam(lr=0.1, b1=0.9, b2=0.99, eps=0.001, bias_correction='none', ...)``; the model's
        parameter shapes left out), or ``Transform(update)`` naming its update function."""
        from fedbound.display import clip, settings
        if self.label is None:
            return f"Transform({getattr(self.update, '__qualname__', type(self.update).__name__)})"
        factory = self.label.factory
        signature = inspect.signature(factory)
        bound = signature.bind(*self.label.args, **self.label.kwargs)
        bound.apply_defaults()
        parts = []
        for name, value in bound.arguments.items():
            kind = signature.parameters[name].kind
            if kind is inspect.Parameter.VAR_POSITIONAL:   # chain's transforms
                parts += [repr(v) if isinstance(v, Transform) else settings(v) for v in value]
            elif kind is inspect.Parameter.VAR_KEYWORD:
                parts += [settings(**value)] if value else []
            elif name != "shapes":
                parts.append(f"{name}={value!r}" if isinstance(value, Transform) else settings(**{name: value}))
        return clip(f"{factory.__name__}({', '.join(parts)})")


class _FactoryCall:
    """``factory(*args, **kwargs)``, kept to print the transform it built (compared and hashed by
    identity, so that a transform stays hashable whatever its arguments)."""

    __slots__ = ("factory", "args", "kwargs")

    def __init__(self, factory: Callable, args: tuple, kwargs: dict):
        self.factory, self.args, self.kwargs = factory, args, kwargs


def labelled(factory: Callable[..., Transform]) -> Callable[..., Transform]:
    """Decorator of a transform factory: the transform it builds carries the call
    (:attr:`Transform.label`, formatted only when it is printed: a round that builds its client's
    transform, as FedAda2's, pays one small object)."""
    @functools.wraps(factory)
    def build(*args, **kwargs) -> Transform:
        return factory(*args, **kwargs)._replace(label=_FactoryCall(factory, args, kwargs))
    return build


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


@labelled
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

    return transform._replace(update=update, sgd_lr=None, label=None)


__all__ = ["State", "Transform", "labelled", "tree_map", "chain", "masked"]
