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
from fedbound.theory.symbols import (HALF_OPEN_UNIT, NONNEGATIVE, POSITIVE, POSITIVE_INTEGER, Domain,
                                      L, sigma)

SEED = "000_bd1b5016b2d2bc05.txt"
SCOPE = "afga"
PAPER = Paper(SCOPE, SEED)
declare, where = PAPER.declare, PAPER.where


AT_LEAST_TWO = Domain(2.0, math.inf, False, True, integer=True)

eta_l = declare("eta_l", POSITIVE, "AFGA: local (client) learning rate eta_l")
R = declare("R", POSITIVE_INTEGER, "AFGA: number of global rounds R")
I = declare("I", POSITIVE_INTEGER, "AFGA: local iterations per round I")
N = declare("N", AT_LEAST_TWO, "AFGA: total number of clients N")
M = declare("M", POSITIVE_INTEGER, "AFGA: clients sampled per round M = |S_r| = |S_r,t| (M <= N)")
K = declare("K", POSITIVE_INTEGER, "CAFGA: number of clusters K (N = K n)")
n = declare("n", AT_LEAST_TWO, "CAFGA: clients per cluster n (n = N for AFGA)", shadow=True)
m = declare("m", POSITIVE_INTEGER, "CAFGA: clients sampled per cluster m (m <= n, M = K m)")
rho = declare("rho", HALF_OPEN_UNIT, "AFGA: rho with ||W - J||_2 <= rho (rho_max for CAFGA)")
eta = declare("eta", POSITIVE, "AFGA: global (server) learning rate eta")
beta1 = declare("beta1", HALF_OPEN_UNIT, "AMSGrad first-moment factor beta1")
eps_a = declare("eps_ams", POSITIVE, "AMSGrad epsilon (inside the square root)")
G = declare("G", POSITIVE, "bound G on stochastic-gradient norms (Assumption 4.3)")
sigma_g = declare("sigma_g", NONNEGATIVE, "global heterogeneity sigma_g (Assumption 4.4)")
sigma_l = declare("sigma_l", NONNEGATIVE, "average intra-cluster heterogeneity sigma-bar_l (D.1)")
sigma_c = declare("sigma_c", NONNEGATIVE, "inter-cluster heterogeneity sigma_c (Assumption D.1)")
alpha = declare("alpha", Domain(1.0, math.inf, False, True), "Assumption D.1's alpha >= 1")
d = declare("d", POSITIVE_INTEGER, "model dimension d")
f_gap = declare("f_gap", NONNEGATIVE, "initial gap f(x_1) - f* (Delta f)")
C = declare("C", POSITIVE, "AFGA (29)/(33): absolute constant C (subsumes 3 C1)")
C1 = declare("C1", POSITIVE, "AFGA Lemma F.3: absolute constant C1 (64 on the paper's steps)")
C2 = declare("C2", POSITIVE, "AFGA (33): absolute constant C2")
C3 = declare("C3", POSITIVE, "AFGA (33): absolute constant C3")
C4 = declare("C4", POSITIVE, "AFGA (33): absolute constant C4")
c_eta = declare("c_eta", POSITIVE, "AFGA schedule: eta = c_eta n sqrt(I/m)")
c_l = declare("c_l", POSITIVE, "AFGA schedule: eta_l = c_l/(I sqrt(R))")

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

__all__ = ["SEED", "where", "eta_l", "R", "I", "N", "M", "K", "n", "m", "rho", "eta", "beta1", "eps_a",
           "G", "sigma", "sigma_g", "sigma_l", "sigma_c", "alpha", "d", "f_gap", "C", "C1", "C2",
           "C3", "C4", "c_eta", "c_l", "L", "H", "q", "C0", "C_I", "C_beta", "A",
           "DEFAULT_CONSTANTS"]
