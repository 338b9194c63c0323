r"""FedAda2's lemmas (seed 004, papers/fedada2.md 4.5-4.7, 4.13-4.16), as stated and as proved.

All bounds are coordinate-wise (|.| of a vector, notes 1.2 "Conventions" [L739, L852]).

* Lemma 15 [L741-L776]: |Delta_i^t| <= Phi_1 for Algorithm 2 (SM3-II client with delay z).
  Printed [L745]: Phi_1 = eta_l (sqrt(ceil(K/z)) log^(1/2)(1 + ceil(K/z) G^2/eps^2)
                                 + eta_l (K - ceil(K/z)) G/(sqrt(v0) + eps)),
  the proof [L764-L776] gives the same without the inner eta_l (notes 8.1).
* Lemma 16 [L778-L794]: server step |eta m~_t/(sqrt(v~_t) + tau)| <= Phi_2 = min{eta sqrt((1 - b)(1 -
  b^(2t))), eta Phi_1/tau} (v~_0 = tau^2, m~_0 = 0); here its T-uniform form (1 - b^(2t) <= 1).
* Lemma 17 [L796-L820]: 0 <= mu_k(b), v_k(j) <= d k G^2 (printed); the induction gives k G^2.
* Lemma 21 [L1056-L1066]: sum_{t<=T} sum_{r<=t} b^(t-r) (t-r)^2 <= c(b) T.
* Lemma 22 [L1067-L1072]: (1-b) sum_t sum_{r<=t} b^(t-r) Delta_t^2/(sum_{l<=t} Delta_l^2 + tau^2)
  <= 1 - b + log(1 + T Phi_1^2/tau^2) for |Delta_l| <= Phi_1.
* Lemma 26 [L1213-L1221]: blended clients (Algorithm 5): Phi_1 = eta_l Xi^+ K(K+1) max A_l G/(2 min m_l).
* Lemma 28 [L1448-L1456]: ADMU clients (Algorithm 8): Phi_1 = |Xi| (eta_l K sqrt(sum_{r=1}^{n} b1^(2n-2r)
  / b2^(n-r)) + Phi_0), n = ceil(K/z), Phi_0 = K G eta_l (1 - b1^K)/eps, "Phi_0 = 0 for z = 1".
* Lemma 30 [L1557-L1561]: AGDU clients (Algorithm 10): Phi_1 = eta_l B (floor((K-1)/z) + 1
  + K G/(sqrt(v0) + eps)).
"""
from __future__ import annotations

import sympy as sp
from sympy.codegen.cfunctions import log1p

from fedbound.theory.fedada2.common import (A_max, B_weight, G_inf, K_local, K_over_z, beta1,
                                            beta1_server, beta2, c_beta, d_params, eps_client,
                                            eta_l, eta_server, m_min, phi1_bound, tau_adapt, v0,
                                            where, xi_plus, z_delay)
from fedbound.theory.registry import register
from fedbound.theory.result import Flag, Predicate, Result, Variant
from fedbound.theory.symbols import T

# Lemma 15 ----------------------------------------------------------------------------------------
#: the update-step term sqrt(|F|) log^(1/2)(1 + |F| G^2/eps^2), |F| = ceil(K/z)   [L745, L770-L772]
UPDATE_TERM = sp.sqrt(K_over_z) * sp.sqrt(log1p(K_over_z * G_inf ** 2 / eps_client ** 2))
#: the non-update-step term (K - ceil(K/z)) G/(sqrt(v0) + eps)   [L745, L774-L776]
DELAY_TERM = (K_local - K_over_z) * G_inf / (sp.sqrt(v0) + eps_client)
PHI1 = {"printed": eta_l * (UPDATE_TERM + eta_l * DELAY_TERM),   # [L745]
        "proved": eta_l * (UPDATE_TERM + DELAY_TERM)}           # [L764-L776], notes 8.1


def phi2(phi1: sp.Expr | float) -> sp.Expr:
    """Lemma 16's T-uniform Phi_2 = min{eta sqrt(1 - b~1), eta Phi_1/tau} [L782, L790-L792]."""
    return sp.Min(eta_server * sp.sqrt(1 - beta1_server), eta_server * phi1 / tau_adapt)


LEMMA15 = register(Result(
    id="fedada2.lemma15",
    title="Lemma 15 (pseudo-gradient bound, SM3-II client with delay)",
    statement="Under Algorithm 2, coordinate-wise |Delta_i^t| <= Phi_1^K = eta_l (sqrt(ceil(K/z)) "
              "log^(1/2)(1 + ceil(K/z) G^2/eps^2) + eta_l (K - ceil(K/z)) G/(sqrt(v0) + eps)).",
    provenance=where("Lemma 15", "741-776"),
    assumptions=("A2: |g_j| <= G", "SM3-II with delay z, mu carried over on non-update steps and "
                 "mu_0 = v0 (notes 2.4)"),
    lhs="max_j |Delta_i^t(j)|",
    variants=[
        Variant("printed", "as stated [L745]: an inner eta_l multiplies the delay term", bound=PHI1["printed"],
                extras={"update_term": eta_l * UPDATE_TERM}),
        Variant("proved", "as the proof gives [L764-L776]: eta_l (update term + (K - ceil(K/z)) G/"
                          "(sqrt(v0) + eps))", bound=PHI1["proved"], extras={"update_term": eta_l * UPDATE_TERM}),
    ],
    known_issues=(Flag("8.1", "the statement's inner eta_l on the delay term is not in the proof"),
                  Flag("8.12", "Alg. 2 resets mu every step; the lower bound on v_k needs the "
                               "carry-over of mu on non-update steps; v0 is not wired into SM3")),
))

LEMMA16 = register(Result(
    id="fedada2.lemma16",
    title="Lemma 16 (server step bound)",
    statement="With m~_0 = 0, v~_0 = tau^2 and |Delta_t| <= Phi_1: |eta m~_t/(sqrt(v~_t) + tau)| <= "
              "min{eta sqrt((1 - b~1)(1 - b~1^(2t))), eta Phi_1/tau}; T-uniform form with 1 - b~1^(2t) <= 1.",
    provenance=where("Lemma 16", "778-794"),
    assumptions=("m~_0 = 0", "v~_0 = tau^2", "|Delta_t| <= Phi_1 coordinate-wise (Lemma 15)"),
    lhs="max_t max_j |eta m~_t(j)/(sqrt(v~_t(j)) + tau)|",
    variants=[
        Variant("printed", "as printed, T-uniform: min{eta sqrt(1 - b~1), eta Phi_1/tau}",
                bound=phi2(phi1_bound)),
        Variant("tight", "DERIVED (notes 4.6): Cauchy-Schwarz without the loosening at [L789]: "
                         "min{eta sqrt((1 - b~1)/(1 + b~1)), eta Phi_1/tau}",
                bound=sp.Min(eta_server * sp.sqrt((1 - beta1_server) / (1 + beta1_server)),
                             eta_server * phi1_bound / tau_adapt)),
    ],
))

LEMMA17 = register(Result(
    id="fedada2.lemma17",
    title="Lemma 17 (SM3 accumulator bound)",
    statement="For k in 1..K: 0 <= mu_k(b) <= d k G^2 and 0 <= v_k(j) <= d k G^2 (here at k = K).",
    provenance=where("Lemma 17 (B1), (B2)", "796-820"),
    assumptions=("A2: |g_j| <= G", "v0 = 0"),
    lhs="max_{b, j} max(mu_K(b), v_K(j))",
    variants=[
        Variant("printed", "as printed: d K G^2", bound=d_params * K_local * G_inf ** 2),
        Variant("proved", "what the induction gives (notes 8.29): K G^2", bound=K_local * G_inf ** 2),
    ],
    known_issues=(Flag("8.29", "the factor d is slack"),),
))

LEMMA21 = register(Result(
    id="fedada2.lemma21",
    title="Lemma 21 (momentum series constant c(b))",
    statement="For b in [0, 1) and T >= 0: sum_{t=1}^T sum_{r=1}^t b^(t-r) (t-r)^2 <= c(b) T, c(b) = "
              "sum_{u=0}^{u0} b^u u^2 + 1/u0, u0 = inf{u in N: b^v v^2 < 1/v^2 for all v >= u}.",
    provenance=where("Lemma 21", "1054-1066"),
    assumptions=("N = {1, 2, ...} in u0 (with 0 in N the integral diverges)",),
    lhs="sum_{t=1}^T sum_{r=1}^t b^(t-r) (t-r)^2",
    variants=[
        Variant("printed", "c(b) T", bound=c_beta(beta1_server) * T,
                extras={"c": c_beta(beta1_server)}),
        Variant("closed_form", "DERIVED (notes 4.16): the series sum b(1+b)/(1-b)^3 <= c(b) in place of c(b)",
                bound=beta1_server * (1 + beta1_server) / (1 - beta1_server) ** 3 * T),
    ],
))

LEMMA22 = register(Result(
    id="fedada2.lemma22",
    title="Lemma 22 (logarithmic sum of the server preconditioner)",
    statement="For |Delta_l| <= Phi_1 and b in [0, 1): (1 - b) sum_{t=1}^T sum_{r=1}^t b^(t-r) Delta_t^2/"
              "(sum_{l=1}^t Delta_l^2 + tau^2) <= 1 - b + log(1 + T Phi_1^2/tau^2).",
    provenance=where("Lemma 22, (14)", "1067-1072"),
    assumptions=("|Delta_l| <= Phi_1 (implicit in the statement)",),
    lhs="(1 - b) sum_t sum_{r<=t} b^(t-r) Delta_t^2/(sum_{l<=t} Delta_l^2 + tau^2)",
    variants=[Variant("printed", "as printed", bound=1 - beta1_server
                      + log1p(T * phi1_bound ** 2 / tau_adapt ** 2))],
))

LEMMA26 = register(Result(
    id="fedada2.lemma26",
    title="Lemma 26 (pseudo-gradient bound, blended optimization)",
    statement="Under Algorithm 5 (optimizer condition of Theorem 25): |Delta_i^(t,l)| <= Phi_1 = eta_l Xi^+ "
              "K(K+1) max_l A_l G/(2 min_l m_l).",
    provenance=where("Lemma 26", "1213-1221"),
    assumptions=("the optimizer condition of Theorem 25", "1 <= K(O_l^i) <= K", "w(O_l^i) < Xi^+"),
    lhs="max_j |Delta_i^(t,l)(j)|",
    variants=[Variant("printed", "as printed", bound=eta_l * xi_plus * K_local * (K_local + 1) * A_max * G_inf
                      / (2 * m_min))],
))

_N = K_over_z
_ratio = beta1 ** 2 / beta2
#: sum_{r=1}^{n} b1^(2n-2r)/b2^(n-r) = (1 - rho^n)/(1 - rho), rho = b1^2/b2, = n at rho = 1   [L1452]
ADAM_SUM = sp.Piecewise((_N, sp.Eq(_ratio, 1)), ((1 - _ratio ** _N) / (1 - _ratio), True))
#: the assumption b1^2 < b2 under which the sum stays bounded in K (Lemma 28, Cor. 27 [L1448])
ADAM_PREDICATE = Predicate("beta1^2 < beta2", beta1 ** 2, "<", beta2, "[L1448]")
#: Phi_0 = K G eta_l (1 - b1^K)/eps [L1456], zero for z = 1 ("can be shown"); Min(z - 1, 1) is 0 at z = 1
PHI0 = sp.Min(z_delay - 1, 1) * K_local * G_inf * eta_l * (1 - beta1 ** K_local) / eps_client
PHI1_ADMU = B_weight * (eta_l * K_local * sp.sqrt(ADAM_SUM) + PHI0)

LEMMA28 = register(Result(
    id="fedada2.lemma28",
    title="Lemma 28 (pseudo-gradient bound, ADMU clients)",
    statement="Under Algorithm 8: |Delta_i^t| <= |Xi| (eta_l K sqrt(sum_{r=1}^{ceil(K/z)} b1^(2 ceil(K/z) - 2r)"
              "/b2^(ceil(K/z) - r)) + Phi_0), Phi_0 = K G eta_l (1 - b1^K)/eps (0 for z = 1).",
    provenance=where("Lemma 28", "1448-1484"),
    assumptions=("b1^2 < b2 (the sum is bounded only then)", "|Xi_i^t| <= B", "K = K-bar_i^t"),
    lhs="max_j |Delta_i^t(j)|",
    variants=[Variant("printed", "as printed with |Xi| <= B; Phi_0 dropped at z = 1 as the statement says",
                      bound=PHI1_ADMU, extras={"Phi0": PHI0}, predicates=(ADAM_PREDICATE,))],
    relations=(ADAM_PREDICATE,),
    known_issues=(Flag("8.13", "the proof drops Adam's bias corrections and the factor (1 - b1)/"
                               "sqrt(1 - b2); without bias correction the bound fails (audit)"),),
))

LEMMA30 = register(Result(
    id="fedada2.lemma30",
    title="Lemma 30 (pseudo-gradient bound, AGDU clients)",
    statement="Under Algorithm 10: |Delta_i^t| <= eta_l B (floor((K-1)/z) + 1 + K G/(sqrt(v0) + eps)).",
    provenance=where("Lemma 30", "1557-1579"),
    assumptions=("A2", "|Xi_i^t| <= B"),
    lhs="max_j |Delta_i^t(j)|",
    variants=[
        Variant("printed", "as printed", bound=eta_l * B_weight * (sp.floor((K_local - 1) / z_delay) + 1
                                                                  + K_local * G_inf / (sp.sqrt(v0) + eps_client))),
        Variant("tight", "DERIVED (notes 8.28): only the K - ceil(K/z) non-update steps are worst-cased",
                bound=eta_l * B_weight * (K_over_z + DELAY_TERM)),
    ],
    known_issues=(Flag("8.28", "K instead of K - ceil(K/z) non-update terms (loose, valid)"),),
))
