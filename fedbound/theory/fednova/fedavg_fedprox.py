"""FedNova's special cases of Theorem 1: Corollary 1 (FedAvg), FedProx's closed forms and
Corollary 2 (the best FedProx alpha).

Seed 001, App. E [L711-L796]; papers/fednova.md sec. 4.6-4.8.

* Corollary 1 [L730-L734]: with p_i = 1/m, (125) [L726] tau_eff = tau_bar, A = 1,
  B = tau_bar - 1 + var[tau]/tau_bar, C = tau_max (tau_max - 1), put into (97) or into its
  sqrt(m/(tau_bar T)) form (126). The general-p closed forms (121)-(124) are
  :func:`fedbound.theory.fednova.accumulation.fedavg_closed_forms`.
* FedProx (127), (131) [L744-L751]: per client, with alpha = eta mu, ||a_i||_1 = (1-(1-alpha)^tau)/alpha,
  ||a_i||_2^2 = (1-(1-alpha)^(2 tau))/(1-(1-alpha)^2), a_{i,-1} = 1, and C = ||a||_1 (||a||_1 - 1) at
  tau = tau_max; (128)-(130) are sums over clients:
  :func:`fedbound.theory.fednova.accumulation.fedprox_closed_forms`. (132) [L757]: as alpha -> 0
  they tend to FedAvg's (per client: tau, tau, tau (tau - 1)).
* Corollary 2 [L761-L796]: with p_i = 1/m, tau_i >> 1, the relaxations (134)-(137) turn the bound
  into (138) O(alpha tau_bar/sqrt(m tau_bar T)) + O(1/sqrt(m tau_bar T)) + O(m/(alpha^2 tau_bar T)),
  minimized at (139) alpha = O(m^(1/2) tau_bar^(-1/2) T^(-1/6)). With unit constants, the derivative
  tau_bar/sqrt(m tau_bar T) - 2m/(alpha^3 tau_bar T) vanishes at alpha^3 = 2 m^(3/2) tau_bar^(-3/2)
  T^(-1/2): the printed (139) drops the factor 2 [L786] (O(.) unaffected). :func:`best_alpha` is the
  numerical minimizer of the exact bound (97) at eta = sqrt(m/(tau_bar T)) with (128)-(131).
"""
from __future__ import annotations

from typing import Annotated

import numpy as np
import sympy as sp
from scipy.optimize import minimize_scalar
from sympy.codegen.cfunctions import expm1, log1p

from fedbound import validate as V
from fedbound.argtypes import NonNegative, Positive, PositiveArray, ProbabilityArray, Range
from fedbound.theory.fednova.accumulation import fedprox_closed_forms
from fedbound.theory.fednova.common import (C, Delta, alpha, beta2, eta, m, tau, tau_bar, tau_eff,
                                            tau_max, tau_var, where)
from fedbound.theory.fednova.thm1 import T_MIN_98_99, explicit_bound, sqrt_schedule_bound
from fedbound.theory.fednova.preparation import EQUAL
from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Predicate, Result, StepCondition, Variant
from fedbound.theory.fednova.common import MIN_GRADIENT_TRIVIAL
from fedbound.theory.symbols import L, T



# Corollary 1 --------------------------------------------------------------------------------------
B_FEDAVG = tau_bar - 1 + tau_var / tau_bar          # (125) [L726]
C_FEDAVG = tau_max * (tau_max - 1)
#: fednova.thm1_sched's T_min_98_99 with (125): tau_eff = tau_bar, C = tau_max (tau_max - 1)
_COR1_T_MIN = T_MIN_98_99.subs({tau_eff: tau_bar, C: C_FEDAVG})
_cor1_extras = {"tau_eff": tau_bar, "A": sp.Integer(1), "B": B_FEDAVG, "C": C_FEDAVG}

COR1 = register(Result(
    id="fednova.cor1",
    preparation=EQUAL,
    title="Corollary 1 (FedAvg, p_i = 1/m): Theorem 1 with (125)",
    statement="With p_i = 1/m FedAvg converges to a stationary point of F~ = sum_i tau_i F_i/sum_i tau_i: "
              "min_t E||grad F~||^2 <= O((1 + sigma^2)/sqrt(m tau_bar T)) + O(m sigma^2 (tau_bar - 1 + "
              "var[tau]/tau_bar)/(tau_bar T)) + O(m kappa^2 tau_max (tau_max - 1)/(tau_bar T)) (126).",
    provenance=where("(121)-(126)", "715-734"),
    assumptions=("those of Theorem 1 (fednova.thm1)", "p_i = 1/m", "vanilla SGD local solver"),
    lhs="min_{t<T} E||grad F~(x^(t,0))||^2",
    reference=MIN_GRADIENT_TRIVIAL,
    variants=[
        Variant("explicit", "(97) with (125): tau_eff = tau_bar, A = 1, B = tau_bar - 1 + tau_var/tau_bar, "
                            "C = tau_max (tau_max - 1); conditions (98)-(99) with these",
                bound=explicit_bound(Delta, 1, B_FEDAVG, C_FEDAVG, eff=tau_bar),
                conditions=(StepCondition("(98)", 1 / (2 * L * tau_bar), False, "(98) [L622] with (125)", variable=eta),
                            StepCondition("(99)", 1 / (2 * L * sp.sqrt(C_FEDAVG * (2 * beta2 + 1))), False,
                                          "(99) [L623] with (125)", variable=eta)),
                extras=_cor1_extras),
        Variant("sqrt_schedule", "(126) with the explicit constants of (97) at eta = sqrt(m/(tau_bar T)), "
                                 "valid for T >= T_min of fednova.thm1_sched with (125) (extra T_min_98_99 "
                                 "and the predicate)",
                bound=sqrt_schedule_bound(Delta, 1, B_FEDAVG, C_FEDAVG, tau_bar, eff=tau_bar),
                predicates=(Predicate("eta satisfies (98)-(99)", T, ">=", _COR1_T_MIN,
                                      "(98)-(99) [L622-L623] with (125) at (126)"),),
                extras={**_cor1_extras, "eta": sp.sqrt(m) / sp.sqrt(tau_bar * T), "T_min_98_99": _COR1_T_MIN}),
    ],
))

# FedProx ------------------------------------------------------------------------------------------
# (127) and (131) written with expm1/log1p, identical to the printed (1 - (1-alpha)^tau)/alpha etc.
# (sympy's expand_func turns them back) but evaluated without cancellation as alpha -> 0 (132);
# ||a||_1 - 1 = (1-alpha)(1 - (1-alpha)^(tau-1))/alpha (C is set to 0 at tau = 1 explicitly).
_log_r = log1p(-alpha)


def _one_minus_power(k):
    """1 - (1-alpha)^k."""
    return -expm1(k * _log_r)


PROX_A1 = _one_minus_power(tau) / alpha
PROX_A2SQ = _one_minus_power(2 * tau) / (alpha * (2 - alpha))
#: C = ||a||_1 (||a||_1 - 1); exactly 0 at tau = 1 (a = [1]), where the expm1 form is 0 * log(0) at alpha = 1
PROX_C = sp.Piecewise((0, sp.Eq(tau, 1)), (PROX_A1 * (1 - alpha) * _one_minus_power(tau - 1) / alpha, True))

FEDPROX = register(Result(
    id="fednova.fedprox",
    title="FedProx accumulation norms (127) and C (131)",
    statement="FedProx's a_i = [(1-alpha)^(tau_i-1), ..., 1-alpha, 1], alpha = eta mu: ||a_i||_1 = "
              "(1-(1-alpha)^tau_i)/alpha, ||a_i||_2^2 = (1-(1-alpha)^(2 tau_i))/(1-(1-alpha)^2); "
              "C_FedProx = ||a||_1 (||a||_1 - 1) at tau_max (131); as alpha -> 0 these tend to FedAvg's "
              "tau_i, tau_i, tau_max (tau_max - 1) (132).",
    provenance=where("(127)-(132)", "740-757"),
    assumptions=("proximal local SGD with alpha = eta mu in (0, 1]",),
    lhs="||a_i||_1, ||a_i||_2^2, C of one FedProx client with tau local steps",
    variants=[Variant("printed", "per-client closed forms of (127); C of (131) with tau_max = tau "
                                 "(as expm1/log1p expressions, identical to the printed powers)",
                      extras={"a1": PROX_A1, "a2sq": PROX_A2SQ, "a_last": sp.Integer(1),
                              "C": PROX_C})],
    known_issues=(Flag("L755", "'FedProx is equivalent to FedProx' should read '... to FedAvg'"),),
))

# Corollary 2 --------------------------------------------------------------------------------------
_root = sp.sqrt(m * tau_bar * T)


def relaxed_bound(alpha: sp.Expr | float) -> sp.Expr:
    """(138) [L782] with unit constants: alpha tau_bar/sqrt(m tau_bar T) + 1/sqrt(m tau_bar T)
    + m/(alpha^2 tau_bar T)."""
    return alpha * tau_bar / _root + 1 / _root + m / (alpha ** 2 * tau_bar * T)


ALPHA_PRINTED = sp.sqrt(m) / (sp.sqrt(tau_bar) * T ** sp.Rational(1, 6))                     # (139)
ALPHA_REDERIVED = sp.cbrt(2 * m ** sp.Rational(3, 2) / (tau_bar ** sp.Rational(3, 2) * sp.sqrt(T)))


def _cor2_variant(name: str, description: str, alpha) -> Variant:
    derivative = tau_bar / _root - 2 * m / (alpha ** 3 * tau_bar * T)
    return Variant(name, description, bound=relaxed_bound(alpha),
                   extras={"alpha_star": alpha, "derivative_138": derivative})


COR2 = register(Result(
    id="fednova.cor2",
    title="Corollary 2: the best FedProx alpha (139) and the rate (133)",
    statement="With p_i = 1/m and tau_i >> 1, alpha = O(m^(1/2)/(tau_bar^(1/2) T^(1/6))) minimizes FedProx's "
              "bound on F~, which becomes O(1/sqrt(m tau_bar T)) + O(1/T^(2/3)) (133).",
    provenance=where("(133)-(141)", "761-796"),
    assumptions=("those of Theorem 1", "p_i = 1/m", "tau_i >> 1 (alpha tau_i >> 1 for (134)) [derived]"),
    lhs="min_{t<T} E||grad F~(x^(t,0))||^2 of FedProx, up to constants",
    variants=[
        _cor2_variant("printed", "(139) as printed, alpha = m^(1/2) tau_bar^(-1/2) T^(-1/6); bound (138) with "
                                 "unit constants at that alpha; extra derivative_138 = d(138)/d alpha there",
                      ALPHA_PRINTED),
        _cor2_variant("rederived", "the zero of d(138)/d alpha with the factor 2 [L786]: alpha^3 = "
                                   "2 m^(3/2) tau_bar^(-3/2) T^(-1/2) (the exact minimizer of (138))",
                      ALPHA_REDERIVED),
    ],
    known_issues=(
        Flag("L763", "extra ')' in the statement"),
        Flag("L786", "factor 2 dropped when setting the derivative of (138) to zero (O(.) unaffected)"),
        Flag("L790", "tau^(2/3) in (140) should be tau_bar^(2/3)"),
        Flag("regime", "[derived] (134) tau_eff ~ 1/alpha needs alpha tau_i >> 1, i.e. T^(1/6) << "
                       "sqrt(m tau_bar): the -1/6 exponent holds only there"),
    ),
))


#: a number of rounds: a real number >= 1
Rounds = Annotated[float, Range(1.0)]


def exact_fedprox_bound(alpha: float | np.ndarray, p: ProbabilityArray, tau: PositiveArray, T: Rounds,
                        L: Positive = 1.0, sigma2: NonNegative = 1.0, kappa2: NonNegative = 1.0,
                        Delta: NonNegative = 1.0) -> np.ndarray:
    """The explicit Theorem 1 bound of FedProx at eta = sqrt(m/(tau_bar T)) (the (8)/(102) form of
    (97)) with tau_eff, A, B, C from (128)-(131), vectorized over an array of alpha:
    4 (tau_bar/tau_eff) Delta/sqrt(m tau_bar T) + 4 L sigma^2 A/sqrt(m tau_bar T)
    + 6 m L^2 sigma^2 B/(tau_bar T) + 12 m L^2 kappa^2 C/(tau_bar T)."""
    tau = V.real_array("tau", tau, ndim=1, low=1.0)
    m_, tbar = tau.size, float(np.mean(tau))
    T = V.number("T", T, low=1.0)
    c = fedprox_closed_forms(p, tau, alpha)
    root = np.sqrt(m_ * tbar * T)
    return (4 * tbar / c["tau_eff"] * Delta / root + 4 * L * sigma2 * c["A"] / root
            + 6 * m_ * L ** 2 * sigma2 * c["B"] / (tbar * T) + 12 * m_ * L ** 2 * kappa2 * c["C"] / (tbar * T))


def best_alpha(p: ProbabilityArray, tau: PositiveArray, T: Rounds, L: Positive = 1.0,
               sigma2: NonNegative = 1.0, kappa2: NonNegative = 1.0, Delta: NonNegative = 1.0,
               grid: Annotated[int, Range(10)] = 400) -> float:
    """The alpha in (0, 1] minimizing :func:`exact_fedprox_bound` (Corollary 2's alpha*, computed):
    a log grid over [1e-12, 1] brackets the minimum, Brent's method on log alpha refines it."""
    log_grid = np.linspace(np.log(1e-12), 0.0, V.integer("grid", grid, low=10))
    values = exact_fedprox_bound(np.exp(log_grid), p, tau, T, L, sigma2, kappa2, Delta)
    i = int(np.argmin(values))
    lo, hi = log_grid[max(i - 1, 0)], log_grid[min(i + 1, len(log_grid) - 1)]
    res = minimize_scalar(lambda z: float(exact_fedprox_bound(np.exp(z), p, tau, T, L, sigma2, kappa2,
                                                              Delta)[()]),
                          bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    return float(np.exp(res.x))


__all__ = ["COR1", "FEDPROX", "COR2", "relaxed_bound", "exact_fedprox_bound", "best_alpha"]
