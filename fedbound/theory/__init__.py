"""fedbound.theory: results of the papers as executable objects (bounds, step-size conditions,
rates, audits). sympy is the single source of truth; numbers come from expressions compiled once.

>>> from fedbound.theory import get
>>> thm = get("sdgt.thm2")          # doctest: +SKIP
>>> thm.max_step(K=5, L=1.0, p=0.64, q=0.5)   # doctest: +SKIP
"""
from fedbound.theory.registry import get, register, results
from fedbound.theory.result import (Evaluation, Flag, Provenance, Result, StepCondition, Variant,
                                    spectral_quantities)

__all__ = ["get", "register", "results", "Result", "Variant", "StepCondition", "Provenance",
           "Flag", "Evaluation", "spectral_quantities"]
