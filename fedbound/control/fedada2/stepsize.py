r"""The (eta, eta_l) minimising FedAda2's Theorem 20 bound at fixed constants -- DERIVED, not in the
paper (papers/fedada2.md 5.2; bound: seed 004 [L842-L862], result ``fedada2.thm20``).

J(eta, eta_l) = (Psi1 + ... + Psi5)/Psi6 of any variant of Theorem 20 is evaluated on a log-spaced
grid of (eta, eta_l) in one vectorized call; the best grid point is refined by a bounded Powell
search in (log eta, log eta_l) along the directions (1, 1) and (1, -1) (the bound depends mostly on
eta eta_l: a long valley), restarted until it stops improving. The grid is the certificate: the refined
point is returned only if it is no worse than the best grid point. (The notes' DGP formulation needs a
surrogate for the log of Psi5 and a fixed branch of Phi2; with two variables the grid is exact up to
its spacing and needs neither. :func:`gp_step_sizes` implements that DGP (cvxpy, gp=True) as a
cross-check.)
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
    point and its bound (for :func:`gp_step_sizes`: the GP's point and its surrogate objective), whether the minimiser lies on the edge of the box (``at_boundary``: widen the
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


def best_step_sizes(constants: dict[str, float], variant: str = "printed",
                    eta_range: tuple[float, float] = (1e-4, 1e2), eta_l_range: tuple[float, float] = (1e-6, 1e1),
                    points: int = 81) -> StepChoice:
    """Minimise the Theorem 20 bound of ``variant`` over eta in ``eta_range`` and eta_l in
    ``eta_l_range`` at the other ``constants`` (every constant of the variant except eta and
    eta_l, scalars)."""
    thm = get("fedada2.thm20")
    needed = set(thm.constants(variant)) - {"eta", "eta_l"}
    missing = sorted(needed - set(constants))
    if missing:
        raise ValidationError(f"best_step_sizes needs constant(s) {', '.join(missing)}")
    fixed = {k: V.number(k, constants[k]) for k in needed}
    lows, highs = _log_box(eta_range, eta_l_range)
    points = V.integer("points", points, low=3)
    log_eta = np.linspace(lows[0], highs[0], points)[:, None]
    log_el = np.linspace(lows[1], highs[1], points)[None, :]

    def J(le, lel):
        with np.errstate(all="ignore"):
            return thm.bound(variant, **fixed, eta=np.exp(le), eta_l=np.exp(lel))

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


def _log_box(eta_range, eta_l_range) -> tuple[list[float], list[float]]:
    """log of the ends of the box eta_range x eta_l_range (each 0 < low < high)."""
    lows, highs = [], []
    for name, (lo, hi) in (("eta_range", eta_range), ("eta_l_range", eta_l_range)):
        lo = V.number(f"{name}[0]", lo, low=0.0, low_open=True)
        hi = V.number(f"{name}[1]", hi, low=lo, low_open=True)
        lows.append(np.log(lo))
        highs.append(np.log(hi))
    return lows, highs


def _thm20_gp(c: dict, variant_settings: dict, branch: int, r: float, eta_box, eta_l_box):
    """The DGP of notes 5.2 for one branch of Phi2 (1: eta sqrt(1 - b), 2: eta Phi1/tau) with
    log(1 + u) <= u^r/r (0 < r <= 1) in Psi5: returns (problem, eta, eta_l)."""
    import cvxpy as cp

    from fedbound.theory.fedada2.common import c_beta_numeric
    eta, el = cp.Variable(pos=True), cp.Variable(pos=True)
    K, z, G, eps, v0, d = (c[k] for k in ("K", "z", "G", "eps", "v0", "d"))
    L, T, tau, b, vt0 = (c[k] for k in ("L", "T", "tau", "beta1_tilde", "vtilde0"))
    n = np.ceil(K / z)
    a = np.sqrt(n) * np.sqrt(np.log1p(n * G ** 2 / eps ** 2))
    delay = (K - n) * G / (np.sqrt(v0) + eps)
    phi1 = el * a + el ** 2 * delay if variant_settings["phi1"] == "printed" else el * (a + delay)
    s = d if variant_settings["norm"] == "vector" else 1.0
    power = 1 if variant_settings["smooth"] == "L" else 2
    root = np.sqrt(v0) if variant_settings["denom"] == "sqrt_v0" else v0
    alpha1 = 1 / (2 * np.sqrt(v0 + d * K * G ** 2) + 2 * eps)
    coef = K / (alpha1 * tau * (root + eps) ** 2)
    l_tilde = 2 * np.sqrt(d) * G / (el * c["eps_s"])
    phi2 = eta * np.sqrt(1 - b) if branch == 1 else eta * phi1 / tau
    psi = [c["f_gap"],
           eta ** 2 * L * T * d * s * phi1 ** 2 / tau ** 2,
           (1 - b ** T) * eta * el * l_tilde ** power * T * s * phi1 ** 2 * coef,
           (1 - b) * eta * el * L ** power * T * float(c_beta_numeric(b)) * s * phi2 ** 2 * coef,
           eta * d * np.sqrt(s) * phi1 * G * ((1 - b) + (T * s / tau ** 2) ** r * cp.power(phi1, 2 * r) / r) / tau]
    gamma1_over_el = K / (np.sqrt(v0 + d * K * G ** 2) + eps)
    objective = cp.sum(cp.hstack(psi[1:])) + psi[0]
    objective = objective * 4 * (cp.sqrt(T * s * phi1 ** 2 + vt0) + tau) / (3 * (1 - b) * gamma1_over_el * T
                                                                           * eta * el)
    constraints = [eta >= eta_box[0], eta <= eta_box[1], el >= eta_l_box[0], el <= eta_l_box[1]]
    return cp.Problem(cp.Minimize(objective), constraints), eta, el


def gp_step_sizes(constants: dict[str, float], variant: str = "printed",
                  eta_range: tuple[float, float] = (1e-4, 1e2), eta_l_range: tuple[float, float] = (1e-6, 1e1),
                  r: float = 0.5) -> StepChoice:
    """The notes' DGP route (5.2) to the minimiser of the Theorem 20 bound of ``variant``: two GPs (one
    per branch of Phi2 = min{., .}, which the bound increases with, so the better branch is exact) with
    the surrogate log(1 + u) <= u^r/r in Psi5. The true bound is then evaluated at each GP solution and
    the better one returned (``grid_*`` fields: the GP surrogate's own optimum). A cross-check of
    :func:`best_step_sizes`, which minimises the true bound."""
    import cvxpy as cp

    r = V.number("r", r, low=0.0, high=1.0, low_open=True)
    lows, highs = _log_box(eta_range, eta_l_range)
    thm = get("fedada2.thm20")
    settings = dict(thm.variant(variant).settings)   # an unknown variant raises UnknownNameError
    variant = thm.variant(variant).name
    needed = set(thm.constants(variant)) - {"eta", "eta_l"}
    missing = sorted(needed - set(constants))
    if missing:
        raise ValidationError(f"gp_step_sizes needs constant(s) {', '.join(missing)}")
    fixed = {k: V.number(k, constants[k]) for k in needed}
    best = None
    for branch in (1, 2):
        problem, eta, el = _thm20_gp(fixed, settings, branch, r, eta_range, eta_l_range)
        problem.solve(gp=True, solver=cp.CLARABEL)
        if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            continue
        e, l_ = float(eta.value), float(el.value)
        true = float(thm.bound(variant, **fixed, eta=e, eta_l=l_))
        if best is None or true < best[2]:
            best = (e, l_, true, float(problem.value))
    if best is None:
        raise ValidationError(f"neither geometric program of {variant} solved")
    x = np.log(best[:2])
    edge = bool(np.any(np.isclose(x, lows, atol=1e-5) | np.isclose(x, highs, atol=1e-5)))
    return StepChoice(variant, best[0], best[1], best[2], best[0], best[1], best[3], edge,
                      label="derived (not in the paper): GP with the log surrogate of notes 5.2")
