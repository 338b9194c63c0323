"""SD-GT Corollary 2 (weakly convex rate): Lemma 7 applied to Theorem 2 (:mod:`.thm2`).

Seed 003: Corollary 2 (15)-(16) [L283-L293], proof (101)-(102) [L1051-L1064]; papers/sdgt.md 4.5,
flag F17.

Corollary 2 keeps Theorem 2's conditions; its "printed" variant adds the cap
p^2 q^2/(101 K^(3/2) L) of (15), which binds where p q is small and alone does not imply (83)
(p = q = 1: 1/101 > 1/173, F17).
"""
import sympy as sp

from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Result, StepCondition, Variant
from fedbound.theory.sdgt.common import INITIAL_GAP, SAMPLING, K, p, q, R, where
from fedbound.theory.sdgt.lemma7 import corollary_extras, lemma7_form, lemma7_witness, min_cap
from fedbound.theory.sdgt.thm2 import (K32, PRINTED_CAPS, p_prime, printed_bound, rederived_bound,
                                       rederived_caps)
from fedbound.theory.symbols import POSITIVE, L, T, n, sigma

_printed = dict(r0=2 * R, b=2 * sigma ** 2 / (K * n),
                e=9 * L * sigma ** 2 / K + 62592 * L * sigma ** 2 / (K * p ** 4 * q ** 4), u=L)
_printed_gamma = sp.Min(sp.sqrt(R * K * n / (sigma ** 2 * T)),
                        sp.cbrt(R * K * p ** 4 * q ** 4 / (L * sigma ** 2 * T)) / 39,
                        p ** 2 * q ** 2 / (101 * K32 * L))
COR2_CAP = StepCondition("cor2 cap (F17)", p ** 2 * q ** 2 / (101 * K32 * L), False,
                         "(15) third entry [L288]")
printed_cap = min_cap(PRINTED_CAPS)
rederived_cap = min_cap(rederived_caps())
# the rederived Theorem 2 bound in eta = K gamma, with the G_1 term merged by T > K (K/T < 1)
_rederived = dict(r0=2 * R, b=4 * sigma ** 2 / (K * n),
                  e=(18 * L * sigma ** 2 / K + 55680 * L * sigma ** 2 / (K * p_prime ** 4)
                     + 41472 * L * sigma ** 2 / (K * p_prime ** 3)),
                  u=1 / (K * rederived_cap))

COR2 = register(Result(
    id="sdgt.cor2",
    title="Corollary 2 (weakly convex rate), explicit Lemma-7 form",
    statement="With gamma = min{(R K n/(sigma^2 T))^(1/2), (1/39)(R K p^4 q^4/(L sigma^2 T))^(1/3), "
              "p^2 q^2/(101 K^(3/2) L)}: (1/T) sum_t E(f - f*) = O(L R/T + (sqrt(L) R sigma/(p^2 q^2 "
              "sqrt(K) T))^(2/3) + sqrt(R sigma^2/(nKT))); explicitly 2 sqrt(b r0/T) "
              "+ 2 e^(1/3) (r0/T)^(2/3) + u r0/T (Lemma 7).",
    provenance=where("(15)-(16), (101)-(102)", "283-293, 1051-1064"),
    relations=SAMPLING,
    assumptions=("those of Theorem 2 (sdgt.thm2)",),
    lhs="(1/T) sum_{t=1}^T E(f(xbar_g^t) - f*)",
    reference=INITIAL_GAP,
    variants=[
        Variant("printed", "as printed: step choice (15) (entries 1-2 are values of K gamma, F7; cap "
                           "p^2 q^2/(101 K^(3/2) L), F17); (101) r0 = 2R, b = 2 sigma^2/(Kn), "
                           "e = 9 L sigma^2/K + 62592 L sigma^2/(K p^4 q^4), u = L (F9); gamma_cap is "
                           "the min of Theorem 2's printed caps",
                bound=lemma7_form(**_printed), conditions=(COR2_CAP,) + PRINTED_CAPS,
                extras=corollary_extras(printed_bound, K * _printed_gamma, printed_cap, **_printed)),
        Variant("rederived", "Lemma 7 applied to the rederived Theorem 2 bound in eta = K gamma (F7), "
                             "its G_1 term merged with T > K: r0 = 2R, b = 4 sigma^2/(Kn), "
                             "e = 18 L sigma^2/K + 55680 L sigma^2/(K p'^4) + 41472 L sigma^2/(K p'^3), "
                             "u = 1/(K gamma_cap) with gamma_cap the min of ALL rederived caps (F9, F17)",
                bound=lemma7_form(**_rederived), conditions=rederived_caps(),
                extras=corollary_extras(rederived_bound, lemma7_witness(**_rederived), rederived_cap,
                                        **_rederived)),
    ],
    requires={"R": (POSITIVE, "R > 0: the step (15) is 0 when R = 0 and the bound 0/0")},
    known_issues=(
        Flag("F7", "entries 1-2 of the step choice (15) are values of K gamma, entry 3 a cap on gamma"),
        Flag("F9", "the proof sets u = L but the rate's first term implies u = 1/(K gamma_cap)"),
        Flag("F17", "the cap p^2 q^2/(101 K^(3/2) L) does not imply the caps (83) (p = q = 1: "
                    "1/101 > 1/173)"),
    ),
))
