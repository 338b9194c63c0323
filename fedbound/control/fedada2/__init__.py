"""FedAda2's design problems (papers/fedada2.md 5; the paper itself poses none):

* :mod:`~fedbound.control.fedada2.lr_exponents`  the learning-rate exponent LP of Corollaries 23/24
  (derived formulation, notes 5.1), certified against a grid.
"""
from fedbound.control.fedada2.lr_exponents import (ExponentSolution, enumerate_exponents, exponents_at,
                                                   printed_conditions, solve_exponents)

__all__ = ["ExponentSolution", "solve_exponents", "enumerate_exponents", "exponents_at", "printed_conditions"]
