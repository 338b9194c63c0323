"""Long horizons from one-round certificates (issue 13), for FedAvg.

Let phi(e) = sup ||x_1 - x*||^2 over one FedAvg round started anywhere with ||x_0 - x*||^2 <= e,
in the class of :mod:`fedbound.pep.methods.local` with heterogeneity zeta. phi is nondecreasing
(the feasible set grows with e) and every round starts from a point of the same class, so
e_{t+1} = phi(e_t) bounds ||x_t - x*||^2 for every horizon: :func:`composed`. By homogeneity
(scaling x - x* and every gradient at x* by s scales every squared norm by s^2),
phi(e; zeta) = e W(zeta/sqrt(e)) with W(z) the one-round PEP at radius 1 and heterogeneity z.

* :func:`contraction`: the certified contraction per round, lim_{e -> inf} phi(e)/e = W(0);
* :func:`long_run`: the long-run bound c(K, gamma) zeta^2: e <- phi(e) from e = zeta^2/100 converges
  monotonically to a fixed point e* of phi, an invariant level (e_t <= e* implies e_{t+1} <= e*),
  reported with the residual phi(e*)/e* - 1; where it falls below FLOOR zeta^2 (K = 1: FedAvg is GD
  and e* = 0) it stops there with that invariant level (residual < 0);
* :func:`gap`: composed / full-horizon PEP at the same R (>= 1 up to solver accuracy: the
  composition is the price of cutting the horizon).
"""
from __future__ import annotations

import math

from fedbound.argtypes import Count, Positive
from fedbound.pep.certificate import _solved, method

#: the smallest long-run level :func:`long_run` resolves, relative to zeta^2 (the PEP's scale is
#: zeta/sqrt(e): far below it the SDP is badly conditioned)
FLOOR = 1e-6


def _cfg(options: dict) -> dict:
    return method("fedavg").config(**options)


def _one_round(options: dict) -> dict:
    """``options`` validated as given (a bad ``rounds`` is named even though one round is
    certified), then set to one round."""
    return {**_cfg(options), "rounds": 1}


def one_round(options: dict, e: Positive) -> float:
    """phi(e): the worst ||x_1 - x*||^2 after one round from ||x_0 - x*||^2 <= e (e > 0)."""
    cfg = _one_round(options)
    cfg["zeta"] = cfg["zeta"] / math.sqrt(e)
    return e * _solved(method("fedavg"), cfg)[0].value


def contraction(options: dict) -> float:
    """W(0): the certified contraction factor of ||x - x*||^2 per round without heterogeneity."""
    return _solved(method("fedavg"), {**_one_round(options), "zeta": 0.0})[0].value


def composed(options: dict, e0: Positive = 1.0) -> list[float]:
    """[e_1, ..., e_R] with e_{t+1} = phi(e_t), e_0 = ``e0`` (``rounds`` from ``options``)."""
    out, e = [], e0
    for _ in range(_cfg(options)["rounds"]):
        e = one_round(options, e)
        out.append(e)
    return out


def long_run(options: dict, rtol: Positive = 1e-5, max_iter: Count = 200) -> dict:
    """{"c": e*/zeta^2, "bound": e*, "residual": phi(e*)/e* - 1, "iterations"} (module doc)."""
    zeta = _cfg(options)["zeta"]
    if zeta == 0:
        return {"c": 0.0, "bound": 0.0, "residual": 0.0, "iterations": 0}
    e, it = 1e-2 * zeta ** 2, 0
    for it in range(1, max_iter + 1):
        new = one_round(options, e)
        done = abs(new - e) <= rtol * new or new < FLOOR * zeta ** 2
        e = max(new, FLOOR * zeta ** 2)
        if done:
            break
    return {"c": e / zeta ** 2, "bound": e, "residual": one_round(options, e) / e - 1, "iterations": it}


def gap(options: dict) -> dict:
    """{"composed", "full", "ratio"} at the horizon R of ``options`` from ||x_0 - x*||^2 <= 1."""
    full = _solved(method("fedavg"), _cfg(options))[0].value
    comp = composed(options)[-1]
    return {"composed": comp, "full": full, "ratio": comp / full}
