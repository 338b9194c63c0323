r"""FedNova's vector inputs reduced to the scalar constants of its results (pure numpy).

Seed 001_530825e753327090.txt; papers/fednova.md sec. 2.2-2.3, 4.3, 4.6, 4.7, 4.12. Every local
solver of the paper accumulates its stochastic gradients linearly,
Delta_i = -eta G_i a_i with G_i = [g_i(x_i^(t,0)), ..., g_i(x_i^(t,tau_i-1))] (L99, App. B
L389-L439): a_i = [a_{i,0}, ..., a_{i,tau_i-1}] >= 0, a_{i,0} the coefficient of the first gradient.
The results of :mod:`fedbound.theory.fednova` take the scalars computed here:

* :func:`norms`: ||a_i||_1, ||a_i||_2^2 and the last entry a_{i,-1} (L165);
* :func:`accumulation_vector` and :func:`closed_form_norms`: the table of sec. 2.3 (SGD, proximal
  (31)-(34) [L397-L406], decayed learning rate [L128], momentum with the buffer reset each round
  (35)-(45) [L414-L439]);
* :func:`implicit_weights`: tau_eff = sum_i p_i ||a_i||_1 and w_i = p_i ||a_i||_1 / tau_eff of (6)
  [L115-L116];
* :func:`abc`: A, B, C of (9) [L163] = (93)-(95) [L606-L608]; :func:`time_averaged_abc` their
  averages over rounds for Theorem 3 (143)-(146) [L806-L813];
* :func:`fedavg_closed_forms` (121)-(124) [L719-L722] and :func:`fedprox_closed_forms`
  (127)-(131) [L744-L751];
* :func:`chi2`: chi^2_{p||w} = sum_i (p_i - w_i)^2/w_i (L175);
* :func:`theorem_constants`: all of them at once for FedAvg-type (implicit) or FedNova aggregation;
* :func:`beta2_kappa2_quadratic`: beta^2, kappa^2 of Assumption 3 (L149) at weights w for quadratic
  clients (sec. 4.12), through :class:`fedbound.tasks.quadratic.Quadratic`.

Everything is vectorized: per-client quantities are arrays with the clients on the last axis (any
leading axes, e.g. rounds, broadcast); no loop over clients.
"""
from __future__ import annotations

import numbers
from typing import Annotated, Sequence

import numpy as np

from fedbound import validate as V
from fedbound.argtypes import (Count, Dims, Matrix, NonNegativeArray, Positive, PositiveArray,
                               ProbabilityArray, Range)
from fedbound.deprecation import deprecated
from fedbound.errors import ValidationError
from fedbound.local_solver import SOLVERS, accumulation_vector, geometric_sum, solver_parameter
from fedbound.theory.certify.trace import is_traced


def _tau(tau) -> np.ndarray:
    if is_traced(tau):
        return tau
    t = V.real_array("tau", tau, low=1.0)
    if not np.all(t == np.round(t)):
        raise ValidationError(f"tau must hold integers >= 1, got {t[t != np.round(t)].flat[0]:g}")
    return t


def closed_form_norms(solver: str, tau: Count | PositiveArray, *, alpha: float | np.ndarray | None = None,
                      gamma: float | np.ndarray | None = None, rho: float | np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(||a||_1, ||a||_2^2, a_{-1}) of the table of sec. 2.3 in closed form, vectorized over arrays
    of tau and of the solver parameter (broadcast together).

    prox: (1-(1-alpha)^tau)/alpha, (1-(1-alpha)^(2 tau))/(1-(1-alpha)^2) (127) [L744], 1;
    decay [derived]: (1-gamma^tau)/(1-gamma), (1-gamma^(2 tau))/(1-gamma^2), gamma^(tau-1);
    momentum: (45) [L439] [tau - rho(1-rho^tau)/(1-rho)]/(1-rho), [derived]
    [tau - 2 rho (1-rho^tau)/(1-rho) + rho^2 (1-rho^(2 tau))/(1-rho^2)]/(1-rho)^2, 1.
    """
    V.one_of("solver", solver, SOLVERS[:-1])
    t = _tau(tau)
    if solver == "sgd":
        return t.copy(), t.copy(), np.ones_like(t)
    if solver == "prox":
        alpha = solver_parameter("alpha", alpha, 0.0, 1.0, True, False)
        with np.errstate(divide="ignore"):
            log_r = np.log1p(-alpha)                          # -inf at alpha = 1
        last = np.ones(np.broadcast_shapes(t.shape, alpha.shape))
        return geometric_sum(log_r, t), geometric_sum(2 * log_r, t), last
    if solver == "decay":
        gamma = solver_parameter("gamma", gamma, 0.0, 1.0, False, False)
        with np.errstate(divide="ignore"):
            log_r = np.log(gamma)
        last = np.where(t > 1, gamma, 1.0) ** (t - 1)      # gamma^(tau-1), 1 for tau = 1 (also gamma = 0)
        return geometric_sum(log_r, t), geometric_sum(2 * log_r, t), last
    rho = solver_parameter("rho", rho, 0.0, 1.0, False, True)
    with np.errstate(divide="ignore"):
        log_r = np.log(rho)
    g1, g2 = geometric_sum(log_r, t), geometric_sum(2 * log_r, t)
    a1 = (t - rho * g1) / (1 - rho)
    a2 = (t - 2 * rho * g1 + rho ** 2 * g2) / (1 - rho) ** 2
    return a1, a2, np.ones_like(a1)


def norms(a: NonNegativeArray | Sequence[NonNegativeArray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(||a_i||_1, ||a_i||_2^2, a_{i,-1}) of one vector (1-D: scalars back), of the rows of a 2-D
    array (clients with equal tau), or of a sequence of 1-D vectors of different lengths (arrays
    (m,) back; one concatenation and ``np.add.reduceat``, no loop over clients)."""
    _not_a_number(a)
    if isinstance(a, np.ndarray) and a.ndim in (1, 2):
        arr = V.real_array("a", a, low=0.0)
        if arr.shape[-1] == 0:
            raise ValidationError("a must have at least one entry")
        return arr.sum(-1), (arr * arr).sum(-1), arr[..., -1].copy()
    vecs = [V.real_array(f"a[{i}]", v, ndim=1, low=0.0) for i, v in enumerate(a)]
    if not vecs or any(v.size == 0 for v in vecs):
        raise ValidationError("a must be a non-empty sequence of non-empty vectors")
    flat = np.concatenate(vecs)
    lengths = np.array([v.size for v in vecs])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return (np.add.reduceat(flat, starts), np.add.reduceat(flat * flat, starts),
            flat[starts + lengths - 1])


def _not_a_number(a) -> None:
    """A ValidationError where the accumulation vectors ``a`` are one number."""
    if isinstance(a, (numbers.Number, np.generic)) or (isinstance(a, np.ndarray) and a.ndim == 0):
        raise ValidationError(f"a must be a vector, a 2-D array or a sequence of vectors, got the "
                              f"number {V.show(a)}")


def _real(name: str, value, **checks) -> np.ndarray:
    """``value`` as a checked float array; traced numbers (the certifier's exact evaluation,
    :mod:`fedbound.theory.certify.trace`) as they are: the certifier checks its points itself."""
    return value if is_traced(value) else V.real_array(name, value, **checks)


def _weights(name: str, p, axis_size: int | None = None) -> np.ndarray:
    if is_traced(p):
        return p
    arr = V.real_array(name, p, low=0.0)
    if arr.ndim == 0 or (axis_size is not None and arr.shape[-1] != axis_size):
        raise ValidationError(f"{name} must have the clients on its last axis, got shape {arr.shape}")
    sums = arr.sum(-1)
    if not np.all(np.abs(sums - 1.0) <= 1e-9):
        raise ValidationError(f"{name} must sum to 1 over the clients, got {np.ravel(sums)[0]!r}")
    return arr


def implicit_weights(p: ProbabilityArray, a1: NonNegativeArray) -> tuple[np.ndarray, np.ndarray]:
    """(tau_eff, w) of (6) [L115-L116]: tau_eff = sum_i p_i ||a_i||_1, w_i = p_i ||a_i||_1 / tau_eff,
    the effective steps and weights of any algorithm that averages Delta_i = -eta G_i a_i with p."""
    p = _weights("p", p)
    a1 = _real("a1", a1, low=0.0)
    if not is_traced(a1) and np.any(a1 <= 0):
        raise ValidationError("||a_i||_1 must be > 0 for every client")
    tau_eff = np.sum(p * a1, axis=-1)
    return tau_eff, p * a1 / tau_eff[..., None]


def abc(w: ProbabilityArray, a1: PositiveArray, a2sq: NonNegativeArray, a_last: NonNegativeArray,
        tau_eff: Positive | PositiveArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A, B, C of (9) [L163] / (93)-(95) [L606-L608], m = the number of clients (last axis):

    A = m tau_eff sum_i w_i^2 ||a_i||_2^2/||a_i||_1^2, B = sum_i w_i (||a_i||_2^2 - a_{i,-1}^2),
    C = max_i ||a_i||_1 (||a_i||_1 - a_{i,-1})."""
    w = _weights("w", w)
    a1, a2sq, a_last = (_real(n, x, low=0.0) for n, x in (("a1", a1), ("a2sq", a2sq),
                                                            ("a_last", a_last)))
    tau_eff = _real("tau_eff", tau_eff)
    m = w.shape[-1]
    A = m * tau_eff * np.sum(w * w * a2sq / (a1 * a1), axis=-1)
    B = np.sum(w * (a2sq - a_last * a_last), axis=-1)
    C = np.max(a1 * (a1 - a_last), axis=-1)
    return A, B, C


def time_averaged_abc(p: ProbabilityArray, a1: PositiveArray, a2sq: NonNegativeArray,
                      a_last: NonNegativeArray, tau_eff: Positive | PositiveArray) -> dict[str, np.ndarray]:
    """Theorem 3's constants for FedNova (w = p) with accumulation vectors varying by round: the
    per-round A^(t), B^(t), C^(t) of (143)-(145) [L806-L808] for arrays (T, m) of norms, their
    averages A_tilde, B_tilde, C_tilde (146) [L813] and a1_max = max_{i,t} ||a_i^(t)||_1 of (152)
    [L833]. ``tau_eff`` is the one server constant the proof uses (notes sec. 4.9 flag)."""
    a1 = V.real_array("a1", a1, ndim=2, low=0.0)
    p = np.broadcast_to(_weights("p", p, a1.shape[-1]), a1.shape)
    A, B, C = abc(p, a1, a2sq, a_last, np.broadcast_to(tau_eff, a1.shape[:1]))
    return {"A_tilde": A.mean(), "B_tilde": B.mean(), "C_tilde": C.mean(), "a1_max": a1.max(),
            "A": A, "B": B, "C": C}


def fedavg_closed_forms(p: ProbabilityArray, tau: PositiveArray) -> dict[str, np.ndarray]:
    """FedAvg (a_i = 1_{tau_i}): (121) tau_eff = sum p_i tau_i, w_i = p_i tau_i/tau_eff,
    (122) A = m sum p_i^2 tau_i / sum p_i tau_i, (123) B = sum p_i tau_i (tau_i - 1)/sum p_i tau_i,
    (124) C = tau_max (tau_max - 1) [L719-L722]."""
    p, t = _weights("p", p), _tau(tau)
    m = p.shape[-1]
    tau_eff = np.sum(p * t, -1)
    tau_max = np.max(np.broadcast_to(t, np.broadcast_shapes(p.shape, t.shape)), -1)
    return {"tau_eff": tau_eff, "w": p * t / tau_eff[..., None], "A": m * np.sum(p * p * t, -1) / tau_eff,
            "B": np.sum(p * t * (t - 1), -1) / tau_eff, "C": tau_max * (tau_max - 1)}


def fedprox_closed_forms(p: ProbabilityArray, tau: PositiveArray, alpha: float | np.ndarray
                         ) -> dict[str, np.ndarray]:
    """FedProx (127)-(131) [L744-L751] with alpha = eta mu (broadcast against p's leading axes):
    tau_eff = (1/alpha) sum p_i [1 - (1-alpha)^tau_i], w_i = p_i [1 - (1-alpha)^tau_i]/sum_j(...),
    A = (m alpha / sum p_i (1 - (1-alpha)^tau_i)) sum p_i^2 (1 - (1-alpha)^(2 tau_i))/(1 - (1-alpha)^2),
    B = sum_i w_i [(1 - (1-alpha)^(2 tau_i))/(1 - (1-alpha)^2) - 1],
    C = [(1 - (1-alpha)^tau_max)/alpha] [(1 - (1-alpha)^tau_max)/alpha - 1]. Evaluated through
    expm1/log1p, accurate as alpha -> 0 (where (132) says they tend to FedAvg's)."""
    p, t = _weights("p", p), _tau(tau)
    alpha = solver_parameter("alpha", alpha, 0.0, 1.0, True, False)[..., None]
    m = p.shape[-1]
    with np.errstate(divide="ignore"):
        log_r = np.log1p(-alpha)                              # -inf at alpha = 1
    a1, a2 = geometric_sum(log_r, t), geometric_sum(2 * log_r, t)      # ||a_i||_1, ||a_i||_2^2
    tau_eff = np.sum(p * a1, -1)
    w = p * a1 / tau_eff[..., None]
    tau_max = np.max(np.broadcast_to(t, np.broadcast_shapes(p.shape, t.shape)), -1)
    c1 = geometric_sum(log_r[..., 0], tau_max)
    return {"tau_eff": tau_eff, "w": w, "A": m * np.sum(p * p * a2, -1) / tau_eff,
            "B": np.sum(w * (a2 - 1), -1), "C": c1 * (c1 - 1)}


#: the aggregation rules (the names of fedbound.algorithms.federated.aggregation)
AGGREGATIONS = ("mean", "normalized")
#: their names before issue 20
_OLD_AGGREGATIONS = {"implicit": "mean", "fednova": "normalized"}


def theorem_constants(p: ProbabilityArray, a: NonNegativeArray | Sequence[NonNegativeArray],
                      aggregation: str = "mean", tau_eff: Positive | None = None) -> dict[str, object]:
    """The preparation step for any local solver: the scalar constants of fednova.thm1/thm2/cor3
    (keyed by their FedNova short names: tau_eff, A, B, C, a1_max, tau_bar, m, chi2) for clients with
    accumulation vectors ``a`` (a sequence of 1-D arrays, tau_i = len(a_i)). Vectors of different
    lengths do not fit the engine's :class:`~fedbound.theory.result.Preparation` (arrays (..., m)),
    so this stays a function; for vanilla local SGD the results take ``p_i``, ``tau_i`` directly
    (:mod:`fedbound.theory.fednova.preparation`).

    ``aggregation="mean"``: sum_i p_i Delta_i (FedAvg, FedProx, any "previous algorithm"), so
    tau_eff and w are the implicit ones of (6); ``"normalized"``: FedNova's w = p (12) with
    ``tau_eff`` given (default sum_i p_i ||a_i||_1, App. H [L961]). The names "implicit" and
    "fednova" still work and warn. Also returned: ``w`` (array), ``chi2`` (L175),
    ``a1_max`` (101), ``tau_bar`` = (1/m) sum_i tau_i (L157), ``m``."""
    if aggregation in _OLD_AGGREGATIONS:
        deprecated(f"theorem_constants(aggregation={aggregation!r})",
                   f"aggregation={_OLD_AGGREGATIONS[aggregation]!r}")
        aggregation = _OLD_AGGREGATIONS[aggregation]
    V.one_of("aggregation", aggregation, AGGREGATIONS)
    _not_a_number(a)
    vecs = [np.asarray(v, dtype=float) for v in a]
    a1, a2sq, last = norms(vecs)
    p = _weights("p", p, len(vecs))
    implicit_tau, w = implicit_weights(p, a1)
    if aggregation == "normalized":
        w = p
        tau_eff = implicit_tau if tau_eff is None else V.number("tau_eff", tau_eff, low=0.0, low_open=True)
    elif tau_eff is not None:
        raise ValidationError("tau_eff is implied by p and a with aggregation='mean' (6); pass "
                              "aggregation='normalized' to choose it")
    else:
        tau_eff = implicit_tau
    A, B, C = abc(w, a1, a2sq, last, tau_eff)
    positive = w > 0
    chi = float(np.sum((p[positive] - w[positive]) ** 2 / w[positive])) if np.all(positive) else float("inf")
    return {"tau_eff": float(tau_eff), "A": float(A), "B": float(B), "C": float(C),
            "a1_max": float(a1.max()), "tau_bar": float(np.mean([v.size for v in vecs])),
            "m": len(vecs), "chi2": chi, "w": w}


def chi2(p: ProbabilityArray, w: ProbabilityArray) -> np.ndarray:
    """chi^2_{p||w} = sum_i (p_i - w_i)^2/w_i (L175); every w_i must be > 0 (else it is infinite)."""
    p, w = _weights("p", p), _weights("w", w)
    if not is_traced(w) and np.any(w <= 0):
        raise ValidationError("chi2 needs every w_i > 0 (chi^2_{p||w} is infinite otherwise)")
    return np.sum((p - w) ** 2 / w, axis=-1)


def beta2_kappa2_quadratic(w: ProbabilityArray, H: Annotated[np.ndarray, Dims((3,))], b: Matrix,
                           beta2: Annotated[float, Range(1.0)] | None = None) -> tuple[float, float]:
    """(beta^2, kappa^2) of Assumption 3 [L149] at weights w for f_i(x) = 1/2 (x-b_i)^T H_i (x-b_i)
    (papers/fednova.md sec. 4.12): kappa^2(beta^2) = max(0, sup_x sum_i w_i ||grad f_i||^2
    - beta^2 ||sum_i w_i grad f_i||^2), computed exactly by :class:`fedbound.tasks.quadratic.Quadratic`
    (``kappa2``/``beta2_min``); ``beta2`` defaults to its smallest admissible value (kappa^2 may be
    inf there when the H_i differ: pass a larger beta2)."""
    from fedbound.tasks.quadratic import Quadratic   # imports torch: only when asked
    H = V.real_array("H", H, ndim=3)
    task = Quadratic(H, V.real_array("b", b, ndim=2), spd=False)
    w = _weights("w", w, task.n)
    beta2 = task.beta2_min(w) if beta2 is None else V.number("beta2", beta2, low=1.0)
    return float(beta2), float(task.kappa2(w, beta2))


__all__ = ["SOLVERS", "AGGREGATIONS", "theorem_constants", "accumulation_vector", "closed_form_norms", "norms", "implicit_weights", "abc",
           "time_averaged_abc", "fedavg_closed_forms", "fedprox_closed_forms", "chi2",
           "beta2_kappa2_quadratic"]
