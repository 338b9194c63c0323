"""The certified methods of :mod:`fedbound.pep`, by name (issue 13)."""
from __future__ import annotations

from fedbound.pep.methods import decentralized, gd, local, scaffnew, scaffold, sdgt

METHODS = {m.name: m for m in (gd.METHOD, local.FEDAVG, local.FEDPROX, local.FEDNOVA, scaffold.METHOD,
                               scaffnew.METHOD, decentralized.DGD, decentralized.GT, sdgt.METHOD)}
