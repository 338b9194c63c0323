"""A paper as the theory sees it: its symbol scope and its seed text.

Every paper module declares its constants in its own scope and cites its seed file in every
result's provenance; :class:`Paper` does both, so that each paper's ``common.py`` states only its
scope and seed::

    PAPER = Paper("fednova", "001_530825e753327090.txt")
    declare, where = PAPER.declare, PAPER.where
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from fedbound.theory import symbols as S
from fedbound.theory.result import Provenance


@dataclass(frozen=True)
class Paper:
    """``scope``: the symbol scope (the id prefix of the paper's results); ``seed``: the seed file."""

    scope: str
    seed: str

    def declare(self, name: str, domain: S.Domain, meaning: str, latex: str | None = None,
                shadow: bool = False, ndim: S.Dimensions = 0) -> sp.Symbol:
        """Declare a constant of this paper (see :func:`fedbound.theory.symbols.declare`;
        ``shadow`` for a shared name used with another meaning, ``ndim=1`` for a vector input)."""
        return S.declare(name, domain, meaning, latex, scope=self.scope, shadow=shadow, ndim=ndim)

    def where(self, equation: str, lines: str) -> Provenance:
        """Provenance in this paper's seed text."""
        return Provenance(self.seed, equation, lines)


__all__ = ["Paper"]
