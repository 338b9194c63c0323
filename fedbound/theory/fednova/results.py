"""Importing this module registers every FedNova result (listed in
:data:`fedbound.theory.registry.PAPER_MODULES`)."""
from fedbound.theory.fednova import fedavg_fedprox, thm1, thm2, thm3  # noqa: F401  (register at import)
