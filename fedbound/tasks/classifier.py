"""A small MLP classifier held for all clients at once (the non-convex task of sdgt.md sec. 7.3,
fednova.md sec. 7.3 item 8, afga.md Q3, fedada2.md sec. 7.5 item 3).

f_i(x) = (1/m_i) sum_s CE(MLP_x(a_s), y_s) over client i's samples, x the flattened parameter vector of
length d (layer by layer, weight then bias, as ``nn.Sequential.named_parameters`` lists them). All clients are
evaluated in one call: the forward and backward passes written out as batched products over the stacked
parameters (n, d) and the padded per-client data (:class:`ClientData`), :mod:`fedbound.tasks.mlp` (why by hand:
there); plain local SGD steps run fused (``_descend_on``: the layers stay apart between the steps). Activation
"tanh" by default (smooth, so f_i is L-smooth as SD-GT Assumption 1 needs; SD-GT's MNIST model uses ReLU,
available as "relu"). The constants L, mu, x*, f* are unknown (None); stochastic gradients are per-client
minibatches (sigma2 unknown, None) unless batch_size is None (full gradients, sigma2 = 0), drawn from the run's
generator or in a given order (``batches``, :mod:`fedbound.tasks.batches`). ``accuracy(x)`` is measured on a
held-out test split.

A user's data (issue 35): the constructor takes per-client features and labels, an initial model ``x0`` and a
batch order; :meth:`MLPClassifier.from_arrays` takes a data set with the client of each sample (a partition),
and the presets ``mlp-gmm`` and ``mlp-digits`` take the same from a ``--data`` .npz file (:func:`read_npz`).
"""
from __future__ import annotations

import functools
import math
import os
from typing import Annotated, Callable, Literal

import numpy as np
import torch
from torch import nn

from fedbound import resources, validate
from fedbound.argtypes import Count, Positive, Range, Seed
from fedbound.errors import require
from fedbound.registry import Option, integer_option
from fedbound.validate import seed as check_seed
from fedbound.tasks.base import Points, Weights, as_float64, check_dtype, check_size, gather
from fedbound.tasks import mlp
from fedbound.tasks.clientdata import ClientData, ClientDataTask
from fedbound.tasks.datasets import digits, gaussian_mixture, train_test_split
from fedbound.tasks.partition import dirichlet_partition, one_class_partition
from fedbound.tasks.npz import load_arrays
from fedbound.tasks.registry import (DATA, D, FLOAT64, N, SEED, WEIGHTS, TaskSpec, dtype_of,
                                     n_or_default, register)

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
    uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) initialisation) unless ``x0`` is given; ``batches``:
    the order of the minibatches (:func:`fedbound.tasks.batches.batch_order`: None, drawn from the
    run's generator; a seed per client and round; explicit indices)."""

    def __init__(self, features: list[np.ndarray], labels: list[np.ndarray], test_features: np.ndarray,
                 test_labels: np.ndarray, *, hidden: Count | list[Count] = (32,),
                 activation: Literal["tanh", "relu"] = "tanh", num_classes: _Classes | None = None,
                 batch_size: int | None = None, init_seed: Seed = 0, weights: Weights | None = None,
                 x0: Points | None = None, dtype: torch.dtype = torch.float64, batches: object = None):
        data, features_with_ones = ClientData.with_ones_from_lists(features, labels, dtype=check_dtype(dtype))
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
        self._features_with_ones = features_with_ones   # [features | 1], the data's features a view of it
        self.activation = activation
        self.set_batches(batches)
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
                 dtype: torch.dtype = torch.float64, weights: Weights | None = None,
                 batches: object = None) -> "MLPClassifier":
        """A seeded task: ``dataset`` "gaussian_mixture" (num_samples, dim, num_classes) or "digits"
        (sklearn's bundled 8x8 digits), split into train/test, the train part partitioned over n clients by
        ``partition`` "dirichlet" (Dir(alpha) label skew) or "one_class"; ``weights`` and ``batches``
        as the constructor takes them."""
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
                   batch_size=batch_size, init_seed=seed, dtype=dtype, weights=weights, batches=batches)

    @classmethod
    def from_arrays(cls, features: np.ndarray, labels: np.ndarray, partition: np.ndarray, *,
                    n: Count | None = None, test_features: np.ndarray | None = None,
                    test_labels: np.ndarray | None = None, **options) -> "MLPClassifier":
        """A user's data set, features (N, D) and labels (N,), over the clients that
        ``partition`` (N,) names for its rows (integers in [0, n); n defaults to the largest + 1;
        every client must hold a row; client i's rows in their order in the data set), tested on
        (test_features, test_labels) (default: the training rows). ``options``: the constructor's
        (hidden, activation, num_classes, batch_size, batches, x0, weights, dtype, ...)."""
        X = np.asarray(features)   # checked client by client (ClientData.from_lists): no copy here
        require(X.ndim == 2 and X.shape[0] >= 1, f"features must have shape (N, D), got {validate.show(features)}")
        y = np.asarray(labels)
        require(y.shape == (X.shape[0],) and y.dtype.kind in "iu",
                f"labels must be {X.shape[0]} integers (one per row of features), got "
                f"{validate.show(labels)}")
        owner = np.asarray(partition)
        require(owner.shape == (X.shape[0],) and owner.dtype.kind in "iu",
                f"partition must be {X.shape[0]} client indices (one per row of features), got "
                f"{validate.show(partition)}")
        require(int(owner.min()) >= 0, f"partition must hold client indices >= 0, got {int(owner.min())}")
        n = int(owner.max()) + 1 if n is None else check_size("n", n)
        require(int(owner.max()) < n, f"partition names client {int(owner.max())}, but n = {n}")
        counts = np.bincount(owner, minlength=n)
        empty = np.flatnonzero(counts == 0)
        require(empty.size == 0, f"every client must hold a row of the data; client {empty[:1].tolist()} "
                                 f"has none ({empty.size} of n = {n} clients are empty)")
        rows = np.split(np.argsort(owner, kind="stable"), np.cumsum(counts)[:-1])
        if test_features is None and test_labels is None:
            test_features, test_labels = X, y
        require(test_features is not None and test_labels is not None,
                "give test_features and test_labels together")
        return cls([X[r] for r in rows], [y[r] for r in rows], test_features, test_labels, **options)

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

    @functools.cached_property
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
        """The logits (m, C) of the model x (d,) on ``features`` (m, D)."""
        layers = mlp.augmented(x.reshape(1, -1), self.parameter_shapes)
        return mlp.forward(layers, mlp.with_ones(features.unsqueeze(0)), self.activation).squeeze(0)

    def _losses_on(self, X, data: ClientData) -> torch.Tensor:
        return mlp.losses(mlp.augmented(X, self.parameter_shapes), mlp.with_ones(data.features),
                          data.labels, data.mask, self.activation)

    @torch.no_grad()   # the backward pass is written out: nothing for autograd to record
    def _grad_on(self, X, data: ClientData) -> torch.Tensor:
        grads = mlp.gradient(mlp.augmented(X, self.parameter_shapes),
                             *self._passes(mlp.with_ones(data.features), data.labels, data.mask),
                             self.activation)
        return mlp.flatten(grads)

    def _passes(self, features_with_ones, labels, mask, ops=mlp.BACKENDS["torch"]) -> tuple:
        """(features with ones, targets, sample weights) of a batch, as
        :func:`fedbound.tasks.mlp.gradient` takes them, in the arrays of ``ops``
        (:data:`fedbound.tasks.mlp.BACKENDS`)."""
        w = ops.sample_weights(mask)
        return features_with_ones, ops.targets(labels, w, self.num_classes), w

    @functools.cached_property
    def _full_batches(self) -> dict[str, torch.Tensor]:
        """Every client's full batch as the fused steps take it (:meth:`_passes`: [features | 1],
        targets, sample weights), computed once (a dict, so that :meth:`to` moves it): a round
        gathers its participants' rows (the targets' one-hot and the weights' division took 22 us
        of a 0.6 ms round of 10 clients; the targets and weights add (C + 1) / (D + 1) to the
        samples' memory)."""
        return dict(zip(("features", "targets", "weights"),
                        self._passes(self._features_with_ones, self.data.labels, self.data.mask)))

    def _descend_on(self, X, view, lr, steps, generator, round_index, step):
        """``steps`` plain SGD steps of the clients of ``view`` from X, on the augmented layers
        (:func:`fedbound.tasks.mlp.descend_rows`), the batches taken from the task's arrays in
        those of its backend (only the samples the steps use: not the view's gathered data); the
        compiled steps read them where they are (:class:`fedbound.tasks.mlp.GatheredRows`).
        Minibatches: the positions of every step drawn first, in the order ``steps`` gradient
        calls draw them (nothing else is drawn between), then the samples of all steps side by
        side (step s on its B of them)."""
        backend = mlp.backend_for(X)
        ops = mlp.BACKENDS[backend]
        data = self.data
        if self.batch_size is None:
            m = data.features.shape[1]
            if backend == "compiled":
                rows = mlp.GatheredRows(self._features_with_ones, data.labels, data.mask, view.ids,
                                        None, None, m, self.num_classes)
            else:   # the targets and weights computed once (_full_batches), the rows gathered
                ids = None if view.idx is None else ops.array(view.ids)
                rows = tuple(ops.rows(ops.array(t), ids) for t in self._full_batches.values())
            return mlp.descend_rows(X, self.parameter_shapes, lr, rows, [(0, m)] * steps,
                                    self.activation, backend)
        if self.keyed_batches:
            sizes = data.sizes if view.idx is None else gather(data.sizes, view.idx)
            at, valid = self.keyed_positions(sizes, view.ids, round_index, step, steps)
        else:
            at, valid = self.batch_positions(view.data, generator, None, round_index, step, steps)
        width = at.shape[1] // steps
        rows = mlp.GatheredRows(self._features_with_ones, data.labels, data.mask, view.ids, at, valid,
                                width, self.num_classes)
        return mlp.descend_rows(X, self.parameter_shapes, lr, rows,
                                [(s * width, (s + 1) * width) for s in range(steps)], self.activation, backend)

    @functools.cached_property
    def gradient_flops(self) -> float:
        """Flops of one client's gradient: per sample 2 per weight forward, 2 for its gradient and
        2 for the backward product of every layer after the first, on the padded samples (all
        of them, or a minibatch of batch_size)."""
        sizes = [math.prod(shape) for shape in self.parameter_shapes[::2]]
        per_sample = 4 * sum(sizes) + 2 * sum(sizes[1:])
        rows = self.data.features.shape[1]
        return float(per_sample * (rows if self.batch_size is None else min(rows, self.batch_size)))

    def accuracy(self, x: Points) -> float:
        """Fraction of the held-out test samples classified correctly by the model x (d,)."""
        with torch.no_grad():
            pred = torch.argmax(self.logits(self.point(x), self.test_features), dim=1)
        return float(torch.mean((pred == self.test_labels).to(torch.float64)))


#: the keys of a user's .npz file for the MLP presets (each optional, features and labels together)
NPZ_KEYS = ("features", "labels", "partition", "x0", "test_features", "test_labels")


def read_npz(path: str | os.PathLike, n: Count | None, seed: Seed, preset_split: Callable[[], tuple],
             **options) -> MLPClassifier:
    """The task of a preset on a user's .npz file ``path`` (:data:`NPZ_KEYS`, each optional):
    ``features`` (N, D) and ``labels`` (N,) replace the preset's training data
    (``preset_split()``: its train and test arrays), ``partition`` (N,) the client of each row
    (default: the preset's Dirichlet(0.5) split over n clients), ``x0`` (d,) the initial model
    (default: the seeded initialisation), ``test_features`` and ``test_labels`` the test set
    (default: with the user's features, the training rows; else the preset's test split)."""
    arrays = load_arrays(path, (), NPZ_KEYS, "features (N, D), labels (N,), partition (N,), x0 (d,), "
                                            "test_features, test_labels (each optional)")
    require(arrays, f"data file {os.fspath(path)!r} holds none of the keys {', '.join(NPZ_KEYS)}")
    require(("features" in arrays) == ("labels" in arrays), "give features and labels together")
    require(("test_features" in arrays) == ("test_labels" in arrays),
            "give test_features and test_labels together")
    if "features" in arrays:
        Xtr, ytr = arrays["features"], arrays["labels"]
        Xte, yte = arrays.get("test_features", Xtr), arrays.get("test_labels", ytr)
    else:
        Xtr, ytr, Xte, yte = preset_split()
        Xte, yte = arrays.get("test_features", Xte), arrays.get("test_labels", yte)
    partition = arrays.get("partition")
    if partition is None:
        parts = dirichlet_partition(np.asarray(ytr), n_or_default(n), 0.5, seed=seed)
        partition = np.empty(len(ytr), dtype=np.int64)
        for i, rows in enumerate(parts):
            partition[rows] = i
    return MLPClassifier.from_arrays(Xtr, ytr, partition, n=n, test_features=Xte, test_labels=yte,
                                     x0=arrays.get("x0"), init_seed=seed, **options)


def _preset(dataset: str, n, seed, float64, data, batch_size, batch_seed, weights, **generate):
    """A preset's task: generated, or on a user's data file (:func:`read_npz`)."""
    options = dict(batch_size=batch_size, batches=batch_seed, dtype=dtype_of({"float64": float64}),
                   weights=weights)
    require(batch_seed is None or batch_size is not None,
            "batch_seed orders minibatches: give batch_size too")
    if data is None:
        return MLPClassifier.generate(n_or_default(n), dataset=dataset, seed=seed, **generate, **options)

    def split():
        X, y = digits() if dataset == "digits" else gaussian_mixture(
            generate["num_samples"], generate["dim"], seed=seed)
        return train_test_split(X, y, 0.2, seed=seed)
    return read_npz(data, n, seed, split, **options)


def _gmm(n=None, d=None, seed=0, float64=False, data=None, batch_size=None, batch_seed=None,
         weights="uniform"):
    """``--task mlp-gmm``: an MLP on a Gaussian mixture of dim d = 16, 100 examples per client."""
    require(data is None or d is None, "d comes from the data file's features; drop it")
    return _preset("gaussian_mixture", n, seed, float64, data, batch_size, batch_seed, weights,
                   dim=16 if d is None else d, num_samples=100 * n_or_default(n))


def _digits(n=None, seed=0, float64=False, data=None, batch_size=None, batch_seed=None,
            weights="uniform"):
    """``--task mlp-digits``: an MLP on sklearn's bundled 8x8 digits."""
    return _preset("digits", n, seed, float64, data, batch_size, batch_seed, weights)


BATCH_SIZE = integer_option("batch_size", "samples per minibatch of each client's stochastic gradients "
                            "(default: every sample, full gradients)", low=1, high=2 ** 31,
                            examples=(2, 5))
BATCH_SEED = Option("batch_seed", "seed of each client's minibatch order per round, replayable "
                    "elsewhere (fedbound.tasks.batches.SeededBatches; default: drawn from the run's "
                    "generator); needs --batch-size", lambda label, v: check_seed(v, label), int,
                    examples=(0, 7))
#: the options of the MLP presets (besides their data set's own)
MLP_OPTIONS = (DATA, N, SEED, FLOAT64, WEIGHTS, BATCH_SIZE, BATCH_SEED)

register(TaskSpec("mlp-gmm", _gmm, "an MLP classifier on a Gaussian mixture (Dirichlet partition)",
                  MLP_OPTIONS[:2] + (D,) + MLP_OPTIONS[2:]))
register(TaskSpec("mlp-digits", _digits, "an MLP classifier on the 8x8 digits (Dirichlet partition)",
                  MLP_OPTIONS))
