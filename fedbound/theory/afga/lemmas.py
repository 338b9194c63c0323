r"""AFGA / CAFGA supporting Lemmas F.1-F.9 as stated and as proved (seed 000, Appendix F
[L2623-4834]; notes afga.md 4.6, flags 13, 15-19, 25-30, 36).

Each lemma is conditional on x_r (one round); expectations are over S_{r,t}, S_r and the noise.
Measured quantities are declared as nonnegative constants so a right-hand side can be evaluated at
measured values:

    grad_sq       E||grad f(x_r)||^2
    cons_inter         (1/K) sum_k E||xbar^k_{r,t} - x_r||^2          (inter-cluster error U_t)
    cons_intra         (1/N) sum_k E||X^{k,perp}_{r,t}||_F^2          (intra-cluster error V_t)
    cons_intra_last    V_{I-1}
    sum_avg_grad       sum_{t<I} E||(1/N) sum_i grad f_i(x^i_{r,t})||^2
    sum_cluster_grad   sum_{t<I} E||(1/K) sum_k grad fbar_k(xbar^k_{r,t})||^2
    cluster_grad_last  E||(1/K) sum_k grad fbar_k(xbar^k_{r,I-1})||^2
    t            the local step t;  zeta  Lemma F.2's Young parameter (uniform in k)
    y_sum_sq, y_sq_sum ||sum y||^2 and sum ||y||^2 (Lemma F.6);  sum_delta_sq  sum_r E||Delta_r||^2

Lemma F.2 is written for rho_k = rho_max and a uniform zeta (its max_k / average over k then
coincide), which bounds the general statement from above.
"""
from __future__ import annotations

import sympy as sp

from fedbound.theory.afga.common import (CLUSTER_RELATIONS, C1, C_I, G, H, I, K, L, alpha, d, declare, eps_a, eta_l, m,
                                         n, q, rho, sigma, sigma_c, sigma_l, where)
from fedbound.theory.afga.stepsize import CAP_A, CAP_A_STRICT
from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Result, Variant
from fedbound.theory.symbols import NONNEGATIVE, NONNEGATIVE_INTEGER, POSITIVE

grad_sq = declare("grad_sq", NONNEGATIVE, "AFGA: E||grad f(x_r)||^2")
U = declare("cons_inter", NONNEGATIVE, "AFGA: inter-cluster error (1/K) sum_k E||xbar^k_t - x_r||^2")
V = declare("cons_intra", NONNEGATIVE, "AFGA: intra-cluster error (1/N) sum_k E||X^{k,perp}_t||^2")
V_last = declare("cons_intra_last", NONNEGATIVE, "AFGA: intra-cluster error at t = I-1")
S_avg = declare("sum_avg_grad", NONNEGATIVE,
                "AFGA: sum_t E||(1/N) sum_i grad f_i(x^i_t)||^2 over t = 0..I-1")
S_cl = declare("sum_cluster_grad", NONNEGATIVE,
               "AFGA: sum_t E||(1/K) sum_k grad fbar_k(xbar^k_t)||^2 over t = 0..I-1")
cl_last = declare("cluster_grad_last", NONNEGATIVE,
                  "AFGA: E||(1/K) sum_k grad fbar_k(xbar^k_{I-1})||^2")
t = declare("t", NONNEGATIVE_INTEGER, "AFGA: local step t (0 <= t <= I-1)")
zeta = declare("zeta", POSITIVE, "AFGA Lemma F.2: Young parameter zeta_k (uniform)")
y_sum = declare("y_sum_sq", NONNEGATIVE, "AFGA Lemma F.6: ||sum_k sum_i y^{k,i}||^2")
y_sq = declare("y_sq_sum", NONNEGATIVE, "AFGA Lemma F.6: sum_k sum_i ||y^{k,i}||^2")
sum_delta = declare("sum_delta_sq", NONNEGATIVE, "AFGA Lemma F.7: sum_r E||Delta_r||^2")

HET = alpha ** 2 * grad_sq + sigma_c ** 2           # alpha^2 E||grad f||^2 + sigma_c^2
NOISE_Q = sigma ** 2 / n + q * I * sigma_l ** 2      # sigma^2/n + q I sigma_l^2

LEMMA_F1 = register(Result(
    id="afga.lemmaF1",
    rounds="R",
    title="Lemma F.1 (inter-cluster consensus error)",
    statement="For eta_l <= 1/(8IL): (1/K) sum_k E||xbar^k_{t+1} - x_r||^2 <= C_I (1/K) sum_k "
              "E||xbar^k_t - x_r||^2 + 8 I eta_l^2 (alpha^2 E||grad f(x_r)||^2 + sigma_c^2) + "
              "eta_l^2 sigma^2/n, C_I = 1 + (3/2)/(4I - 1).",
    provenance=where("(38), (41)", "2624-2848"),
    assumptions=("A4.1", "A4.2", "D.1", "uniform sampling without replacement (Lemma F.6)"),
    lhs="(1/K) sum_k E||xbar^k_{r,t+1} - x_r||^2",
    variants=[
        Variant("printed", "statement (38) [L2624-2640]",
                bound=C_I * U + 8 * I * eta_l ** 2 * HET + eta_l ** 2 * sigma ** 2 / n,
                conditions=(CAP_A,)),
        Variant("rederived", "what the proof gives, (41) [L2828-2848]: 16I, the intra-cluster term "
                             "and 16 I eta_l^2 q sigma_l^2; under 1/(8 sqrt2 IL) (flag 17)",
                bound=(C_I * U + 16 * I * eta_l ** 2 * L ** 2 * V + 16 * I * eta_l ** 2 * HET
                       + eta_l ** 2 * sigma ** 2 / n + 16 * I * eta_l ** 2 * q * sigma_l ** 2),
                conditions=(CAP_A_STRICT,)),
    ],
    known_issues=(
        Flag("15", "statement (38) has 8I and omits the intra-cluster and q sigma_l^2 terms of (41)"),
        Flag("16", "cites Assumption 4.4 where D.1 is used [L2795]"),
        Flag("17", "16 I eta_l^2 L^2 <= 1/(2(4I-1)) needs eta_l <= 1/(8 sqrt2 IL) [L2801-2810]"),
    ),
))

_RHO_L = rho ** 2 * (1 + zeta)
LEMMA_F2 = register(Result(
    id="afga.lemmaF2",
    rounds="R",
    title="Lemma F.2 (intra-cluster consensus error), rho_k = rho_max, uniform zeta",
    statement="(1/N) sum_k E||X^{k,perp}_{t+1}||^2 <= (rho^2(1 + 1/zeta) + 4 eta_l^2 L^2 rho^2(1+zeta)) V_t "
              "+ 4 eta_l^2 L^2 rho^2(1+zeta) U_t + 4 eta_l^2 rho^2(1+zeta)(alpha^2 E||grad f||^2 + "
              "sigma_c^2) + 4 eta_l^2 rho^2 (1+zeta) sigma_l^2 + eta_l^2 sigma^2 rho^2.",
    provenance=where("(42)", "2850-3078"),
    assumptions=("A4.1", "A4.2", "D.1", "D.2"),
    lhs="(1/N) sum_k E||X^{k,perp}_{r,t+1}||^2",
    variants=[
        Variant("printed", "(42) with the proof's average over k of E||xbar^k - x_r||^2 (flag 36)",
                bound=((rho ** 2 * (1 + 1 / zeta) + 4 * eta_l ** 2 * L ** 2 * _RHO_L) * V
                       + 4 * eta_l ** 2 * L ** 2 * _RHO_L * U + 4 * eta_l ** 2 * _RHO_L * HET
                       + 4 * eta_l ** 2 * _RHO_L * sigma_l ** 2 + eta_l ** 2 * sigma ** 2 * rho ** 2)),
        Variant("rederived", "valid with re-sampling (E||D_S G||^2 <= E||G||^2): the noise term "
                             "picks up (1 + zeta) (flag 18)",
                bound=((rho ** 2 * (1 + 1 / zeta) + 4 * eta_l ** 2 * L ** 2 * _RHO_L) * V
                       + 4 * eta_l ** 2 * L ** 2 * _RHO_L * U + 4 * eta_l ** 2 * _RHO_L * HET
                       + 4 * eta_l ** 2 * _RHO_L * sigma_l ** 2 + eta_l ** 2 * sigma ** 2 * _RHO_L)),
    ],
    known_issues=(
        Flag("18", "the proof treats G^k as unbiased for the full stacked gradient, ignoring re-sampling"),
        Flag("36", "the statement lacks the (1/K) sum_k on E||xbar^k - x_r||^2 that the proof (46) has"),
    ),
))


def _f3(c1) -> sp.Expr:
    return (t + 1) * c1 * eta_l ** 2 * ((I + rho ** 2 * H) * HET + rho ** 2 * H * sigma_l ** 2
                                         + sigma ** 2 * rho ** 2
                                         + (1 + H ** 2 * rho ** 2 / I ** 2) * NOISE_Q)


LEMMA_F3 = register(Result(
    id="afga.lemmaF3",
    rounds="R",
    title="Lemma F.3 (sum of intra- and inter-cluster errors)",
    statement="For eta_l <= 1/(8IL) and t = 0..I-1: V_t + U_t <= (t+1) C1 eta_l^2 [(I + rho^2 H)(alpha^2 "
              "E||grad f||^2 + sigma_c^2) + rho^2 H sigma_l^2 + sigma^2 rho^2 + (1 + H^2 rho^2/I^2)"
              "(sigma^2/n + q I sigma_l^2)].",
    provenance=where("(47)", "3080-3589"),
    assumptions=("A4.1", "A4.2", "D.1", "D.2", "C1 an absolute constant"),
    lhs="V_t + U_t",
    variants=[
        Variant("printed", "(47) with C1 a free absolute constant", bound=_f3(C1), conditions=(CAP_A,)),
        Variant("rederived", "C1 = 64, what (65)'s coefficients 64I + 32 rho^2 H, 16 rho^2 H, 16 rho^2, "
                             "(4 + H^2 rho^2/I^2) 16 need (notes 4.6, [DERIVED]); cap 1/(8 sqrt2 IL) "
                             "since the proof uses Lemma F.1", bound=_f3(64), conditions=(CAP_A_STRICT,)),
    ],
    known_issues=(Flag("19", "b^(2) uses sigma_k^2 where sigma_l^2 is meant [L3147]"),
                  Flag("C1", "C1 is 'a constant independent to parameters'; 64 suffices on the paper's steps")),
))

LEMMA_F4 = register(Result(
    id="afga.lemmaF4",
    rounds="R",
    title="Lemma F.4 (intra-cluster error alone)",
    statement="V_t <= (t+1) C1 eta_l^2 [H rho^2 (alpha^2 E||grad f||^2 + sigma_c^2) + H rho^2 sigma_l^2 "
              "+ rho^2 sigma^2 + (H^2/I^2) rho^2 sigma^2/n + q (H^2/I) rho^2 sigma_l^2]: every term "
              "carries rho_max^2.",
    provenance=where("(69)", "3591-3725"),
    assumptions=("as Lemma F.3",),
    lhs="V_t",
    variants=[Variant("printed", "(69)", conditions=(CAP_A,),
                      bound=(t + 1) * C1 * eta_l ** 2 * rho ** 2 * (
                          H * HET + H * sigma_l ** 2 + sigma ** 2 + H ** 2 / I ** 2 * sigma ** 2 / n
                          + q * H ** 2 / I * sigma_l ** 2))],
))

_M, _N = K * m, K * n
_BRACKET = I * C1 * eta_l ** 2 * rho ** 2 * (H * HET + H * sigma_l ** 2 + sigma ** 2 + H ** 2 / I ** 2 * NOISE_Q)
LEMMA_F5 = register(Result(
    id="afga.lemmaF5",
    rounds="R",
    relations=CLUSTER_RELATIONS,
    title="Lemma F.5 (model difference Delta_r)",
    statement="E||Delta_r||^2 <= 2 eta_l^2 I sigma^2/N + 2 eta_l^2 (I-1) sum_t E||(1/N) sum_i grad "
              "f_i(x^i_t)||^2 + 4 eta_l^2 E||(1/K) sum_k grad fbar_k(xbar^k_{I-1})||^2 + 8((n-m)/(m(n-1)) "
              "+ eta_l^2 L^2) V_{I-1} + (2 eta_l^2 sigma^2/N)((n-m)/m) rho_max^2.",
    provenance=where("(73), (86)", "3729-4537"),
    assumptions=("A4.1-4.3", "D.1", "D.2", "Delta_r the normalized average of Alg. 2 [L396-400]"),
    lhs="E||Delta_r||^2",
    variants=[
        Variant("printed", "statement (73) [L3729-3758]",
                bound=(2 * eta_l ** 2 * I * sigma ** 2 / _N + 2 * eta_l ** 2 * (I - 1) * S_avg
                       + 4 * eta_l ** 2 * cl_last + 8 * ((n - m) / (m * (n - 1)) + eta_l ** 2 * L ** 2) * V_last
                       + 2 * eta_l ** 2 * sigma ** 2 / _N * (n - m) / m * rho ** 2)),
        Variant("rederived", "what the proof gives and (24) uses, (86) [L4414-4536]",
                bound=(2 * eta_l ** 2 * I * _M * sigma ** 2 / _N ** 2
                       + 64 * eta_l ** 2 * I * m * (n - m) / (n ** 2 * (n - 1)) * (sigma_l ** 2 + sigma_c ** 2)
                       + (2 * (n - m) / (m * (n - 1))
                          + 64 * eta_l ** 2 * L ** 2 * I * m * (n - m) / (n ** 2 * (n - 1))
                          + 4 * (I + 1) ** 2 * eta_l ** 2 * m * L ** 2 / n) * _BRACKET
                       + 64 * eta_l ** 2 * L ** 2 * m * (n - m) / (n ** 2 * (n - 1))
                       * (I ** 3 * C1 * eta_l ** 2 * HET + I ** 2 * C1 * eta_l ** 2 * NOISE_Q)
                       + 16 * eta_l ** 2 * m * (m - 1) / (n * (n - 1)) * S_avg
                       + 8 * eta_l ** 2 * I * m ** 2 / n ** 2 * S_cl)),
    ],
    known_issues=(
        Flag("25", "statement (73) differs from the proved (86)"),
        Flag("26", "undefined p (N p = M) [L3785]"),
        Flag("27", "for K > 1 the global-average deviation is replaced by the cluster-average one "
                   "[L4135-4139, L4213-4216]"),
        Flag("13", "Delta_r is overloaded: unbiased estimate in (12), (m/n) Delta-bar_r in (15)"),
        Flag("F5-sum", "the statement writes Delta_r = sum_k sum_{i in S_r} Delta^i_r unnormalized"),
    ),
))

LEMMA_F6 = register(Result(
    id="afga.lemmaF6",
    rounds="R",
    relations=CLUSTER_RELATIONS,
    title="Lemma F.6 (cluster sampling)",
    statement="For uniform m-subsets S^k of V_k without replacement, independent across k: "
              "E||sum_k sum_{i in S^k} y^{k,i}||^2 <= m(m-1)/(n(n-1)) ||sum y||^2 + K m(n-m)/(n(n-1)) "
              "sum ||y||^2; equality for K = 1.",
    provenance=where("(87)", "4539-4722"),
    assumptions=("uniform sampling without replacement, independent across clusters",),
    lhs="E||sum_k sum_{i in S^k} y^{k,i}||^2",
    variants=[Variant("printed", "(87); for K = 1 an equality",
                      bound=m * (m - 1) / (n * (n - 1)) * y_sum + K * m * (n - m) / (n * (n - 1)) * y_sq)],
    known_issues=(Flag("28", "L4647 says 'with replacement'; the probabilities are without replacement"),),
))

LEMMA_F7 = register(Result(
    id="afga.lemmaF7",
    rounds="R",
    title="Lemma F.7 (momentum)",
    statement="sum_{r=1}^R E||m_r||^2 <= sum_{r=1}^R E||Delta_r||^2 (m_0 = 0; any sequence).",
    provenance=where("(91)", "4724-4761"),
    assumptions=("m_r = beta1 m_{r-1} + (1 - beta1) Delta_r, m_0 = 0",),
    lhs="sum_r E||m_r||^2",
    variants=[Variant("printed", "(91)", bound=sum_delta)],
    known_issues=(Flag("29", "'summing over t = 1..T' means r = 1..R [L4746]"),),
))

LEMMA_F8 = register(Result(
    id="afga.lemmaF8",
    rounds="R",
    title="Lemma F.8 (boundedness)",
    statement="Under A4.3: ||grad f(x)|| <= G, ||Delta_r|| <= (m/n) eta_l I G, ||m_r|| <= (m/n) eta_l I G, "
              "||v_r||, ||vhat_r|| <= m^2 eta_l^2 I^2 G^2/n^2.",
    provenance=where("(92)-(94)", "4762-4820"),
    assumptions=("A4.3",),
    lhs="||Delta_r||",
    variants=[
        Variant("printed", "as stated: (m/n) eta_l I G (valid only for rho = 0, flag 30)",
                bound=m / n * eta_l * I * G,
                extras={"m_r": m / n * eta_l * I * G, "v_r": (m / n * eta_l * I * G) ** 2,
                        "vhat_r": (m / n * eta_l * I * G) ** 2}),
        Variant("rederived", "valid for any doubly stochastic W: x^i_{r,I} - x_r is a convex "
                             "combination of at most I steps, ||Delta_r|| <= eta_l I G",
                bound=eta_l * I * G,
                extras={"m_r": eta_l * I * G, "v_r": (eta_l * I * G) ** 2, "vhat_r": (eta_l * I * G) ** 2}),
    ],
    known_issues=(Flag("30", "the bound on the cluster average Delta-bar^k_r is asserted for Delta_r "
                             "[L4800-4805]; true only for W_k = J"),),
))

LEMMA_F9 = register(Result(
    id="afga.lemmaF9",
    rounds="R",
    title="Lemma F.9 (variance-difference telescoping)",
    statement="sum_r ||Vhat_{r-1}^{-1/2} - Vhat_r^{-1/2}||_1 <= d/sqrt(eps), sum_r ||.||^2 <= d/eps "
              "(vhat non-decreasing, vhat_0 = 0).",
    provenance=where("(95)", "4821-4834"),
    assumptions=("vhat_0 >= 0 (vhat_0 = 0)",),
    lhs="sum_r ||Vhat_{r-1}^{-1/2} - Vhat_r^{-1/2}||_1",
    variants=[Variant("printed", "(95); extra 'squared' is the second inequality",
                      bound=d / sp.sqrt(eps_a), extras={"squared": d / eps_a})],
))

__all__ = ["LEMMA_F1", "LEMMA_F2", "LEMMA_F3", "LEMMA_F4", "LEMMA_F5", "LEMMA_F6", "LEMMA_F7",
           "LEMMA_F8", "LEMMA_F9"]
