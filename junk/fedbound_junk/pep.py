"""The PEP method ``junk`` (``fedbound pep junk``): the worst case of R rounds of the algorithm
over every set of L-smooth, mu-strongly convex clients with ||x_0 - x*||^2 <= 1 and heterogeneity
(1/n) sum_i ||grad f_i(x*)||^2 <= zeta^2, certified by performance estimation, next to the bound of
Theorem 1 at the same constants (the theoretical side of the pair).

The round is described in fedbound's vocabulary (:class:`fedbound.extend.RoundSpec`): the options
are named as the algorithm's (``--lr``, ``--local-steps``, ``--server-momentum``), plus the setting's
(``--n``, ``--R``, ``--L``, ``--mu``, ``--zeta``).
"""
from __future__ import annotations

from fedbound.extend import (ResultTheory, RoundSpec, integer_option, number_option,
                             register_pep_method, round_method)

PAPER = "junk"


def theorem_constants(cfg: dict) -> dict:
    """Theorem 1's constants at the PEP's options: no noise, every client in every round, D = 1
    (the class's ||x_0 - x*||^2 <= 1) and zeta^2 for the heterogeneity."""
    return {"gamma": cfg["lr"], "K": cfg["local_steps"], "beta": cfg["server_momentum"],
            "T": cfg["R"], "L": cfg["L"], "mu": cfg["mu"], "zeta2": cfg["zeta"] ** 2, "D": 1.0,
            "sigma": 0.0, "c": cfg["n"], "n": cfg["n"]}


#: the round's options, with defaults inside Theorem 1's step condition (1) at L = 1
LR = number_option("lr", "client step size (default 0.01)", low=0.0, low_open=True, high=4.0,
                   default=0.01, examples=(0.01, 0.005))
LOCAL_STEPS = integer_option("local_steps", "local steps per round (default 2)", low=1, high=20,
                             default=2, examples=(1, 2))
SERVER_MOMENTUM = number_option("server_momentum", "server Nesterov momentum in [0, 1) (default 0.5)",
                                low=0.0, high=1.0, high_open=True, default=0.5, examples=(0.0, 0.5))

METHOD = register_pep_method(round_method(
    PAPER, "FedAvg with server Nesterov momentum: worst case vs Theorem 1",
    RoundSpec(lr=LR, local_steps=LOCAL_STEPS, server_momentum=SERVER_MOMENTUM, nesterov=True),
    theory=ResultTheory(f"{PAPER}.thm1", theorem_constants)))
