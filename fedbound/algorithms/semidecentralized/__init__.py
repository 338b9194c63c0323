"""The semi-decentralized family: subnets with D2D mixing and a server sampling per subnet
(:mod:`fedbound.algorithms.semidecentralized.base`): SD-GT, SD-FedAvg, Scaffnew. Each module
registers its algorithm."""
from fedbound.deprecation import renamed_attributes

#: the names of the module fedbound.algorithms.semidecentralized before it became this package
__getattr__ = renamed_attributes(__name__, {
    "SemiDecentralized": "fedbound.algorithms.semidecentralized.base:SemiDecentralized"})
