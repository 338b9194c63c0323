"""The decentralized family: clients on one connected subnet, no server
(:mod:`fedbound.algorithms.decentralized.base`): DSGD, gradient tracking, PGA, DAdam. Each module
registers its algorithm."""
