"""AFGA / CAFGA (seed 000, papers/afga.md): Theorems 4.6 and D.3, the step-size and rho-conditions,
Lemmas F.1-F.9 as registered Results, each module registering its own; the audit claims live in
:mod:`fedbound.theory.afga.audit`.
"""
