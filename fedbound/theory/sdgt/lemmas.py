"""SD-GT Lemmas 1-6: the descent, deviation, tracking and sample-gap recursions.

Seed 003, (20)-(25), lines 339-383, proofs lines 702-882 (papers/sdgt.md 4.3, master table 4.0).
Each lemma bounds one error quantity of round t (or t+1) by the quantities of the round before.
The error quantities are declared here as NONNEGATIVE constants so that a user can evaluate a
right-hand side at measured values:

    Delta_t = (1/n) sum_i sum_k E||x_i^{t,k} - xbar_g^t||^2        (client drift)
    Gamma_t = (1/n) sum_i E||x_i^{t-1,K+1} - xbar_g^t||^2           (sampling gap)
    Y_t     = (1/n) E||Y^t + grad F(xbar_g^t)(J_c - J)||_F^2        (between-subnet tracking error)
    Z_t     = (1/n) E||Z^t + grad F(xbar_g^t)(I - J_c)||_F^2        (within-subnet tracking error)
    G_t     = E||grad f(xbar_g^t)||^2,   E_t = E f(xbar_g^t) - f*,   R_t = E||xbar_g^t - x*||^2

and ``*_prev`` for the same quantities at round t-1.

Variants: "printed" is the statement as printed. "rederived" exists where the proof gives another
constant (flags F10, F12, F39): Lemma 2 with the contraction mu*gamma*K/2 and noise 9 K^2 gamma^3 L
sigma^2; Lemmas 4 and 5 with the 1/K kept in the Delta coefficient (8 L^2/(pK) and 26 L^2/(qK)), and
Lemma 5 with the gradient at round t-1.

The step-size conditions (master table 4.0) are module constants so that the theorems reuse them.
"""
import sympy as sp

from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Result, StepCondition, Variant
from fedbound.theory.sdgt.common import SAMPLING, declare, K, p, q, where
from fedbound.theory.symbols import NONNEGATIVE, L, mu, n, sigma
from fedbound.theory.symbols import gamma as g

Delta_t = declare("Delta_t", NONNEGATIVE, "SD-GT client drift Delta_t at round t", latex="Delta_t")
Gamma_t = declare("Gamma_t", NONNEGATIVE, "SD-GT sampling gap Gamma_t at round t", latex="Gamma_t")
Y_t = declare("Y_t", NONNEGATIVE, "SD-GT between-subnet tracking error Y_t at round t",
              latex="mathcal{Y}_t")
Z_t = declare("Z_t", NONNEGATIVE, "SD-GT within-subnet tracking error Z_t at round t",
              latex="mathcal{Z}_t")
G_t = declare("G_t", NONNEGATIVE, "squared gradient norm E||grad f(xbar_g^t)||^2 at round t",
              latex="G_t")
E_t = declare("E_t", NONNEGATIVE, "optimality gap E f(xbar_g^t) - f* at round t", latex="mathcal{E}_t")
R_t = declare("R_t", NONNEGATIVE, "distance E||xbar_g^t - x*||^2 at round t", latex="R_t")
Delta_prev = declare("Delta_prev", NONNEGATIVE, "client drift Delta_{t-1} at round t-1",
                     latex="Delta_{t-1}")
Gamma_prev = declare("Gamma_prev", NONNEGATIVE, "sampling gap Gamma_{t-1} at round t-1",
                     latex="Gamma_{t-1}")
Y_prev = declare("Y_prev", NONNEGATIVE, "between-subnet tracking error Y_{t-1} at round t-1",
                 latex="mathcal{Y}_{t-1}")
Z_prev = declare("Z_prev", NONNEGATIVE, "within-subnet tracking error Z_{t-1} at round t-1",
                 latex="mathcal{Z}_{t-1}")
G_prev = declare("G_prev", NONNEGATIVE, "squared gradient norm E||grad f(xbar_g^{t-1})||^2",
                 latex="G_{t-1}")

# Step-size conditions of the lemmas (papers/sdgt.md 4.0) ------------------------------------------
LEMMA1_CAP = StepCondition("lemma1", 1 / (4 * K * L), False, "Lemma 1 [L341]")
LEMMA2_CAP = StepCondition("lemma2", 1 / (36 * K * L), True, "Lemma 2 [L347]")
LEMMA2_PROOF_CAP = StepCondition("lemma2-proof", 1 / (4 * K * L), True,
                                 "Lemma 2 proof, 1 + 2 gamma K L <= 3/2 [L871]")
LEMMA3_CAP = StepCondition("lemma3", 1 / (8 * K * L), True, "Lemma 3 [L358], [L728]")
LEMMA4_CAP = StepCondition("lemma4", 1 / (sp.sqrt(6) * K * L), True, "Lemma 4 [L367], [L774]")
LEMMA5_CAP = StepCondition("lemma5", 1 / (sp.sqrt(6) * K * L), True, "Lemma 5 [L373], [L799]")

LEMMA1 = register(Result(
    id="sdgt.lemma1",
    title="Lemma 1 (descent lemma, non-convex)",
    statement="Under A1 with gamma <= 1/(4KL): E f(xbar^{t+1}) <= E f(xbar^t) - (gamma K/4) G_t "
              "+ gamma L^2 Delta_t + L gamma^2 K sigma^2/(2n). Written for the gap E_t = E f - f*.",
    relations=SAMPLING,
    provenance=where("(20)", "339-344"),
    assumptions=("A1 (L-smooth)",),
    lhs="E f(xbar_g^{t+1}) - f*",
    variants=[Variant(
        "printed", "as printed (the statement is right; only the proof's (63)-(64) has a typo, F11)",
        bound=E_t - g * K / 4 * G_t + g * L ** 2 * Delta_t + L * g ** 2 * K * sigma ** 2 / (2 * n),
        conditions=(LEMMA1_CAP,))],
    known_issues=(Flag("F11", "(63)-(64) [L843-L848] print L^2 K^2 gamma^2; it must be L K^2 gamma^2 "
                              "for gamma <= 1/(4KL) to give the -gamma K/4 descent"),),
))


def _lemma2_bound(contraction: sp.Expr, noise: sp.Expr) -> sp.Expr:
    return (R_t - contraction * R_t - g * K * E_t + 9 * (1 - p) * g * K * L * Gamma_t
            + 72 * K ** 3 * L * g ** 3 * (Y_t + Z_t) + 2 * g ** 2 * K * sigma ** 2 / n + noise)


LEMMA2 = register(Result(
    id="sdgt.lemma2",
    title="Lemma 2 (descent lemma, convex)",
    statement="Under A1 and A4 with gamma < 1/(36KL): E||xbar^{t+1} - x*||^2 <= (1 - mu gamma/2) R_t "
              "- gamma K E_t + 9(1-p) gamma K L Gamma_t + 72 K^3 L gamma^3 (Y_t + Z_t) "
              "+ 2 gamma^2 K sigma^2/n + 9 K gamma^3 L sigma^2.",
    relations=SAMPLING,
    provenance=where("(21)", "345-352"),
    assumptions=("A1 (L-smooth)", "A4 (mu-strongly convex, 0 <= mu <= L)"),
    lhs="E||xbar_g^{t+1} - x*||^2",
    variants=[
        Variant("printed", "as printed in (21): contraction mu gamma/2, noise 9 K gamma^3 L sigma^2",
                bound=_lemma2_bound(mu * g / 2, 9 * K * g ** 3 * L * sigma ** 2),
                conditions=(LEMMA2_CAP, LEMMA2_PROOF_CAP)),
        Variant("rederived", "from the proof (66)-(69) (F10): contraction mu gamma K/2 (summing (66) "
                             "over K steps), noise 9 K^2 gamma^3 L sigma^2 (= 3 gamma L * 3 K^2 "
                             "gamma^2 sigma^2); the coefficient 72 of (Y_t + Z_t) is kept",
                bound=_lemma2_bound(mu * g * K / 2, 9 * K ** 2 * g ** 3 * L * sigma ** 2),
                conditions=(LEMMA2_CAP, LEMMA2_PROOF_CAP)),
    ],
    known_issues=(Flag("F10", "contraction mu gamma/2 should be mu gamma K/2; (68),(69),(77),(90) print "
                              "2 K^3 L gamma^3 where 72 is right; noise 9K vs 9K^2; (67) "
                              "2 gamma^2 K^2 sigma^2/n should be 2 gamma^2 K sigma^2/n"),),
))

LEMMA3 = register(Result(
    id="sdgt.lemma3",
    title="Lemma 3 (deviation lemma)",
    statement="Under A1 with gamma < 1/(8KL): Delta_t <= 3(1-p) K Gamma_t + 24 K^3 gamma^2 (Y_t + Z_t) "
              "+ 6 K^3 gamma^2 G_t + 3 K^2 gamma^2 sigma^2.",
    relations=SAMPLING,
    provenance=where("(22)", "356-361"),
    assumptions=("A1 (L-smooth)", "K >= 2 in the proof (alpha uses 1/(K-1)); K = 1 is trivial"),
    lhs="Delta_t",
    variants=[Variant(
        "printed", "as printed (the proof's typos F36, F37 do not change the statement)",
        bound=(3 * (1 - p) * K * Gamma_t + 24 * K ** 3 * g ** 2 * Y_t + 24 * K ** 3 * g ** 2 * Z_t
               + 6 * K ** 3 * g ** 2 * G_t + 3 * K ** 2 * g ** 2 * sigma ** 2),
        conditions=(LEMMA3_CAP,))],
    known_issues=(
        Flag("F36", "(44) k for 1; (45) uses (1-p) where only beta_s^2 <= 1-p holds; (46) alpha^K <= 3 "
                    "is false for K = 2 (alpha^(K-1) <= 3 is what is used); K = 1 makes 1/(K-1) "
                    "undefined"),
        Flag("F37", "(47) LaTeX prints 4 K^2 gamma^2 Y_t, the rendering 24; 24 is right"),
    ),
))


def _lemma4_bound(delta_coefficient: sp.Expr) -> sp.Expr:
    return ((1 - p / 2) * Y_prev + delta_coefficient * Delta_prev
            + 12 / p * g ** 2 * L ** 2 * K ** 2 * G_prev + 2 * sigma ** 2 / (p * K))


LEMMA4 = register(Result(
    id="sdgt.lemma4",
    title="Lemma 4 (between-subnet gradient-tracking lemma)",
    statement="Under A1 with gamma < 1/(sqrt(6) K L): Y_t <= (1 - p/2) Y_{t-1} + (10 L^2/p) Delta_{t-1} "
              "+ (12/p) gamma^2 L^2 K^2 G_{t-1} + 2 sigma^2/(pK).",
    relations=SAMPLING,
    provenance=where("(23)", "365-370"),
    assumptions=("A1 (L-smooth)", "0 < p <= 1"),
    lhs="Y_t",
    variants=[
        Variant("printed", "as printed: Delta coefficient 10 L^2/p",
                bound=_lemma4_bound(10 * L ** 2 / p), conditions=(LEMMA4_CAP,)),
        Variant("rederived", "from the proof (53) [L772] (F12): 6L^2/(pK) + 12 gamma^2 L^4 K/p "
                             "<= 8 L^2/(pK) under gamma < 1/(sqrt(6)KL); the printed form drops 1/K",
                bound=_lemma4_bound(8 * L ** 2 / (p * K)), conditions=(LEMMA4_CAP,)),
    ],
    known_issues=(Flag("F12", "as stated, the Delta coefficient drops the 1/K of the proof (53)"),),
))


def _lemma5_bound(delta_coefficient: sp.Expr, gradient: sp.Expr) -> sp.Expr:
    return ((1 - q / 2) * Z_prev + delta_coefficient * Delta_prev
            + 12 * K ** 2 * L ** 2 * g ** 2 / q * gradient + 2 * sigma ** 2 / (q * K))


LEMMA5 = register(Result(
    id="sdgt.lemma5",
    title="Lemma 5 (in-subnet gradient-tracking lemma)",
    statement="Under A1 with gamma < 1/(sqrt(6) K L): Z_t <= (1 - q/2) Z_{t-1} + (26 L^2/q) Delta_{t-1} "
              "+ (12 K^2 L^2 gamma^2/q) E||grad f(xbar^t)||^2 + 2 sigma^2/(qK).",
    relations=SAMPLING,
    provenance=where("(24)", "371-376"),
    assumptions=("A1 (L-smooth)", "0 < q <= 1"),
    lhs="Z_t",
    variants=[
        Variant("printed", "as printed: Delta coefficient 26 L^2/q, gradient at round t (G_t)",
                bound=_lemma5_bound(26 * L ** 2 / q, G_t), conditions=(LEMMA5_CAP,)),
        Variant("rederived", "from the proof (56) [L797] (F12, F39): 24L^2/(qK) + 12 K gamma^2 L^4/q "
                             "<= 26 L^2/(qK), and the gradient term comes from "
                             "||grad F(xbar^t) - grad F(xbar^{t-1})||^2, i.e. round t-1 (G_prev)",
                bound=_lemma5_bound(26 * L ** 2 / (q * K), G_prev), conditions=(LEMMA5_CAP,)),
    ],
    known_issues=(
        Flag("F12", "as stated, the Delta coefficient drops the 1/K of the proof (56)"),
        Flag("F39", "the gradient term is at xbar^t in (24)/(57) but at xbar^{t-1} in Lemma 4; a "
                    "recursion needs t-1"),
    ),
))

LEMMA6 = register(Result(
    id="sdgt.lemma6",
    title="Lemma 6 (sample-gap lemma)",
    statement="Under A1: Gamma_t <= (1 - p/2) Gamma_{t-1} + (12/p) gamma^2 K L^2 Delta_{t-1} "
              "+ (12/p) gamma^2 K^2 (Y_{t-1} + Z_{t-1} + G_{t-1}) + K gamma^2 sigma^2.",
    relations=SAMPLING,
    provenance=where("(25)", "377-383"),
    assumptions=("A1 (L-smooth)", "0 < p <= 1"),
    lhs="Gamma_t",
    variants=[Variant(
        "printed", "as printed; no step-size condition is stated",
        bound=((1 - p / 2) * Gamma_prev + 12 / p * g ** 2 * K * L ** 2 * Delta_prev
               + 12 / p * g ** 2 * K ** 2 * Y_prev + 12 / p * g ** 2 * K ** 2 * Z_prev
               + 12 / p * g ** 2 * K ** 2 * G_prev + K * g ** 2 * sigma ** 2))],
))
