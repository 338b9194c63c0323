"""Constants and provenance shared by the FedNova results (seed 001, papers/fednova.md).

FedNova's constants are declared here, under names that cannot clash with the other papers'
(SD-GT's p, q, rho, D, K, eta mean other things). Shared with every paper: L, sigma (the formulas
use sigma**2), T.

The client learning rate eta of the paper is the engine's step variable ``gamma`` (the local step
size, the variable every :class:`~fedbound.theory.result.StepCondition` caps): ``eta`` below IS the
symbol ``gamma``, so ``evaluate(..., gamma=eta_value)`` checks FedNova's learning-rate conditions
and ``max_step`` returns the largest admissible eta. Once the engine names the variable of a
condition, this is the one line to change.
"""
import math

from fedbound.theory.result import Provenance
from fedbound.theory.symbols import (NONNEGATIVE, POSITIVE, POSITIVE_INTEGER, UNIT, Domain, declare,
                                     gamma)

SEED = "001_530825e753327090.txt"
AT_LEAST_ONE = Domain(1.0, math.inf, False, True)


def where(equation: str, lines: str) -> Provenance:
    """Provenance in the FedNova seed text."""
    return Provenance(SEED, equation, lines)


#: the client (local) learning rate eta [L54]: the engine's step variable (module docstring)
eta = gamma

Delta_F = declare("Delta_F", NONNEGATIVE, "FedNova: initial gap F~(x^(0,0)) - F~_inf of the objective "
                  "the bound is about (F~ in Theorems 1-2, F in Theorem 3 and Corollary 3)")
tau_eff = declare("tau_eff", POSITIVE, "FedNova: effective number of local steps tau_eff (server scale)")
tau_bar = declare("tau_bar", AT_LEAST_ONE, "FedNova: unweighted mean of local steps (1/m) sum_i tau_i")
tau_tilde = declare("tau_tilde", AT_LEAST_ONE, "FedNova: time average of the mean local steps "
                    "sum_t tau_bar(t)/T (Theorem 3, Corollary 3)")
tau_var = declare("tau_var", NONNEGATIVE, "FedNova: variance of the local steps sum_i tau_i^2/m - tau_bar^2")
tau_max = declare("tau_max", POSITIVE_INTEGER, "FedNova: largest number of local steps max_i tau_i")
tau_client = declare("tau_client", POSITIVE_INTEGER, "FedNova: local steps tau_i of one client")
tau_1 = declare("tau_1", POSITIVE_INTEGER, "FedNova Lemma 4: local steps of client 1")
tau_2 = declare("tau_2", POSITIVE_INTEGER, "FedNova Lemma 4: local steps of client 2")
a_offset = declare("a_offset", POSITIVE, "FedNova Lemma 4: offset a of F_1 = (x-a)^2/2, F_2 = (x+a)^2/2")
A_nova = declare("A_nova", POSITIVE, "FedNova: A = m tau_eff sum_i w_i^2 ||a_i||_2^2/||a_i||_1^2 (9), (93)")
B_nova = declare("B_nova", NONNEGATIVE, "FedNova: B = sum_i w_i (||a_i||_2^2 - a_{i,-1}^2) (9), (94)")
C_nova = declare("C_nova", NONNEGATIVE, "FedNova: C = max_i ||a_i||_1 (||a_i||_1 - a_{i,-1}) (9), (95)")
A_tilde = declare("A_tilde", POSITIVE, "FedNova Theorem 3: time average of A^(t) (143)")
B_tilde = declare("B_tilde", NONNEGATIVE, "FedNova Theorem 3: time average of B^(t) (144)")
C_tilde = declare("C_tilde", NONNEGATIVE, "FedNova Theorem 3: time average of C^(t) (145)")
a1_max = declare("a1_max", POSITIVE, "FedNova: max_i ||a_i||_1 (over rounds too in Theorem 3)")
chi2 = declare("chi2", NONNEGATIVE, "FedNova: chi-square divergence sum_i (p_i - w_i)^2/w_i")
beta2 = declare("beta2", AT_LEAST_ONE, "FedNova Assumption 3: dissimilarity beta^2 >= 1")
kappa2 = declare("kappa2", NONNEGATIVE, "FedNova Assumption 3: dissimilarity kappa^2 >= 0")
m_clients = declare("m_clients", POSITIVE_INTEGER, "FedNova: number of clients m")
q_sampled = declare("q_sampled", POSITIVE_INTEGER, "FedNova Corollary 3: clients sampled per round q")
eps_opt = declare("eps_opt", NONNEGATIVE, "FedNova: optimization error epsilon_opt of Theorem 1 (8)")
grad_sq = declare("grad_sq", NONNEGATIVE, "FedNova: ||grad F~(x)||^2 at the point considered")
alpha_prox = declare("alpha_prox", UNIT, "FedProx: alpha = eta mu in (0, 1]")
