"""FedNova Theorem 2 (the true objective F, chi-square bias), Lemma 3 and Lemma 4 (lower bound).

Seed 001: Theorem 2 (10) [L169-L175]; App. D: Lemma 3 (103) [L643-L647], its proof (104)-(108) and
(109)-(113) [L651-L677]; Lemma 4 (114) [L683-L687] with the two-client example (115)-(120)
[L691-L709]; papers/fednova.md sec. 4.4-4.5.

Theorem 2: min_t E||grad F(x^(t,0))||^2 <= 2[chi^2 (beta^2 - 1) + 1] eps_opt + 2 chi^2 kappa^2 with
chi^2 = chi^2_{p||w} = sum_i (p_i - w_i)^2/w_i (computed by
:func:`fedbound.theory.fednova.accumulation.chi2`).

Lemma 4's example: F_1 = (x - a)^2/2, F_2 = (x + a)^2/2, p = (1/2, 1/2), FedAvg's weights
w_i = tau_i/(tau_1 + tau_2). As eta -> 0 FedAvg converges to x_inf = (w_1 - w_2) a (117), so
lim ||grad F||^2 = x_inf^2 = ((tau_1 - tau_2)/(tau_1 + tau_2))^2 a^2 (118)-(120). The paper's
kappa^2 = 2 w_1 w_2 a^2 (116) and chi^2 = (tau_2 - tau_1)^2/(2 tau_1 tau_2) [L709] are each off
by a factor 2 (notes sec. 4.5): sum_i w_i (grad F_i - grad F~)^2 = w_1 (2 w_2 a)^2 + w_2 (2 w_1 a)^2
= 4 w_1 w_2 a^2 and chi^2 = (tau_1 - tau_2)^2/(4 tau_1 tau_2). The two errors cancel in (120):
with either pair, lim ||grad F||^2 = chi^2 kappa^2 exactly, so the floor 2 chi^2 kappa^2 of (10) is
tight up to the factor 2.
"""
from fedbound.theory.fednova.common import (a, beta2, chi2, eps_opt, grad_sq, kappa2, tau_1,
                                            tau_2, where)
from fedbound.theory.fednova.thm1 import ABC_RELATIONS, CAP_98, CAP_99, THM1
from fedbound.theory.fednova.preparation import FEDAVG_CHI2
from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Result, Variant
from fedbound.theory.statement import Measure

_vanishing = 2 * (chi2 * (beta2 - 1) + 1)
_floor = 2 * chi2 * kappa2
_explicit_eps = THM1.variant("printed").bound

THM2 = register(Result(
    id="fednova.thm2",
    preparation=FEDAVG_CHI2,
    title="Theorem 2 (true objective F): chi-square bias floor (10)",
    statement="Under the conditions of Theorem 1: min_t E||grad F(x^(t,0))||^2 <= 2[chi^2_{p||w}(beta^2 - 1) "
              "+ 1] eps_opt + 2 chi^2_{p||w} kappa^2; the second term does not vanish as eta -> 0.",
    provenance=where("(10), (109)-(113)", "169-175, 666-677"),
    assumptions=("those of Theorem 1 (fednova.thm1)", "w_i > 0 for every client (else chi^2 is infinite)"),
    lhs="min_{t<T} E||grad F(x^(t,0))||^2 (also (1/T) sum_t, (111)-(112))",
    relations=ABC_RELATIONS,
    measure=Measure("grad_norm2", "min"),
    variants=[
        Variant("printed", "(10) with eps_opt the optimization error of Theorem 1 as a constant; extras: "
                           "the non-vanishing floor 2 chi^2 kappa^2 and the factor 2[chi^2(beta^2-1)+1]",
                bound=_vanishing * eps_opt + _floor,
                extras={"floor": _floor, "vanishing_factor": _vanishing}),
        Variant("explicit", "(10) with eps_opt := the right-hand side of (97) (fednova.thm1 printed), "
                            "under (98)-(99)",
                bound=_vanishing * _explicit_eps + _floor, conditions=(CAP_98, CAP_99),
                extras={"floor": _floor, "vanishing_factor": _vanishing}),
    ],
    known_issues=(Flag("L173", "the expectation is omitted in (10): read E||grad F(x^(t,0))||^2"),),
))

LEMMA3 = register(Result(
    id="fednova.lemma3",
    title="Lemma 3: gradient gap between F and F~ (103)",
    statement="For any x: ||grad F(x) - grad F~(x)||^2 <= chi^2_{p||w} [(beta^2 - 1)||grad F~(x)||^2 + kappa^2]; "
              "hence (110) ||grad F(x)||^2 <= 2[chi^2(beta^2-1)+1] ||grad F~(x)||^2 + 2 chi^2 kappa^2.",
    provenance=where("(103)-(110)", "643-669"),
    assumptions=("Assumption 3 at the weights w (beta^2, kappa^2)", "w_i > 0"),
    lhs="||grad F(x) - grad F~(x)||^2",
    variants=[Variant("printed", "(103); grad_sq = ||grad F~(x)||^2; extra grad_F_bound is (110)",
                      bound=chi2 * ((beta2 - 1) * grad_sq + kappa2),
                      extras={"grad_F_bound": _vanishing * grad_sq + _floor})],
))

_w1 = tau_1 / (tau_1 + tau_2)
_w2 = tau_2 / (tau_1 + tau_2)
_limit = ((tau_1 - tau_2) / (tau_1 + tau_2)) ** 2 * a ** 2


def _lemma4_variant(name: str, description: str, kappa_factor: int, chi_denominator: int) -> Variant:
    k2 = kappa_factor * _w1 * _w2 * a ** 2
    c2 = (tau_2 - tau_1) ** 2 / (chi_denominator * tau_1 * tau_2)
    return Variant(name, description, bound=c2 * k2,
                   extras={"kappa2": k2, "chi2": c2, "limit_grad_sq": _limit, "w1": _w1,
                           "theorem2_floor": 2 * c2 * k2})


LEMMA4 = register(Result(
    id="fednova.lemma4",
    title="Lemma 4: the chi-square floor is tight (two-client example)",
    statement="F_1 = (x-a)^2/2, F_2 = (x+a)^2/2, F = (F_1 + F_2)/2, FedAvg with tau_1 != tau_2 local steps: "
              "lim_T E||grad F(x^(T,0))||^2 = ((tau_1 - tau_2)/(tau_1 + tau_2))^2 a^2 = Omega(chi^2 kappa^2) "
              "as eta -> 0 (114), (120).",
    provenance=where("(114)-(120)", "683-709"),
    assumptions=("deterministic gradients, eta -> 0 (the FedAvg limit (117) of App. A)",),
    lhs="lim_{eta -> 0} lim_T ||grad F(x^(T,0))||^2",
    variants=[
        _lemma4_variant("printed", "(120) as printed: kappa^2 = 2 w_1 w_2 a^2 (116) [L697], chi^2 = "
                                   "(tau_2 - tau_1)^2/(2 tau_1 tau_2) [L709]; bound chi^2 kappa^2 (their "
                                   "two factor-2 errors cancel)", 2, 2),
        _lemma4_variant("corrected", "kappa^2 = sum_i w_i (grad F_i - grad F~)^2 = 4 w_1 w_2 a^2 and chi^2 = "
                                     "(tau_1 - tau_2)^2/(4 tau_1 tau_2), their definitions evaluated (notes "
                                     "sec. 4.5); lim ||grad F||^2 = chi^2 kappa^2 exactly", 4, 4),
    ],
    known_issues=(
        Flag("L693", "F_2(x) = (w + a)^2/2 should be (x + a)^2/2"),
        Flag("L697", "sum_i w_i (grad F_i - grad F~)^2 = 4 w_1 w_2 a^2, not 2 w_1 w_2 a^2 (so the printed "
                     "kappa^2 violates Assumption 3 with beta^2 = 1)"),
        Flag("L709", "chi^2_{p||w} = (tau_1 - tau_2)^2/(4 tau_1 tau_2), not /(2 tau_1 tau_2)"),
    ),
))
