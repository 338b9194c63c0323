"""Worst-case certificates by performance estimation (PEP) for federated and decentralized
algorithms (issue 13): :func:`certify` (one method, one setting), :mod:`fedbound.pep.compose`
(long horizons from one-round certificates) and the methods of :data:`METHODS`."""
from fedbound.pep.certificate import Certificate, certify
from fedbound.pep.methods import METHODS

__all__ = ["Certificate", "certify", "METHODS"]
