"""FedAda2's design problems (papers/fedada2.md 5; the paper itself poses none):

* :mod:`~fedbound.control.fedada2.lr_exponents`  the learning-rate exponent LP of Corollaries 23/24
  (derived formulation, notes 5.1), certified against a grid;
* :mod:`~fedbound.control.fedada2.stepsize`  the (eta, eta_l) minimising the Theorem 20 bound
  (derived, not in the paper, notes 5.2), by grid + Powell and by the notes' DGP.
"""
from fedbound.control.fedada2.lr_exponents import (ExponentSolution, enumerate_exponents, exponents_at,
                                                   printed_conditions, solve_exponents)
from fedbound.control.fedada2.stepsize import StepChoice, best_step_sizes, gp_step_sizes

__all__ = ["ExponentSolution", "solve_exponents", "enumerate_exponents", "exponents_at", "printed_conditions",
           "StepChoice", "best_step_sizes", "gp_step_sizes"]
