"""FedAda2 (seed 004_a1d7c636af01c22e.txt, papers/fedada2.md): its results as registered Results.

Importing this package imports the result modules; each registers its results. The audit
(:mod:`fedbound.theory.fedada2.audit`) and the cost model (:mod:`fedbound.theory.fedada2.costs`) are
not imported here.
"""
import importlib

for _module in ("heavy_tail", "lemmas", "thm20", "corollaries"):
    importlib.import_module(f"{__name__}.{_module}")
