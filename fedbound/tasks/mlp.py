r"""Batched multilayer perceptrons by hand: the forward pass, the cross-entropy loss and its gradient
for k parameter vectors at once, each on its own batch of samples (one client each), as a few
batched tensor operations per layer.

Client j's parameters: layers l = 1..L with W_l (out_l, in_l) and b_l (out_l,), flattened into x_j
(d,) layer by layer, weight (row-major) then bias, the order of ``nn.Sequential.named_parameters``.
Here a layer is held augmented, V_l = [W_l | b_l] (out_l, in_l + 1), and its input with a column
of ones, [A | 1], so that one product gives W_l A + b_l and one product its two gradients. On a
batch A_0 = features (k, m, D), labels y (k, m) and sample weights w (k, m) (mask / number of
samples: a client's loss is the mean over its real samples, padding weighs 0):

    forward    Z_l = [A_{l-1} | 1] V_l^T  (bmm, batched over k),  A_l = act(Z_l) (l < L),
               logits Z_L;  loss_j = sum_s w_js (logsumexp(Z_L[j, s]) - Z_L[j, s, y_js])
    backward   dZ_L = w (softmax(Z_L) - onehot(y));  for l = L..1:
               grad V_l = dZ_l^T [A_{l-1} | 1]  (grad W_l, then grad b_l = sum_s dZ_l),
               dZ_{l-1} = (dZ_l W_l) act'(A_{l-1}),  tanh' = 1 - A^2, relu' = [A > 0]

(the chain rule written out; act' from the activations, so no pre-activation is kept).

Why by hand (issue 35): a round of a small model costs its calls, not its flops. torch.func's
``vmap(grad(loss))`` traces the model in Python at every call -- 1.9 ms for one gradient of 10
clients of a 64-32-10 MLP on 15 samples each, against 0.33 ms for these passes, whose arithmetic
alone (the same products stacked as one dense product) takes 0.09 ms -- and its first call
imports torch's compiler stack (torch._dynamo, about 870 modules, 1.5 s). Autograd on the batched
graph would record and replay a graph per call; these passes are one call per operation, about 19
per SGD step of a two-layer model. :func:`descend` runs K SGD steps on the augmented layers (no
flattening per step), what the federated round uses for plain-SGD clients
(:meth:`fedbound.tasks.base.Task._descend_on`). Measured per operation on a round's tensors: the
bias folded into the product saves an addition, a sum and an update per layer and step (a
broadcast bias in ``baddbmm`` costs more than its product); the softmax is exp(Z - max Z) / sum
(torch's softmax over 10 classes costs 3x these operations on CPU); tanh is 2 sigmoid(2 Z) - 1
(:func:`activate`: torch's CPU tanh takes 4x these); the labels enter as -w onehot(y)
(:func:`targets`, once per batch) in one fused multiply-add.

Where the calls are the cost, numpy (issue 35): the passes are written once (:func:`gradient`,
:func:`descend`) over a small table of operations per array library (:data:`BACKENDS`), and the
local steps of CPU tensors in a round that torch runs on one thread (:func:`backend_for`) run on
zero-copy numpy views of them: numpy's call on these small arrays costs 1-4 microseconds where
torch's eager call costs 5-30 (one SGD step of 10 clients of the 64-32-10 MLP on 15 samples:
about 60 us against 110-150 us, measured side by side on the same arrays; its products alone,
about 25 us, are the arithmetic). CUDA tensors and rounds given several threads stay in torch;
both give the same numbers up to float rounding (``tests/tasks/test_mlp_backends.py``).

Within :func:`descend` (measured per step, numpy, 10 and 100 clients of the 64-32-10 MLP on 15
samples): the targets and weights come times lr, so every gradient does and a step is V <- V - G
(no product of each weight-sized gradient with lr); the first layer is held transposed (its
product 0.55-0.65x); numpy's softmax shifts by one number where the logits' range allows
(:func:`_softmax_shift`) and sums its rows by a product with ones (numpy's max and sum over a
short last axis cost 5x and 3x that: 66 and 30 us per step at 100 clients). Together 7 % of a round
of 10 clients and 15-30 % of one of 100 (benchmarks/neural_race.py). Where a client has few
samples and the first layer many inputs, its steps run in sample space (the first layer moves in
the span of the round's inputs: :func:`_sample_space_steps`): a Gram product per step in place of
two products with the first layer and its update.

Where even numpy's calls are the cost, compiled (issue 35): float32 steps on one thread run in one
call of a C kernel built at install (``fedbound/tasks/_kernels.c``, :func:`_compiled_steps`: the
same passes written out, a vector's lanes of clients at once), 6-9 us per client and round of
digits' MLP against numpy's 16-26; where no C compiler was found, numpy's steps run.
Both take the steps' batches as one set of rows, step s on rows a..b (:func:`descend_rows`: a
round's gathered minibatches as they are, no slicing and stacking per step).
"""
from __future__ import annotations

import functools
import math
import os
from typing import Callable, Literal, NamedTuple

import numpy as np
import torch

from fedbound.argtypes import Count
from fedbound.errors import ValidationError, require

try:   # the compiled local steps, built at install where a C compiler is found (setup.py)
    import fedbound.tasks._kernels as _kernels
except ImportError:   # pragma: no cover - a machine without a C compiler: the numpy steps
    _kernels = None


def augmented(X: torch.Tensor | np.ndarray, shapes: tuple[tuple[int, ...], ...],
              first_transposed: bool = False) -> list:
    """The layers V_l = [W_l | b_l] (k, out, in + 1) of the flat parameters X (k, d), for
    ``shapes`` (each layer's weight (out, in) then bias (out,), in the order of x); new tensors
    (new numpy arrays of a numpy X), contiguous; ``first_transposed``: the first as
    U_1 = V_1^T (k, in + 1, out)."""
    k, out, start = X.shape[0], [], 0
    for w_shape, b_shape in zip(shapes[::2], shapes[1::2]):
        size = math.prod(w_shape)
        W = X[:, start:start + size].reshape(k, *w_shape)
        b = X[:, start + size:start + size + b_shape[0]]
        start += size + b_shape[0]
        if first_transposed and not out:
            parts, axis, shape = [W.swapaxes(1, 2), b[:, None, :]], 1, (k, w_shape[1] + 1, w_shape[0])
        else:
            parts, axis, shape = [W, b[:, :, None]], 2, (k, w_shape[0], w_shape[1] + 1)
        if isinstance(X, np.ndarray):   # row-major (numpy lays a concatenation out as its inputs)
            out.append(np.concatenate(parts, axis, out=np.empty(shape, X.dtype)))
        else:
            out.append(torch.cat(parts, axis))
    return out


def flatten(layers: list, out: torch.Tensor | np.ndarray | None = None) -> torch.Tensor | np.ndarray:
    """(k, d): the augmented layers (or their gradients) flattened back, weight then bias, into
    ``out`` (k, d) if given (a tensor, or a numpy array of numpy layers), else a new tensor."""
    k = layers[0].shape[0]
    if out is None:
        V = layers[0]
        out = torch.empty(k, sum(V.shape[1] * V.shape[2] for V in layers), dtype=V.dtype, device=V.device)
    start = 0
    for V in layers:
        size = V.shape[1] * (V.shape[2] - 1)
        out[:, start:start + size].reshape(k, V.shape[1], -1)[...] = V[:, :, :-1]
        out[:, start + size:start + size + V.shape[1]] = V[:, :, -1]
        start += size + V.shape[1]
    return out


def with_ones(A: torch.Tensor) -> torch.Tensor:
    """[A | 1]: (k, m, n + 1)."""
    return torch.nn.functional.pad(A, (0, 1), value=1.0)


def activate(Z: torch.Tensor, activation: str, out: torch.Tensor | None = None) -> torch.Tensor:
    """act(Z), Z overwritten: relu, or tanh as 2 sigmoid(2 Z) - 1 (the same function; torch's
    CPU tanh takes 4x these four operations on a round's small tensors); into ``out`` if given
    (not differentiable then)."""
    if activation == "relu":
        return Z.relu_() if out is None else torch.clamp(Z, min=0.0, out=out)
    S = Z.mul_(2.0).sigmoid() - 0.5
    return S.mul_(2.0) if out is None else torch.mul(S, 2.0, out=out)


def forward(layers: list[torch.Tensor], features: torch.Tensor, activation: str) -> torch.Tensor:
    """The logits Z_L (k, m, C) of the layers on ``features`` (with their column of ones), by
    operations autograd can differentiate (:func:`gradient` writes its own pass out)."""
    A = features
    for V in layers[:-1]:
        A = with_ones(activate(torch.bmm(A, V.transpose(1, 2)), activation))
    return torch.bmm(A, layers[-1].transpose(1, 2))


def sample_weights(mask: torch.Tensor) -> torch.Tensor:
    """(k, m, 1): w_js = mask_js / sum_s mask_js, the weight of sample s in client j's mean loss."""
    return (mask / mask.sum(dim=1, keepdim=True)).unsqueeze(2)


def targets(labels: torch.Tensor, weights: torch.Tensor, classes: int) -> torch.Tensor:
    """(k, m, C): -w_js onehot(y_js), the labels' part of the logits' gradient."""
    return torch.zeros(*labels.shape, classes, dtype=weights.dtype,
                       device=weights.device).scatter_(2, labels.unsqueeze(2), -weights)


def losses(layers: list[torch.Tensor], features: torch.Tensor, labels: torch.Tensor,
           mask: torch.Tensor, activation: str) -> torch.Tensor:
    """(k,): each client's mean cross-entropy over its real samples (``features`` with their
    column of ones); differentiable by autograd."""
    Z = forward(layers, features, activation)
    ce = torch.logsumexp(Z, dim=2) - Z.gather(2, labels.unsqueeze(2)).squeeze(2)
    return torch.sum(ce * sample_weights(mask).squeeze(2), dim=1)


class _TorchOps:
    """The operations of :func:`gradient` and :func:`descend` on torch tensors (any device).
    (Private, as :class:`_NumpyOps`: a call of a public method would pass fedbound's argument
    guard, a microsecond each, on the hot path.)"""

    @staticmethod
    def product_t(A, V):
        """A V^T, batched: (k, m, n) x (k, p, n) -> (k, m, p)."""
        return torch.bmm(A, V.transpose(1, 2))

    @staticmethod
    def t_product(G, A):
        """G^T A, batched: (k, m, p) x (k, m, n) -> (k, p, n)."""
        return torch.bmm(G.transpose(1, 2), A)

    product = staticmethod(torch.bmm)

    @staticmethod
    def swap(V):
        """V^T of each client, a view: (k, p, n) -> (k, n, p)."""
        return V.transpose(1, 2)

    @staticmethod
    def contiguous(V):
        return V.contiguous()

    @staticmethod
    def ones(shape, like):
        return torch.ones(shape, dtype=like.dtype, device=like.device)

    @staticmethod
    def zeros(shape, like):
        return torch.zeros(shape, dtype=like.dtype, device=like.device)

    copy = staticmethod(torch.clone)

    @staticmethod
    def concatenate(arrays):
        """The arrays (k, m_i, n) side by side along their samples: (k, sum m_i, n)."""
        return torch.cat(arrays, 1)

    activate = staticmethod(activate)

    @staticmethod
    def logit_gradient(Z, target, weights):
        """w (softmax(Z) - onehot(y)) = target + w exp(Z - max Z) / sum exp(Z - max Z), Z overwritten."""
        E = torch.exp(Z.sub_(Z.amax(dim=2, keepdim=True)))
        return torch.addcmul(target, E, weights / E.sum(dim=2, keepdim=True))

    @staticmethod
    def backward(dA, H, activation):
        """dA act'(A) from the activations H = A: dA (1 - H^2) (tanh), dA [H > 0] (relu)."""
        if activation == "tanh":
            return torch.addcmul(dA, dA * H, H, value=-1.0)
        return dA.mul_(H > 0)

    @staticmethod
    def sgd(V, G):
        """V <- V - G, in place (the step size is in G: :func:`descend`)."""
        V.sub_(G)

    @staticmethod
    def array(tensor):
        """A tensor as it is; a numpy array as a tensor (no copy)."""
        return tensor if isinstance(tensor, torch.Tensor) else torch.from_numpy(tensor)

    @staticmethod
    def cast(A, like):
        """A in the dtype of ``like``."""
        return A.to(like.dtype)

    @staticmethod
    def rows(A, rows):
        """A[rows]: the rows ``rows`` (indices; None: all) of A (n, ...)."""
        return A if rows is None else A.index_select(0, rows)

    @staticmethod
    def take(A, P, rows=None):
        """A[r_j, P[j, s]]: the samples at the positions P (k, b) of the rows r = ``rows`` (k,)
        of A (n, m, ...) (None: A's k rows in order)."""
        A = _TorchOps.rows(A, rows)
        if A.ndim == 2:
            return torch.gather(A, 1, P)
        return torch.gather(A, 1, P[:, :, None].expand(-1, -1, A.shape[2]))

    sample_weights = staticmethod(sample_weights)
    targets = staticmethod(targets)


class _NumpyOps:
    """The same operations on numpy arrays (in place where the torch ones are)."""

    @staticmethod
    def product_t(A, V):
        return np.matmul(A, V.transpose(0, 2, 1))

    @staticmethod
    def t_product(G, A):
        return np.matmul(G.transpose(0, 2, 1), A)

    product = staticmethod(np.matmul)

    @staticmethod
    def swap(V):
        return V.transpose(0, 2, 1)

    contiguous = staticmethod(np.ascontiguousarray)

    @staticmethod
    def ones(shape, like):
        return np.ones(shape, dtype=like.dtype)

    @staticmethod
    def zeros(shape, like):
        return np.zeros(shape, dtype=like.dtype)

    copy = staticmethod(np.copy)

    @staticmethod
    def concatenate(arrays):
        return np.concatenate(arrays, 1)

    @staticmethod
    def activate(Z, activation, out):
        return np.tanh(Z, out=out) if activation == "tanh" else np.maximum(Z, 0, out=out)

    @staticmethod
    def logit_gradient(Z, target, weights):
        """As :meth:`_TorchOps.logit_gradient`, with :func:`_softmax_shift` (numpy's max over a
        short last axis costs 5x two whole-array reductions) and the row sums as a product with
        ones (a reduction over the short axis costs 3x it)."""
        Z -= _softmax_shift(Z.max(), Z.min(), lambda: Z.max(axis=2, keepdims=True))
        E = np.exp(Z, out=Z)
        E *= weights / np.matmul(E, np.ones((E.shape[2], 1), dtype=E.dtype))
        E += target
        return E

    @staticmethod
    def backward(dA, H, activation):
        if activation == "tanh":
            S = H * H
            dA *= np.subtract(1, S, out=S)
        else:
            dA *= H > 0
        return dA

    @staticmethod
    def sgd(V, G):
        V -= G

    @staticmethod
    def array(tensor):
        """The numpy view of a CPU tensor (no copy: what the steps write lands in the tensor)."""
        return tensor if isinstance(tensor, np.ndarray) else tensor.detach().numpy()

    @staticmethod
    def cast(A, like):
        return A.astype(like.dtype)

    @staticmethod
    def rows(A, rows):
        return A if rows is None else A[rows]

    @staticmethod
    def take(A, P, rows=None):
        """As :meth:`_TorchOps.take`, in one indexing of A (the rows' samples only)."""
        return A[(np.arange(P.shape[0]) if rows is None else rows)[:, None], P]

    @staticmethod
    def sample_weights(mask):
        return (mask / mask.sum(axis=1, keepdims=True))[:, :, None]

    @staticmethod
    def targets(labels, weights, classes):
        k, m = labels.shape
        T = np.zeros((k, m, classes), dtype=weights.dtype)
        T[np.arange(k)[:, None], np.arange(m)[None, :], labels] = -weights[:, :, 0]
        return T


#: the array libraries of the local steps' arrays (:func:`descend`'s ``backend``; the compiled
#: steps take numpy's)
BACKENDS = {"torch": _TorchOps, "numpy": _NumpyOps, "compiled": _NumpyOps}


#: the widest range max Z - min Z of logits that one shift serves (:func:`_softmax_shift`)
SHIFT_RANGE = 80.0


def _softmax_shift(top, bottom, row_max: Callable):
    """What to subtract from the logits Z before exp: softmax is invariant to a shift c_js of each
    row, and exp(Z - c) must neither overflow nor leave a row all zero. One number for the whole
    array, ``top`` = max Z, where the range ``top - bottom`` (``bottom`` = min Z) is at most
    :data:`SHIFT_RANGE`: then every entry is <= 0 and every row's largest is >= exp(-80), above
    float32's least normal number (1.2e-38; entries below exp(-80) relative to their row's largest
    weigh less than 2e-9, under float32's rounding); else each row's max (``row_max()``). The one
    shift rounds Z - max Z to eps |Z - max Z| <= 2 eps max |Z|, the order of the rounding the
    logits carry from their products (tests/tasks/test_mlp_backends.py)."""
    return top if top - bottom <= SHIFT_RANGE else row_max()


def backend_for(X: torch.Tensor) -> str:
    """"compiled" (:func:`kernel_isa`) for a float32 CPU tensor and "numpy" for a float64 one
    where torch runs one thread (a small round, where the calls cost more than the flops: numpy's
    call on a round's small arrays costs 1-4 microseconds, torch's eager one 10-30, the compiled
    steps one call for all; the thread policy, :mod:`fedbound.algorithms.threads`, gives larger
    rounds more threads, which neither would follow), else "torch"."""
    if X.device.type == "cpu" and X.dtype in (torch.float32, torch.float64) and torch.get_num_threads() == 1:
        return "compiled" if X.dtype == torch.float32 and _kernels is not None else "numpy"
    return "torch"


#: the environment variable that picks the compiled kernel's instruction set (``tests/kernel_sets.py``
#: runs the baseline one on a CPU that has AVX2)
KERNEL_ISA_VARIABLE = "FEDBOUND_KERNEL_ISA"


@functools.cache
def kernel_isa() -> str:
    """The instruction set of the compiled steps: the best this CPU runs ("avx512": AVX-512F,
    "avx2": AVX2 and FMA, "base": the compiler's baseline, SSE2 on x86-64), or the one
    :data:`KERNEL_ISA_VARIABLE` names, read once per process (cached: a later change of the
    variable takes effect after ``kernel_isa.cache_clear()``, as the tests do)."""
    require(_kernels is not None, "the compiled MLP steps are not built here (no C compiler at "
                                  "install: `pip install -e .` builds them); use backend='numpy'")
    available = _kernels.isas()
    forced = os.environ.get(KERNEL_ISA_VARIABLE)
    if forced is None:
        return available[0]
    require(forced in available, f"{KERNEL_ISA_VARIABLE} must be one of {list(available)} on this "
                                 f"machine, got {forced!r}")
    return forced


def _hidden_inputs(Z, ops, activation, buffers, i):
    """[act(Z) | 1] into the buffer of ones of layer i (``buffers``, reused across calls)."""
    shape = (*Z.shape[:2], Z.shape[2] + 1)
    buffer = None if buffers is None else buffers.get(i)
    if buffer is None or tuple(buffer.shape) != shape:
        buffer = ops.ones(shape, Z)
        if buffers is not None:
            buffers[i] = buffer
    ops.activate(Z, activation, out=buffer[:, :, :-1])
    return buffer


def _after_first(Z, layers, target, weights, activation, buffers, ops):
    """From the first layer's pre-activation Z_1 (k, m, out_1) on: the forward pass through the
    later layers, the logits' gradient and the backward pass (module doc); ([grad V_l for l >= 2],
    dZ_1)."""
    A = []   # [A_l | 1] for l = 1..L-1
    for i, V in enumerate(layers):
        if i:
            Z = ops.product_t(A[-1], V)
        if i < len(layers) - 1:
            A.append(_hidden_inputs(Z, ops, activation, buffers, i))
    dZ = ops.logit_gradient(Z, target, weights)
    grads: list = []
    for i in range(len(layers) - 1, 0, -1):
        grads.append(ops.t_product(dZ, A[i - 1]))
        dZ = ops.backward(ops.product(dZ, layers[i][:, :, :-1]), A[i - 1][:, :, :-1], activation)
    return grads[::-1], dZ


def _gradient(layers, features, target, weights, activation, buffers, ops, first_transposed=False):
    """[grad V_l] (module doc); ``first_transposed``: layers[0] is held as U_1 = V_1^T (k, in + 1,
    out), and its gradient comes as grad U_1 = A_0^T dZ_1 (:func:`descend`)."""
    Z = ops.product(features, layers[0]) if first_transposed else ops.product_t(features, layers[0])
    later, dZ = _after_first(Z, layers, target, weights, activation, buffers, ops)
    return [ops.t_product(features, dZ) if first_transposed else ops.t_product(dZ, features)] + later


def gradient(layers: list[torch.Tensor], features: torch.Tensor, target: torch.Tensor,
             weights: torch.Tensor, activation: str) -> list[torch.Tensor]:
    """[grad V_l] of each client's weighted cross-entropy (module doc) on a batch: ``features``
    with their column of ones, ``target`` from :func:`targets`, ``weights`` from
    :func:`sample_weights`."""
    return _gradient(layers, features, target, weights, activation, None, _TorchOps)


class GatheredRows(NamedTuple):
    """A round's batch rows where they are in a task's arrays (:func:`descend_rows`): client j's
    row q is sample ``positions[j, q]`` (None: sample q, every one) of client ``ids[j]`` of
    ``features`` (n, m, in + 1, with their ones), ``labels`` (n, m) and ``presence`` (n, m, the
    task's mask); the rows come in blocks of ``width`` (a step's batch), each row weighted by its
    validity (``valid`` (k, r), with positions; else its presence) over its block's: a client's
    mean loss over the batch. The compiled steps read the samples where they are; the others
    gather them first (:meth:`arrays`). Arrays of one library (numpy or torch)."""

    features: torch.Tensor | np.ndarray
    labels: torch.Tensor | np.ndarray
    presence: torch.Tensor | np.ndarray
    ids: torch.Tensor | np.ndarray
    positions: torch.Tensor | np.ndarray | None
    valid: torch.Tensor | np.ndarray | None
    width: Count
    classes: Count

    @property
    def rows(self) -> int:
        """The rows of each client."""
        return int((self.features if self.positions is None else self.positions).shape[1])

    def arrays(self, backend: Literal["torch", "numpy", "compiled"]) -> tuple:
        """(features with ones (k, r, in + 1), targets (k, r, classes), sample weights (k, r, 1)),
        gathered in the arrays of ``backend`` (:data:`BACKENDS`)."""
        ops = BACKENDS[backend]
        try:
            ids = ops.array(self.ids)
            if self.positions is None:
                R, labels, validity = (ops.rows(ops.array(a), ids) for a in (self.features, self.labels, self.presence))
            else:
                at = ops.array(self.positions)
                R, labels = (ops.take(ops.array(a), at, ids) for a in (self.features, self.labels))
                validity = ops.cast(ops.array(self.valid), R)
            k, r = labels.shape
            w = ops.sample_weights(validity.reshape(k * r // self.width, self.width)).reshape(k, r, 1)
            return R, ops.targets(labels, w, self.classes), w
        except (IndexError, RuntimeError, ValueError) as err:   # numpy's and torch's shape and index errors
            raise ValidationError(f"the gathered rows do not fit together (features (n, m, in + 1), "
                                  f"labels and presence (n, m), ids (k,), positions and valid (k, r), "
                                  f"r a multiple of width {self.width}): {' '.join(str(err).split())[:160]}") from None


def _stacked(given, ops) -> tuple[tuple, list[tuple[int, int]]]:
    """The steps' batches ``given`` (features with ones, targets, weights) as one set of rows: the
    distinct batches (by their feature array) stacked along the samples in order of first use,
    (R, T, w), and each step's rows (a, b) there (a full batch's steps all (0, m))."""
    first: dict = {}
    for b in given:
        first.setdefault(id(b[0]), b)
    where, start = {}, 0
    for F, _, _ in first.values():
        where[id(F)] = (start, start + F.shape[1])
        start += F.shape[1]
    parts = zip(*(tuple(ops.array(t) for t in b) for b in first.values()))
    stacked = tuple(p[0] if len(p) == 1 else ops.concatenate(p) for p in parts)
    return stacked, [where[id(b[0])] for b in given]


def _seen(spans) -> list[tuple[int, int, int]]:
    """Per step (a, b, seen): its rows R[a:b] and the rows R[:seen] that earlier steps used."""
    out, seen = [], 0
    for a, b in spans:
        out.append((a, b, seen))
        seen = max(seen, b)
    return out


def _first_layer_costs(spans, inputs: int, outputs: int) -> tuple[int, int]:
    """Multiply-adds per client of the first layer's steps (``inputs`` = in + 1): in weight space
    (a forward and a weight-gradient product per step, b x inputs x out each, and the update) and
    in sample space (:func:`_sample_space_steps`: R U_1(0), R R^T and R^T D once, a Gram product
    b x seen x out per step)."""
    rows = max((b for _, b, _ in spans), default=0)
    weights = sum((2 * (b - a) + 1) * inputs * outputs for a, b, _ in spans)
    samples = rows * inputs * (2 * outputs + rows) + sum((b - a) * seen * outputs for a, b, seen in spans)
    return weights, samples


def _sample_space_steps(layers, rows, spans, activation, buffers, ops):
    """SGD steps on ``rows`` (features with ones R, targets, weights; the last two times lr), step
    s on the rows ``spans[s]`` (a, b, seen: :func:`_seen`), with the first layer in sample space,
    ``layers[0]`` = U_1 = V_1^T updated once at the end (:func:`descend_rows`).

    Every step's gradient of U_1 is A^T dZ_1 on its batch A, so after steps on the round's rows R
    (the distinct batches stacked, (k, r, in + 1)), U_1 = U_1(0) - R^T D, D (k, r, out_1) the sum
    of the steps' dZ_1 on each row: the first layer moves in the span of its inputs (the
    representer argument). A step's pre-activation on its rows A = R[a:b] is then
    Z_1 = A U_1(0) - (R R^T)[a:b] D: a product with the Gram matrix of the rows seen so far (b x r
    per client) in place of the forward and the weight-gradient products of the first layer (b x
    (in + 1) each) and its update; the same numbers up to float rounding
    (``tests/tasks/test_mlp_backends.py``)."""
    R, target, weights = rows
    # R R^T with a contiguous copy of R^T: numpy's batched product of R with its own transposed
    # view took 1.7x (100 clients, 15 x 65 rows, measured)
    P, gram = ops.product(R, layers[0]), ops.product(R, ops.contiguous(ops.swap(R)))
    D = ops.zeros(P.shape, P)
    for a, b, seen in spans:
        Z = ops.copy(P[:, a:b]) if seen == 0 else P[:, a:b] - ops.product(gram[:, a:b, :seen], D[:, :seen])
        later, dZ = _after_first(Z, layers, target[:, a:b], weights[:, a:b], activation, buffers, ops)
        for V, G in zip(layers[1:], later):
            ops.sgd(V, G)
        D[:, a:b] += dZ
    ops.sgd(layers[0], ops.t_product(R, D))


def descend(X: torch.Tensor, shapes: tuple[tuple[int, ...], ...], lr: float, steps: int,
            batch: Callable[[int], tuple[torch.Tensor, torch.Tensor, torch.Tensor]], activation: str,
            backend: Literal["torch", "numpy", "compiled"] | None = None,
            first_layer: Literal["weights", "samples"] | None = None) -> torch.Tensor:
    """The flat models X (k, d) (layers ``shapes``, :func:`augmented`) after ``steps`` SGD steps
    V <- V - lr grad V of their augmented layers, a new tensor; ``batch(s)`` gives step s's
    (features with ones, targets, sample weights): :func:`descend_rows` on the distinct batches
    stacked (:func:`_stacked`)."""
    backend = backend or backend_for(X)
    rows, spans = _stacked([batch(s) for s in range(steps)], BACKENDS[backend])
    return descend_rows(X, shapes, lr, rows, spans, activation, backend, first_layer)


def descend_rows(X: torch.Tensor, shapes: tuple[tuple[int, ...], ...], lr: float, rows: tuple,
                 spans: list[tuple[int, int]], activation: str,
                 backend: Literal["torch", "numpy", "compiled"] | None = None,
                 first_layer: Literal["weights", "samples"] | None = None) -> torch.Tensor:
    """The flat models X (k, d) after SGD steps on the rows ``rows`` = (features with ones
    (k, r, in + 1), targets (k, r, classes), sample weights (k, r, 1)) of arrays of ``backend``'s
    library, or where they are in a task's arrays (:class:`GatheredRows`), step s on the rows
    a..b - 1 of ``spans[s]`` = (a, b): a full batch's steps all (0, r), minibatches side by side
    (s B, (s + 1) B). ``backend``: the array library of the steps,
    "torch", "numpy" on zero-copy views of CPU tensors, or "compiled" (float32 CPU tensors:
    :func:`_compiled_steps`) (default :func:`backend_for`); ``first_layer``: the first layer's
    steps in weight space (its products and update at every step) or in sample space
    (:func:`_sample_space_steps`), by default "samples" where that takes at most half the
    multiply-adds (:func:`_first_layer_costs`; the half pays for its calls. Measured on rounds of
    10 and 100 clients of 15 samples, full batch: digits' 64-32-10 MLP 3x fewer, its round 0.97x
    and 0.82x; a 784-32-10 MLP's 0.69x at 100; the 16-32-10 MLP 0.58x, its round 1.0x; digits'
    minibatches of 5 1.3x more, its round 1.07-1.1x), compiled where it takes fewer. Either way
    the same numbers up to float rounding (``tests/tasks/test_mlp_backends.py``,
    ``tests/tasks/test_mlp_kernel.py``)."""
    backend = backend or backend_for(X)
    ops = BACKENDS[backend]
    if not spans:
        return X.clone()
    gathered = isinstance(rows, GatheredRows)
    r = rows.rows if gathered else rows[0].shape[1]
    if not all(0 <= a <= b <= r for a, b in spans):   # (the message built only then: a round's hot path)
        raise ValidationError(f"each step's rows (a, b) must satisfy 0 <= a <= b <= {r} (the rows "
                              f"given), got {spans}")
    spans = _seen([(a, b) for a, b in spans if b > a])   # a step on no rows moves nothing
    if not spans:
        return X.clone()
    if first_layer is None:
        weights, samples = _first_layer_costs(spans, shapes[0][1] + 1, shapes[0][0])
        first_layer = "samples" if (samples if backend == "compiled" else 2 * samples) <= weights else "weights"
    if backend == "compiled":
        return _compiled_steps(X, shapes, lr, rows, spans, activation, first_layer == "samples")
    # torch's steps under no_grad (the backward pass is written out: nothing for autograd to
    # record); numpy's and the kernel's never reach autograd and skip no_grad's calls (8-15 us of
    # a round of 10 clients, measured against it in one process)
    with torch.no_grad():
        if gathered:
            rows = rows.arrays(backend)
        # the targets and weights times lr: the logits' gradient, and so every layer's, comes out
        # times lr, and a step is V <- V - G (no product of the weight-sized G with lr per layer
        # and step)
        R, T, w = ops.array(rows[0]), ops.array(rows[1]) * lr, ops.array(rows[2]) * lr
        # the first layer held as U_1 = V_1^T, contiguous: its product A_0 U_1 costs 0.55-0.65x
        # A_0 V_1^T of a transposed operand (numpy, 10-100 clients of the 64-32-10 MLP,
        # measured), and it has no backward product (whose operand V_l[:, :, :-1] favours V's
        # orientation)
        layers = augmented(ops.array(X), shapes, first_transposed=True)
        out = torch.empty(X.shape, dtype=X.dtype, device=X.device)
        buffers: dict = {}
        if first_layer == "samples":
            _sample_space_steps(layers, (R, T, w), spans, activation, buffers, ops)
        else:
            for a, b, _ in spans:
                batch = (R[:, a:b], T[:, a:b], w[:, a:b])
                grads = _gradient(layers, *batch, activation, buffers, ops, first_transposed=True)
                for V, G in zip(layers, grads):
                    ops.sgd(V, G)
        layers[0] = ops.swap(layers[0])
        flatten(layers, ops.array(out))
        return out


def _compiled_steps(X, shapes, lr, rows, spans, activation, samples: bool) -> torch.Tensor:
    """:func:`descend_rows`'s steps in one call of the compiled kernel
    (``fedbound/tasks/_kernels.c``, float32; ``spans`` with their rows seen, :func:`_seen`): the
    clients in groups of a vector's lanes (16 with AVX-512, 8 with AVX2, 4 with SSE2:
    :func:`kernel_isa`), client g of a group in lane g of every vector, so that each operation of
    one client's steps is one vector operation for the whole group (no width padded to whole
    vectors, no horizontal sum or maximum, the loops' overhead shared); the first layer in sample
    space (``samples``: :func:`_sample_space_steps`) or weight space; the products in tiles of 4 x 4
    vectors (3 x 3 with 16 registers) held in registers; tanh and exp as polynomials in the same
    registers (tanh Eigen's rational approximation with the reciprocal estimate and a Newton step,
    within 4.5e-7; exp Cephes' expf); the softmax shifted by each row's max; subnormal numbers
    flushed to zero while it runs. :class:`GatheredRows` are read where they are: each client's
    samples, targets and weights from the task's arrays (no gathered copy of a round's rows).

    Why compiled (issue 35): a round of a small model costs numpy's calls (about 17 per step of all
    clients, 1-4 us each, three times that inside a round), not its products. Measured alone on one
    thread against these steps in numpy (K = 5 steps on 15 samples of digits' 64-32-10 MLP, the
    benchmark's arrays): 6.0 us per client and round with AVX-512 at 100 clients (7.7 with AVX2,
    14 with SSE2; minibatches of 5: 4.3; the 16-32-10 MLP: 4.3), 8.5 at 10 clients (one group, 6
    of its 16 lanes idle), against numpy's 26 (10 clients) and 16 (100 clients, where its batched
    products reach OpenBLAS's small-matrix kernels). Why lanes: one client at a time (the kernel
    before, 2026-12-07) ran its vectors along the widths, 10 classes padded to 16 floats, a
    horizontal max and sum per row of the softmax, a division per vector of tanh and the loops'
    overhead per client: 9.9, 9.7 and 7.6 us per client on the three jobs above."""
    if not (_kernels is not None and X.dtype == torch.float32 and X.device.type == "cpu"):
        raise ValidationError(f"the compiled MLP steps take float32 CPU models (and a build with a C "
                              f"compiler), got {X.dtype} on {X.device.type}")
    out = torch.empty(X.shape, dtype=X.dtype)
    if isinstance(rows, GatheredRows):
        arrays = tuple(None if a is None else np.ascontiguousarray(_NumpyOps.array(a))
                       for a in rows[:6]) + (int(rows.width),)
    else:
        R, T, w = (np.ascontiguousarray(_NumpyOps.array(t)) for t in rows)
        arrays = (R, T, np.ascontiguousarray(w[:, :, 0]))
    widths = (shapes[0][1], *(shape[0] for shape in shapes[::2]))
    # a round's clients start from one model (X = x expanded, a stride of 0): handed once, not
    # copied per client (a 1 MB copy at 100 clients of digits' MLP)
    models = X[:1] if X.shape[0] > 1 and X.stride(0) == 0 else X
    try:
        _kernels.descend(np.ascontiguousarray(_NumpyOps.array(models)), out.numpy(), widths, arrays,
                         np.array(spans, dtype=np.int32), float(lr), activation == "relu", samples, kernel_isa())
    except (ValueError, BufferError) as err:   # the kernel's checks of shapes and indices
        raise ValidationError(f"the compiled MLP steps: {err}") from None
    return out


__all__ = ["augmented", "flatten", "with_ones", "activate", "forward", "sample_weights", "targets",
           "losses", "gradient", "descend", "descend_rows", "GatheredRows", "BACKENDS", "backend_for", "kernel_isa", "KERNEL_ISA_VARIABLE"]
