r"""The error quantities of the SD-GT analysis, estimated by Monte Carlo over seeds.

Seed 003, [L335], [L688]; papers/sdgt.md 1.6. With clients as rows, for client i in subnet s,
:math:`\bar g_s(x) = (1/m_s)\sum_{j\in C_s}\nabla f_j(x)` and :math:`\bar x_g^t = E[x_g^t]`:

.. math::

    \mathcal{E}_t &= f(\bar x_g^t) - f^\star, \qquad D_t = \|\bar x_g^t - x^\star\|^2,
    \qquad G_t = \|\nabla f(\bar x_g^t)\|^2,\\
    \Gamma_t &= \tfrac1n \sum_i E\|x_i^{t-1,K+1} - \bar x_g^t\|^2 \quad(\text{sampling gap};\
               x_i^{0,K+1} := x^0, \text{ so } \Gamma_1 = 0),\\
    \mathcal{Y}_t &= \tfrac1n \sum_i E\|y_i^t - (\nabla f(\bar x_g^t) - \bar g_s(\bar x_g^t))\|^2
                     = \tfrac1n E\|Y^t + \nabla F(\bar x_g^t)(J_c - J)\|_F^2,\\
    \mathcal{Z}_t &= \tfrac1n \sum_i E\|z_i^t - (\bar g_s(\bar x_g^t) - \nabla f_i(\bar x_g^t))\|^2
                     = \tfrac1n E\|Z^t + \nabla F(\bar x_g^t)(I - J_c)\|_F^2,\\
    \Delta_t &= \tfrac1n \sum_i \sum_{k=1}^K E\|x_i^{t,k} - \bar x_g^t\|^2 .

Round t = 1, 2, ... is the analysis index: :math:`x_g^1 = x^0` is the initial model, and round t
maps :math:`(x_g^t, Y^t, Z^t)` to :math:`(x_g^{t+1}, Y^{t+1}, Z^{t+1})` through the inner iterates
:math:`X^{t,k}`.

Estimation. :math:`\bar x_g^t` is the Monte-Carlo mean of :math:`x_g^t` over R seeds (sampling
and noise), as the notes prescribe (4.3, "Numerical checks"). Functions of :math:`\bar x_g^t`
alone (:math:`\mathcal{E}_t, D_t, G_t`) get a jackknife confidence interval. The expectations
:math:`\Gamma_t, \mathcal{Y}_t, \mathcal{Z}_t, \Delta_t` are per-seed averages with a Student-t
interval. Every quantity is non-negative, and so is every interval: each is intersected with
[0, inf), which keeps its coverage (:mod:`fedbound.stats`); plugging in the estimated :math:`\bar x_g^t` biases them by O(1/R) relative to their
spread, which the interval does not include. Runs with full participation and sigma = 0 are
deterministic: one seed gives exact values.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np
import torch
from scipy import stats

from fedbound import resources, validate
from fedbound.algorithms.semidecentralized.sdgt import SDGT
from fedbound.argtypes import NonNegative
from fedbound.errors import require
from fedbound.stats import Estimate, mean_ci
from fedbound.tasks import Task


@dataclass
class SDGTRecord:
    """Stacked states of R runs of SD-GT over T rounds (numpy float64).

    x_g (R, T+1, d): x_g^t, index t-1 (t = 1..T+1); Y, Z (R, T+1, n, d): Y^t, Z^t;
    X_prev_end (R, T+1, n, d): x^{t-1,K+1} (index 0 is x^0 for every client);
    inner_X, inner_G (R, T, K, n, d): X^{t,k} and the gradients used at inner step k of round t;
    subnet_of (n,): subnet of each client.
    """

    x_g: np.ndarray
    Y: np.ndarray
    Z: np.ndarray
    X_prev_end: np.ndarray
    inner_X: np.ndarray
    inner_G: np.ndarray
    subnet_of: np.ndarray

    @property
    def seeds(self) -> int:
        return self.x_g.shape[0]

    @property
    def rounds(self) -> int:
        return self.inner_X.shape[1]


def _record_seed(make_algorithm: Callable[[int], object], rounds: int, x0, seed: int) -> tuple:
    """One seed's X, Y, Z, X_end and the K inner X and G per round (numpy, see SDGTRecord)."""
    alg = make_algorithm(int(seed))
    state = alg.init(x0)
    xs, ys, zs, ends = [state.x_g], [state.Y], [state.Z], [state.X.clone()]
    inner_x, inner_g = [], []
    for _ in range(rounds):
        state = alg.step(state)
        xs.append(state.x_g)
        ys.append(state.Y)
        zs.append(state.Z)
        ends.append(state.X_end)
        inner_x.append(state.inner_X)
        inner_g.append(state.inner_G)
    return tuple(torch.stack(v).numpy() for v in (xs, ys, zs, ends, inner_x, inner_g))


def record_sdgt(make_algorithm: Callable[[int], SDGT], rounds: int,
                seeds: Iterable[int] | int, x0: torch.Tensor | np.ndarray | None = None) -> SDGTRecord:
    """Run ``make_algorithm(seed)`` (an SD-GT with ``record_inner=True`` and a constant K) for
    ``rounds`` rounds per seed from ``x0`` (default the task's) and stack what the error
    quantities need. The seeds run through :func:`fedbound.sweep.evaluate` (in this process, or on
    Ray inside ``fedbound.sweep.using``)."""
    from fedbound.sweep import evaluate

    seeds = validate.seeds(seeds)
    rounds = validate.integer("rounds", rounds, low=1)
    alg = make_algorithm(int(seeds[0]))
    require(getattr(alg, "record_inner", False),
            "the algorithm must be built with record_inner=True to expose X^{t,k}")
    n, d, K = alg.task.n, alg.task.d, int(getattr(alg, "K", 1))
    resources.require_memory(f"recording {len(seeds)} SD-GT run(s) of {rounds} rounds "
                             f"(n = {n}, d = {d}, K = {K})",
                             len(seeds) * (rounds + 1) * (4 + 2 * K) * n * d)
    runs = evaluate(functools.partial(_record_seed, make_algorithm, rounds, x0), seeds=seeds)
    x_g, Y, Z, ends, inner_X, inner_G = runs.stack()
    return SDGTRecord(x_g, Y, Z, ends, inner_X, inner_G, np.asarray(alg.net.subnet_of))


@dataclass
class ErrorQuantities:
    """Estimates (with intervals) of the analysis quantities, index t-1 for round t.

    E, D, G, Gamma, Y, Z: rounds t = 1..T+1; Delta: rounds t = 1..T; x_bar (T+1, d): the
    Monte-Carlo mean of x_g^t.
    """

    x_bar: np.ndarray
    E: Estimate
    D: Estimate
    G: Estimate
    Gamma: Estimate
    Y: Estimate
    Z: Estimate
    Delta: Estimate

    def lyapunov(self, gamma: NonNegative) -> np.ndarray:
        r""":math:`\mathcal{L}_t = D_t + \Gamma_t + \gamma\mathcal{Y}_t + \gamma\mathcal{Z}_t`
        (96) [L1025], rounds t = 1..T+1 (means)."""
        return self.D.mean + self.Gamma.mean + gamma * (self.Y.mean + self.Z.mean)

    def lyapunov_estimate(self, gamma: NonNegative) -> Estimate:
        """:meth:`lyapunov` with an interval: the half-widths of the four terms add (a
        conservative union bound on the four intervals)."""
        parts = (self.D, self.Gamma, self.Y, self.Z)
        weights = (1.0, 1.0, gamma, gamma)
        mean = sum(w * p.mean for w, p in zip(weights, parts))
        low = sum(w * p.low for w, p in zip(weights, parts))
        high = sum(w * p.high for w, p in zip(weights, parts))
        stderr = sum(w * p.stderr for w, p in zip(weights, parts))
        return Estimate(mean, stderr, low, high, self.D.samples, self.D.confidence, self.D.method)


#: the interval of a function of the mean (:func:`_jackknife`)
JACKKNIFE = "jackknife Student-t, clipped to [0, inf)"


def _per_seed(values: np.ndarray, confidence: float) -> Estimate:
    return mean_ci(values, confidence, axis=0, nonnegative=True)


def _jackknife(samples: np.ndarray, fn: Callable[[np.ndarray], np.ndarray],
               confidence: float) -> Estimate:
    """Estimate of fn(E[samples]) (fn applied to the mean over axis 0, a non-negative quantity) with
    a jackknife interval within [0, inf)."""
    r = samples.shape[0]
    value = fn(samples.mean(axis=0))
    if r == 1:
        return mean_ci(value[None], confidence, nonnegative=True)
    loo = (samples.sum(axis=0)[None] - samples) / (r - 1)        # leave-one-out means
    thetas = np.stack([fn(m) for m in loo])
    stderr = np.sqrt((r - 1) / r * np.sum((thetas - thetas.mean(axis=0)) ** 2, axis=0))
    half = stats.t.ppf(0.5 + confidence / 2, r - 1) * stderr
    return Estimate(value, stderr, np.maximum(value - half, 0.0), value + half, r, confidence, JACKKNIFE)


def error_quantities(record: SDGTRecord, task: Task, confidence: float = 0.95) -> ErrorQuantities:
    """The quantities of the module docstring for a recorded SD-GT run (see :func:`record_sdgt`)."""
    require(task.x_star is not None and task.f_star is not None,
            "the error quantities need a task with known x* and f*")
    dtype = torch.float64
    x_star = torch.as_tensor(task.x_star, dtype=dtype).numpy()
    f_star = float(task.f_star)
    x_bar = record.x_g.mean(axis=0)                                  # (T+1, d)
    n = record.Y.shape[2]
    S = int(record.subnet_of.max()) + 1
    member = np.zeros((S, n))
    member[record.subnet_of, np.arange(n)] = 1.0
    member /= member.sum(axis=1, keepdims=True)                     # rows: subnet averages

    def local_grads(x: np.ndarray) -> np.ndarray:                   # (T+1, d) -> (T+1, n, d)
        X = torch.as_tensor(np.repeat(x[:, None, :], n, axis=1), dtype=dtype)
        return np.stack([task.grad(Xt).numpy() for Xt in X])

    G_loc = local_grads(x_bar)                                       # grad f_i(x_bar^t)
    g_sub = np.einsum("sn,tnd->tsd", member, G_loc)[:, record.subnet_of]   # gbar_s(i)
    g_all = G_loc.mean(axis=1, keepdims=True)
    y_target = g_all - g_sub
    z_target = g_sub - G_loc

    def mean_sq(diff: np.ndarray) -> np.ndarray:                    # (R, T, n, d) -> (R, T)
        return np.sum(diff ** 2, axis=(-2, -1)) / n

    Gamma = mean_sq(record.X_prev_end - x_bar[None, :, None, :])
    Yq = mean_sq(record.Y - y_target[None])
    Zq = mean_sq(record.Z - z_target[None])
    T = record.rounds
    Delta = np.sum((record.inner_X - x_bar[None, :T, None, None, :]) ** 2, axis=(2, 3, 4)) / n

    def gap(m: np.ndarray) -> np.ndarray:
        return np.array([task.loss(torch.as_tensor(x, dtype=dtype)) for x in m]) - f_star

    def dist2(m: np.ndarray) -> np.ndarray:
        return np.sum((m - x_star) ** 2, axis=-1)

    def grad2(m: np.ndarray) -> np.ndarray:
        return np.array([float(torch.sum(task.global_grad(torch.as_tensor(x, dtype=dtype)) ** 2))
                         for x in m])

    return ErrorQuantities(
        x_bar=x_bar,
        E=_jackknife(record.x_g, gap, confidence),
        D=_jackknife(record.x_g, dist2, confidence),
        G=_jackknife(record.x_g, grad2, confidence),
        Gamma=_per_seed(Gamma, confidence), Y=_per_seed(Yq, confidence),
        Z=_per_seed(Zq, confidence), Delta=_per_seed(Delta, confidence))


__all__ = ["SDGTRecord", "record_sdgt", "ErrorQuantities", "error_quantities"]
