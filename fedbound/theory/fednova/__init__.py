"""FedNova (seed 001, papers/fednova.md): Theorems 1-3, Lemmas 3-4, Corollaries 1-3 and FedProx's
closed forms as registered Results; :mod:`.accumulation` reduces accumulation vectors to their
scalar constants; :mod:`.audit` holds the paper's checkable claims.

Importing this package imports each module that registers results (not the audit).
"""
import importlib

for _module in ("thm1", "thm2", "fedavg_fedprox", "thm3"):
    importlib.import_module(f"{__name__}.{_module}")
