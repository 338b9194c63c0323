"""FedNova Theorem 1 (convergence to a stationary point of the surrogate F~ = sum_i w_i F_i).

Seed 001: Theorem 1 (8)-(9) [L155-L165]; proof App. C [L441-L639]: per-round inequality (89)-(91)
[L587-L596], explicit bound (96)-(97) [L612-L616], learning-rate conditions (98)-(101)
[L622-L631], eta = sqrt(m/(tau_bar T)) (102) [L635-L637]; papers/fednova.md sec. 4.3.

For any algorithm following (4), x^(t+1,0) - x^(t,0) = -tau_eff eta sum_i w_i d_i, and any eta with
(98) eta L <= 1/(2 tau_eff) and (99) D = 4 eta^2 L^2 C <= 1/(2 beta^2 + 1):

    (1/T) sum_t E||grad F~(x^(t,0))||^2 <= 4 Delta/(eta tau_eff T) + 4 eta L sigma^2 A/m
                                           + 6 eta^2 L^2 sigma^2 B + 12 eta^2 L^2 kappa^2 C      (97)

with Delta = F~(x^(0,0)) - F~_inf and A, B, C of (93)-(95) (computed from the accumulation
vectors by :func:`fedbound.theory.fednova.accumulation.abc`). (101) is the sufficient condition
eta L <= (1/2) min{1/(max_i ||a_i||_1 sqrt(2 beta^2 + 1)), 1/tau_eff}, since C <= max_i ||a_i||_1^2.

All conditions cap FedNova's client learning rate eta (``StepCondition(..., variable=eta)``).
Theorem 1's constants can be given directly or reduced from per-client ``p_i``, ``tau_i`` (vanilla
local SGD averaged with p, i.e. FedAvg, (121)-(124)) by the results' preparation step
(:mod:`fedbound.theory.fednova.preparation`).
"""
from __future__ import annotations

import sympy as sp

from fedbound.theory.fednova.common import (A, B, C, Delta, a1_max, beta2, eta, grad_sq, kappa2, m,
                                            tau_bar, tau_eff, where)
from fedbound.theory.fednova.preparation import FEDAVG
from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Predicate, Result, StepCondition, Variant
from fedbound.theory.fednova.common import MIN_GRADIENT_TRIVIAL
from fedbound.theory.statement import Measure
from fedbound.theory.symbols import L, T, sigma

#: (98) [L622]: eta L <= 1/(2 tau_eff)
CAP_98 = StepCondition("(98)", 1 / (2 * L * tau_eff), False, "(98) [L622]", variable=eta)
#: (99) [L623]: 4 eta^2 L^2 C <= 1/(2 beta^2 + 1), solved for eta
CAP_99 = StepCondition("(99)", 1 / (2 * L * sp.sqrt(C * (2 * beta2 + 1))), False, "(99) [L623]", variable=eta)
#: (101) [L631], first entry: eta L <= 1/(2 max_i ||a_i||_1 sqrt(2 beta^2 + 1))
CAP_101 = StepCondition("(101) a1_max", 1 / (2 * L * a1_max * sp.sqrt(2 * beta2 + 1)), False, "(101) [L631]", variable=eta)
#: (100) [L627]: C = max_i ||a_i||_1 (||a_i||_1 - a_{i,-1}) <= max_i ||a_i||_1^2, what makes (101) sufficient
SUFFICIENT_100 = Predicate("(100) C <= a1_max^2", C, "<=", a1_max ** 2, "(100) [L627]")
CAP_101_TAU = StepCondition("(101) tau_eff", 1 / (2 * L * tau_eff), False, "(101) [L631]", variable=eta)


def accumulation_relations(a_const: sp.Expr | float = A, b_const: sp.Expr | float = B,
                           c_const: sp.Expr | float = C, steps: sp.Expr | float = tau_bar,
                           source: str = "(9) [L163], (93)-(95) [L606-L608]"
                           ) -> tuple[tuple[Predicate, ...], tuple[Predicate, ...]]:
    """The relations that the definitions (93)-(95) of A, B, C imply for every set of accumulation
    vectors a_i >= 0 (a_i in R^{tau_i}), weights w (sum 1) and tau_eff > 0 (issue 22: a sampled
    instance breaking one is not realizable):

    * B <= C: per client ||a_i||_2^2 - a_{i,-1}^2 = sum_{k < tau_i - 1} a_{i,k}^2 <= (||a_i||_1 - a_{i,-1})^2
      <= ||a_i||_1 (||a_i||_1 - a_{i,-1}) <= C, and B is a w-average of the left sides;
    * A <= m tau_eff: ||a_i||_2 <= ||a_i||_1 and sum_i w_i^2 <= 1;
    * A >= tau_eff/tau_bar: ||a_i||_2^2 >= ||a_i||_1^2/tau_i (Cauchy-Schwarz) and
      sum_i w_i^2/tau_i >= (sum_i w_i)^2/sum_i tau_i = 1/(m tau_bar) (Cauchy-Schwarz again).

    (100) [L627] C <= a1_max^2 is implied too, but stays the predicate of the variants whose condition
    needs it (fednova.thm1 sufficient, fednova.thm3), reported as failing rather than refused, so that
    a C given alone keeps its meaning (the audit's samplers draw C as a fraction of a1_max^2).

    Theorem 3's time averages (146) satisfy the same with tau_tilde for tau_bar (each round's A^(t)
    >= tau_eff/tau_bar^(t), and mean_t 1/tau_bar^(t) >= 1/tau_tilde by Jensen)."""
    b_le_c = Predicate("B <= C", b_const, "<=", c_const, f"{source}: B <= C for every a_i")
    return (b_le_c,), (
        Predicate("A <= m tau_eff", a_const, "<=", m * tau_eff, f"{source}: ||a_i||_2 <= ||a_i||_1, sum w_i^2 <= 1"),
        Predicate("A >= tau_eff/tau_bar", a_const, ">=", tau_eff / steps,
                  f"{source}: Cauchy-Schwarz twice (a_i in R^tau_i, tau_bar = mean tau_i [L157])"))


#: the relations of (93)-(95) between Theorem 1's constants that the results declare (B <= C) and
#: those they imply but do not declare (on A: fedbound.testing draws A, tau_eff, m, tau_bar
#: independently, so a declared relation on them would refuse its draws); the audit's samplers
#: satisfy both (tests/theory/test_fednova_referee.py)
ABC_RELATIONS, A_RELATIONS = accumulation_relations()
#: what (97) bounds in terms of a run: the average over x^(0,0) .. x^(T-1,0) of E||grad F~||^2; a
#: run measures grad F, which is grad F~ where w = p (FedNova, or FedAvg with equal ||a_i||_1)
AVERAGE_GRAD = Measure("grad_norm2", "average")

#: the proof constant D = 4 eta^2 L^2 max_i ||a_i||_1 (||a_i||_1 - a_{i,-1}) [L566]
D_PROOF = 4 * eta ** 2 * L ** 2 * C


def explicit_bound(gap: sp.Expr | float, a_const: sp.Expr | float, b_const: sp.Expr | float,
                   c_const: sp.Expr | float, eff: sp.Expr | float = tau_eff,
                   clients: sp.Expr | float = m) -> sp.Expr:
    """(97) [L616] (and (147) [L817] with the time averages): 4 gap/(eta tau_eff T) + 4 eta L sigma^2 A/m
    + 6 eta^2 L^2 sigma^2 B + 12 eta^2 L^2 kappa^2 C."""
    return (4 * gap / (eta * eff * T) + 4 * eta * L * sigma ** 2 * a_const / clients
            + 6 * eta ** 2 * L ** 2 * sigma ** 2 * b_const + 12 * eta ** 2 * L ** 2 * kappa2 * c_const)


def sqrt_schedule_bound(gap: sp.Expr | float, a_const: sp.Expr | float, b_const: sp.Expr | float,
                        c_const: sp.Expr | float, steps: sp.Expr | float, eff: sp.Expr | float = tau_eff,
                        clients: sp.Expr | float = m) -> sp.Expr:
    """(97) at eta = sqrt(m/(steps T)) written as the paper does ((102) explicit, = (149) [L822]):
    4 (steps/tau_eff) gap/sqrt(m steps T) + 4 L sigma^2 A/sqrt(m steps T) + 6 m L^2 sigma^2 B/(steps T)
    + 12 m L^2 kappa^2 C/(steps T)."""
    root = sp.sqrt(clients * steps * T)
    return (4 * (steps / eff) * gap / root + 4 * L * sigma ** 2 * a_const / root
            + 6 * clients * L ** 2 * sigma ** 2 * b_const / (steps * T)
            + 12 * clients * L ** 2 * kappa2 * c_const / (steps * T))


THM1 = register(Result(
    id="fednova.thm1",
    preparation=FEDAVG,
    title="Theorem 1 (surrogate objective), explicit form (97)",
    statement="Under Assumptions 1-3, any algorithm following (4) with eta satisfying (98)-(99): "
              "(1/T) sum_t E||grad F~(x^(t,0))||^2 <= 4 Delta/(eta tau_eff T) + 4 eta L sigma^2 A/m "
              "+ 6 eta^2 L^2 sigma^2 B + 12 eta^2 L^2 kappa^2 C, F~ = sum_i w_i F_i.",
    provenance=where("(96)-(101)", "441-631"),
    assumptions=("Assumption 1 (L-smooth F_i)", "Assumption 2 (unbiased, variance sigma^2)",
                 "Assumption 3 (beta^2, kappa^2) at the weights w", "update rule (4) with fixed a_i, w_i, tau_eff"),
    lhs="(1/T) sum_{t<T} E||grad F~(x^(t,0))||^2 (>= min_t)",
    measure=AVERAGE_GRAD,
    relations=ABC_RELATIONS,
    variants=[
        Variant("printed", "(97) with the conditions (98) and (99) of App. C.7; extra D "
                           "is the proof constant 4 eta^2 L^2 C [L566]",
                bound=explicit_bound(Delta, A, B, C), conditions=(CAP_98, CAP_99),
                extras={"D": D_PROOF}),
        Variant("sufficient", "(97) with the simpler sufficient condition (101), which needs a1_max = "
                              "max_i ||a_i||_1 instead of C (C <= a1_max^2, (100), a predicate: (101) implies "
                              "(99) only for consistent C and a1_max)",
                bound=explicit_bound(Delta, A, B, C), conditions=(CAP_101, CAP_101_TAU),
                predicates=(SUFFICIENT_100,), extras={"D": D_PROOF}),
    ],
    known_issues=(
        Flag("L99", "G_i is declared d x tau_i but lists g_i(x_i^(t,tau_i)) as a (tau_i+1)-th column; the "
                    "last index is tau_i - 1 as in (46) [L447]"),
        Flag("L480", "grad F~(x^(t)) written for grad F~(x^(t,0))"),
        Flag("L548", "a_{i,s} inside sum_k of (80) should be a_{i,k}"),
        Flag("L559", "grad F_i(x_i^(t,0)) = grad F_i(x^(t,0)) in (83) (harmless)"),
    ),
))

eta_schedule = sp.sqrt(m) / sp.sqrt(tau_bar * T)
#: [derived] (notes sec. 4.3): the smallest T at which eta = sqrt(m/(tau_bar T)) satisfies (98)-(99), (101)
T_MIN_98_99 = 4 * m * L ** 2 * sp.Max(tau_eff ** 2, (2 * beta2 + 1) * C) / tau_bar
T_MIN_101 = 4 * m * L ** 2 * sp.Max(tau_eff ** 2, (2 * beta2 + 1) * a1_max ** 2) / tau_bar
THM1_SCHED = register(Result(
    id="fednova.thm1_sched",
    preparation=FEDAVG,
    title="Theorem 1 with eta = sqrt(m/(tau_bar T)), explicit (8)",
    statement="(97) at eta = sqrt(m/(tau_bar T)), tau_bar = (1/m) sum_i tau_i: <= 4 (tau_bar/tau_eff) "
              "Delta/sqrt(m tau_bar T) + 4 L sigma^2 A/sqrt(m tau_bar T) + 6 m L^2 sigma^2 B/(tau_bar T) "
              "+ 12 m L^2 kappa^2 C/(tau_bar T) = O(1/sqrt(m tau_bar T)).",
    provenance=where("(8), (102)", "155-165, 635-637"),
    assumptions=("those of Theorem 1 (fednova.thm1)", "eta = sqrt(m/(tau_bar T)) satisfies (98)-(99), "
                 "i.e. T >= T_min [derived]"),
    lhs="min_{t<T} E||grad F~(x^(t,0))||^2",
    reference=MIN_GRADIENT_TRIVIAL,
    relations=ABC_RELATIONS,
    variants=[Variant(
        "printed", "(8) with the explicit constants of (97) (the form (149) prints for Theorem 3); extras: "
                   "eta = sqrt(m/(tau_bar T)) and, [derived] (notes sec. 4.3, the paper states none), the "
                   "smallest T for which that eta satisfies (98)-(99), T_min_98_99 = 4 m L^2 max(tau_eff^2, "
                   "(2 beta^2+1) C)/tau_bar, or (101), T_min_101 = 4 m L^2 max(tau_eff^2, (2 beta^2+1) "
                   "a1_max^2)/tau_bar; predicates T >= T_min (a lower bound on T, so a predicate rather than "
                   "a step condition T <= cap)",
        bound=sqrt_schedule_bound(Delta, A, B, C, tau_bar),
        predicates=(Predicate("eta satisfies (98)-(99)", T, ">=", T_MIN_98_99, "(98)-(99) [L622-L623] at (102)"),
                    Predicate("eta satisfies (101)", T, ">=", T_MIN_101, "(101) [L631] at (102)")),
        extras={"eta": eta_schedule, "T_min_98_99": T_MIN_98_99, "T_min_101": T_MIN_101})],
    known_issues=(
        Flag("L157/L635", "eta = sqrt(m/(tau_bar T)) has no L (dimensionally inconsistent) and must also "
                          "satisfy (98)-(99) or (101): true only for T >= T_min [derived]"),
    ),
))

_round_terms = eta * L * sigma ** 2 * A / m
THM1_ROUND = register(Result(
    id="fednova.thm1_round",
    preparation=FEDAVG,
    title="Theorem 1, per-round inequality (91) (and its unsimplified form (89))",
    statement="Conditional on x^(t,0), under (98)-(99): (E F~(x^(t+1,0)) - F~(x^(t,0)))/(eta tau_eff) <= "
              "-||grad F~(x^(t,0))||^2/4 + tau_eff eta L sigma^2 sum_i w_i^2 ||a_i||_2^2/||a_i||_1^2 "
              "+ (3/2) eta^2 L^2 sigma^2 B + 3 eta^2 L^2 kappa^2 C; the middle term is eta L sigma^2 A/m.",
    provenance=where("(89)-(91)", "587-596"),
    assumptions=("those of Theorem 1 (fednova.thm1)",),
    lhs="(E[F~(x^(t+1,0)) | x^(t,0)] - F~(x^(t,0)))/(eta tau_eff)",
    relations=ABC_RELATIONS,
    variants=[
        Variant("printed", "(91) [L596] with (98)-(99); grad_sq = ||grad F~(x^(t,0))||^2",
                bound=(-grad_sq / 4 + _round_terms + sp.Rational(3, 2) * eta ** 2 * L ** 2 * sigma ** 2 * B
                       + 3 * eta ** 2 * L ** 2 * kappa2 * C),
                conditions=(CAP_98, CAP_99)),
        Variant("unsimplified", "(89) [L587] before the simplification (90): needs (98) and D < 1 only; "
                                "D = 4 eta^2 L^2 C",
                bound=(-sp.Rational(1, 2) * (1 - D_PROOF * (1 + beta2)) / (1 - D_PROOF) * grad_sq + _round_terms
                       + eta ** 2 * L ** 2 * sigma ** 2 * B / (1 - D_PROOF)
                       + D_PROOF * kappa2 / (2 * (1 - D_PROOF))),
                conditions=(CAP_98, StepCondition("D < 1", 1 / (2 * L * sp.sqrt(C)), True, "(89) [L587]", variable=eta)),
                extras={"D": D_PROOF}),
    ],
))
