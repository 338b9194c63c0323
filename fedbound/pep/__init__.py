"""Worst-case certificates by performance estimation (PEP) for federated and decentralized
algorithms (issue 13): :func:`certify` (one method, one setting), :mod:`fedbound.pep.compose`
(long horizons from one-round certificates) and the methods of :data:`PEP_METHODS` (the registry
of :mod:`fedbound.pep.method`; ``METHODS``, the dict name -> method of before, still works and
warns)."""
from fedbound.deprecation import deprecated
from fedbound.pep.certificate import Certificate, certify
from fedbound.pep.method import PEP_METHODS

__all__ = ["Certificate", "certify", "PEP_METHODS"]


def __getattr__(name: str):
    if name == "METHODS":
        deprecated("fedbound.pep.METHODS", "fedbound.pep.PEP_METHODS")
        return {m.name: m for m in PEP_METHODS}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
