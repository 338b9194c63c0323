"""Constants, provenance and shared sub-expressions of the AFGA / CAFGA results.

Seed 000_bd1b5016b2d2bc05.txt ("On the Data Heterogeneity in Adaptive Federated Learning", Wang &
Chen, TMLR 2024; notes papers/afga.md). Line numbers "L123" are lines of that seed.

Names. Every AFGA constant is declared in scope ``"afga"`` (key ``"afga.I"``; AFGA results see it
as ``I``): :func:`declare` is :func:`fedbound.theory.symbols.declare` with that scope, so the paper's
own short names are used (notes afga.md section 1.2):

    I (local iterations)      N (clients)              M (sampled per round, M <= N)
    K (clusters)              n (clients per cluster)  m (sampled per cluster, m <= n)
    rho (rho_max >= ||W-J||)  eta (server lr)          eta_l (local lr)   R (rounds)
    beta1 (AMSGrad momentum)  eps_ams (AMSGrad epsilon; the shared eps is the target accuracy)
    G (gradient bound, A4.3)  sigma_g^2 (A4.4)         sigma_l, sigma_c, alpha (D.1)
    d (model dimension)       f_gap (Delta f)          C, C1..C4 (absolute constants)

``n`` shadows the shared ``n`` (number of clients; AFGA's n is the cluster size, n = N for AFGA).
Shared with identical meaning: ``L`` (smoothness) and ``sigma`` (sigma^2 bounds the local variance,
A4.2). The local learning rate ``eta_l`` is AFGA's own constant: every eta_l condition is a
:class:`~fedbound.theory.result.StepCondition` with ``variable=eta_l`` (``max_step(variable=
"eta_l")``, ``fedbound stepsize afga.stepsize --var eta_l``); the rounds variable of every result is
``R`` (``Result(rounds="R")``). The order relations m <= n and M <= N are engine order relations
(:data:`fedbound.theory.symbols.ORDER_RELATIONS`), checked on every input.
"""
import math

import sympy as sp

from fedbound.theory.paper import Paper
from fedbound.theory.variant import Predicate
from fedbound.theory.symbols import (HALF_OPEN_UNIT, NONNEGATIVE, POSITIVE, POSITIVE_INTEGER, Domain,
                                      L, sigma)

SEED = "000_bd1b5016b2d2bc05.txt"
SCOPE = "afga"
PAPER = Paper(SCOPE, SEED)
declare, where = PAPER.declare, PAPER.where


AT_LEAST_TWO = Domain(2.0, math.inf, False, True, integer=True)

eta_l = declare("eta_l", POSITIVE, "AFGA: local (client) learning rate eta_l of the clients' SGD steps "
                "(Alg. 1 line 9 [L170-L176]); the theorems' rate needs eta_l = Theta(1/(I sqrt(R))) [L293]")
R = declare("R", POSITIVE_INTEGER, "AFGA: number of global (server) rounds R, r = 1..R [L117]; the "
            "bound is on (1/R) sum_r E||grad f(x_r)||^2")
I = declare("I", POSITIVE_INTEGER, "AFGA: local iterations per round I, t = 0..I-1 [L118] (one gossip "
            "step after each)")
N = declare("N", AT_LEAST_TWO, "AFGA: total number of clients N [L97] (N = K n for CAFGA)")
M = declare("M", POSITIVE_INTEGER, "AFGA: clients sampled per round M = |S_r| = |S_r,t| [L131-L132, "
            "L205-L211] (M <= N; M = K m for CAFGA)")
K = declare("K", POSITIVE_INTEGER, "CAFGA: number of disjoint equal clusters K (N = K n, M = K m) "
            "[L407-L414]; K = 1 is AFGA")
n = declare("n", AT_LEAST_TWO, "CAFGA: clients per cluster n = N/K [L408] (n = N for AFGA)", shadow=True)
m = declare("m", POSITIVE_INTEGER, "CAFGA: clients sampled per cluster per round m = M/K [L413-L414] "
            "(m <= n; m = M for AFGA)")
rho = declare("rho", HALF_OPEN_UNIT, "AFGA: mixing contraction rho >= ||W - J||_2 of the doubly "
              "stochastic gossip matrix W (Assumption 4.5 [L269-L273]; not a gap: 0 for W = J, near 1 "
              "for a sparse ring); CAFGA: rho_max = max_k ||W_k - J||_2 (D.2 [L1069-L1078]); the "
              "theorems need rho <= m/(m+n)")
eta = declare("eta", POSITIVE, "AFGA: global (server) learning rate eta of the AMSGrad step (2) "
              "[L126-L129] (Theorem 4.6 calls it 'local', flag 1); the rate needs eta = Theta(n sqrt(I/m))")
# beta1 in [0, 1): momentum of the server step (2) [L126-L129], 0.9 in the experiments [L996] (its
# meaning stays the short form tests/testing/test_strategies.py matches)
beta1 = declare("beta1", HALF_OPEN_UNIT, "AMSGrad first-moment factor beta1")
eps_a = declare("eps_ams", POSITIVE, "AMSGrad epsilon > 0 inside the square root, x += eta m/sqrt(vhat + "
                "eps) (Alg. 1 line 22 [L198]; the shared eps is a target accuracy)")
G = declare("G", POSITIVE, "bound G on stochastic-gradient norms, ||grad F_i(x; xi)|| <= G for all x, "
            "xi, i (Assumption 4.3 [L255-L256]); gives C0 = sqrt(eta_l^2 I^2 G^2 + eps) and the G^2/R term")
sigma_g = declare("sigma_g", NONNEGATIVE, "global heterogeneity: (1/N) sum_i ||grad f_i(x) - grad f(x)||^2 "
                  "<= sigma_g^2 for all x (Assumption 4.4 [L260-L263]); AFGA's sigma_l (K = 1)")
sigma_l = declare("sigma_l", NONNEGATIVE, "average intra-cluster heterogeneity sigma-bar_l, sigma-bar_l^2 = "
                  "(1/K) sum_k sigma_k^2 with (1/n) sum_{i in V_k} ||grad f_i - grad fbar_k||^2 <= "
                  "sigma_k^2 (Assumption D.1 [L1059-L1062, L1073-L1077]); = sigma_g for AFGA")
sigma_c = declare("sigma_c", NONNEGATIVE, "inter-cluster heterogeneity sigma_c: (1/K) sum_k "
                  "||grad fbar_k||^2 <= alpha^2 ||grad f||^2 + sigma_c^2 (Assumption D.1 [L1063-L1068]); "
                  "0 for AFGA")
alpha = declare("alpha", Domain(1.0, math.inf, False, True), "Assumption D.1's alpha >= 1 in (1/K) sum_k "
                "||grad fbar_k||^2 <= alpha^2 ||grad f||^2 + sigma_c^2 [L1063-L1068] (not the Dirichlet "
                "alpha of the experiments); 1 for AFGA")
d = declare("d", POSITIVE_INTEGER, "model dimension d [L104] (enters the G^2 d/sqrt(eps) term through "
            "Lemma F.9)")
f_gap = declare("f_gap", NONNEGATIVE, "initial gap Delta f = f(x_1) - f* >= 0 at the initial model x_1 "
                "[L312] (x_1 = x_0 = z_1)")
C = declare("C", POSITIVE, "AFGA (29)/(33): absolute constant C of the consensus term T2, unspecified "
            "by the paper (subsumes 3 C1 [L2148]); default 1")
C1 = declare("C1", POSITIVE, "AFGA Lemma F.3: absolute constant C1 of the consensus bound [L3110]; 64 "
             "on the paper's own steps (notes 4.6)")
C2 = declare("C2", POSITIVE, "AFGA (33): absolute constant C2 of the noise term T5, unspecified by the "
             "paper [L2212-L2275]; default 1")
C3 = declare("C3", POSITIVE, "AFGA (33): absolute constant C3 of T4 and T6, unspecified by the paper "
             "[L2212-L2275]; default 1")
C4 = declare("C4", POSITIVE, "AFGA (33): absolute constant C4 of T8, unspecified by the paper "
             "[L2212-L2275]; default 1")
c_eta = declare("c_eta", POSITIVE, "AFGA schedule constant: the server step eta = c_eta n sqrt(I/m) "
                "[L2276-L2280] (eta = Theta(N sqrt(I/M)) in Theorem 4.6)")
c_l = declare("c_l", POSITIVE, "AFGA schedule constant: the local step eta_l = c_l/(I sqrt(R)) "
              "[L2276-L2280] (eta_l = Theta(1/sqrt(R I^2)) in Theorem 4.6 [L293])")

#: the notes' default values of the absolute constants (C1 = 64 from Lemma F.3's own steps,
#: notes afga.md 4.6; the others are unspecified by the paper and default to 1)
DEFAULT_CONSTANTS = {"C": 1.0, "C1": 64.0, "C2": 1.0, "C3": 1.0, "C4": 1.0}

# Shared sub-expressions (notes afga.md 1.2 and 7.1) ------------------------------------------------
#: H_{I,rho} = min{I, 1/(1 - rho_max)}, the "distance constant" [L2083-2084, L2148-2149]
H = sp.Min(I, 1 / (1 - rho))
#: q = m(n - m)/(n(n - 1)), the without-replacement sampling factor [L2140-2147, L4539-4560]
q = m * (n - m) / (n * (n - 1))
#: C0 = sqrt(eta_l^2 I^2 G^2 + eps), the bound on sqrt(vhat + eps) [L1474-1476]
C0 = sp.sqrt(eta_l ** 2 * I ** 2 * G ** 2 + eps_a)
#: C_I = 1 + (3/2)/(4I - 1), Lemma F.1's contraction [L2626-2627]
C_I = 1 + sp.Rational(3, 2) / (4 * I - 1)
#: C_beta = beta1/(1 - beta1) [L2150-2151]
C_beta = beta1 / (1 - beta1)
#: A = C_{beta,eta} = (eta L/eps) beta1^2/(1 - beta1)^2 + 3 eta L/eps [L1962-1968]
A = eta * L / eps_a * beta1 ** 2 / (1 - beta1) ** 2 + 3 * eta * L / eps_a

#: N = K n and M = K m [L407-L414]: equal clusters, m sampled in each (relations of the CAFGA
#: results; a result checks them where N or M is given beside K, n, m)
CLUSTER_RELATIONS = (
    Predicate("N = K n", sp.Abs(N - K * n), "<=", 0, "N = K n equal clusters [L407-L409]"),
    Predicate("M = K m", sp.Abs(M - K * m), "<=", 0, "M = K m, m sampled per cluster [L413-L414]"),
)

__all__ = ["SEED", "CLUSTER_RELATIONS",
           "where", "eta_l", "R", "I", "N", "M", "K", "n", "m", "rho", "eta", "beta1", "eps_a",
           "G", "sigma", "sigma_g", "sigma_l", "sigma_c", "alpha", "d", "f_gap", "C", "C1", "C2",
           "C3", "C4", "c_eta", "c_l", "L", "H", "q", "C0", "C_I", "C_beta", "A",
           "DEFAULT_CONSTANTS"]
