"""Worst-case certificates by performance estimation (PEP) for federated and decentralized
algorithms (issue 13): :func:`certify` (one method, one setting), :mod:`fedbound.pep.compose`
(long horizons from one-round certificates) and the methods of :data:`PEP_METHODS` (the registry
of :mod:`fedbound.pep.method`; ``METHODS``, the dict name -> method of before, still works and
warns). A method of one's own from a description of its round (:class:`RoundSpec`, in the
algorithms' vocabulary) with a registered theorem as its theory (:class:`ResultTheory`):
:func:`register_round_method` (:mod:`fedbound.pep.rounds`, issue 21). A bound on the worst case proved
in exact arithmetic: :func:`prove` (rational dual multipliers checked exactly,
:mod:`fedbound.pep.dual`, issue 32)."""
from fedbound.deprecation import deprecated
from fedbound.pep.certificate import Certificate, certify
from fedbound.pep.dual import DualProof, NotProved, prove
from fedbound.pep.method import PEP_METHODS, ResultTheory, Theory
from fedbound.pep.rounds import RoundSpec, register_round_method, round_method

__all__ = ["Certificate", "certify", "prove", "DualProof", "NotProved", "PEP_METHODS", "RoundSpec", "ResultTheory", "Theory", "round_method",
           "register_round_method"]


def __getattr__(name: str):
    if name == "METHODS":
        deprecated("fedbound.pep.METHODS", "fedbound.pep.PEP_METHODS")
        return {m.name: m for m in PEP_METHODS}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
