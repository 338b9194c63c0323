"""SD-GT Corollary 1 (non-convex rate): Lemma 7 applied to Theorem 1 (:mod:`.thm1`).

Seed 003: Corollary 1 (13) [L252-L260], proof (99)-(100) [L1037-L1049]; papers/sdgt.md 4.4.

Corollary 1 is parametrised by the effective step eta = K gamma (flag F7): its "rederived" variant
is Lemma 7 (sdgt.lemma7) applied to (76) with r0 = E1/D, b = L sigma^2/(2 D n K),
e = D5 L^2 sigma^2/(D p^4 q^2 K) and u = 1/(K gamma_cap) (flags F8/(ii), F9/(iv), F41/(v)). Its
conditions are Theorem 1's; the "printed" variant adds the cap p^2 q^2/(945 K L) of (13) (F6).
"""
import sympy as sp

from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Result, StepCondition, Variant
from fedbound.theory.sdgt.common import SAMPLING, E1, K, p, q, where
from fedbound.theory.sdgt.lemma7 import corollary_extras, lemma7_form, lemma7_witness, min_cap
from fedbound.theory.sdgt.thm1 import CONDITIONS, D, D5, explicit_bound
from fedbound.theory.symbols import POSITIVE, L, T, n, sigma

gamma_cap = min_cap(CONDITIONS)
_r0, _b = E1 / D, L * sigma ** 2 / (2 * D * n * K)
_printed = dict(r0=_r0, b=_b, e=D5 * L ** 2 * sigma ** 2 / (p ** 4 * q ** 2 * K), u=L)
_printed_gamma = sp.Min(sp.sqrt(2 * E1 * K * n / (L * sigma ** 2 * T)),
                        sp.cbrt(2 * E1 * p ** 4 * q ** 2 * K / (L * sigma ** 2 * T)),
                        p ** 2 * q ** 2 / (945 * K * L))
_rederived = dict(r0=_r0, b=_b, e=D5 * L ** 2 * sigma ** 2 / (D * p ** 4 * q ** 2 * K),
                  u=1 / (K * gamma_cap))
_thm1_printed = explicit_bound(D, D5)
COR1_CAP = StepCondition("cor1 cap (F6)", p ** 2 * q ** 2 / (945 * K * L), False, "(13) third entry [L256]")

COR1 = register(Result(
    id="sdgt.cor1",
    title="Corollary 1 (non-convex rate), explicit Lemma-7 form",
    statement="With gamma = min{(2 E1 K n/(L sigma^2 T))^(1/2), (2 E1 p^4 q^2 K/(L sigma^2 T))^(1/3), "
              "p^2 q^2/(945KL)}: (1/T) sum_t E||grad f||^2 = O(sqrt(E1 sigma^2 L/(nTK)) "
              "+ (E1 L sigma/(sqrt(K) T p^2 q))^(2/3) + E1 L/(T p^2 q)); explicitly "
              "2 sqrt(b r0/T) + 2 e^(1/3) (r0/T)^(2/3) + u r0/T (Lemma 7).",
    provenance=where("(13), (99)-(100)", "252-260, 1037-1049"),
    relations=SAMPLING,
    assumptions=("those of Theorem 1 (sdgt.thm1)",),
    lhs="(1/T) sum_{t=1}^T E||grad f(xbar_g^t)||^2",
    variants=[
        Variant("printed", "as printed: the step choice of (13) mixes values of gamma and of K gamma "
                           "(F7); (99) r0 = E1/D, b = L sigma^2/(2DnK), e = D5 L^2 sigma^2/(p^4 q^2 K) "
                           "without 1/D (F41), u = L (F9)",
                bound=lemma7_form(**_printed), conditions=(COR1_CAP,) + CONDITIONS,
                extras=corollary_extras(_thm1_printed, K * _printed_gamma, gamma_cap, **_printed)),
        Variant("rederived", "Lemma 7 applied to (76) in eta = K gamma (F7): e = D5 L^2 sigma^2/(D p^4 "
                             "q^2 K) (F41, (v)), u = 1/(K gamma_cap) with gamma_cap the min of "
                             "Theorem 1's caps (F9, (iv)); eta = min{(2 E1 n K/(L sigma^2 T))^(1/2), "
                             "(E1 p^4 q^2 K/(D5 L^2 sigma^2 T))^(1/3), 1/u} (F8, (ii): L^2, and D "
                             "cancels once e has its 1/D)",
                bound=lemma7_form(**_rederived), conditions=CONDITIONS,
                extras=corollary_extras(_thm1_printed, lemma7_witness(**_rederived), gamma_cap,
                                        **_rederived)),
    ],
    requires={"E1": (POSITIVE, "E1 > 0: the step (13) is 0 when E1 = 0 and the bound 0/0")},
    known_issues=(
        Flag("F6", "third entry p^2 q^2/(945KL) uses q^2, Theorem 1's (74) uses q"),
        Flag("F7", "entries 1-2 of the step choice are values of K gamma, entry 3 is a cap on gamma"),
        Flag("F8", "second entry: the derivation gives (E1 p^4 q^2 K/(D D5 L^2 sigma^2 T))^(1/3), "
                   "not (2 E1 p^4 q^2 K/(L sigma^2 T))^(1/3)"),
        Flag("F9", "the proof sets u = L but the third rate term implies u = 1/(K gamma_cap)"),
        Flag("F41", "(99) e lacks the 1/D"),
    ),
))
