"""Constants, provenance and shared sub-expressions of the AFGA / CAFGA results.

Seed 000_bd1b5016b2d2bc05.txt ("On the Data Heterogeneity in Adaptive Federated Learning", Wang &
Chen, TMLR 2024; notes papers/afga.md). Line numbers "L123" are lines of that seed.

Names. The symbol registry is flat and shared with SD-GT, whose K (D2D rounds), rho (mixing rate),
R (initial distance), eps (target accuracy), eta and D mean other things, so AFGA's constants are
declared under names that cannot clash (notes afga.md section 1.2 -> registry name):

    I (local iterations)          I_local        N (clients)              N_clients
    M (sampled per round)         M_sampled      K (clusters)             K_clusters
    n (clients per cluster)       n_cluster      m (sampled per cluster)  m_cluster
    rho, rho_max (||W - J||_2)    rho_gossip     eta (server lr)          eta_server
    beta1 (AMSGrad momentum)      beta1          epsilon (AMSGrad)        eps_ams
    G (gradient bound, A4.3)      G_inf          sigma_g^2 (A4.4)         sigma_g
    sigma-bar_l^2 (D.1, avg)      sigma_l        sigma_c^2 (D.1)          sigma_c
    alpha (D.1, >= 1)             alpha_het      d (model dimension)      d_model
    Delta f = f(x_1) - f*         f_gap          C, C1..C4 (absolute)     C_abs, C1_abs..C4_abs

Shared with identical meaning: ``L`` (smoothness), ``sigma`` (sigma^2 bounds the local variance,
A4.2), ``T`` = AFGA's number of rounds R (the engine's round variable, used by rounds_to_eps and
rate_exponents), and ``gamma`` = AFGA's local learning rate eta_l: the current engine's step-size
conditions are caps on ``gamma`` ("local step size"), so every eta_l condition below constrains
``gamma``. :data:`eta_l` and :data:`R` are aliases of those two symbols.
"""
import math

import sympy as sp

from fedbound.theory.result import Provenance
from fedbound.theory.symbols import (NONNEGATIVE, POSITIVE, POSITIVE_INTEGER, Domain, L, T, declare,
                                     gamma, sigma)

SEED = "000_bd1b5016b2d2bc05.txt"


def where(equation: str, lines: str) -> Provenance:
    """Provenance in the AFGA seed text (000)."""
    return Provenance(SEED, equation, lines)


AT_LEAST_TWO = Domain(2.0, math.inf, False, True, integer=True)
HALF_OPEN_UNIT = Domain(0.0, 1.0, False, True)      # [0, 1)

eta_l = gamma   # local learning rate eta_l (the engine's step variable)
R = T           # number of global rounds R
I = declare("I_local", POSITIVE_INTEGER, "AFGA: local iterations per round I")
N = declare("N_clients", AT_LEAST_TWO, "AFGA: total number of clients N")
M = declare("M_sampled", POSITIVE_INTEGER, "AFGA: clients sampled per round M = |S_r| = |S_r,t| (M <= N)")
K = declare("K_clusters", POSITIVE_INTEGER, "CAFGA: number of clusters K (N = K n)")
n = declare("n_cluster", AT_LEAST_TWO, "CAFGA: clients per cluster n (n = N for AFGA)")
m = declare("m_cluster", POSITIVE_INTEGER, "CAFGA: clients sampled per cluster m (m <= n, M = K m)")
rho = declare("rho_gossip", HALF_OPEN_UNIT, "AFGA: rho with ||W - J||_2 <= rho (rho_max for CAFGA)")
eta = declare("eta_server", POSITIVE, "AFGA: global (server) learning rate eta")
beta1 = declare("beta1", HALF_OPEN_UNIT, "AMSGrad first-moment factor beta1")
eps_a = declare("eps_ams", POSITIVE, "AMSGrad epsilon (inside the square root)")
G = declare("G_inf", POSITIVE, "bound G on stochastic-gradient norms (Assumption 4.3)")
sigma_g = declare("sigma_g", NONNEGATIVE, "global heterogeneity sigma_g (Assumption 4.4)")
sigma_l = declare("sigma_l", NONNEGATIVE, "average intra-cluster heterogeneity sigma-bar_l (D.1)")
sigma_c = declare("sigma_c", NONNEGATIVE, "inter-cluster heterogeneity sigma_c (Assumption D.1)")
alpha = declare("alpha_het", Domain(1.0, math.inf, False, True), "Assumption D.1's alpha >= 1")
d = declare("d_model", POSITIVE_INTEGER, "model dimension d")
f_gap = declare("f_gap", NONNEGATIVE, "initial gap f(x_1) - f* (Delta f)")
C = declare("C_abs", POSITIVE, "AFGA (29)/(33): absolute constant C (subsumes 3 C1)")
C1 = declare("C1_abs", POSITIVE, "AFGA Lemma F.3: absolute constant C1 (64 on the paper's steps)")
C2 = declare("C2_abs", POSITIVE, "AFGA (33): absolute constant C2")
C3 = declare("C3_abs", POSITIVE, "AFGA (33): absolute constant C3")
C4 = declare("C4_abs", POSITIVE, "AFGA (33): absolute constant C4")
c_eta = declare("c_eta", POSITIVE, "AFGA schedule: eta = c_eta n sqrt(I/m)")
c_l = declare("c_l", POSITIVE, "AFGA schedule: eta_l = c_l/(I sqrt(R))")

#: the notes' default values of the absolute constants (C1 = 64 from Lemma F.3's own steps,
#: notes afga.md 4.6; the others are unspecified by the paper and default to 1)
DEFAULT_CONSTANTS = {"C_abs": 1.0, "C1_abs": 64.0, "C2_abs": 1.0, "C3_abs": 1.0, "C4_abs": 1.0}

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
