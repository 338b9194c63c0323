"""How many local steps each participating client takes in a round: tau_i^{(t)} (FedNova sec. 2.0,
[001 L46-L54]: "local-step counts tau_i^{(t)}"; its experiments draw them per round or derive them
from local epochs, [001 L216-L223]).

A scheme's ``draw(clients, generator)`` gives tau (k,) int64 for the k participating clients (repeats
allowed), drawn afresh every round; the round runs max_j tau_j vectorized steps and freezes each
client after its own tau_j (optim.masked), so a client past its steps computes no gradient.

* :class:`FixedSteps`: tau_i given (one int for all, or one per client), the same every round.
* :class:`RandomSteps`: tau_i uniform on {low, ..., high}, independently per client and round
  (FedNova Fig. 3-4: tau_i ~ U[2, 20] "changing across rounds").
* :class:`GaussianSteps`: tau_i = clip(round(N(mean, std^2)), low, high), fresh per client and
  round (FedNova Fig. 2 right: "Gaussian with mean 30", tau in [1, 96] [001 L64-L83]; Fig. 4:
  tau_i ~ N(20, 20) [001 L188]). The paper never says whether the 20 of N(20, 20) is the variance
  or the standard deviation, nor how it rounds and clips (fednova.md 7.5, L188): the constructor
  takes the standard deviation explicitly and rounds to nearest then clips; the reading
  "variance 20" is ``std=sqrt(20)``, "std 20" is ``std=20``.
* :class:`EpochSteps`: tau_i = floor(E_i n_i / B), E_i local epochs over client i's n_i examples in
  minibatches of B (FedNova sec. 6.2: clients with more data run more steps).
* :class:`RandomEpochSteps`: the same with E_i^{(t)} ~ U(low, high) drawn per client and round
  (FedNova Fig. 5 right, E_i(t) ~ U(1, 5) [001 L221]; Table 1, U(2, 5) [L225]). Whether U is over
  the integers or continuous is not stated (fednova.md 6.2-6.3 flags): ``integer=True`` (default)
  draws whole epochs, ``False`` a continuous E; tau_i is at least 1 either way.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from fedbound.algorithms.base import MAX_LOCAL_STEPS, Steps
from fedbound.argtypes import Count, NonNegative, Positive
from fedbound.errors import require
from fedbound.validate import boolean, integer, number, real_array


def _per_client(name: str, value, n: int, low: float) -> np.ndarray:
    arr = real_array(name, value, ndim=(0, 1), low=low)
    require(arr.ndim == 0 or arr.shape == (n,),
            f"{name} must be a number or have one entry per client (n = {n}), got shape {arr.shape}")
    return np.broadcast_to(arr, (n,)).copy()


class FixedSteps:
    """tau_i fixed: an int (every client) or (n,) ints >= 1."""

    def __init__(self, tau: Steps | Sequence[Steps], n: Count):
        arr = _per_client("local steps", tau, n, 1)
        require(bool(np.all(arr == np.floor(arr))), f"local steps must be integers, got {arr.tolist()[:8]}")
        require(bool(np.all(arr <= MAX_LOCAL_STEPS)),
                f"local steps must be <= {MAX_LOCAL_STEPS}, got {arr.max():g}")
        self.tau = torch.as_tensor(arr.astype(np.int64))
        self.uniform = bool(np.all(arr == arr[0]))

    def draw(self, clients: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        return self.tau.index_select(0, clients)


class RandomSteps:
    """tau_i uniform on {low, ..., high}, fresh per client and round."""

    def __init__(self, low: Steps, high: Steps):
        self.low = integer("low", low, low=1, high=MAX_LOCAL_STEPS)
        self.high = integer("high", high, low=self.low, high=MAX_LOCAL_STEPS)

    def draw(self, clients: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        return torch.randint(self.low, self.high + 1, (int(clients.shape[0]),), generator=generator,
                             device=generator.device).to(clients.device)


class GaussianSteps:
    """tau_i = clip(round(mean + std z), low, high), z ~ N(0, 1) fresh per client and round."""

    def __init__(self, mean: NonNegative, std: NonNegative, low: Steps = 1, high: Steps = MAX_LOCAL_STEPS):
        self.mean = number("mean", mean, low=0.0)
        self.std = number("std", std, low=0.0)
        self.low = integer("low", low, low=1, high=MAX_LOCAL_STEPS)
        self.high = integer("high", high, low=self.low, high=MAX_LOCAL_STEPS)

    def draw(self, clients: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        z = torch.randn(int(clients.shape[0]), generator=generator, dtype=torch.float64,
                        device=generator.device).to(clients.device)
        return torch.clamp(torch.round(self.mean + self.std * z), self.low, self.high).to(torch.int64)


class EpochSteps(FixedSteps):
    """tau_i = floor(E_i n_i / B) for epochs E (number or (n,)), examples n_i, batch size B."""

    def __init__(self, epochs: NonNegative | Sequence[NonNegative], num_examples: Sequence[Count],
                 batch_size: Count):
        n_i = np.asarray(num_examples, dtype=np.int64)
        B = integer("batch size", batch_size, low=1)
        E = _per_client("epochs", epochs, n_i.size, 0)
        tau = np.floor(E * n_i / B).astype(np.int64)
        bad = np.flatnonzero(tau < 1)
        require(bad.size == 0, f"client {bad[0] if bad.size else 0} would take floor(E n_i / B) = 0 "
                               f"local steps (E = {E[bad[0]] if bad.size else 0}, n_i = "
                               f"{n_i[bad[0]] if bad.size else 0}, B = {B}); raise the epochs or "
                               "lower the batch size")
        super().__init__(tau, n_i.size)


def local_steps(spec: LocalSteps, n: Count) -> StepsScheme:
    """A scheme from ``spec``: a scheme object, an int or (n,) ints (FixedSteps)."""
    if hasattr(spec, "draw"):
        return spec
    return FixedSteps(spec, n)


class RandomEpochSteps:
    """tau_i^{(t)} = max(1, floor(E_i^{(t)} n_i / B)), E_i^{(t)} ~ U(low, high) per client and round
    (integers low..high, or continuous with ``integer=False``)."""

    def __init__(self, low: Positive, high: Positive, num_examples: Sequence[Count], batch_size: Count,
                 integer_epochs: bool = True):
        self.integer_epochs = boolean("integer_epochs", integer_epochs)
        if self.integer_epochs:
            self.low = integer("low", low, low=1)
            self.high = integer("high", high, low=self.low)
        else:
            self.low = number("low", low, low=0.0, low_open=True)
            self.high = number("high", high, low=self.low)
        n_i = real_array("num_examples", num_examples, ndim=1, low=1)
        self.n_i = torch.as_tensor(n_i, dtype=torch.float64)
        self.B = integer("batch size", batch_size, low=1)
        require(float(self.high) * float(n_i.max()) / self.B <= MAX_LOCAL_STEPS,
                f"the largest client would take more than {MAX_LOCAL_STEPS} local steps")

    def draw(self, clients: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        k = int(clients.shape[0])
        if self.integer_epochs:
            E = torch.randint(self.low, self.high + 1, (k,), generator=generator,
                              device=generator.device).to(torch.get_default_device(), torch.float64)
        else:
            E = self.low + (self.high - self.low) * torch.rand(
                k, generator=generator, dtype=torch.float64,
                device=generator.device).to(torch.get_default_device())
        tau = torch.floor(E * self.n_i.index_select(0, clients) / self.B).to(torch.int64)
        return torch.clamp(tau, min=1)


#: a local-steps scheme of this module
StepsScheme = FixedSteps | RandomSteps | GaussianSteps | RandomEpochSteps
#: the local steps of a federated algorithm: one count for every client, one per client, or a scheme
#: (:class:`FixedSteps` checks the counts, naming the "local steps")
LocalSteps = int | Sequence[int] | StepsScheme
