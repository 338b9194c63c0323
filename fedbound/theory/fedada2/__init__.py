"""FedAda2 (seed 004_a1d7c636af01c22e.txt, papers/fedada2.md): its results as registered Results.

Each result module (:mod:`.heavy_tail`, :mod:`.lemmas`, :mod:`.thm20`, :mod:`.corollaries`)
registers its results; the audit (:mod:`fedbound.theory.fedada2.audit`) and the cost model
(:mod:`fedbound.theory.fedada2.costs`) sit beside them.
"""
