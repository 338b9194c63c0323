r"""Batched multilayer perceptrons by hand: the forward pass, the cross-entropy loss and its gradient
for k parameter vectors at once, each on its own batch of samples (one client each), as a few
batched tensor operations per layer.

Client j's parameters: layers l = 1..L with W_l (out_l, in_l) and b_l (out_l,), flattened into x_j
(d,) layer by layer, weight (row-major) then bias, the order of ``nn.Sequential.named_parameters``.
On a batch A_0 = features (k, m, D), labels y (k, m) and sample weights w (k, m) (mask / number of
samples: a client's loss is the mean over its real samples, padding weighs 0):

    forward    Z_l = A_{l-1} W_l^T + b_l  (baddbmm, batched over k),  A_l = act(Z_l) (l < L),
               logits Z_L;  loss_j = sum_s w_js (logsumexp(Z_L[j, s]) - Z_L[j, s, y_js])
    backward   dZ_L = w (softmax(Z_L) - onehot(y));  for l = L..1:
               grad W_l = dZ_l^T A_{l-1},  grad b_l = sum_s dZ_l,
               dZ_{l-1} = (dZ_l W_l) act'(A_{l-1}),  tanh' = 1 - A^2, relu' = [A > 0]

(the chain rule written out; act' from the activations, so no pre-activation is kept).

Why by hand (issue 35): a round of a small model costs its calls, not its flops. torch.func's
``vmap(grad(loss))`` traces the model in Python at every call -- 1.9 ms for one gradient of 10
clients of a 64-32-10 MLP on 15 samples each, against 0.33 ms for these passes, whose arithmetic
alone (the same products stacked as one dense product) takes 0.09 ms -- and its first call
imports torch's compiler stack (torch._dynamo, about 870 modules, 1.5 s). Autograd on the batched
graph would record and replay a graph per call; these passes are one call per operation.
:func:`descend` runs K SGD steps on the layers held apart (no flattening per step), what the
federated round uses for plain-SGD clients (:meth:`fedbound.tasks.base.Task._descend_on`).
The softmax is exp(Z - max Z) / sum: torch's softmax over 10 classes costs 3x these four
operations on CPU (its kernel vectorizes along the class axis).
"""
from __future__ import annotations

import math
from typing import Callable

import torch

#: a layer's parameters of k clients: W (k, out, in) and b (k, out)
Layer = tuple[torch.Tensor, torch.Tensor]


def layers_of(X: torch.Tensor, shapes: tuple[tuple[int, ...], ...]) -> list[Layer]:
    """The layers (W, b) of the flat parameters X (k, d) as views, for ``shapes`` (each layer's
    weight (out, in) then bias (out,), in the order of x)."""
    k, out, start = X.shape[0], [], 0
    for w_shape, b_shape in zip(shapes[::2], shapes[1::2]):
        size = math.prod(w_shape)
        W = X[:, start:start + size].view(k, *w_shape)
        start += size
        b = X[:, start:start + b_shape[0]]
        start += b_shape[0]
        out.append((W, b))
    return out


def flatten(layers: list[Layer]) -> torch.Tensor:
    """(k, d): the layers' (W, b) flattened back, layer by layer, weight then bias."""
    k = layers[0][0].shape[0]
    return torch.cat([p.reshape(k, -1) for layer in layers for p in layer], dim=1)


def forward(layers: list[Layer], features: torch.Tensor, activation: str) -> list[torch.Tensor]:
    """[A_0 = features, A_1, ..., A_{L-1}, Z_L]: each layer's input, then the logits (k, m, C)."""
    act = torch.tanh if activation == "tanh" else torch.relu
    A = [features]
    for i, (W, b) in enumerate(layers):
        Z = torch.baddbmm(b.unsqueeze(1), A[-1], W.transpose(1, 2))
        A.append(act(Z) if i + 1 < len(layers) else Z)
    return A


def sample_weights(mask: torch.Tensor) -> torch.Tensor:
    """(k, m, 1): w_js = mask_js / sum_s mask_js, the weight of sample s in client j's mean loss."""
    return (mask / mask.sum(dim=1, keepdim=True)).unsqueeze(2)


def losses(layers: list[Layer], features: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor,
           activation: str) -> torch.Tensor:
    """(k,): each client's mean cross-entropy over its real samples."""
    Z = forward(layers, features, activation)[-1]
    ce = torch.logsumexp(Z, dim=2) - Z.gather(2, labels.unsqueeze(2)).squeeze(2)
    return torch.sum(ce * sample_weights(mask).squeeze(2), dim=1)


def gradient(layers: list[Layer], features: torch.Tensor, labels: torch.Tensor,
             weights: torch.Tensor, activation: str) -> list[Layer]:
    """[(grad W_l, grad b_l)] of each client's weighted cross-entropy (module doc); ``weights``
    (k, m, 1) from :func:`sample_weights`."""
    A = forward(layers, features, activation)
    Z = A.pop()
    E = torch.exp(Z - Z.amax(dim=2, keepdim=True))
    dZ = E * (weights / E.sum(dim=2, keepdim=True))                       # w softmax(Z)
    dZ.scatter_add_(2, labels.unsqueeze(2), -weights)                     # - w onehot(y)
    grads: list[Layer] = []
    for i in range(len(layers) - 1, -1, -1):
        grads.append((torch.bmm(dZ.transpose(1, 2), A[i]), dZ.sum(dim=1)))
        if i:
            dA = torch.bmm(dZ, layers[i][0])
            if activation == "tanh":
                dZ = torch.addcmul(dA, dA * A[i], A[i], value=-1.0)      # dA (1 - A^2)
            else:
                dZ = dA * (A[i] > 0)
    return grads[::-1]


def descend(layers: list[Layer], lr: float, steps: int,
            batch: Callable[[int], tuple[torch.Tensor, torch.Tensor, torch.Tensor]],
            activation: str) -> list[Layer]:
    """``steps`` SGD steps W <- W - lr grad W, b <- b - lr grad b from ``layers`` (copied, the
    inputs are not modified); ``batch(s)`` gives step s's (features, labels, sample weights)."""
    layers = [(W.clone(memory_format=torch.contiguous_format),
               b.clone(memory_format=torch.contiguous_format)) for W, b in layers]
    for s in range(steps):
        for (W, b), (gW, gb) in zip(layers, gradient(layers, *batch(s), activation)):
            W.add_(gW, alpha=-lr)
            b.add_(gb, alpha=-lr)
    return layers


__all__ = ["Layer", "layers_of", "flatten", "forward", "sample_weights", "losses", "gradient",
           "descend"]
