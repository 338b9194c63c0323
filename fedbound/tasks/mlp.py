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
"""
from __future__ import annotations

import math
from typing import Callable

import torch


def augmented(X: torch.Tensor, shapes: tuple[tuple[int, ...], ...]) -> list[torch.Tensor]:
    """The layers V_l = [W_l | b_l] (k, out, in + 1) of the flat parameters X (k, d), for
    ``shapes`` (each layer's weight (out, in) then bias (out,), in the order of x); new tensors."""
    k, out, start = X.shape[0], [], 0
    for w_shape, b_shape in zip(shapes[::2], shapes[1::2]):
        size = math.prod(w_shape)
        W = X[:, start:start + size].view(k, *w_shape)
        b = X[:, start + size:start + size + b_shape[0]]
        start += size + b_shape[0]
        out.append(torch.cat([W, b.unsqueeze(2)], dim=2))
    return out


def flatten(layers: list[torch.Tensor]) -> torch.Tensor:
    """(k, d): the augmented layers (or their gradients) flattened back, weight then bias."""
    k = layers[0].shape[0]
    return torch.cat([p for V in layers for p in (V[:, :, :-1].reshape(k, -1), V[:, :, -1])], dim=1)


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


def forward(layers: list[torch.Tensor], features: torch.Tensor, activation: str,
            differentiable: bool = False, buffers: dict | None = None) -> list[torch.Tensor]:
    """[[A_0 | 1], ..., [A_{L-1} | 1], Z_L]: each layer's input with its column of ones
    (``features`` has it), then the logits (k, m, C). ``differentiable``: by operations autograd
    can differentiate (the hidden inputs padded), else written into buffers of ones (those of
    ``buffers``, by layer, reused from call to call: the SGD steps of a round)."""
    A = [features]
    for i, V in enumerate(layers):
        Z = torch.bmm(A[-1], V.transpose(1, 2))
        if i + 1 == len(layers):
            A.append(Z)
        elif differentiable:
            A.append(with_ones(activate(Z, activation)))
        else:
            shape = (*Z.shape[:2], Z.shape[2] + 1)
            buffer = None if buffers is None else buffers.get(i)
            if buffer is None or buffer.shape != shape:
                buffer = torch.ones(shape, dtype=Z.dtype, device=Z.device)
                if buffers is not None:
                    buffers[i] = buffer
            activate(Z, activation, out=buffer[:, :, :-1])
            A.append(buffer)
    return A


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
    Z = forward(layers, features, activation, differentiable=True)[-1]
    ce = torch.logsumexp(Z, dim=2) - Z.gather(2, labels.unsqueeze(2)).squeeze(2)
    return torch.sum(ce * sample_weights(mask).squeeze(2), dim=1)


def gradient(layers: list[torch.Tensor], features: torch.Tensor, target: torch.Tensor,
             weights: torch.Tensor, activation: str, buffers: dict | None = None) -> list[torch.Tensor]:
    """[grad V_l] of each client's weighted cross-entropy (module doc) on a batch: ``features``
    with their column of ones, ``target`` from :func:`targets`, ``weights`` from
    :func:`sample_weights` (``buffers``: :func:`forward`'s)."""
    A = forward(layers, features, activation, buffers=buffers)
    Z = A.pop()
    E = torch.exp(Z.sub_(Z.amax(dim=2, keepdim=True)))
    dZ = torch.addcmul(target, E, weights / E.sum(dim=2, keepdim=True))   # w (softmax - onehot)
    grads: list[torch.Tensor] = []
    for i in range(len(layers) - 1, -1, -1):
        grads.append(torch.bmm(dZ.transpose(1, 2), A[i]))
        if i:
            dA = torch.bmm(dZ, layers[i][:, :, :-1])
            H = A[i][:, :, :-1]
            if activation == "tanh":
                dZ = torch.addcmul(dA, dA * H, H, value=-1.0)            # dA (1 - A^2)
            else:
                dZ = dA.mul_(H > 0)
    return grads[::-1]


def descend(layers: list[torch.Tensor], lr: float, steps: int,
            batch: Callable[[int], tuple[torch.Tensor, torch.Tensor, torch.Tensor]],
            activation: str) -> list[torch.Tensor]:
    """``steps`` SGD steps V <- V - lr grad V of the augmented ``layers`` (updated in place);
    ``batch(s)`` gives step s's (features with ones, targets, sample weights)."""
    buffers: dict = {}
    for s in range(steps):
        for V, G in zip(layers, gradient(layers, *batch(s), activation, buffers)):
            V.add_(G, alpha=-lr)
    return layers


__all__ = ["augmented", "flatten", "with_ones", "activate", "forward", "sample_weights", "targets",
           "losses", "gradient", "descend"]
