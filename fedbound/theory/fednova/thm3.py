"""FedNova Theorem 3 (convergence to a stationary point of the true F) and Corollary 3 (client
sampling).

Seed 001: Theorem 3 [L208-L212], App. F (142)-(152) [L798-L833]; Corollary 3 (155) [L847-L851],
App. G (153)-(183) [L835-L957]; papers/fednova.md sec. 4.9-4.10.

Theorem 3 (w = p, so F~ = F): with per-round accumulation vectors a_i^(t) and the time averages
A_tilde, B_tilde, C_tilde of (143)-(146) (:func:`fedbound.theory.fednova.accumulation.time_averaged_abc`),

    (1/T) sum_t E||grad F(x^(t,0))||^2 <= 4 Delta/(eta tau_eff T) + 4 eta L sigma^2 A_tilde/m
                                          + 6 eta^2 L^2 sigma^2 B_tilde + 12 eta^2 L^2 kappa^2 C_tilde   (147)

under (152) eta L <= (1/2) min{1/(max_{i,t} ||a_i^(t)||_1 sqrt(2 beta^2 + 1)), 1/tau_eff}. The proof
telescopes (142) after dividing by eta tau_eff, valid only for a tau_eff that does not change with t
(notes sec. 4.9 flag): the bound is for a fixed server tau_eff.

Corollary 3: q clients sampled with replacement by p, equal weights 1/q (153), a_i fixed:

    (1/T) sum_t E||grad F(x^(t,0))||^2 <= 8 Delta/(eta tau_eff T) + 8 tau_eff eta L (sigma^2 + 3 kappa^2)/q
                                          + 48 eta^2 L^2 sigma^2 B + 96 eta^2 L^2 kappa^2 C             (182)

under eta L <= 1/(2 tau_eff), 6 tau_eff eta L (1 + beta^2/q) <= 1/2 [L920] and
D = 4 eta^2 L^2 C <= 1/(12 beta^2 + 1) [L930]. At eta = sqrt(q/(tau_tilde T)) the second term is
8 L (sigma^2 + 3 kappa^2) tau_eff/sqrt(q tau_tilde T); the paper's (183) [L955] writes
(tau_eff/tau_tilde)/sqrt(q tau_tilde T), a factor tau_tilde too small (notes sec. 4.10 item 3).
"""
import sympy as sp

from fedbound.theory.fednova.common import (A_tilde, B, B_tilde, C, C_tilde, Delta, a1_max,
                                            beta2, eta, kappa2, m, q, tau_eff, tau_tilde,
                                            where)
from fedbound.theory.fednova.thm1 import (AVERAGE_GRAD, accumulation_relations, explicit_bound,
                                          sqrt_schedule_bound)
from fedbound.theory.fednova.preparation import FEDNOVA_COR3, FEDNOVA_THM3
from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Predicate, Result, StepCondition, Variant
from fedbound.theory.fednova.common import MIN_GRADIENT_TRIVIAL
from fedbound.theory.symbols import L, T, sigma



TAU_EFF_FLAG = Flag("L800-L833", "the proof divides (142) by eta tau_eff and telescopes, valid only for a "
                                 "tau_eff constant across rounds; FedNova (12) uses tau_eff^(t): the bound is "
                                 "derived for a fixed server tau_eff only (notes sec. 4.9)")

#: (143)-(146) [L806-L813]: the relations of (93)-(95) for the time averages (thm1.accumulation_relations)
TILDE_RELATIONS, TILDE_A_RELATIONS = accumulation_relations(A_tilde, B_tilde, C_tilde, tau_tilde,
                                                            "(143)-(146) [L806-L813]")
#: Corollary 3 uses B and C of (94)-(95) at w = p (a_i fixed)
COR3_RELATIONS = accumulation_relations()[0]

THM3 = register(Result(
    id="fednova.thm3",
    preparation=FEDNOVA_THM3,
    title="Theorem 3 (FedNova, true objective F), explicit form (147)",
    statement="Under Assumptions 1-3, FedNova with arbitrary tau_i(t) and a_i(t) and eta satisfying (152): "
              "(1/T) sum_t E||grad F(x^(t,0))||^2 <= 4 Delta/(eta tau_eff T) + 4 eta L sigma^2 A~/m "
              "+ 6 eta^2 L^2 sigma^2 B~ + 12 eta^2 L^2 kappa^2 C~ (time averages of (143)-(145)).",
    provenance=where("(142)-(152)", "798-833"),
    assumptions=("Assumptions 1-3 (Assumption 3 at p)", "w_i = p_i (FedNova)",
                 "a fixed server tau_eff (see the known issue)"),
    lhs="(1/T) sum_{t<T} E||grad F(x^(t,0))||^2",
    measure=AVERAGE_GRAD,
    relations=TILDE_RELATIONS,
    variants=[Variant(
        "printed", "(147) with (152): eta L <= (1/2) min{1/(a1_max sqrt(2 beta^2+1)), 1/tau_eff}, a1_max = "
                   "max_{i,t} ||a_i^(t)||_1, i.e. (151) [L829] in every round; predicate C_tilde <= a1_max^2 "
                   "(each C^(t) <= a1_max^2, what makes (152) sufficient)",
        bound=explicit_bound(Delta, A_tilde, B_tilde, C_tilde),
        conditions=(StepCondition("(152) a1_max", 1 / (2 * L * a1_max * sp.sqrt(2 * beta2 + 1)), False,
                                  "(152) [L833]", variable=eta),
                    StepCondition("(152) tau_eff", 1 / (2 * L * tau_eff), False, "(152) [L833]", variable=eta)),
        predicates=(Predicate("(100) C_tilde <= a1_max^2", C_tilde, "<=", a1_max ** 2,
                              "(100) [L627] in every round, (151) [L829]"),))],
    known_issues=(TAU_EFF_FLAG, Flag("L819", "'Bt setting' should read 'By setting'")),
))

#: [derived]: the smallest T at which eta = sqrt(m/(tau_tilde T)) satisfies (152)
T_MIN_152 = 4 * m * L ** 2 * sp.Max(tau_eff ** 2, (2 * beta2 + 1) * a1_max ** 2) / tau_tilde
THM3_SCHED = register(Result(
    id="fednova.thm3_sched",
    preparation=FEDNOVA_THM3,
    title="Theorem 3 with eta = sqrt(m/(tau_tilde T)), explicit (149)",
    statement="(147) at eta = sqrt(m/(tau_tilde T)): <= 4 (tau_tilde/tau_eff) Delta/sqrt(m tau_tilde T) "
              "+ 4 L sigma^2 A~/sqrt(m tau_tilde T) + 6 m L^2 sigma^2 B~/(tau_tilde T) + 12 m L^2 kappa^2 "
              "C~/(tau_tilde T) = O(1/sqrt(m tau_tilde T)).",
    provenance=where("(148)-(150)", "820-824"),
    assumptions=("those of Theorem 3 (fednova.thm3)", "eta = sqrt(m/(tau_tilde T)) satisfies (152)"),
    lhs="min_{t<T} E||grad F(x^(t,0))||^2",
    reference=MIN_GRADIENT_TRIVIAL,
    relations=TILDE_RELATIONS,
    variants=[Variant("printed", "(149) as printed; extra eta = sqrt(m/(tau_tilde T)) and [derived] T_min_152 "
                                 "= 4 m L^2 max(tau_eff^2, (2 beta^2+1) a1_max^2)/tau_tilde, the smallest T "
                                 "for which that eta satisfies (152), also as the predicate T >= T_min_152",
                      bound=sqrt_schedule_bound(Delta, A_tilde, B_tilde, C_tilde, tau_tilde),
                      predicates=(Predicate("eta satisfies (152)", T, ">=", T_MIN_152, "(152) [L833] at (148)"),),
                      extras={"eta": sp.sqrt(m) / sp.sqrt(tau_tilde * T), "T_min_152": T_MIN_152})],
    known_issues=(TAU_EFF_FLAG,),
))

COR3_CAPS = (
    StepCondition("eta L <= 1/(2 tau_eff)", 1 / (2 * L * tau_eff), False, "[L920]", variable=eta),
    StepCondition("6 tau_eff eta L (1 + beta^2/q) <= 1/2", 1 / (12 * L * tau_eff * (1 + beta2 / q)), False,
                  "[L920]", variable=eta),
    StepCondition("D <= 1/(12 beta^2 + 1)", 1 / (2 * L * sp.sqrt(C * (12 * beta2 + 1))), False, "[L930]", variable=eta),
)

COR3 = register(Result(
    id="fednova.cor3",
    preparation=FEDNOVA_COR3,
    title="Corollary 3 (FedNova with client sampling), explicit form (182)",
    statement="q clients sampled with replacement by p and averaged with weights 1/q (153): (1/T) sum_t "
              "E||grad F(x^(t,0))||^2 <= 8 Delta/(eta tau_eff T) + 8 tau_eff eta L (sigma^2 + 3 kappa^2)/q "
              "+ 48 eta^2 L^2 sigma^2 B + 96 eta^2 L^2 kappa^2 C.",
    provenance=where("(153)-(182)", "835-951"),
    assumptions=("those of Theorem 1 at w = p", "sampling scheme (i): q i.i.d. indices with P(l = i) = p_i, "
                 "independent local runs for repeated indices", "a_i fixed across rounds"),
    lhs="(1/T) sum_{t<T} E||grad F(x^(t,0))||^2",
    measure=AVERAGE_GRAD,
    relations=COR3_RELATIONS,
    variants=[Variant("printed", "(182) with the conditions of [L920] and [L930]; "
                                 "B, C of (94)-(95) with w = p",
                      bound=(8 * Delta / (eta * tau_eff * T) + 8 * tau_eff * eta * L * (sigma ** 2 + 3 * kappa2) / q
                             + 48 * eta ** 2 * L ** 2 * sigma ** 2 * B + 96 * eta ** 2 * L ** 2 * kappa2 * C),
                      conditions=COR3_CAPS)],
    known_issues=(
        Flag("L876", "the factor 2 is dropped in (162) and reappears in (163)"),
        Flag("L907", "E_{i~D}[F_i(x)] = grad F(x) should be E[grad F_i(x)]"),
        Flag("L918", "(174) writes the coefficient (1/2 + 2 tau_eff eta L) where (173) has (1/2 + 3 tau_eff eta L); "
                     "harmless: the second condition gives tau_eff eta L <= 1/12, so it is <= 3/4 <= 3/2"),
        Flag("L875/L909/L933", "h_{l_J} typo; '(G)' refers to (168); a missing brace"),
    ),
))

_root_q = sp.sqrt(q * tau_tilde * T)
_sched_common = (8 * (tau_tilde / tau_eff) * Delta / _root_q
                 + 48 * q * L ** 2 * sigma ** 2 * B / (tau_tilde * T)
                 + 96 * q * L ** 2 * kappa2 * C / (tau_tilde * T))
#: [derived]: the smallest T at which eta = sqrt(q/(tau_tilde T)) satisfies Corollary 3's conditions
#: eta <= cap_j, i.e. T >= q/(tau_tilde cap_j^2) for each
T_MIN_COR3 = q / tau_tilde * sp.Max(*(1 / c.cap ** 2 for c in COR3_CAPS))
_sched_extras = {"eta": sp.sqrt(q) / sp.sqrt(tau_tilde * T), "T_min": T_MIN_COR3}
_sched_predicates = (Predicate("eta satisfies [L920], [L930]", T, ">=", T_MIN_COR3,
                               "[L920], [L930] at eta = sqrt(q/(tau_tilde T)) (183)"),)

COR3_SCHED = register(Result(
    id="fednova.cor3_sched",
    preparation=FEDNOVA_COR3,
    title="Corollary 3 with eta = sqrt(q/(tau_tilde T)), (155)/(183)",
    statement="(182) at eta = sqrt(q/(tau_tilde T)): the paper states O((tau_tilde/tau_eff)/sqrt(q tau_tilde T)) "
              "+ O((tau_eff/tau_tilde)/sqrt(q tau_tilde T)) + O(q (B + C)/(tau_tilde T)) and the rate "
              "O(1/sqrt(q tau_tilde T)) [L212].",
    provenance=where("(155), (183)", "847-851, 953-955"),
    assumptions=("those of Corollary 3 (fednova.cor3) at eta = sqrt(q/(tau_tilde T)), i.e. T >= T_min "
                 "[derived] (extra T_min and the predicate)",),
    lhs="(1/T) sum_{t<T} E||grad F(x^(t,0))||^2",
    relations=COR3_RELATIONS,
    variants=[
        Variant("printed", "(183) with the constants of (182) carried into each O-term, second term as printed "
                           "8 L (sigma^2 + 3 kappa^2) (tau_eff/tau_tilde)/sqrt(q tau_tilde T) [L955]",
                bound=_sched_common + 8 * L * (sigma ** 2 + 3 * kappa2) * (tau_eff / tau_tilde) / _root_q,
                predicates=_sched_predicates, extras=_sched_extras),
        Variant("rederived", "(182) at eta = sqrt(q/(tau_tilde T)) substituted correctly: second term "
                             "8 L (sigma^2 + 3 kappa^2) tau_eff/sqrt(q tau_tilde T) (notes sec. 4.10 item 3); "
                             "with tau_eff ~ tau_tilde it is O(sqrt(tau_tilde/(q T))), not O(1/sqrt(q tau_tilde T))",
                bound=_sched_common + 8 * L * (sigma ** 2 + 3 * kappa2) * tau_eff / _root_q,
                predicates=_sched_predicates, extras=_sched_extras),
    ],
    known_issues=(
        Flag("L212/L851/L955", "the second term of (183) is mis-simplified: 8 tau_eff eta L (sigma^2 + 3 kappa^2)/q "
                               "at eta = sqrt(q/(tau_tilde T)) is 8 L (sigma^2 + 3 kappa^2) tau_eff/sqrt(q tau_tilde "
                               "T), a factor tau_tilde larger than printed; the main-text rate O(1/sqrt(q tau_tilde "
                               "T)) rests on it"),
        Flag("L953", "tau_tilde = sum_t tau_bar/T is missing the (t)"),
    ),
))
