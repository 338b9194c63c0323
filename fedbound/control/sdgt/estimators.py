"""Server-side estimates that feed SD-GT's controller: (28), (29) and (30) of seed 003 [L413-L423].

Pure functions of numpy arrays or torch tensors (any device, any float dtype); the reductions run
in the input's own library and only per-row scalars are moved to numpy. All return Python floats.

* (28) Y-hat_t = (1/S) sum_s ||psi_s^t - psi_s^{t+1}||^2: the change of the server's
  between-subnet trackers, a proxy for the tracking error 𝒴_t [L413-L415].
* (29) Gamma-hat_t = (1/(S h_s)) sum_s sum_{j=1}^{h_s} ||x_{s,j}^{t,K+1} - x_g^{t+1}||^2 over the
  sampled clients' pre-aggregation models [L417-L419]. Flag 5.2(c): 1/(S h_s) is ambiguous when
  h_s differs across subnets; ``weighting="subnet"`` (default) reads it as
  (1/S) sum_s (1/h_s) sum_j, ``weighting="population"`` as sum_s (m_s/n) (1/h_s) sum_j (the
  aggregation weights of flag F2). Flag F26: since it compares x^{t,K+1} with x_g^{t+1}, it
  actually estimates Gamma_{t+1}, not Gamma_t.
* (30) H-hat_t = 1/t + lambda1^2 (K_t^3 gamma^3 Y-hat_t/p_t^2 + K_t gamma Gamma-hat_t/p_t)
  [L421-L423]. Flag F25: (30) prints lambda1^2 while (31) uses lambda1; ``lam1_squared=True``
  (default) follows (30) as printed, False uses lambda1. 1/t stands in for the optimality gap.
"""
from __future__ import annotations

import math
from typing import Literal

import numpy as np
import torch

from fedbound.argtypes import Fraction, NonNegative, Positive
from fedbound.errors import require

WEIGHTINGS = ("subnet", "population")


def _to_numpy(x) -> np.ndarray:
    if hasattr(x, "detach"):  # torch tensor
        x = x.detach().to("cpu").double().numpy()
    return np.asarray(x, dtype=float)


def _pair(a, b) -> tuple:
    """``a`` and ``b`` in one library: torch tensors as given when both are tensors, else float64
    numpy arrays (lists are read as arrays)."""
    if hasattr(a, "detach") and hasattr(b, "detach"):
        return a, b
    return _to_numpy(a), _to_numpy(b)


def _row_sq_norms(X, x):
    """||X[i] - x||^2 per row, computed by X's own library (numpy or torch)."""
    diff = X - x
    return _to_numpy((diff * diff).reshape(diff.shape[0], -1).sum(1))


def estimate_Y(psi_t: torch.Tensor | np.ndarray, psi_next: torch.Tensor | np.ndarray) -> float:
    """(28): (1/S) sum_s ||psi_s^t - psi_s^{t+1}||^2 for trackers of shape (S, d)."""
    psi_t, psi_next = _pair(psi_t, psi_next)
    require(tuple(psi_t.shape) == tuple(psi_next.shape) and len(psi_t.shape) >= 2,
            f"psi_t and psi_next must have the same shape (S, d), got {tuple(psi_t.shape)} and "
            f"{tuple(psi_next.shape)}")
    return float(np.mean(_row_sq_norms(psi_t, psi_next)))


def estimate_Gamma(sampled_models: torch.Tensor | np.ndarray, x_g_next: torch.Tensor | np.ndarray,
                   subnet_of: torch.Tensor | np.ndarray, m: np.ndarray | None = None,
                   weighting: Literal["subnet", "population"] = "subnet") -> float:
    """(29) from the sampled clients' models ``sampled_models`` (shape (N, d), before aggregation),
    the new global model ``x_g_next`` (shape (d,)) and ``subnet_of`` (N ints in 0..S-1, every
    subnet present at least once since h_s >= 1). ``weighting`` "subnet" averages the per-subnet
    means uniformly (1/S); "population" weights them by m_s/n and needs ``m`` (subnet sizes)."""
    require(weighting in WEIGHTINGS, f"weighting must be one of {', '.join(WEIGHTINGS)}, got {weighting!r}")
    sampled_models, x_g_next = _pair(sampled_models, x_g_next)
    given = _to_numpy(subnet_of).reshape(-1)
    labels = given.astype(np.int64)
    require(np.array_equal(labels, given), f"subnet_of must hold subnet indices (ints), got {given.tolist()!r:.60}")
    require(len(sampled_models.shape) >= 2 and sampled_models.shape[0] == labels.size,
            f"sampled_models must have shape (N, d) with N = len(subnet_of) = {labels.size}, "
            f"got {tuple(sampled_models.shape)}")
    require(tuple(x_g_next.shape) == tuple(sampled_models.shape[1:]),
            f"x_g_next must have the shape of one model {tuple(sampled_models.shape[1:])}, "
            f"got {tuple(x_g_next.shape)}")
    require(labels.size > 0 and labels.min() >= 0, "subnet_of must be non-empty ints >= 0")
    S = int(labels.max()) + 1 if m is None else len(m)
    counts = np.bincount(labels, minlength=S)
    require(counts.size == S and np.all(counts >= 1),
            f"every subnet 0..{S - 1} needs at least one sampled client, got counts {counts.tolist()}")
    per_subnet = np.bincount(labels, weights=_row_sq_norms(sampled_models, x_g_next), minlength=S) / counts
    if weighting == "subnet":
        return float(per_subnet.mean())
    require(m is not None, "weighting='population' needs the subnet sizes m")
    sizes = np.asarray(m, dtype=float)
    require(np.all(sizes >= 1) and np.all(counts <= sizes),
            f"m must be >= the sampled counts {counts.tolist()}, got {sizes.tolist()}")
    return float(per_subnet @ (sizes / sizes.sum()))


def estimate_H(t: int, K_t: Positive, p_t: Fraction, gamma: Positive, Y_hat: NonNegative,
               Gamma_hat: NonNegative, lam1: Positive, lam1_squared: bool = True) -> float:
    """(30): 1/t + lambda1^k (K_t^3 gamma^3 Y_hat/p_t^2 + K_t gamma Gamma_hat/p_t), k = 2 if
    ``lam1_squared`` (as printed, flag F25) else 1."""
    require(isinstance(t, (int, np.integer)) and t >= 1, f"t must be an integer >= 1, got {t!r}")
    for name, v in (("K_t", K_t), ("gamma", gamma), ("lam1", lam1)):
        require(math.isfinite(v) and v > 0, f"{name} must be finite and > 0, got {v!r}")
    require(math.isfinite(p_t) and 0 < p_t <= 1, f"p_t must be in (0, 1], got {p_t!r}")
    for name, v in (("Y_hat", Y_hat), ("Gamma_hat", Gamma_hat)):
        require(math.isfinite(v) and v >= 0, f"{name} must be finite and >= 0, got {v!r}")
    weight = lam1 ** 2 if lam1_squared else lam1
    return 1.0 / t + weight * (K_t ** 3 * gamma ** 3 * Y_hat / p_t ** 2 + K_t * gamma * Gamma_hat / p_t)
