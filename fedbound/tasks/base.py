"""The Task base class: n local objectives f_1..f_n on R^d, held for all clients at once.

Problem (SD-GT eq. (1)-(2) [003_3166d581b98362e1.txt L18-L19]; FedNova eq. (1) [001 L42-L48]):

    min_x f(x) = sum_i p_i f_i(x),   p = ``weights`` (default uniform 1/n, the contract's (1/n) sum_i f_i;
                                     FedNova's p_i = n_i / n can be passed instead).

Points are stacked: X of shape (n, d), row i is client i's point. A single point x of shape (d,) is
accepted everywhere an (n, d) stack is, and means "every client at x".

Constants (attributes; ``None`` where unknown, e.g. for the MLP):
* L, mu: per-client smoothness / strong convexity as the papers assume them, L = sup_i sup_x
  lambda_max(Hess f_i(x)) and mu = inf_i inf_x lambda_min(Hess f_i(x)) (mu = 0 if some f_i is not strongly
  convex; SD-GT Assumptions 1, 4 [L218-L221, L266-L270], FedNova Assumption 1, AFGA Assumption 4.1).
* L_global, mu_global: the same for the global f (SD-GT's synthetic least squares is only globally strongly
  convex, sdgt.md flag F34).
* sigma2: sup_{i,x} E||g_i(x) - grad f_i(x)||^2 of ``stochastic_grad`` (SD-GT Assumption 3 [L228-L231]).
* x_star, f_star: a global minimiser (d,) and f(x_star); x0: the default initial point (d,).
* G, G_inf: sup_{i,x} ||g_i|| and sup_{i,x,j} |[g_i]_j| of the stochastic gradients (AFGA Assumption 4.3
  [000 L255-L256], FedAda2 Assumption 2 [004 L134-L136]); inf when unbounded.
* bounds: names of the constants above that are upper bounds rather than exact values.

Subsets of clients (a federated round computes only its participants): every per-client method takes
``clients=idx`` (int64 indices, repeats allowed), and then X has shape (len(idx), d), row j being client
idx[j]'s point; ``task.clients(idx)`` gathers the clients' data once and gives the same methods for many
calls (the local steps of one round). A round thus costs in proportion to its participants.

Aggregation weights: ``weights`` p_i (default uniform), or proportional to the clients' numbers of examples
``num_examples`` n_i (``weights="examples"``: p_i = n_i / sum_j n_j, what Flower's FedAvg uses).

Heterogeneity (methods, see :mod:`fedbound.tasks.heterogeneity`): ``kappa2``/``beta2_min`` (FedNova),
``sigma_g2``, ``intra_cluster``, ``inter_cluster`` (AFGA). Each returns the constant of the assumption (the sup
over x; float('inf') when unbounded, None when the task cannot compute it) or, with ``at=x``, the measure at x.
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import math

import numpy as np
import torch

from fedbound import validate
from fedbound.argtypes import Count, NonNegative, NonNegativeInt, ProbabilityArray
from fedbound.errors import InputTypeError, ValidationError, require
from fedbound.tasks.heterogeneity import (
    AtLeastOne, check_weights, fednova_matrix, inter_cluster_matrix, intra_cluster_matrices, measure_at,
    sigma_g_matrix,
)
from fedbound.tasks.noise import check_noise, noise_from_normals


#: largest |entry| of user data: squares and sums of squares (Hessians, Lipschitz constants) of
#: entries up to 1e100 stay far inside the float64 range
DATA_MAX_ABS = 1e100

#: bytes of client gradients and data one block of :meth:`Task.global_grad` holds (16 MiB)
METRIC_BLOCK_BYTES = 1 << 24

#: a point x (d,) or stacked points X (k, d): a tensor, or anything numpy turns into a real array
Points = torch.Tensor | np.ndarray
#: client indices (int64, repeats allowed)
Indices = torch.Tensor | np.ndarray
#: aggregation weights p_i (n,), or "uniform" / "examples" (:meth:`Task.resolve_weights`)
Weights = ProbabilityArray | str


def check_size(name: str, value: int, low: int = 1) -> int:
    """An int >= low (validate.integer), or a FedboundError naming the value."""
    return validate.integer(name, value, low=low)


def check_dtype(dtype: torch.dtype) -> torch.dtype:
    """``dtype`` if it is torch.float64 or torch.float32, else a ValidationError."""
    require(isinstance(dtype, torch.dtype) and dtype in (torch.float64, torch.float32),
            f"dtype must be torch.float64 or torch.float32, got {dtype!r}")
    return dtype


def as_float64(name: str, array: np.ndarray, ndim: int, *, copy: bool = True) -> np.ndarray:
    """A real, finite float64 numpy array with ``ndim`` dimensions and entries of absolute value at
    most :data:`DATA_MAX_ABS` (validate.real_array), or a FedboundError naming it.

    ``copy=False``: a float64 numpy array (or CPU tensor) that is C-contiguous, aligned and
    writeable comes back as it is, shared, not copied (a data set of hundreds of MB), and is
    checked without temporaries: two reductions, min >= -DATA_MAX_ABS and max <= DATA_MAX_ABS,
    false for any NaN or infinity; anything else, or a failed check (for its message), goes
    through validate.real_array and comes back C-contiguous (a view of the stacked rows of the
    result is then free)."""
    if not copy:
        raw = array
        if isinstance(raw, torch.Tensor) and raw.dtype == torch.float64 and raw.device.type == "cpu":
            raw = raw.detach().resolve_conj().resolve_neg().numpy()
        if (type(raw) is np.ndarray and raw.dtype == np.float64 and raw.ndim == ndim and raw.size
                and raw.flags.c_contiguous and raw.flags.aligned and raw.flags.writeable):
            with np.errstate(invalid="ignore"):
                if raw.min() >= -DATA_MAX_ABS and raw.max() <= DATA_MAX_ABS:
                    return raw
        return np.ascontiguousarray(validate.real_array(name, array, ndim=ndim, max_abs=DATA_MAX_ABS))
    return validate.real_array(name, array, ndim=ndim, max_abs=DATA_MAX_ABS)


def gather(data: object, idx: torch.Tensor | slice):
    """The rows ``idx`` (int64 indices, or a slice: views, no copy) of per-client data: a tensor or
    numpy array (clients on axis 0), or a dict or dataclass of them (anything else is an
    InputTypeError naming ``data``)."""
    if isinstance(idx, slice):
        if isinstance(data, (torch.Tensor, np.ndarray)):
            return data[idx]
    elif isinstance(data, torch.Tensor):
        return data.index_select(0, idx)
    elif isinstance(data, np.ndarray):
        return data[idx.cpu().numpy()]
    if isinstance(data, dict):
        return {k: gather(v, idx) for k, v in data.items()}
    if dataclasses.is_dataclass(data):
        return type(data)(**{f.name: gather(getattr(data, f.name), idx) for f in dataclasses.fields(data)})
    raise InputTypeError(f"data must be a tensor, a numpy array, or a dict or dataclass of them, "
                         f"got {validate.show(data)}")


def _within(idx: torch.Tensor, n: int) -> bool:
    """0 <= idx < n for every entry of the non-empty int64 tensor ``idx`` (one reduction)."""
    low, high = torch.aminmax(idx)
    return int(low) >= 0 and int(high) < n


def _on_device(value: object, device: torch.device):
    """``value`` with its tensors on ``device``: a tensor, or a dict or dataclass holding tensors
    (other values as they are)."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {k: _on_device(v, device) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: _on_device(getattr(value, f.name), device)
                                             for f in dataclasses.fields(value) if f.init})
    return value


class Task:
    """Base class of all tasks; subclasses implement ``client_data`` (per-client tensors, clients on axis 0),
    ``_losses_on(X, data)`` and ``_grad_on(X, data)`` (and optionally ``_sampled_grad_on``,
    ``_sup_measure``, ``beta2_min``) and set the constants in ``__init__``."""

    device = torch.device("cpu")
    L: float | None = None
    mu: float | None = None
    L_global: float | None = None
    mu_global: float | None = None
    x_star: torch.Tensor | None = None
    f_star: float | None = None
    bounds: frozenset = frozenset()
    _sampling_sigma2: float | None = 0.0
    _G_own: float | None = None        # sup ||g_i|| of the task's own stochastic gradients
    _G_inf_own: float | None = None    # sup |[g_i]_j| of the same
    _noises: tuple = ()

    def __init__(self, n: Count, d: Count, *, dtype: torch.dtype = torch.float64,
                 weights: Weights | None = None, x0: Points | None = None):
        self.n = check_size("n", n)
        self.d = check_size("d", d)
        self.dtype = check_dtype(dtype)
        weights = self.resolve_weights(weights, self.num_examples) if isinstance(weights, str) else weights
        w = np.full(self.n, 1.0 / self.n) if weights is None else check_weights(weights, self.n)
        self._weights_np = w
        self.weights = torch.as_tensor(w, dtype=dtype)
        if x0 is not None:
            shape = tuple(np.shape(x0))
            require(shape == (self.d,), f"x0 must have shape ({self.d},) (d = {self.d} parameters), "
                                        f"got {shape}")
        self.x0 = torch.zeros(self.d, dtype=dtype) if x0 is None else self.point(x0)

    @property
    def parameter_shapes(self) -> tuple[tuple[int, ...], ...]:
        """Shapes of the model's tensors, flattened in this order into x (d,): one vector (d,) unless
        the task has structured parameters (an MLP's weight matrices and biases). SM3's covers
        (fedbound.algorithms.optim.client.sm3) and FedAda2's cost model are built from them."""
        return ((self.d,),)

    @property
    def num_examples(self) -> np.ndarray:
        """n_i, the number of examples of each client (int64, (n,)); 1 each for tasks without data."""
        return np.ones(self.n, dtype=np.int64)

    @staticmethod
    def resolve_weights(weights: Weights | None, num_examples: np.ndarray):
        """``weights`` as given to a task constructor: None/"uniform" -> None (p_i = 1/n), "examples" ->
        n_i / sum_j n_j, an array -> itself."""
        if isinstance(weights, str):
            require(weights in ("uniform", "examples"),
                    f"weights must be 'uniform', 'examples' or an array, got {weights!r}")
            return None if weights == "uniform" else num_examples / num_examples.sum()
        return weights

    def to(self, device: str) -> "Task":
        """A copy of the task whose tensors live on ``device`` (``"cpu"``, ``"cuda"``,
        ``"cuda:1"``): its clients' data, weights, x0 and the constants computed so far (those
        computed later follow); the task itself is unchanged. Algorithms built on the copy
        (:func:`fedbound.algorithms.registry.build`) and its runs
        (:func:`fedbound.algorithms.run`) compute there; randomness is still drawn on the CPU, so
        a seed gives the same participants and noise on every device."""
        try:
            device = torch.device(device)
        except (RuntimeError, TypeError):
            raise ValidationError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {device!r}") from None
        require(device.type in ("cpu", "cuda"), f"device must be 'cpu' or 'cuda', got {device.type!r}")
        if device.type == "cuda":
            require(torch.cuda.is_available(), "device 'cuda' requested, but torch sees no CUDA "
                                               "GPU here (torch.cuda.is_available() is False)")
            if device.index is None:
                device = torch.device("cuda", torch.cuda.current_device())
        moved = copy.copy(self)
        moved.__dict__.update({name: _on_device(value, device) for name, value in vars(self).items()})
        moved.device = device
        return moved

    def computing(self) -> contextlib.AbstractContextManager:
        """The context in which algorithms on this task build and run: torch creates tensors on
        the task's device (``torch.device(self.device)``), or nothing to do when that is torch's
        default already (the CPU, usually). torch's device mode intercepts every torch call in
        Python (about 2 us each, 0.25 ms of a 0.5 ms round of 10 small clients), so it is entered
        only where it changes something."""
        if self.device == torch.get_default_device():
            return contextlib.nullcontext()
        return torch.device(self.device)

    # ---- points ----------------------------------------------------------------------------------
    def points(self, X: Points, clients: torch.Tensor | None = None) -> torch.Tensor:
        """X as a (k, d) tensor of the task's dtype, k = n (all clients) or len(clients); a (d,) point is
        broadcast to every row."""
        X = torch.as_tensor(X, dtype=self.dtype, device=self.device)
        k = self.n if clients is None else int(clients.shape[0])
        if X.shape == (self.d,):
            X = X.expand(k, self.d)
        require(X.shape == (k, self.d), f"X must have shape ({k}, {self.d}) or ({self.d},), got {tuple(X.shape)}")
        return X

    def point(self, x: Points) -> torch.Tensor:
        """x as a (d,) tensor of the task's dtype."""
        x = torch.as_tensor(x, dtype=self.dtype, device=self.device)
        require(x.shape == (self.d,), f"x must have shape ({self.d},), got {tuple(x.shape)}")
        return x

    def check_clients(self, clients: Indices) -> torch.Tensor:
        """``clients`` as int64 indices in [0, n) (repeats allowed), shape (k,)."""
        idx = clients if isinstance(clients, torch.Tensor) else torch.as_tensor(clients)
        if idx.dtype is not torch.int64 or idx.ndim != 1 or idx.device != self.device:
            require(idx.ndim == 1 and not idx.is_floating_point() and idx.dtype != torch.bool,
                    f"clients must be a 1-d array of integer indices, got {tuple(idx.shape)} {idx.dtype}")
            idx = idx.to(device=self.device, dtype=torch.int64)
        if idx.numel() and not _within(idx, self.n):   # (the message is formatted on failure only)
            raise ValidationError(f"clients must be indices in [0, {self.n - 1}], got {idx.tolist()[:8]}")
        return idx

    # ---- per-client data ------------------------------------------------------------------------
    def client_data(self):
        """The per-client data (tensors with the clients on axis 0, in a dict or dataclass)."""
        raise NotImplementedError

    def _data(self, clients):
        return self.client_data() if clients is None else gather(self.client_data(), clients)

    def clients(self, clients: Indices | slice | None = None) -> "ClientView":
        """The clients ``clients`` (indices; None: all n; a slice: a contiguous range, data not
        copied) with their data gathered once (for many gradient calls)."""
        if clients is None or isinstance(clients, slice):
            return ClientView(self, clients)
        return ClientView(self, self.check_clients(clients))

    @functools.cached_property
    def client_bytes(self) -> int:
        """Bytes of per-client data held for one client (the cache footprint of its gradients;
        computed once: a task's data does not change)."""
        total = 0

        def add(data):
            nonlocal total
            if isinstance(data, (torch.Tensor, np.ndarray)):
                total += data.nbytes
            elif isinstance(data, dict):
                for v in data.values():
                    add(v)
            elif dataclasses.is_dataclass(data):
                for f in dataclasses.fields(data):
                    add(getattr(data, f.name))
        add(self.client_data())
        return max(1, total // self.n)

    @property
    def gradient_flops(self) -> float:
        """Flops of one client's exact gradient, about 4 per number of its data (a residual pass
        and a transposed pass, as for least squares); what the thread policy of a run weighs
        (:mod:`fedbound.algorithms.threads`)."""
        return 4.0 * self.client_bytes / self.dtype.itemsize

    # ---- objectives ---------------------------------------------------------------------------
    def _losses_on(self, X: torch.Tensor, data) -> torch.Tensor:
        """(k,) losses of the clients whose data is ``data`` at their points X (k, d)."""
        raise NotImplementedError

    def _grad_on(self, X: torch.Tensor, data) -> torch.Tensor:
        """(k, d) exact gradients of the clients whose data is ``data``."""
        raise NotImplementedError

    def _sampled_grad_on(self, X: torch.Tensor, data, generator: torch.Generator) -> torch.Tensor:
        """The task's own sampling (minibatches, heavy-tailed noise); deterministic by default."""
        return self._grad_on(X, data)

    def local_losses(self, X: Points, clients: Indices | None = None) -> torch.Tensor:
        """(k,) tensor, entry j = f_{i_j}(X[j]) (i_j = j, or clients[j])."""
        clients = None if clients is None else self.check_clients(clients)
        return self._losses_on(self.points(X, clients), self._data(clients))

    def grad(self, X: Points, clients: Indices | None = None) -> torch.Tensor:
        """(k, d) tensor, row j = grad f_{i_j}(X[j]) (exact)."""
        clients = None if clients is None else self.check_clients(clients)
        return self._grad_on(self.points(X, clients), self._data(clients))

    def loss(self, x: Points) -> float:
        """f(x) = sum_i p_i f_i(x) for x of shape (d,) (over blocks of clients, as
        :meth:`global_grad`)."""
        return float(self._weighted_loss(self.point(x)))

    def _weighted_loss(self, x: torch.Tensor) -> torch.Tensor:
        """sum_i p_i f_i(x), a 0-d tensor, over blocks of clients as :meth:`global_grad`."""
        blocks = self._metric_blocks(x)
        if blocks is None:
            return self.weights @ self.local_losses(x)
        return sum(view.weights @ view.local_losses(x.expand(view.n, self.d)) for view in blocks)

    def global_grad(self, x: Points) -> torch.Tensor:
        """grad f(x) = sum_i p_i grad f_i(x), shape (d,): over blocks of clients whose gradients
        and data take at most :data:`METRIC_BLOCK_BYTES` (the metrics of a run of 10^4 clients
        held their (n, d) gradients at once: memory grew with n); one block where all fit."""
        x = self.point(x)
        blocks = self._metric_blocks(x)
        if blocks is None:
            return self.weights @ self.grad(x)
        total = torch.zeros(self.d, dtype=self.dtype, device=self.device)
        for view in blocks:
            total += view.weights @ view.grad(x.expand(view.n, self.d))
        return total

    def _metric_blocks(self, x: torch.Tensor):
        """The clients in blocks of at most METRIC_BLOCK_BYTES of gradients and data (views), or
        None where all fit in one."""
        rows = max(1, METRIC_BLOCK_BYTES // (self.d * x.element_size() + self.client_bytes))
        if rows >= self.n:
            return None
        return (self.clients(slice(start, min(start + rows, self.n))) for start in range(0, self.n, rows))

    def global_metrics(self, X: Points) -> tuple[torch.Tensor, torch.Tensor]:
        """f(x_r) (R,) and grad f(x_r) (R, d) for the rows x_r of ``X`` (R, d), what a run records
        of its global model; quadratic tasks compute both from a closed form in O(d^2) per point
        (:meth:`fedbound.tasks.quadratic.QuadraticTask.global_metrics`), others by passes over
        every client's data."""
        X = torch.as_tensor(X, dtype=self.dtype, device=self.device)
        require(X.ndim == 2 and X.shape[1] == self.d,
                f"X must have shape (R, {self.d}), got {tuple(X.shape)}")
        losses = torch.stack([self._weighted_loss(x) for x in X])
        return losses, torch.stack([self.global_grad(x) for x in X])

    # ---- stochastic gradients and noise ---------------------------------------------------------
    def _stochastic_on(self, X: torch.Tensor, data, generator: torch.Generator) -> torch.Tensor:
        return self.add_noise(self._sampled_grad_on(X, data, generator), [generator])

    #: whether the stochastic gradients take their samples by client, round and local step (a
    #: batch order, :mod:`fedbound.tasks.batches`): the local steps' oracle then calls
    #: ``_keyed_grad_on`` with them
    keyed_batches = False

    def _keyed_grad_on(self, X: torch.Tensor, data, generator: torch.Generator, clients: torch.Tensor,
                       round_index: int | None, step: int) -> torch.Tensor:
        """The stochastic gradients of the clients ``clients`` of ``data`` at local step ``step``
        of round ``round_index`` (tasks with ``keyed_batches``)."""
        raise NotImplementedError

    def _descend_on(self, X: torch.Tensor, view: "ClientView", lr: float, steps: int,
                    generator: torch.Generator, round_index: int | None, step: int) -> torch.Tensor:
        """X (k, d) after ``steps`` plain SGD steps X <- X - lr g(X) of the clients of ``view``
        (their data ``view.data``, or the task's own arrays at ``view.idx``), from local step
        ``step`` of round ``round_index``, drawing the randomness of as many stochastic gradients;
        a task that runs them fused implements it (:class:`Oracle`'s ``descend``)."""
        raise NotImplementedError

    @property
    def noises(self) -> tuple[tuple[float, str], ...]:
        """The added gradient noises (sigma, kind) (:meth:`with_noise`), in the order
        ``stochastic_grad`` adds them."""
        return self._noises

    @property
    def samples_gradients(self) -> bool:
        """Whether the task's own stochastic gradient is random (minibatches, heavy-tailed noise);
        False: ``stochastic_grad`` is the exact gradient plus the added noises."""
        return type(self)._sampled_grad_on is not Task._sampled_grad_on

    def add_noise(self, G: torch.Tensor, generators: list[torch.Generator],
                  counts: list[NonNegativeInt] | None = None) -> torch.Tensor:
        """G (k, d) plus the added gradient noises, exactly as ``stochastic_grad`` adds them: rows
        in consecutive groups of ``counts`` (default: one group of k), group b drawn from
        ``generators[b]`` (noise by noise, each generator drawing its rows' normals in order), so
        that several independent runs stacked row-wise (seeds batched) get the numbers of their
        own runs."""
        if not self._noises:
            return G
        counts = [int(G.shape[0])] if counts is None else [int(c) for c in counts]
        if len(counts) != len(generators) or sum(counts) != G.shape[0]:
            raise ValidationError(f"add_noise: {len(generators)} generators for row groups {counts} "
                                  f"of {G.shape[0]} rows")
        for sigma, kind in self._noises:
            z = torch.empty(int(G.shape[0]), self.d, dtype=torch.float64, device="cpu")
            for part, generator in zip(z.split(counts), generators):   # drawn on the CPU
                part.normal_(generator=generator)   # randn's numbers, half its call's cost
            G = G + noise_from_normals(z, sigma, kind).to(device=G.device, dtype=self.dtype)
        return G

    def stochastic_grad(self, X: Points, generator: torch.Generator,
                        clients: Indices | None = None) -> torch.Tensor:
        """(k, d) unbiased estimates of grad f_{i_j}(X[j]), independent across rows and calls (a client
        listed twice gets independent noise per copy); E||g_i - grad f_i||^2 <= sigma2 (with equality for
        the added noise). Randomness is drawn for the k rows only."""
        clients = None if clients is None else self.check_clients(clients)
        return self._stochastic_on(self.points(X, clients), self._data(clients), generator)

    @property
    def sigma2(self) -> float | None:
        """Gradient-noise variance: the task's own sampling variance plus every added sigma^2."""
        if self._sampling_sigma2 is None:
            return None
        return self._sampling_sigma2 + sum(sigma**2 for sigma, _ in self._noises)

    @property
    def G(self) -> float | None:
        """sup ||stochastic gradient||: the task's own bound plus the radius of added "sphere" noise
        (inf with added Gaussian noise)."""
        return self._bound_with_noise(self._G_own)

    @property
    def G_inf(self) -> float | None:
        """Coordinate-wise sup ``|[stochastic gradient]_j|`` (FedAda2 A2), with added noise as for G."""
        return self._bound_with_noise(self._G_inf_own)

    def _bound_with_noise(self, own: float | None) -> float | None:
        if own is None:
            return None
        return own + sum(sigma if kind == "sphere" else (math.inf if sigma > 0 else 0.0)
                         for sigma, kind in self._noises)

    def with_noise(self, sigma: NonNegative, kind: str = "gaussian") -> "Task":
        """A copy whose stochastic_grad adds independent noise with E||noise_i||^2 = sigma^2 exactly
        (kind "gaussian": N(0, sigma^2/d I); "sphere": uniform on the sphere of radius sigma)."""
        check_noise(sigma, kind)
        new = copy.copy(self)
        new._noises = self._noises + ((float(sigma), kind),)
        return new

    # ---- heterogeneity ------------------------------------------------------------------------
    def _sup_measure(self, K: np.ndarray) -> float | None:
        """sup_x sum_ik K_ik <grad f_i(x), grad f_k(x)>; None where the task cannot compute it."""
        return None

    def _measure(self, K: np.ndarray, at) -> float | None:
        if at is not None:
            return measure_at(self.grad(self.point(at)), K)
        return self._sup_measure(K)

    def kappa2(self, weights: ProbabilityArray | None = None, beta2: AtLeastOne = 1.0,
               at: Points | None = None) -> float | None:
        """FedNova Assumption 3 at weights w (default the task's p) [001 L141-L151]:
        kappa^2 = max(0, sup_x sum_i w_i ||grad f_i||^2 - beta^2 ||sum_i w_i grad f_i||^2).
        With ``at=x``: the (possibly negative) bracket at x."""
        w = self._weights_np if weights is None else check_weights(weights, self.n)
        value = self._measure(fednova_matrix(w, float(beta2)), at)
        return value if (value is None or at is not None) else max(0.0, value)

    def beta2_min(self, weights: ProbabilityArray | None = None) -> float | None:
        """Infimum of the beta^2 >= 1 for which kappa2(weights, beta2) is finite (None if unknown)."""
        return None

    def sigma_g2(self, at: Points | None = None) -> float | None:
        """AFGA Assumption 4.4 [000 L260-L263]: sup_x (1/n) sum_i ||grad f_i(x) - (1/n) sum_k grad f_k(x)||^2."""
        return self._measure(sigma_g_matrix(self.n), at)

    def intra_cluster(self, subnet_of: np.ndarray, at: Points | None = None) -> np.ndarray | None:
        """AFGA Assumption D.1 [000 L1059-L1062]: sigma_k^2 for each cluster k (array (K,), clusters ordered by
        label), sigma_k^2 = sup_x (1/n_k) sum_{i in V_k} ||grad f_i(x) - grad fbar_k(x)||^2."""
        values = [self._measure(K, at) for K in intra_cluster_matrices(subnet_of, self.n)]
        return None if any(v is None for v in values) else np.array(values)

    def inter_cluster(self, subnet_of: np.ndarray, alpha: AtLeastOne = 1.0,
                      at: Points | None = None) -> float | None:
        """AFGA Assumption D.1 [000 L1063-L1068]: sigma_c^2 = max(0, sup_x (1/K) sum_k ||grad fbar_k(x)||^2
        - alpha^2 ||grad f(x)||^2), f the uniform average of all n clients; with ``at=x`` the bracket at x."""
        value = self._measure(inter_cluster_matrix(subnet_of, self.n, float(alpha)), at)
        return value if (value is None or at is not None) else max(0.0, value)

    # ---- summary ------------------------------------------------------------------------------
    def constants(self) -> dict:
        """The scalar constants as plain Python values (None where unknown), for JSON output."""
        return {"task": type(self).__name__, "n": self.n, "d": self.d, "L": self.L, "mu": self.mu,
                "L_global": self.L_global, "mu_global": self.mu_global, "sigma2": self.sigma2,
                "f_star": self.f_star, "G": self.G, "G_inf": self.G_inf, "bounds": sorted(self.bounds)}

    def __repr__(self) -> str:
        """The known constants, 6 digits each (:func:`fedbound.display.brief`; ``constants()`` has
        them all, None where unknown, at full precision)."""
        from fedbound.display import brief
        c = self.constants()
        name, bounds = c.pop("task"), c.pop("bounds")
        known = {k: v for k, v in c.items() if v is not None}
        return brief(name, **known, **({"bounds": ",".join(bounds)} if bounds else {}))

    def _repr_html_(self) -> str:
        """The task as a notebook shows it: n, d and every constant of the module doc, "unknown"
        where the task does not know it, "upper bound" beside the ones that are bounds."""
        from fedbound.display import box, fields, shown
        c = self.constants()
        name, bounds = c.pop("task"), set(c.pop("bounds"))
        rows = [(k, "unknown" if v is None else f"{shown(v)} (upper bound)" if k in bounds else v)
                for k, v in c.items()]
        return box(name, [fields(rows)], subtitle=f"{self.n} clients, d = {self.d}, {self.dtype}").text


class ClientView:
    """Clients ``idx`` of a task with their data gathered once, on first use: ``grad``,
    ``stochastic_grad`` and ``local_losses`` of X (len(idx), d), optionally for the sub-rows ``rows``
    of the view (the clients still running local steps). ``weights``: their p_i. ``idx`` None: all clients; a slice: a
    contiguous range of clients (views of the data)."""

    def __init__(self, task: Task, idx: torch.Tensor | slice | None):
        self.task, self.idx = task, idx
        if idx is None:
            self.n = task.n
        elif isinstance(idx, slice):
            self.n = len(range(*idx.indices(task.n)))
        else:
            self.n = int(idx.shape[0])

    @functools.cached_property
    def data(self):
        """The clients' data, gathered on first use (a task that runs the local steps fused reads
        only what they need from its own arrays at ``idx``: a round of 10 small clients spent 35
        us gathering every field)."""
        return self.task._data(self.idx)

    @property
    def weights(self) -> torch.Tensor:
        """The clients' weights p_i, (n,)."""
        idx, weights = self.idx, self.task.weights
        if idx is None:
            return weights
        return weights[idx] if isinstance(idx, slice) else weights.index_select(0, idx)

    def _on(self, rows):
        return self.data if rows is None else gather(self.data, rows)

    def grad(self, X: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        return self.task._grad_on(X, self._on(rows))

    def stochastic_grad(self, X: torch.Tensor, generator: torch.Generator,
                        rows: torch.Tensor | None = None) -> torch.Tensor:
        return self.task._stochastic_on(X, self._on(rows), generator)

    def local_losses(self, X: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        return self.task._losses_on(X, self._on(rows))

    @property
    def ids(self) -> torch.Tensor:
        """The clients' ids (int64, (n,))."""
        idx = self.idx
        if idx is None:
            return torch.arange(self.task.n, device=self.task.device)
        if isinstance(idx, slice):
            return torch.arange(self.task.n, device=self.task.device)[idx]
        return idx

    def oracle(self, generator: torch.Generator, round_index: NonNegativeInt | None = None) -> "Oracle":
        """The gradient oracle of the local steps of round ``round_index`` (:class:`Oracle`)."""
        return Oracle(self, generator, round_index)


class Oracle:
    """The local steps' gradient oracle of a :class:`ClientView` in round ``round_index`` (0, 1,
    ...: the rounds completed before; None: a gradient outside a federated round).

    ``oracle(X, rows)`` = ``stochastic_grad(X, generator, rows)`` of the view's rows ``rows``
    (None: all), its k-th call being local step k: a task whose batches are given per client,
    round and step (``keyed_batches``, :mod:`fedbound.tasks.batches`) takes them from there. A
    task that draws no randomness (exact gradients, no added noise) gets its gradient function
    itself on the gathered data, one Python call per local step instead of five (the fixed cost
    of a small round is its Python calls).

    ``descend``: None, or ``descend(X, lr, steps)`` -> X after ``steps`` plain SGD steps
    X <- X - lr g(X) of every row, run by the task itself in one call (a task that implements
    ``_descend_on``: the MLP's layers stay apart between steps), drawing the randomness of
    ``steps`` calls of the oracle; offered only where the task adds no noise."""

    __slots__ = ("view", "generator", "round_index", "step", "_call")

    def __init__(self, view: ClientView, generator: torch.Generator,
                 round_index: NonNegativeInt | None = None):
        self.view, self.generator, self.round_index, self.step = view, generator, round_index, 0
        task = view.task
        if task.keyed_batches:
            self._call = self._keyed
        elif task.samples_gradients or task.noises or type(task)._stochastic_on is not Task._stochastic_on:
            self._call = lambda X, rows: task._stochastic_on(X, view._on(rows), generator)
        else:
            data, grad_on = view.data, task._grad_on
            self._call = lambda X, rows: grad_on(X, data if rows is None else gather(data, rows))

    def __call__(self, X: torch.Tensor, rows: torch.Tensor | None) -> torch.Tensor:
        G = self._call(X, rows)
        self.step += 1
        return G

    def _keyed(self, X, rows):
        ids = self.view.ids
        return self.view.task._keyed_grad_on(X, self.view._on(rows), self.generator,
                                             ids if rows is None else ids.index_select(0, rows),
                                             self.round_index, self.step)

    @property
    def descend(self):
        task = self.view.task
        if type(task)._descend_on is Task._descend_on or task.noises:
            return None
        return self._descend

    def _descend(self, X: torch.Tensor, lr: float, steps: int) -> torch.Tensor:
        view = self.view
        X = view.task._descend_on(X, view, lr, steps, self.generator, self.round_index, self.step)
        self.step += steps
        return X
