"""SD-GT (seed 003, papers/sdgt.md): every lemma, theorem and corollary as a registered Result.

Each result module registers its results (:mod:`fedbound.theory.registry` finds them on its first
look-up), :mod:`~fedbound.theory.sdgt.audit` holds the audited claims (the paper ``sdgt`` of
:mod:`fedbound.papers`), :mod:`~fedbound.theory.sdgt.stationary` the root of (118) that the
controller uses (no sympy, so importing it stays cheap).
"""
