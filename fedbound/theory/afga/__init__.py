"""AFGA / CAFGA (seed 000, papers/afga.md): Theorems 4.6 and D.3, the step-size and rho-conditions,
Lemmas F.1-F.9 as registered Results; the audit claims live in :mod:`fedbound.theory.afga.audit`.

Importing this package imports each result module; each module registers its results.
"""
import importlib

for _module in ("stepsize", "rho", "theorems", "lemmas"):
    importlib.import_module(f"{__name__}.{_module}")
