"""SD-GT Lemma 7, the unroll-recursion lemma (Lemma C.5 of K-GT, Lemma 15 of Koloskova et al.).

Seed 003, eq. (41), lines 693-700 (papers/sdgt.md 4.1). For any r0, b, e, u >= 0 there is a
constant step size gamma < 1/u such that

    Psi_T(gamma) = r0/(T gamma) + b gamma + e gamma^2
                 <= 2 sqrt(b r0 / T) + 2 e^{1/3} (r0/T)^{2/3} + u r0 / T.

The witness is gamma* = min{(r0/(b T))^{1/2}, (r0/(e T))^{1/3}, 1/u}. In the corollary proofs the
"gamma" of the lemma is the effective step K*gamma (papers/sdgt.md 4.1, flag F7).
"""
import sympy as sp

from fedbound.theory.registry import register
from fedbound.theory.result import Result, Variant
from fedbound.theory.sdgt.common import b, e, r0, u, where
from fedbound.theory.symbols import POSITIVE, T, gamma

witness = sp.Min(sp.sqrt(r0 / (b * T)), sp.cbrt(r0 / (e * T)), 1 / u)
psi = r0 / (T * gamma) + b * gamma + e * gamma ** 2
rhs = 2 * sp.sqrt(b * r0 / T) + 2 * sp.cbrt(e) * (r0 / T) ** sp.Rational(2, 3) + u * r0 / T

LEMMA7 = register(Result(
    id="sdgt.lemma7",
    title="Lemma 7 (unroll-recursion lemma)",
    statement="For r0, b, e, u >= 0 there is gamma < 1/u with r0/(T gamma) + b gamma + e gamma^2 "
              "<= 2 sqrt(b r0/T) + 2 e^(1/3) (r0/T)^(2/3) + u r0/T; witness gamma* = "
              "min{(r0/(bT))^(1/2), (r0/(eT))^(1/3), 1/u}.",
    provenance=where("(41)", "693-700"),
    assumptions=("r0, b, e, u >= 0", "T >= 1"),
    lhs="min over gamma < 1/u of r0/(T gamma) + b gamma + e gamma^2",
    variants=[Variant(
        "printed", "as printed; the witness step size is the standard one of the cited lemma",
        bound=rhs,
        extras={"witness": witness, "psi_at_witness": psi.subs(gamma, witness)})],
    requires={"r0": (POSITIVE, "r0 > 0: the witness step is 0 when r0 = 0 and psi 0/0")},
))
