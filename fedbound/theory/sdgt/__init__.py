"""SD-GT (seed 003, papers/sdgt.md): every lemma, theorem and corollary as a registered Result.

Importing this package imports each of its modules; each module registers its results.
"""
import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
