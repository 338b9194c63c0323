"""SD-GT Theorem 1 (non-convex) in its explicit form (76); Corollary 1 is :mod:`.cor1`.

Seed 003: Theorem 1 (12) [L242-L246], proof (70)-(76) [L888-L920]; papers/sdgt.md 4.4.

Theorem 1, explicit form (76), with D > 0 and the unspecified constant D5 of (72):

    (1/T) sum_t E||grad f(xbar_g^t)||^2 <= E1/(D T K gamma) + D5 L^2 K gamma^2 sigma^2/(D p^4 q^2)
                                             + L gamma sigma^2/(2 D n)

under gamma <= p^2 q/(945 K L) (74) and the conditions of Lemmas 1, 3, 4, 5. The Lyapunov function
H_t = E_t + c0 K^3 gamma^3 (Y_t/p + Z_t/q) + c1 (K gamma/p) Gamma_t uses (74): c2 > 2,
c1 = 6 L^2 c2, c0 = 192 L^2 c2/(p q). The coefficients (73) are extras "D", "D1".."D4" (printed
and re-derived from Lemmas 1, 3-6 and (71), papers/sdgt.md 4.4 [DERIVED], flags F13-F15).
"""
from __future__ import annotations

import math

import sympy as sp

from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Result, StepCondition, Variant
from fedbound.theory.sdgt.common import SAMPLING, declare, E1, K, p, q, where
from fedbound.theory.sdgt.lemmas import LEMMA1_CAP, LEMMA3_CAP, LEMMA4_CAP, LEMMA5_CAP
from fedbound.theory.symbols import POSITIVE, Domain, L, T, n, sigma
from fedbound.theory.symbols import gamma as g

c2 = declare("c2", Domain(2.0, math.inf, True, True), "Theorem 1: Lyapunov constant c2 > 2 of (74)")
D = declare("D", Domain(0.0, 0.25, True, False), "Theorem 1: descent constant D of (72)-(76)")
D5 = declare("D5", POSITIVE, "Theorem 1: unspecified noise constant D5 of (72) (user-supplied)")

# (74): the Lyapunov constants as functions of c2
c1 = 6 * L ** 2 * c2
c0 = 192 * L ** 2 * c2 / (p * q)

# (73) as printed [L906]
D_coef = (sp.Rational(1, 4) - 12 / p ** 2 * g ** 4 * K ** 4 * L ** 2 * c0 - 12 / p ** 2 * g ** 2 * K ** 2 * c1
          - 12 / q ** 2 * g ** 4 * K ** 4 * L ** 2 * c0 - 6 * K ** 2 * g ** 2 * L ** 2 * c2)
D3_coef = (c1 / 2 - 3 * (1 - p) * L ** 2 * c2) * K * g
PRINTED_D = {
    "D": D_coef,
    "D1": (c0 / 2 - 12 / p * c1 + 24 * L ** 2 * c2) * K ** 3 * g ** 3,
    "D2": (c0 / 2 - 12 / q * c1 + 24 * L ** 2 * c2) * K ** 3 * g ** 3,
    "D3": D3_coef,
    "D4": (c2 - 12 / p ** 2 * g ** 2 * K ** 2 * c1) * g * L ** 2,
}
# Re-derived from Lemmas 1, 3-6 and (71) (papers/sdgt.md 4.4 [DERIVED]): Lemma 6 contributes
# c1 (K gamma/p) (12/p) gamma^2 K^2 (1/p^2), (71) enters D1, D2 with a minus sign; D4 gains Lemma 1's
# -gamma L^2 Delta and the c0 terms of the tight (1/K) Lemmas 4-5 (F14).
D12_rederived = (c0 / 2 - 12 * c1 / p ** 2 - 24 * L ** 2 * c2) * K ** 3 * g ** 3
REDERIVED_D = {
    "D": D_coef,
    "D1": D12_rederived,
    "D2": D12_rederived,
    "D3": D3_coef,
    "D4": (c2 - 1 - 8 * c0 * K ** 2 * g ** 2 / p ** 2 - 26 * c0 * K ** 2 * g ** 2 / q ** 2
           - 12 * c1 * K ** 2 * g ** 2 / p ** 2) * g * L ** 2,
}
# Reconstructed D5 (F15): per-round noise c2 L^2 K^2 gamma^3 sigma^2 (384/(p^3 q) + 384/(p q^3) + 6/p + 3)
# written in the form D5 L^2 K^3 gamma^3 sigma^2/(p^4 q^2 K) of (72)
D5_reconstructed = c2 * p ** 4 * q ** 2 * (384 / (p ** 3 * q) + 384 / (p * q ** 3) + 6 / p + 3)

THM1_CAP = StepCondition("thm1 (74)", p ** 2 * q / (945 * K * L), False, "(74) [L910]")
CONDITIONS = (THM1_CAP, LEMMA1_CAP, LEMMA3_CAP, LEMMA4_CAP, LEMMA5_CAP)


def explicit_bound(descent: sp.Expr | float, d5: sp.Expr | float) -> sp.Expr:
    """(76): E1/(D T K gamma) + D5 L^2 K gamma^2 sigma^2/(D p^4 q^2) + L gamma sigma^2/(2 D n)."""
    return (E1 / (descent * T * K * g) + d5 * L ** 2 * K * g ** 2 * sigma ** 2 / (descent * p ** 4 * q ** 2)
            + L * g * sigma ** 2 / (2 * descent * n))


# H_1 <= E1 + c0 K^3 gamma^3 sigma^2 (1/p + 1/q) [L918], kept explicit instead of merged into D5
initial_lyapunov_term = c0 * K ** 2 * g ** 2 * sigma ** 2 * (1 / p + 1 / q) / (D_coef * T)

THM1 = register(Result(
    id="sdgt.thm1",
    title="Theorem 1 (non-convex), explicit form (76)",
    statement="Under A1-A3, gamma <= p^2 q/(945KL) and T > K: (1/T) sum_t E||grad f(xbar_g^t)||^2 "
              "<= E1/(DTK gamma) + D5 L^2 K gamma^2 sigma^2/(D p^4 q^2) + L gamma sigma^2/(2Dn), "
              "with D > 0 and D1..D4 >= 0 of (73) under the constants (74).",
    provenance=where("(76)", "894-920"),
    relations=SAMPLING,
    assumptions=("A1 (L-smooth)", "A2 (mixing rate q)", "A3 (bounded variance)", "T > K",
                 "D > 0 and D1, D2, D3, D4 >= 0 in (73) with c2 > 2, c1 = 6L^2 c2, "
                 "c0 = 192 L^2 c2/(pq)"),
    lhs="(1/T) sum_{t=1}^T E||grad f(xbar_g^t)||^2",
    variants=[
        Variant("printed", "(76) as printed with user-supplied D (0 < D <= 1/4) and D5; extras: c0, c1 "
                           "of (74) and the coefficients D, D1..D4 of (73) as printed",
                bound=explicit_bound(D, D5), conditions=CONDITIONS,
                extras={"c0": c0, "c1": c1, **PRINTED_D}),
        Variant("rederived", "RECONSTRUCTION (not the paper's bound): D is (73) at c2, D5 is rebuilt "
                             "from the noise terms of Lemmas 4-6 and (71) (F15), and the sigma^2 of "
                             "H_1 is kept as c0 K^2 gamma^2 sigma^2 (1/p + 1/q)/(D T); extras: D1, D2 "
                             "= (c0/2 - 12 c1/p^2 - 24 L^2 c2) K^3 gamma^3 (F13), D4 with Lemma 1's "
                             "term and the tight Lemma 4-5 terms (F14), and the reconstructed D5",
                bound=explicit_bound(D_coef, D5_reconstructed) + initial_lyapunov_term,
                conditions=CONDITIONS,
                extras={"c0": c0, "c1": c1, **REDERIVED_D, "D5": D5_reconstructed}),
    ],
    known_issues=(
        Flag("F6", "step cap p^2 q/(945KL) in (74) but p^2 q^2/(945KL) in Corollary 1"),
        Flag("F13", "D1, D2 of (73): 24 L^2 c2 enters with a minus sign and 12 c1/p should be "
                    "12 c1/p^2; with c0 = 192 L^2 c2/(pq), D1 >= 0 fails for p below about 0.75 q"),
        Flag("F14", "D4 omits Lemma 1's gamma L^2 Delta term and the c0 terms of Lemmas 4-5"),
        Flag("F15", "D5 is never given; the rederived variant reconstructs it"),
    ),
))
