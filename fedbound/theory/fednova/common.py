"""Constants and provenance shared by the FedNova results (seed 001, papers/fednova.md).

Every FedNova constant is declared in scope ``"fednova"`` (key ``"fednova.A"``; FedNova results see
it as ``A``): :func:`declare` is :func:`fedbound.theory.symbols.declare` with that scope, so the
paper's own short names are used (A, B, C, m, q, eta, Delta, ...). Shared with every paper: L,
sigma (the formulas use sigma**2), T. The client learning rate ``eta`` [L54] is FedNova's own
constant: every learning-rate condition is a :class:`~fedbound.theory.result.StepCondition` with
``variable=eta`` (``max_step(variable="eta")``, ``fedbound stepsize fednova.thm1 --var eta``).

Vector inputs (``ndim=1``, one entry per client) ``p_i`` and ``tau_i`` feed the preparation steps
of :mod:`fedbound.theory.fednova.preparation`.
"""
import math

from fedbound.theory.paper import Paper
from fedbound.theory.reading import Reference
from fedbound.theory.symbols import NONNEGATIVE, POSITIVE, POSITIVE_INTEGER, PROBABILITY, UNIT, Domain, L

SEED = "001_530825e753327090.txt"
SCOPE = "fednova"
PAPER = Paper(SCOPE, SEED)
declare, where = PAPER.declare, PAPER.where

AT_LEAST_ONE = Domain(1.0, math.inf, False, True)


eta = declare("eta", POSITIVE, "client (local) learning rate eta [L54]", latex="eta")
Delta = declare("Delta", NONNEGATIVE, "initial gap F~(x^(0,0)) - F~_inf of the objective the bound is about "
                "(F~ in Theorems 1-2, F in Theorem 3 and Corollary 3)", latex="Delta")
tau_eff = declare("tau_eff", POSITIVE, "effective number of local steps tau_eff (server scale)")
tau_bar = declare("tau_bar", AT_LEAST_ONE, "unweighted mean of local steps (1/m) sum_i tau_i")
tau_tilde = declare("tau_tilde", AT_LEAST_ONE, "time average of the mean local steps sum_t tau_bar(t)/T "
                    "(Theorem 3, Corollary 3)")
tau_var = declare("tau_var", NONNEGATIVE, "variance of the local steps sum_i tau_i^2/m - tau_bar^2")
tau_max = declare("tau_max", POSITIVE_INTEGER, "largest number of local steps max_i tau_i")
tau = declare("tau", POSITIVE_INTEGER, "local steps tau_i of one client (FedProx (127), (131))")
tau_1 = declare("tau_1", POSITIVE_INTEGER, "Lemma 4: local steps of client 1")
tau_2 = declare("tau_2", POSITIVE_INTEGER, "Lemma 4: local steps of client 2")
a = declare("a", POSITIVE, "Lemma 4: offset a of F_1 = (x-a)^2/2, F_2 = (x+a)^2/2")
A = declare("A", POSITIVE, "A = m tau_eff sum_i w_i^2 ||a_i||_2^2/||a_i||_1^2 (9), (93)")
B = declare("B", NONNEGATIVE, "B = sum_i w_i (||a_i||_2^2 - a_{i,-1}^2) (9), (94)")
C = declare("C", NONNEGATIVE, "C = max_i ||a_i||_1 (||a_i||_1 - a_{i,-1}) (9), (95)")
A_tilde = declare("A_tilde", POSITIVE, "Theorem 3: time average of A^(t) (143)")
B_tilde = declare("B_tilde", NONNEGATIVE, "Theorem 3: time average of B^(t) (144)")
C_tilde = declare("C_tilde", NONNEGATIVE, "Theorem 3: time average of C^(t) (145)")
a1_max = declare("a1_max", POSITIVE, "max_i ||a_i||_1 (over rounds too in Theorem 3)")
chi2 = declare("chi2", NONNEGATIVE, "chi-square divergence sum_i (p_i - w_i)^2/w_i")
beta2 = declare("beta2", AT_LEAST_ONE, "Assumption 3: dissimilarity beta^2 >= 1")
kappa2 = declare("kappa2", NONNEGATIVE, "Assumption 3: dissimilarity kappa^2 >= 0")
m = declare("m", POSITIVE_INTEGER, "number of clients m")
q = declare("q", POSITIVE_INTEGER, "Corollary 3: clients sampled per round q")
eps_opt = declare("eps_opt", NONNEGATIVE, "optimization error epsilon_opt of Theorem 1 (8)")
grad_sq = declare("grad_sq", NONNEGATIVE, "||grad F~(x)||^2 at the point considered")
alpha = declare("alpha", UNIT, "FedProx: alpha = eta mu in (0, 1]", latex="alpha")
# vector inputs (one entry per client) of the preparation steps
p_i = declare("p_i", PROBABILITY, "client weights p_i of the objective F = sum_i p_i F_i (sum to 1)", ndim=1)
tau_i = declare("tau_i", POSITIVE_INTEGER, "local steps tau_i of each client (vanilla local SGD)", ndim=1)

#: what min_{t<T} E||grad F~(x^(t,0))||^2 is at most without a theorem: its t = 0 value
#: ||grad F~(x^(0,0))||^2 <= 2 L (F~(x^(0,0)) - F~_inf) = 2 L Delta, for the L-smooth F~ (Assumption 1
#: [L141], each F_i L-smooth) bounded below by F~_inf (notes 3 (c)); F and Theorem 3's Delta alike
MIN_GRADIENT_TRIVIAL = Reference(2 * L * Delta, "2 L Delta", "trivial",
                                 "min_t <= ||grad F(x^(0,0))||^2 <= 2 L Delta, Assumption 1 [L141]")
