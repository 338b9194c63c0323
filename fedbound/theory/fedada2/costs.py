r"""FedAda2's cost model, Table 2 (seed 004 [L1627-L1633], papers/fedada2.md 2.15 and 8.22), from the
actual parameter shapes.

Per participating client and per round, in floats (Table 2's units times d):

============================  =============  ============  =====================
method                        communication  client memory gradient calls / step
============================  =============  ============  =====================
FedAvg                        2d             d             1
FedAdaGrad                    2d             d             1
DJA (AdaGrad)                 3d             2d            1
FedAda2                       2d             2d            1
MIME / MIMELite               5d / 4d        4d / 3d       3 / 2
============================  =============  ============  =====================

Communication is x down plus Delta up (2d); DJA also sends the server preconditioner (d). Table 2
lists FedAda2's client memory as 2d although SM3 keeps q accumulators (notes 8.22); the ``refined``
model counts d (parameters) plus the client optimizer's state (:func:`client_state_floats`: the
step counter included, and d more for SM3-II with a delay z > 1; the same counts as the
``state_floats(d)`` of the client transforms of fedbound.algorithms.optim.client, which a test
checks): d + q + 1 for SM3-AdaGrad, 2d + q + 1 for SM3-Adam (a dense first moment), and adds the rows Table 2 omits: Joint Adap. w/o Precond. (full-diagonal client, zero-init:
AdaGrad d + (d + 1), Adam d + (2d + 1)) and Adam-instantiated DJA (m and v sent down: 4d; memory
d + (2d + 1)); DJA's AdaGrad client holds d + (d + 1) (the printed 2d plus the step counter).
Gradient buffers are not counted (as in the table). q sums the SM3 cover size over the tensors (:func:`cover_size`): a tensor of rank >= 2 uses
the slices along each axis (rows + columns for a matrix: m + n), a vector its coordinates (n, no
saving), a scalar 1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Iterable, Sequence

from fedbound import validate as V
from fedbound.argtypes import Choice, Count, NonNegativeInt
from fedbound.errors import InputTypeError


@dataclass(frozen=True)
class Cost:
    """Floats per participating client and round: ``communication`` (down + up), client ``memory``,
    and ``gradient_calls`` per local step; ``source`` is "Table 2" or "derived (notes 2.15)"."""

    method: str
    communication: NonNegativeInt
    memory: NonNegativeInt
    gradient_calls: NonNegativeInt
    source: str


def _iterable(value) -> bool:
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes))


def _shapes(shapes: Iterable[Sequence[int]]) -> list[tuple[int, ...]]:
    if not _iterable(shapes) or not all(_iterable(s) for s in shapes):
        raise InputTypeError(f"shapes must be a list of tuples of positive integers, got {shapes!r}")
    out = [tuple(V.integer(f"shapes[{i}]", n, low=1) for n in s) for i, s in enumerate(shapes)]
    if not out:
        raise InputTypeError("shapes must name at least one tensor, got an empty list")
    return out


def parameter_count(shapes: Iterable[Sequence[Count]]) -> int:
    """d = sum over tensors of the product of their shape."""
    return sum(math.prod(s) for s in _shapes(shapes))


def cover_size(shape: Sequence[Count]) -> int:
    """SM3 cover size of one tensor: sum of its dimensions for rank >= 2 (slices along each axis),
    n for a vector (singletons), 1 for a scalar."""
    shape = _shapes([shape])[0]
    if len(shape) == 0:
        return 1
    return shape[0] if len(shape) == 1 else sum(shape)


def sm3_accumulators(shapes: Iterable[Sequence[Count]]) -> int:
    """q = sum over tensors of :func:`cover_size`."""
    return sum(cover_size(s) for s in _shapes(shapes))


CLIENT_OPTIMIZERS = ("sm3", "sm3_adam", "adagrad", "adam")
#: Table 2 as printed, or refined (module doc)
Model = Annotated[str, Choice(("printed", "refined"))]


def client_state_floats(shapes: Iterable[Sequence[Count]],
                        optimizer: Annotated[str, Choice(CLIENT_OPTIMIZERS)], delay: Count = 1) -> int:
    """Floats of client optimizer state for a model with these shapes (d parameters, q SM3
    accumulators), the step counter included:

    * "sm3" (SM3-II, Alg. 2): q accumulators + 1, and d more for the held preconditioner nu when
      the delay z > 1 (nu_k = nu_{k-1} between refreshes);
    * "sm3_adam": SM3-II plus a dense first moment, d more;
    * "adagrad": v (d) + 1; "adam": m and v (2d) + 1 (whatever the delay: the preconditioner is v).
    """
    optimizer = V.one_of("optimizer", optimizer, CLIENT_OPTIMIZERS)
    delay = V.integer("delay", delay, low=1)
    shapes = _shapes(shapes)
    d = parameter_count(shapes)
    if optimizer in ("sm3", "sm3_adam"):
        sm3 = sm3_accumulators(shapes) + 1 + (d if delay > 1 else 0)
        return sm3 + (d if optimizer == "sm3_adam" else 0)
    return (d if optimizer == "adagrad" else 2 * d) + 1


def table2(shapes: Iterable[Sequence[Count]], model: Model = "printed",
           delay: Count = 1) -> dict[str, Cost]:
    """Table 2's rows for a model with these parameter shapes; ``model`` "printed" gives the table
    as printed (FedAda2 memory 2d), "refined" the client memory d + the optimizer state of
    :func:`client_state_floats` (with preconditioner ``delay`` z) and the extra rows of the module
    docstring."""
    model = V.one_of("model", model, ("printed", "refined"))
    shapes = _shapes(shapes)
    d = parameter_count(shapes)
    table = "Table 2"
    derived = "derived (notes 2.15): d + optimizer state_floats(d)"
    rows = [Cost("FedAvg", 2 * d, d, 1, table), Cost("FedAdaGrad", 2 * d, d, 1, table),
            Cost("DJA", 3 * d, 2 * d if model == "printed" else d + client_state_floats(shapes, "adagrad", delay),
                 1, table if model == "printed" else derived + ", AdaGrad"),
            Cost("FedAda2", 2 * d, 2 * d if model == "printed" else d + client_state_floats(shapes, "sm3", delay),
                 1, table if model == "printed" else derived + ", SM3-AdaGrad"),
            Cost("MIME", 5 * d, 4 * d, 3, table), Cost("MIMELite", 4 * d, 3 * d, 2, table)]
    if model == "refined":
        rows += [Cost("FedAda2 (SM3-Adam)", 2 * d, d + client_state_floats(shapes, "sm3_adam", delay), 1, derived),
                 Cost("JointZero", 2 * d, d + client_state_floats(shapes, "adagrad", delay), 1, derived),
                 Cost("JointZero (Adam)", 2 * d, d + client_state_floats(shapes, "adam", delay), 1, derived),
                 Cost("DJA (Adam)", 4 * d, d + client_state_floats(shapes, "adam", delay), 1, derived)]
    return {r.method: r for r in rows}


def relative_communication(shapes: Iterable[Sequence[Count]], model: Model = "printed"
                           ) -> dict[str, float]:
    """Communication per round relative to FedAvg's (Fig. 2's normalisation [L213-L215]): 1 for
    FedAda2, 1.5 for DJA (AdaGrad)."""
    rows = table2(shapes, model)
    return {m: r.communication / rows["FedAvg"].communication for m, r in rows.items()}
