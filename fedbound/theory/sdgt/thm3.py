"""SD-GT Theorem 3 (strongly convex, mu > 0); Corollary 3 is :mod:`.cor3`.

Seed 003: Theorem 3 [L299-L314] with its proof (91)-(98) [L1005-L1033] (papers/sdgt.md 4.6, flags
F18-F21).

The proof stacks v_t = [E||xbar_g^t - x*||^2, Gamma_t, gamma Y_t, gamma Z_t] and shows the
elementwise recursion (92) v_t <= A v_{t-1} + b. For gamma <= gamma_bar the paper claims
rho(A) <= ||A||_1 <= 1 - mu K gamma/4 < 1 (max column sum), hence (98)

    Lyap_{T+1} <= (1 - mu K gamma/4)^T Lyap_1 + ||(I - A)^{-1} b||_1,

with Lyap_t = E||xbar_g^t - x*||^2 + Gamma_t + gamma Y_t + gamma Z_t (96) and
E||xbar_g^{T+1} - x*||^2 <= Lyap_{T+1}. The floor is unsquared as in (98) (F21: (18) squares it).
It bounds the recursion only where rho(A) < 1; elsewhere the floor and the bound are inf.

Three variants of (A, b), each paired with a gamma_bar (F18):

* ``"main"``: A and b of the main text [L313-L314]; gamma_bar of the main text [L303-L304] (K mu in
  the last two denominators).
* ``"appendix"``: A (93) [L1013] and b (94) [L1017]; gamma_bar (97) [L1029] (K mu/4).
* ``"rederived"`` [DERIVED, papers/sdgt.md 4.6]: A re-derived from Lemmas 2-6 with (91):
  entries (3,1), (4,1) as in the main text (72 and 168 gamma^3 K^3 L^4, F19 (i)); (4,4) with
  1 - q/2 (the Z recursion contracts at q/2, F19 (ii)); (2,2) = 1 - p/2 + 36 gamma^2 K^2 L^2 (1-p)/p
  (Lemma 6's 12 gamma^2 K L^2/p times Lemma 3's 3(1-p)K, F19 (iii)); b re-derived (F20): row 2
  K gamma^2 + 36 K^3 gamma^4 L^2/p (Lemma 6 times Lemma 3's noise 3K^2 gamma^2), row 3
  2 gamma/(pK) + 30 K^2 gamma^3 L^2/p (Lemma 4 has p, and Lemma 3's noise is 3 K^2 gamma^2),
  row 4 2 gamma/(qK) + 78 K^2 gamma^3 L^2/q (the same derivation through Lemma 5; the printed K^3
  is a valid but looser bound since K >= 1). It has no gamma_bar of its own: it takes the
  appendix one (97), the one the proof derives.
"""
from __future__ import annotations

from typing import Annotated, Mapping

import sympy as sp

from fedbound.argtypes import Choice
from fedbound.theory.argtypes import ExtendedArray
from fedbound.theory.registry import register
from fedbound.theory.linalg import spectral_quantities
from fedbound.theory.result import Deferred, Flag, Result, StepCondition, Variant
from fedbound.theory.sdgt.common import SAMPLING, declare, K, p, q, where
from fedbound.theory.symbols import NONNEGATIVE, POSITIVE, L, T, mu, n, sigma
from fedbound.theory.symbols import gamma as g

Lyap1 = declare("Lyap1", NONNEGATIVE, "Theorem 3: initial Lyapunov value E||xbar_g^1 - x*||^2 + "
                "Gamma_1 + gamma Y_1 + gamma Z_1 (96)", latex="mathcal{L}_1")

#: variant of (A, b) -> variant of gamma_bar it is paired with
GAMMA_BAR_OF = {"main": "main", "appendix": "appendix", "rederived": "appendix"}
_GAMMA_BAR_SOURCE = {"main": "Theorem 3 [L303-L304]", "appendix": "(97) [L1029], (104) [L1078]"}


#: the forms of gamma_bar (Theorem 3 in the main text, or the appendix's) and the variants of the
#: recursion (92) (those two, and the re-derived one)
GammaBarForm = Annotated[str, Choice(("main", "appendix"))]
RecursionVariant = Annotated[str, Choice(("main", "appendix", "rederived"))]

#: gamma_bar form -> factor of K mu in its last two denominators (F18)
_MU_FACTOR = {"main": sp.Integer(1), "appendix": sp.Rational(1, 4)}


def gamma_bar_entries(form: GammaBarForm) -> tuple[sp.Expr, ...]:
    """The five entries of gamma_bar; ``form`` "main" has K mu, "appendix" K mu/4 in the last two."""
    km = K * mu * _MU_FACTOR[form]
    pq = sp.Min(p, q)
    return (pq * mu / (K * (14 * L ** 2 + 240 * L ** 3)),
            1 / (18 * K * L),
            4 / (mu * K),
            pq * p / (2 * (45 * K * L + 108 * K * L ** 2 + km)),
            pq ** 2 / (2 * (86 * K ** 2 + 864 * K ** 2 * L + km)))


def gamma_bar(form: GammaBarForm) -> sp.Expr:
    """gamma_bar = min of the five entries (``form`` "main" or "appendix")."""
    return sp.Min(*gamma_bar_entries(form), evaluate=False)


def matrix_A(variant: RecursionVariant, step: sp.Expr | float = g) -> sp.Matrix:
    """The 4x4 matrix A of the recursion (92) for ``variant`` ("main", "appendix", "rederived"),
    at step size ``step`` (the symbol gamma unless a corollary substitutes its choice)."""
    y = step
    row1 = [1 - mu * K * y / 2, 9 * y * K * L * (1 - p), 72 * K ** 3 * L * y ** 2, 72 * K ** 3 * L * y ** 2]
    gap22 = {"main": 36 * y ** 2 * K * L ** 2 / p, "appendix": 36 * y ** 2 * K * L ** 2 / p,
             "rederived": 36 * y ** 2 * K ** 2 * L ** 2 * (1 - p) / p}[variant]
    row2 = [14 * y ** 2 * K ** 2 * L ** 2 / p, 1 - p / 2 + gap22, 14 * K ** 2 * y / p, 14 * K ** 2 * y / p]
    if variant == "appendix":
        c31, c41 = 72 * y ** 2 * K ** 2 * L ** 3 / p, 168 * y ** 2 * K ** 2 * L ** 3 / q
    else:  # main text: gamma K L times 72 gamma^2 K^2 L^3/p and 168 gamma^2 K^2 L^3/q
        c31, c41 = 72 * y ** 3 * K ** 3 * L ** 4 / p, 168 * y ** 3 * K ** 3 * L ** 4 / q
    row3 = [c31, 30 * L ** 2 * K * y / p, 1 - p / 2 + 240 * K ** 3 * y ** 2 * L ** 2 / p,
            240 * K ** 3 * y ** 2 * L ** 2 / p]
    contraction44 = p if variant == "main" else q
    row4 = [c41, 78 * L ** 2 * K * y / q, 624 * K ** 3 * y ** 2 * L ** 2 / q,
            1 - contraction44 / 2 + 624 * K ** 3 * y ** 2 * L ** 2 / q]
    return sp.Matrix([row1, row2, row3, row4])


def vector_b(variant: RecursionVariant, step: sp.Expr | float = g) -> sp.Matrix:
    """The noise vector b (4x1) of (92): printed (94) for "main"/"appendix", re-derived otherwise."""
    y = step
    if variant == "rederived":
        rows = [2 * y ** 2 * K / n + 9 * K ** 2 * y ** 3 * L,
                K * y ** 2 + 36 * K ** 3 * y ** 4 * L ** 2 / p,
                2 * y / (p * K) + 30 * K ** 2 * y ** 3 * L ** 2 / p,
                2 * y / (q * K) + 78 * K ** 2 * y ** 3 * L ** 2 / q]
    else:
        rows = [2 * y ** 2 * K / n + 9 * K ** 2 * y ** 3 * L,
                K * y ** 2 + 3 * K ** 3 * y ** 4 * L ** 2,
                2 * y / (q * K) + 30 * K ** 3 * y ** 3 * L ** 2 / q,
                2 * y / (q * K) + 78 * K ** 3 * y ** 3 * L ** 2 / q]
    return sp.Matrix(rows) * sigma ** 2


def gap_matrix(variant: RecursionVariant, step: sp.Expr | float = g) -> sp.Matrix:
    """I - A with the 1's cancelled symbolically (sympy's Add does it without expanding products),
    so that 1 - (1 - mu K gamma/2) is exactly mu K gamma/2 and factors like (1 - p) survive."""
    return sp.eye(4) - matrix_A(variant, step)


def recursion_numbers(values: Mapping[str, ExtendedArray]) -> dict:
    """The ``derived`` hook of a variant with extras A, b, I_minus_A (its ``derived_needs``) and
    transient: the numbers of :func:`fedbound.theory.spectral_quantities` and, where the transient
    is computed (T and Lyap1 given), the bound (98) = transient + floor."""
    out = spectral_quantities(values["A"], values["b"], gap=values["I_minus_A"])
    out = {k: out[k] for k in ("A_l1", "spectral_radius", "l1_margin", "radius_margin", "floor")}
    if "transient" in values:
        out["bound"] = values["transient"] + out["floor"]
    return out


#: the derived numbers need only A, b and I - A (not T, Lyap1): partial evaluation computes them
RECURSION_NEEDS = ("A", "b", "I_minus_A")
#: the floor of (98) as the bound writes it (``Variant.bound_shown``: the bound has no closed form)
FLOOR_TEX = r"\left\|(I - A)^{-1} b\right\|_{1}"
#: Theorem 3 and Corollary 3 divide by mu (gamma_bar's 4/(mu K), (105)): mu = 0 is outside them
STRONGLY_CONVEX = {"mu": (POSITIVE, "A4 with mu > 0 (strongly convex)")}


def _thm3_variant(name: str, description: str) -> Deferred:
    """The variant ``name`` of Theorem 3, built on first use (a command evaluates one of the three,
    and each has three 4x4 matrices for sympy to build)."""
    def build() -> Variant:
        form = GAMMA_BAR_OF[name]
        entries = gamma_bar_entries(form)
        A, b = matrix_A(name), vector_b(name)
        return Variant(
            name, description + f"; gamma_bar: {form} ({_GAMMA_BAR_SOURCE[form]})",
            conditions=tuple(StepCondition(f"gamma_bar[{i}]", cap, False, _GAMMA_BAR_SOURCE[form])
                             for i, cap in enumerate(entries, start=1)),
            extras={"A": A, "b": b, "I_minus_A": gap_matrix(name), "gamma_bar": gamma_bar(form),
                    "rate": 1 - mu * K * g / 4, "transient": (1 - mu * K * g / 4) ** T * Lyap1},
            derived=recursion_numbers, derived_needs=RECURSION_NEEDS,
            bound_shown=((1 - mu * K * g / 4) ** T * Lyap1, FLOOR_TEX))
    return Deferred(name, build)


THM3 = register(Result(
    id="sdgt.thm3",
    title="Theorem 3 (strongly convex, mu > 0)",
    statement="Under A1-A4 with mu > 0 and gamma <= gamma_bar: v_t = [E||xbar^t - x*||^2, Gamma_t, "
              "gamma Y_t, gamma Z_t] satisfies v_t <= A v_{t-1} + b (92); rho(A) <= ||A||_1 <= "
              "1 - mu K gamma/4 and Lyap_{T+1} <= (1 - mu K gamma/4)^T Lyap_1 + ||(I - A)^{-1} b||_1 "
              "(98). Bound = that right-hand side (inf where rho(A) >= 1); extras A, b, gamma_bar, "
              "A_l1 (max column sum), spectral_radius, floor.",
    provenance=where("(92)-(98), Theorem 3", "299-314, 1005-1033"),
    relations=SAMPLING,
    assumptions=("A1 (L-smooth)", "A2 (mixing rate q)", "A3 (variance sigma^2)",
                 "A4 (mu-strongly convex, mu > 0)", "gamma <= gamma_bar"),
    lhs="Lyap_{T+1} = E||xbar_g^{T+1} - x*||^2 + Gamma_{T+1} + gamma Y_{T+1} + gamma Z_{T+1}",
    variants=[
        _thm3_variant("main", "A and b as printed in the main text [L313-L314]"),
        _thm3_variant("appendix", "A (93) [L1013] and b (94) [L1017] as printed in the appendix"),
        _thm3_variant("rederived", "[DERIVED] A with the main-text (3,1), (4,1), 1 - q/2 at (4,4) and "
                                   "36 gamma^2 K^2 L^2 (1-p)/p at (2,2); b rows 2-4 re-derived "
                                   "(36/p; p and K^2 in row 3; K^2 in row 4)"),
    ],
    default_variant="appendix",
    requires=STRONGLY_CONVEX,
    known_issues=(
        Flag("F18", "gamma_bar has K mu in the main text [L303-L304] but K mu/4 in (97), (104); its "
                    "first entry makes the column-1 off-diagonal sum <= mu K gamma, but (95) needs "
                    "mu K gamma/4"),
        Flag("F19", "A: main (3,1), (4,1) carry an extra gamma K L relative to (93); main (4,4) has "
                    "1 - p/2 where (93) has 1 - q/2; (2,2) should be 36 gamma^2 K^2 L^2 (1-p)/p"),
        Flag("F20", "b row 3 uses q where Lemma 4 gives p, and K^3 where the derivation gives K^2; "
                    "row 2's second term is 36 K^3 gamma^4 L^2/p from the derivation"),
        Flag("F21", "(18) squares ||(I - A)^{-1} b||_1; (98) and the proof do not"),
    ),
))
