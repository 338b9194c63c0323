"""A small MLP classifier held for all clients at once (the non-convex task of sdgt.md sec. 7.3,
fednova.md sec. 7.3 item 8, afga.md Q3, fedada2.md sec. 7.5 item 3).

f_i(x) = (1/m_i) sum_s CE(MLP_x(a_s), y_s) over client i's samples, x the flattened parameter vector of
length d (layer by layer, weight then bias, as ``nn.Sequential.named_parameters`` lists them). All clients are
evaluated in one call: torch.func.functional_call + vmap (+ grad) over the stacked parameters (n, d) and
the padded per-client data (:class:`ClientData`). Activation "tanh" by default (smooth, so f_i is L-smooth
as SD-GT Assumption 1 needs; SD-GT's MNIST model uses ReLU, available as "relu"). The constants L, mu, x*, f*
are unknown (None); stochastic gradients are per-client minibatches (sigma2 unknown, None) unless
batch_size is None (full gradients, sigma2 = 0). ``accuracy(x)`` is measured on a held-out test split.
"""
from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from fedbound import resources, validate
from fedbound.argtypes import Count, Positive, Range, Seed
from fedbound.errors import require
from fedbound.tasks.base import Points, Weights, as_float64, check_dtype, check_size
from fedbound.tasks.clientdata import ClientData, ClientDataTask
from fedbound.tasks.datasets import digits, gaussian_mixture, train_test_split
from fedbound.tasks.partition import dirichlet_partition, one_class_partition
from fedbound.tasks.registry import (D, FLOAT64, N, SEED, TaskSpec, dtype_of, n_or_default,
                                     register)

ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}
DATASETS = ("gaussian_mixture", "digits")
PARTITIONS = ("dirichlet", "one_class")
#: a number of classes >= 2
_Classes = Annotated[int, Range(2)]
#: the fraction of a data set held out for testing, in (0, 1)
_TestFraction = Annotated[float, Range(0.0, 1.0, low_open=True, high_open=True)]


class MLPClassifier(ClientDataTask):
    """MLP on per-client arrays features[i] (m_i, D), labels[i] (m_i,), evaluated on (test_features,
    test_labels). ``hidden``: widths of the hidden layers; ``init_seed`` seeds x0 (PyTorch's default
    uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) initialisation)."""

    def __init__(self, features: list[np.ndarray], labels: list[np.ndarray], test_features: np.ndarray,
                 test_labels: np.ndarray, *, hidden: Count | list[Count] = (32,),
                 activation: Literal["tanh", "relu"] = "tanh", num_classes: _Classes | None = None,
                 batch_size: int | None = None, init_seed: Seed = 0, weights: Weights | None = None,
                 x0: Points | None = None, dtype: torch.dtype = torch.float64):
        data = ClientData.from_lists(features, labels, dtype=check_dtype(dtype))
        test_x = as_float64("test_features", test_features, 2)
        test_y = np.asarray(test_labels)
        D = data.features.shape[2]
        require(test_x.ndim == 2 and test_x.shape[1] == D, f"test_features must have shape (N, {D}), got {test_x.shape}")
        require(test_y.shape == (test_x.shape[0],) and test_y.dtype.kind in "iu",
                f"test_labels must be {test_x.shape[0]} integers, got shape {test_y.shape}")
        top = max(int(data.labels.max()), int(test_y.max(initial=0))) + 1
        C = top if num_classes is None else check_size("num_classes", num_classes, low=2)
        require(top <= C, f"labels must be < num_classes={C}, got max label {top - 1}")
        activation = validate.one_of("activation", activation, ACTIVATIONS)
        hidden = (hidden,) if np.ndim(hidden) == 0 else hidden
        widths = [D] + [check_size("hidden width", h)
                        for h in validate.real_array("hidden", hidden, ndim=1)] + [C]
        resources.require_memory(f"an MLP with layer widths {widths}",
                                 3 * sum(a * b + b for a, b in zip(widths, widths[1:])))
        self.check_batch_size(batch_size)
        layers: list[nn.Module] = []
        for k in range(len(widths) - 1):
            layers += [nn.Linear(widths[k], widths[k + 1], dtype=dtype), ACTIVATIONS[activation]()]
        self.module = nn.Sequential(*layers[:-1])
        self._shapes = [(name, p.shape) for name, p in self.module.named_parameters()]
        d = sum(math.prod(shape) for _, shape in self._shapes)
        self._sizes_np = data.sizes.numpy()
        super().__init__(data.n, d, dtype=dtype, weights=weights, x0=x0)
        self.data, self.batch_size, self.num_classes = data, batch_size, C
        self.test_features = torch.as_tensor(test_x, dtype=dtype)
        self.test_labels = torch.as_tensor(test_y, dtype=torch.int64)
        if x0 is None:
            self.x0 = self._default_init(init_seed)
        self._sampling_sigma2 = 0.0 if batch_size is None else None

    @classmethod
    def generate(cls, n: Count, *, dataset: Literal["gaussian_mixture", "digits"] = "gaussian_mixture",
                 partition: Literal["dirichlet", "one_class"] = "dirichlet", alpha: Positive = 0.5,
                 hidden: Count | list[Count] = (32,), activation: Literal["tanh", "relu"] = "tanh",
                 num_samples: Count = 2000, dim: Count = 32, num_classes: _Classes = 10,
                 test_fraction: _TestFraction = 0.2, batch_size: int | None = None, seed: Seed = 0,
                 dtype: torch.dtype = torch.float64) -> "MLPClassifier":
        """A seeded task: ``dataset`` "gaussian_mixture" (num_samples, dim, num_classes) or "digits"
        (sklearn's bundled 8x8 digits), split into train/test, the train part partitioned over n clients by
        ``partition`` "dirichlet" (Dir(alpha) label skew) or "one_class"."""
        dataset = validate.one_of("dataset", dataset, DATASETS)
        partition = validate.one_of("partition", partition, PARTITIONS)
        if dataset == "digits":
            X, y = digits()
        else:
            X, y = gaussian_mixture(num_samples, dim, num_classes, seed=seed)
        Xtr, ytr, Xte, yte = train_test_split(X, y, test_fraction, seed=seed)
        parts = (dirichlet_partition(ytr, n, alpha, seed=seed) if partition == "dirichlet"
                 else one_class_partition(ytr, n, seed=seed))
        return cls([Xtr[p] for p in parts], [ytr[p] for p in parts], Xte, yte, hidden=hidden,
                   activation=activation, num_classes=int(y.max()) + 1,
                   batch_size=batch_size, init_seed=seed, dtype=dtype)

    def _default_init(self, seed: int) -> torch.Tensor:
        gen = torch.Generator(device="cpu").manual_seed(validate.seed(seed, "init_seed"))
        pieces = []
        for layer in self.module:   # same order as named_parameters: weight, then bias, layer by layer
            if isinstance(layer, nn.Linear):
                bound = 1.0 / math.sqrt(layer.in_features)
                for p in (layer.weight, layer.bias):
                    pieces.append((2.0 * torch.rand(p.numel(), generator=gen, dtype=torch.float64,
                                                    device=gen.device) - 1.0) * bound)
        return torch.cat(pieces).to(self.dtype)

    @property
    def parameter_shapes(self) -> tuple[tuple[int, ...], ...]:
        """Each layer's weight (out, in) then bias (out,), in the order of x (``unflatten``)."""
        return tuple(tuple(shape) for _, shape in self._shapes)

    def unflatten(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """Parameter dict of the module from the flat vector x (d,)."""
        out, start = {}, 0
        for name, shape in self._shapes:
            size = math.prod(shape)
            out[name] = x[start:start + size].view(shape)
            start += size
        return out

    def logits(self, x: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        return functional_call(self.module, self.unflatten(x), (features,))

    def _client_loss(self, x, feats, labels, mask):
        ce = nn.functional.cross_entropy(self.logits(x, feats), labels, reduction="none")
        return torch.sum(ce * mask) / torch.sum(mask)

    def _losses_on(self, X, data: ClientData) -> torch.Tensor:
        return vmap(self._client_loss)(X, data.features, data.labels, data.mask)

    def _grad_on(self, X, data: ClientData) -> torch.Tensor:
        return vmap(grad(self._client_loss))(X, data.features, data.labels, data.mask)


    def accuracy(self, x: Points) -> float:
        """Fraction of the held-out test samples classified correctly by the model x (d,)."""
        with torch.no_grad():
            pred = torch.argmax(self.logits(self.point(x), self.test_features), dim=1)
        return float(torch.mean((pred == self.test_labels).to(torch.float64)))


def _gmm(n=None, d=None, seed=0, float64=False):
    """``--task mlp-gmm``: an MLP on a Gaussian mixture of dim d = 16, 100 examples per client."""
    n = n_or_default(n)
    return MLPClassifier.generate(n, dataset="gaussian_mixture", dim=16 if d is None else d,
                                  num_samples=100 * n, seed=seed, dtype=dtype_of({"float64": float64}))


def _digits(n=None, seed=0, float64=False):
    """``--task mlp-digits``: an MLP on sklearn's bundled 8x8 digits."""
    return MLPClassifier.generate(n_or_default(n), dataset="digits", seed=seed,
                                  dtype=dtype_of({"float64": float64}))


register(TaskSpec("mlp-gmm", _gmm, "an MLP classifier on a Gaussian mixture (Dirichlet partition)",
                  (N, D, SEED, FLOAT64)))
register(TaskSpec("mlp-digits", _digits, "an MLP classifier on the 8x8 digits (Dirichlet partition)",
                  (N, SEED, FLOAT64)))
