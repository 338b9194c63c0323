r"""The (eta, eta_l) minimising FedAda2's Theorem 20 bound at fixed constants -- DERIVED, not in the
paper (papers/fedada2.md 5.2; bound: seed 004 [L842-L862], result ``fedada2.thm20``).

J(eta, eta_l) = (Psi1 + ... + Psi5)/Psi6 of any variant of Theorem 20 is evaluated on a log-spaced
grid of (eta, eta_l) in one vectorized call; the best grid point is refined by a bounded Powell
search in (log eta, log eta_l) along the directions (1, 1) and (1, -1) (the bound depends mostly on
eta eta_l: a long valley), restarted until it stops improving. The grid is the certificate: the refined
point is returned only if it is no worse than the best grid point. (The notes' DGP formulation needs a
surrogate for the log of Psi5 and a fixed branch of Phi2; with two variables the grid is exact up to
its spacing and needs neither.)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from fedbound import validate as V
from fedbound.errors import ValidationError
from fedbound.theory import get


@dataclass(frozen=True)
class StepChoice:
    """The minimiser (``eta``, ``eta_l``) of the bound of ``variant``, the bound there, the best grid
    point and its bound, whether the minimiser lies on the edge of the box (``at_boundary``: widen the
    ranges), and the label "derived (not in the paper)"."""

    variant: str
    eta: float
    eta_l: float
    bound: float
    grid_eta: float
    grid_eta_l: float
    grid_bound: float
    at_boundary: bool
    label: str = "derived (not in the paper): minimiser of the Theorem 20 bound"


def best_step_sizes(constants: dict, variant: str = "printed", eta_range=(1e-4, 1e2),
                    eta_l_range=(1e-6, 1e1), points: int = 81) -> StepChoice:
    """Minimise the Theorem 20 bound of ``variant`` over eta in ``eta_range`` and eta_l in
    ``eta_l_range`` at the other ``constants`` (every constant of the variant except eta_server and
    eta_l, scalars)."""
    thm = get("fedada2.thm20")
    needed = set(thm.constants(variant)) - {"eta_server", "eta_l"}
    missing = sorted(needed - set(constants))
    if missing:
        raise ValidationError(f"best_step_sizes needs constant(s) {', '.join(missing)}")
    fixed = {k: V.number(k, constants[k]) for k in needed}
    lows, highs = [], []
    for name, (lo, hi) in (("eta_range", eta_range), ("eta_l_range", eta_l_range)):
        lo = V.number(f"{name}[0]", lo, low=0.0, low_open=True)
        hi = V.number(f"{name}[1]", hi, low=lo, low_open=True)
        lows.append(np.log(lo))
        highs.append(np.log(hi))
    points = V.integer("points", points, low=3)
    log_eta = np.linspace(lows[0], highs[0], points)[:, None]
    log_el = np.linspace(lows[1], highs[1], points)[None, :]

    def J(le, lel):
        with np.errstate(all="ignore"):
            return thm.bound(variant, **fixed, eta_server=np.exp(le), eta_l=np.exp(lel))

    values = np.where(np.isfinite(J(log_eta, log_el)), J(log_eta, log_el), np.inf)
    i, j = np.unravel_index(np.argmin(values), values.shape)
    start = np.array([log_eta[i, 0], log_el[0, j]])
    grid_bound = float(values[i, j])
    best, best_value = start, np.log(grid_bound)
    for _ in range(5):   # Powell along the valley eta * eta_l = const and across it, restarted
        res = minimize(lambda x: float(np.log(J(x[0], x[1]))), best, method="Powell",
                       bounds=list(zip(lows, highs)),
                       options={"xtol": 1e-10, "ftol": 1e-14, "direc": np.array([[1.0, 1.0], [1.0, -1.0]])})
        if not (np.isfinite(res.fun) and res.fun < best_value - 1e-15):
            break
        best, best_value = res.x, res.fun
    edge = bool(np.any(np.isclose(best, lows, rtol=0, atol=1e-6) | np.isclose(best, highs, rtol=0, atol=1e-6)))
    return StepChoice(variant, float(np.exp(best[0])), float(np.exp(best[1])), float(J(*best)),
                      float(np.exp(start[0])), float(np.exp(start[1])), grid_bound, edge)
