"""SD-GT (seed 003, papers/sdgt.md): every lemma, theorem and corollary as a registered Result.

:mod:`~fedbound.theory.sdgt.results` imports the result modules (each registers its results; the
registry loads it on first look-up), :mod:`~fedbound.theory.sdgt.audit` holds the audited claims
(:data:`fedbound.theory.audit.PAPERS`), :mod:`~fedbound.theory.sdgt.stationary` the root of (118)
that the controller uses (no sympy, so importing it stays cheap).
"""
